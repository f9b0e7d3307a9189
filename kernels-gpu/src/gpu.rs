//! The only module that touches nvptx intrinsics: thread and block indices, the block barrier
//! and dynamic shared memory, named as in CUDA so that kernels read like CUDA kernels; warp
//! shuffles, warp votes and the grid barrier of cooperative launches as inline PTX.

use crate::bitonic::small::{barrier_increment, barrier_passed, barrier_target};
use crate::block::{SharedMem, Team};
use crate::keys::KeyBits;
use crate::merge::Vote;
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

/// `__syncwarp()`: the warp's lanes meet, and each lane's earlier shared-memory writes are
/// visible to the others after it.
#[inline(always)]
pub fn sync_warp() {
    // SAFETY: a full-warp barrier; callers keep the whole warp converged.
    unsafe { core::arch::asm!("bar.warp.sync 0xffffffff;") };
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

/// This thread's warp as a [`Vote`]: `__ballot_sync(0xffffffff, pred(lane))`. Every lane of
/// the warp must vote (no divergence); blocks are whole warps.
pub struct WarpVote;

impl Vote for WarpVote {
    #[inline(always)]
    fn vote(&self, pred: impl Fn(u32) -> bool) -> u32 {
        let mine = u32::from(pred(thread_idx_x() % 32));
        let mask: u32;
        // SAFETY: a full-warp ballot; callers keep the whole warp converged.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {mine}, 0; vote.sync.ballot.b32 {mask}, p, 0xffffffff; }}",
                mask = out(reg32) mask,
                mine = in(reg32) mine,
            )
        };
        mask
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
    fn regs<T: Copy>(&self, _units: u32, init: T) -> crate::block::One<T> {
        crate::block::One(init)
    }
    #[inline(always)]
    fn prefetch<T>(&self, at: *const T) {
        prefetch_l2(at)
    }
    #[inline(always)]
    fn opaque(&self, x: u32) -> u32 {
        opaque(x)
    }
}

/// `x` through a register move the optimizer cannot see through: values computed from it are
/// computed after it, not hoisted above it.
#[inline(always)]
pub fn opaque(x: u32) -> u32 {
    let mut x = x;
    // SAFETY: a register move; volatile, so LLVM cannot reuse values computed from `x` before
    // it.
    unsafe { core::arch::asm!("mov.u32 {x}, {x};", x = inout(reg32) x) };
    x
}

/// Asks for the 128-byte line of device memory holding `at` to be brought into the L2 cache,
/// without waiting (`prefetch.global.L2`).
#[inline(always)]
pub fn prefetch_l2<T>(at: *const T) {
    // SAFETY: a prefetch only hints the L2 cache; it neither faults nor changes memory.
    unsafe { core::arch::asm!("prefetch.global.L2 [{at}];", at = in(reg64) at) };
}

/// The 16 bytes of device memory at `at` in one vector load (`ld.global.nc.v4.u32`, through
/// the read-only data cache): memory that no thread of the launch writes. A plain read of a
/// 16-byte value becomes four loads where LLVM merges it with a branch that loads key by key.
///
/// # Safety
/// `at` is 16-byte aligned device memory (generic address), valid for 16 bytes and not written
/// during the launch.
#[inline(always)]
pub unsafe fn load_global_16(at: *const u8) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 %g; cvta.to.global.u64 %g, {at}; ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [%g]; }}",
            at = in(reg64) at as u64,
            a = out(reg32) a,
            b = out(reg32) b,
            c = out(reg32) c,
            d = out(reg32) d,
            options(readonly, nostack),
        )
    };
    [a, b, c, d]
}

/// The 32-bit word at `at` if `valid`, else `default`: one predicated load
/// (`ld.global.nc.u32`), no branch, so that a thread's loads all go out before the first
/// arrives.
///
/// # Safety
/// Where `valid`, `at` is an aligned device word (generic address) not written during the
/// launch; elsewhere it is not read.
#[inline(always)]
pub unsafe fn load_global_u32_if(at: *const u32, valid: bool, default: u32) -> u32 {
    let mut word = default;
    // SAFETY: the caller's contract; the load runs only where `valid`.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred %p; .reg .u64 %g; setp.ne.u32 %p, {valid}, 0; cvta.to.global.u64 %g, {at}; @%p ld.global.nc.u32 {word}, [%g]; }}",
            at = in(reg64) at as u64,
            valid = in(reg32) u32::from(valid),
            word = inout(reg32) word,
            options(readonly, nostack),
        )
    };
    word
}

