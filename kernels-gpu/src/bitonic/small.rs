//! Index math of the one-launch bitonic sort of small inputs (at most
//! 2^[`SMALL_MAX_LOG2`](crate::tuning::SMALL_MAX_LOG2) keys): which keys each block holds in
//! each *window* of the sort, which steps it runs there, and the grid barrier's counter. Pure
//! functions, shared by the kernel, the host's grid math and the CPU tests.
//!
//! # The network
//!
//! The classic bitonic network on 2^`log2` positions (n rounded up; positions ≥ n hold +∞):
//! stage k (1 ..= log2) has steps on bits k − 1, …, 0, a step on bit j comparing positions
//! `i` and `i | 2^j`; in stage k the comparator sorts ascending if bit k of `i` is 0 and
//! descending if it is 1 (the last stage: ascending). Every step flips one index bit, which is
//! what lets a block hold any set of keys whose indices agree on some *fixed* bits.
//!
//! Descending comparators are avoided by storing, during stage k, every key whose index has
//! bit k set as its complement ([`complemented`]): an ascending comparator on complements is a
//! descending one on the keys. Between stages some keys are complemented again
//! ([`flips`]): an xor per key, not a select per comparator.
//!
//! # Windows
//!
//! The kernel runs 2^s blocks of 2^L keys (L = `tile_log2`, s = `log2 − L`). In a window each
//! block holds the keys whose indices have given values (the block's index bits) at the
//! window's s fixed bits, runs every step of the window whose bit is free, and writes its keys
//! back; a grid barrier separates windows. Window 0 fixes the top s bits: each block sorts a
//! tile (stages 1 ..= L). Every later stage k spans two windows: its steps on bits
//! k − 1 ..= y_k in window k − L, the rest (y_k − 1 ..= 0) in the next one, together with the
//! next stage's first steps. Window w ≥ 1 (k = L + w) fixes the w bits just below y_k and every
//! bit ≥ k, so a sort of 2^log2 keys takes s + 2 windows (s + 1 grid barriers), where a
//! launch per stage's global steps and per tile merge would take about 2 per stage.
//!
//! The splits are y_k = slack + d(d + 1)/2 (d = k − L ≥ 1, slack = L − s(s + 1)/2 ≥ 0): the
//! slack goes to the first window, so the later ones fix higher bits (longer contiguous runs
//! per block: coalesced loads). Inside a block, free bits keep their order, so a block's
//! *local* index (its free bits, in order) compares like the global index.

use crate::args::Addr;
use crate::bitonic::ceil_log2;
use crate::tuning::{SMALL_MAX_LOG2, SMALL_MIN_LOG2, SMALL_RUN_LOG2, SMALL_TILE_LOG2};

// Every length up to 2^SMALL_MAX_LOG2 has a plan of one window per stage above the block.
const _: () = assert!(SmallPlan::new(SMALL_MAX_LOG2, SMALL_TILE_LOG2).is_some());

