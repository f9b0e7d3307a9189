// Measurement prototype (not product code): can a window pass whose window spans a cluster of
// thread blocks (2^13 keys per block, 2^14 or 2^15 per window, steps on the block-rank bits
// through distributed shared memory) keep the pace of today's 2^13-key window passes?
// Each block: 16 keys per thread in registers, 8 register steps around two transposes through
// shared memory (as a middle-of-stage window), plus CSTEPS compare-exchanges with the block of
// rank ^ 2^c of its cluster. Timed with CUDA events; prints one CSV line per variant.
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;

constexpr int T = 512, R = 16, SMEM = 8192 + 256;
__device__ __forceinline__ unsigned slot(unsigned l) { return l + (l >> 5); }

__device__ __forceinline__ void cx(unsigned& a, unsigned& b) { unsigned lo = min(a, b); b = max(a, b); a = lo; }

template <int CSTEPS, bool PUSH = false>
__global__ void __launch_bounds__(T, 4) window(unsigned* keys, int log2, int cluster_log2) {
  extern __shared__ unsigned sm[];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int L = 13 + cluster_log2;             // window keys
  const int H = log2 - (L - 5);                // free bits [0,5) ∪ [H, log2)
  const unsigned block = blockIdx.x;
  const unsigned rank = block & ((1u << cluster_log2) - 1);
  const unsigned win = block >> cluster_log2;   // fixed bits 5..H
  // Shared-memory slots of the two layouts (one padding word per 32): constant offsets per
  // register from one base each.
  const unsigned cbase = t + (t >> 5), mbase = (t >> 5) * 528 + lane;
  // The partner's shared memory may be written only once it runs: a split barrier, arrived at
  // here and waited for before the exchange.
  if constexpr (PUSH) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  const unsigned base = lane | (win << 5) | (warp << H) | (rank << (H + 8));
  unsigned k[R];
  // Loads with 32-bit offsets and the address formed inside the instruction's asm, so that no
  // 64-bit addresses stay live (the product's kernels use 32-bit offsets the same way).
  {
    const unsigned* p = keys + base;
    const unsigned long long stride = 4ull << (H + 4);
#pragma unroll
    for (int r = 0; r < R; r++)
      asm volatile("ld.global.u32 %0, [%1]; add.u64 %1, %1, %2;" : "=r"(k[r]), "+l"(p) : "l"(stride));
  }
#pragma unroll
  for (int j = 3; j >= 0; j--)
#pragma unroll
    for (int r = 0; r < R; r++) if (!(r & (1 << j))) cx(k[r], k[r | (1 << j)]);
  // Transpose (columns -> another layout), as a layout switch.
#pragma unroll
  for (int r = 0; r < R; r++) sm[cbase + r * 528] = k[r];
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; r++) k[r] = sm[mbase + r * 33];
#pragma unroll
  for (int j = 3; j >= 0; j--)
#pragma unroll
    for (int r = 0; r < R; r++) if (!(r & (1 << j))) cx(k[r], k[r | (1 << j)]);
  __syncthreads();
  if constexpr (PUSH) {
    // One exchange by remote stores into the partner's second buffer, one cluster barrier.
    cg::cluster_group cluster = cg::this_cluster();
    unsigned* theirs = cluster.map_shared_rank(sm + SMEM, rank ^ 1u);
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#pragma unroll
    for (int r = 0; r < R; r++) theirs[cbase + r * 528] = k[r];
    cluster.sync();
    const bool upper = rank & 1;
#pragma unroll
    for (int r = 0; r < R; r++) { unsigned o = sm[SMEM + cbase + r * 528]; k[r] = upper ? max(k[r], o) : min(k[r], o); }
  } else if constexpr (CSTEPS > 0) {
    cg::cluster_group cluster = cg::this_cluster();
#pragma unroll
    for (int c = 0; c < CSTEPS; c++) {
#pragma unroll
      for (int r = 0; r < R; r++) sm[cbase + r * 528] = k[r];
      cluster.sync();
      unsigned* theirs = cluster.map_shared_rank(sm, rank ^ (1u << c));
      const bool upper = (rank >> c) & 1;
#pragma unroll
      for (int r = 0; r < R; r++) { unsigned o = theirs[cbase + r * 528]; k[r] = upper ? max(k[r], o) : min(k[r], o); }
      cluster.sync();
    }
  }
  // Transpose back and store.
