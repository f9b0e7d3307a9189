// The floor of any one-launch sort at n = 2^10 .. 2^16, timed as shared/peers/peers.cu times
// CUB: events around (restoring device copy + kernel), less the copy timed alone, median of 200.
// Kernels: `empty` (one block, does nothing), `copy_keys` (one block of 1024 threads loads the
// n keys and stores them back: the memory a sort must touch, with no network), and CUB radix
// for reference. Usage: launch-floor > floor.csv
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void empty() {}
__global__ void copy_keys(unsigned* d, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) { unsigned x = d[i]; __syncthreads(); d[n - 1 - i] = x; }
}

template <class F> float time_ms(F&& f, int reps) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  f(); CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; i++) { CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

int main() {
  printf("what,n,us_median\n");
  const int reps = 200;
  for (int lg = 10; lg <= 16; lg++) {
    int n = 1 << lg;
    unsigned *src, *d, *alt; CK(cudaMalloc(&src, n * 4)); CK(cudaMalloc(&d, n * 4)); CK(cudaMalloc(&alt, n * 4));
    std::vector<unsigned> h(n); for (int i = 0; i < n; i++) h[i] = i * 2654435761u;
    CK(cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice));
    auto restore = [&] { CK(cudaMemcpyAsync(d, src, n * 4, cudaMemcpyDeviceToDevice)); };
    float copy = time_ms(restore, reps);
    float e = time_ms([&] { restore(); empty<<<1, 256>>>(); }, reps) - copy;
    float c = time_ms([&] { restore(); copy_keys<<<1, 1024>>>(d, n); }, reps) - copy;
    size_t tb = 0; cub::DoubleBuffer<unsigned> db(d, alt);
    CK(cub::DeviceRadixSort::SortKeys(nullptr, tb, db, n)); void* tmp; CK(cudaMalloc(&tmp, tb));
    float r = time_ms([&] { restore(); db = cub::DoubleBuffer<unsigned>(d, alt); CK(cub::DeviceRadixSort::SortKeys(tmp, tb, db, n)); }, reps) - copy;
    printf("d2d_copy,%d,%.2f\nempty_kernel,%d,%.2f\nload_store_kernel,%d,%.2f\ncub_radix,%d,%.2f\n", n, copy * 1e3, n, e * 1e3, n, c * 1e3, n, r * 1e3);
    CK(cudaFree(src)); CK(cudaFree(d)); CK(cudaFree(alt)); CK(cudaFree(tmp));
  }
}