crate::args::kernel_args! { $
    /// The argument of the tiny sorts (`bitonic_tiny_*`): one block sorts at most
    /// `tiny_sort_max_keys` keys in place, each thread holding `TINY_RUN` of them.
    pub struct TinyArgs, entry tiny_entry {
        /// The `n` keys, read and sorted in place.
        pub keys: Addr,
        /// Keys in all (2 ..= `tiny_sort_max_keys`).
        pub n: u32,
        /// The key map applied to each key as it is loaded.
        pub encode: u32,
        /// The key map undone on each key as it is stored.
        pub decode: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the one-launch small sorts (`bitonic_small_*`): the windows of
    /// [`SmallPlan::for_len`]`(n)`, the blocks meeting at a grid barrier between each two.
    pub struct SmallArgs, entry small_entry {
        /// The `n` keys: read by the first window, sorted in place by the last.
        pub keys: Addr,
        /// Room for 2^[`SmallPlan::log2`] keys, through which the blocks exchange keys between
        /// windows (unused by a single block); read and written by this launch alone.
        pub scratch: Addr,
        /// The grid barrier's arrival counter (a `u32`), a multiple of [`BARRIER_STRIDE`]
        /// between launches; used by no concurrent launch.
        pub barrier: Addr,
        /// Keys in all (2 ..= 2^`SMALL_MAX_LOG2`).
        pub n: u32,
        /// The key map applied to each key as the first window loads it.
        pub encode: u32,
        /// The key map undone on each key as the last window stores it.
        pub decode: u32,
    }
}

/// Most blocks a barrier counter may serve, and what every barrier adds to it: each of the
/// `blocks` blocks adds `BARRIER_STRIDE / blocks`, so the counter is a multiple of the stride
/// whenever no barrier is under way, whatever the block counts of earlier launches were.
pub const BARRIER_STRIDE: u32 = 1 << 10;

/// What a block adds to the barrier counter on arriving.
///
/// ```
/// use kernels_gpu::bitonic::small::{BARRIER_STRIDE, barrier_increment};
/// assert_eq!(16 * barrier_increment(16), BARRIER_STRIDE);
/// ```
pub const fn barrier_increment(blocks: u32) -> u32 {
    BARRIER_STRIDE / blocks
}

/// The counter value that releases a barrier, given the value a block's arrival found (`old`):
/// the next multiple of [`BARRIER_STRIDE`], modulo 2^32.
///
/// ```
/// use kernels_gpu::bitonic::small::{BARRIER_STRIDE, barrier_target};
/// assert_eq!(barrier_target(0), BARRIER_STRIDE);
/// assert_eq!(barrier_target(3 * BARRIER_STRIDE + 5), 4 * BARRIER_STRIDE);
/// assert_eq!(barrier_target(u32::MAX), 0); // wraps
/// ```
pub const fn barrier_target(old: u32) -> u32 {
    (old & !(BARRIER_STRIDE - 1)).wrapping_add(BARRIER_STRIDE)
}

/// Whether the counter, now `now`, has reached `target` (compared modulo 2^32: the counter
/// never runs more than 2^31 ahead of a waiting block).
///
/// ```
/// use kernels_gpu::bitonic::small::barrier_passed;
/// assert!(barrier_passed(1024, 1024) && !barrier_passed(1023, 1024));
/// assert!(barrier_passed(0, u32::MAX - 1023)); // across the wrap
/// ```
pub const fn barrier_passed(now: u32, target: u32) -> bool {
    now.wrapping_sub(target) as i32 >= 0
}

/// Whether the key at global index `g` is stored complemented during stage `stage` of a
/// network of 2^`log2` positions: bit `stage` of `g`, for 1 ≤ stage < log2 (stage 0, before
/// the sort, and the last stage store keys as they are).
///
/// ```
/// use kernels_gpu::bitonic::small::complemented;
/// assert!(complemented(3, 0b1000, 10) && !complemented(3, 0b0111, 10));
/// assert!(!complemented(10, 0b1111111111, 10)); // the last stage sorts ascending
/// ```
pub const fn complemented(stage: u32, g: u32, log2: u32) -> bool {
    stage >= 1 && stage < log2 && (g >> stage) & 1 == 1
}

/// Whether the key at `g` is complemented when going from stage `from`'s storage to stage
/// `to`'s.
///
/// ```
/// use kernels_gpu::bitonic::small::flips;
/// assert!(flips(3, 4, 0b01000, 10)); // bit 3 set, bit 4 clear
/// assert!(!flips(3, 4, 0b11000, 10));
/// ```
pub const fn flips(from: u32, to: u32, g: u32, log2: u32) -> bool {
    complemented(from, g, log2) != complemented(to, g, log2)
}

/// The index bits (at most two) that decide whether a key is complemented when going from stage
/// `from`'s storage to stage `to`'s: [`flips`] is the parity of `g & conversion_mask(..)`, one
/// `and` and a population count per key with the mask computed once.
///
/// ```
/// use kernels_gpu::bitonic::small::{conversion_mask, flips};
/// let mask = conversion_mask(3, 4, 10);
/// assert_eq!(mask, 0b11000);
/// assert!((0..1024u32).all(|g| ((g & mask).count_ones() & 1 == 1) == flips(3, 4, g, 10)));
/// assert_eq!(conversion_mask(0, 0, 10), 0); // no conversion
/// ```
pub const fn conversion_mask(from: u32, to: u32, log2: u32) -> u32 {
    const fn bit(stage: u32, log2: u32) -> u32 {
        if stage >= 1 && stage < log2 {
            1 << stage
        } else {
            0
        }
    }
    bit(from, log2) ^ bit(to, log2)
}

/// The shape of a small sort: a network of 2^`log2` positions on blocks of 2^`tile_log2` keys.
///
/// # Examples
///
/// ```
/// use kernels_gpu::bitonic::small::SmallPlan;
///
/// let plan = SmallPlan::for_len(60_000);
/// assert_eq!((plan.log2, plan.tile_log2), (16, 12));
/// assert_eq!((plan.blocks(), plan.threads(), plan.windows()), (16, 256, 6));
/// // 1000 keys: one block of 64 threads sorts 1024 positions, in one window.
/// let plan = SmallPlan::for_len(1000);
/// assert_eq!((plan.blocks(), plan.threads(), plan.windows()), (1, 64, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmallPlan {
    /// log2 of the network's positions: n rounded up to a power of two, at least
    /// 2^[`SMALL_MIN_LOG2`].
    pub log2: u32,
    /// log2 of the keys per block (L).
    pub tile_log2: u32,
}

