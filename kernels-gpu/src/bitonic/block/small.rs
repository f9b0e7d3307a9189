//! What one block of the one-launch small sort does in a window ([`crate::bitonic::small`]): load its
//! 2^L keys into registers, run the window's steps, store them. Generic over the block's
//! threads ([`Team`] with runs of [`SMALL_RUN`] keys), so that the CPU tests run it through
//! [`CpuTeam`](crate::block::CpuTeam), which checks that no barrier is missing.
//!
//! # Layouts
//!
//! Each thread keeps [`SMALL_RUN`] keys in registers, in one of two layouts of the block's
//! local index (T = 2^(L − 4) threads, thread t, register r):
//! - *runs*: local `t·16 + r`. Steps on local bits 0..4 compare registers of one thread, bits
//!   4..9 registers of two lanes of a warp (shuffles);
//! - *columns*: local `r·T + t`. Steps on local bits L − 4 .. L compare registers of one
//!   thread. Loads and stores of global memory use this layout: a warp's 32 threads touch 32
//!   consecutive local keys, which are consecutive in global memory within the runs a window's
//!   fixed bits leave.
//!
//! A step on bit q ≥ L − 4 runs in columns, every other step in runs (L ≤ 13, so q < L − 4 ≤ 9
//! is a register or lane bit there). Changing layout is a transpose through shared memory: each
//! thread writes its registers, one barrier, each reads its new ones. The slots a thread writes
//! are the ones it read in the transpose before, so no barrier is needed before the writes, and
//! one tile of shared memory serves all transposes (the CPU tests' race check confirms it).
//!
//! The window passes ([`crate::bitonic::block::window`]) reuse this engine (its steps and transposes)
//! with a third layout, *middle* (local `(t / 32)·512 + r·32 + t % 32`: local bits 5..9 in
//! registers). The one-tile sort ([`SmallSort::sort_single_tile`]) takes the middle layout
//! too, and a fourth, *quads* (local bits 4..8 in registers), where a stage's steps on those
//! bits would otherwise be lane steps (`Route`).

use crate::bitonic::small::{BlockWindow, SmallPlan, conversion_mask, flips};
use crate::bitonic::{compare_exchange, sort_sixteen};
#[cfg(not(target_arch = "nvptx64"))]
use crate::block::CpuTeam;
use crate::block::{SharedMem, Team};
use crate::keys::{IDENTITY, KeyBits};
use crate::tuning::{SMALL_RUN, SMALL_RUN_LOG2};

const RUN: usize = SMALL_RUN as usize;

/// One thread's keys.
pub type Run<K> = [K; RUN];

/// Where each of a block's keys sits: which thread, which register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Local index `t·RUN + r`: registers hold local bits 0..4, lanes 4..9, warps the rest.
    Runs,
    /// Local index `r·threads + t`: registers hold the top 4 local bits, lanes 0..5.
    Columns,
    /// Local index `(t / 32)·512 + r·32 + t % 32`: registers hold local bits 5..9, lanes 0..5,
    /// warps 9 and up (the window passes' third layout, and the one-tile sort's
    /// [`Route::Middle`]).
    Middle,
    /// Local index `(t / 64)·1024 + (t / 16 % 2)·512 + (t / 32 % 2)·256 + r·16 + t % 16`:
    /// registers hold local bits 4..8, lanes 0..4 and 9, warps 8 and 10 up (the one-tile
    /// sort's [`Route::Quads`], whose steps on bits 7..4 are then register steps). Lane 16's
    /// keys sit 512 + 16 slots past lane 0's, a half of the banks away, so a warp's 32 slots
    /// hit 32 banks; two warps at least (2^10 keys).
    Quad,
}

/// Local index of thread `t`'s register `r` in `layout`; `column_shift` = log2 of the threads.
/// (The kernels address shared memory through [`slot`], which the tests check against this.)
#[cfg(test)]
pub(crate) fn local(layout: Layout, t: u32, r: u32, column_shift: u32) -> u32 {
    match layout {
        Layout::Runs => t * SMALL_RUN + r,
        Layout::Columns => (r << column_shift) | t,
        Layout::Middle => ((t >> 5) << 9) | (r << 5) | (t & 31),
        Layout::Quad => quad_local(t) | (r << 4),
    }
}

/// Thread `t`'s part of its local indices in [`Layout::Quad`] (register r adds `r·16`).
#[inline(always)]
fn quad_local(t: u32) -> u32 {
    ((t >> 6) << 10) | (((t >> 4) & 1) << 9) | (((t >> 5) & 1) << 8) | (t & 15)
}

