// NVIDIA's GPU sorts, timed the way `gpusort bench --gpu-timing like-peers` times gpusort's, so
// that scripts/bench-peers.sh can set both side by side from one run on one GPU.
//
//   peers keys LO HI [DTYPES]    CUB DeviceRadixSort::SortKeys and DeviceMergeSort::SortKeys,
//                                thrust::sort (default order, and with a comparator), and the
//                                device copy that restores the input; n = 2^LO .. 2^HI keys
//   peers pairs LO HI [DTYPES]   CUB DeviceRadixSort::SortPairs and DeviceMergeSort::SortPairs,
//                                values as wide as the keys (u32+u32, u64+u64)
//   peers segmented LOG2         CUB DeviceSegmentedSort::SortKeys and
//                                DeviceSegmentedRadixSort::SortKeys over 2^LOG2 u32 keys cut
//                                into rows of one length, 16 .. 65536
//   peers segments FILE...       the same two CUB segmented sorts over the variable-length
//                                segments whose offsets each FILE holds (int32, little-endian,
//                                as `gpusort bench --segments` writes them: segments-NAME.i32);
//                                the peer is named after the file (`cub_segmented_sort_power-law`)
//
// DTYPES: comma-separated, of u32 i32 f32 u64 i64 f64 (default u32,f32,u64).
// Build:  nvcc -O3 -std=c++17 -arch=native bench/peers/peers.cu -o peers
//
// Output, CSV on stdout: peer,dtype,n,ms_median,mkeys_per_ms,correct, the columns that
// `gpusort bench --peers` reads. Segmented rows name their row length in the peer
// (`cub_segmented_sort_rows256`); pairs rows name the key type.
//
// Timing: CUDA events around (the device copy that restores the unsorted input + the sort),
// one warm-up then PEERS_REPS (default 10) timed runs, median, less the median of the copy
// timed alone. Timing a sort alone between two events adds microseconds of launch and event
// overhead that the copy carries too; subtracting the copy cancels most of it, which matters
// below about 2^13 keys. CUB's scratch is allocated once outside the timing (its contract: the
// caller owns it); thrust allocates its own inside the call, as its callers see it.
//
// correct = 1 when the output equals std::sort of the input; for pairs also every value is its
// key's input position and equal keys keep their input order (both CUB sorts are stable); for
// rows, every row equals std::sort of that row.

#include <cub/cub.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "peers: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,         \
                   cudaGetErrorString(e_));                                             \
      std::exit(2);                                                                     \
    }                                                                                   \
  } while (0)

namespace {

// A comparator of our own: CUB's merge sort needs one, and thrust given one runs its
// comparison (merge) sort instead of the radix sort it picks for `thrust::less`.
struct Less {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    return a < b;
  }
};

template <class T> const char* dtype_name();
template <> const char* dtype_name<uint32_t>() { return "u32"; }
template <> const char* dtype_name<int32_t>() { return "i32"; }
template <> const char* dtype_name<float>() { return "f32"; }
template <> const char* dtype_name<uint64_t>() { return "u64"; }
template <> const char* dtype_name<int64_t>() { return "i64"; }
template <> const char* dtype_name<double>() { return "f64"; }

// Calls f(T{}) for the key type named `name`; false for a name it does not know.
template <class F>
bool with_dtype(const std::string& name, F f) {
  if (name == "u32") f(uint32_t{});
  else if (name == "i32") f(int32_t{});
  else if (name == "f32") f(float{});
  else if (name == "u64") f(uint64_t{});
  else if (name == "i64") f(int64_t{});
  else if (name == "f64") f(double{});
  else return false;
  return true;
}

// Uniform keys from a fixed seed (42, as `gpusort bench` uses by default): integers over their
// whole range, floats in [-1, 1). No NaN, so `<` is a strict weak order for std::sort.
template <class T>
std::vector<T> make_keys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    const uint64_t r = rng();
    if constexpr (std::is_floating_point_v<T>) {
      x = T(double(r >> 11) * 0x1.0p-52 - 1.0);
    } else {
      x = T(r);  // the low bits of a uniform 64-bit word: uniform over T
    }
  }
  return v;
}

int reps() {
  const char* r = std::getenv("PEERS_REPS");
  return r ? std::max(1, std::atoi(r)) : 10;
}

