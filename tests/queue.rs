//! The stream-ordered calls ([`gpusort::Queue`]) on memory and streams the library did not
//! create: `cuMemAlloc` memory on a raw stream, `cudarc` buffers on a `cudarc` stream, the
//! caller's scratch, several streams at once; that the calls only queue (a stream held at a
//! gate stays held while they return); and the errors for a stream of another context or a
//! scratch too small. Every result is checked against std. Runs when a CUDA device is present;
//! skipped (said on stderr) when not; fails without one under `REQUIRE_GPU=1`.

use cust::memory::CopyDestination;
use cust::sys as cuda;
use gpusort::argsort::argsort_cpu_u32;
use gpusort::topk::top_k_cpu;
use gpusort::{Error, GpuAlgo, Options, Order, RawDeviceSlice, RawStream, Segments, SortKey, Work};
use gpusort_cli::inputs::{Dist, generate};
use gpusort_suite::{gpu_or_skip, test_seed};
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::ffi::c_void;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The tests of this file take their turns: one holds a stream of the process's primary context
/// at a gate, and a call of another test that synchronises the context (freeing device memory,
/// loading a module) would wait at that gate too.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Panics with `what` unless the driver call succeeded.
fn ok(status: cuda::CUresult, what: &str) {
    assert_eq!(status, cuda::CUresult::CUDA_SUCCESS, "{what}");
}

/// Device memory from `cuMemAlloc`, as another library would hold it; freed on drop.
struct Foreign {
    address: u64,
    len: usize,
}

impl Foreign {
    fn upload<T: Copy>(data: &[T]) -> Foreign {
        let bytes = size_of_val(data).max(1);
        let mut address = 0;
        // SAFETY: out pointer; the sorter's (primary) context is current on this thread.
        ok(
            unsafe { cuda::cuMemAlloc_v2(&mut address, bytes) },
            "cuMemAlloc",
        );
        // SAFETY: `bytes` at both ends.
        let status =
            unsafe { cuda::cuMemcpyHtoD_v2(address, data.as_ptr().cast(), size_of_val(data)) };
        ok(status, "cuMemcpyHtoD");
        Foreign {
            address,
            len: data.len(),
        }
    }

    fn download<T: Copy + Default>(&self) -> Vec<T> {
        let mut out = vec![T::default(); self.len];
        // SAFETY: the allocation holds `len` elements of T.
        let status = unsafe {
            cuda::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), self.address, size_of_val(&out[..]))
        };
        ok(status, "cuMemcpyDtoH");
        out
    }

    /// The memory as the library sees it.
    fn slice<T>(&self) -> RawDeviceSlice<T> {
        // SAFETY: `len` elements of T of the current (primary) context, alive while `self` is;
        // each test synchronises the stream before dropping it.
        unsafe { RawDeviceSlice::new(self.address, self.len) }
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        let _ = unsafe { cuda::cuMemFree_v2(self.address) };
    }
}

/// A stream created with the driver API, destroyed on drop.
struct ForeignStream(cuda::CUstream);

impl ForeignStream {
    fn new() -> ForeignStream {
        let mut stream = std::ptr::null_mut();
        let flags = cuda::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: out pointer; the primary context is current.
        ok(
            unsafe { cuda::cuStreamCreate(&mut stream, flags) },
            "cuStreamCreate",
        );
        ForeignStream(stream)
    }

    fn raw(&self) -> RawStream {
        // SAFETY: live until dropped, after the tests synchronise it.
        unsafe { RawStream::new(self.0) }
    }
}

impl Drop for ForeignStream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate, destroyed once.
        let _ = unsafe { cuda::cuStreamDestroy_v2(self.0) };
    }
}

/// Holds a stream at a host function until it is opened: work queued behind it cannot start.
/// A watchdog opens it after a while, so that a call that waits for the stream returns (and the
/// test fails) rather than hangs.
struct Gate {
    state: Arc<(Mutex<bool>, Condvar)>,
    watchdog: Option<(mpsc::Sender<()>, std::thread::JoinHandle<bool>)>,
}

extern "C" fn wait_at_gate(state: *mut c_void) {
    // SAFETY: the `Arc`'s contents, which the gate keeps alive until the stream has passed.
    let (open, changed) = unsafe { &*state.cast::<(Mutex<bool>, Condvar)>() };
    let mut open = open.lock().unwrap();
    while !*open {
        open = changed.wait(open).unwrap();
    }
}