/// Shared-memory slot of the key in thread `t`'s register `r`: its local index in `layout`
/// with one padding key after every 32, so that a warp's accesses in either layout hit 32
/// different banks (for 4-byte keys); written so that it is a per-thread base plus a constant
/// per register (an immediate offset of `STS`/`LDS`): in columns
/// (2^column_shift threads, a multiple of 32) `r·(T + T/32) + t + t/32`; in runs, where a run
/// of 16 never crosses a multiple of 32, `t·16 + t/2 + r`; in the middle layout
/// `(t / 32)·528 + t % 32 + r·33`; in quads, where registers 2i and 2i + 1 share a multiple of
/// 32, the thread's part padded (`q + q/32`) plus `r·16 + r/2`.
#[inline(always)]
pub(crate) fn slot(layout: Layout, t: u32, r: u32, column_shift: u32) -> u32 {
    match layout {
        Layout::Runs => t * SMALL_RUN + t / 2 + r,
        Layout::Columns => {
            let threads = 1 << column_shift;
            r * (threads + threads / 32) + t + t / 32
        }
        Layout::Middle => (t >> 5) * 528 + (t & 31) + r * 33,
        Layout::Quad => {
            let q = quad_local(t);
            q + q / 32 + r * 16 + r / 2
        }
    }
}

const _: () = assert!(
    SMALL_RUN == 16,
    "slot() and Layout::Middle assume runs of 16 keys"
);

