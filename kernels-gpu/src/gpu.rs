//! The only module that touches nvptx intrinsics: thread and block indices, the block barrier
//! and dynamic shared memory, named as in CUDA so that kernels read like CUDA kernels.

use core::arch::nvptx;

/// `threadIdx.x`
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reads a special register; no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

/// `blockIdx.x`
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_x() as u32 }
}

/// `blockDim.x`
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_x() as u32 }
}

/// `gridDim.x`
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// Global index of this thread in a one-dimensional grid, as `u64`.
#[inline(always)]
pub fn global_thread_x() -> u64 {
    u64::from(block_idx_x()) * u64::from(block_dim_x()) + u64::from(thread_idx_x())
}

/// `__syncthreads()`: every thread of the block must reach it.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: kernels call it in block-uniform control flow.
    unsafe { nvptx::_syncthreads() }
}

/// `__syncwarp()`: a barrier (with memory ordering) among the threads of this warp; every
/// thread of the warp must reach it.
#[inline(always)]
pub fn sync_warp() {
    // SAFETY: kernels call it in warp-uniform control flow.
    unsafe { core::arch::asm!("bar.warp.sync -1;") }
}

/// `extern __shared__ T smem[]`: the block's dynamic shared memory, sized at launch.
#[inline(always)]
pub fn dynamic_shared<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// `__shfl_xor_sync(0xffffffff, v, lane_mask)`: the value `self` of lane `lane ^ lane_mask`.
/// Every lane of the warp must call it (no divergence).
pub trait WarpShuffle: Copy {
    /// This value as held by the lane whose index differs from ours by xor `lane_mask`.
    fn shfl_xor(self, lane_mask: u32) -> Self;
}

impl WarpShuffle for u32 {
    #[inline(always)]
    fn shfl_xor(self, lane_mask: u32) -> u32 {
        let theirs: u32;
        // SAFETY: a full-warp butterfly shuffle; callers keep the whole warp converged.
        unsafe {
            core::arch::asm!(
                "shfl.sync.bfly.b32 {theirs}, {mine}, {mask}, 0x1f, 0xffffffff;",
                theirs = out(reg32) theirs,
                mine = in(reg32) self,
                mask = in(reg32) lane_mask,
            )
        };
        theirs
    }
}

impl WarpShuffle for u64 {
    #[inline(always)]
    fn shfl_xor(self, lane_mask: u32) -> u64 {
        let low = (self as u32).shfl_xor(lane_mask);
        let high = ((self >> 32) as u32).shfl_xor(lane_mask);
        (u64::from(high) << 32) | u64::from(low)
    }
}

/// A CUDA block of `THREADS` threads (a constant, so the unit loops run once per thread).
pub struct CudaBlock<const THREADS: u32>;

impl<const THREADS: u32> crate::block::Block for CudaBlock<THREADS> {
    type Regs<T: Copy> = crate::block::One<T>;
    #[inline(always)]
    fn thread(&self) -> u32 {
        thread_idx_x()
    }
    #[inline(always)]
    fn threads(&self) -> u32 {
        THREADS
    }
    #[inline(always)]
    fn sync(&self) {
        sync_threads()
    }
    #[inline(always)]
    fn sync_warp(&self) {
        sync_warp()
    }
    #[inline(always)]
    fn regs<T: Copy>(&self, _units: u32, init: T) -> crate::block::One<T> {
        crate::block::One(init)
    }
}
