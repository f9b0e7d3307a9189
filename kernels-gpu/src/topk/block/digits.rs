//! What one block of a step of a top-k by digits does ([`crate::topk::digits`]): a digit
//! pass, the count, or the gather, over its chunk of the keys, a tile of [`TILE`] keys at a
//! time (16 per thread, loaded as [`super::load_tile`] loads them).
//!
//! Every step first narrows the [`State`] by the last pass's histogram: each thread sums
//! [`BINS_PER_THREAD`] bins, one block-wide scan finds the thread whose bins hold the k-th key,
//! and that thread finds the bin. Block 0 keeps the result for the later steps.
//!
//! - A **digit pass** adds the digit of each key that has the prefix to a histogram in shared
//!   memory, then the block's non-zero bins to the pass's histogram in device memory.
//! - The **count** sums the block's keys below the prefix and equal to it, and adds each
//!   tile's to the tile's counters in device memory (a thread only counts that are not zero).
//! - The **gather** sums the counts of the blocks before it, which give the slot of its first
//!   candidate and how many of the prefix's equals come before its own. It reads each tile's
//!   counts before the tile: a tile with no candidate is not loaded, a tile with one goes
//!   straight to its slot (uniform keys leave most tiles with none or one), with no barrier
//!   either way. Otherwise the tile's candidates are ranked in position order (block-wide
//!   scans) and each is written to its slot with its index. Where the quota cuts the prefix's
//!   equals (after the last digit), they are first ranked among themselves, those past the
//!   quota dropped.

use super::rows::{Ranked, inclusive_scan};
use super::{Counting, Lanes, Part, load_tile};
use crate::block::{Block, L2_LINE_BYTES, Regs};
use crate::merge::block::unrolled;
use crate::topk::digits::{
    BINS, BINS_PER_THREAD, CANDIDATES, Grid, State, TILE, digit, passes, shared_layout, workspace,
};
use crate::topk::{NO_INDEX, ROW_ITEMS, THREADS, TopKey, VECTOR_BYTES, tile_position};

const ITEMS: usize = ROW_ITEMS as usize;

/// The keys and workspace of a selection by digits, and the step a launch runs, as its
/// kernel takes them.
#[derive(Clone, Copy)]
pub struct DigitArgs<K> {
    /// The keys, as stored.
    pub keys: *const K,
    /// The blocks and their chunks.
    pub grid: Grid,
    /// Keys selected, `1 ..= MAX_K`, at most the keys.
    pub k: u32,
    /// Key map applied as the keys are loaded.
    pub encode: u32,
    /// The step: a digit pass below `passes(size_of::<K>())`, then the count, then the gather.
    pub step: u32,
    /// The workspace, as [`workspace`] lays it out for `grid`; its `zeroed` bytes zeroed before
    /// the first step.
    pub work: *mut u8,
}

/// The workspace's regions.
struct Work<K> {
    hist: *mut u32,
    tile_counts: *mut u32,
    states: *mut u64,
    counts: *mut u32,
    keys: *mut K,
    indices: *mut u64,
}

/// The block's shared memory, as [`shared_layout`] lays it out.
struct Shared {
    hist: *mut u32,
    sums: *mut u32,
    chosen: *mut u32,
    counters: *mut u32,
}