/// Calls `f(r)` for every register `r < RUN`, written out: LLVM does not always unroll a loop
/// with a large body, and a register array indexed in a loop moves to local memory.
#[inline(always)]
pub(crate) fn each_register(mut f: impl FnMut(usize)) {
    macro_rules! calls {
        ($($r:literal)*) => { $( if $r < RUN { f($r) } )* };
    }
    calls!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

const _: () = assert!(RUN <= 32, "each_register calls 32 registers at most");

/// The step on register bit `J` (registers `r`, `r + 2^J`) if `bottom ≤ J ≤ top`.
#[inline(always)]
fn register_step<K: KeyBits, const J: u32>(run: &mut Run<K>, top: u32, bottom: u32) {
    if J < SMALL_RUN_LOG2 && bottom <= J && J <= top {
        let d = 1usize << J;
        each_register(|i| {
            if i & d == 0 {
                compare_exchange(&mut run[..], i, i + d);
            }
        });
    }
}

/// Steps on register bits `top ..= bottom` (those below [`SMALL_RUN_LOG2`]), highest first.
/// Each bit is a constant, so the registers are addressed by constants only.
#[inline(always)]
pub(crate) fn register_steps<K: KeyBits>(run: &mut Run<K>, top: u32, bottom: u32) {
    register_step::<K, 4>(run, top, bottom);
    register_step::<K, 3>(run, top, bottom);
    register_step::<K, 2>(run, top, bottom);
    register_step::<K, 1>(run, top, bottom);
    register_step::<K, 0>(run, top, bottom);
}

const _: () = assert!(
    SMALL_RUN_LOG2 <= 5,
    "register_steps covers register bits 0..5"
);

/// Global indices of one thread's keys in columns: register r holds local `(r << shift) | t`,
/// whose global index is the thread's part plus the spread of each set bit of r, each spread
/// computed once per window (the local bits are disjoint, so the spreads add).
#[derive(Clone, Copy)]
struct ColumnIndex {
    base: u32,
    bit: [u32; 5],
}

impl ColumnIndex {
    #[inline(always)]
    fn new(win: &BlockWindow, t: u32, block: u32, shift: u32) -> Self {
        let spread = |b: u32| {
            if b < SMALL_RUN_LOG2 {
                win.spread(1 << (shift + b))
            } else {
                0
            }
        };
        ColumnIndex {
            base: win.global(t, block),
            bit: [spread(0), spread(1), spread(2), spread(3), spread(4)],
        }
    }

    /// Global index of register `r` (a constant after unrolling, so the tests of its bits
    /// fold away).
    #[inline(always)]
    fn of(&self, r: usize) -> u32 {
        let mut g = self.base;
        for (b, &spread) in self.bit.iter().enumerate() {
            if r >> b & 1 == 1 {
                g += spread;
            }
        }
        g
    }
}

/// One block of the small sort.
pub struct SmallSort<K, T> {
    team: T,
    plan: SmallPlan,
    block: u32,
    layout: Layout,
    _keys: core::marker::PhantomData<K>,
}

impl<K: KeyBits, T: Team<K, RUN>> SmallSort<K, T> {
    /// Block `block` of `plan`.
    ///
    /// # Safety
    /// The team's shared memory holds `tile_shared_words(2^plan.tile_log2)` keys used by this
    /// block alone; the team has `plan.threads()` threads.
    #[inline(always)]
    pub unsafe fn new(team: T, plan: SmallPlan, block: u32) -> Self {
        SmallSort {
            team,
            plan,
            block,
            layout: Layout::Columns,
            _keys: core::marker::PhantomData,
        }
    }

    /// The team, for another block (the CPU tests) or another use of the same threads.
    #[inline(always)]
    pub fn into_team(self) -> T {
        self.team
    }

    /// Window `w` of the sort of `keys[..n]`: load this block's keys (from `keys` through the
    /// key map `encode`, +∞ past `n`, in window 0; from `scratch` after), run the window's
    /// steps, store them (to `keys[..n]` through the inverse of `decode` in the last window; to
    /// `scratch` before).
    ///
    /// # Safety
    /// `keys` holds `n ≤ 2^plan.log2` keys and `scratch` 2^plan.log2; every block of the plan
    /// runs window `w − 1` completely (all of them, with their memory effects visible) before
    /// any runs window `w`.
    #[inline(always)]
    pub unsafe fn window(
        &mut self,
        w: u32,
        keys: *mut K,
        scratch: *mut K,
        n: u32,
        encode: u32,
        decode: u32,
    ) {
        let win = self.plan.window(w);
        let first = w == 0;
        let last = w + 1 == self.plan.windows();
        // SAFETY: the caller's contract; a window's blocks touch disjoint positions.
        unsafe { self.load(&win, if first { keys } else { scratch }, first, n, encode) };
        if win.sort {
            self.sort_tile(&win);
        } else {
            if win.tail_stage != 0 {
                self.steps(win.tail_top, 0);
            }
            if win.head_stage != 0 {
                if win.convert_head {
                    self.convert(&win, win.head_stage);
                }
                self.steps(self.plan.tile_log2 - 1, win.head_bottom);
            }
        }
        // SAFETY: as above.
        unsafe { self.store(&win, if last { keys } else { scratch }, last, n, decode) };
    }

    /// The whole sort of a plan with one block (one window) of `src[..n]` into `dst[..n]`
    /// (which may be `src`: every load comes before every store), as
    /// [`SmallSort::window`]`(0, ..)` does it in place, with the stages written out rather than looped
    /// over: with the plan a constant (the window passes' tile sort), every step's bits are
    /// known and the code is straight-line, with no register moves at loop or branch joins.
    ///
    /// With `stages` below the tile's log2 it stops after stage `stages`: the tile is then
    /// 2^(L − stages) networks of 2^`stages` positions side by side, each sorted ascending (the
    /// stage storage of [`crate::bitonic::small`] on 2^`stages` positions: the last stage run is
    /// stored as it is, and every earlier one is the same in each network, since a stage k
    /// < `stages` complements by bit k alone). That sorts every aligned row of 2^`stages` keys
    /// ([`crate::segments::row_tile_stages`]). `stages = plan.tile_log2`, a constant,
    /// is the whole sort, with no stage tested at run time.
    ///
    /// # Safety
    /// As [`SmallSort::window`]; the plan has one block; [`SMALL_RUN_LOG2`] ≤ `stages` ≤
    /// `plan.tile_log2` (fewer would leave each run of 16 keys sorted whole).
    #[inline(always)]
    pub unsafe fn sort_single_tile(
        &mut self,
        src: *const K,
        dst: *mut K,
        n: u32,
        stages: u32,
        encode: u32,
        decode: u32,
    ) {
        debug_assert_eq!(self.plan.windows(), 1);
        debug_assert!(SMALL_RUN_LOG2 <= stages && stages <= self.plan.tile_log2);
        // Window 0's positions are the tile's local ones whatever the network's length: only the
        // storage of each stage depends on it.
        let win = BlockWindow {
            log2: stages,
            ..self.plan.window(0)
        };
        // A full tile needs no bounds checks, the identity map no mapping: then load and store
        // as the small sort's middle windows do, from memory that holds every position.
        let full = n >= 1 << self.plan.tile_log2;
        // SAFETY: the caller's contract; a full tile holds the plan's 2^log2 positions.
        unsafe {
            if full && encode == IDENTITY {
                self.load(&win, src, false, n, encode);
            } else {
                self.load(&win, src, true, n, encode);
            }
        }
        self.to(Layout::Runs);
        self.team.each(|_, run, _| sort_sixteen(run));
        let tile_log2 = self.plan.tile_log2;
        macro_rules! stages {
            ($($stage:literal)*) => {$(
                if $stage <= stages {
                    self.convert(&win, $stage);
                    match route(tile_log2, $stage) {
                        Route::Runs => self.steps($stage - 1, 0),
                        Route::Quads => self.steps_through_quads($stage - 1),
                        Route::Middle => self.steps_through_middle($stage - 1),
                    }
                }
            )*};
        }
        const _: () = assert!(SMALL_RUN_LOG2 == 4, "stages 5 ..= 13 below");
        stages!(5 6 7 8 9 10 11 12 13);
        // SAFETY: as above.
        unsafe {
            if full && decode == IDENTITY {
                self.store(&win, dst, false, n, decode);
            } else {
                self.store(&win, dst, true, n, decode);
            }
        }
    }

    /// Global memory → registers (columns), converting each key to the window's storage.
    ///
    /// # Safety
    /// `src` holds `n` keys if `first`, else 2^log2.
    #[inline(always)]
    unsafe fn load(&mut self, win: &BlockWindow, src: *const K, first: bool, n: u32, encode: u32) {
        let (win, block) = (*win, self.block);
        let shift = self.plan.tile_log2 - SMALL_RUN_LOG2;
        let flip_mask = conversion_mask(win.load_from, win.load_to, win.log2);
        self.team.each(|t, run, _| {
            let index = ColumnIndex::new(&win, t, block, shift);
            // All of a thread's loads first, then what is done with the keys: each use right
            // after its load made the thread wait for every load in turn (docs/decisions.md,
            // "Loads in flight together"). Past n the first window reads key
            // n − 1 (no branch around the load) and stands +∞ in for it.
            let last = if first {
                n.checked_sub(1)
            } else {
                Some(u32::MAX)
            };
            match last {
                Some(last) => each_register(|r| {
                    // SAFETY: min(g, n − 1) < n in the first window; g < 2^log2, the scratch's
                    // length, after.
                    run[r] = unsafe { *src.add(index.of(r).min(last) as usize) };
                }),
                None => *run = [K::INFINITY; RUN],
            }
            each_register(|r| {
                let g = index.of(r);
                let key = if !first {
                    run[r]
                } else if g < n {
                    run[r].encode(encode)
                } else {
                    K::INFINITY
                };
                run[r] = key.complement((g & flip_mask).count_ones() & 1 == 1);
            })
        });
        self.layout = Layout::Columns;
    }

    /// Registers → global memory (in columns); in the last window only positions below `n`,
    /// through the inverse of `decode`.
    ///
    /// # Safety
    /// As [`SmallSort::load`] with `last` for `first`.
    #[inline(always)]
    unsafe fn store(&mut self, win: &BlockWindow, dst: *mut K, last: bool, n: u32, decode: u32) {
        self.to(Layout::Columns);
        let (win, block) = (*win, self.block);
        let shift = self.plan.tile_log2 - SMALL_RUN_LOG2;
        self.team.each(|t, run, _| {
            let index = ColumnIndex::new(&win, t, block, shift);
            each_register(|r| {
                let g = index.of(r);
                if !last {
                    // SAFETY: g < 2^log2.
                    unsafe { *dst.add(g as usize) = run[r] };
                } else if g < n {
                    // SAFETY: g < n.
                    unsafe { *dst.add(g as usize) = run[r].decode(decode) };
                }
            })
        });
    }

    /// Window 0: sorts the block's keys (stages 1 ..= L), each 2^k-key group ascending in
    /// stage k's storage.
    #[inline(always)]
    fn sort_tile(&mut self, win: &BlockWindow) {
        self.to(Layout::Runs);
        // Stages 1 ..= log2 RUN: the load stored keys as for stage log2 RUN, in which a run is
        // sorted ascending; any sort of the run does.
        self.team.each(|_, run, _| sort_sixteen(run));
        let mut stage = SMALL_RUN_LOG2 + 1;
        while stage <= self.plan.tile_log2 {
            self.convert(win, stage);
            self.steps(stage - 1, 0);
            stage += 1;
        }
    }

    /// The steps of one stage on local bits `top ..= 0` (top ≥ 8), with the middle layout:
    /// bits from L − 4 up in columns, 8..5 in middle (register steps where [`SmallSort::steps`]
    /// would take four lane steps), 4 as a lane step there, 3..0 in runs. One layout switch
    /// more than `steps`, three lane steps fewer.
    #[inline(always)]
    fn steps_through_middle(&mut self, top: u32) {
        let columns_from = self.plan.tile_log2 - SMALL_RUN_LOG2;
        if columns_from > 8 && top >= columns_from {
            self.to(Layout::Columns);
            self.team
                .each(|_, run, _| register_range(run, top - columns_from, 0));
        }
        self.to(Layout::Middle);
        // Local bits 5..9 are the middle's registers 0..4, local bits 0..5 its lanes.
        self.team
            .each(|_, run, _| register_range(run, top.min(8) - 5, 0));
        lane_step(&mut self.team, SMALL_RUN_LOG2);
        self.to(Layout::Runs);
        self.team
            .each(|_, run, _| register_range(run, SMALL_RUN_LOG2 - 1, 0));
    }

    /// The steps of one stage on local bits `top ..= 0` with quads ([`Route::Quads`]): bits
    /// from 9 up in columns (a tile of 2^12, whose columns hold bits 8..12), bit 8 as a lane
    /// step in runs, bits 7..4 as register steps in quads, 3..0 in runs.
    #[inline(always)]
    fn steps_through_quads(&mut self, top: u32) {
        const QUAD_TOP: u32 = 2 * SMALL_RUN_LOG2 - 1;
        if top > QUAD_TOP + 1 {
            debug_assert_eq!(self.plan.tile_log2, QUAD_COLUMNS_TILE_LOG2);
            self.to(Layout::Columns);
            self.team
                .each(|_, run, _| register_range(run, top - QUAD_TOP - 1, 0));
        } else if top == QUAD_TOP + 1 {
            // In runs since the stage's conversion; bit 8 is their lane bit 4.
            lane_step(&mut self.team, QUAD_TOP + 1 - SMALL_RUN_LOG2);
        }
        self.to(Layout::Quad);
        // Local bits 4..8 are the quads' registers 0..4.
        self.team
            .each(|_, run, _| register_range(run, top.min(QUAD_TOP) - SMALL_RUN_LOG2, 0));
        self.to(Layout::Runs);
        self.team
            .each(|_, run, _| register_range(run, SMALL_RUN_LOG2 - 1, 0));
    }

    /// Converts the keys from stage `stage − 1`'s storage to `stage`'s. In runs, where a
    /// thread's keys share global bits `stage − 1` and `stage` (a tested property of the plans),
    /// so one mask serves the whole run.
    #[inline(always)]
    fn convert(&mut self, win: &BlockWindow, stage: u32) {
        self.to(Layout::Runs);
        let (win, block) = (*win, self.block);
        self.team.each(|t, run, _| {
            let flip = flips(stage - 1, stage, win.global(t * SMALL_RUN, block), win.log2);
            each_register(|r| run[r] = run[r].complement(flip));
        });
    }

    /// The steps of one stage on local bits `top ..= bottom`, highest first: the lower local
    /// index of each pair keeps the smaller key.
    #[inline(always)]
    fn steps(&mut self, top: u32, bottom: u32) {
        let columns_from = self.plan.tile_log2 - SMALL_RUN_LOG2;
        let mut top = top;
        if top >= columns_from {
            self.to(Layout::Columns);
            let low = bottom.max(columns_from) - columns_from;
            let high = top - columns_from;
            self.team.each(|_, run, _| register_range(run, high, low));
            if bottom >= columns_from {
                return;
            }
            top = columns_from - 1;
        }
        self.to(Layout::Runs);
        let lanes_low = bottom.max(SMALL_RUN_LOG2);
        if top >= lanes_low {
            lane_steps_down(&mut self.team, top - SMALL_RUN_LOG2, top + 1 - lanes_low);
        }
        if bottom < SMALL_RUN_LOG2 {
            let high = top.min(SMALL_RUN_LOG2 - 1);
            self.team
                .each(|_, run, _| register_range(run, high, bottom));
        }
    }

    /// Moves the keys into `target`'s layout through shared memory (nothing if already there).
    #[inline(always)]
    fn to(&mut self, target: Layout) {
        let shift = self.plan.tile_log2 - SMALL_RUN_LOG2;
        transpose(&mut self.team, self.layout, target, shift);
        self.layout = target;
    }
}

/// In the one-tile sort ([`SmallSort::sort_single_tile`]), stages above this one run their
/// steps on local bits 8..5 in the middle layout (register steps) rather than as lane steps in
/// runs: from stage 9, where the four lane steps saved outweigh the layout switch added.
const MIDDLE_FROM_STAGE: u32 = 8;

/// In the one-tile sort, stages from this one run their steps on local bits 7..4 in quads
/// ([`Route::Quads`]): from stage 6, where two lane steps saved outweigh the two layout
/// switches added.
const QUAD_FROM_STAGE: u32 = 6;

/// Quads need two warps (local bits 8 and 9 outside a warp's lanes 0..4).
const QUAD_MIN_TILE_LOG2: u32 = 10;

/// The tile whose columns hold local bits 8 ..= 11, just above the quads' registers: there
/// quads serve the stages above [`MIDDLE_FROM_STAGE`] too.
const QUAD_COLUMNS_TILE_LOG2: u32 = 12;

/// How the one-tile sort runs the steps of a stage, on its local bits `stage − 1 ..= 0`. What
/// decides is the min/max that bound the tile sort's issue (the ALU pipe) beside its shared
/// memory (the MIO pipe; docs/decisions.md, "Rows in tiles of 2^12: quads and a 16-key
/// network"): a register step costs one min/max per key; a lane
/// step a shuffle and two (each lane keeps its side's); a layout switch a store and a load of
/// shared memory per key and a barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// Bits 4 and up as lane steps in runs, 3..0 as register steps ([`SmallSort::steps`]).
    Runs,
    /// Bits 7..4 as register steps in quads (`SmallSort::steps_through_quads`).
    Quads,
    /// Bits 8..5 as register steps in the middle layout, 4 a lane step there
    /// (`SmallSort::steps_through_middle`).
    Middle,
}

