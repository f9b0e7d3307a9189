//! Index math of the bitonic sort of large inputs in *window passes*: which keys each block of
//! a launch holds, which of the network's steps the launch runs, and how a block lays its keys
//! out to run them. Pure functions, shared by the kernels, the host's launches and the CPU
//! tests.
//!
//! # The network
//!
//! The mirrored bitonic network of [`crate::bitonic`] on 2^`log2` positions (n rounded up):
//! stage k (1 ..= log2) first compares `i` with `i ^ (2^k − 1)` (its *flip*), then `i` with
//! `i ^ 2^b` for b = k − 2, …, 0; every comparator puts the smaller key at the lower index. So
//! positions ≥ n behave as +∞ that never move: loads past n give +∞ in registers, stores past
//! n are dropped, and n needs no padding in memory.
//!
//! # Windows
//!
//! A *window pass* is one launch in which every block holds 2^L keys (L = `tile_log2`) whose
//! global indices agree on the window's *fixed* bits and range over its L *free* bits, runs a
//! consecutive run of the network's steps whose bits are all free, and stores the keys back
//! where they came from (in place). The free bits are two runs, `[0, low)` and
//! `[high, high + L − low)`, with `low ≥ passengers` (5 on the GPU: 32 consecutive keys are
//! the lanes of a warp, so loads and stores are coalesced); a block's index gives the fixed
//! bits, low ones first.
//!
//! Window 0 is the tile sort: free bits `[0, L)`, stages 1 ..= L (each tile sorted ascending).
//! Every later window takes, greedily, as many of the following steps as keep
//! |{0 .. passengers − 1} ∪ {bits of its steps}| ≤ L. A stage above the tile has more steps
//! than a window holds, so a window is a suffix of stage s (possibly starting at its flip) and,
//! if that suffix reaches bit 0, a prefix of stage s + 1, starting with its flip: at most two
//! [`Segment`]s and one flip.
//!
//! ```
//! use kernels_gpu::bitonic::window::windows;
//!
//! // 2^25 keys, tiles of 2^13: 23 launches (per-stage global passes and tile merges take 40:
//! // docs/design.md).
//! assert_eq!(windows(1 << 25, 13, 5).count(), 23);
//! let w: Vec<_> = windows(1 << 25, 13, 5).collect();
//! assert!(w[0].sort);
//! // Window 1: stage 14's steps on bits 13 ..= 6, the first its flip.
//! assert_eq!((w[1].flip, w[1].segments[0].unwrap().bottom), (14, 6));
//! // Window 2: stage 14's bits 5 ..= 0, then stage 15's flip and bits 13 ..= 8.
//! let [tail, head] = w[2].segments.map(Option::unwrap);
//! assert_eq!((tail.stage, tail.top, head.stage, head.top, head.bottom), (14, 5, 15, 14, 8));
//! assert_eq!((w[2].low, w[2].high), (6, 8)); // free bits [0, 6) ∪ [8, 15)
//! ```
//!
//! # The flip inside a block
//!
//! If the window holds stage h's flip (bit h − 1 free), a block holds a set of keys and its
//! mirror image: local index l maps to `i = direct(l)` (free bits placed, fixed bits from the
//! block), and if bit h − 1 of i is set, `i ^= 2^(h−1) − 1` (every lower bit complemented, free
//! and fixed). In these local coordinates the flip is a plain step on the local bit of h − 1,
//! and every other step of the window (stage h − 1's tail and stage h's later steps) is a plain
//! step on its local bit, ascending in the *lower group* (local bit of h − 1 clear) and
//! descending in the *upper group*. The block code stores the upper group's keys complemented
//! (`KeyBits::complement`) from load to store, so that those steps are ascending
//! compare-exchanges everywhere; the flip, which pairs a lower key `x` with a complemented
//! upper key `!y`, sets each to `min(mine, !theirs)`: `min(x, y)` below and `!max(x, y)` above
//! (a plain compare-exchange would be wrong there).
//!
//! # The block's layouts ([`Program`])
//!
//! The block code ([`crate::bitonic::block::window`]) keeps 16 keys per thread in registers in one of
//! three layouts of the local index, and switches layout through shared memory (one barrier):
//! - *columns* (register r of thread t is local `r·T + t`): registers hold the top 4 local
//!   bits, lanes bits 0..5;
//! - *middle* (`(t / 32)·512 + r·32 + t % 32`): registers hold local bits 5..9, lanes 0..5;
//! - *runs* (`t·16 + r`): registers hold local bits 0..4, lanes 4..9.
//!
//! A step on a register bit costs 16 min/max instructions per thread, one on a lane bit 48
//! (16 shuffles and 32 min/max), a layout switch about 50. Columns and middle load and store
//! coalesced (a warp's lanes are 32 consecutive keys). Local bits 0 .. passengers hold global
//! bits 0 .. passengers; the window's other free bits may go to any local bit, and
//! [`WindowPass::new`] chooses each step's layout and local bit (a small dynamic program over
//! the steps) for the fewest estimated instructions: typically load in columns, register steps
//! there, then the low bits in runs (register steps on bits 0..4, one lane step on bit 4), then
//! register steps in middle, store from there.

use crate::args::Addr;
use crate::bitonic::ceil_log2;
use crate::tuning::SMALL_RUN_LOG2;

/// Most local bits (L) of a window the index math handles.
pub const MAX_WINDOW_LOG2: u32 = 15;

/// [`Program::flip_local`] of a window with no flip.
pub const NO_FLIP: u32 = 15;

/// [`BlockWindow::load_flip`] and `store_flip`: no flip.
pub const FLIP_NONE: u32 = 31;
/// [`BlockWindow::load_flip`] and `store_flip`: the upper group is registers 8..16.
pub const FLIP_REGISTERS: u32 = 16;

/// Local bits whose steps are register steps in runs (registers 0 .. 16).
const RUN_BITS: u32 = SMALL_RUN_LOG2;
/// Local bits below this one are registers or lanes in runs (RUN_BITS + 5 lane bits); local
/// bits RUN_BITS + 1 .. RUNS_TOP are the middle layout's registers.
const RUNS_TOP: u32 = RUN_BITS + 5;

/// [`Program::phases`] layout: columns (registers hold the top 4 local bits).
pub const COLUMNS: u32 = 0;
/// [`Program::phases`] layout: middle (registers hold local bits 5..9).
pub const MIDDLE: u32 = 1;
/// [`Program::phases`] layout: runs (registers hold local bits 0..4).
pub const RUNS: u32 = 2;

/// Most layout phases of a window's program.
pub const MAX_PHASES: usize = 5;

/// The programs (`plan`, `phases`, `steps` of [`BlockWindow`]) of every window after the tile sort
/// that [`windows`]`(n, 13, 5)` and the host-slice pipeline's [`windows_from`] make for 2^13 < n ≤
/// 2^32 (tested: `programs_cover_every_window`). Each has a window kernel of its own for 4-byte and
/// 8-byte keys (`bitonic_window_u32_p{i}`, `bitonic_window_u64_p{i}`), in which the program is a
/// constant, so that its layouts, steps and switches are straight-line code with no dispatch
/// (docs/design.md, "Window programs"); other windows run on the kernel that reads the program from
/// its arguments.
pub const PROGRAMS: [(u32, u32, u64); 17] = [
    (0x1ff88f, 0x114, 0x9abc5678),
    (0x88088, 0x114, 0x9abc5678),
    (0x88098, 0x113951, 0x9abc678012345),
    (0x88098, 0x4993, 0x9abc801234567),
    (0x88098, 0x112952, 0x9abc780123456),
    (0x10409c, 0x4954, 0x9abc012345678),
    (0x10409c, 0x650d4, 0xc012349ab5678),
    (0x10409c, 0xa5094, 0xbc012349a5678),
    (0x104228, 0x13984, 0x6780123459abc),
    (0x1ff89f, 0x25114, 0x12349abc5678),
    (0x1ff89f, 0x951, 0x12348),
    (0x1ff89f, 0x953, 0x1234678),
    (0x1ff89f, 0x25094, 0x1234bc5678),
    (0x1ff82f, 0x984, 0x123489abc),
    (0x1ff89f, 0x952, 0x123478),
    (0x1ff89f, 0x954, 0x12345678),
    (0x1ff89f, 0x250d4, 0x1234abc5678),
];

