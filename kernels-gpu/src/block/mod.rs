//! What one block does. The merge sort's block code is generic over a [`Block`], the small
//! sort's and the window passes' ([`window`], built from the small sort's engine) over a
//! [`small::Team`], the tiny sort's over a [`tiny::TinyTeam`]; all build for the host too, where
//! the CPU tests run every thread's work on one CPU thread.
pub mod merge;
pub mod network_merge;
#[cfg(target_arch = "nvptx64")]
pub mod radix;
pub mod small;
pub mod tiny;
pub mod window;

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
/// reads the same DRAM bytes as one per 32-byte sector, with fewer instructions: the 2^28 u32
/// merge sort took 10.89 ms against 11.08 (H200; docs/decisions.md, "L2 prefetch").
pub const L2_LINE_BYTES: usize = 128;

/// The block of the CPU tests: one thread that runs every unit; barriers are no-ops; the
/// addresses it is asked to prefetch are recorded.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Default)]
pub struct OneThread {
    /// The addresses of the prefetches, in order.
    pub prefetched: core::cell::RefCell<Vec<usize>>,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Block for OneThread {
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
