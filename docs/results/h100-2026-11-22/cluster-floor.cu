// What a tiny sort spread over a thread-block cluster (sm_90) would pay for its steps across
// blocks, timed as shared/peers/peers.cu times CUB: events around (restoring device copy +
// kernel), less the copy alone, median of 300. A measurement program, not product code.
//
// n = 2^12 u32 keys over a cluster of 4 blocks of 256 threads (4 keys per thread; 2^11 over 2).
// Each exchange round: every thread writes its 4 keys to its block's shared memory, the cluster
// syncs, each thread reads its partner block's 4 keys (distributed shared memory) and keeps the
// min or the max: a network step on a block-rank bit. `rounds` = 0 is the load, a cluster sync
// and the store: the launch and memory floor of a clustered kernel. Also one block of 1024
// threads loading and storing 4096 keys (no cluster), for comparison.
// Usage: cluster-floor > cluster.csv
#include <cooperative_groups.h>
#include <algorithm>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void plain(unsigned* d) {
  uint4* v = reinterpret_cast<uint4*>(d) + blockIdx.x * blockDim.x + threadIdx.x;
  uint4 x = *v; __syncthreads(); *v = make_uint4(x.w, x.z, x.y, x.x);
}

__global__ void clustered(unsigned* d, int rounds) {
  __shared__ uint4 buf[2][256];
  cg::cluster_group cl = cg::this_cluster();
  unsigned rank = cl.block_rank(), size = cl.num_blocks();
  uint4* v = reinterpret_cast<uint4*>(d) + blockIdx.x * 256 + threadIdx.x;
  uint4 x = *v;
  for (int r = 0; r < rounds; r++) {
    buf[r & 1][threadIdx.x] = x;
    cl.sync();
    unsigned partner = rank ^ (1u << (r % 2)) % size;
    if (partner == rank) partner = rank ^ 1;
    uint4 y = cl.map_shared_rank(&buf[r & 1][0], partner)[threadIdx.x];
    bool lower = rank < partner;
    x.x = lower ? min(x.x, y.x) : max(x.x, y.x); x.y = lower ? min(x.y, y.y) : max(x.y, y.y);
    x.z = lower ? min(x.z, y.z) : max(x.z, y.z); x.w = lower ? min(x.w, y.w) : max(x.w, y.w);
  }
  cl.sync();  // no block may exit while another reads its shared memory
  *v = x;
}

template <class F> float time_ms(F&& f, int reps) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  f(); CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; i++) { CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

int main() {
  printf("what,n,blocks,rounds,us_median\n");
  const int reps = 300;
  for (int blocks : {2, 4}) {
    int n = blocks * 1024;
    unsigned *src, *d; CK(cudaMalloc(&src, n * 4)); CK(cudaMalloc(&d, n * 4));
    std::vector<unsigned> h(n); for (int i = 0; i < n; i++) h[i] = i * 2654435761u;
    CK(cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice));
    auto restore = [&] { CK(cudaMemcpyAsync(d, src, n * 4, cudaMemcpyDeviceToDevice)); };
    float copy = time_ms(restore, reps);
    float p = time_ms([&] { restore(); plain<<<1, n / 4>>>(d); }, reps) - copy;
    printf("one_block_load_store,%d,1,0,%.2f\n", n, p * 1e3);
    for (int rounds : {0, 1, 2, 3, 6}) {
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(blocks); cfg.blockDim = dim3(256);
      cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = blocks; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
      cfg.attrs = at; cfg.numAttrs = 1;
      float c = time_ms([&] { restore(); CK(cudaLaunchKernelEx(&cfg, clustered, d, rounds)); }, reps) - copy;
      printf("cluster,%d,%d,%d,%.2f\n", n, blocks, rounds, c * 1e3);
    }
    CK(cudaFree(src)); CK(cudaFree(d));
  }
}