/// The route of `stage` in the tile sort of 2^`tile_log2` keys.
///
/// Stage 5 keeps its single lane step. Quads take stages 6 ..= 8 on tiles of two warps or
/// more, and every later stage on a tile of 2^12; the middle layout, the later stages of
/// other tiles (on 2^13, quads would leave bit 8 outside the columns: a lane step more).
const fn route(tile_log2: u32, stage: u32) -> Route {
    if stage > MIDDLE_FROM_STAGE && tile_log2 != QUAD_COLUMNS_TILE_LOG2 {
        Route::Middle
    } else if stage >= QUAD_FROM_STAGE && tile_log2 >= QUAD_MIN_TILE_LOG2 {
        Route::Quads
    } else {
        Route::Runs
    }
}

/// The step on lane bit `b`: register r of lane t meets register r of lane `t ^ 2^b`; the
/// lower lane keeps the minimum.
#[inline(always)]
pub(crate) fn lane_step<K: KeyBits, T: Team<K, RUN>>(team: &mut T, b: u32) {
    let mask = 1 << b;
    team.exchange(mask, |t, run, theirs| {
        let lower = t & mask == 0;
        each_register(|r| {
            let (mine, other) = (run[r], theirs[r]);
            let (lo, hi) = if other < mine {
                (other, mine)
            } else {
                (mine, other)
            };
            run[r] = if lower { lo } else { hi };
        });
    });
}

