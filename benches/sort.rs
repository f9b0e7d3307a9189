//! Criterion benchmarks: the GPU bitonic, merge and radix sorts on device-resident keys (2^16,
//! 2^20, 2^25; u32 and f32; queued on a stream of the benchmark's with the caller's scratch,
//! allocated once, outside) and the CPU baselines. The GPU groups say they were skipped when no GPU is
//! present.
//!
//! GPU timings include restoring the unsorted input by a device-to-device copy before each sort
//! (a small part of the sort's time); `gpusort bench` times the sort alone with CUDA events.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use cust::memory::AsyncCopyDestination;
use cust::stream::{Stream, StreamFlags};
use gpusort::cpu::CpuAlgo;
use gpusort::gpu::GpuAlgo;
use gpusort::{GpuSorter, Options, Order, SortKey, Work};
use gpusort_cli::inputs::{Dist, generate};
use gpusort_suite::gpu_or_skip;

fn gpu_group<K: SortKey>(c: &mut Criterion, gpu: &GpuSorter, algo: GpuAlgo) {
    let mut group = c.benchmark_group(format!("gpu_{algo}_{}", K::DTYPE));
    // The stream belongs to the context current when it is made: the sorter's.
    gpu.bind().expect("the sorter's context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("a stream");
    for log2 in [16, 20, 25] {
        let n = 1usize << log2;
        let input: Vec<K> = generate(n, Dist::Uniform, 1);
        let pristine = gpu.upload(&input).expect("upload");
        let mut work = gpu.alloc::<K>(n, "bench keys").expect("alloc");
        let options = Options {
            algo: Some(algo),
            order: Order::Ascending,
        };
        let bytes = gpu.scratch_bytes::<K>(Work::SortUnstable(n), options);
        let bytes = bytes.expect("scratch bytes") as usize;
        let mut scratch = gpu.alloc::<u8>(bytes, "bench scratch").expect("scratch");
        let mut queue = gpu
            .queue_on(&stream)
            .expect("a queue")
            .with_scratch(&mut scratch)
            .expect("scratch");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::from_parameter(format!("2^{log2}")), |b| {
            b.iter(|| {
                // SAFETY: both buffers outlive the synchronisation below.
                unsafe { work.async_copy_from(&pristine, &stream) }.expect("copy");
                queue.sort_unstable(&mut work, options).expect("sort");
                queue.synchronize().expect("sort");
            })
        });
    }
    group.finish();
}

fn cpu_group<K: SortKey>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("cpu_{}", K::DTYPE));
    group.sample_size(10);
    for log2 in [16, 20] {
        let n = 1usize << log2;
        let input: Vec<K> = generate(n, Dist::Uniform, 1);
        group.throughput(Throughput::Elements(n as u64));
        for algo in CpuAlgo::ALL {
            group.bench_function(BenchmarkId::new(algo.name(), format!("2^{log2}")), |b| {
                b.iter_batched_ref(
                    || input.clone(),
                    |keys| algo.sort(keys, Order::Ascending),
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    if let Some(gpu) = gpu_or_skip("the GPU benchmark groups") {
        for algo in [GpuAlgo::Bitonic, GpuAlgo::Merge, GpuAlgo::Radix] {
            gpu_group::<u32>(c, &gpu, algo);
            gpu_group::<f32>(c, &gpu, algo);
        }
    }
    cpu_group::<u32>(c);
    cpu_group::<f32>(c);
}

criterion_group!(sort, benches);
criterion_main!(sort);