#pragma unroll
  for (int r = 0; r < R; r++) sm[mbase + r * 33] = k[r];
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; r++) k[r] = sm[cbase + r * 528];
  // The store's positions computed anew (as the product's kernels do), so that the compiler
  // does not keep 16 load addresses alive through the whole kernel.
  unsigned t2;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t2));
  const unsigned base2 = (t2 & 31) | (win << 5) | ((t2 >> 5) << H) | (rank << (H + 8));
  {
    unsigned* p = keys + base2;
    const unsigned long long stride = 4ull << (H + 4);
#pragma unroll
    for (int r = 0; r < R; r++)
      asm volatile("st.global.u32 [%0], %1; add.u64 %0, %0, %2;" : "+l"(p) : "r"(k[r]), "l"(stride) : "memory");
  }
}

template <int CSTEPS, bool PUSH = false>
float run(unsigned* d, int log2, int cluster_log2) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1u << (log2 - 13));
  cfg.blockDim = dim3(T);
  cfg.dynamicSmemBytes = SMEM * 4 * (PUSH ? 2 : 1);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1u << cluster_log2; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  cudaFuncSetAttribute(window<CSTEPS, PUSH>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM * 4 * (PUSH ? 2 : 1));
  cudaFuncSetAttribute(window<CSTEPS, PUSH>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ms;
  for (int rep = 0; rep < 25; rep++) {
    cudaEventRecord(a);
    for (int i = 0; i < 4; i++) cudaLaunchKernelEx(&cfg, window<CSTEPS, PUSH>, d, log2, cluster_log2);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float m; cudaEventElapsedTime(&m, a, b); ms.push_back(m / 4);
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) { printf("error %s\n", cudaGetErrorString(e)); return -1; }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  for (int log2 : {25, 28}) {
    size_t n = size_t(1) << log2;
    unsigned* d; cudaMalloc(&d, n * 4);
    std::vector<unsigned> h(n); unsigned x = 12345; for (auto& v : h) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; v = x; }
    cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice);
    unsigned* d2; cudaMalloc(&d2, n * 4);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> ms;
    for (int rep = 0; rep < 25; rep++) { cudaEventRecord(a); cudaMemcpy(d2, d, n * 4, cudaMemcpyDeviceToDevice); cudaEventRecord(b); cudaEventSynchronize(b); float m; cudaEventElapsedTime(&m, a, b); ms.push_back(m); }
    std::sort(ms.begin(), ms.end());
    printf("copy,%d,-,-,%.4f\n", log2, ms[12]);
    printf("window,%d,cluster1,steps0,%.4f\n", log2, run<0>(d, log2, 0));
    printf("window,%d,cluster2,steps0,%.4f\n", log2, run<0>(d, log2, 1));
    printf("window,%d,cluster2,steps1,%.4f\n", log2, run<1>(d, log2, 1));
    printf("window,%d,cluster4,steps0,%.4f\n", log2, run<0>(d, log2, 2));
    printf("window,%d,cluster4,steps1,%.4f\n", log2, run<1>(d, log2, 2));
    printf("window,%d,cluster4,steps2,%.4f\n", log2, run<2>(d, log2, 2));
    printf("window,%d,cluster8,steps3,%.4f\n", log2, run<3>(d, log2, 3));
    printf("window,%d,cluster2,push1,%.4f\n", log2, run<0, true>(d, log2, 1));
    printf("window,%d,cluster4,push1,%.4f\n", log2, run<0, true>(d, log2, 2));
    cudaFree(d); cudaFree(d2);
  }
  return 0;
}