/// Estimated SASS instructions per thread (4-byte keys; ptxas 12.9, sm_90) that the placement
/// minimizes: a register step (16 min/max and its share of the dispatch), a lane step (16
/// shuffles, 32 min/max, a few more), a layout switch (16 stores and 16 loads to shared memory,
/// a barrier, the switch's dispatch).
const REGISTER_STEP: u32 = 17;
/// See [`REGISTER_STEP`].
const LANE_STEP: u32 = 51;
/// See [`REGISTER_STEP`].
const SWITCH: u32 = 61;

/// Steps of one stage on consecutive bits `top ..= bottom`, highest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The stage (its blocks hold 2^stage keys).
    pub stage: u32,
    /// The first step's bit; `top == stage − 1` is the stage's flip.
    pub top: u32,
    /// The last step's bit.
    pub bottom: u32,
}

/// How a block of a window lays out and runs its steps: each step's local bit, and the
/// *phases* (consecutive steps run in one layout).
///
/// Guarantees (tested): steps on local bits below the passengers (the window's *low* steps,
/// the end of a stage) run in runs, in one phase, which holds every lane step (local bits
/// 4..9); in runs the register steps (local bits below 4) come as one block that runs down to
/// local bit 0. Steps in columns or middle are register steps, on consecutive descending
/// register bits in each phase. The flip's step comes first in its phase in columns or middle,
/// right after the register block in runs, and its local bit is L − 1 (columns) or 8 (middle
/// and runs): in the columns and middle layouts it is register bit 3 or the thread index's
/// bit 8 (L = 13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// Steps in the window.
    pub count: u32,
    /// The local bit of each step, in order.
    pub steps: [u8; 16],
    /// (layout, steps) of each phase, in order ([`COLUMNS`], [`MIDDLE`], [`RUNS`]); unused
    /// ones have no steps.
    pub phases: [(u32, u32); MAX_PHASES],
    /// The layout keys are loaded in ([`COLUMNS`] or [`MIDDLE`]).
    pub load: u32,
    /// The layout keys are stored from ([`COLUMNS`] or [`MIDDLE`]).
    pub store: u32,
    /// The local bit of the flip's step ([`NO_FLIP`]: none).
    pub flip_local: u32,
    /// Lane steps at the start of the runs phase (before its register steps).
    pub lanes_first: u32,
    /// The placement's estimated instructions per thread, from loading to storing, steps and
    /// layout switches only.
    pub cost: u32,
}

impl Program {
    /// Layout switches: between phases, and after the load and before the store where needed.
    pub fn switches(&self) -> u32 {
        let mut layout = self.load;
        let mut switches = 0;
        for &(next, len) in &self.phases {
            if len > 0 && next != layout {
                switches += 1;
                layout = next;
            }
        }
        switches + u32::from(layout != self.store)
    }
}

/// One launch of the window sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowPass {
    /// log2 of the network's positions.
    pub log2: u32,
    /// log2 of the keys per block (L).
    pub tile_log2: u32,
    /// Global bits 0 .. passengers are free in every window.
    pub passengers: u32,
    /// The tile sort: each natural tile of 2^L keys sorted ascending (stages 1 ..= L).
    pub sort: bool,
    /// The steps: a suffix of one stage, then maybe a prefix of the next (none for the tile
    /// sort).
    pub segments: [Option<Segment>; 2],
    /// The stage whose flip this window runs (0: none).
    pub flip: u32,
    /// Free bits: `[0, low)` and `[high, high + L − low)` (`low == high == L`: `[0, L)`).
    pub low: u32,
    /// See `low`.
    pub high: u32,
    /// The global bit of each local bit (`< tile_log2`).
    pub bits: [u8; MAX_WINDOW_LOG2 as usize],
    /// How a block runs the steps (meaningless for the tile sort).
    pub program: Program,
}

/// The windows that sort `n` keys from scratch: the tile sort, then the greedy windows of
/// every stage above the tile. Empty for `n = 0`; the tile sort alone for `n ≤ 2^tile_log2`
/// (even for one key: it is what applies the key map).
///
/// # Panics
/// Unless `passengers ≥ 5` (the block code's lanes) and `passengers < tile_log2 ≤
/// SMALL_RUN_LOG2 + 9` (every local bit a register or lane bit in one of the layouts).
///
/// ```
/// use kernels_gpu::bitonic::window::windows;
/// assert_eq!([1u64 << 20, 1 << 25, 1 << 28].map(|n| windows(n, 13, 5).count()), [12, 23, 31]);
/// assert_eq!(windows(8192, 13, 5).count(), 1);
/// assert_eq!(windows(0, 13, 5).count(), 0);
/// ```
pub fn windows(n: u64, tile_log2: u32, passengers: u32) -> Windows {
    windows_from(n, 0, tile_log2, passengers)
}

/// The windows that finish sorting `n` keys whose aligned blocks of 2^`sorted_log2` keys are
/// each sorted ascending (and encoded) already: stages `sorted_log2 + 1 ..= ceil_log2(n)`.
/// With `sorted_log2 < tile_log2`, the same as [`windows`] (the tile sort sorts tiles from any
/// state).
///
/// ```
/// use kernels_gpu::bitonic::window::{windows, windows_from};
///
/// // Chunks of 2^22 sorted: the windows of stages 23 ..= 25 only, no tile sort.
/// let rest: Vec<_> = windows_from(1 << 25, 22, 13, 5).collect();
/// assert!(!rest[0].sort && rest[0].flip == 23);
/// assert!(windows_from(1 << 22, 22, 13, 5).next().is_none());
/// assert!(windows_from(5000, 3, 13, 5).eq(windows(5000, 13, 5)));
/// ```
pub fn windows_from(n: u64, sorted_log2: u32, tile_log2: u32, passengers: u32) -> Windows {
    assert!(
        passengers > RUN_BITS && passengers < tile_log2 && tile_log2 <= RUN_BITS + 9,
        "windows of 2^{tile_log2} keys with {passengers} passengers"
    );
    let log2 = ceil_log2(n);
    let sort = n > 0 && sorted_log2 < tile_log2;
    let first = if sort { tile_log2 + 1 } else { sorted_log2 + 1 };
    Windows {
        log2,
        tile_log2,
        passengers,
        sort,
        stage: first,
        bit: first - 1,
    }
}

/// The iterator of [`windows`] and [`windows_from`].
#[derive(Clone, Debug)]
pub struct Windows {
    log2: u32,
    tile_log2: u32,
    passengers: u32,
    sort: bool,
    /// The next step: stage `stage`, bit `bit`.
    stage: u32,
    bit: u32,
}

impl Iterator for Windows {
    type Item = WindowPass;