/// `count` (at most 5) lane steps on lane bits `top`, `top − 1`, …, each run length written
/// out as straight-line code: in a loop, every lane step would move each key back to its
/// loop-carried register.
#[inline(always)]
pub(crate) fn lane_steps_down<K: KeyBits, T: Team<K, RUN>>(team: &mut T, top: u32, count: u32) {
    #[inline(always)]
    fn run<K: KeyBits, T: Team<K, RUN>, const N: u32>(team: &mut T, top: u32) {
        macro_rules! steps {
            ($($k:literal)*) => { $( if $k < N { lane_step(team, top - $k); } )* };
        }
        steps!(0 1 2 3 4);
    }
    match count {
        0 => {}
        1 => run::<K, T, 1>(team, top),
        2 => run::<K, T, 2>(team, top),
        3 => run::<K, T, 3>(team, top),
        4 => run::<K, T, 4>(team, top),
        _ => run::<K, T, 5>(team, top),
    }
}

/// Register steps on register bits `top ..= bottom` (highest first), each range written out as
/// straight-line code: with the bits known, the compare-exchanges need no register moves at
/// branch joins (a conditional step costs about 25 instructions instead of 16).
#[inline(always)]
pub(crate) fn register_range<K: KeyBits>(run: &mut Run<K>, top: u32, bottom: u32) {
    const _: () = assert!(SMALL_RUN_LOG2 == 4);
    match (top, bottom) {
        (3, 0) => register_steps(run, 3, 0),
        (3, 1) => register_steps(run, 3, 1),
        (3, 2) => register_steps(run, 3, 2),
        (3, 3) => register_steps(run, 3, 3),
        (2, 0) => register_steps(run, 2, 0),
        (2, 1) => register_steps(run, 2, 1),
        (2, 2) => register_steps(run, 2, 2),
        (1, 0) => register_steps(run, 1, 0),
        (1, 1) => register_steps(run, 1, 1),
        (0, 0) => register_steps(run, 0, 0),
        _ => {}
    }
}

