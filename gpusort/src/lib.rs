//! Sort arrays on NVIDIA GPUs with kernels written in Rust (compiled to PTX by rustc's nvptx64
//! backend, launched with [`cust`]), with CPU baselines, a CPU fallback and verification.
//!
//! The entry point is [`GpuSorter`]: create one per device and process, then sort host slices
//! ([`GpuSorter::sort_unstable`]) or keys already on the device, queued on a stream through a
//! [`Queue`] ([`GpuSorter::queue`], [`Queue::sort_unstable`]). Everything else in the crate
//! works without a GPU.
//!
//! ```no_run
//! use gpusort::{GpuSorter, Order};
//!
//! let sorter = GpuSorter::new()?; // driver, context, kernels (JIT), stream: once
//! let mut keys = vec![3.5f32, -1.0, f32::NAN, 0.0, -0.0];
//! sorter.sort_unstable(&mut keys, Order::Ascending)?;
//! assert_eq!(keys[..4], [-1.0, -0.0, 0.0, 3.5]);
//! assert!(keys[4].is_nan());
//! # Ok::<(), gpusort::Error>(())
//! ```
//!
//! # Using the library
//!
//! Depend on it by path or by git (the package is `gpusort`, in the `gpusort/` directory of its
//! repository):
//!
//! ```toml
//! [dependencies]
//! gpusort = { path = "../gpusort/gpusort" }
//! # or by git: gpusort = { git = "<the repository's URL>" }
//! ```
//!
//! Any Rust toolchain that builds edition 2024 builds it, stable included: the kernels come
//! compiled, as PTX inside the package ([`gpu::KERNELS_PTX`]). What it needs is what a CUDA user
//! has:
//!
//! - to link: `libcuda` (the driver's, or a stub), found through the CUDA toolkit
//!   (`CUDA_PATH`, `/usr/local/cuda`) or the directory in `CUDA_LIBRARY_PATH` (e.g.
//!   `CUDA_LIBRARY_PATH=/usr` where the driver's `libcuda.so` is in `/usr/lib`), as `cust`'s
//!   link step looks for it;
//! - to sort on the GPU: an NVIDIA driver and a GPU of compute capability 7.0 (Volta) or later;
//!   the driver compiles the PTX for the GPU when a sorter first loads it. Without either,
//!   [`GpuSorter::new`] returns [`Error::NoDriver`] or [`Error::NoDevice`] and the CPU sorts of
//!   [`cpu`] remain.
//!
//! Features, all off by default: `clap` derives `clap::ValueEnum` for the enums a command line
//! takes ([`Order`], [`DType`], [`cpu::CpuAlgo`], [`gpu::GpuAlgo`], [`multi::Exchange`]);
//! `cudarc` lets a [`Queue`] run on `cudarc`'s streams and buffers; `testing` adds the CPU
//! references that tests of the GPU code compare with. No environment variable changes what a
//! sort does; `GPUSORT_TRACE` prints the timeline of host-slice sorts' copies to stderr.
//!
//! The library sorts what a program already holds, in memory or on the device: it reads no
//! files, handles no signals and leaves the process's allocator alone. Its normal dependencies
//! are `cust`, `kernels-gpu`, `rayon` and `thiserror` (and `clap` and `cudarc` with their
//! features). Key files (`.npy`, raw), the clean-up on signals and the memory checks of a
//! command line are the command-line tool's (package `gpusort-cli`: `gpusort_cli::files`,
//! `::cleanup`, `::memory`).
//!
//! # From the CPU to the GPU
//!
//! The API follows `std`'s slice sorts; where the data lives on the GPU it takes `cust`'s
//! device memory types, which `cust` names after std's (or any device memory, through
//! [`DeviceMemory`] and [`DeviceMemoryMut`]). Every sort takes `impl Into<Options>`: an
//! [`Order`] alone lets `auto` choose the sort, [`Options`] may name one ([`GpuAlgo`]).
//!
//! | on the CPU (`std`) | on the GPU (`gpusort`, `cust`) |
//! |---|---|
//! | `Vec<T>` (owned keys) | [`DeviceBuffer<T>`](cust::memory::DeviceBuffer), from [`GpuSorter::upload`] or `cust`'s constructors |
//! | `&mut [T]` (borrowed keys) | [`&mut DeviceSlice<T>`](cust::memory::DeviceSlice) (a `DeviceBuffer` derefs to one); another library's memory: [`RawDeviceSlice`] |
//! | `<[T]>::sort_unstable` | [`GpuSorter::sort_unstable`] (host slice: one upload, the sort, one download) and [`Queue::sort_unstable`] (in place on the device): the fastest of the three GPU sorts for the size and where the keys are (`auto`, below) |
//! | spawning work and joining it | a [`Queue`] on the sorter's stream ([`GpuSorter::queue`]) or the caller's ([`GpuSorter::queue_on`]) queues sorts without waiting; [`Queue::synchronize`] waits for them |
//! | `<[T]>::sort` (stable) | [`GpuSorter::sort`] and [`Queue::sort`]: the faster of the two stable sorts (merge-path merge sort, LSD radix sort) |
//! | sorting (key, value) pairs | [`GpuSorter::sort_by_key`] (any `Copy` payload of up to 16 bytes), [`Queue::sort_by_key`] (`u32`/`u64`/`u128` values) |
//! | argsort (the sorting permutation) | [`GpuSorter::argsort`] (`u32`, `u64` or `u128` indices), [`Queue::argsort`] (`u32` indices); [`argsort::argsort_cpu`] on the CPU |
//! | the k smallest or largest | [`GpuSorter::top_k`] and [`Queue::top_k`], of an array or of each row; [`topk`] on the CPU |
//!
//! Host slices too large for the device are sorted in chunks and merged on the CPU
//! ([`GpuSorter::set_memory_budget`], [`GpuSorter::set_progress`]).
//!
//! # Which sort runs: `auto`
//!
//! Three GPU sorts ([`gpu::GpuAlgo`]): a bitonic network (unstable, in place, no scratch), a
//! merge-path merge sort and an LSD radix sort (both stable, with a scratch buffer as large as
//! the keys and values). Given an [`Order`] alone, a sort runs `auto`'s choice: the fastest by
//! n, key width and whether values travel, from a table measured per device policy, with choices for keys on
//! the device and for host slices ([`kernels_gpu::tuning::auto`]; on Hopper, for 4-byte keys
//! alone on the device the bitonic sort up to 2^16 keys (but the merge sort at 2^13), the radix
//! sort above; for host slices, whose copies overlap the bitonic and the merge sort but not the
//! radix sort, the bitonic sort up to 2^26 keys, the merge sort above). `sort_unstable` chooses
//! among all three and runs the in-place bitonic sort where the faster choice's scratch does not
//! fit (in free device memory; on a queue, where the memory pool cannot supply it or the
//! caller's scratch is too small); `sort`, `sort_by_key` and the host slices' `argsort` choose
//! between the two stable sorts and keep their choice (an out-of-memory error on the device;
//! chunks merged on the CPU for host slices). [`GpuSorter::auto_device`] and
//! [`GpuSorter::auto_host`] say what a call would run. Given [`Options`] with `algo: Some(..)`,
//! the named sort runs (the stable calls refuse the bitonic sort: [`Error::NotStable`]).
//!
//! # Key types and order
//!
//! The sorts take the six [`SortKey`] types, `u32`, `i32`, `f32`, `u64`, `i64` and `f64`
//! ([`DType`] names them at run time; [`with_key_type!`] turns a name back into a type), in
//! either [`Order`]. Floats are ordered like [`f32::total_cmp`] and [`f64::total_cmp`]:
//!
//! −NaN < −∞ < … < −1.0 < … < −0.0 < +0.0 < … < 1.0 < … < +∞ < +NaN
//!
//! and [`Order::Descending`] is exactly the reverse. Keys that are equal in this order have
//! identical bits, so an unstable sort of keys alone gives, bit for bit, what std's stable
//! `sort_by(f32::total_cmp)` gives: stability only matters once values travel with the keys.
//!
//! # Complexity and memory
//!
//! The bitonic network takes O(n log² n) compare-exchanges in ⌈log₂ n⌉ stages, the same for
//! every input of length n (it never looks at the data to decide what to compare); the merge
//! sort O(n log n) work, a merge pass per doubling of its sorted runs past the tiles; the radix sort O(n) work in one pass
//! per 8-bit digit (4 for 4-byte keys, 8 for 8-byte ones). Any n works, without padding.
//!
//! - [`Queue::sort_unstable`] sorts in place; where `auto` chooses the merge or the radix sort
//!   it takes a scratch buffer about as large as the keys, the caller's
//!   ([`Queue::with_scratch`], sized by [`GpuSorter::scratch_bytes`]) or else one from the
//!   device's memory pool in the stream's order, and where there is none it runs the bitonic
//!   network, which needs no scratch.
//! - [`GpuSorter::sort_unstable`] allocates one device buffer of n keys (n ×
//!   `size_of::<K>()` bytes) and the chosen sort's scratch, checked against free device memory
//!   first, and frees them before it returns; no host memory beyond the slice.
//! - [`argsort::argsort_cpu`] needs 16 bytes per key beside the keys (plus a per-thread
//!   scratch of at most an eighth of that, or 4 MiB).
//! - [`cpu::radix_sort`] (the CPU fallback) takes a scratch buffer as large as the keys where
//!   [`memory::check`] allows it, and sorts in place otherwise.
//!
//! # Errors
//!
//! GPU calls return [`Result<T, Error>`](Result). [`Error`] tells apart a missing driver
//! ([`Error::NoDriver`]) or device ([`Error::NoDevice`]), which a program may answer by sorting
//! on the CPU ([`cpu::CpuAlgo`]); a bad device ordinal ([`Error::InvalidDevice`]); too little
//! device memory ([`Error::OutOfDeviceMemory`], with the bytes asked for and free); more keys
//! than the kernels index ([`Error::TooLong`]); and failing CUDA calls ([`Error::Cuda`],
//! [`Error::DriverCall`]) with what was being done.
//!
//! ```no_run
//! use gpusort::{Error, GpuSorter, Order, cpu::CpuAlgo};
//!
//! let mut keys = vec![5u64, 1, 4, 1];
//! match GpuSorter::new() {
//!     Ok(gpu) => gpu.sort_unstable(&mut keys, Order::Ascending)?,
//!     Err(Error::NoDriver(_) | Error::NoDevice) => CpuAlgo::Rayon.sort(&mut keys, Order::Ascending),
//!     Err(e) => return Err(e),
//! }
//! assert_eq!(keys, [1, 1, 4, 5]);
//! # Ok::<(), gpusort::Error>(())
//! ```
//!
//! # Modules
//!
//! - [`gpu`]: [`GpuSorter`], [`Queue`], [`PinnedBuffer`] and the embedded kernels.
//! - [`multi`]: [`MultiGpuSorter`], one sort across several GPUs.
//! - [`keys`]: [`SortKey`], [`SortValue`], [`Order`], [`DType`].
//! - [`cpu`]: CPU sorts (a radix sort, std, rayon, the bitonic network on one and on all
//!   cores), as baselines and fallback, and the stable merge of sorted runs.
//! - [`argsort`]: the stable sorting permutation and gathering through it (CPU).
//! - [`memory`]: what the process can really allocate (`MemAvailable`, cgroup limits,
//!   `RLIMIT_AS`/`RLIMIT_DATA`), checked before a CPU sort allocates its scratch buffer, and
//!   [`memory::fallible`], which marks the allocations whose failure the library handles.
//! - [`topk`]: [`TopK`], the k best keys of an array or of each row, and their selection on
//!   the CPU.
//! - [`error`]: [`Error`] and [`Result`].
//!
//! The programs in `gpusort/examples/` show each use end to end: `sort_vec`, `sort_device`,
//! `sort_pairs` (`sort_by_key`), `argsort` and `raw_pointers` (another library's memory and
//! stream, through the driver API) (`cargo run --release -p gpusort --example sort_vec`);
//! without a GPU they say so and sort on the CPU, or, for `raw_pointers`, stop. The command-line tool, `gpusort` (package
//! `gpusort-cli`), sorts files and benchmarks the sorts; its example `sort_file` sorts a `.npy`
//! file with the library and the tool's `files` module.
#![warn(missing_docs)]

pub mod argsort;
pub mod cpu;
pub mod error;
pub mod gpu;
pub mod keys;
pub mod memory;
pub mod multi;
pub mod topk;

pub use error::{Error, Result};
pub use gpu::{
    AsStream, DeviceMemory, DeviceMemoryMut, GpuAlgo, GpuSorter, Options, PinnedBuffer, Queue,
    RawDeviceSlice, RawStream, Segments, Work,
};
pub use keys::{DType, Order, SortKey, SortValue};
pub use multi::MultiGpuSorter;
pub use topk::TopK;