    fn next(&mut self) -> Option<WindowPass> {
        if self.sort {
            self.sort = false;
            return Some(WindowPass::tile_sort(
                self.log2,
                self.tile_log2,
                self.passengers,
            ));
        }
        if self.stage > self.log2 {
            return None;
        }
        let mut used = (1u64 << self.passengers) - 1;
        let mut steps = [(0u32, 0u32); 16];
        let mut count = 0;
        while self.stage <= self.log2 {
            let with = used | 1 << self.bit;
            if with.count_ones() > self.tile_log2 {
                break;
            }
            used = with;
            steps[count] = (self.stage, self.bit);
            count += 1;
            if self.bit == 0 {
                self.stage += 1;
                self.bit = self.stage - 1;
            } else {
                self.bit -= 1;
            }
        }
        Some(WindowPass::new(
            self.log2,
            self.tile_log2,
            self.passengers,
            &steps[..count],
        ))
    }
}

impl WindowPass {
    /// The tile sort of a network of 2^`log2` positions.
    pub const fn tile_sort(log2: u32, tile_log2: u32, passengers: u32) -> WindowPass {
        let mut bits = [0u8; MAX_WINDOW_LOG2 as usize];
        let mut q = 0;
        while q < MAX_WINDOW_LOG2 {
            bits[q as usize] = q as u8;
            q += 1;
        }
        WindowPass {
            log2,
            tile_log2,
            passengers,
            sort: true,
            segments: [None, None],
            flip: 0,
            low: tile_log2,
            high: tile_log2,
            bits,
            program: Program {
                count: 0,
                steps: [0; 16],
                phases: [(COLUMNS, 0); MAX_PHASES],
                load: COLUMNS,
                store: COLUMNS,
                flip_local: NO_FLIP,
                lanes_first: 0,
                cost: 0,
            },
        }
    }

    /// The window that runs `steps` ((stage, bit) in network order, at most two stages, at
    /// most `tile_log2` distinct bits together with 0 .. passengers) of a network of
    /// 2^`log2` positions: its free bits, and where its block puts each of them.
    ///
    /// # Panics
    /// If the steps do not fit a window.
    ///
    /// ```
    /// use kernels_gpu::bitonic::window::{COLUMNS, MIDDLE, RUNS, WindowPass};
    ///
    /// // Stage 14's bits 5 ..= 0 and stage 15's bits 14 ..= 8 of 2^25 keys.
    /// let steps: Vec<(u32, u32)> = (0..6).rev().map(|b| (14, b))
    ///     .chain((8..15).rev().map(|b| (15, b))).collect();
    /// let w = WindowPass::new(25, 13, 5, &steps);
    /// assert_eq!((w.low, w.high, w.flip), (6, 8, 15));
    /// // Stage 14's step on bit 5 in middle (a register bit there), its steps on bits 4..=0 in
    /// // runs, stage 15's on bits 14..=12 in middle and 11..=8 in columns (register bits):
    /// // one lane step (bit 4) and 12 register steps, three layout switches.
    /// let phases: Vec<_> = w.program.phases.iter().filter(|p| p.1 > 0).copied().collect();
    /// assert_eq!(phases, [(MIDDLE, 1), (RUNS, 5), (MIDDLE, 3), (COLUMNS, 4)]);
    /// assert_eq!((w.program.load, w.program.store, w.program.switches()), (MIDDLE, COLUMNS, 3));
    /// // The flip runs first in its middle phase, on register bit 3 (local bit 8).
    /// assert_eq!(w.program.flip_local, 8);
    /// ```
    pub fn new(log2: u32, tile_log2: u32, passengers: u32, steps: &[(u32, u32)]) -> WindowPass {
        let (l, p) = (tile_log2, passengers);
        assert!(p > RUN_BITS && p < l && l <= RUN_BITS + 9 && l <= log2);
        assert!(!steps.is_empty() && steps.len() <= 16);
        // Segments and flip.
        let mut segments: [Option<Segment>; 2] = [None, None];
        let mut flip = 0;
        let mut used = (1u64 << p) - 1;
        for &(stage, bit) in steps {
            assert!(bit < stage && stage <= log2);
            used |= 1 << bit;
            if bit == stage - 1 {
                flip = stage;
            }
            let single = Segment {
                stage,
                top: bit,
                bottom: bit,
            };
            let last = if segments[1].is_some() { 1 } else { 0 };
            match &mut segments[last] {
                Some(s) if s.stage == stage => {
                    assert_eq!(s.bottom, bit + 1, "consecutive steps: {steps:?}");
                    s.bottom = bit;
                }
                Some(_) => {
                    assert_eq!(last, 0, "a window holds at most two segments: {steps:?}");
                    segments[1] = Some(single);
                }
                None => segments[0] = Some(single),
            }
        }
        assert!(
            used.count_ones() <= l,
            "too many bits for a window: {steps:?}"
        );
        // Free bits: the high run ends at the top step bit, the low run takes the rest.
        let top = 63 - used.leading_zeros();
        let (low, high) = if top < l {
            (l, l)
        } else {
            let mut c = top;
            loop {
                let a = l - (top + 1 - c);
                let gap = ((1u64 << c) - 1) & !((1u64 << a) - 1);
                if a >= p && a < c && used & gap == 0 {
                    break (a, c);
                }
                assert!(c > p, "no free bits for {steps:?}");
                c -= 1;
            }
        };
        let free: u64 = ((1u64 << low) - 1) | (((1u64 << (l - low)) - 1) << high);
        debug_assert_eq!(free.count_ones(), l);
        let program_and_bits = Self::place(l, p, steps, free);
        WindowPass {
            log2,
            tile_log2,
            passengers,
            sort: false,
            segments,
            flip,
            low,
            high,
            bits: program_and_bits.1,
            program: program_and_bits.0,
        }
    }