// Events on one stream. `median` runs `work` once untimed (first-use costs: module loading,
// allocator growth), then reps() times between two events, and returns the median in ms.
struct Timer {
  cudaStream_t stream{};
  cudaEvent_t start{}, stop{};
  Timer() {
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
  }
  ~Timer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  double median(const std::function<void(cudaStream_t)>& work) {
    std::vector<double> ms;
    for (int r = 0; r <= reps(); ++r) {
      CHECK(cudaEventRecord(start, stream));
      work(stream);
      CHECK(cudaEventRecord(stop, stream));
      CHECK(cudaEventSynchronize(stop));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, start, stop));
      if (r > 0) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }
};

template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  size_t n = 0;
  explicit DeviceArray(size_t count) : n(count) { CHECK(cudaMalloc(&ptr, std::max<size_t>(count, 1) * sizeof(T))); }
  DeviceArray(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(ptr); }
  size_t bytes() const { return n * sizeof(T); }
  void upload(const std::vector<T>& h) { CHECK(cudaMemcpy(ptr, h.data(), bytes(), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), ptr, bytes(), cudaMemcpyDeviceToHost));
    return h;
  }
  void copy_from_async(const DeviceArray& src, cudaStream_t s) {
    CHECK(cudaMemcpyAsync(ptr, src.ptr, bytes(), cudaMemcpyDeviceToDevice, s));
  }
};

void row(const std::string& peer, const char* dtype, size_t n, double ms, bool correct) {
  std::printf("%s,%s,%zu,%.4f,%.3f,%d\n", peer.c_str(), dtype, n, ms, ms > 0 ? double(n) / ms / 1e6 : 0.0,
              correct ? 1 : 0);
  std::fflush(stdout);
}

// ---- keys ------------------------------------------------------------------------------------

template <class T>
void keys(size_t n) {
  const char* dt = dtype_name<T>();
  const std::vector<T> input = make_keys<T>(n, 42);
  std::vector<T> want = input;
  std::sort(want.begin(), want.end());

  DeviceArray<T> pristine(n), work(n), out(n);
  pristine.upload(input);
  Timer t;
  auto restore = [&](cudaStream_t s) { work.copy_from_async(pristine, s); };
  const double copy = t.median(restore);
  row("d2d_copy", dt, n, copy, true);

  {  // CUB radix sort: out of place, so the result lands in `out`.
    size_t temp_bytes = 0;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, work.ptr, out.ptr, int(n)));
    DeviceArray<unsigned char> temp(temp_bytes);
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      CHECK(cub::DeviceRadixSort::SortKeys(temp.ptr, temp_bytes, work.ptr, out.ptr, int(n), 0,
                                           int(sizeof(T) * 8), s));
    });
    row("cub_radix", dt, n, ms - copy, out.download() == want);
  }
  {  // CUB merge sort: in place.
    size_t temp_bytes = 0;
    CHECK(cub::DeviceMergeSort::SortKeys(nullptr, temp_bytes, work.ptr, int(n), Less{}));
    DeviceArray<unsigned char> temp(temp_bytes);
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      CHECK(cub::DeviceMergeSort::SortKeys(temp.ptr, temp_bytes, work.ptr, int(n), Less{}, s));
    });
    row("cub_merge", dt, n, ms - copy, work.download() == want);
  }
  const auto first = thrust::device_pointer_cast(work.ptr);
  {  // thrust::sort in its default order: a radix sort for arithmetic keys.
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      thrust::sort(thrust::cuda::par.on(s), first, first + n);
    });
    row("thrust_sort", dt, n, ms - copy, work.download() == want);
  }
  {  // thrust::sort with a comparator: its merge sort, a comparison sort like gpusort's.
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      thrust::sort(thrust::cuda::par.on(s), first, first + n, Less{});
    });
    row("thrust_cmp", dt, n, ms - copy, work.download() == want);
  }
}

// ---- pairs -----------------------------------------------------------------------------------

// Sorted keys equal to std::sort's, each value the input position of a key equal to its own,
// and positions increasing within each run of equal keys: a stable sort of (key, position).
template <class K, class V>
bool stable_pairs(const std::vector<K>& input, const std::vector<K>& want, const std::vector<K>& keys,
                  const std::vector<V>& values) {
  if (keys != want) return false;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (values[i] >= input.size() || !(input[values[i]] == keys[i])) return false;
    if (i > 0 && keys[i] == keys[i - 1] && values[i] <= values[i - 1]) return false;
  }
  return true;
}

