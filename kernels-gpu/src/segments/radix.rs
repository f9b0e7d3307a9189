//! One block's LSD radix sort of one segment ([`crate::segments`], the radix path): the
//! segment's keys, and each key's position in it where indices or values travel, are held in
//! registers, [`ITEMS`] per thread, and ranked one digit after another through shared memory,
//! so that the segment crosses device memory once each way whatever the number of passes.
//!
//! A pass ranks the keys as a digit pass of the radix sort ranks a tile ([`crate::radix::block`])
//! without its look-back: each warp counts its keys per digit in counters of its own, one scan
//! over the digits and warps gives each warp, per digit, its first slot in the segment's order
//! after the pass, and each warp ranks item by item with a match of the lanes holding the same
//! digit, all of them reading their first slot from the warp's counter and writing it back
//! advanced past the group (no atomic: the counters are the warp's). Items are ranked item by
//! item, lanes in order, warps in order, so the pass is stable, and the keys read back from
//! their slots in the same arrangement are in the order the next pass must keep.
//!
//! Positions past the segment's end hold +∞, the largest encoded key, and sort after every key
//! (after equal ones too, being stable and coming last), so that every pass ranks whole
//! warps; they are neither read nor written.
//!
//! Written for the GPU alone (warp matches and shuffles), like the digit passes: the GPU tests
//! check it against std's stable sort of each segment.

use crate::gpu::{
    lanemask_lt, match_bits, shared_reduce_add, shfl_up, sync_threads, sync_warp, thread_idx_x,
};
use crate::merge::block::unrolled;
use crate::radix::block::Packed;
use crate::radix::{Digits, RADIX, RADIX_BITS, digit, passes};
use crate::segments::block::Segments;
use crate::segments::{RADIX_ITEMS, radix_layout};

/// Keys each thread holds and ranks.
pub const ITEMS: usize = RADIX_ITEMS as usize;

/// The most counts a thread reads in a pass's scan: a digit of each warp of 512 threads, or
/// `RADIX / THREADS` digits of each warp of fewer (8).
const MAX_HELD: usize = 16;

/// The exclusive prefix sum of `a` over the block's threads in order. Every thread of the block
/// calls it; a barrier must come before `sums` is written again.
///
/// # Safety
/// `sums` holds a word per warp of the block of shared memory that nothing
/// else uses meanwhile.
#[inline(always)]
unsafe fn block_exclusive_scan(a: u32, sums: *mut u32) -> u32 {
    let (lane, warp) = (thread_idx_x() % 32, thread_idx_x() / 32);
    let mut sum = a;
    let mut delta = 1;
    while delta < 32 {
        let below = shfl_up(u64::from(sum), delta) as u32;
        if lane >= delta {
            sum += below;
        }
        delta *= 2;
    }
    // SAFETY: the caller's contract; the barrier orders the writes and reads.
    unsafe {
        if lane == 31 {
            *sums.add(warp as usize) = sum;
        }
        sync_threads();
        for w in 0..warp {
            sum += *sums.add(w as usize);
        }
    }
    sum - a
}