    /// Chooses each step's layout and local bit (see [`Program`]) for the fewest estimated
    /// instructions: a dynamic program over the steps whose state is the layout and how many
    /// of the register bits of columns (local bits max(9, L − 4) .. L) and of middle (5..9)
    /// the steps off the passengers have taken; a lane step in runs takes one of the middle's.
    /// Low steps run in runs, in one phase, which other steps may join only next to them.
    fn place(
        l: u32,
        p: u32,
        steps: &[(u32, u32)],
        free: u64,
    ) -> (Program, [u8; MAX_WINDOW_LOG2 as usize]) {
        let count = steps.len();
        let is_low = |i: usize| steps[i].1 < p;
        let first_low = (0..count).find(|&i| is_low(i));
        let last_low = (0..count).rev().find(|&i| is_low(i));
        let columns_pool = l - RUNS_TOP.max(l - 4);
        let middle_pool = RUNS_TOP - (RUN_BITS + 1);
        // State: (layout, columns bits used, middle bits used, runs phase over), flattened;
        // per step, the cheapest cost to reach it and the state before.
        const LAYOUTS: [u32; 3] = [COLUMNS, MIDDLE, RUNS];
        const STATES: usize = 3 * 5 * 5 * 2;
        let index = |layout: u32, c: u32, m: u32, done: bool| -> usize {
            (((layout * 5 + c) * 5 + m) * 2 + u32::from(done)) as usize
        };
        let unpack = |k: usize| -> (u32, u32, u32, bool) {
            let k = k as u32;
            (k / 50, (k / 10) % 5, (k / 2) % 5, k % 2 == 1)
        };
        const NONE: (u32, u16) = (u32::MAX, u16::MAX);
        let mut best = [[NONE; STATES]; 17];
        for load in [COLUMNS, MIDDLE] {
            if load != COLUMNS || columns_pool > 0 {
                best[0][index(load, 0, 0, false)] = (0, u16::MAX);
            }
        }
        for i in 0..count {
            for k in 0..STATES {
                let (cost, _) = best[i][k];
                if cost == u32::MAX {
                    continue;
                }
                let (layout, c, m, done) = unpack(k);
                for next in LAYOUTS {
                    let (mut c2, mut m2, mut done2) = (c, m, done);
                    let step = if is_low(i) {
                        if next != RUNS {
                            continue;
                        }
                        if steps[i].1 < RUN_BITS {
                            REGISTER_STEP
                        } else {
                            LANE_STEP
                        }
                    } else {
                        match next {
                            COLUMNS => c2 += 1,
                            _ => m2 += 1,
                        }
                        if next == RUNS {
                            LANE_STEP
                        } else {
                            REGISTER_STEP
                        }
                    };
                    if c2 > columns_pool || m2 > middle_pool {
                        continue;
                    }
                    if next == RUNS && (done || first_low.is_none()) {
                        continue;
                    }
                    if layout == RUNS && next != RUNS {
                        // Leaving runs: every low step must be done.
                        if last_low.is_some_and(|last| i <= last) {
                            continue;
                        }
                        done2 = true;
                    }
                    let switch = if next == layout { 0 } else { SWITCH };
                    let total = cost + step + switch;
                    let slot = &mut best[i + 1][index(next, c2, m2, done2)];
                    if total < slot.0 {
                        *slot = (total, k as u16);
                    }
                }
            }
        }
        // The end: from runs, one more switch to store.
        let mut end = 0;
        let mut cost = u32::MAX;
        for (k, &(c, _)) in best[count].iter().enumerate() {
            if c != u32::MAX {
                let total = c + if unpack(k).0 == RUNS { SWITCH } else { 0 };
                if total < cost {
                    (end, cost) = (k, total);
                }
            }
        }
        assert!(cost != u32::MAX, "no placement fits the window: {steps:?}");
        let mut layout_of = [0u32; 16];
        let mut state = end;
        for i in (0..count).rev() {
            layout_of[i] = unpack(state).0;
            state = usize::from(best[i + 1][state].1);
        }
        let state = unpack(state);
        let load = state.0;
        let store = match layout_of[count - 1] {
            RUNS if columns_pool > 0 => COLUMNS,
            RUNS => MIDDLE,
            last => last,
        };
        // Phases.
        let mut phases = [(COLUMNS, 0u32); MAX_PHASES];
        let mut phase_of = [0usize; 16];
        let mut n_phases = 0;
        for i in 0..count {
            if i == 0 || layout_of[i] != layout_of[i - 1] {
                assert!(n_phases < MAX_PHASES, "too many phases: {layout_of:?}");
                phases[n_phases] = (layout_of[i], 0);
                n_phases += 1;
            }
            phases[n_phases - 1].1 += 1;
            phase_of[i] = n_phases - 1;
        }
        // Local bits. The flip's phase takes the top register bits of its pool (register bit 3
        // of its layout); other phases follow in order, each on consecutive descending bits.
        let flip_at = (0..count).find(|&i| steps[i].1 == steps[i].0 - 1);
        let mut local = [0u8; 16];
        let mut next_bit = [l, RUNS_TOP]; // one above the next free bit, columns and middle
        let mut order = [0usize; MAX_PHASES];
        let mut n_order = 0;
        if let Some(f) = flip_at {
            order[0] = phase_of[f];
            n_order = 1;
        }
        for q in 0..n_phases {
            if flip_at.is_none_or(|f| phase_of[f] != q) {
                order[n_order] = q;
                n_order += 1;
            }
        }
        // The flip in runs takes the top of the middle pool before any phase does.
        if let Some(f) = flip_at.filter(|&f| layout_of[f] == RUNS) {
            next_bit[1] -= 1;
            local[f] = next_bit[1] as u8;
        }
        for &q in &order[..n_order] {
            for i in (0..count).filter(|&i| phase_of[i] == q) {
                if is_low(i) {
                    local[i] = steps[i].1 as u8;
                } else if Some(i) != flip_at || layout_of[i] != RUNS {
                    let pool = usize::from(layout_of[i] != COLUMNS);
                    next_bit[pool] -= 1;
                    local[i] = next_bit[pool] as u8;
                }
            }
        }
        assert!(next_bit[0] >= l - columns_pool && next_bit[1] > RUN_BITS);
        // The global bit of every local bit: the steps' bits, then the free bits no step uses
        // on the local bits left, in order.
        const UNSET: u8 = u8::MAX;
        let mut bits = [UNSET; MAX_WINDOW_LOG2 as usize];
        for q in 0..p {
            bits[q as usize] = q as u8;
        }
        for i in 0..count {
            bits[local[i] as usize] = steps[i].1 as u8;
        }
        let mut spare = free;
        for &b in &bits[..l as usize] {
            if b != UNSET {
                spare &= !(1u64 << b);
            }
        }
        for b in bits.iter_mut().take(l as usize) {
            if *b == UNSET {
                let g = spare.trailing_zeros();
                spare &= spare - 1;
                *b = g as u8;
            }
        }
        assert_eq!(spare, 0);
        let runs_from = (0..count).find(|&i| layout_of[i] == RUNS);
        let lanes_first = runs_from.map_or(0, |from| {
            (from..count)
                .take_while(|&i| layout_of[i] == RUNS && u32::from(local[i]) >= RUN_BITS)
                .count() as u32
        });
        let program = Program {
            count: count as u32,
            steps: local,
            phases,
            load,
            store,
            flip_local: flip_at.map_or(NO_FLIP, |i| u32::from(local[i])),
            lanes_first,
            cost,
        };
        (program, bits)
    }

    /// The steps of this window as (stage, global bit), in order (the tile sort's: stages
    /// 1 ..= L).
    pub fn steps(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let sorted = if self.sort { self.tile_log2 } else { 0 };
        let tile = (1..=sorted).flat_map(|k| (0..k).rev().map(move |b| (k, b)));
        let segments = self
            .segments
            .iter()
            .flatten()
            .flat_map(|s| (s.bottom..=s.top).rev().map(move |b| (s.stage, b)));
        tile.chain(segments)
    }

    /// Whether global bit `j` is free.
    pub const fn is_free(&self, j: u32) -> bool {
        j < self.low || (j >= self.high && j < self.high + self.tile_log2 - self.low)
    }

    /// The highest bit that is free or that a step compares: the window's keys stay inside
    /// aligned blocks of 2^(`top_bit()` + 1) (with the flip's mirror image: it complements bits
    /// below the top only).
    pub fn top_bit(&self) -> u32 {
        let mut top = 0;
        for q in 0..self.tile_log2 {
            top = top.max(u32::from(self.bits[q as usize]));
        }
        top
    }

    /// Whether the window compares keys only inside aligned blocks of 2^`block_log2` keys, so
    /// that it can run block by block, each launch on a block's keys alone
    /// ([`WindowPass::restricted`]).
    pub fn stays_within(&self, block_log2: u32) -> bool {
        !self.sort && self.top_bit() < block_log2
    }