impl Gate {
    fn hold(stream: cuda::CUstream) -> Gate {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let data = Arc::as_ptr(&state).cast_mut().cast::<c_void>();
        // SAFETY: a live stream; `data` outlives the host function (the gate is opened and the
        // stream synchronised before the gate drops).
        let status = unsafe { cuda::cuLaunchHostFunc(stream, Some(wait_at_gate), data) };
        ok(status, "cuLaunchHostFunc");
        let (tx, rx) = mpsc::channel::<()>();
        let opener = state.clone();
        let watchdog = std::thread::spawn(move || {
            let fired = rx.recv_timeout(Duration::from_secs(60)).is_err();
            *opener.0.lock().unwrap() = true;
            opener.1.notify_all();
            fired
        });
        Gate {
            state,
            watchdog: Some((tx, watchdog)),
        }
    }

    /// Opens the gate; whether the watchdog had to.
    fn open(&mut self) -> bool {
        let (tx, watchdog) = self.watchdog.take().expect("opened once");
        let _ = tx.send(());
        let fired = watchdog.join().unwrap();
        assert!(*self.state.0.lock().unwrap());
        fired
    }
}

/// An event recorded on `stream` now; whether the stream has passed it.
fn passed(event: cuda::CUevent) -> bool {
    // SAFETY: a live event.
    match unsafe { cuda::cuEventQuery(event) } {
        cuda::CUresult::CUDA_SUCCESS => true,
        cuda::CUresult::CUDA_ERROR_NOT_READY => false,
        other => panic!("cuEventQuery: {other:?}"),
    }
}

fn bits<K: SortKey>(keys: &[K]) -> Vec<K::Bits> {
    keys.iter().map(|k| k.to_bits()).collect()
}

fn sorted<K: SortKey>(keys: &[K], order: Order) -> Vec<K::Bits> {
    let mut bits: Vec<K> = keys.to_vec();
    gpusort::cpu::CpuAlgo::Std.sort(&mut bits, order);
    bits.iter().map(|k| k.to_bits()).collect()
}