/// A window as a block sees it (the small sort's counterpart of
/// [`crate::bitonic::window::BlockWindow`]): which keys it holds and which steps it runs. Bit positions
/// named `local` count the block's free bits only; steps are listed from the highest bit down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockWindow {
    /// log2 of the network's positions.
    pub log2: u32,
    /// The fixed bits are `lo_count` bits from `lo_at` up, and every bit from `hi_at` up to
    /// `log2`; a block's index gives their values, low bits first.
    pub lo_at: u32,
    /// See `lo_at`.
    pub lo_count: u32,
    /// See `lo_at`.
    pub hi_at: u32,
    /// Window 0: sort the block's keys (stages 1 ..= tile_log2).
    pub sort: bool,
    /// Keys are loaded stored as for stage `load_from` and converted to stage `load_to`'s
    /// storage (equal: no conversion).
    pub load_from: u32,
    /// See `load_from`.
    pub load_to: u32,
    /// A stage begun in the previous window (0: none); its steps on local bits
    /// `tail_top ..= 0` come first.
    pub tail_stage: u32,
    /// See `tail_stage`.
    pub tail_top: u32,
    /// The stage that begins here (0: none): its steps on local bits
    /// `tile_log2 − 1 ..= head_bottom` come last.
    pub head_stage: u32,
    /// See `head_stage`.
    pub head_bottom: u32,
    /// Whether the keys are converted to `head_stage`'s storage between the tail and the head
    /// (otherwise the load did it, or there is no head).
    pub convert_head: bool,
}

impl SmallPlan {
    /// The plan for `n` keys with blocks of at most 2^[`SMALL_TILE_LOG2`] keys.
    ///
    /// # Panics
    /// (At compile time, through `tuning`) if the tuning constants admit a length with no plan.
    pub const fn for_len(n: u64) -> SmallPlan {
        let mut log2 = ceil_log2(n);
        if log2 < SMALL_MIN_LOG2 {
            log2 = SMALL_MIN_LOG2;
        }
        let tile_log2 = if log2 < SMALL_TILE_LOG2 {
            log2
        } else {
            SMALL_TILE_LOG2
        };
        match SmallPlan::new(log2, tile_log2) {
            Some(plan) => plan,
            None => panic!("no small-sort plan: see tuning::SMALL_TILE_LOG2"),
        }
    }

