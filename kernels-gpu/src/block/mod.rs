//! What one block does, written once for the GPU and for the CPU tests. A kernel's block code
//! is generic over the block's threads, seen in one of three ways:
//! - a [`Team`]: each thread holds a run of `RUN` keys in registers, exchanges them with other
//!   lanes of its warp (shuffles) and with other threads through shared memory between
//!   barriers. The bitonic sorts' block code ([`tiny`], [`small`], [`window`], [`segments`],
//!   [`short_segments`]) is written against it. On the GPU a team is the calling thread (`gpu::CudaTeam`); on the CPU,
//!   [`CpuTeam`] runs every thread of the block in turn and panics on a shared-memory race (a
//!   missing barrier).
//! - a [`Block`] of *units*: per-unit state kept across barriers ([`Block::Regs`]) and shared
//!   memory addressed directly, for the merge sort's block code ([`merge`], [`network_merge`]),
//!   whose threads do different amounts of work in a phase. On the GPU a unit is a thread
//!   (`gpu::CudaBlock`); on the CPU, [`CpuBlock`] runs every unit in turn.
//! - one thread of the block, written as CUDA is, for code around warp matches and shuffles and
//!   other blocks' progress: the radix sorts' block code ([`crate::radix::block`],
//!   [`crate::segments::radix`]) calls the primitives of [`simt`]. On the GPU they are
//!   `crate::gpu`'s; on the CPU, an emulated launch ([`simt::launch`]) runs every thread of a
//!   block on an OS thread of its own and panics on a shared-memory race.
pub mod simt;

/// The threads that work on one tile.
///
/// Block code runs in *phases* separated by [`Block::sync`]: in a phase, each unit `u` (one per
/// GPU thread) reads only what earlier phases wrote and writes slots no other unit touches, so
/// one CPU thread running the units one after another computes what the GPU's threads do.
/// What a unit keeps across a barrier lives in [`Block::Regs`]: the thread's registers on the
/// GPU, one slot per unit on the CPU.
pub trait Block {
    /// Per-unit state kept from one phase to the next.
    type Regs<T: Copy>: Regs<T>;
    /// The first unit this thread runs.
    fn thread(&self) -> u32;
    /// Threads in the block: a thread runs units `thread(), thread() + threads(), …`.
    fn threads(&self) -> u32;
    /// Barrier: every unit's earlier shared-memory writes are visible to every unit after it.
    fn sync(&self);
    /// `init` for each of the `units` units (the block's `nt`) this thread runs.
    fn regs<T: Copy>(&self, units: u32, init: T) -> Self::Regs<T>;
    /// Asks for the device-memory line ([`L2_LINE_BYTES`]) holding `at` to be brought into the
    /// L2 cache, without waiting (`prefetch.global.L2`; nothing on the CPU). `at` need not be
    /// valid.
    #[inline(always)]
    fn prefetch<T>(&self, at: *const T) {
        let _ = at;
    }
    /// `x`, hidden from the optimizer (on the GPU): what is computed from it is computed anew
    /// where it is used rather than hoisted out of the loops and kept in registers throughout
    /// (the top-k kernels' positions and shared addresses, which held 250 registers).
    #[inline(always)]
    fn opaque(&self, x: u32) -> u32 {
        x
    }
    /// Runs `f(u)` for every unit `u < units` this thread runs (one on the GPU, all on the
    /// CPU).
    #[inline(always)]
    fn units(&self, units: u32, mut f: impl FnMut(u32)) {
        let mut u = self.thread();
        while u < units {
            f(u);
            u += self.threads();
        }
    }
}

/// State of the units a thread runs, see [`Block::Regs`].
pub trait Regs<T> {
    /// Unit `u`'s state (`u` is one of the thread's units).
    fn unit(&mut self, u: u32) -> &mut T;
}

/// The GPU's [`Block::Regs`]: one unit per thread, so one value, which stays in registers when
/// every index into it is a constant.
pub struct One<T>(pub T);

impl<T> Regs<T> for One<T> {
    #[inline(always)]
    fn unit(&mut self, _: u32) -> &mut T {
        &mut self.0
    }
}

/// Bytes one prefetch brings into the L2 cache: a whole 128-byte line. One prefetch per line
/// reads the same DRAM bytes as one per 32-byte sector, with fewer instructions, and the sort
/// is the faster for it (docs/decisions.md, "L2 prefetch").
pub const L2_LINE_BYTES: usize = 128;