template <class K>
void pairs(size_t n) {
  using V = std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>;
  const char* dt = dtype_name<K>();
  const std::vector<K> input = make_keys<K>(n, 42);
  std::vector<K> want = input;
  std::sort(want.begin(), want.end());
  std::vector<V> positions(n);
  for (size_t i = 0; i < n; ++i) positions[i] = V(i);

  DeviceArray<K> keys_pristine(n), keys_work(n), keys_out(n);
  DeviceArray<V> values_pristine(n), values_work(n), values_out(n);
  keys_pristine.upload(input);
  values_pristine.upload(positions);
  Timer t;
  auto restore = [&](cudaStream_t s) {
    keys_work.copy_from_async(keys_pristine, s);
    values_work.copy_from_async(values_pristine, s);
  };
  const double copy = t.median(restore);

  {
    size_t temp_bytes = 0;
    CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_work.ptr, keys_out.ptr, values_work.ptr,
                                          values_out.ptr, int(n)));
    DeviceArray<unsigned char> temp(temp_bytes);
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, keys_work.ptr, keys_out.ptr, values_work.ptr,
                                            values_out.ptr, int(n), 0, int(sizeof(K) * 8), s));
    });
    row("cub_radix_pairs", dt, n, ms - copy, stable_pairs(input, want, keys_out.download(), values_out.download()));
  }
  {
    size_t temp_bytes = 0;
    CHECK(cub::DeviceMergeSort::SortPairs(nullptr, temp_bytes, keys_work.ptr, values_work.ptr, int(n), Less{}));
    DeviceArray<unsigned char> temp(temp_bytes);
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      CHECK(cub::DeviceMergeSort::SortPairs(temp.ptr, temp_bytes, keys_work.ptr, values_work.ptr, int(n), Less{}, s));
    });
    row("cub_merge_pairs", dt, n, ms - copy,
        stable_pairs(input, want, keys_work.download(), values_work.download()));
  }
}

// ---- rows of one length ----------------------------------------------------------------------

void segmented(int log2) {
  const size_t n = size_t(1) << log2;
  const std::vector<uint32_t> input = make_keys<uint32_t>(n, 42);
  DeviceArray<uint32_t> pristine(n), work(n), out(n);
  pristine.upload(input);
  Timer t;
  auto restore = [&](cudaStream_t s) { work.copy_from_async(pristine, s); };
  const double copy = t.median(restore);

  for (size_t len = 16; len <= 65536 && len <= n; len *= 2) {
    const size_t rows = n / len;
    std::vector<int> offsets(rows + 1);
    for (size_t r = 0; r <= rows; ++r) offsets[r] = int(r * len);
    DeviceArray<int> d_offsets(rows + 1);
    d_offsets.upload(offsets);
    std::vector<uint32_t> want = input;
    for (size_t r = 0; r < rows; ++r) std::sort(want.begin() + r * len, want.begin() + (r + 1) * len);
    const std::string suffix = "_rows" + std::to_string(len);
    const int* begin = d_offsets.ptr;
    const int* end = d_offsets.ptr + 1;

    {
      size_t temp_bytes = 0;
      CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, temp_bytes, work.ptr, out.ptr, int(n), int(rows), begin, end));
      DeviceArray<unsigned char> temp(temp_bytes);
      const double ms = t.median([&](cudaStream_t s) {
        restore(s);
        CHECK(cub::DeviceSegmentedSort::SortKeys(temp.ptr, temp_bytes, work.ptr, out.ptr, int(n), int(rows), begin,
                                                 end, s));
      });
      row("cub_segmented_sort" + suffix, "u32", n, ms - copy, out.download() == want);
    }
    {
      size_t temp_bytes = 0;
      CHECK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, temp_bytes, work.ptr, out.ptr, int(n), int(rows), begin,
                                                    end));
      DeviceArray<unsigned char> temp(temp_bytes);
      const double ms = t.median([&](cudaStream_t s) {
        restore(s);
        CHECK(cub::DeviceSegmentedRadixSort::SortKeys(temp.ptr, temp_bytes, work.ptr, out.ptr, int(n), int(rows),
                                                      begin, end, 0, 32, s));
      });
      row("cub_segmented_radix" + suffix, "u32", n, ms - copy, out.download() == want);
    }
  }
}