    /// The plan for 2^`log2` positions on blocks of 2^`tile_log2` keys, if there is one: blocks
    /// of at least one warp's runs and at most [`SMALL_RUN_LOG2`] + 9 bits, and at most 31 bits
    /// in all, with the s = log2 − tile_log2 fixed bits fitting every window (tile_log2 ≥
    /// s(s + 1)/2).
    ///
    /// ```
    /// use kernels_gpu::bitonic::small::SmallPlan;
    /// assert!(SmallPlan::new(16, 12).is_some()); // 16 blocks: 4 ≤ 12 − 10
    /// assert!(SmallPlan::new(16, 11).is_none()); // 32 blocks: 5 · 6 / 2 > 11
    /// assert!(SmallPlan::new(17, 13).is_some());
    /// ```
    pub const fn new(log2: u32, tile_log2: u32) -> Option<SmallPlan> {
        if tile_log2 < SMALL_RUN_LOG2 + 5 || tile_log2 > SMALL_RUN_LOG2 + 9 || log2 > 31 {
            return None;
        }
        if log2 < tile_log2 {
            return None;
        }
        let s = log2 - tile_log2;
        if s * (s + 1) / 2 > tile_log2 {
            return None;
        }
        Some(SmallPlan { log2, tile_log2 })
    }

    /// log2 of the blocks (s).
    pub const fn block_log2(&self) -> u32 {
        self.log2 - self.tile_log2
    }

    /// Blocks of the launch.
    pub const fn blocks(&self) -> u32 {
        1 << self.block_log2()
    }

    /// Threads per block: 2^tile_log2 / [`SMALL_RUN`](crate::tuning::SMALL_RUN).
    pub const fn threads(&self) -> u32 {
        1 << (self.tile_log2 - SMALL_RUN_LOG2)
    }

    /// Windows: 1 for a single block, else s + 2; a grid barrier between each two.
    pub const fn windows(&self) -> u32 {
        let s = self.block_log2();
        if s == 0 { 1 } else { s + 2 }
    }

    /// y_k, the lowest bit of stage k's steps in the window where stage k begins (0 for
    /// stage tile_log2, which window 0 finishes).
    const fn split(&self, stage: u32) -> u32 {
        let s = self.block_log2();
        let d = stage - self.tile_log2;
        if d == 0 {
            0
        } else {
            self.tile_log2 - s * (s + 1) / 2 + d * (d + 1) / 2
        }
    }

    /// Window `w` (< [`SmallPlan::windows`]).
    ///
    /// ```
    /// use kernels_gpu::bitonic::small::SmallPlan;
    ///
    /// let plan = SmallPlan::new(16, 12).unwrap();
    /// // Window 3 (stage 15 begins): stage 14's steps on bits 4 ..= 0, then stage 15's on
    /// // bits 14 ..= 8; fixed: bits 5, 6, 7 and 15.
    /// let w = plan.window(3);
    /// assert_eq!((w.lo_at, w.lo_count, w.hi_at), (5, 3, 15));
    /// assert_eq!((w.tail_stage, w.tail_top), (14, 4));
    /// // Global bits 14 ..= 8 are local bits 11 ..= 5.
    /// assert_eq!((w.head_stage, w.head_bottom, w.convert_head), (15, 5, true));
    /// assert_eq!(w.global(0b1000_0000_0001, 3), (1 << 14) | (3 << 5) | 1);
    /// ```
    pub const fn window(&self, w: u32) -> BlockWindow {
        let (log2, tile) = (self.log2, self.tile_log2);
        if w == 0 {
            return BlockWindow {
                log2,
                lo_at: 0,
                lo_count: 0,
                hi_at: tile,
                sort: true,
                load_from: 0,
                load_to: SMALL_RUN_LOG2,
                tail_stage: 0,
                tail_top: 0,
                head_stage: 0,
                head_bottom: 0,
                convert_head: false,
            };
        }
        let k = tile + w;
        let (tail_stage, tail_top) = if w >= 2 {
            (k - 1, self.split(k - 1) - 1)
        } else {
            (0, 0)
        };
        let (lo_at, lo_count, hi_at, head_stage, head_bottom) = if k <= log2 {
            let lo_at = self.split(k) - w;
            (lo_at, w, k, k, lo_at)
        } else {
            (0, 0, tile, 0, 0)
        };
        let (load_from, load_to) = if w == 1 { (tile, tile + 1) } else { (0, 0) };
        BlockWindow {
            log2,
            lo_at,
            lo_count,
            hi_at,
            sort: false,
            load_from,
            load_to,
            tail_stage,
            tail_top,
            head_stage,
            head_bottom,
            convert_head: head_stage != 0 && w >= 2,
        }
    }
}