/// Sorts, sorts by key, argsorts and takes the top-k of `cuMemAlloc` memory on a stream the
/// library did not create, which is held at a gate the whole time: the calls return with the
/// stream still before the gate (so none waited for the stream or the device), and the results
/// are std's once it passes.
#[test]
fn foreign_memory_on_a_foreign_stream_is_queued_without_waiting() {
    let _turn = one_at_a_time();
    let Some(gpu) = gpu_or_skip("the foreign memory and stream") else {
        return;
    };
    let seed = test_seed(0x5eed_0047);
    let n = (1 << 20) + 3;
    let keys: Vec<u32> = generate(n, Dist::Uniform, seed);
    let pair_keys: Vec<u64> = generate(n, Dist::Few, seed + 1);
    let values: Vec<u64> = (0..n as u64).collect();
    let mut floats: Vec<f32> = generate(n, Dist::Uniform, seed + 2);
    gpusort_suite::sprinkle_specials(&mut floats, 997);
    let (k, row_len) = (64, 1 << 14);

    let d_keys = Foreign::upload(&keys);
    let (d_pair_keys, d_values) = (Foreign::upload(&pair_keys), Foreign::upload(&values));
    let d_floats = Foreign::upload(&floats);
    let d_indices = Foreign::upload(&vec![u32::MAX; n]);
    let rows = n / row_len;
    let d_top = Foreign::upload(&vec![f32::NAN; rows * k]);
    let d_top_indices = Foreign::upload(&vec![u64::MAX; rows * k]);
    let (d_segment_keys, d_segment_indices) = (
        Foreign::upload(&pair_keys),
        Foreign::upload(&vec![u32::MAX; n]),
    );
    // Every buffer is filled before the gate: a synchronous copy would wait at it.
    let stream = ForeignStream::new();
    let raw = stream.raw();
    // Made first: the first queue of a sorter loads its kernels, which waits for the context.
    let mut queue = gpu.queue_on(&raw).expect("a queue on the foreign stream");
    let mut gate = Gate::hold(stream.0);
    let mut after_gate = std::ptr::null_mut();
    // SAFETY: out pointer; the primary context is current.
    ok(
        unsafe { cuda::cuEventCreate(&mut after_gate, 0) },
        "cuEventCreate",
    );
    // SAFETY: live event and stream.
    ok(
        unsafe { cuda::cuEventRecord(after_gate, stream.0) },
        "cuEventRecord",
    );

    queue
        .sort_unstable(&mut d_keys.slice::<u32>(), Order::Ascending)
        .unwrap();
    let (mut pk, mut pv) = (d_pair_keys.slice::<u64>(), d_values.slice::<u64>());
    queue
        .sort_by_key(&mut pk, &mut pv, Order::Descending)
        .unwrap();
    let floats_in = d_floats.slice::<f32>();
    queue
        .argsort(&floats_in, &mut d_indices.slice::<u32>(), Order::Ascending)
        .unwrap();
    let (mut tk, mut ti) = (d_top.slice::<f32>(), d_top_indices.slice::<u64>());
    // The first `rows` full rows: a view of the first rows × row_len keys.
    // SAFETY: a prefix of the same allocation.
    let rows_in = unsafe { RawDeviceSlice::<f32>::new(d_floats.address, rows * row_len) };
    queue
        .top_k(&rows_in, row_len, k, Order::Descending, &mut tk, &mut ti)
        .unwrap();
    // Segments of every kind of length, long ones among them, whose offsets are gone before
    // the stream reaches the sorts: the calls copy them as they queue the work.
    let offsets = segment_offsets(n, seed + 3);
    {
        let offsets = offsets.clone();
        let segments = Segments::Offsets(&offsets);
        let sorted_keys = d_segment_keys.slice::<u64>();
        queue
            .argsort_segments(
                &sorted_keys,
                &mut d_segment_indices.slice::<u32>(),
                segments,
                Order::Descending,
            )
            .unwrap();
        queue
            .sort_segments(
                &mut d_segment_keys.slice::<u64>(),
                segments,
                Order::Descending,
            )
            .unwrap();
    }
    assert!(
        !passed(after_gate),
        "the stream passed its gate while the calls were queued"
    );
    assert!(
        !gate.open(),
        "a call waited for the stream (the watchdog opened it)"
    );
    queue.synchronize().unwrap();
    // SAFETY: created above, used no more.
    let _ = unsafe { cuda::cuEventDestroy_v2(after_gate) };

    let got: Vec<u32> = d_keys.download();
    assert_eq!(got, sorted(&keys, Order::Ascending), "sort_unstable");
    let (got_keys, got_values): (Vec<u64>, Vec<u64>) =
        (d_pair_keys.download(), d_values.download());
    let mut want: Vec<(u64, u64)> = pair_keys.iter().copied().zip(values).collect();
    want.sort_by_key(|p| std::cmp::Reverse(p.0)); // stable
    let (want_keys, want_values): (Vec<u64>, Vec<u64>) = want.into_iter().unzip();
    assert_eq!(
        (got_keys, got_values),
        (want_keys, want_values),
        "sort_by_key"
    );
    let got: Vec<u32> = d_indices.download();
    assert_eq!(got, argsort_cpu_u32(&floats, Order::Ascending), "argsort");
    assert_eq!(
        d_floats
            .download::<f32>()
            .iter()
            .map(|f| f.to_bits())
            .collect::<Vec<_>>(),
        floats.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        "argsort's keys are only read"
    );
    let (segment_keys, segment_indices): (Vec<u64>, Vec<u32>) =
        (d_segment_keys.download(), d_segment_indices.download());
    let mut want_indices = vec![0u32; n];
    for w in offsets.windows(2) {
        let segment = &pair_keys[w[0]..w[1]];
        let mut positions: Vec<u32> = (0..segment.len() as u32).collect();
        positions.sort_by_key(|&i| std::cmp::Reverse(segment[i as usize])); // stable
        let keys: Vec<u64> = positions.iter().map(|&i| segment[i as usize]).collect();
        assert_eq!(segment_keys[w[0]..w[1]], keys, "segment at {}", w[0]);
        want_indices[w[0]..w[1]].copy_from_slice(&positions);
    }
    let end = *offsets.last().unwrap();
    assert_eq!(
        segment_keys[end..],
        pair_keys[end..],
        "keys past the segments"
    );
    assert_eq!(segment_indices, want_indices, "argsort_segments");
    let (top_keys, top_indices): (Vec<f32>, Vec<u64>) =
        (d_top.download(), d_top_indices.download());
    for row in 0..rows {
        let keys = &floats[row * row_len..][..row_len];
        let want = top_k_cpu(keys, row_len, k, Order::Descending).unwrap();
        let got = &top_keys[row * k..][..k];
        assert!(
            got.iter()
                .map(|f| f.to_bits())
                .eq(want.keys.iter().map(|f| f.to_bits())),
            "top-k keys of row {row}"
        );
        assert_eq!(
            &top_indices[row * k..][..k],
            &want.indices[..],
            "top-k indices of row {row}"
        );
    }
}