    /// This window of the network of one row of 2^`self.log2` keys, run on every row of a
    /// launch over 2^`log2` keys (`log2 ≥ self.log2`): the same steps and local bits, the row as
    /// the high fixed bits. The windows of [`windows`]`(2^p, ..)` so widened sort every aligned
    /// row of 2^p keys ascending (the network's stages 1 ..= p).
    ///
    /// ```
    /// use kernels_gpu::bitonic::window::windows;
    /// let w: Vec<_> = windows(1 << 16, 13, 5).map(|w| w.over(20)).collect();
    /// // Window 1 of a row fixes bits 5 and 14..=15; over 16 rows, also bits 16..=19.
    /// assert_eq!(w[1].blocks(1 << 20), 16 * windows(1 << 16, 13, 5).nth(1).unwrap().blocks(1 << 16));
    /// ```
    pub fn over(&self, log2: u32) -> WindowPass {
        assert!(log2 >= self.log2);
        WindowPass { log2, ..*self }
    }

    /// This window as run on an aligned block of 2^`block_log2` keys alone (for a window that
    /// [`WindowPass::stays_within`] it): the same steps and local bits, fewer fixed bits.
    pub fn restricted(&self, block_log2: u32) -> WindowPass {
        assert!(self.stays_within(block_log2) && block_log2 >= self.tile_log2);
        WindowPass {
            log2: block_log2,
            ..*self
        }
    }