/// [`load_global_u32_if`] of a 64-bit word.
///
/// # Safety
/// As [`load_global_u32_if`].
#[inline(always)]
pub unsafe fn load_global_u64_if(at: *const u64, valid: bool, default: u64) -> u64 {
    let mut word = default;
    // SAFETY: the caller's contract; the load runs only where `valid`.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred %p; .reg .u64 %g; setp.ne.u32 %p, {valid}, 0; cvta.to.global.u64 %g, {at}; @%p ld.global.nc.u64 {word}, [%g]; }}",
            at = in(reg64) at as u64,
            valid = in(reg32) u32::from(valid),
            word = inout(reg64) word,
            options(readonly, nostack),
        )
    };
    word
}

/// `cooperative_groups::this_grid().sync()`: every thread of every block of the launch waits
/// here until all have arrived, and sees every global-memory write made before the barrier by
/// any of them.
///
/// Thread 0 of each block arrives on `counter` with a release `atom.add` after a block barrier
/// (so the release covers the whole block's writes), spins with acquire loads until the counter
/// reaches the barrier's target ([`crate::bitonic::small::barrier_target`]), and a block barrier lets
/// the other threads go on. The counter is never reset: each barrier adds
/// [`crate::bitonic::small::BARRIER_STRIDE`] to it in all.
///
/// # Safety
/// A cooperative launch of `blocks` blocks (all resident at once, else this never returns);
/// every thread of every block calls it, the same number of times; `counter` is a device word,
/// a multiple of `BARRIER_STRIDE` at launch, that no concurrent launch uses.
#[inline(always)]
pub unsafe fn grid_sync(counter: *mut u32, blocks: u32) {
    sync_threads();
    if thread_idx_x() == 0 {
        let address = counter as u64;
        let old: u32;
        // SAFETY: `counter` is a valid device word (the caller's contract); generic addressing.
        unsafe {
            core::arch::asm!(
                "atom.release.gpu.add.u32 {old}, [{address}], {increment};",
                old = out(reg32) old,
                address = in(reg64) address,
                increment = in(reg32) barrier_increment(blocks),
            )
        };
        let target = barrier_target(old);
        loop {
            let now: u32;
            // SAFETY: as above.
            unsafe {
                core::arch::asm!(
                    "ld.acquire.gpu.u32 {now}, [{address}];",
                    now = out(reg32) now,
                    address = in(reg64) address,
                )
            };
            if barrier_passed(now, target) {
                break;
            }
        }
    }
    sync_threads();
}

/// A block's shared memory as a [`Team`] addresses it.
pub struct SharedTile<K>(*mut K);

impl<K: Copy> SharedMem<K> for SharedTile<K> {
    #[inline(always)]
    unsafe fn read(&mut self, _thread: u32, slot: u32) -> K {
        // SAFETY: slot lies inside the shared memory (the trait's contract).
        unsafe { *self.0.add(slot as usize) }
    }
    #[inline(always)]
    unsafe fn write(&mut self, _thread: u32, slot: u32, key: K) {
        // SAFETY: as above.
        unsafe { *self.0.add(slot as usize) = key }
    }
}

/// The calling thread as a [`Team`]: its run of `RUN` keys in registers, warp shuffles, the
/// block's shared memory and barrier.
pub struct CudaTeam<K, const RUN: usize> {
    run: [K; RUN],
    shared: SharedTile<K>,
}

impl<K: KeyBits, const RUN: usize> CudaTeam<K, RUN> {
    /// The calling thread, with the block's shared memory at `shared`.
    ///
    /// # Safety
    /// `shared` is this block's shared memory, as large as the block code's contract asks.
    #[inline(always)]
    pub unsafe fn new(shared: *mut K) -> Self {
        CudaTeam {
            run: [K::INFINITY; RUN],
            shared: SharedTile(shared),
        }
    }
}