/// Offsets of `n` keys cut into segments of every kind: empty, one key, short, a block's, and
/// a few longer than a block sorts; the last ends short of `n`.
fn segment_offsets(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut offsets = vec![0];
    let mut at = 0;
    loop {
        let len = match rng.random_range(0..100) {
            0 => rng.random_range(9000..60_000),
            1..10 => rng.random_range(257..8192),
            10..20 => rng.random_range(0..2),
            _ => rng.random_range(2..256),
        };
        if at + len > n - 10 {
            return offsets;
        }
        at += len;
        offsets.push(at);
    }
}

/// The caller's scratch, as large as `scratch_bytes` says, serves each sort by name; one too
/// small is refused for a stable sort and makes `auto`'s unstable sort run the bitonic sort in
/// place.
#[test]
fn the_callers_scratch_serves_the_sort_it_was_sized_for() {
    let _turn = one_at_a_time();
    let Some(gpu) = gpu_or_skip("the caller's scratch") else {
        return;
    };
    let n = 3 << 18;
    let input: Vec<i64> = generate(n, Dist::Uniform, test_seed(47));
    for algo in [GpuAlgo::Merge, GpuAlgo::Radix] {
        let options = Options {
            algo: Some(algo),
            order: Order::Descending,
        };
        let bytes = gpu.scratch_bytes::<i64>(Work::Sort(n), options).unwrap();
        assert!(
            bytes >= (n * 8) as u64,
            "{algo:?}: {bytes} bytes of scratch"
        );
        let mut scratch = gpu.alloc::<u8>(bytes as usize, "scratch").unwrap();
        let mut keys = gpu.upload(&input).unwrap();
        let mut queue = gpu.queue().unwrap().with_scratch(&mut scratch).unwrap();
        queue.sort(&mut keys, options).unwrap();
        queue.synchronize().unwrap();
        let mut got = vec![0i64; n];
        keys.copy_to(&mut got[..]).unwrap();
        assert_eq!(bits(&got), sorted(&input, Order::Descending), "{algo:?}");

        let mut small = gpu.alloc::<u8>(bytes as usize / 2, "scratch").unwrap();
        let mut queue = gpu.queue().unwrap().with_scratch(&mut small).unwrap();
        let refused = queue.sort(&mut keys, options);
        assert!(
            matches!(refused, Err(Error::OutOfDeviceMemory { requested, .. }) if requested == bytes),
            "{algo:?}: {refused:?}"
        );
        let mut keys = gpu.upload(&input).unwrap();
        queue.sort_unstable(&mut keys, Order::Ascending).unwrap();
        queue.synchronize().unwrap();
        keys.copy_to(&mut got[..]).unwrap();
        assert_eq!(
            bits(&got),
            sorted(&input, Order::Ascending),
            "bitonic in place"
        );
    }
    let bitonic = Options {
        algo: Some(GpuAlgo::Bitonic),
        order: Order::Ascending,
    };
    assert!(matches!(
        gpu.scratch_bytes::<u32>(Work::Sort(n), bitonic),
        Err(Error::NotStable { .. })
    ));
    assert_eq!(
        gpu.scratch_bytes::<u32>(Work::SortUnstable(n), bitonic)
            .unwrap(),
        0
    );
    // The sorts lay their scratch out from an aligned start.
    let scratch = gpu.alloc::<u8>(1024, "scratch").unwrap();
    // SAFETY: inside the allocation, which outlives the queue.
    let mut skewed =
        unsafe { RawDeviceSlice::<u8>::new(scratch.as_device_ptr().as_raw() + 8, 512) };
    assert!(matches!(
        gpu.queue().unwrap().with_scratch(&mut skewed),
        Err(Error::BadDeviceMemory {
            what: "the scratch",
            ..
        })
    ));
}