    /// Blocks of the launch: 2^(log2 − L), of which those whose lowest position is at least
    /// `n` would return at once and are not launched (the tile sort: ⌈n / 2^L⌉).
    ///
    /// ```
    /// use kernels_gpu::bitonic::window::windows;
    /// let w: Vec<_> = windows(100_000, 13, 5).collect();
    /// assert_eq!(w[0].blocks(100_000), 13); // tiles
    /// // Window 1 fixes bits 5 and 14..=16: of its 16 blocks, 14 start below 100000.
    /// assert_eq!(w[1].blocks(100_000), 14);
    /// ```
    pub fn blocks(&self, n: u64) -> u64 {
        if self.sort {
            return n.div_ceil(1 << self.tile_log2);
        }
        let all = 1u64 << (self.log2 - self.tile_log2);
        // `fixed` is increasing: the blocks starting below n are a prefix.
        let (mut lo, mut hi) = (0u64, all);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.fixed(mid) < n {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Global index of local index `local` in block `block` (see the module docs, "The flip
    /// inside a block").
    pub fn global(&self, local: u32, block: u64) -> u64 {
        let mut direct = self.fixed(block);
        for q in 0..self.tile_log2 {
            if (local >> q) & 1 == 1 {
                direct |= 1 << self.bits[q as usize];
            }
        }
        let mirror = self.mirror();
        if direct & (mirror + 1) != 0 && mirror != 0 {
            direct ^ mirror
        } else {
            direct
        }
    }

    /// The fixed bits of block `block`: its index spread over `[low, high)`, then from
    /// `high + L − low` up; also the block's lowest position.
    pub const fn fixed(&self, block: u64) -> u64 {
        let below = self.high - self.low;
        ((block & ((1u64 << below) - 1)) << self.low)
            | ((block >> below) << (self.high + self.tile_log2 - self.low))
    }

    /// 2^(h − 1) − 1 for a window holding stage h's flip, else 0: the bits the flip's mirror
    /// image complements.
    pub const fn mirror(&self) -> u64 {
        match self.flip {
            0 => 0,
            h => (1u64 << (h - 1)) - 1,
        }
    }

    /// For layout `layout` ([`COLUMNS`] or [`MIDDLE`]): the global bits of the thread index's
    /// bits above the lanes (bytes 0..4) and of the register index's bits (bytes 4..8), and how
    /// the flip's upper group shows ([`FLIP_REGISTERS`], a thread index bit, or
    /// [`FLIP_NONE`]).
    fn layout_map(&self, layout: u32) -> (u64, u32) {
        let l = self.tile_log2;
        let (threads_at, registers_at) = match layout {
            MIDDLE => (RUNS_TOP, RUN_BITS + 1),
            _ => (RUN_BITS + 1, l - RUN_BITS),
        };
        let mut map = 0u64;
        for i in 0..l - RUNS_TOP {
            map |= u64::from(self.bits[(threads_at + i) as usize]) << (8 * i);
        }
        for j in 0..RUN_BITS {
            map |= u64::from(self.bits[(registers_at + j) as usize]) << (8 * (4 + j));
        }
        let f = self.program.flip_local;
        let flip = if f == NO_FLIP {
            FLIP_NONE
        } else if f == registers_at + RUN_BITS - 1 {
            FLIP_REGISTERS
        } else {
            // A thread index bit above the lanes (`Program`'s promise).
            assert!(
                f >= threads_at && f < threads_at + (l - RUNS_TOP),
                "{self:?}"
            );
            f - threads_at + RUN_BITS + 1
        };
        (map, flip)
    }

    /// What a block of this window needs to know (a later window; not the tile sort): the
    /// window kernels' arguments. For blocks of 2^9 or 2^13 keys, the sizes the block code
    /// handles (`crate::bitonic::block::window::WindowSort`).
    ///
    /// ```
    /// use kernels_gpu::bitonic::window::windows;
    /// let w = windows(1 << 25, 13, 5).nth(2).unwrap();
    /// let b = w.block_window();
    /// // Free bits [0, 6) ∪ [8, 15): the block index's two low bits go to bits 6 and 7, the
    /// // others from bit 15 up.
    /// assert_eq!(b.fixed(0b101), (1 << 6) | (1 << 15));
    /// assert_eq!(b.mirror, (1 << 14) - 1); // stage 15's flip
    /// ```
    pub fn block_window(&self) -> BlockWindow {
        assert!(!self.sort, "the tile sort has its own kernel");
        assert!(self.tile_log2 == 9 || self.tile_log2 == 13);
        let l = self.tile_log2;
        let p = &self.program;
        let mut steps = 0u64;
        for (i, &local) in p.steps[..p.count as usize].iter().enumerate() {
            steps |= u64::from(local) << (4 * i);
        }
        let mut phases = 0u32;
        for (i, &(layout, len)) in p.phases.iter().enumerate() {
            phases |= (len | layout << 4) << (6 * i);
        }
        let free: u64 = ((1u64 << self.low) - 1) | (((1u64 << (l - self.low)) - 1) << self.high);
        let mirror = self.mirror();
        let (load_map, load_flip) = self.layout_map(p.load);
        let (store_map, store_flip) = self.layout_map(p.store);
        BlockWindow {
            tile_log2: l,
            fixed: self.low | (self.high - self.low) << 8 | (self.high + l - self.low) << 16,
            mirror,
            span: free | mirror,
            load_map,
            store_map,
            plan: p.flip_local
                | p.lanes_first << 4
                | p.load << 7
                | p.store << 9
                | load_flip << 11
                | store_flip << 16,
            phases,
            steps,
        }
    }
}

crate::args::kernel_args! { $
    /// The argument of the window passes' tile sorts (`bitonic_window_tiles_*`, also the
    /// keys-only merge sort's tile sort): block b sorts tile b, keys `b·2^L ..` of `src` (the last
    /// tile may be short), into the same positions of `dst`.
    pub struct WindowTilesArgs, entry window_tiles_entry {
        /// The `n` keys, read.
        pub src: Addr,
        /// Where each tile goes once sorted, at its own positions: `n` keys, written (may be
        /// `src`).
        pub dst: Addr,
        /// 0, or room for `2 · ceil(n / NETWORK_MERGE_TILE)` keys, written: the first and last
        /// key stored of each `NETWORK_MERGE_TILE` keys (keys `2t`, `2t + 1` for piece `t`),
        /// for the partition of the keys-only merge sort's first pass.
        pub edges: Addr,
        /// Keys in all.
        pub n: u64,
        /// The key map applied to each key as it is loaded.
        pub encode: u32,
        /// The key map undone on each key as it is stored (`IDENTITY` unless this is the only
        /// pass).
        pub decode: u32,
        /// The last stage of the tile's network that runs (at least `SMALL_RUN_LOG2`): below L,
        /// every aligned 2^`stages` keys come out ascending rather than the tile; L or more,
        /// the whole tile.
        pub stages: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the tile sorts of rows (`bitonic_row_tiles_*`): every aligned row of
    /// 2^`row_log2` keys sorted in place, by the tile sort of tiles of 2^`ROW_TILE_LOG2` keys
    /// stopped after stage `row_log2`.
    pub struct RowTilesArgs, entry row_tiles_entry {
        /// The `n` keys, in rows, each sorted in place.
        pub keys: Addr,
        /// Keys in all.
        pub n: u64,
        /// The key map applied to each key as it is loaded and undone as it is stored.
        pub map: u32,
        /// log2 of the keys per row (`SMALL_RUN_LOG2 ..= ROW_TILE_LOG2`).
        pub row_log2: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the window passes that read their program from it (`bitonic_window_*`
    /// without a program of their own): one window of [`windows`] over the keys, in place.
    /// `fixed` to `steps` are the window's [`BlockWindow`] ([`WindowPass::block_window`]),
    /// whose docs say what each holds.
    pub struct WindowArgs, entry window_entry {
        /// The `n` keys, each block's permuted in place.
        pub keys: Addr,
        /// Keys in all.
        pub n: u64,
        /// Where a block's index goes among the positions ([`BlockWindow`]).
        pub fixed: u32,
        /// The mirror of the window's flip, or 0 ([`BlockWindow`]).
        pub mirror: u64,
        /// The free bits and the mirror ([`BlockWindow`]).
        pub span: u64,
        /// The layout keys are loaded in ([`BlockWindow`]).
        pub load_map: u64,
        /// The layout keys are stored from ([`BlockWindow`]).
        pub store_map: u64,
        /// The program's flip, lanes and layouts ([`BlockWindow`]).
        pub plan: u32,
        /// The program's phases ([`BlockWindow`]).
        pub phases: u32,
        /// The program's steps, a local bit each ([`BlockWindow`]).
        pub steps: u64,
        /// The key map undone on each key as the last window stores it (`IDENTITY` before).
        pub decode: u32,
        /// How many blocks ahead of its own each block has the L2 cache fetch keys (those of
        /// block `blockIdx.x + ahead`, which a later block sorts); 0: none.
        pub ahead: u64,
    }
}

crate::args::kernel_args! { $
    /// The argument of the window passes with a constant program (`bitonic_window_*_p<i>`, for
    /// windows whose program is [`PROGRAMS`]`[i]`): [`WindowArgs`] less the program.
    pub struct WindowProgramArgs, entry window_program_entry {
        /// As in [`WindowArgs`].
        pub keys: Addr,
        /// As in [`WindowArgs`].
        pub n: u64,
        /// As in [`WindowArgs`].
        pub fixed: u32,
        /// As in [`WindowArgs`].
        pub mirror: u64,
        /// As in [`WindowArgs`].
        pub span: u64,
        /// As in [`WindowArgs`].
        pub load_map: u64,
        /// As in [`WindowArgs`].
        pub store_map: u64,
        /// As in [`WindowArgs`].
        pub decode: u32,
        /// As in [`WindowArgs`].
        pub ahead: u64,
    }
}

/// A window as a block sees it: the window kernels' arguments (from
/// [`WindowPass::block_window`]) and the block size. Everything a block derives from the
/// window alone is computed on the host, so that a thread's set-up is a few instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockWindow {
    /// L.
    pub tile_log2: u32,
    /// Where a block's index goes: bits 0..8 `low`, 8..16 `high − low` (its bits placed from
    /// `low` up), 16..24 `high + L − low` (the rest of them placed from there up).
    pub fixed: u32,
    /// 2^(h − 1) − 1 for a window holding stage h's flip, else 0.
    pub mirror: u64,
    /// The free bits and the mirror: every position of block b lies in
    /// `fixed(b) ..= fixed(b) | span`.
    pub span: u64,
    /// The load's layout: the global bits of the thread index's bits 5, 6, … (bytes 0..4; a
    /// thread's bits 0..5 are the lanes, global bits 0..5) and of the register index's bits
    /// 0..4 (bytes 4..8).
    pub load_map: u64,
    /// The same for the store's layout.
    pub store_map: u64,
    /// Bits 0..4 `flip_local`, 4..7 `lanes_first`, 7..9 the load's layout, 9..11 the store's
    /// ([`Program`]); 11..16 and 16..21 where the flip's upper group is in the load's and the
    /// store's layout: [`FLIP_REGISTERS`] (registers 8..16), a thread index bit, or
    /// [`FLIP_NONE`].
    pub plan: u32,
    /// Phase i in bits 6i .. 6i + 6: its number of steps (4 bits), then its layout (2 bits);
    /// none after the first without steps.
    pub phases: u32,
    /// The local bit of step i in bits 4i .. 4i + 4.
    pub steps: u64,
}

impl BlockWindow {
    /// The index of this window's program in [`PROGRAMS`], if it has a kernel of its own.
    pub fn program(&self) -> Option<usize> {
        PROGRAMS
            .iter()
            .position(|&p| p == (self.plan, self.phases, self.steps))
    }

    /// The local bit of the flip ([`NO_FLIP`]: none).
    #[inline(always)]
    pub const fn flip_local(&self) -> u32 {
        self.plan & 15
    }

    /// Lane steps at the start of the runs phase ([`Program`]).
    #[inline(always)]
    pub const fn lanes_first(&self) -> u32 {
        (self.plan >> 4) & 7
    }

    /// Where the flip's upper group is in the load's layout (see `plan`).
    #[inline(always)]
    pub const fn load_flip(&self) -> u32 {
        (self.plan >> 11) & 31
    }

    /// Where the flip's upper group is in the store's layout (see `plan`).
    #[inline(always)]
    pub const fn store_flip(&self) -> u32 {
        (self.plan >> 16) & 31
    }

    /// The layout keys are loaded in.
    #[inline(always)]
    pub const fn load_layout(&self) -> u32 {
        (self.plan >> 7) & 3
    }

    /// The layout keys are stored from.
    #[inline(always)]
    pub const fn store_layout(&self) -> u32 {
        (self.plan >> 9) & 3
    }

    /// Phase `i`: (layout, steps).
    #[inline(always)]
    pub const fn phase(&self, i: u32) -> (u32, u32) {
        let field = (self.phases >> (6 * i)) & 63;
        (field >> 4, field & 15)
    }

    /// The local bit of step `i`.
    #[inline(always)]
    pub const fn step(&self, i: u32) -> u32 {
        ((self.steps >> (4 * i)) & 15) as u32
    }

    /// Whether the window holds a flip.
    #[inline(always)]
    pub const fn has_flip(&self) -> bool {
        self.mirror != 0
    }

    /// The fixed bits of block `block`. This is also the block's lowest global index.
    #[inline(always)]
    pub const fn fixed(&self, block: u64) -> u64 {
        let (low, below, far) = (
            self.fixed & 0xff,
            (self.fixed >> 8) & 0xff,
            (self.fixed >> 16) & 0xff,
        );
        ((block & ((1u64 << below) - 1)) << low) | ((block >> below) << far)
    }

    /// An upper bound of block `block`'s global indices: all of them are below `n` if this is.
    #[inline(always)]
    pub const fn bound(&self, block: u64) -> u64 {
        self.fixed(block) | self.span
    }

    /// Whether every free bit and the mirror lie below bit 32, so that a block's positions
    /// differ in their low 32 bits only (the narrow kernels).
    #[inline(always)]
    pub const fn narrow(&self) -> bool {
        self.span >> 32 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The mirrored network's steps of stages `from ..= log2`, in order.
    fn network(from: u32, log2: u32) -> Vec<(u32, u32)> {
        (from..=log2)
            .flat_map(|k| (0..k).rev().map(move |b| (k, b)))
            .collect()
    }

    /// (n, L) pairs covering every kind of window: the GPU's shape and smaller tiles.
    fn shapes() -> Vec<(u64, u32)> {
        let mut v = Vec::new();
        for l in [9, 13] {
            for log2 in l..=l + 12 {
                v.push((1u64 << log2, l));
                v.push(((1u64 << log2) - (1 << (log2 - 3)) + 7, l));
            }
        }
        v.push((1 << 39, 13));
        v
    }

    #[test]
    fn programs_cover_every_window() {
        let mut used = [0u32; PROGRAMS.len()];
        for log2 in 14..=32 {
            for n in [1u64 << log2, (1 << (log2 - 1)) + 1] {
                // The whole sort, and the host-slice pipeline's windows above its chunks.
                let chunked = windows_from(n, crate::tuning::OVERLAP_CHUNK_LOG2, 13, 5);
                for w in windows(n, 13, 5).chain(chunked).filter(|w| !w.sort) {
                    let win = w.block_window();
                    let i = win
                        .program()
                        .unwrap_or_else(|| panic!("no kernel for {w:?}"));
                    used[i] += 1;
                }
            }
        }
        // None without a use.
        assert!(used.iter().all(|&u| u > 0), "{used:?}");
        // Distinct programs, so that the index names the program.
        for (i, p) in PROGRAMS.iter().enumerate() {
            assert!(!PROGRAMS[..i].contains(p), "program {i} twice");
        }
    }

    #[test]
    fn windows_replay_the_network_in_order_on_free_bits() {
        for (n, l) in shapes() {
            let log2 = ceil_log2(n);
            let all: Vec<WindowPass> = windows(n, l, 5).collect();
            assert!(all[0].sort);
            let mut replay: Vec<(u32, u32)> = network(1, l);
            for w in &all[1..] {
                assert!(!w.sort);
                let steps: Vec<(u32, u32)> = w.steps().collect();
                assert!(!steps.is_empty());
                for &(_, b) in &steps {
                    assert!(w.is_free(b), "n = {n}, L = {l}: {w:?}");
                }
                // Free bits: L of them, the passengers among them, inside the network.
                let free = (0..log2).filter(|&j| w.is_free(j)).count() as u32;
                assert_eq!(free, l);
                assert!(w.low >= 5 && w.high + l - w.low <= log2);
                replay.extend(steps);
            }
            assert_eq!(replay, network(1, log2), "n = {n}, L = {l}");
        }
    }

    #[test]
    fn windows_are_greedy_and_hold_at_most_one_flip() {
        for (n, l) in shapes() {
            let all: Vec<WindowPass> = windows(n, l, 5).collect();
            for (i, w) in all.iter().enumerate().skip(1) {
                let steps: Vec<(u32, u32)> = w.steps().collect();
                let flips = steps.iter().filter(|&&(k, b)| b == k - 1).count();
                assert!(flips <= 1);
                assert_eq!(flips == 1, w.flip != 0);
                if let Some(next) = all.get(i + 1) {
                    // The next window's first step did not fit.
                    let (_, b) = next.steps().next().unwrap();
                    let mut bits: u64 = 31 | 1 << b;
                    for &(_, c) in &steps {
                        bits |= 1 << c;
                    }
                    assert!(bits.count_ones() > l, "n = {n}: window {i} is not greedy");
                }
            }
        }
    }

    #[test]
    fn every_step_pairs_keys_of_one_block_and_blocks_partition_the_positions() {
        for (n, l) in shapes().into_iter().filter(|&(n, _)| n <= 1 << 17) {
            let log2 = ceil_log2(n);
            for w in windows(n, l, 5).skip(1) {
                let win = w.block_window();
                let mut owner = vec![u64::MAX; 1 << log2];
                let mut local_of = vec![0u32; 1 << log2];
                for block in 0..1u64 << (log2 - l) {
                    let bound = win.bound(block);
                    for local in 0..1u32 << l {
                        let g = w.global(local, block);
                        assert!(g <= bound && g >= win.fixed(block));
                        assert_eq!(owner[g as usize], u64::MAX, "{g} twice: {w:?}");
                        owner[g as usize] = block;
                        local_of[g as usize] = local;
                    }
                }
                let flip_bit = w.flip.checked_sub(1);
                for (k, b) in w.steps() {
                    for i in 0..1u64 << log2 {
                        let j = if b == k - 1 {
                            i ^ ((2 << b) - 1)
                        } else {
                            i ^ (1 << b)
                        };
                        if i > j {
                            continue;
                        }
                        let (bi, bj) = (owner[i as usize], owner[j as usize]);
                        assert_eq!(bi, bj, "step ({k}, {b}) leaves the block: {w:?}");
                        // In local coordinates the step is a plain step on one local bit; it
                        // keeps the lower global index below in the lower group only (or it is
                        // the flip).
                        let (li, lj) = (local_of[i as usize], local_of[j as usize]);
                        let q = (li ^ lj).trailing_zeros();
                        assert_eq!(li ^ lj, 1 << q);
                        assert_eq!(w.bits[q as usize], b as u8);
                        let upper = flip_bit.is_some_and(|f| b != f && (i >> f) & 1 == 1);
                        assert_eq!(li < lj, !upper, "step ({k}, {b}) of {w:?}");
                    }
                }
            }
        }
    }

    /// The local bits that are registers in `layout` (blocks of 2^l keys).
    fn registers(layout: u32, l: u32) -> core::ops::Range<u32> {
        match layout {
            COLUMNS => l - 4..l,
            MIDDLE => 5..9,
            _ => 0..4,
        }
    }

    #[test]
    fn programs_keep_the_layout_promises() {
        for (n, l) in shapes() {
            for w in windows(n, l, 5).skip(1) {
                let p = w.program;
                let count = p.count as usize;
                let local = |i: usize| u32::from(p.steps[i]);
                let steps: Vec<(u32, u32)> = w.steps().collect();
                let mut at = 0;
                let mut runs = None;
                for &(layout, len) in p.phases.iter().take_while(|ph| ph.1 > 0) {
                    let phase = at..at + len as usize;
                    if layout == RUNS {
                        assert!(runs.is_none(), "one runs phase: {w:?}");
                        runs = Some(phase.clone());
                        // Lane steps, a block of register steps down to local bit 0, lane steps.
                        let mut i = phase.start + p.lanes_first as usize;
                        assert!(
                            (phase.start..i).all(|j| (4..9).contains(&local(j))),
                            "{w:?}"
                        );
                        if i < phase.end && local(i) < 4 {
                            let q = local(i) as usize;
                            assert!((0..=q).all(|d| local(i + d) as usize == q - d), "{w:?}");
                            i += q + 1;
                        }
                        assert!((i..phase.end).all(|j| (4..9).contains(&local(j))), "{w:?}");
                    } else {
                        // Register steps on consecutive descending register bits.
                        for i in phase.clone() {
                            assert!(registers(layout, l).contains(&local(i)), "{w:?}");
                            if i > phase.start {
                                assert_eq!(local(i) + 1, local(i - 1), "{w:?}");
                            }
                        }
                    }
                    at = phase.end;
                }
                assert_eq!(at, count, "{w:?}");
                assert!(p.load != RUNS && p.store != RUNS);
                // Low steps (bits below the passengers) all run in runs.
                for (i, &(_, b)) in steps.iter().enumerate() {
                    if b < 5 {
                        assert!(runs.as_ref().is_some_and(|r| r.contains(&i)), "{w:?}");
                        assert_eq!(local(i), b);
                    }
                }
                // The flip: first in its phase in columns (local bit L − 1) or middle (8), right
                // after the register block in runs (8).
                let phase_start = |i: usize| {
                    let mut at = 0;
                    for &(layout, len) in &p.phases {
                        if i < at + len as usize {
                            return (layout, at);
                        }
                        at += len as usize;
                    }
                    unreachable!()
                };
                if let Some(f) = (0..count).find(|&i| steps[i].1 == steps[i].0 - 1) {
                    assert_eq!(p.flip_local, local(f));
                    let (layout, start) = phase_start(f);
                    match layout {
                        COLUMNS => assert!(f == start && local(f) == l - 1, "{w:?}"),
                        MIDDLE => assert!(f == start && local(f) == 8, "{w:?}"),
                        _ => assert!(f > start && local(f - 1) == 0 && local(f) == 8, "{w:?}"),
                    }
                } else {
                    assert_eq!((p.flip_local, w.flip), (NO_FLIP, 0));
                }
                // Every local bit names a distinct free bit; local bits 0..5 are the lanes.
                let mut seen = 0u64;
                for q in 0..l {
                    let g = u32::from(w.bits[q as usize]);
                    assert!(w.is_free(g) && seen & 1 << g == 0);
                    seen |= 1 << g;
                    if q < 5 {
                        assert_eq!(g, q);
                    }
                }
            }
        }
    }

    /// The estimated cost of the two-layout plan (columns → runs → columns, no middle), which
    /// the placement must never exceed.
    fn two_layout_cost(w: &WindowPass) -> u32 {
        let bits: Vec<u32> = w.steps().map(|(_, b)| b).collect();
        let low: Vec<usize> = (0..bits.len()).filter(|&i| bits[i] < 5).collect();
        let t = low.first().copied().unwrap_or(bits.len());
        let h = low.last().map_or(0, |&last| bits.len() - last - 1);
        let before = t.min(4);
        let after = if low.is_empty() { 0 } else { h.min(4 - before) };
        let runs = &bits[before..bits.len() - after];
        let lanes = runs.iter().filter(|&&b| b >= 4).count() as u32;
        let registers = bits.len() as u32 - lanes;
        let switches = if runs.is_empty() { 0 } else { 2 };
        lanes * LANE_STEP + registers * REGISTER_STEP + switches * SWITCH
    }

    #[test]
    fn the_middle_layout_saves_lane_steps() {
        for log2 in [20, 25, 28, 33] {
            let (mut two, mut three) = (0, 0);
            for w in windows(1 << log2, 13, 5).skip(1) {
                let p = w.program;
                assert!(p.cost <= two_layout_cost(&w), "{w:?}");
                // The cost is the program's: lane steps in runs, register steps elsewhere.
                let mut lanes = 0;
                let mut at = 0;
                for &(layout, len) in &p.phases {
                    if layout == RUNS {
                        lanes += (at..at + len as usize).filter(|&i| p.steps[i] >= 4).count();
                    }
                    at += len as usize;
                }
                let lanes = lanes as u32;
                let expected =
                    lanes * LANE_STEP + (p.count - lanes) * REGISTER_STEP + p.switches() * SWITCH;
                assert_eq!(p.cost, expected, "{w:?}");
                assert!(lanes <= 2, "{w:?}");
                two += two_layout_cost(&w);
                three += w.program.cost;
            }
            // At least a fifth fewer instructions in the steps and switches.
            assert!(three * 5 <= two * 4, "2^{log2}: {three} against {two}");
        }
    }

    #[test]
    fn pass_counts() {
        // Global passes per step (up to four fused) and a tile merge per stage: 19, 40 and 55.
        for (log2, count) in [(20, 12), (25, 23), (28, 31)] {
            assert_eq!(windows(1 << log2, 13, 5).count(), count);
        }
    }

    #[test]
    fn arguments_round_trip() {
        for (n, l) in shapes() {
            for w in windows(n, l, 5).skip(1) {
                let b = w.block_window();
                let p = w.program;
                assert_eq!(
                    (
                        b.flip_local(),
                        b.lanes_first(),
                        b.load_layout(),
                        b.store_layout()
                    ),
                    (p.flip_local, p.lanes_first, p.load, p.store)
                );
                for (i, &phase) in p.phases.iter().enumerate() {
                    assert_eq!(b.phase(i as u32), phase);
                }
                for (layout, map) in [(p.load, b.load_map), (p.store, b.store_map)] {
                    let registers_at = if layout == MIDDLE { 5 } else { l - 4 };
                    for j in 0..4 {
                        let g = (map >> (8 * (4 + j))) & 0xff;
                        assert_eq!(g, u64::from(w.bits[(registers_at + j) as usize]));
                    }
                }
                for i in 0..w.program.count {
                    assert_eq!(b.step(i), u32::from(w.program.steps[i as usize]));
                }
                assert_eq!(b.has_flip(), w.flip != 0);
                if w.flip != 0 {
                    assert_eq!(b.mirror, (1 << (w.flip - 1)) - 1);
                }
            }
        }
    }

    #[test]
    fn chunk_tails_stay_within_chunks() {
        // The end of the last stage, restricted to a chunk, touches the chunk's positions only
        // and maps them as the whole-array window does, shifted by the chunk's start.
        for (n, chunk_log2) in [((1u64 << 25) + 5, 22), (1 << 20, 17), (300_000, 16)] {
            let rest: Vec<WindowPass> = windows_from(n, chunk_log2, 13, 5).collect();
            let tail = rest
                .iter()
                .rev()
                .take_while(|w| w.stays_within(chunk_log2))
                .count();
            assert!(tail >= 1 && tail < rest.len());
            for w in &rest[rest.len() - tail..] {
                let r = w.restricted(chunk_log2);
                let chunk_blocks = 1u64 << (chunk_log2 - 13);
                for block in [0, 1, chunk_blocks - 1, chunk_blocks + 3] {
                    let chunk = block / chunk_blocks;
                    for local in [0u32, 1, 4095, 8191, 5000] {
                        let g = w.global(local, block);
                        let in_chunk = r.global(local, block % chunk_blocks);
                        assert_eq!(g, (chunk << chunk_log2) + in_chunk);
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn blocks_counts_the_blocks_that_start_below_n(n in 1u64..(1 << 18), l in 9u32..=13) {
            for w in windows(n, l, 5).skip(1) {
                let brute = (0..1u64 << (w.log2 - l)).filter(|&b| w.fixed(b) < n).count();
                prop_assert_eq!(w.blocks(n), brute as u64);
            }
        }

        #[test]
        fn windows_from_a_sorted_block_size_are_the_rest_of_the_network(
            log2 in 14u32..30, sorted in 13u32..29, l in 9u32..=13,
        ) {
            prop_assume!(sorted < log2);
            let mut replay = network(1, sorted);
            for w in windows_from(1 << log2, sorted, l, 5) {
                prop_assert!(!w.sort);
                replay.extend(w.steps());
            }
            prop_assert_eq!(replay, network(1, log2));
        }
    }
}
