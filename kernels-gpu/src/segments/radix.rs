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
//! Written thread by thread against [`crate::block::simt`] (warp matches and shuffles), like
//! the digit passes: the tests run it on the CPU, whose emulated shared memory panics on a
//! race, against std's stable sort of the segment.

use crate::block::simt::{
    lanemask_lt, load, match_bits, shared_reduce_add, shfl_up, store, store_agreed, sync_threads,
    sync_warp, thread_idx_x,
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
            store(sums.add(warp as usize), sum);
        }
        sync_threads();
        for w in 0..warp {
            sum += load(sums.add(w as usize));
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
            unrolled::<{ RADIX as usize / 32 }>(|i| store(counts.add(32 * i + lane as usize), 0));
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
                        total += load(counter(i as u32));
                    }
                });
            }
            let start = block_exclusive_scan(total, sums);
            if speaks {
                unrolled::<MAX_HELD>(|i| {
                    if (i as u32) < warps * digits_per_thread {
                        let slot = start + held[i];
                        store(counter(i as u32), slot);
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
                let first_slot = load(counter);
                sync_warp();
                let next = first_slot + peers.count_ones();
                store_agreed(counter, next);
                let slot = first_slot + (peers & below).count_ones();
                store(sh_keys.add(slot as usize), keys[k]);
                if INDEXED {
                    let position = positions.get(k) as u16;
                    store(sh_positions.add(slot as usize), position);
                }
                sync_warp();
            });
            sync_threads();
            if pass + 1 < digit_passes {
                positions = Packed::new();
                unrolled::<ITEMS>(|k| {
                    let j = (first + 32 * k as u32) as usize;
                    keys[k] = load(sh_keys.add(j));
                    if INDEXED {
                        positions.set(k, u32::from(load(sh_positions.add(j))));
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
                    *sorted_keys.add(at) = load(sh_keys.add(s as usize)).decode(seg.map);
                }
                if INDEXED && !seg.indices.is_null() {
                    *seg.indices.add(at) = u32::from(load(sh_positions.add(s as usize)));
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
                        let word = *seg.values.add(at);
                        store(column.add(s as usize), word);
                    }
                });
                sync_threads();
                unrolled::<ITEMS>(|k| {
                    let s = t + THREADS * k as u32;
                    if s < len {
                        let at = ((begin + u64::from(s)) * words + w) as usize;
                        let from = load(sh_positions.add(s as usize));
                        *seg.values.add(at) = load(column.add(from as usize));
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::simt::{Grid, launch, races};
    use crate::block::{check_key_maps, xorshift};
    use crate::keys::IDENTITY;
    use crate::segments::{radix_shared_bytes, radix_threads};

    /// Sorts the entry of `seg` of the calling block as `segments_radix_*` does for its padded length.
    ///
    /// # Safety
    /// As [`sort`]'s.
    unsafe fn block<K: Digits, const INDEXED: bool>(
        seg: &Segments<K, u32>,
        sorted_keys: *mut K,
        value_words: u32,
        shared: *mut u8,
    ) {
        let e = u64::from(crate::block::simt::block_idx_x());
        // SAFETY: the caller's contract; the block has the padded length's threads.
        unsafe {
            match seg.row_log2 {
                9 => sort::<K, INDEXED, 32>(seg, sorted_keys, e, value_words, shared),
                10 => sort::<K, INDEXED, 64>(seg, sorted_keys, e, value_words, shared),
                11 => sort::<K, INDEXED, 128>(seg, sorted_keys, e, value_words, shared),
                12 => sort::<K, INDEXED, 256>(seg, sorted_keys, e, value_words, shared),
                _ => sort::<K, INDEXED, 512>(seg, sorted_keys, e, value_words, shared),
            }
        }
    }

    /// What a launch writes besides its keys.
    #[derive(Clone, Copy, PartialEq)]
    enum Out {
        /// The keys alone, sorted in place.
        Keys,
        /// Keys in place, each key's position and `u32` words of values permuted with it.
        Everything { value_words: u32 },
        /// The positions alone, the keys left as they are (an argsort).
        Indices,
    }

    /// One launch of the segments between `offsets` (each at most 2^`row_log2` keys), a block
    /// each, all at once, against std's stable sort of each segment. `key_bits` makes keys
    /// from random bits.
    fn check<K: Digits + Ord + core::fmt::Debug>(
        offsets: &[u64],
        row_log2: u32,
        out: Out,
        key_bits: impl Fn(u64) -> K,
    ) {
        let n = *offsets.last().unwrap() as usize;
        let mut next = xorshift(n as u64 + u64::from(row_log2));
        let keys: Vec<K> = (0..n).map(|_| key_bits(next())).collect();
        let value_words = match out {
            Out::Everything { value_words } => value_words,
            _ => 0,
        };
        let values: Vec<u32> = (0..n as u32 * value_words)
            .map(|w| w ^ 0x5a5a_0000)
            .collect();
        let (mut sorted, mut moved) = (keys.clone(), values.clone());
        let mut indices = vec![u32::MAX; n];
        let indexed = out != Out::Keys;
        let seg = Segments {
            keys: sorted.as_mut_ptr(),
            values: if value_words > 0 {
                moved.as_mut_ptr()
            } else {
                core::ptr::null_mut()
            },
            indices: if indexed {
                indices.as_mut_ptr()
            } else {
                core::ptr::null_mut()
            },
            count: offsets.len() as u64 - 1,
            row_len: 0,
            offsets: offsets.as_ptr(),
            list: core::ptr::null(),
            row_log2,
            map: IDENTITY,
        };
        let sorted_keys = if out == Out::Indices {
            core::ptr::null_mut()
        } else {
            seg.keys
        };
        let key_bytes = size_of::<K>() as u32;
        let grid = Grid {
            blocks: offsets.len() as u32 - 1,
            threads: radix_threads(row_log2),
            shared_bytes: radix_shared_bytes(row_log2, key_bytes, indexed),
            together: offsets.len() as u32 - 1,
        };
        // SAFETY: each block sorts its own segment of the buffers.
        unsafe {
            launch(grid, |th| {
                if indexed {
                    block::<K, true>(&seg, sorted_keys, value_words, th.shared())
                } else {
                    block::<K, false>(&seg, sorted_keys, value_words, th.shared())
                }
            })
        };
        for s in offsets.windows(2) {
            let (begin, end) = (s[0] as usize, s[1] as usize);
            let mut order: Vec<usize> = (0..end - begin).collect();
            order.sort_by_key(|&j| keys[begin + j]);
            let what = format!("segment {begin}..{end} of 2^{row_log2}, {key_bytes}-byte keys");
            let want_keys: Vec<K> = order.iter().map(|&j| keys[begin + j]).collect();
            if out == Out::Indices {
                assert_eq!(
                    sorted[begin..end],
                    keys[begin..end],
                    "{what}: keys unwritten"
                );
            } else {
                assert_eq!(sorted[begin..end], want_keys, "{what}: keys");
            }
            if indexed {
                let want: Vec<u32> = order.iter().map(|&j| j as u32).collect();
                assert_eq!(indices[begin..end], want, "{what}: positions");
            }
            let words = value_words as usize;
            for (place, &j) in order.iter().enumerate() {
                let (to, from) = ((begin + place) * words, (begin + j) * words);
                assert_eq!(
                    moved[to..to + words],
                    values[from..from + words],
                    "{what}: values"
                );
            }
        }
    }

    /// Segments of these lengths, end to end.
    fn offsets(lengths: &[u64]) -> Vec<u64> {
        let mut offsets = vec![0];
        for &len in lengths {
            offsets.push(offsets.last().unwrap() + len);
        }
        offsets
    }

    #[test]
    fn a_block_sorts_a_segment_of_every_padded_length() {
        let lengths: [&[u64]; 5] = [
            &[257, 511, 512],
            &[513, 1024],
            &[1025, 2047],
            &[4095],
            &[8192],
        ];
        for (row_log2, lengths) in (9..=13).zip(lengths) {
            let out = Out::Everything { value_words: 2 };
            check::<u32>(&offsets(lengths), row_log2, out, |bits| bits as u32);
        }
        // A short segment in a launch of long ones; few distinct keys.
        let out = Out::Everything { value_words: 3 };
        check::<u32>(&offsets(&[3, 500]), 9, out, |bits| {
            (bits % 5) as u32 * 0x0101_0101
        });
    }

    #[test]
    fn eight_byte_keys_and_every_output() {
        let out = Out::Everything { value_words: 1 };
        check::<u64>(&offsets(&[257, 512]), 9, out, |bits| bits);
        check::<u64>(&offsets(&[2047, 1025]), 11, Out::Keys, |bits| {
            bits >> (bits % 64)
        });
        check::<u64>(&offsets(&[4096]), 12, Out::Indices, |bits| bits % 1000);
        check::<u32>(&offsets(&[1000, 600]), 10, Out::Keys, |bits| bits as u32);
        check::<u32>(&offsets(&[8000]), 13, Out::Indices, |bits| {
            (bits >> 40) as u32
        });
    }

    /// One segment of `keys`, keys alone, its key map `map`.
    fn sort_keys<K: Digits>(keys: &mut [K], map: u32) {
        let row_log2 = (keys.len() as u64).next_power_of_two().ilog2().max(9);
        let offsets = [0, keys.len() as u64];
        let seg = Segments {
            keys: keys.as_mut_ptr(),
            values: core::ptr::null_mut(),
            indices: core::ptr::null_mut(),
            count: 1,
            row_len: 0,
            offsets: offsets.as_ptr(),
            list: core::ptr::null(),
            row_log2,
            map,
        };
        let grid = Grid {
            blocks: 1,
            threads: radix_threads(row_log2),
            shared_bytes: radix_shared_bytes(row_log2, size_of::<K>() as u32, false),
            together: 1,
        };
        // SAFETY: the block sorts the one segment in place.
        unsafe { launch(grid, |th| block::<K, false>(&seg, seg.keys, 0, th.shared())) };
    }

    #[test]
    fn key_maps_apply_on_the_load_and_undo_on_the_store() {
        check_key_maps(1000, &mut xorshift(23), sort_keys, sort_keys);
    }

    #[test]
    fn the_race_check_catches_each_missing_barrier() {
        // Two warps sort a segment of 4-byte keys with their positions and two words of
        // values, one barrier dropped at a time: the block barriers of the four passes and of
        // the values, and the warp barriers of the first pass's counting and ranking.
        let (n, row_log2) = (1000, 10);
        let mut next = xorshift(29);
        let keys: Vec<u32> = (0..n).map(|_| next() as u32).collect();
        let offsets = [0, n as u64];
        let run = |barrier: u32, warp_barrier: u32| {
            let (mut sorted, mut values, mut indices) =
                (keys.clone(), vec![0u32; 2 * n], vec![0; n]);
            let seg = Segments {
                keys: sorted.as_mut_ptr(),
                values: values.as_mut_ptr(),
                indices: indices.as_mut_ptr(),
                count: 1,
                row_len: 0,
                offsets: offsets.as_ptr(),
                list: core::ptr::null(),
                row_log2,
                map: IDENTITY,
            };
            let grid = Grid {
                blocks: 1,
                threads: radix_threads(row_log2),
                shared_bytes: radix_shared_bytes(row_log2, 4, true),
                together: 1,
            };
            races(|| {
                // SAFETY: the block sorts the one segment in place.
                unsafe {
                    launch(grid, |th| {
                        th.drop_barriers(barrier, warp_barrier);
                        block::<u32, true>(&seg, seg.keys, 2, th.shared())
                    })
                }
            })
        };
        let missed: Vec<u32> = (0..4 * 4 + 4).filter(|&b| !run(b, u32::MAX)).collect();
        // The values' first barrier orders nothing for 4-byte keys: each thread's first words
        // go where its own keys were, which it alone read.
        assert_eq!(missed, [16], "block barriers whose loss goes unseen");
        // The counting's, then each item's two of the ranking.
        let missed: Vec<u32> = (0..5).filter(|&b| !run(u32::MAX, b)).collect();
        assert_eq!(missed, [], "warp barriers whose loss goes unseen");
    }
}