/// Short sorts that share the sorter's one-launch workspace, queued on two streams at once
/// with nothing between them but the streams' own order, each come out sorted.
#[test]
fn streams_sharing_the_small_sorts_workspace_take_turns() {
    let _turn = one_at_a_time();
    let Some(gpu) = gpu_or_skip("the small sort on two streams") else {
        return;
    };
    let streams = [ForeignStream::new(), ForeignStream::new()];
    let raws = [streams[0].raw(), streams[1].raw()];
    let mut queues = [
        gpu.queue_on(&raws[0]).unwrap(),
        gpu.queue_on(&raws[1]).unwrap(),
    ];
    let inputs: Vec<Vec<u32>> = (0..16)
        .map(|i| generate((1 << 15) + 17 * i, Dist::Uniform, test_seed(470 + i as u64)))
        .collect();
    let buffers: Vec<Foreign> = inputs.iter().map(|keys| Foreign::upload(keys)).collect();
    for (i, buffer) in buffers.iter().enumerate() {
        queues[i % 2]
            .sort_unstable(&mut buffer.slice::<u32>(), Order::Ascending)
            .unwrap();
    }
    for queue in &queues {
        queue.synchronize().unwrap();
    }
    for (i, (buffer, input)) in buffers.iter().zip(&inputs).enumerate() {
        assert_eq!(
            buffer.download::<u32>(),
            sorted(input, Order::Ascending),
            "buffer {i}"
        );
    }
}

/// A stream of another context than the sorter's is refused with a clear error.
#[test]
fn a_stream_of_another_context_is_refused() {
    let _turn = one_at_a_time();
    let Some(gpu) = gpu_or_skip("a stream of another context") else {
        return;
    };
    let (mut context, mut stream) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: out pointers; the new context is current until it is popped.
    unsafe {
        ok(cuda::cuCtxCreate_v2(&mut context, 0, 0), "cuCtxCreate");
        ok(cuda::cuStreamCreate(&mut stream, 0), "cuStreamCreate");
    }
    // SAFETY: a live stream (of the other context).
    let raw = unsafe { RawStream::new(stream) };
    let refused = gpu.queue_on(&raw).map(|_| ());
    assert!(
        matches!(refused, Err(Error::WrongContext { .. })),
        "{refused:?}"
    );
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("another CUDA context")
    );
    // SAFETY: created above, used no more.
    unsafe {
        ok(cuda::cuStreamDestroy_v2(stream), "cuStreamDestroy");
        ok(cuda::cuCtxDestroy_v2(context), "cuCtxDestroy");
    }
    // The sorter makes its context current again for each call.
    let mut keys = vec![3u32, 1, 2];
    gpu.sort(&mut keys, Order::Ascending).unwrap();
    assert_eq!(keys, [1, 2, 3]);
}