/// Runs step `args.step` of a selection by digits as block `b` of `args.grid.blocks`.
///
/// # Safety
/// `args.keys` holds `args.grid.len` keys (below 2^32) and `args.work` the workspace, written
/// by the steps before this one (launched in order); `shared` is 16-byte aligned and holds
/// `shared_layout()[4]` bytes used by this block alone; the block has [`THREADS`] threads.
#[inline(always)]
pub unsafe fn digit_step<K: TopKey, B: Counting + Lanes>(
    block: &B,
    shared: *mut u8,
    args: &DigitArgs<K>,
    b: u64,
) {
    let key_bytes = size_of::<K>() as u32;
    let passes = passes(key_bytes);
    let layout = workspace(key_bytes, args.grid);
    let [hist, sums, chosen, counters, _] = shared_layout();
    // SAFETY: the regions of the caller's workspace and shared memory.
    let (work, sh) = unsafe {
        let at = |offset: u64| args.work.add(offset as usize);
        (
            Work::<K> {
                hist: at(layout.hist) as *mut u32,
                tile_counts: at(layout.tile_counts) as *mut u32,
                states: at(layout.states) as *mut u64,
                counts: at(layout.counts) as *mut u32,
                keys: at(layout.keys) as *mut K,
                indices: at(layout.indices) as *mut u64,
            },
            Shared {
                hist: shared.add(hist as usize) as *mut u32,
                sums: shared.add(sums as usize) as *mut u32,
                chosen: shared.add(chosen as usize) as *mut u32,
                counters: shared.add(counters as usize) as *mut u32,
            },
        )
    };
    let step = args.step;
    // SAFETY (this and the steps): states below MAX_PASSES + 2, written by the steps before.
    let state = unsafe {
        if step == passes + 1 {
            load_state(work.states, passes)
        } else {
            let last = if step <= 1 {
                State::start(args.grid.len, key_bytes)
            } else {
                load_state(work.states, step - 1)
            };
            let state = if step == 0 || last.done() {
                last
            } else {
                let pass_hist = work.hist.add(((step - 1) * BINS) as usize);
                narrow(block, &sh, last, (step - 1, key_bytes, args.k), pass_hist)
            };
            if b == 0 {
                block.units(1, |_| store_state(work.states, step, state));
            }
            state
        }
    };
    let start = b * args.grid.chunk;
    let end = (start + args.grid.chunk).min(args.grid.len);
    // SAFETY: the block's chunk inside the keys.
    let part = unsafe {
        Part {
            keys: args.keys.add(start as usize),
            indices: core::ptr::null(),
            len: (end - start) as u32,
            first_index: start,
            out_keys: work.keys,
            out_indices: work.indices,
        }
    };
    unsafe {
        if step < passes {
            if !state.done() {
                let pass_hist = work.hist.add((step * BINS) as usize);
                count_digits(
                    block,
                    &sh,
                    &part,
                    state,
                    digit(key_bytes, step).0,
                    args.encode,
                    pass_hist,
                );
            }
        } else if step == passes {
            let first_tile = start / u64::from(TILE);
            count_block(
                block,
                &sh,
                &part,
                state,
                args.encode,
                (
                    work.counts.add(2 * b as usize),
                    work.tile_counts.add(2 * first_tile as usize),
                ),
            );
        } else {
            gather(block, &sh, &part, state, args, &work, b);
        }
    }
}

/// The state that step `step` left.
///
/// # Safety
/// `states` holds the state of step `step`.
#[inline(always)]
unsafe fn load_state(states: *const u64, step: u32) -> State {
    // SAFETY: the caller's contract.
    unsafe {
        let at = states.add(4 * step as usize);
        State {
            prefix: *at,
            shift: *at.add(1),
            less: *at.add(2),
            count: *at.add(3),
        }
    }
}

/// Keeps `state` as step `step`'s.
///
/// # Safety
/// `states` holds the states of every step.
#[inline(always)]
unsafe fn store_state(states: *mut u64, step: u32, state: State) {
    // SAFETY: the caller's contract.
    unsafe {
        let at = states.add(4 * step as usize);
        *at = state.prefix;
        *at.add(1) = state.shift;
        *at.add(2) = state.less;
        *at.add(3) = state.count;
    }
}