impl<K: KeyBits + WarpShuffle, const RUN: usize> Team<K, RUN> for CudaTeam<K, RUN> {
    type Shared = SharedTile<K>;

    #[inline(always)]
    fn each(&mut self, mut f: impl FnMut(u32, &mut [K; RUN], &mut SharedTile<K>)) {
        f(thread_idx_x(), &mut self.run, &mut self.shared)
    }

    #[inline(always)]
    fn exchange(&mut self, lane_mask: u32, mut f: impl FnMut(u32, &mut [K; RUN], &[K; RUN])) {
        // Written out: a loop over a run of wide keys is not always unrolled, and a run indexed
        // in a loop moves to local memory.
        let mut theirs = self.run;
        macro_rules! shuffles {
            ($($r:literal)*) => { $( if $r < RUN { theirs[$r] = self.run[$r].shfl_xor(lane_mask); } )* };
        }
        shuffles!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
        const { assert!(RUN <= 32, "runs of up to 32 keys") };
        f(thread_idx_x(), &mut self.run, &theirs)
    }

    #[inline(always)]
    fn sync(&mut self) {
        sync_threads()
    }

    #[inline(always)]
    fn prefetch(at: *const K) {
        prefetch_l2(at)
    }

    #[inline(always)]
    fn opaque(x: u32) -> u32 {
        opaque(x)
    }
}

/// The lanes of this thread's warp whose `value` agrees with this lane's in its low `BITS`
/// bits, by one ballot per bit (as CUB's `MatchAny`): what `match.any.sync` returns for values
/// below `2^BITS`, at a few instructions per bit, where `match.any.sync` issues far slower
/// (docs/decisions.md, "Ranking by ballots"). Every lane of the warp must call it (no
/// divergence).
#[inline(always)]
pub fn match_bits<const BITS: u32>(value: u32) -> u32 {
    let mut peers = u32::MAX;
    let mut bit = 0;
    while bit < BITS {
        let set: u32;
        // SAFETY: a full-warp ballot; callers keep the whole warp converged.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; and.b32 {set}, {value}, {mask}; setp.ne.u32 p, {set}, 0; vote.sync.ballot.b32 {set}, p, 0xffffffff; @!p not.b32 {set}, {set}; }}",
                set = out(reg32) set,
                value = in(reg32) value,
                mask = in(reg32) 1u32 << bit,
            )
        };
        peers &= set;
        bit += 1;
    }
    peers
}

/// The lanes of this thread's warp below its own, as a mask (`%lanemask_lt`).
#[inline(always)]
pub fn lanemask_lt() -> u32 {
    let mask: u32;
    // SAFETY: reads a special register.
    unsafe { core::arch::asm!("mov.u32 {mask}, %lanemask_lt;", mask = out(reg32) mask) };
    mask
}

/// `__shfl_sync(0xffffffff, value, lane)`: `value` as lane `lane` holds it. Every lane of the
/// warp must call it.
#[inline(always)]
pub fn shfl_idx(value: u32, lane: u32) -> u32 {
    let theirs: u32;
    // SAFETY: a full-warp shuffle; callers keep the whole warp converged.
    unsafe {
        core::arch::asm!(
            "shfl.sync.idx.b32 {theirs}, {value}, {lane}, 0x1f, 0xffffffff;",
            theirs = out(reg32) theirs,
            value = in(reg32) value,
            lane = in(reg32) lane,
        )
    };
    theirs
}

/// `__shfl_up_sync(0xffffffff, value, delta)`: `value` as lane `lane - delta` holds it (this
/// lane's own below `delta`). Every lane of the warp must call it.
#[inline(always)]
pub fn shfl_up(value: u64, delta: u32) -> u64 {
    let up = |half: u32| -> u32 {
        let theirs: u32;
        // SAFETY: a full-warp shuffle; callers keep the whole warp converged.
        unsafe {
            core::arch::asm!(
                "shfl.sync.up.b32 {theirs}, {half}, {delta}, 0, 0xffffffff;",
                theirs = out(reg32) theirs,
                half = in(reg32) half,
                delta = in(reg32) delta,
            )
        };
        theirs
    };
    (u64::from(up((value >> 32) as u32)) << 32) | u64::from(up(value as u32))
}

