//! GPU sorting kernels written in Rust and compiled to PTX by rustc's `nvptx64-nvidia-cuda`
//! backend (`cargo xtask ptx`, which writes `gpusort/kernels.ptx`).
//!
//! Layers, lowest first:
//! - [`tuning`]: tile sizes and launch shapes, read by the kernels and by the host's grid math.
//! - [`args`]: the kernels' argument structs' contract ([`args::KernelArgs`], `kernel_args!`).
//! - [`keys`]: order-preserving maps from signed and float keys (and descending order) to
//!   unsigned keys.
//! - `gpu` (nvptx only): thread/block indices, barriers, shuffles and shared memory, so kernels
//!   read like CUDA kernels.
//! - [`block`]: the views of a block's threads that block code is written against (a
//!   [`block::Team`], a [`block::Block`] of units, one thread as CUDA writes it:
//!   [`block::simt`]), each with a CPU emulator that checks for races ([`block::CpuTeam`],
//!   [`block::CpuBlock`], [`block::simt::launch`]).
//! - One folder per algorithm, each whole: its index math and argument structs in `mod.rs`
//!   (also compiled and tested on the host), what one block does (`block`, run on the CPU in
//!   tests) and its kernels' entry points (nvptx64 only):
//!   [`bitonic`] (the network, the one-launch [`bitonic::small`] sort, the
//!   [`bitonic::window`] passes), [`merge`] (merge path, pass schedule, partitions), [`radix`]
//!   (Onesweep's digits, tiles, look-back and scratch), [`segments`] (rows and segments),
//!   [`topk`] (selection rounds and digit passes), [`multi`] (the multi-GPU sort's sample, ranks
//!   and checks).
//! - [`overlap`]: chunks and launch ranges of host-slice sorts that overlap copies and sort.
//! - [`kernels`]: every kernel, declared once (name, family, argument struct, register cap,
//!   window program); the host's table and typed handles of them.
//!
//! On the host this crate is an `rlib` of pure functions and constants ([`tuning`], [`keys`],
//! [`bitonic`]), used by the `gpusort` host for its grid math and by the tests, which run the
//! kernels' index math on the CPU. Built for `nvptx64-nvidia-cuda` it is also a `cdylib`: the
//! PTX module that `gpusort` embeds and loads.
//!
//! ```
//! use kernels_gpu::tuning::{WINDOW_LOG2, WINDOW_PASSENGERS};
//! use kernels_gpu::bitonic::window::windows;
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

pub mod args;
pub mod bitonic;
pub mod block;
pub mod keys;
pub mod merge;
pub mod multi;
pub mod overlap;
pub mod radix;
pub mod segments;
pub mod topk;
pub mod tuning;

#[cfg(target_arch = "nvptx64")]
mod gpu;
pub mod kernels;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { core::arch::nvptx::trap() }
}
