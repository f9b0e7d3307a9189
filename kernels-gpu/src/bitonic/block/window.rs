//! What one block of a window pass ([`crate::bitonic::window`]) does: load its 2^L keys from device
//! memory into registers, run the window's [`Program`](crate::bitonic::window::Program), store them back
//! where they came from. Built from the small sort's engine ([`crate::bitonic::block::small`]): the same
//! [`Team`], register layouts (*columns*, *runs*, and *middle*, added for these passes), register
//! and lane steps, and transposes through one padded shared tile; its tile sort (window 0) is
//! the small sort's window 0 on each natural tile ([`sort_tile`]).
//!
//! # A window in a block
//!
//! 1. Load, in the columns or the middle layout (the program says which): a warp's 32 lanes
//!    read 32 consecutive keys (local bits 0..5 are global bits 0..5). All 16 loads are issued
//!    before any key is used. Blocks whose lowest position is at least n return at once;
//!    blocks wholly below n skip the per-key bounds checks. Before its loads, each thread asks
//!    the L2 cache for one line of the block a few hundred blocks later (its own segment
//!    moved by the difference of the two blocks' fixed bits), which that block then loads
//!    from L2 ([`WindowSort::prefetching`]).
//! 2. With a flip, the *upper group* (local bit of the flip set) is complemented: registers
//!    8..16 if the flip's local bit is register bit 3 of the layout, else every register of
//!    the threads whose index has the flip's bit.
//! 3. The program's phases, each in its layout (a transpose through shared memory between
//!    them): register steps in columns and middle; lane and register steps in runs. The flip
//!    sets each key to `min(mine, !partner)`, every other step is an ascending
//!    compare-exchange.
//! 4. Transpose to the store's layout if need be, undo the complement, decode (last window),
//!    store.
//!
//! Positions: per thread, two bases (registers 0..8 and 8..16) and three per-register spreads
//! each (negative in a mirrored half), computed once for the load and again for the store; a
//! key's position is its base plus the spreads of its register's bits. They are 32-bit offsets
//! from the block's bits above 31 when the window's free bits and mirror lie below bit 32
//! (every window of fewer than 2^32 keys), 64-bit positions otherwise.

use crate::bitonic::block::small::{
    Layout, Run, SmallSort, each_register, lane_step, read_slots, register_range, register_steps,
    write_slots,
};
use crate::bitonic::small::SmallPlan;
use crate::bitonic::window::{
    BlockWindow, COLUMNS, FLIP_NONE, FLIP_REGISTERS, MAX_PHASES, MIDDLE, RUNS,
};
use crate::block::L2_LINE_BYTES;
use crate::block::Team;
use crate::keys::{IDENTITY, KeyBits};
use crate::tuning::{SMALL_RUN, SMALL_RUN_LOG2};

const RUN: usize = SMALL_RUN as usize;

/// The crossing step of a flip on lane bit `b` (runs): every key becomes `min(mine, !theirs)`.
/// In the lower lane, `theirs` is a complemented upper key `!y`: `min(x, y)`; in the upper lane
/// `mine` is `!y` and `theirs` is `x`: `min(!y, !x) = !max(x, y)`, stored complemented.
#[inline(always)]
fn crossing_lane_step<K: KeyBits, T: Team<K, RUN>>(team: &mut T, b: u32) {
    team.exchange(1 << b, |_, run, theirs| {
        each_register(|r| {
            let other = theirs[r].complement(true);
            if other < run[r] {
                run[r] = other;
            }
        });
    });
}

/// The crossing step of a flip on register bit 3 (local bit L − 1 in columns, 8 in middle):
/// register r < 8 (lower group) meets register r + 8 (upper group, complemented); each becomes
/// `min(mine, !theirs)`.
#[inline(always)]
fn crossing_register_step<K: KeyBits>(run: &mut Run<K>) {
    const HALF: usize = 1 << (SMALL_RUN_LOG2 - 1);
    each_register(|r| {
        if r < HALF {
            let (a, c) = (run[r], run[r + HALF]);
            let (not_a, not_c) = (a.complement(true), c.complement(true));
            run[r] = if not_c < a { not_c } else { a };
            run[r + HALF] = if not_a < c { not_a } else { c };
        }
    });
}

/// The type of a key's position relative to its block's far bits: `u32` when every free bit
/// and the mirror lie below bit 32 ([`BlockWindow::narrow`]: one 32-bit add per key and a
/// `mad.wide` into the address), `u64` otherwise (positions of 2^32 keys and more).
pub trait Offset: Copy {
    /// The bits of a position this type does not hold (they come from the block).
    const FAR: u64;
    /// The low bits of `x` this type holds.
    fn low(x: u64) -> Self;
    /// `x` (a few low bits).
    fn small(x: u32) -> Self;
    /// `x << b`.
    fn shl(self, b: u32) -> Self;
    /// Wrapping sum.
    fn plus(self, other: Self) -> Self;
    /// Wrapping negation.
    fn negated(self) -> Self;
    /// Bitwise xor.
    fn xor(self, other: Self) -> Self;
    /// Bitwise or.
    fn or(self, other: Self) -> Self;
    /// As a 64-bit position.
    fn widen(self) -> u64;
}