// ---- variable-length segments ----------------------------------------------------------------

// CUB's segmented sorts over the offsets in `path` (int32), u32 keys from make_keys.
void segments(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "peers: cannot open %s\n", path.c_str());
    std::exit(2);
  }
  std::vector<int> offsets;
  for (int o; std::fread(&o, sizeof o, 1, f) == 1;) offsets.push_back(o);
  std::fclose(f);
  if (offsets.size() < 2) return;
  const size_t n = size_t(offsets.back()), count = offsets.size() - 1;
  std::string name = path.substr(path.find_last_of('/') + 1);
  name = name.substr(0, name.find(".i32"));
  if (name.rfind("segments-", 0) == 0) name = name.substr(9);
  const std::vector<uint32_t> input = make_keys<uint32_t>(n, 42);
  std::vector<uint32_t> want = input;
  for (size_t s = 0; s < count; ++s) std::sort(want.begin() + offsets[s], want.begin() + offsets[s + 1]);
  DeviceArray<uint32_t> pristine(n), work(n), out(n);
  DeviceArray<int> d_offsets(offsets.size());
  pristine.upload(input);
  d_offsets.upload(offsets);
  Timer t;
  auto restore = [&](cudaStream_t s) { work.copy_from_async(pristine, s); };
  const double copy = t.median(restore);
  const int* begin = d_offsets.ptr;
  const int* end = d_offsets.ptr + 1;
  {
    size_t temp_bytes = 0;
    CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, temp_bytes, work.ptr, out.ptr, int(n), int(count), begin, end));
    DeviceArray<unsigned char> temp(temp_bytes);
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      CHECK(cub::DeviceSegmentedSort::SortKeys(temp.ptr, temp_bytes, work.ptr, out.ptr, int(n), int(count), begin,
                                               end, s));
    });
    row("cub_segmented_sort_" + name, "u32", n, ms - copy, out.download() == want);
  }
  {
    size_t temp_bytes = 0;
    CHECK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, temp_bytes, work.ptr, out.ptr, int(n), int(count), begin,
                                                  end));
    DeviceArray<unsigned char> temp(temp_bytes);
    const double ms = t.median([&](cudaStream_t s) {
      restore(s);
      CHECK(cub::DeviceSegmentedRadixSort::SortKeys(temp.ptr, temp_bytes, work.ptr, out.ptr, int(n), int(count),
                                                    begin, end, 0, 32, s));
    });
    row("cub_segmented_radix_" + name, "u32", n, ms - copy, out.download() == want);
  }
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: peers keys LO HI [DTYPES] | peers pairs LO HI [DTYPES] | peers segmented LOG2 |"
               " peers segments FILE...\n"
               "  sizes 2^LO .. 2^HI with 1 <= LO <= HI <= 30; DTYPES of u32,i32,f32,u64,i64,f64\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) usage();
  const std::string mode = argv[1];
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "peers: %s (sm_%d%d), CUB %d\n", prop.name, prop.major, prop.minor, CUB_VERSION);
  std::printf("peer,dtype,n,ms_median,mkeys_per_ms,correct\n");

  if (mode == "segments") {
    for (int i = 2; i < argc; ++i) segments(argv[i]);
    return 0;
  }
  if (mode == "segmented") {
    const int log2 = std::atoi(argv[2]);
    if (log2 < 4 || log2 > 30) usage();
    segmented(log2);
    return 0;
  }
  if ((mode != "keys" && mode != "pairs") || argc < 4) usage();
  const int lo = std::atoi(argv[2]), hi = std::atoi(argv[3]);
  if (lo < 1 || lo > hi || hi > 30) usage();  // CUB's item counts here are `int`
  std::stringstream dtypes(argc > 4 ? argv[4] : "u32,f32,u64");
  for (std::string dt; std::getline(dtypes, dt, ',');) {
    for (int log2 = lo; log2 <= hi; ++log2) {
      const size_t n = size_t(1) << log2;
      const bool known = with_dtype(dt, [&](auto tag) {
        using T = decltype(tag);
        if (mode == "keys") keys<T>(n);
        else pairs<T>(n);
      });
      if (!known) usage();
    }
  }
  return 0;
}