/// `cudarc` buffers, allocated and filled by `cudarc`, sorted, argsorted and top-k'ed on a
/// `cudarc` stream, read back by `cudarc` with no synchronisation in between but the stream's.
#[test]
fn cudarc_buffers_on_a_cudarc_stream() {
    let _turn = one_at_a_time();
    let Some(gpu) = gpu_or_skip("cudarc interop") else {
        return;
    };
    let context = cudarc::driver::CudaContext::new(0).expect("cudarc's context");
    let stream = context.new_stream().expect("a cudarc stream");
    let n = 1_000_003;
    let keys: Vec<f64> = generate(n, Dist::Uniform, test_seed(4747));
    let mut d_keys = stream.clone_htod(&keys).unwrap();
    let d_read = stream.clone_htod(&keys).unwrap();
    let mut d_indices = stream.alloc_zeros::<u32>(n).unwrap();
    let (mut top, mut top_indices) = (
        stream.alloc_zeros::<f64>(10).unwrap(),
        stream.alloc_zeros::<u64>(10).unwrap(),
    );
    let mut queue = gpu.queue_on(&*stream).unwrap();
    queue.sort(&mut d_keys, Order::Descending).unwrap();
    queue
        .argsort(&d_read, &mut d_indices, Order::Descending)
        .unwrap();
    queue
        .top_k(&d_read, n, 10, Order::Ascending, &mut top, &mut top_indices)
        .unwrap();
    let got: Vec<f64> = stream.clone_dtoh(&d_keys).unwrap();
    let got: Vec<u64> = got.iter().map(|k| k.to_bits()).collect();
    assert_eq!(got, sorted(&keys, Order::Descending));
    let got: Vec<u32> = stream.clone_dtoh(&d_indices).unwrap();
    assert_eq!(got, argsort_cpu_u32(&keys, Order::Descending));
    let want = top_k_cpu(&keys, n, 10, Order::Ascending).unwrap();
    let got: Vec<f64> = stream.clone_dtoh(&top).unwrap();
    assert_eq!(got, want.keys);
    assert_eq!(stream.clone_dtoh(&top_indices).unwrap(), want.indices);

    // A cudarc buffer on a queue of another stream is refused: cudarc orders its buffers'
    // work through its own streams.
    let refused = gpu.queue().unwrap().sort(&mut d_keys, Order::Ascending);
    assert!(
        matches!(refused, Err(Error::NotOnCudarcStream)),
        "{refused:?}"
    );
}

/// Memory the sorter cannot use is refused before any launch: an address no allocation holds,
/// and a length past the allocation's end; memory from the pool on the caller's stream is used
/// as it is.
#[test]
fn memory_outside_an_allocation_is_refused() {
    let _turn = one_at_a_time();
    let Some(gpu) = gpu_or_skip("the checks of foreign memory") else {
        return;
    };
    let input: Vec<u32> = generate(5000, Dist::Uniform, test_seed(4700));
    let buffer = Foreign::upload(&input);
    let mut queue = gpu.queue().unwrap();
    // SAFETY: the checks refuse these before any kernel reads them.
    let (mut past_end, mut nowhere) = unsafe {
        (
            RawDeviceSlice::<u32>::new(buffer.address, input.len() + 1),
            RawDeviceSlice::<u32>::new(0x10, 4),
        )
    };
    for (slice, says) in [
        (&mut past_end, "past the end"),
        (&mut nowhere, "no allocation"),
    ] {
        let refused = queue.sort(slice, Order::Ascending);
        assert!(
            matches!(&refused, Err(e @ Error::BadDeviceMemory { .. }) if e.to_string().contains(says)),
            "{refused:?}"
        );
    }
    assert_eq!(
        buffer.download::<u32>(),
        input,
        "refused calls leave the keys alone"
    );

    let stream = ForeignStream::new();
    let mut address = 0;
    let bytes = size_of_val(&input[..]);
    // SAFETY: out pointer; a live stream of the current (primary) context.
    ok(
        unsafe { cuda::cuMemAllocAsync(&mut address, bytes, stream.0) },
        "cuMemAllocAsync",
    );
    // SAFETY: `bytes` at both ends; ordered on the stream after the allocation.
    let status =
        unsafe { cuda::cuMemcpyHtoDAsync_v2(address, input.as_ptr().cast(), bytes, stream.0) };
    ok(status, "cuMemcpyHtoDAsync");
    let raw = stream.raw();
    let mut queue = gpu.queue_on(&raw).unwrap();
    // SAFETY: `input.len()` u32s from the pool, freed below after the stream has run the sort.
    let mut pooled = unsafe { RawDeviceSlice::<u32>::new(address, input.len()) };
    queue.sort_unstable(&mut pooled, Order::Descending).unwrap();
    let mut got = vec![0u32; input.len()];
    // SAFETY: as above; the copy follows the sort on the stream.
    let status =
        unsafe { cuda::cuMemcpyDtoHAsync_v2(got.as_mut_ptr().cast(), address, bytes, stream.0) };
    ok(status, "cuMemcpyDtoHAsync");
    // SAFETY: freed once, in stream order.
    ok(
        unsafe { cuda::cuMemFreeAsync(address, stream.0) },
        "cuMemFreeAsync",
    );
    queue.synchronize().unwrap();
    assert_eq!(got, sorted(&input, Order::Descending));
}