/// `atomicAdd(at, value)` on a 32-bit word of the block's shared memory, as `atom.shared`: the
/// multiprocessor adds it in its shared memory, without the generic address's detour. Returns
/// the old value.
///
/// # Safety
/// `at` is a valid, aligned word of the block's shared memory (generic address).
#[inline(always)]
pub unsafe fn shared_atomic_add(at: *mut u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 %sh; cvta.to.shared.u64 %sh, {at}; atom.shared.add.u32 {old}, [%sh], {value}; }}",
            old = out(reg32) old,
            at = in(reg64) at as u64,
            value = in(reg32) value,
        )
    };
    old
}

/// `atomicAdd(at, value)` on a 32-bit word of the block's shared memory, its old value not
/// needed (`red.shared`).
///
/// # Safety
/// As [`shared_atomic_add`].
#[inline(always)]
pub unsafe fn shared_reduce_add(at: *mut u32, value: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 %sh; cvta.to.shared.u64 %sh, {at}; red.shared.add.u32 [%sh], {value}; }}",
            at = in(reg64) at as u64,
            value = in(reg32) value,
        )
    };
}

/// The address of `at` in the block's shared-memory window: 32 bits, so that per-access
/// address arithmetic stays in 32-bit registers rather than 64-bit generic addresses.
///
/// # Safety
/// `at` points into the block's shared memory (generic address).
#[inline(always)]
pub unsafe fn shared_window<T>(at: *mut T) -> u32 {
    let window: u32;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 %sh; cvta.to.shared.u64 %sh, {at}; cvt.u32.u64 {window}, %sh; }}",
            window = out(reg32) window,
            at = in(reg64) at as u64,
        )
    };
    window
}

/// [`shared_reduce_add`] on the word at `window` of the block's shared-memory window
/// ([`shared_window`]).
///
/// # Safety
/// `window` is an aligned word of the block's shared memory; other threads touch it only
/// through atomics until a barrier.
#[inline(always)]
pub unsafe fn shared_window_reduce_add(window: u32, value: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "red.shared.add.u32 [{window}], {value};",
            window = in(reg32) window,
            value = in(reg32) value,
        )
    };
}

/// `atomicAdd(at, value)` on a 32-bit word of shared or device memory; returns the old value.
///
/// # Safety
/// `at` is a valid, aligned word of shared or device memory (generic address).
#[inline(always)]
pub unsafe fn atomic_add(at: *mut u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "atom.add.u32 {old}, [{at}], {value};",
            old = out(reg32) old,
            at = in(reg64) at as u64,
            value = in(reg32) value,
        )
    };
    old
}

/// Adds `value` to a 64-bit word of device memory, atomically, not waiting for the result.
///
/// # Safety
/// `at` is a valid, aligned device word (generic address).
#[inline(always)]
pub unsafe fn reduce_add(at: *mut u64, value: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "red.add.u64 [{at}], {value};",
            at = in(reg64) at as u64,
            value = in(reg64) value,
        )
    };
}

/// Loads a 64-bit device word that other blocks write concurrently (`ld.relaxed.gpu`): never
/// a stale copy from this multiprocessor's L1.
///
/// # Safety
/// `at` is a valid, aligned device word.
#[inline(always)]
pub unsafe fn load_relaxed(at: *const u64) -> u64 {
    let value: u64;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "ld.relaxed.gpu.u64 {value}, [{at}];",
            value = out(reg64) value,
            at = in(reg64) at as u64,
        )
    };
    value
}

/// Stores a 64-bit device word that other blocks read concurrently (`st.relaxed.gpu`).
///
/// # Safety
/// `at` is a valid, aligned device word.
#[inline(always)]
pub unsafe fn store_relaxed(at: *mut u64, value: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "st.relaxed.gpu.u64 [{at}], {value};",
            at = in(reg64) at as u64,
            value = in(reg64) value,
        )
    };
}