/// The CPU's [`Block`]: one thread that runs every unit; barriers are no-ops; the addresses it is
/// asked to prefetch are recorded.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Default)]
pub struct CpuBlock {
    /// The addresses of the prefetches, in order.
    pub prefetched: core::cell::RefCell<Vec<usize>>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Block for CpuBlock {
    type Regs<T: Copy> = Vec<T>;
    fn thread(&self) -> u32 {
        0
    }
    fn threads(&self) -> u32 {
        1
    }
    fn sync(&self) {}
    fn regs<T: Copy>(&self, units: u32, init: T) -> Vec<T> {
        vec![init; units as usize]
    }
    fn prefetch<T>(&self, at: *const T) {
        self.prefetched.borrow_mut().push(at as usize);
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T> Regs<T> for Vec<T> {
    fn unit(&mut self, u: u32) -> &mut T {
        &mut self[u as usize]
    }
}

/// Shared memory of a block, addressed in keys.
pub trait SharedMem<K> {
    /// The key at `slot`, read by thread `thread`.
    ///
    /// # Safety
    /// `slot` lies inside the block's shared memory.
    unsafe fn read(&mut self, thread: u32, slot: u32) -> K;
    /// Writes `key` at `slot` for thread `thread`.
    ///
    /// # Safety
    /// As [`SharedMem::read`].
    unsafe fn write(&mut self, thread: u32, slot: u32, key: K);
}

/// The threads of one block, each with a run of `RUN` keys in registers.
///
/// Code runs in phases separated by [`Team::sync`]; in a phase a thread may read a shared slot
/// that another thread wrote only in an earlier phase. [`Team::exchange`] is a warp shuffle:
/// every thread of the block must reach it (no divergence).
pub trait Team<K, const RUN: usize> {
    /// The block's shared memory.
    type Shared: SharedMem<K>;
    /// Runs `f(t, run, shared)` for every thread `t` this team runs (on the GPU: the calling
    /// thread), with `t`'s registers.
    fn each(&mut self, f: impl FnMut(u32, &mut [K; RUN], &mut Self::Shared));
    /// Runs `f(t, run, theirs)` for every thread `t`, where `theirs` holds the registers of
    /// thread `t ^ lane_mask` (same warp: `lane_mask < 32`) as they were before this call.
    fn exchange(&mut self, lane_mask: u32, f: impl FnMut(u32, &mut [K; RUN], &[K; RUN]));
    /// Block barrier: every thread's earlier shared-memory writes are visible to every thread
    /// after it.
    fn sync(&mut self);
    /// Asks the L2 cache for the line of device memory holding `at`, without waiting (on the
    /// GPU; nothing on the CPU). `at` need not be valid.
    #[inline(always)]
    fn prefetch(at: *const K) {
        let _ = at;
    }
    /// `x`, hidden from the optimizer (on the GPU): what is computed from it is computed anew
    /// rather than kept in registers since an earlier use (the window passes' store recomputes
    /// the load's positions instead of holding them across all the steps).
    #[inline(always)]
    fn opaque(x: u32) -> u32 {
        x
    }
}

/// The CPU's [`Team`]: every thread of a block, run one after another, with their registers
/// and a shared memory that panics on a race: a slot written in a phase (between two barriers)
/// by one thread and read or written in the same phase by another.
#[cfg(not(target_arch = "nvptx64"))]
pub struct CpuTeam<K, const RUN: usize> {
    runs: Vec<[K; RUN]>,
    shared: CpuShared<K>,
    /// The lane masks of the shuffles so far, in order.
    pub shuffles: Vec<u32>,
    /// Barriers so far.
    pub barriers: u32,
}

/// The shared memory of a [`CpuTeam`].
#[cfg(not(target_arch = "nvptx64"))]
pub struct CpuShared<K> {
    slots: Vec<K>,
    /// Phases start at 1; an access record of an earlier phase is stale.
    phase: u64,
    access: Vec<Access>,
}

/// Who touched a slot in the current phase.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Default)]
struct Access {
    phase: u64,
    thread: u32,
    written: bool,
    by_several: bool,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<K: crate::keys::KeyBits, const RUN: usize> CpuTeam<K, RUN> {
    /// `threads` threads and `slots` keys of shared memory.
    pub fn new(threads: u32, slots: u32) -> Self {
        CpuTeam {
            runs: vec![[K::INFINITY; RUN]; threads as usize],
            shared: CpuShared {
                slots: vec![K::INFINITY; slots as usize],
                phase: 1,
                access: vec![Access::default(); slots as usize],
            },
            shuffles: Vec::new(),
            barriers: 0,
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<K> CpuShared<K> {
    fn touch(&mut self, thread: u32, slot: u32, write: bool) {
        let phase = self.phase;
        let a = &mut self.access[slot as usize];
        if a.phase != phase {
            *a = Access {
                phase,
                thread,
                written: write,
                by_several: false,
            };
            return;
        }
        let race = if a.thread == thread {
            write && a.by_several
        } else {
            write || a.written
        };
        assert!(
            !race,
            "shared slot {slot}: thread {thread} and thread {} in one phase",
            a.thread
        );
        a.written |= write;
        a.by_several |= a.thread != thread;
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<K: Copy> SharedMem<K> for CpuShared<K> {
    unsafe fn read(&mut self, thread: u32, slot: u32) -> K {
        self.touch(thread, slot, false);
        self.slots[slot as usize]
    }
    unsafe fn write(&mut self, thread: u32, slot: u32, key: K) {
        self.touch(thread, slot, true);
        self.slots[slot as usize] = key;
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<K: crate::keys::KeyBits, const RUN: usize> Team<K, RUN> for CpuTeam<K, RUN> {
    type Shared = CpuShared<K>;

    fn each(&mut self, mut f: impl FnMut(u32, &mut [K; RUN], &mut CpuShared<K>)) {
        for (t, run) in self.runs.iter_mut().enumerate() {
            f(t as u32, run, &mut self.shared);
        }
    }

    fn exchange(&mut self, lane_mask: u32, mut f: impl FnMut(u32, &mut [K; RUN], &[K; RUN])) {
        assert!(
            lane_mask < 32 && self.runs.len() % 32 == 0,
            "shuffles stay in full warps"
        );
        self.shuffles.push(lane_mask);
        let before = self.runs.clone();
        for (t, run) in self.runs.iter_mut().enumerate() {
            f(t as u32, run, &before[t ^ lane_mask as usize]);
        }
    }

    fn sync(&mut self) {
        self.shared.phase += 1;
        self.barriers += 1;
    }
}

/// A small deterministic generator for the block tests' inputs (xorshift64).
#[cfg(test)]
pub(crate) fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// Checks a CPU emulation's key maps, applied on the first load and undone on the last store,
/// on `n` keys drawn from `next`: f32 keys descending (NaN, −0.0 and −∞ among them) against
/// `total_cmp`, then i64 keys ascending. `sort32` and `sort64` sort their keys with the given
/// map as both encode and decode.
#[cfg(test)]
pub(crate) fn check_key_maps(
    n: usize,
    next: &mut impl FnMut() -> u64,
    sort32: impl FnOnce(&mut [u32], u32),
    sort64: impl FnOnce(&mut [u64], u32),
) {
    use crate::keys::{KIND_FLOAT, KIND_SIGNED, key_map};
    let floats: Vec<f32> = (0..n)
        .map(|i| match i % 97 {
            0 => f32::NAN,
            1 => -0.0,
            2 => f32::NEG_INFINITY,
            _ => (next() as i32) as f32 / 1e3,
        })
        .collect();
    let mut bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
    sort32(&mut bits, key_map(KIND_FLOAT, true));
    let mut expected = floats.clone();
    expected.sort_by(|a, b| b.total_cmp(a));
    let expected: Vec<u32> = expected.iter().map(|f| f.to_bits()).collect();
    assert_eq!(bits, expected, "f32 descending, n = {n}");

    let ints: Vec<i64> = (0..n).map(|_| next() as i64 >> 40).collect();
    let mut bits: Vec<u64> = ints.iter().map(|&i| i as u64).collect();
    sort64(&mut bits, key_map(KIND_SIGNED, false));
    let mut expected = ints.clone();
    expected.sort_unstable();
    assert_eq!(bits, expected.iter().map(|&i| i as u64).collect::<Vec<_>>());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "in one phase")]
    fn the_cpu_team_catches_a_missing_barrier() {
        let mut team = CpuTeam::<u32, 4>::new(32, 64);
        team.each(|t, _, shared| unsafe { shared.write(t, t, t) });
        // No team.sync() here: thread 1 reads what thread 0 wrote in the same phase.
        team.each(|t, run, shared| run[0] = unsafe { shared.read(t, t ^ 1) });
    }

    #[test]
    fn the_cpu_team_allows_reads_after_a_barrier() {
        let mut team = CpuTeam::<u32, 4>::new(32, 64);
        team.each(|t, _, shared| unsafe { shared.write(t, t, t) });
        team.sync();
        team.each(|t, run, shared| run[0] = unsafe { shared.read(t, t ^ 1) });
        team.each(|t, run, _| assert_eq!(run[0], t ^ 1));
        assert_eq!(team.barriers, 1);
    }
}