/// Moves a block's keys from layout `from` into layout `to` through shared memory (nothing if
/// they are the same); `column_shift` = log2 of the block's threads. Each thread writes its
/// registers, one barrier, each reads its new ones. The slots a thread writes are those it
/// read in the transpose before (or none), which no other thread reads: no barrier is needed
/// before the writes, and one tile of shared memory serves all transposes (the CPU tests' race
/// check confirms it).
#[inline(always)]
pub(crate) fn transpose<K: KeyBits, T: Team<K, RUN>>(
    team: &mut T,
    from: Layout,
    to: Layout,
    column_shift: u32,
) {
    if from == to {
        return;
    }
    write_slots(team, from, column_shift);
    team.sync();
    read_slots(team, to, column_shift);
}

/// The first half of a transpose: every thread writes its registers to their slots in
/// `layout`. Callers with a layout known only at run time dispatch to a constant one, so that
/// the slots are constants per register.
#[inline(always)]
pub(crate) fn write_slots<K: KeyBits, T: Team<K, RUN>>(team: &mut T, layout: Layout, shift: u32) {
    team.each(|t, run, shared| {
        each_register(|r| {
            let slot = slot(layout, t, r as u32, shift);
            // SAFETY: slot < tile_shared_words(2^tile_log2), the engines' contract.
            unsafe { shared.write(t, slot, run[r]) };
        })
    });
}