/// [`State::narrow`] by the block: `state` after pass `pass` of keys of `key_bytes` bytes,
/// selecting `k`, whose histogram `hist` (device memory) holds.
///
/// # Safety
/// `hist` holds [`BINS`] counts of keys with the state's prefix, written by an earlier launch;
/// every thread calls it; the shared sums and chosen bin are not in use.
#[inline(always)]
unsafe fn narrow<B: Lanes>(
    block: &B,
    sh: &Shared,
    state: State,
    (pass, key_bytes, k): (u32, u32, u32),
    hist: *const u32,
) -> State {
    let per = BINS_PER_THREAD as usize;
    let need = (u64::from(k) - state.less) as u32;
    let mut scan = block.regs(THREADS, [0u64; 1]);
    let mut bins = block.regs(THREADS, [0u32; BINS_PER_THREAD as usize]);
    block.units(THREADS, |u| {
        let mine = bins.unit(u);
        let mut sum = 0;
        // SAFETY: the thread's bins, inside the histogram.
        unrolled::<{ BINS_PER_THREAD as usize }>(|i| {
            mine[i] = unsafe { *hist.add(u as usize * per + i) };
            sum += mine[i];
        });
        scan.unit(u)[0] = u64::from(sum);
    });
    // SAFETY: the first half of the sums, free.
    unsafe { inclusive_scan(block, &mut scan, sh.sums) };
    block.units(THREADS, |u| {
        let mine = bins.unit(u);
        let upto = scan.unit(u)[0] as u32;
        let mut below = upto - mine.iter().sum::<u32>();
        if below < need && need <= upto {
            let mut found = false;
            unrolled::<{ BINS_PER_THREAD as usize }>(|i| {
                if !found && below + mine[i] >= need {
                    found = true;
                    // SAFETY: the chosen bin's words; one thread writes them.
                    unsafe {
                        *sh.chosen = u * BINS_PER_THREAD + i as u32;
                        *sh.chosen.add(1) = below;
                        *sh.chosen.add(2) = mine[i];
                    }
                } else if !found {
                    below += mine[i];
                }
            });
        }
    });
    block.sync();
    // SAFETY: written before the barrier.
    let (bin, below, count) = unsafe { (*sh.chosen, *sh.chosen.add(1), *sh.chosen.add(2)) };
    let (shift, _) = digit(key_bytes, pass);
    state.chosen(shift, bin, u64::from(below), u64::from(count))
}

/// Thread `u`'s keys of the tile at `base` of `part`, encoded, and which are present. Also asks
/// for line `u` of the next tile to be brought into the L2 cache, so that its loads wait on
/// the cache rather than on memory: the steps are a handful of tiles per block, each waiting
/// on its loads.
///
/// # Safety
/// As [`load_tile`].
#[inline(always)]
unsafe fn load_encoded<K: TopKey, B: Block>(
    block: &B,
    part: &Part<K>,
    u: u32,
    base: u32,
    encode: u32,
    keys: &mut [K; ITEMS],
) -> u32 {
    let key_bytes = size_of::<K>() as u32;
    let line = u * L2_LINE_BYTES as u32;
    if base + TILE < part.len && line < TILE * key_bytes {
        let next =
            (part.keys as *const u8).wrapping_add(((base + TILE) * key_bytes + line) as usize);
        block.prefetch(next);
    }
    let aligned = (part.keys as usize).is_multiple_of(VECTOR_BYTES as usize);
    // SAFETY: the caller's contract.
    let present = unsafe { load_tile::<K, B, ITEMS>(block, part, u, base, aligned, keys) };
    unrolled::<ITEMS>(|q| keys[q] = keys[q].encode(encode));
    present
}

/// A digit pass over the block's part: the digit at `shift` of every key with the prefix,
/// counted in shared memory, then added to `hist` (device memory).
///
/// # Safety
/// As [`digit_step`]; `hist` holds [`BINS`] counters.
#[inline(always)]
unsafe fn count_digits<K: TopKey, B: Counting>(
    block: &B,
    sh: &Shared,
    part: &Part<K>,
    state: State,
    shift: u32,
    encode: u32,
    hist: *mut u32,
) {
    // SAFETY (all blocks below): bins below BINS; loads inside the part.
    block.units(BINS, |i| unsafe { *sh.hist.add(i as usize) = 0 });
    block.sync();
    let (known, prefix) = (state.known(), state.prefix);
    let mut base = 0;
    while base < part.len {
        block.units(THREADS, |u| {
            let u = block.opaque(u);
            let mut keys = [K::INFINITY; ITEMS];
            let present = unsafe { load_encoded(block, part, u, base, encode, &mut keys) };
            unrolled::<ITEMS>(|q| {
                let w = keys[q].wide();
                if present & (1 << q) != 0 && w & known == prefix {
                    let bin = (w >> shift) as u32 & (BINS - 1);
                    unsafe { block.add(sh.hist.add(bin as usize), 1) };
                }
            });
        });
        base += TILE;
    }
    block.sync();
    block.units(BINS, |i| unsafe {
        let count = *sh.hist.add(i as usize);
        if count != 0 {
            block.add_global(hist.add(i as usize), count);
        }
    });
}