/// Sorts entry `e` of `seg` (at most `ITEMS × THREADS` keys), stably: its keys, sorted, to the
/// same places of `sorted_keys` (decoded as they are stored; `seg.keys` itself to sort in
/// place, or null to leave them unwritten); where `INDEXED`, each key's position in its
/// segment to `indices` (unless null) and the values, `value_words` 4-byte words each (none if
/// `values` is null), permuted with the keys in place.
///
/// # Safety
/// `seg` as [`Segments`] asks (its `values` as words), `sorted_keys` as long as its keys or
/// null; `shared` is 16-byte aligned and holds `radix_shared_bytes` for the segment's padded
/// length; `THREADS` threads per block, a multiple of 32.
#[inline(always)]
pub unsafe fn sort<K: Digits, const INDEXED: bool, const THREADS: u32>(
    seg: &Segments<K, u32>,
    sorted_keys: *mut K,
    e: u64,
    value_words: u32,
    shared: *mut u8,
) {
    let t = thread_idx_x();
    let (lane, warp) = (t % 32, t / 32);
    let warps = THREADS / 32;
    // Digits each thread speaks for in the scans: the first RADIX / digits_per_thread threads.
    let digits_per_thread = if THREADS >= RADIX { 1 } else { RADIX / THREADS };
    let tile = THREADS * ITEMS as u32;
    let layout = radix_layout(tile, size_of::<K>() as u32, INDEXED, warps);
    // SAFETY: every index below stays inside its part of the caller's layout, and the device
    // ranges are the segment's.
    unsafe {
        let sh_keys = shared as *mut K;
        let sh_positions = shared.add(layout.positions as usize) as *mut u16;
        let counts_of =
            |w: u32| (shared.add(layout.counts as usize) as *mut u32).add((w * RADIX) as usize);
        let sums = shared.add(layout.sums as usize) as *mut u32;
        let (begin, len) = seg.segment(e);
        let len = len as u32;

        // Item k of lane l of warp w is position w·32·ITEMS + 32k + l of the current order.
        let first = warp * 32 * ITEMS as u32 + lane;
        let mut keys = [K::INFINITY; ITEMS];
        // Positions below 2^16, two to a register.
        let mut positions = Packed::<16>::new();
        unrolled::<ITEMS>(|k| {
            let j = first + 32 * k as u32;
            if j < len {
                keys[k] = (*seg.keys.add((begin + u64::from(j)) as usize)).encode(seg.map);
            }
            if INDEXED {
                positions.set(k, j);
            }
        });

        let counts = counts_of(warp);
        // The warp's counters of the digit at `shift`, from the keys it holds. Its own
        // counters only: a warp barrier orders the zeroing and the adds.
        let count = |keys: &[K; ITEMS], shift: u32| {
            unrolled::<{ RADIX as usize / 32 }>(|i| *counts.add(32 * i + lane as usize) = 0);
            sync_warp();
            unrolled::<ITEMS>(|k| shared_reduce_add(counts.add(digit(keys[k], shift) as usize), 1));
        };
        count(&keys, 0);

        let digit_passes = passes(size_of::<K>() as u32);
        let below = lanemask_lt();
        for pass in 0..digit_passes {
            let shift = pass * RADIX_BITS;
            sync_threads();
            // Thread t speaks for digits t·digits_per_thread ..: it reads their warps' counts,
            // and once the block has scanned its total writes each warp's counter as the slot
            // of the warp's first key of the digit.
            let speaks = t * digits_per_thread < RADIX;
            let counter =
                |i: u32| counts_of(i % warps).add((t * digits_per_thread + i / warps) as usize);
            let mut held = [0u32; MAX_HELD];
            let mut total = 0u32;
            if speaks {
                unrolled::<MAX_HELD>(|i| {
                    if (i as u32) < warps * digits_per_thread {
                        held[i] = total;
                        total += *counter(i as u32);
                    }
                });
            }
            let start = block_exclusive_scan(total, sums);
            if speaks {
                unrolled::<MAX_HELD>(|i| {
                    if (i as u32) < warps * digits_per_thread {
                        *counter(i as u32) = start + held[i];
                    }
                });
            }
            sync_threads();

            // Rank item by item, each key (and position) straight to its slot.
            unrolled::<ITEMS>(|k| {
                let d = digit(keys[k], shift);
                let peers = match_bits::<RADIX_BITS>(d);
                // Every lane of the digit reads the warp's counter and writes it advanced past
                // them all (the same value), so no lane leads and no atomic is needed: the
                // warp's counters are its own. The warp barriers order each item's reads before
                // its writes and its writes before the next item's reads across the lanes.
                let counter = counts.add(d as usize);
                let first_slot = *counter;
                sync_warp();
                *counter = first_slot + peers.count_ones();
                let slot = first_slot + (peers & below).count_ones();
                *sh_keys.add(slot as usize) = keys[k];
                if INDEXED {
                    *sh_positions.add(slot as usize) = positions.get(k) as u16;
                }
                sync_warp();
            });
            sync_threads();
            if pass + 1 < digit_passes {
                positions = Packed::new();
                unrolled::<ITEMS>(|k| {
                    let j = (first + 32 * k as u32) as usize;
                    keys[k] = *sh_keys.add(j);
                    if INDEXED {
                        positions.set(k, u32::from(*sh_positions.add(j)));
                    }
                });
                count(&keys, shift + RADIX_BITS);
            }
        }

        // Out, in order: slot s of the sorted segment is its position s.
        unrolled::<ITEMS>(|k| {
            let s = t + THREADS * k as u32;
            if s < len {
                let at = (begin + u64::from(s)) as usize;
                if !sorted_keys.is_null() {
                    *sorted_keys.add(at) = (*sh_keys.add(s as usize)).decode(seg.map);
                }
                if INDEXED && !seg.indices.is_null() {
                    *seg.indices.add(at) = u32::from(*sh_positions.add(s as usize));
                }
            }
        });
        if INDEXED && !seg.values.is_null() {
            // Word by word: the segment's words of one column into shared memory (where the
            // keys were), then each place's word read from the slot of its key's position.
            // Every word of a column is read before any is written, so values move in place.
            let column = shared as *mut u32;
            let words = u64::from(value_words);
            for w in 0..u64::from(value_words) {
                sync_threads();
                unrolled::<ITEMS>(|k| {
                    let s = t + THREADS * k as u32;
                    if s < len {
                        let at = ((begin + u64::from(s)) * words + w) as usize;
                        *column.add(s as usize) = *seg.values.add(at);
                    }
                });
                sync_threads();
                unrolled::<ITEMS>(|k| {
                    let s = t + THREADS * k as u32;
                    if s < len {
                        let at = ((begin + u64::from(s)) * words + w) as usize;
                        let from = *sh_positions.add(s as usize);
                        *seg.values.add(at) = *column.add(from as usize);
                    }
                });
            }
        }
    }
}
