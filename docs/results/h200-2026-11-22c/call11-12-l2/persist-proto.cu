// Measurement prototype (not product code): do window passes go faster when each block is
// persistent and copies its next window into a second shared buffer (cp.async) while it sorts
// the current one, and does that make passes over an L2-resident array (2^23 keys) faster than
// over device memory? Same per-window work as cluster-proto.cu's plain variant: 16 keys per
// thread, 8 register steps around two transposes. Prints CSV: kind,log2,ms per pass.
#include <cstdio>
#include <vector>
#include <algorithm>

constexpr int T = 512, R = 16, SMEM = 8192 + 256;

__device__ __forceinline__ void cx(unsigned& a, unsigned& b) { unsigned lo = min(a, b); b = max(a, b); a = lo; }

__device__ __forceinline__ void steps4(unsigned (&k)[R]) {
#pragma unroll
  for (int j = 3; j >= 0; j--)
#pragma unroll
    for (int r = 0; r < R; r++) if (!(r & (1 << j))) cx(k[r], k[r | (1 << j)]);
}

// Plain: one block per window (as the product's kernels), loads straight into registers.
__global__ void __launch_bounds__(T, 4) plain(unsigned* keys, int log2) {
  extern __shared__ unsigned sm[];
  const unsigned t = threadIdx.x, lane = t & 31, H = log2 - 8;
  const unsigned cbase = t + (t >> 5), mbase = (t >> 5) * 528 + lane;
  const unsigned base = lane | (blockIdx.x << 5) | ((t >> 5) << H);
  const unsigned long long stride = 4ull << (H + 4);
  unsigned k[R];
  { const unsigned* p = keys + base;
#pragma unroll
    for (int r = 0; r < R; r++) asm volatile("ld.global.u32 %0, [%1]; add.u64 %1, %1, %2;" : "=r"(k[r]), "+l"(p) : "l"(stride)); }
  steps4(k);
#pragma unroll
  for (int r = 0; r < R; r++) sm[cbase + r * 528] = k[r];
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; r++) k[r] = sm[mbase + r * 33];
  steps4(k);
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; r++) sm[mbase + r * 33] = k[r];
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; r++) k[r] = sm[cbase + r * 528];
  unsigned t2; asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t2));
  { unsigned* p = keys + ((t2 & 31) | (blockIdx.x << 5) | ((t2 >> 5) << H));
#pragma unroll
    for (int r = 0; r < R; r++) asm volatile("st.global.u32 [%0], %1; add.u64 %0, %0, %2;" : "+l"(p) : "r"(k[r]), "l"(stride) : "memory"); }
}

// Persistent: block b sorts windows b, b + gridDim.x, ...; the next window's keys are copied
// into the other buffer (cp.async, 4 bytes a key, columns layout) while this one is sorted.
__device__ __forceinline__ void copy_in(unsigned* buf, const unsigned* keys, unsigned w, unsigned t, unsigned H, unsigned cbase) {
  const unsigned base = (t & 31) | (w << 5) | ((t >> 5) << H);
  const unsigned* p = keys + base;
  unsigned s = (unsigned)__cvta_generic_to_shared(buf + cbase);
#pragma unroll
  for (int r = 0; r < R; r++) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(s), "l"(p) : "memory");
    p += (1ull << (H + 4)); s += 528 * 4;
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

__global__ void __launch_bounds__(T, 3) persistent(unsigned* keys, int log2) {
  extern __shared__ unsigned sm[];
  const unsigned t = threadIdx.x, lane = t & 31, H = log2 - 8;
  const unsigned cbase = t + (t >> 5), mbase = (t >> 5) * 528 + lane;
  const unsigned windows = 1u << (log2 - 13);
  const unsigned long long stride = 4ull << (H + 4);
  unsigned w = blockIdx.x, cur = 0;
  if (w < windows) copy_in(sm, keys, w, t, H, cbase);
  for (; w < windows; w += gridDim.x, cur ^= 1) {
    unsigned* buf = sm + cur * SMEM;
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();  // this window's keys are in, and the other buffer is free
    if (w + gridDim.x < windows) copy_in(sm + (cur ^ 1) * SMEM, keys, w + gridDim.x, t, H, cbase);
    unsigned k[R];
#pragma unroll
    for (int r = 0; r < R; r++) k[r] = buf[cbase + r * 528];
    steps4(k);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) buf[cbase + r * 528] = k[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) k[r] = buf[mbase + r * 33];
    steps4(k);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) buf[mbase + r * 33] = k[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) k[r] = buf[cbase + r * 528];
    unsigned* p = keys + ((t & 31) | (w << 5) | ((t >> 5) << H));
#pragma unroll
    for (int r = 0; r < R; r++) asm volatile("st.global.u32 [%0], %1; add.u64 %0, %0, %2;" : "+l"(p) : "r"(k[r]), "l"(stride) : "memory");
  }
}

template <typename F>
float time_it(F launch, int reps = 25) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ms;
  for (int rep = 0; rep < reps; rep++) {
    cudaEventRecord(a);
    for (int i = 0; i < 8; i++) launch();
    cudaEventRecord(b); cudaEventSynchronize(b);
    float m; cudaEventElapsedTime(&m, a, b); ms.push_back(m / 8);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM * 4);
  cudaFuncSetAttribute(persistent, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * SMEM * 4);
  int per_sm; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent, T, 2 * SMEM * 4);
  printf("# %d SMs, %d persistent blocks per SM\n", sms, per_sm);
  for (int log2 : {21, 23, 25, 28}) {
    size_t n = size_t(1) << log2;
    unsigned *d, *d2; cudaMalloc(&d, n * 4); cudaMalloc(&d2, n * 4);
    std::vector<unsigned> h(n); unsigned x = 12345; for (auto& v : h) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; v = x; }
    cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice);
    unsigned blocks = 1u << (log2 - 13);
    printf("copy,%d,%.4f\n", log2, time_it([&] { cudaMemcpyAsync(d2, d, n * 4, cudaMemcpyDeviceToDevice); }));
    printf("plain,%d,%.4f\n", log2, time_it([&] { plain<<<blocks, T, SMEM * 4>>>(d, log2); }));
    for (int g : {1, 2, 3}) {
      if (g > per_sm) break;
      unsigned grid = std::min<unsigned>(blocks, sms * g);
      printf("persistent%d,%d,%.4f\n", g, log2, time_it([&] { persistent<<<grid, T, 2 * SMEM * 4>>>(d, log2); }));
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) printf("error %s\n", cudaGetErrorString(e));
    cudaFree(d); cudaFree(d2);
  }
  return 0;
}
