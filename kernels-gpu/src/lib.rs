//! GPU sorting kernels written in Rust and compiled to PTX by rustc's `nvptx64-nvidia-cuda`
//! backend (`cargo xtask ptx`, which writes `gpusort/kernels.ptx`).
//!
//! Layers, lowest first:
//! - [`tuning`]: tile sizes and launch shapes, read by the kernels and by the host's grid math.
//! - [`keys`]: order-preserving maps from signed and float keys (and descending order) to
//!   unsigned keys.
//! - [`bitonic`]: pure index math of the bitonic network (also compiled and tested on the host).
//! - [`merge`]: pure index math of the stable merge sort: merge path, pass schedule, partitions.
//! - [`overlap`]: chunks and launch ranges of host-slice sorts that overlap copies and sort.
//! - [`radix`]: pure index math of the least-significant-digit radix sort (Onesweep): digits,
//!   tiles, the look-back's status words, the scratch layout.
//! - [`topk`]: pure index math of top-k selection: items (key and position), shared-memory
//!   layout, the rounds that cut segments into parts.
//! - [`small`]: pure index math of the one-launch bitonic sort of small inputs: which keys a
//!   block holds in each window, the grid barrier's counter.
//! - [`window`]: pure index math of the bitonic sort of larger inputs in *window passes*: one
//!   launch per run of the network's steps that fits blocks of 2^13 keys (which bits a block
//!   holds, the flip's mirror image, each step's register layout), 23 launches at 2^25 keys.
//! - `gpu` (nvptx only): thread/block indices, barriers and shared memory, so kernels read
//!   like CUDA kernels.
//! - [`block`]: what one block does. The block code is generic over the block's threads (a
//!   [`block::Team`] for the bitonic sorts, a [`block::Block`] of units for the merge sort) or,
//!   for the radix sorts, written thread by thread against [`block::simt`], and also builds for
//!   the host, where tests run it on the CPU ([`block::CpuTeam`], [`block::CpuBlock`],
//!   [`block::simt::launch`]).
//! - [`kernels`]: every kernel, declared once (name, family, register cap, window program);
//!   built for nvptx64, also their thin `extern "gpu-kernel"` entry points.
//!
//! On the host this crate is an `rlib` of pure functions and constants ([`tuning`], [`keys`],
//! [`bitonic`]), used by the `gpusort` host for its grid math and by the tests, which run the
//! kernels' index math on the CPU. Built for `nvptx64-nvidia-cuda` it is also a `cdylib`: the
//! PTX module that `gpusort` embeds and loads.
//!
//! ```
//! use kernels_gpu::tuning::{WINDOW_LOG2, WINDOW_PASSENGERS};
//! use kernels_gpu::window::windows;
//!
//! // The launches that sort 2^20 keys: the tile sort (stages 1 ..= 13 in 8192-key tiles), then
//! // 11 window passes for the 7 stages above it (a schedule of one global pass per step and
//! // a tile merge per stage takes 19 launches: docs/design.md).
//! let passes: Vec<_> = windows(1 << 20, WINDOW_LOG2, WINDOW_PASSENGERS).collect();
//! assert!(passes[0].sort);
//! assert_eq!(passes.len(), 12);
//! ```
#![warn(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", no_std)]
// `core_intrinsics` is needed for `core::intrinsics::gpu` (dynamic shared memory).
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_gpu_kernel,
        stdarch_nvptx,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        core_intrinsics,
        asm_experimental_arch
    )
)]

pub mod bitonic;
pub mod block;
pub mod keys;
pub mod merge;
pub mod multi;
pub mod overlap;
pub mod radix;
pub mod segments;
pub mod small;
pub mod topk;
pub mod tuning;
pub mod window;

#[cfg(target_arch = "nvptx64")]
mod gpu;
pub mod kernels;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { core::arch::nvptx::trap() }
}