/// The count: the block's keys below the prefix and equal to it, to `counts[0]` and
/// `counts[1]`, and those of its `t`-th tile added to `tile_counts[2t]` and `[2t + 1]` (zeroed
/// before the first step; a thread adds only counts that are not zero, so that tiles of no
/// candidate cost no atomic).
///
/// # Safety
/// As [`digit_step`]; `counts` holds the block's two counters, `tile_counts` two per tile of
/// its part.
#[inline(always)]
unsafe fn count_block<K: TopKey, B: Counting>(
    block: &B,
    sh: &Shared,
    part: &Part<K>,
    state: State,
    encode: u32,
    (counts, tile_counts): (*mut u32, *mut u32),
) {
    // SAFETY (all blocks below): the pair of counters; loads inside the part; tiles inside
    // the part's counts.
    block.units(2, |i| unsafe { *sh.counters.add(i as usize) = 0 });
    block.sync();
    let (known, prefix) = (state.known(), state.prefix);
    block.units(THREADS, |u| {
        let (mut less, mut equal) = (0u32, 0u32);
        let (mut base, mut tile) = (0, 0);
        while base < part.len {
            let u = block.opaque(u);
            let mut keys = [K::INFINITY; ITEMS];
            let present = unsafe { load_encoded(block, part, u, base, encode, &mut keys) };
            let (mut tile_less, mut tile_equal) = (0u32, 0u32);
            unrolled::<ITEMS>(|q| {
                let w = keys[q].wide() & known;
                if present & (1 << q) != 0 {
                    tile_less += u32::from(w < prefix);
                    tile_equal += u32::from(w == prefix);
                }
            });
            unsafe {
                if tile_less != 0 {
                    block.add_global(tile_counts.add(2 * tile), tile_less);
                }
                if tile_equal != 0 {
                    block.add_global(tile_counts.add(2 * tile + 1), tile_equal);
                }
            }
            (less, equal) = (less + tile_less, equal + tile_equal);
            base += TILE;
            tile += 1;
        }
        unsafe {
            if less != 0 {
                block.add(sh.counters, less);
            }
            if equal != 0 {
                block.add(sh.counters.add(1), equal);
            }
        }
    });
    block.sync();
    block.units(2, |i| unsafe {
        *counts.add(i as usize) = *sh.counters.add(i as usize)
    });
}