impl BlockWindow {
    /// Global index of local index `local` in block `block`: the local bits spread over the
    /// free bits in order, the block's bits over the fixed ones.
    #[inline(always)]
    pub const fn global(&self, local: u32, block: u32) -> u32 {
        let low = local & ((1 << self.lo_at) - 1);
        let block_low = block & ((1 << self.lo_count) - 1);
        let spread = ((local >> self.lo_at) << (self.lo_at + self.lo_count))
            | (block_low << self.lo_at)
            | low;
        spread | ((block >> self.lo_count) << self.hi_at)
    }

    /// Global index of local index `local` in block 0 (its spread alone).
    /// `global(a | b, block) == global(a, block) | spread(b)` for disjoint `a` and `b`: the
    /// kernel spreads each register bit once and adds the spreads up.
    #[inline(always)]
    pub const fn spread(&self, local: u32) -> u32 {
        self.global(local, 0)
    }

    /// Global bit of local bit `q`.
    pub const fn global_bit(&self, q: u32) -> u32 {
        if q < self.lo_at { q } else { q + self.lo_count }
    }

    /// Whether global bit `j` is fixed.
    pub const fn fixed(&self, j: u32) -> bool {
        (j >= self.lo_at && j < self.lo_at + self.lo_count) || (j >= self.hi_at && j < self.log2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitonic::compare_exchange;
    use proptest::prelude::*;

    /// Every feasible plan with blocks of 9 ..= 13 bits and up to 20 bits in all.
    fn plans() -> Vec<SmallPlan> {
        (9..=13)
            .flat_map(|tile| (tile..=20).filter_map(move |log2| SmallPlan::new(log2, tile)))
            .collect()
    }

    /// (stage, global bit) of every step window `w` runs, in order.
    fn window_steps(plan: &SmallPlan, w: u32) -> Vec<(u32, u32)> {
        let win = plan.window(w);
        let mut steps = Vec::new();
        if win.sort {
            for k in 1..=plan.tile_log2 {
                steps.extend((0..k).rev().map(|j| (k, j)));
            }
        }
        if win.tail_stage != 0 {
            let k = win.tail_stage;
            steps.extend((0..=win.tail_top).rev().map(|q| (k, win.global_bit(q))));
        }
        if win.head_stage != 0 {
            let k = win.head_stage;
            let bits = win.head_bottom..plan.tile_log2;
            steps.extend(bits.rev().map(|q| (k, win.global_bit(q))));
        }
        steps
    }

    #[test]
    fn windows_run_the_whole_network_in_order_on_free_bits() {
        for plan in plans() {
            let mut all = Vec::new();
            for w in 0..plan.windows() {
                let win = plan.window(w);
                let fixed = (0..plan.log2).filter(|&j| win.fixed(j)).count() as u32;
                assert_eq!(fixed, plan.block_log2(), "{plan:?} window {w}");
                for (k, j) in window_steps(&plan, w) {
                    assert!(!win.fixed(j), "{plan:?} window {w}: step on fixed bit {j}");
                    all.push((k, j));
                }
            }
            let network: Vec<(u32, u32)> = (1..=plan.log2)
                .flat_map(|k| (0..k).rev().map(move |j| (k, j)))
                .collect();
            assert_eq!(all, network, "{plan:?}");
        }
    }

    #[test]
    fn every_window_partitions_the_positions_among_the_blocks() {
        for plan in plans().into_iter().filter(|p| p.log2 <= 16) {
            for w in 0..plan.windows() {
                let win = plan.window(w);
                let mut seen = vec![false; 1 << plan.log2];
                for block in 0..plan.blocks() {
                    let mut last = None;
                    for local in 0..1u32 << plan.tile_log2 {
                        let g = win.global(local, block);
                        assert!(!seen[g as usize], "{plan:?} window {w}: {g} twice");
                        seen[g as usize] = true;
                        // Local order is global order.
                        assert!(last < Some(g));
                        last = Some(g);
                        // Local bit q is global bit global_bit(q).
                        for q in 0..plan.tile_log2 {
                            assert_eq!((local >> q) & 1, (g >> win.global_bit(q)) & 1);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_spread_of_disjoint_local_bits_adds_up() {
        for plan in plans() {
            for w in 0..plan.windows() {
                let win = plan.window(w);
                let tile = 1u32 << plan.tile_log2;
                for block in [0, plan.blocks() - 1, plan.blocks() / 3] {
                    for local in (0..tile).step_by(37) {
                        let (a, b) = (local & 0b1010_1010_1010, local & !0b1010_1010_1010);
                        let g = win.global(a, block) | win.spread(b);
                        assert_eq!(win.global(local, block), g);
                        assert_eq!(win.global(a, block) + win.spread(b), g, "disjoint bits");
                        for (from, to) in [(win.load_from, win.load_to), (3, 4), (0, 4)] {
                            let m = conversion_mask(from, to, plan.log2);
                            assert_eq!(
                                (g & m).count_ones() & 1 == 1,
                                flips(from, to, g, plan.log2)
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn conversions_inside_a_window_are_the_same_for_a_whole_run() {
        // The kernel converts a thread's run of SMALL_RUN consecutive local keys with one mask,
        // computed from the run's first key: stage k's conversion depends on global bits
        // k − 1 and k only, which must not vary inside a run.
        let run = 1u32 << SMALL_RUN_LOG2;
        for plan in plans().into_iter().filter(|p| p.log2 <= 16) {
            for w in 0..plan.windows() {
                let win = plan.window(w);
                let stages: Vec<u32> = if win.sort {
                    (SMALL_RUN_LOG2 + 1..=plan.tile_log2).collect()
                } else if win.convert_head {
                    vec![win.head_stage]
                } else {
                    vec![]
                };
                for block in 0..plan.blocks() {
                    for first in (0..1u32 << plan.tile_log2).step_by(run as usize) {
                        for &k in &stages {
                            let f = |l| flips(k - 1, k, win.global(l, block), plan.log2);
                            let mask = f(first);
                            assert!(
                                (first..first + run).all(|l| f(l) == mask),
                                "{plan:?} {w} {k}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The plan's network, run on the CPU with the complement trick and no block structure:
    /// windows in order, each window's steps per block on gathered keys.
    fn emulate(keys: &[u32], plan: SmallPlan) -> Vec<u32> {
        let size = 1usize << plan.log2;
        let log2 = plan.log2;
        let mut all: Vec<u32> = (0..size)
            .map(|g| keys.get(g).copied().unwrap_or(u32::MAX))
            .collect();
        for w in 0..plan.windows() {
            let win = plan.window(w);
            for block in 0..plan.blocks() {
                let tile = 1u32 << plan.tile_log2;
                let at: Vec<u32> = (0..tile).map(|l| win.global(l, block)).collect();
                let mut local: Vec<u32> = at
                    .iter()
                    .map(|&g| {
                        all[g as usize]
                            ^ u32::from(flips(win.load_from, win.load_to, g, log2)).wrapping_neg()
                    })
                    .collect();
                let convert = |local: &mut Vec<u32>, k: u32| {
                    for (key, &g) in local.iter_mut().zip(&at) {
                        *key ^= u32::from(flips(k - 1, k, g, log2)).wrapping_neg();
                    }
                };
                let step = |local: &mut Vec<u32>, q: u32| {
                    for i in 0..tile as usize {
                        if i & (1 << q) == 0 {
                            compare_exchange(local, i, i | (1 << q));
                        }
                    }
                };
                if win.sort {
                    for run in local.chunks_mut(1 << SMALL_RUN_LOG2) {
                        run.sort_unstable();
                    }
                    for k in SMALL_RUN_LOG2 + 1..=plan.tile_log2 {
                        convert(&mut local, k);
                        (0..k).rev().for_each(|q| step(&mut local, q));
                    }
                }
                if win.tail_stage != 0 {
                    (0..=win.tail_top).rev().for_each(|q| step(&mut local, q));
                }
                if win.head_stage != 0 {
                    if win.convert_head {
                        convert(&mut local, win.head_stage);
                    }
                    (win.head_bottom..plan.tile_log2)
                        .rev()
                        .for_each(|q| step(&mut local, q));
                }
                for (&g, &key) in at.iter().zip(&local) {
                    all[g as usize] = key;
                }
            }
        }
        all.truncate(keys.len());
        all
    }

    #[test]
    fn plans_for_the_tuned_lengths() {
        assert_eq!(
            SmallPlan::for_len(0),
            SmallPlan {
                log2: 9,
                tile_log2: 9
            }
        );
        assert_eq!(
            SmallPlan::for_len(513),
            SmallPlan {
                log2: 10,
                tile_log2: 10
            }
        );
        let p = SmallPlan::for_len(1 << 16);
        assert_eq!((p.blocks(), p.windows()), (16, 6));
        // 2^16 keys: the first exchange fixes bit 2 (and 13..15), the later ones higher bits.
        let lows: Vec<u32> = (1..p.windows()).map(|w| p.window(w).lo_at).collect();
        assert_eq!(lows, [2, 3, 5, 8, 0]);
    }

    #[test]
    fn barrier_counter_releases_each_barrier_once_all_blocks_arrive() {
        // Blocks arrive in any order at consecutive barriers; the counter starts anywhere that
        // is a multiple of the stride, including just below the wrap.
        for start in [0, 5 * BARRIER_STRIDE, 0u32.wrapping_sub(2 * BARRIER_STRIDE)] {
            for blocks in [2u32, 4, 16, 64] {
                let mut counter = start;
                for _barrier in 0..5 {
                    let mut targets = Vec::new();
                    for b in 0..blocks {
                        let old = counter;
                        counter = counter.wrapping_add(barrier_increment(blocks));
                        targets.push(barrier_target(old));
                        if b + 1 < blocks {
                            assert!(!barrier_passed(counter, targets[0]));
                        }
                    }
                    assert!(
                        targets
                            .iter()
                            .all(|&t| t == targets[0] && barrier_passed(counter, t))
                    );
                    assert_eq!(counter % BARRIER_STRIDE, 0);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn emulated_plan_sorts(len in 0usize..5000, tile in 9u32..12, seed: u64, few: bool) {
            let log2 = ceil_log2(len as u64).max(9);
            let tile = tile.min(log2);
            let Some(plan) = SmallPlan::new(log2, tile) else { return Ok(()) };
            let mut x = seed | 1;
            let keys: Vec<u32> = (0..len).map(|_| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                if few { (x % 3) as u32 * (u32::MAX / 2) } else { x as u32 }
            }).collect();
            let mut expected = keys.clone();
            expected.sort_unstable();
            prop_assert_eq!(emulate(&keys, plan), expected);
        }
    }
}