macro_rules! impl_offset {
    ($t:ty, $far:expr) => {
        impl Offset for $t {
            const FAR: u64 = $far;
            #[inline(always)]
            fn low(x: u64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn small(x: u32) -> Self {
                x as $t
            }
            #[inline(always)]
            fn shl(self, b: u32) -> Self {
                // Shifts past the width wrap as in a release build: a debug build's CPU tests
                // compute 32-bit positions of windows too far for them, and never use them.
                self.wrapping_shl(b)
            }
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn negated(self) -> Self {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
            #[inline(always)]
            fn or(self, other: Self) -> Self {
                self | other
            }
            #[inline(always)]
            fn widen(self) -> u64 {
                self as u64
            }
        }
    };
}

impl_offset!(u32, !(u32::MAX as u64));
impl_offset!(u64, 0);

/// Positions of one thread's keys in columns or middle: register r at
/// `far + base[r / 8] + Σ spread[r / 8][j]` over the set bits j < 3 of r (wrapping: the spreads
/// of a mirrored half are negative). See the module docs.
#[derive(Clone, Copy)]
struct ColumnIndex<I> {
    /// The block's fixed bits that `I` does not hold (0 for `u64`).
    far: u64,
    base: [I; 2],
    spread: [[I; 3]; 2],
}

impl<I: Offset> ColumnIndex<I> {
    /// Thread `t`'s positions in block `block`, in the layout whose thread and register bits
    /// `map` places, with the flip's upper group where `flip` says (`BlockWindow::plan`).
    #[inline(always)]
    fn new(win: &BlockWindow, map: u64, flip: u32, t: u32, block: u64) -> Self {
        let l = win.tile_log2;
        let fixed = win.fixed(block);
        let byte = |i: u32| ((map >> (8 * i)) & 0xff) as u32;
        let mut d = I::low(fixed).or(I::small(t & 31));
        let mut i = 0;
        while i + 9 < l {
            d = d.or(I::small((t >> (5 + i)) & 1).shl(byte(i)));
            i += 1;
        }
        let s = |j: u32| I::small(1).shl(byte(4 + j));
        let plus = [s(0), s(1), s(2)];
        let minus = plus.map(I::negated);
        let s3 = s(3);
        let m = I::low(win.mirror);
        // With the flip on register bit 3 the upper group is registers 8..16; otherwise it is
        // the threads whose index has the flip's bit. For an upper key,
        // (x + Σ) ^ m = (x ^ m) − Σ: the spreads' bits lie below the flip's and are clear in x.
        let registers = flip == FLIP_REGISTERS;
        let thread = flip < FLIP_REGISTERS && (t >> flip) & 1 == 1;
        let d_up = d.xor(m);
        let base = [
            if thread { d_up } else { d },
            if registers {
                d.plus(s3).xor(m)
            } else if thread {
                d_up.plus(s3.negated())
            } else {
                d.plus(s3)
            },
        ];
        let spread = [
            if thread { minus } else { plus },
            if thread || registers { minus } else { plus },
        ];
        ColumnIndex {
            far: fixed & I::FAR,
            base,
            spread,
        }
    }

    /// Register `r`'s position, less `far`, for an `r` known only at run time (selects, no
    /// indexed array).
    #[inline(always)]
    fn of_any(&self, r: u32) -> I {
        let upper = r & 8 != 0;
        let mut g = if upper { self.base[1] } else { self.base[0] };
        for j in 0..3 {
            let spread = if upper {
                self.spread[1][j]
            } else {
                self.spread[0][j]
            };
            if (r >> j) & 1 == 1 {
                g = g.plus(spread);
            }
        }
        g
    }

    /// Register `r`'s position, less `far` (r a constant after unrolling: the selects of
    /// [`ColumnIndex::of_any`] fold away).
    #[inline(always)]
    fn of(&self, r: usize) -> I {
        self.of_any(r as u32)
    }
}

/// The position (global index) in the line that thread `t` asks the L2 cache for on behalf of
/// block `later` of the window, if any, from `index`, `t`'s positions in block `block` in the
/// load's layout. A warp's lanes hold 32 consecutive keys of each register (global bits 0..5,
/// reversed in a mirrored half), so lane i takes the segment of 32 keys of its register
/// i % 16, and of that segment's lines the (i / 16)-th (a segment of 8-byte keys is two lines;
/// lanes 16.. of 4-byte keys idle). The same segment of block `later` lies a constant distance
/// away: the difference of the blocks' fixed bits, mirrored in a flip's upper group.
#[inline(always)]
fn prefetch_position<K, I: Offset>(
    win: &BlockWindow,
    index: &ColumnIndex<I>,
    t: u32,
    n: u64,
    (block, later): (u64, u64),
) -> Option<u64> {
    let line_keys = (L2_LINE_BYTES / size_of::<K>()) as u64;
    let lane = t & 31;
    let (r, line) = (lane & 15, u64::from(lane >> 4));
    if line * line_keys >= 32 {
        return None;
    }
    let flip = win.load_flip();
    let upper = if flip == FLIP_REGISTERS {
        r >= 8
    } else {
        flip < FLIP_REGISTERS && (t >> flip) & 1 == 1
    };
    let (from, to) = (win.fixed(block), win.fixed(later));
    let m = if upper { win.mirror } else { 0 };
    let distance = (to ^ m).wrapping_sub(from ^ m);
    let segment = (index.far + index.of_any(r).widen()) & !31;
    let g = segment.wrapping_add(distance) + line * line_keys;
    (g < n).then_some(g)
}

/// The flip's crossing step on register bit 3, then register steps 2 ..= `bottom`, written out
/// as [`register_range`].
#[inline(always)]
fn crossing_range<K: KeyBits>(run: &mut Run<K>, bottom: u32) {
    crossing_register_step(run);
    match bottom {
        0 => register_steps(run, 2, 0),
        1 => register_steps(run, 2, 1),
        2 => register_steps(run, 2, 2),
        _ => {}
    }
}

/// One block of a window pass (after the tile sort).
pub struct WindowSort<K, T> {
    team: T,
    win: BlockWindow,
    block: u64,
    /// The keys' layout: [`COLUMNS`], [`MIDDLE`] or [`RUNS`].
    layout: u32,
    /// How many blocks ahead of this one the load prefetches (0: none).
    ahead: u64,
    _keys: core::marker::PhantomData<K>,
}

impl<K: KeyBits, T: Team<K, RUN>> WindowSort<K, T> {
    /// Block `block` of the window `win`.
    ///
    /// # Safety
    /// The team has 2^(L − 4) threads and `tile_shared_words(2^L)` keys of shared memory used
    /// by this block alone (L = `win.tile_log2`, 9 or 13: the sizes for which every flip's
    /// local bit is register bit 3 or a thread bit in the load's and store's layouts); `win`
    /// comes from [`WindowPass::block_window`](crate::bitonic::window::WindowPass::block_window).
    #[inline(always)]
    pub unsafe fn new(team: T, win: BlockWindow, block: u64) -> Self {
        debug_assert!(win.tile_log2 == 9 || win.tile_log2 == 13);
        WindowSort {
            team,
            win,
            block,
            layout: COLUMNS,
            ahead: 0,
            _keys: core::marker::PhantomData,
        }
    }

    /// Has the block, as its loads start, ask the L2 cache for the keys of block
    /// `block + ahead` of the window (0: nothing; 128-byte lines below n, each once), which a
    /// later block loads, so that it finds them in L2 rather than waiting on device memory.
    #[inline(always)]
    pub fn prefetching(self, ahead: u64) -> Self {
        WindowSort { ahead, ..self }
    }

    /// The team, for another block (the CPU tests).
    pub fn into_team(self) -> T {
        self.team
    }

    /// Runs the window on `keys[..n]`: loads this block's keys (+∞ past n), runs the steps,
    /// stores them (those below n) through the inverse of `decode` (`IDENTITY`: as they are).
    /// Positions are offsets of type `I` ([`Offset`]).
    ///
    /// # Safety
    /// `keys` holds `n` keys, of which no other block of the launch touches this block's
    /// positions; the network of the window has at least as many positions as n; `I` is `u64`
    /// or the window is [`BlockWindow::narrow`].
    #[inline(always)]
    pub unsafe fn run<I: Offset>(&mut self, keys: *mut K, n: u64, decode: u32) {
        // SAFETY: the caller's contract.
        unsafe { self.run_phases::<I, false>(keys, n, decode) }
    }

    /// [`WindowSort::run`] with the phases written out, for a window whose program (`plan`,
    /// `phases`, `steps`) is a constant: every layout, step and switch then folds into
    /// straight-line code, with no dispatch left (the kernels of [`PROGRAMS`](crate::bitonic::window::PROGRAMS)).
    ///
    /// # Safety
    /// As [`WindowSort::run`].
    #[inline(always)]
    pub unsafe fn run_unrolled<I: Offset>(&mut self, keys: *mut K, n: u64, decode: u32) {
        // SAFETY: the caller's contract.
        unsafe { self.run_phases::<I, true>(keys, n, decode) }
    }

    /// [`WindowSort::run`], its phases in a loop or, if `UNROLLED`, written out.
    #[inline(always)]
    unsafe fn run_phases<I: Offset, const UNROLLED: bool>(
        &mut self,
        keys: *mut K,
        n: u64,
        decode: u32,
    ) {
        let win = self.win;
        if win.fixed(self.block) >= n {
            // Every position of the block is past the end: +∞ that the network never moves.
            return;
        }
        let full = win.bound(self.block) < n;
        // SAFETY: the caller's contract.
        unsafe { self.load::<I>(keys, n, full) };
        self.complement_upper(win.load_flip());
        let mut at = 0;
        if UNROLLED {
            const _: () = assert!(MAX_PHASES == 5, "five phases written out");
            // A phase without steps ends the program; the ones after it have none either.
            macro_rules! phases {
                ($($i:literal)*) => { $( self.phase($i, &mut at); )* };
            }
            phases!(0 1 2 3 4);
        } else {
            let mut phase = 0;
            while phase < MAX_PHASES as u32 && self.phase(phase, &mut at) {
                phase += 1;
            }
        }
        self.to(win.store_layout());
        self.complement_upper(win.store_flip());
        if decode != IDENTITY {
            self.team
                .each(|_, run, _| each_register(|r| run[r] = run[r].decode(decode)));
        }
        // SAFETY: as above.
        unsafe { self.store::<I>(keys, n, full) };
    }

    /// Runs phase `i` of the program, whose steps start at step `*at`, and moves `*at` past
    /// them; false (and nothing done) if the phase has no steps.
    #[inline(always)]
    fn phase(&mut self, i: u32, at: &mut u32) -> bool {
        let (target, len) = self.win.phase(i);
        if len == 0 {
            return false;
        }
        self.to(target);
        if target == RUNS {
            self.run_steps(*at, *at + len);
        } else {
            self.register_steps(target, *at, len);
        }
        *at += len;
        true
    }

    /// Device memory → registers in the load's layout (columns or middle); +∞ past `n` unless
    /// the block is `full`. Positions as offsets of type `I` from the block's far bits.
    ///
    /// # Safety
    /// As [`WindowSort::run`]; `I = u32` only if the window is [`BlockWindow::narrow`].
    #[inline(always)]
    unsafe fn load<I: Offset>(&mut self, keys: *const K, n: u64, full: bool) {
        let (win, block) = (self.win, self.block);
        let later = block + self.ahead;
        let prefetch = self.ahead > 0 && win.fixed(later) < n;
        self.team.each(|t, run, _| {
            let index = ColumnIndex::<I>::new(&win, win.load_map, win.load_flip(), t, block);
            if prefetch
                && let Some(g) = prefetch_position::<K, I>(&win, &index, t, n, (block, later))
            {
                T::prefetch(keys.wrapping_add(g as usize));
            }
            let at = keys.wrapping_add(index.far as usize);
            if full {
                // SAFETY: every position of a full block is below n. All 16 loads are issued
                // before any key is used.
                each_register(|r| run[r] = unsafe { *at.add(index.of(r).widen() as usize) });
            } else {
                each_register(|r| {
                    let g = index.far + index.of(r).widen();
                    run[r] = if g < n {
                        // SAFETY: g < n.
                        unsafe { *keys.add(g as usize) }
                    } else {
                        K::INFINITY
                    };
                });
            }
        });
        self.layout = win.load_layout();
    }

    /// Registers (columns or middle) → device memory, positions below `n` only.
    ///
    /// # Safety
    /// As [`WindowSort::load`].
    #[inline(always)]
    unsafe fn store<I: Offset>(&mut self, keys: *mut K, n: u64, full: bool) {
        let (win, block) = (self.win, self.block);
        self.team.each(|t, run, _| {
            // With 8-byte keys, the thread's positions computed anew (a few instructions) rather
            // than held in registers since the load (with 4-byte keys there is room for them).
            let t = if size_of::<K>() > 4 { T::opaque(t) } else { t };
            let index = ColumnIndex::<I>::new(&win, win.store_map, win.store_flip(), t, block);
            let at = keys.wrapping_add(index.far as usize);
            if full {
                // SAFETY: as in `load`.
                each_register(|r| unsafe { *at.add(index.of(r).widen() as usize) = run[r] });
            } else {
                each_register(|r| {
                    let g = index.far + index.of(r).widen();
                    if g < n {
                        // SAFETY: g < n.
                        unsafe { *keys.add(g as usize) = run[r] };
                    }
                });
            }
        });
    }

    /// Complements the upper group's keys, which `flip` places in the current layout (columns
    /// or middle; `BlockWindow::plan`); nothing without a flip. Its own inverse.
    #[inline(always)]
    fn complement_upper(&mut self, flip: u32) {
        if flip == FLIP_NONE {
            return;
        }
        if flip == FLIP_REGISTERS {
            self.team.each(|_, run, _| {
                each_register(|r| {
                    if r >= 8 {
                        run[r] = run[r].complement(true);
                    }
                })
            });
        } else {
            self.team.each(|t, run, _| {
                let upper = (t >> flip) & 1 == 1;
                each_register(|r| run[r] = run[r].complement(upper));
            });
        }
    }

    /// The `len` steps of the program from step `from` on, in columns or middle: register steps
    /// on consecutive descending register bits, the first the flip's crossing step if it is
    /// the flip.
    #[inline(always)]
    fn register_steps(&mut self, layout: u32, from: u32, len: u32) {
        let win = self.win;
        let first = win.step(from);
        let registers_at = if layout == MIDDLE {
            SMALL_RUN_LOG2 + 1
        } else {
            win.tile_log2 - SMALL_RUN_LOG2
        };
        let top = first - registers_at;
        let bottom = top + 1 - len;
        if first == win.flip_local() {
            // The flip is on register bit 3 (`Program`'s promise).
            self.team.each(|_, run, _| crossing_range(run, bottom));
        } else {
            self.team.each(|_, run, _| register_range(run, top, bottom));
        }
    }

    /// Steps `from..to` of the program in runs: `lanes_first` lane steps (local bits 4..9),
    /// then the register steps (local bits below 4, which run down to local bit 0) as one
    /// block, then the rest, lane steps, the first possibly the flip's (`Program`'s promises).
    /// Each run of lane steps is straight-line code for its length: in a loop, every lane step
    /// would move each key back to its loop-carried register.
    #[inline(always)]
    fn run_steps(&mut self, from: u32, to: u32) {
        let win = self.win;
        let mut i = from;
        let first = win.lanes_first();
        self.lane_steps(i, first);
        i += first;
        if i < to {
            let q = win.step(i);
            if q < SMALL_RUN_LOG2 {
                self.team.each(|_, run, _| register_range(run, q, 0));
                i += q + 1;
            }
        }
        if i < to && win.step(i) == win.flip_local() {
            crossing_lane_step(&mut self.team, win.step(i) - SMALL_RUN_LOG2);
            i += 1;
        }
        self.lane_steps(i, to - i);
    }

    /// The `count` (at most 5) lane steps of the program from step `from` on.
    #[inline(always)]
    fn lane_steps(&mut self, from: u32, count: u32) {
        match count {
            0 => {}
            1 => self.lane_run::<1>(from),
            2 => self.lane_run::<2>(from),
            3 => self.lane_run::<3>(from),
            4 => self.lane_run::<4>(from),
            _ => self.lane_run::<5>(from),
        }
    }

    /// `N` lane steps from step `from` on, written out.
    #[inline(always)]
    fn lane_run<const N: u32>(&mut self, from: u32) {
        let win = self.win;
        macro_rules! steps {
            ($($k:literal)*) => { $( if $k < N { lane_step(&mut self.team, win.step(from + $k) - SMALL_RUN_LOG2); } )* };
        }
        steps!(0 1 2 3 4);
    }

    /// Moves the keys into layout `target` (nothing if already there): a transpose through
    /// shared memory, each half straight-line code for a constant layout.
    #[inline(always)]
    fn to(&mut self, target: u32) {
        if target == self.layout {
            return;
        }
        let shift = self.win.tile_log2 - SMALL_RUN_LOG2;
        let team = &mut self.team;
        match self.layout {
            COLUMNS => write_slots(team, Layout::Columns, shift),
            MIDDLE => write_slots(team, Layout::Middle, shift),
            _ => write_slots(team, Layout::Runs, shift),
        }
        team.sync();
        match target {
            COLUMNS => read_slots(team, Layout::Columns, shift),
            MIDDLE => read_slots(team, Layout::Middle, shift),
            _ => read_slots(team, Layout::Runs, shift),
        }
        self.layout = target;
    }
}

/// The tile sort of window passes with tiles of 2^`tile_log2` keys: block `tile` sorts keys
/// `tile·2^L ..` of `src` (the last tile may be short; +∞ past `n`) ascending through the key
/// map `encode` into the same positions of `dst` (which may be `src`), through the inverse of
/// `decode`. The small sort's window 0 on the tile ([`SmallSort`]: the classic network, stages
/// 1 ..= L, in registers and shuffles). With `stages` < L it stops after stage `stages`,
/// which sorts every aligned 2^`stages` keys ascending rather than the tile: the rows of a
/// matrix of keys alone ([`SmallSort::sort_single_tile`]).
///
/// # Safety
/// `src` and `dst` hold `n` keys; no other block touches this tile; the team as for
/// [`SmallSort::new`] with the plan of one 2^`tile_log2`-key block; [`SMALL_RUN_LOG2`] ≤
/// `stages` ≤ `tile_log2`.
#[inline(always)]
pub unsafe fn sort_tile<K: KeyBits, T: Team<K, RUN>>(
    team: T,
    (tile_log2, stages): (u32, u32),
    (src, dst): (*const K, *mut K),
    n: u64,
    tile: u64,
    (encode, decode): (u32, u32),
) -> T {
    let plan = match SmallPlan::new(tile_log2, tile_log2) {
        Some(plan) => plan,
        None => panic!("no tile sort of this size"),
    };
    let base = tile << tile_log2;
    let len = (n - base).min(1 << tile_log2) as u32;
    // SAFETY: the caller's contract; the plan has one block and one window, which reads and
    // writes this tile only (no scratch).
    unsafe {
        let mut sort = SmallSort::new(team, plan, 0);
        let at = base as usize;
        sort.sort_single_tile(src.add(at), dst.add(at), len, stages, encode, decode);
        sort.into_team()
    }
}

/// The merge sort's edges of a sorted tile ([`crate::merge::partition_pass`]): which key of
/// tile `tile` (2^`tile_log2` keys, of `n`) thread `t` records, as `(edge slot, position)`:
/// threads `2e` and `2e + 1` the first and last key of the tile's `e`-th piece of `piece` keys,
/// at edge slots `2·(global piece index)` and `+ 1`. `None` for threads with nothing to record.
///
/// ```
/// use kernels_gpu::bitonic::block::window::tile_edge;
/// // The second tile of 8192 keys of 10000, pieces of 4096: the first piece's edges, the
/// // second piece is empty.
/// assert_eq!(tile_edge(13, 4096, 10000, 1, 0), Some((4, 8192)));
/// assert_eq!(tile_edge(13, 4096, 10000, 1, 1), Some((5, 9999)));
/// assert_eq!(tile_edge(13, 4096, 10000, 1, 2), None);
/// ```
pub fn tile_edge(tile_log2: u32, piece: u64, n: u64, tile: u64, t: u32) -> Option<(u64, u64)> {
    let base = tile << tile_log2;
    let len = (n - base).min(1 << tile_log2);
    let first = u64::from(t / 2) * piece;
    if u64::from(t) >= 2 * ((1u64 << tile_log2) / piece) || first >= len {
        return None;
    }
    let at = if t % 2 == 0 {
        first
    } else {
        (first + piece).min(len) - 1
    };
    Some((2 * ((base + first) / piece) + u64::from(t % 2), base + at))
}

/// Runs the windows `passes` over `keys` as the kernels would, on the CPU: every block of each
/// window in turn through a [`CpuTeam`](crate::block::CpuTeam) (which panics on a
/// missing barrier). The tile sort (if it comes first) encodes with `encode`, the last window
/// decodes with `decode`.
///
/// # Panics
/// On a shared-memory race, or if a window does not fit `keys.len()`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn run_like_the_gpu<K: KeyBits>(
    keys: &mut [K],
    passes: impl IntoIterator<Item = crate::bitonic::window::WindowPass>,
    maps: (u32, u32),
) {
    run_on_the_cpu(keys, passes, maps, false);
}

/// [`run_like_the_gpu`], with 64-bit positions in every window if `wide`.
#[cfg(not(target_arch = "nvptx64"))]
fn run_on_the_cpu<K: KeyBits>(
    keys: &mut [K],
    passes: impl IntoIterator<Item = crate::bitonic::window::WindowPass>,
    (encode, decode): (u32, u32),
    wide: bool,
) {
    use crate::block::CpuTeam;
    use crate::tuning::tile_shared_words;
    let n = keys.len() as u64;
    let mut passes = passes.into_iter().peekable();
    while let Some(pass) = passes.next() {
        let l = pass.tile_log2;
        let decode = if passes.peek().is_none() {
            decode
        } else {
            IDENTITY
        };
        assert!(n <= 1 << pass.log2 || pass.sort);
        let mut team = CpuTeam::new(1 << (l - SMALL_RUN_LOG2), tile_shared_words(1 << l));
        for block in 0..pass.blocks(n) {
            // A fresh phase, as a new block would have fresh shared memory.
            team.sync();
            // SAFETY: keys holds n keys; blocks run one after another.
            team = unsafe {
                if pass.sort {
                    sort_tile(
                        team,
                        (l, l),
                        (keys.as_ptr(), keys.as_mut_ptr()),
                        n,
                        block,
                        (encode, decode),
                    )
                } else {
                    let win = pass.block_window();
                    let mut sort = WindowSort::new(team, win, block);
                    if win.narrow() && !wide {
                        sort.run::<u32>(keys.as_mut_ptr(), n, decode);
                    } else {
                        sort.run::<u64>(keys.as_mut_ptr(), n, decode);
                    }
                    sort.into_team()
                }
            };
        }
    }
}

/// Sorts every aligned row of 2^`row_log2` keys of `keys` (the last may be short: +∞ past the
/// end) as the tile kernel stopped after stage `row_log2` does, on the CPU: every tile of
/// 2^`tile_log2` keys in turn through a [`CpuTeam`](crate::block::CpuTeam) (which panics on a
/// missing barrier), through the key map `map` as loaded and back as stored.
///
/// # Panics
/// Unless `SMALL_RUN_LOG2 ≤ row_log2 ≤ tile_log2`; on a shared-memory race.
///
/// ```
/// use kernels_gpu::bitonic::block::window::sort_rows_like_the_gpu;
/// use kernels_gpu::keys::IDENTITY;
///
/// let mut keys: Vec<u32> = (0..3 * 1024).map(|i| (i * 7919) % 5003).collect();
/// sort_rows_like_the_gpu(&mut keys, 13, 10, IDENTITY);
/// assert!(keys.chunks(1024).all(|row| row.is_sorted()));
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn sort_rows_like_the_gpu<K: KeyBits>(keys: &mut [K], tile_log2: u32, row_log2: u32, map: u32) {
    use crate::block::CpuTeam;
    use crate::tuning::tile_shared_words;
    assert!((SMALL_RUN_LOG2..=tile_log2).contains(&row_log2));
    let n = keys.len() as u64;
    let (l, stages) = (tile_log2, row_log2);
    let mut team = CpuTeam::new(1 << (l - SMALL_RUN_LOG2), tile_shared_words(1 << l));
    for tile in 0..n.div_ceil(1 << l) {
        team.sync();
        let at = (keys.as_ptr(), keys.as_mut_ptr());
        // SAFETY: keys holds n keys; tiles run one after another; stages in range.
        team = unsafe { sort_tile(team, (l, stages), at, n, tile, (map, map)) };
    }
}

/// Sorts `keys` as the window kernels do, on the CPU, with tiles of 2^`tile_log2` keys:
/// [`run_like_the_gpu`] over [`windows`](crate::bitonic::window::windows).
///
/// ```
/// use kernels_gpu::bitonic::block::window::sort_like_the_gpu;
/// use kernels_gpu::keys::IDENTITY;
///
/// let mut keys: Vec<u32> = (0..5000).map(|i| (i * 7919) % 5003).collect();
/// sort_like_the_gpu(&mut keys, 9, IDENTITY, IDENTITY);
/// assert!(keys.is_sorted());
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn sort_like_the_gpu<K: KeyBits>(keys: &mut [K], tile_log2: u32, encode: u32, decode: u32) {
    let n = keys.len() as u64;
    let passes = crate::bitonic::window::windows(n, tile_log2, crate::tuning::WINDOW_PASSENGERS);
    run_like_the_gpu(keys, passes, (encode, decode));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitonic::window::{WindowPass, windows, windows_from};
    use crate::block::{check_key_maps, xorshift};
    use crate::keys::{KIND_SIGNED, key_map};
    use crate::overlap::chunk_ranges;
    use crate::tuning::ROW_TILE_LOG2;
    use proptest::prelude::*;

    fn check<K: KeyBits + Ord + std::fmt::Debug>(keys: &[K], tile_log2: u32, what: &str) {
        let mut expected = keys.to_vec();
        expected.sort_unstable();
        let mut got = keys.to_vec();
        sort_like_the_gpu(&mut got, tile_log2, IDENTITY, IDENTITY);
        if let Some(at) = got.iter().zip(&expected).position(|(a, b)| a != b) {
            panic!(
                "{what}, L = {tile_log2}, n = {}: at {at} got {:?}, expected {:?}",
                keys.len(),
                got[at],
                expected[at]
            );
        }
    }

    /// Rows of 2^p keys of `kind` in `order`, as the tile sort stopped after stage p leaves
    /// them, against std's sort of each row by the key map's bits.
    fn check_rows<K: KeyBits + Ord + std::fmt::Debug>(
        keys: &[K],
        tile_log2: u32,
        p: u32,
        map: u32,
        what: &str,
    ) {
        let mut got = keys.to_vec();
        sort_rows_like_the_gpu(&mut got, tile_log2, p, map);
        for (r, (row, original)) in got.chunks(1 << p).zip(keys.chunks(1 << p)).enumerate() {
            let mut want = original.to_vec();
            want.sort_by_key(|k| k.encode(map));
            assert_eq!(
                row, want,
                "{what}, tiles of 2^{tile_log2}, rows of 2^{p}: row {r}"
            );
        }
    }

    #[test]
    fn the_tile_sort_stopped_after_stage_p_sorts_rows_of_2_to_the_p() {
        use crate::keys::{KIND_FLOAT, KIND_UNSIGNED};
        let mut next = xorshift(17);
        let maps: Vec<u32> = [KIND_UNSIGNED, KIND_SIGNED, KIND_FLOAT]
            .into_iter()
            .flat_map(|kind| [key_map(kind, false), key_map(kind, true)])
            .collect();
        let mut case = 0;
        for l in [9, ROW_TILE_LOG2, 13] {
            for p in SMALL_RUN_LOG2..=l {
                // One row, a few, and a count that fills no whole number of tiles (the last
                // tile short); every key map in turn.
                for rows in [1usize, 3, (2 << (l - p)) + 1] {
                    let n = rows << p;
                    let map = maps[case % maps.len()];
                    case += 1;
                    let what = format!("{rows} rows, map {map}");
                    // Few distinct keys: ties.
                    let k32: Vec<u32> = (0..n).map(|_| (next() % 9) as u32 * 0x1234_5679).collect();
                    check_rows(&k32, l, p, map, &what);
                    let k64: Vec<u64> = (0..n).map(|_| next()).collect();
                    check_rows(&k64, l, p, map, &what);
                }
            }
        }
    }

    /// Sorts the bits of `floats` as rows of 2^p (`shape`: tile log2, p, key map) like the GPU
    /// and checks each row against std's sort of the floats by `cmp`, reversed for a
    /// descending map.
    fn check_float_rows<F: Copy, K: KeyBits + core::fmt::Debug>(
        floats: &[F],
        to_bits: fn(F) -> K,
        cmp: fn(&F, &F) -> core::cmp::Ordering,
        (l, p, map): (u32, u32, u32),
        what: &str,
    ) {
        let descending = map & crate::keys::DESCENDING != 0;
        let mut bits: Vec<K> = floats.iter().map(|&f| to_bits(f)).collect();
        sort_rows_like_the_gpu(&mut bits, l, p, map);
        for (row, original) in bits.chunks(1 << p).zip(floats.chunks(1 << p)) {
            let mut want = original.to_vec();
            want.sort_by(|a, b| if descending { cmp(b, a) } else { cmp(a, b) });
            let want: Vec<K> = want.into_iter().map(to_bits).collect();
            assert_eq!(row, want, "{what}");
        }
    }

    #[test]
    fn rows_of_floats_with_nan_and_signed_zeros_follow_total_cmp() {
        use crate::keys::KIND_FLOAT;
        let mut next = xorshift(23);
        for (l, p) in [
            (13, 11),
            (13, 7),
            (ROW_TILE_LOG2, 12),
            (ROW_TILE_LOG2, 9),
            (9, 9),
        ] {
            let n = 5 << p;
            let floats: Vec<f32> = (0..n)
                .map(|i| match i % 11 {
                    0 => f32::NAN,
                    1 => -f32::NAN,
                    2 => -0.0,
                    3 => 0.0,
                    4 => f32::NEG_INFINITY,
                    _ => (next() % 13) as f32 - 6.0,
                })
                .collect();
            let doubles: Vec<f64> = floats.iter().map(|&f| f64::from(f)).collect();
            for descending in [false, true] {
                let map = key_map(KIND_FLOAT, descending);
                let what = format!("rows of 2^{p}, descending: {descending}");
                check_float_rows(&floats, f32::to_bits, f32::total_cmp, (l, p, map), &what);
                check_float_rows(&doubles, f64::to_bits, f64::total_cmp, (l, p, map), &what);
            }
        }
    }

    #[test]
    fn the_whole_tile_sort_is_the_tile_sort_stopped_after_its_last_stage() {
        // Rows of a whole tile are the tiles: the same keys as the window passes' tile sort.
        let mut next = xorshift(29);
        let keys: Vec<u32> = (0..(2 << 13) + 77).map(|_| next() as u32).collect();
        let mut rows = keys.clone();
        sort_rows_like_the_gpu(&mut rows, 13, 13, IDENTITY);
        let mut tiles = keys;
        let tile_sort = windows(tiles.len() as u64, 13, 5).take(1);
        run_like_the_gpu(&mut tiles, tile_sort, (IDENTITY, IDENTITY));
        assert_eq!(rows, tiles);
    }

    #[test]
    fn windows_of_one_row_widened_sort_every_row() {
        let mut next = xorshift(41);
        // Tiles of 2^9, rows of 2^12 (stages past the tile), 5 and 6 rows (not a power of two).
        for rows in [5usize, 6] {
            let original: Vec<u32> = (0..rows << 12).map(|_| (next() % 1000) as u32).collect();
            let mut keys = original.clone();
            let all = crate::bitonic::ceil_log2(keys.len() as u64);
            let passes = windows(1 << 12, 9, 5).map(|w| w.over(all));
            run_like_the_gpu(&mut keys, passes, (IDENTITY, IDENTITY));
            for (row, want) in keys.chunks(1 << 12).zip(original.chunks(1 << 12)) {
                let mut want = want.to_vec();
                want.sort_unstable();
                assert_eq!(row, want, "{rows} rows");
            }
        }
    }

    /// Named patterns of std's sort tests.
    fn pattern(name: &str, n: usize, next: &mut impl FnMut() -> u64) -> Vec<u32> {
        let n32 = n as u32;
        (0..n32)
            .map(|i| match name {
                "random" => next() as u32,
                "few" => (next() % 3) as u32 * (u32::MAX / 2), // includes MAX (= +∞)
                "ascending" => i,
                "descending" => n32 - i,
                "equal" => 7,
                "pipe organ" => i.min(n32 - i),
                _ => i % 17,
            })
            .collect()
    }

    #[test]
    fn lengths_around_powers_of_two_sort_with_small_tiles() {
        let mut next = xorshift(5);
        for l in [9, 13] {
            for log2 in [l + 1, l + 2, l + 5, 18] {
                for n in [(1usize << log2) - 1, 1 << log2, (1 << log2) + 1] {
                    for name in ["random", "few", "descending", "pipe organ"] {
                        check(&pattern(name, n, &mut next), l, name);
                    }
                }
            }
        }
    }

    #[test]
    fn the_gpu_tile_size_sorts_u32_and_u64() {
        let mut next = xorshift(9);
        for n in [
            1usize,
            2,
            8191,
            8192,
            8193,
            12_345,
            (1 << 14) + 1,
            100_000,
            (1 << 17) - 1,
            1 << 18,
            (1 << 20) - 3,
        ] {
            let v32: Vec<u32> = (0..n).map(|_| next() as u32).collect();
            check(&v32, 13, "u32");
            let v64: Vec<u64> = (0..n).map(|_| next()).collect();
            check(&v64, 13, "u64");
        }
        for name in ["few", "ascending", "descending", "equal", "saw"] {
            check(&pattern(name, (1 << 16) + 3, &mut next), 13, name);
        }
    }

    /// The compact windows of 8-byte keys (2^9 keys, one warp), which devices whose blocks
    /// cannot hold a 2^13-key tile of them run.
    #[test]
    fn the_compact_tile_size_sorts_u64() {
        use crate::tuning::COMPACT_WINDOW_LOG2;
        let mut next = xorshift(12);
        for n in [
            2usize,
            4095,
            4096,
            4097,
            12_345,
            (1 << 16) + 1,
            100_000,
            (1 << 18) - 1,
        ] {
            let v64: Vec<u64> = (0..n).map(|_| next()).collect();
            check(&v64, COMPACT_WINDOW_LOG2, "u64");
            let few: Vec<u64> = (0..n).map(|_| next() % 7).collect();
            check(&few, COMPACT_WINDOW_LOG2, "few u64");
        }
        check_key_maps(
            30_000,
            &mut next,
            |keys, map| sort_like_the_gpu(keys, COMPACT_WINDOW_LOG2, map, map),
            |keys, map| sort_like_the_gpu(keys, COMPACT_WINDOW_LOG2, map, map),
        );
    }

    #[test]
    fn key_maps_apply_in_the_tile_sort_and_the_last_window() {
        let mut next = xorshift(3);
        for (n, l) in [(700, 9), (9000, 9), (40_000, 13)] {
            check_key_maps(
                n,
                &mut next,
                |keys, map| sort_like_the_gpu(keys, l, map, map),
                |keys, map| sort_like_the_gpu(keys, l, map, map),
            );
        }
    }

    /// The host-slice pipeline's launches: each chunk sorted on its own (keys left encoded),
    /// then the windows of the stages above the chunk over the whole array, those at the end
    /// that stay within chunks launched chunk by chunk (the last decoding).
    fn sort_chunked(keys: &mut [u32], chunk_log2: u32, tile_log2: u32, map: u32) {
        let n = keys.len() as u64;
        let chunk = 1u64 << chunk_log2;
        if n <= chunk {
            run_like_the_gpu(keys, windows(n, tile_log2, 5), (map, map));
            return;
        }
        for range in chunk_ranges(n, chunk) {
            let part = &mut keys[range.start as usize..range.end as usize];
            let len = part.len() as u64;
            run_like_the_gpu(part, windows(len, tile_log2, 5), (map, IDENTITY));
        }
        let rest: Vec<_> = windows_from(n, chunk_log2, tile_log2, 5).collect();
        let tail = rest
            .iter()
            .rev()
            .take_while(|w| w.stays_within(chunk_log2))
            .count();
        assert!(tail >= 1, "the last window stays within a chunk");
        let (head, tail) = rest.split_at(rest.len() - tail);
        run_like_the_gpu(keys, head.iter().copied(), (IDENTITY, IDENTITY));
        for range in chunk_ranges(n, chunk) {
            let part = &mut keys[range.start as usize..range.end as usize];
            let tail = tail.iter().map(|w| w.restricted(chunk_log2));
            run_like_the_gpu(part, tail, (IDENTITY, map));
        }
    }

    #[test]
    fn chunked_launches_compose_to_the_sort() {
        let mut next = xorshift(13);
        for (chunk_log2, l) in [(11, 9), (12, 9), (14, 13)] {
            for n in [
                (1usize << chunk_log2) + 1,
                3 << chunk_log2,
                (1 << (chunk_log2 + 3)) - 5,
                (1 << (chunk_log2 + 4)) + 77,
            ] {
                let keys: Vec<u32> = (0..n).map(|_| next() as u32).collect();
                let map = key_map(KIND_SIGNED, true);
                let mut got = keys.clone();
                sort_chunked(&mut got, chunk_log2, l, map);
                let mut expected: Vec<i32> = keys.iter().map(|&k| k as i32).collect();
                expected.sort_unstable_by(|a, b| b.cmp(a));
                let expected: Vec<u32> = expected.iter().map(|&k| k as u32).collect();
                let wrong = got.iter().zip(&expected).position(|(a, b)| a != b);
                assert_eq!(wrong, None, "n = {n}, chunks of 2^{chunk_log2}, L = {l}");
            }
        }
    }

    #[test]
    fn column_positions_follow_the_window_map() {
        // Up to 2^39 keys (beyond what the CPU sorts): both position types where they apply.
        for (n, l) in [
            (1u64 << 39, 13),
            ((1 << 33) + 12_345, 13),
            (1 << 25, 13),
            (100_000, 9),
        ] {
            for w in windows(n, l, 5).skip(1) {
                let win = w.block_window();
                let shift = l - SMALL_RUN_LOG2;
                let blocks = w.blocks(n);
                for block in [0, 1, blocks / 3, blocks - 1] {
                    for t in [0, 1, 31, 32, 77, 300, 511].map(|t| t % (1 << shift)) {
                        for layout in [Layout::Columns, Layout::Middle] {
                            // The maps the load or the store would use in this layout.
                            let p = w.program;
                            let code = if layout == Layout::Middle {
                                MIDDLE
                            } else {
                                COLUMNS
                            };
                            let (map, flip) = if p.load == code {
                                (win.load_map, win.load_flip())
                            } else if p.store == code {
                                (win.store_map, win.store_flip())
                            } else {
                                continue;
                            };
                            let wide = ColumnIndex::<u64>::new(&win, map, flip, t, block);
                            let narrow = ColumnIndex::<u32>::new(&win, map, flip, t, block);
                            assert_eq!(wide.far, 0);
                            for r in 0..16 {
                                let local =
                                    crate::bitonic::block::small::local(layout, t, r, shift);
                                let expected = w.global(local, block);
                                assert_eq!(wide.of(r as usize), expected, "{layout:?} {w:?}");
                                if win.narrow() {
                                    let g = narrow.far + u64::from(narrow.of(r as usize));
                                    assert_eq!(g, expected, "{layout:?} {w:?}");
                                }
                            }
                        }
                    }
                }
            }
            assert_eq!(
                windows(n, l, 5).skip(1).all(|w| w.block_window().narrow()),
                n <= 1 << 32
            );
        }
    }

    /// The lines (of `K`) that the threads of block `block` prefetch, and those that the
    /// block's keys below n occupy.
    fn prefetched_and_loaded<K, I: Offset>(w: &WindowPass, n: u64, block: u64) -> [Vec<u64>; 2] {
        let line_keys = (L2_LINE_BYTES / size_of::<K>()) as u64;
        let win = w.block_window();
        let threads = 1 << (w.tile_log2 - SMALL_RUN_LOG2);
        // Asked by the threads of every other block of the window that has a block `block`
        // ahead of it.
        let mut asked = Vec::new();
        for (from, later) in [
            (0, block),
            (block / 2, block),
            (block.saturating_sub(1), block),
        ] {
            if from >= later && later > 0 {
                continue;
            }
            let mut lines: Vec<u64> = (0..threads)
                .filter_map(|t| {
                    let index = ColumnIndex::<I>::new(&win, win.load_map, win.load_flip(), t, from);
                    prefetch_position::<K, I>(&win, &index, t, n, (from, later))
                })
                .map(|g| g / line_keys)
                .collect();
            lines.sort_unstable();
            if !asked.is_empty() {
                assert_eq!(lines, asked, "prefetched from block {from}");
            }
            asked = lines;
        }
        let mut held: Vec<u64> = (0..1 << w.tile_log2)
            .map(|local| w.global(local, block))
            .filter(|&g| g < n)
            .map(|g| g / line_keys)
            .collect();
        held.sort_unstable();
        held.dedup();
        [asked, held]
    }

    #[test]
    fn a_block_prefetches_each_line_of_its_keys_once() {
        for (n, l) in [
            ((1u64 << 33) + 12_345, 13),
            (1 << 25, 13),
            ((1 << 22) + 777, 13),
            (100_000, 9),
            (3_000, 9),
        ] {
            for w in windows(n, l, 5).skip(1) {
                let blocks = w.blocks(n);
                for block in [0, 1, blocks / 3, blocks - 1] {
                    let what = format!("n = {n}, block {block}, {w:?}");
                    let [asked, held] = prefetched_and_loaded::<u64, u64>(&w, n, block);
                    assert_eq!(asked, held, "u64 keys, {what}");
                    let [asked, held] = prefetched_and_loaded::<u32, u64>(&w, n, block);
                    assert_eq!(asked, held, "u32 keys, {what}");
                    if w.block_window().narrow() {
                        let narrow = prefetched_and_loaded::<u32, u32>(&w, n, block);
                        assert_eq!(narrow, [asked, held], "32-bit offsets, {what}");
                    }
                }
            }
        }
    }

    #[test]
    fn sixty_four_bit_positions_sort_too() {
        let mut next = xorshift(21);
        for (n, l) in [(70_000, 13), (5000, 9)] {
            let keys: Vec<u64> = (0..n).map(|_| next()).collect();
            let mut got = keys.clone();
            run_on_the_cpu(
                &mut got,
                windows(n as u64, l, 5),
                (IDENTITY, IDENTITY),
                true,
            );
            let mut expected = keys;
            expected.sort_unstable();
            assert_eq!(got, expected, "n = {n}, L = {l}");
        }
    }

    #[test]
    fn without_the_complement_the_flip_would_be_wrong() {
        // The crossing step is not a compare-exchange on complemented keys: x = 5 below and
        // y = 3 above, stored as !3.
        let mut run: Run<u32> = [0; 16];
        run[0] = 5;
        run[8] = !3;
        crossing_register_step(&mut run);
        assert_eq!((run[0], !run[8]), (3, 5));
        let (a, c) = (5u32, !3u32);
        assert_ne!(a.min(c), 3, "a plain compare-exchange keeps 5 below");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn random_lengths_and_patterns_sort(
            n in 0usize..(1 << 16),
            l in prop::sample::select(vec![9u32, 9, 13]),
            seed: u64,
            name in prop::sample::select(vec!["random", "few", "ascending", "descending", "pipe organ", "saw"]),
        ) {
            let mut next = xorshift(seed);
            check(&pattern(name, n, &mut next), l, name);
        }

        #[test]
        fn chunked_sorts_any_length(n in 1usize..(1 << 15), seed: u64) {
            let mut next = xorshift(seed);
            let keys: Vec<u32> = (0..n).map(|_| (next() % 1000) as u32).collect();
            let mut got = keys.clone();
            sort_chunked(&mut got, 10, 9, IDENTITY);
            let mut expected = keys;
            expected.sort_unstable();
            prop_assert_eq!(got, expected);
        }
    }
}