/// The second half of a transpose (after a barrier): every thread reads its registers from
/// their slots in `layout`.
#[inline(always)]
pub(crate) fn read_slots<K: KeyBits, T: Team<K, RUN>>(team: &mut T, layout: Layout, shift: u32) {
    team.each(|t, run, shared| {
        each_register(|r| {
            let slot = slot(layout, t, r as u32, shift);
            // SAFETY: as above.
            run[r] = unsafe { shared.read(t, slot) };
        })
    });
}

/// Sorts `keys` as the `bitonic_small_*` kernel does, on the CPU: every block of the plan for
/// `keys.len()` through every window, blocks one after another within a window (their keys
/// are disjoint), with a barrier between windows. For the tests; `plan` may be any plan that
/// fits `keys.len()`.
///
/// # Panics
/// If the plan has fewer than `keys.len()` positions, or on a shared-memory race.
///
/// # Examples
///
/// ```
/// use kernels_gpu::bitonic::block::small::sort_like_the_gpu;
/// use kernels_gpu::keys::IDENTITY;
/// use kernels_gpu::bitonic::small::SmallPlan;
///
/// let mut keys: Vec<u32> = (0..3000).map(|i| (i * 7919) % 3001).collect();
/// sort_like_the_gpu(&mut keys, SmallPlan::new(12, 10).unwrap(), IDENTITY, IDENTITY);
/// assert!(keys.is_sorted());
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn sort_like_the_gpu<K: KeyBits>(keys: &mut [K], plan: SmallPlan, encode: u32, decode: u32) {
    use crate::tuning::tile_shared_words;
    assert!(keys.len() as u64 <= 1 << plan.log2);
    let n = keys.len() as u32;
    let mut scratch = vec![K::INFINITY; 1 << plan.log2];
    let slots = tile_shared_words(1 << plan.tile_log2);
    let mut blocks: Vec<SmallSort<K, CpuTeam<K, RUN>>> = (0..plan.blocks())
        // SAFETY: the team has the plan's threads and a tile's shared memory.
        .map(|b| unsafe { SmallSort::new(CpuTeam::new(plan.threads(), slots), plan, b) })
        .collect();
    for w in 0..plan.windows() {
        for block in &mut blocks {
            // The grid barrier's block barrier.
            block.team.sync();
            // SAFETY: keys and scratch hold n and 2^log2 keys; window w − 1 is done everywhere.
            unsafe {
                block.window(
                    w,
                    keys.as_mut_ptr(),
                    scratch.as_mut_ptr(),
                    n,
                    encode,
                    decode,
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{check_key_maps, xorshift};
    use crate::keys::{DESCENDING, IDENTITY};
    use proptest::prelude::*;

    fn check<K: KeyBits + Ord + std::fmt::Debug>(keys: &[K], plan: SmallPlan) {
        let mut expected = keys.to_vec();
        expected.sort_unstable();
        let mut got = keys.to_vec();
        sort_like_the_gpu(&mut got, plan, IDENTITY, IDENTITY);
        if got != expected {
            let at = got.iter().zip(&expected).position(|(a, b)| a != b).unwrap();
            panic!(
                "{plan:?}, n = {}: at {at} got {:?}, expected {:?}",
                keys.len(),
                got[at],
                expected[at]
            );
        }
    }

    #[test]
    fn every_tuned_length_class_sorts_u32_and_u64() {
        // Lengths around the block sizes and powers of two up to 2^16, both widths.
        let mut next = xorshift(7);
        for n in [
            0, 1, 2, 31, 512, 513, 1000, 4095, 4096, 4097, 8191, 8192, 8193, 12345, 16385, 32769,
            65535, 65536,
        ] {
            let plan = SmallPlan::for_len(n as u64);
            let v32: Vec<u32> = (0..n).map(|_| next() as u32).collect();
            check(&v32, plan);
            let v64: Vec<u64> = (0..n).map(|_| next()).collect();
            check(&v64, plan);
        }
    }

    #[test]
    fn every_plan_shape_sorts() {
        // Every feasible block size (9 ..= 13 bits) with 1 to 16 blocks, full and partial.
        let mut next = xorshift(11);
        for tile in 9..=13 {
            for log2 in tile..=tile + 4 {
                let Some(plan) = SmallPlan::new(log2, tile) else {
                    continue;
                };
                for n in [(1usize << log2) - 3, (1 << (log2 - 1)) + 1, 1 << log2] {
                    let keys: Vec<u32> = (0..n).map(|_| (next() % 1000) as u32).collect();
                    check(&keys, plan);
                }
            }
        }
    }

    #[test]
    fn key_maps_apply_on_first_load_and_last_store() {
        let mut next = xorshift(3);
        for n in [700, 9000, 40000] {
            let plan = SmallPlan::for_len(n as u64);
            check_key_maps(
                n,
                &mut next,
                |keys, map| sort_like_the_gpu(keys, plan, map, map),
                |keys, map| sort_like_the_gpu(keys, plan, map, map),
            );
        }
        assert_eq!(DESCENDING & IDENTITY, 0);
    }

    #[test]
    fn stages_take_quads_where_they_save_lane_steps() {
        let routes = |tile_log2| (5..=tile_log2).map(move |s| route(tile_log2, s));
        let (r, q, m) = (Route::Runs, Route::Quads, Route::Middle);
        assert!(routes(9).eq([r, r, r, r, m]));
        assert!(routes(10).eq([r, q, q, q, m, m]));
        assert!(routes(12).eq([r, q, q, q, q, q, q, q]));
        assert!(routes(13).eq([r, q, q, q, m, m, m, m, m]));
    }

    /// The layouts of a block of 2^`shift` threads (quads from two warps).
    fn layouts(shift: u32) -> &'static [Layout] {
        const ALL: [Layout; 4] = [Layout::Runs, Layout::Columns, Layout::Middle, Layout::Quad];
        if shift + SMALL_RUN_LOG2 >= QUAD_MIN_TILE_LOG2 {
            &ALL
        } else {
            &ALL[..3]
        }
    }

    #[test]
    fn every_layout_places_each_local_index_once() {
        for shift in 5..=9 {
            for &layout in layouts(shift) {
                let mut seen = vec![false; 1 << (shift + SMALL_RUN_LOG2)];
                for t in 0..1u32 << shift {
                    for r in 0..SMALL_RUN {
                        let i = local(layout, t, r, shift) as usize;
                        assert!(!seen[i], "{layout:?}, 2^{shift} threads: {i} twice");
                        seen[i] = true;
                    }
                }
            }
        }
    }

    #[test]
    fn slots_are_padded_local_indices() {
        for shift in 5..=9 {
            for &layout in layouts(shift) {
                for t in 0..1u32 << shift {
                    for r in 0..SMALL_RUN {
                        let i = local(layout, t, r, shift);
                        assert_eq!(slot(layout, t, r, shift), i + i / 32);
                    }
                }
            }
        }
    }

    #[test]
    fn a_warps_slots_hit_32_banks_in_every_layout() {
        for shift in 5..=9 {
            for &layout in layouts(shift) {
                for warp in 0..(1u32 << shift) / 32 {
                    for r in 0..SMALL_RUN {
                        let mut banks = 0u64;
                        for lane in 0..32 {
                            banks |= 1 << (slot(layout, warp * 32 + lane, r, shift) % 32);
                        }
                        assert_eq!(banks, u64::from(u32::MAX), "{layout:?}, register {r}");
                    }
                }
            }
        }
    }

    proptest! {
        // Each case emulates every thread of up to 16 blocks: keep the count modest.
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn random_lengths_and_patterns_sort(
            n in 0usize..=(1 << 16),
            seed: u64,
            pattern in 0u32..4,
        ) {
            let mut next = xorshift(seed);
            let keys: Vec<u32> = (0..n as u32).map(|i| match pattern {
                0 => next() as u32,
                1 => (next() % 4) as u32 * (u32::MAX / 3), // few distinct, including MAX
                2 => i,                                      // ascending
                _ => u32::MAX - i,                           // descending
            }).collect();
            check(&keys, SmallPlan::for_len(n as u64));
        }
    }
}
