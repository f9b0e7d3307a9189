//! Keys in device memory that another library owns, sorted on a stream that it owns: the CUDA
//! driver API allocates the memory (`cuMemAlloc`) and creates the stream (`cuStreamCreate`), as a
//! framework or a C++ library would; gpusort sees only addresses and a `CUstream`
//! ([`RawDeviceSlice`], [`RawStream`]), queues a stable sort and an argsort on that stream with
//! the caller's scratch, and returns without waiting. The caller synchronises its stream, reads
//! the results back and checks them against std's sort. Without a GPU it says so and exits 0
//! (`REQUIRE_GPU=1` makes that a failure).
//!
//!     cargo run --release -p gpusort --example raw_pointers

use cust::sys as cuda;
use gpusort::{Error, GpuSorter, Order, RawDeviceSlice, RawStream, Work};
use std::process::ExitCode;

/// Keys: odd, so that no kernel's tiles divide it, and drawn from 2^16 values, so that about 16
/// keys share each value and the argsort's order among equal keys is tested.
const N: usize = (1 << 20) + 7;

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let gpu = match GpuSorter::new() {
        Ok(gpu) => gpu,
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no CUDA device, so no raw device memory to sort: {e}");
            let required = std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1");
            return Ok(if required {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            });
        }
        Err(e) => return Err(e.into()),
    };
    let host: Vec<u32> = (0..N as u64)
        .map(|i| (splitmix64(i) >> 48) as u32)
        .collect();

    // The driver calls below act on the current context: the sorter's, which is the device's
    // primary context, as the CUDA runtime's and most libraries' memory and streams are.
    gpu.bind()?;
    let keys = DriverMemory::alloc(size_of_val(&host[..]))?;
    let argsort_keys = DriverMemory::alloc(size_of_val(&host[..]))?;
    let indices = DriverMemory::alloc(N * size_of::<u32>())?;
    let scratch_bytes = [Work::Sort(N), Work::Argsort(N)]
        .into_iter()
        .map(|work| gpu.scratch_bytes::<u32>(work, Order::Ascending))
        .try_fold(0, |most, bytes| bytes.map(|b| most.max(b)))?;
    let scratch = DriverMemory::alloc(scratch_bytes as usize)?;
    // Made after the memory, so dropped before it: its drop waits for the work queued on it.
    let stream = DriverStream::create()?;

    for to in [&keys, &argsort_keys] {
        // SAFETY: `to` holds N u32s; the host copy outlives the copy, which the stream runs
        // before anything queued after it and which ends before `host` is dropped (the stream
        // is synchronised below).
        let status = unsafe {
            cuda::cuMemcpyHtoDAsync_v2(
                to.address,
                host.as_ptr().cast(),
                size_of_val(&host[..]),
                stream.0,
            )
        };
        driver(status, "cuMemcpyHtoDAsync")?;
    }

    // SAFETY: each allocation is of the sorter's context, holds what is declared (N u32s,
    // `scratch_bytes` bytes), is aligned (cuMemAlloc aligns to 256 bytes) and stays allocated
    // until the stream has run the work (the stream's drop comes first); the stream is live
    // until then too. Only the queued work touches the memory meanwhile.
    let (mut sorted, unsorted, mut permutation, mut scratch_slice, raw_stream) = unsafe {
        (
            RawDeviceSlice::<u32>::new(keys.address, N),
            RawDeviceSlice::<u32>::new(argsort_keys.address, N),
            RawDeviceSlice::<u32>::new(indices.address, N),
            RawDeviceSlice::<u8>::new(scratch.address, scratch_bytes as usize),
            RawStream::new(stream.0),
        )
    };
    {
        let mut queue = gpu
            .queue_on(&raw_stream)?
            .with_scratch(&mut scratch_slice)?;
        // Both return once queued, in stream order after the copies; both use the scratch,
        // one after the other.
        queue.sort(&mut sorted, Order::Ascending)?;
        queue.argsort(&unsorted, &mut permutation, Order::Descending)?;
    }
    // SAFETY: a live stream of the current context.
    let status = unsafe { cuda::cuStreamSynchronize(stream.0) };
    driver(status, "cuStreamSynchronize")?;
    let got_keys = keys.download(N)?;
    let got_indices = indices.download(N)?;

    let mut want_keys = host.clone();
    want_keys.sort();
    if got_keys != want_keys {
        return Err("the sorted keys are not std's sort of the input".into());
    }
    // std's stable sort by key, largest first: equal keys keep their input order.
    let mut want_indices: Vec<u32> = (0..N as u32).collect();
    want_indices.sort_by_key(|&i| std::cmp::Reverse(host[i as usize]));
    if got_indices != want_indices {
        return Err("the argsort is not std's stable order of the input".into());
    }
    println!(
        "{N} u32 keys in cuMemAlloc memory sorted and argsorted on a cuStreamCreate stream on {}; \
         checked against std",
        gpu.device_name()
    );
    Ok(ExitCode::SUCCESS)
}

/// Device memory from `cuMemAlloc`, standing for another library's allocation; freed on drop.
struct DriverMemory {
    address: cuda::CUdeviceptr,
}

impl DriverMemory {
    /// `bytes` (at least one) in the current context.
    fn alloc(bytes: usize) -> Result<DriverMemory, String> {
        let mut address = 0;
        // SAFETY: an out pointer to a local; a context is current.
        let status = unsafe { cuda::cuMemAlloc_v2(&mut address, bytes.max(1)) };
        driver(status, "cuMemAlloc")?;
        Ok(DriverMemory { address })
    }

    /// Its first `len` u32s, copied to the host.
    fn download(&self, len: usize) -> Result<Vec<u32>, String> {
        let mut out = vec![0u32; len];
        // SAFETY: the allocation holds at least `len` u32s and `out` exactly that many; the
        // stream that wrote them has been synchronised.
        let status = unsafe {
            cuda::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), self.address, size_of_val(&out[..]))
        };
        driver(status, "cuMemcpyDtoH")?;
        Ok(out)
    }
}

impl Drop for DriverMemory {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc and freed once, here, after the stream that used it
        // (dropped first) has run its work.
        let _ = unsafe { cuda::cuMemFree_v2(self.address) };
    }
}

/// A stream from `cuStreamCreate`, standing for another library's; on drop it waits for its
/// work and is destroyed.
struct DriverStream(cuda::CUstream);

impl DriverStream {
    /// A non-blocking stream (not ordered with the legacy default stream) in the current
    /// context.
    fn create() -> Result<DriverStream, String> {
        let mut stream = std::ptr::null_mut();
        let flags = cuda::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: an out pointer to a local; a context is current.
        let status = unsafe { cuda::cuStreamCreate(&mut stream, flags) };
        driver(status, "cuStreamCreate")?;
        Ok(DriverStream(stream))
    }
}

impl Drop for DriverStream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate and destroyed once, here, after its work has run,
        // so that the memory it used may be freed next.
        unsafe {
            let _ = cuda::cuStreamSynchronize(self.0);
            let _ = cuda::cuStreamDestroy_v2(self.0);
        }
    }
}

/// A driver call's status as a `Result`, naming the call.
fn driver(status: cuda::CUresult, call: &str) -> Result<(), String> {
    match status {
        cuda::CUresult::CUDA_SUCCESS => Ok(()),
        error => Err(format!("{call} failed: {error:?}")),
    }
}

/// A reproducible stream of random words: SplitMix64 of `i`.
fn splitmix64(i: u64) -> u64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