/// The gather: the block's candidates, in position order, to their slots in the workspace;
/// the last block also fills the slots past the candidates with "no key". The tiles' counts
/// say, before a tile is loaded, how many candidates it holds: a tile of none is not loaded,
/// a tile of one writes it with no barrier, others rank theirs in position order.
///
/// # Safety
/// As [`digit_step`], with the counts of every block and tile written.
#[inline(always)]
unsafe fn gather<K: TopKey, B: Counting + Lanes>(
    block: &B,
    sh: &Shared,
    part: &Part<K>,
    state: State,
    args: &DigitArgs<K>,
    work: &Work<K>,
    b: u64,
) {
    let key_bytes = size_of::<K>() as u32;
    // SAFETY (all blocks below): the pair of counters, counts below 2 × blocks, tile counts of
    // the block's tiles; loads inside the part, writes below CANDIDATES.
    block.units(2, |i| unsafe { *sh.counters.add(i as usize) = 0 });
    block.sync();
    block.units(b as u32, |before| unsafe {
        let at = work.counts.add(2 * before as usize);
        let (less, equal) = (*at, *at.add(1));
        if less != 0 {
            block.add(sh.counters, less);
        }
        if equal != 0 {
            block.add(sh.counters.add(1), equal);
        }
    });
    block.sync();
    let (less_before, equal_before) =
        unsafe { (u64::from(*sh.counters), u64::from(*sh.counters.add(1))) };
    let quota = state.quota();
    let (known, prefix) = (state.known(), state.prefix);
    let tile_counts = unsafe {
        work.tile_counts
            .add(2 * (b * args.grid.chunk / u64::from(TILE)) as usize)
    };
    let mut slot = less_before + equal_before.min(quota); // of the block's next candidate
    let mut equals = equal_before; // the prefix's equals before the next tile
    let mut held = block.regs(THREADS, ([K::INFINITY; ITEMS], 0u32, 0u32));
    let mut scan = block.regs(THREADS, [0u64; 1]);
    // One ranking for all the tiles: its scans take the two halves of the sums in turn, so
    // that a tile's first scan never writes the half the last tile's last scan still reads.
    let mut ranked = Ranked::new(&mut scan, sh.sums, (VECTOR_BYTES / key_bytes) as usize);
    let mut tile = 0usize;
    let mut base = 0u32;
    while base < part.len {
        let (less_n, equal_n) = unsafe {
            (
                *tile_counts.add(2 * tile),
                u64::from(*tile_counts.add(2 * tile + 1)),
            )
        };
        // The prefix's equals of this tile that are candidates: all, or the first that fit the
        // room the quota leaves.
        let taken_equals = if quota == state.count {
            equal_n
        } else {
            quota.saturating_sub(equals).min(equal_n)
        };
        let taken_n = u64::from(less_n) + taken_equals;
        if taken_n != 0 {
            block.units(THREADS, |u| {
                let u = block.opaque(u);
                let (keys, taken, equal) = held.unit(u);
                let present = unsafe { load_encoded(block, part, u, base, args.encode, keys) };
                let (mut l, mut e) = (0u32, 0u32);
                unrolled::<ITEMS>(|q| {
                    let w = keys[q].wide() & known;
                    if present & (1 << q) != 0 {
                        l |= u32::from(w < prefix) << q;
                        e |= u32::from(w == prefix) << q;
                    }
                });
                *taken = if taken_equals == equal_n { l | e } else { l };
                *equal = e;
            });
            if taken_equals != 0 && taken_equals < equal_n {
                // The first `taken_equals` of the tile's equals, in position order.
                let mut equal_marks = block.regs(THREADS, 0u32);
                block.units(THREADS, |u| *equal_marks.unit(u) = held.unit(u).2);
                unsafe {
                    ranked.each(block, &mut equal_marks, |u, q, rank| {
                        if u64::from(rank) < taken_equals {
                            held.unit(u).1 |= 1 << q;
                        }
                    })
                };
            }
            if taken_n == 1 {
                // One candidate: its slot needs no ranking.
                block.units(THREADS, |u| {
                    let (keys, taken, _) = held.unit(u);
                    if *taken != 0 {
                        let q = taken.trailing_zeros() as usize;
                        let pos = tile_position(key_bytes, u, q as u32);
                        unsafe {
                            *work.keys.add(slot as usize) = keys[q];
                            *work.indices.add(slot as usize) =
                                part.first_index + u64::from(base + pos);
                        }
                    }
                });
            } else {
                let mut taken = block.regs(THREADS, 0u32);
                block.units(THREADS, |u| *taken.unit(u) = held.unit(u).1);
                unsafe {
                    ranked.each(block, &mut taken, |u, q, rank| {
                        let key = held.unit(u).0[q];
                        let at = (slot + u64::from(rank)) as usize;
                        let pos = tile_position(key_bytes, u, q as u32);
                        *work.keys.add(at) = key;
                        *work.indices.add(at) = part.first_index + u64::from(base + pos);
                    })
                };
            }
            slot += taken_n;
        }
        equals += equal_n;
        base += TILE;
        tile += 1;
    }
    if b + 1 == args.grid.blocks {
        let filled = state.selected();
        block.units((CANDIDATES - filled) as u32, |i| unsafe {
            let at = (filled + u64::from(i)) as usize;
            *work.keys.add(at) = K::INFINITY;
            *work.indices.add(at) = NO_INDEX;
        });
    }
}
