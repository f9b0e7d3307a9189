//! What one block of a top-k round does ([`crate::topk`]): stream its part of a segment once,
//! keeping the k smallest items (key, position) seen in shared memory, and write them out.
//!
//! The block keeps, in shared memory, its running top-k (sorted, [`padded_k`] slots) and a
//! candidate buffer ([`candidate_slots`]). Tile by tile, each thread loads its keys and keeps
//! those not above the *bound*: the running k-th smallest item, or less. A kept key is
//! appended to the candidate buffer at a slot from a shared counter (the order of the buffer
//! does not matter). When the buffer fills, it is sorted with a bitonic network and merged
//! into the running top-k: `min(top[i], candidates[kp − 1 − i])` is a bitonic sequence of the
//! kp smallest of both (Batcher's merge), which half-cleaners sort. The bound then tightens to
//! the new k-th item. Keys that find the buffer full stay with their thread and are offered
//! again, against the new bound, after the merge, so any input is selected correctly; sorted
//! input that keeps every key costs a sort per buffer.
//!
//! Before the running top-k holds k items (its k-th is "no key") and for k up to the block's
//! threads, a tile first bounds itself: each thread's smallest item of the tile, sorted, gives
//! a k-th smallest that at least k of the tile's items do not exceed, so the k-th smallest of
//! the whole part does not either. Only the first tiles of a part pay for it; for a short row
//! (one tile) it keeps about k of the tile's keys instead of all of them.
//!
//! The block code is generic over [`Counting`] (a [`Block`] with shared-memory atomic adds), so
//! the tests run it on the CPU with [`CpuBlock`](crate::block::CpuBlock) (the counter is then a
//! plain add: its units run one at a time).

use crate::block::merge::unrolled;
use crate::block::{Block, Regs};
use crate::topk::{NO_INDEX, Round, THREADS, TopKey, candidate_slots, padded_k, shared_layout};

/// A [`Block`] whose threads can add to a shared-memory counter atomically.
pub trait Counting: Block {
    /// Adds `value` to the counter at `at` (shared memory) atomically among the block's
    /// threads; returns its value before.
    ///
    /// # Safety
    /// `at` is a valid, aligned `u32` of the block's shared memory.
    unsafe fn fetch_add(&self, at: *mut u32, value: u32) -> u32;
}

#[cfg(not(target_arch = "nvptx64"))]
impl Counting for crate::block::CpuBlock {
    unsafe fn fetch_add(&self, at: *mut u32, value: u32) -> u32 {
        // SAFETY: the caller's contract; units run one after another.
        unsafe {
            let old = *at;
            *at = old.wrapping_add(value);
            old
        }
    }
}

#[cfg(target_arch = "nvptx64")]
impl<const T: u32> Counting for crate::gpu::CudaBlock<T> {
    #[inline(always)]
    unsafe fn fetch_add(&self, at: *mut u32, value: u32) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { crate::gpu::shared_atomic_add(at, value) }
    }
}

/// The buffers and shape of one round ([`crate::topk::Round`]), as its kernel takes them.
#[derive(Clone, Copy)]
pub struct Args<K> {
    /// The round's input: `segments × len` keys, segment after segment.
    pub keys: *const K,
    /// Their indices within their segment ([`NO_INDEX`]: no key), or null: a key's index is
    /// its position in its segment (the first round).
    pub indices: *const u64,
    /// Where the candidates go: `segments × parts × k` keys, part after part.
    pub out_keys: *mut K,
    /// Their indices within their segment ([`NO_INDEX`] where a part had fewer than k keys).
    pub out_indices: *mut u64,
    /// The round's shape.
    pub round: Round,
    /// Keys selected per part, `1 ..= MAX_K`.
    pub k: u32,
    /// Key map applied as the keys are loaded (the first round) or `IDENTITY`.
    pub encode: u32,
    /// Key map undone as the keys are stored (the last round) or `IDENTITY`.
    pub decode: u32,
}

/// The block's shared memory, as [`shared_layout`] lays it out.
struct Shared<I> {
    top: *mut I,
    candidates: *mut I,
    bests: *mut I,
    counters: *mut u32,
}

/// One part's input and output.
struct Part<K> {
    keys: *const K,
    indices: *const u64,
    len: u32,
    first_index: u64,
    out_keys: *mut K,
    out_indices: *mut u64,
}

/// What a thread keeps across barriers: its keys of the tile, as items, and those still to go
/// into the candidate buffer (one bit per item).
#[derive(Clone, Copy)]
struct Held<I, const ITEMS: usize> {
    items: [I; ITEMS],
    pending: u32,
}

/// Runs the parts `first, first + step, …` of a round (`step` = the launch's blocks), each as
/// [`select`] does.
///
/// # Safety
/// The buffers of `args` hold what their fields say; `shared` is 16-byte aligned and holds
/// `shared_bytes(size_of::<K>(), args.k)` bytes used by this block alone; the block has
/// [`THREADS`] threads; `ITEMS` is `items_per_thread(size_of::<K>())`.
#[inline(always)]
pub unsafe fn select_parts<K: TopKey, B: Counting, const ITEMS: usize>(
    block: &B,
    shared: *mut u8,
    args: &Args<K>,
    first: u64,
    step: u64,
) {
    let r = args.round;
    // At least 1 (the plan's), said so that the division has no check.
    let parts = r.parts.max(1);
    let mut b = first;
    while b < r.blocks() {
        if b != first {
            // The last part's write-out read the running top-k.
            block.sync();
        }
        let (segment, p) = (b / parts, b % parts);
        let (start, end) = r.part(p);
        let input = segment * r.len + start;
        let output = b * u64::from(args.k);
        // SAFETY: the caller's contract; the part lies inside its segment, and its k outputs
        // inside the round's output.
        unsafe {
            let part = Part {
                keys: args.keys.add(input as usize),
                indices: if args.indices.is_null() {
                    args.indices
                } else {
                    args.indices.add(input as usize)
                },
                len: (end - start) as u32,
                first_index: start,
                out_keys: args.out_keys.add(output as usize),
                out_indices: args.out_indices.add(output as usize),
            };
            select::<K, B, ITEMS>(block, shared, &part, args.k, args.encode, args.decode);
        }
        b += step;
    }
}

/// Selects the `k` smallest items of one part and writes their keys (through the inverse of
/// `decode`) and indices, smallest first; slots past the part's keys get [`NO_INDEX`].
///
/// # Safety
/// As [`select_parts`], for the part.
#[inline(always)]
unsafe fn select<K: TopKey, B: Counting, const ITEMS: usize>(
    block: &B,
    shared: *mut u8,
    part: &Part<K>,
    k: u32,
    encode: u32,
    decode: u32,
) {
    let none = K::NONE;
    let nt = THREADS;
    let (kp, slots) = (padded_k(k), candidate_slots(k));
    let [top, candidates, bests, counters] = shared_layout(size_of::<K>() as u32, k);
    // SAFETY: the regions of the caller's shared memory.
    let sh = unsafe {
        Shared {
            top: shared.add(top as usize) as *mut K::Item,
            candidates: shared.add(candidates as usize) as *mut K::Item,
            bests: shared.add(bests as usize) as *mut K::Item,
            counters: shared.add(counters as usize) as *mut u32,
        }
    };
    // SAFETY (every block below): indices stay inside their shared regions (top < kp,
    // candidates < slots, bests < THREADS, counters < 3), and inside the part (< len).
    block.units(kp, |u| unsafe { *sh.top.add(u as usize) = none });
    block.units(slots, |u| unsafe { *sh.candidates.add(u as usize) = none });
    block.units(3, |u| unsafe { *sh.counters.add(u as usize) = 0 });
    block.sync();

    // Block-uniform: every thread computes them alike from shared memory read after a barrier.
    let mut count = 0u32; // keys in the candidate buffer (more when it overflowed)
    let mut bound = none; // no item above it is among the part's k smallest
    let mut round = 0u32; // appends so far: its counter is `round % 3`
    let mut held = block.regs(
        nt,
        Held::<K::Item, ITEMS> {
            items: [none; ITEMS],
            pending: 0,
        },
    );
    let tile = nt * ITEMS as u32;
    let mut base = 0u32;
    while base < part.len {
        let estimate = k <= nt && unsafe { *sh.top.add(k as usize - 1) } == none;
        block.units(nt, |u| {
            let h = held.unit(u);
            let mut best = none;
            unrolled::<ITEMS>(|r| {
                let i = base + r as u32 * nt + u;
                let mut item = none;
                if i < part.len {
                    let present = part.indices.is_null()
                        || unsafe { *part.indices.add(i as usize) } != NO_INDEX;
                    if present {
                        item = unsafe { *part.keys.add(i as usize) }.encode(encode).pack(i);
                    }
                }
                h.items[r] = item;
                best = best.min(item);
            });
            if estimate {
                unsafe { *sh.bests.add(u as usize) = best };
            }
        });
        if estimate {
            block.sync();
            unsafe { sort(block, sh.bests, nt) };
            bound = bound.min(unsafe { *sh.bests.add(k as usize - 1) });
        }
        block.units(nt, |u| {
            let h = held.unit(u);
            let mut pending = 0;
            unrolled::<ITEMS>(|r| {
                if h.items[r] != none && h.items[r] <= bound {
                    pending |= 1 << r;
                }
            });
            h.pending = pending;
        });
        loop {
            let counter = unsafe { sh.counters.add((round % 3) as usize) };
            // Zeroed now, used by the next append: the one before read it before the barrier
            // that ended the last append.
            let next = unsafe { sh.counters.add(((round + 1) % 3) as usize) };
            block.units(nt, |u| {
                if u == 0 {
                    unsafe { *next = 0 };
                }
                let h = held.unit(u);
                unrolled::<ITEMS>(|r| {
                    if h.pending & (1 << r) != 0 {
                        let slot = count + unsafe { block.fetch_add(counter, 1) };
                        if slot < slots {
                            unsafe { *sh.candidates.add(slot as usize) = h.items[r] };
                            h.pending &= !(1 << r);
                        }
                    }
                });
            });
            block.sync();
            count += unsafe { *counter };
            round += 1;
            if count < slots {
                break;
            }
            // Full: merge, tighten the bound, offer the keys that found no slot again.
            unsafe { merge_candidates(block, &sh, (slots, kp), none) };
            count = 0;
            bound = bound.min(unsafe { *sh.top.add(k as usize - 1) });
            block.units(nt, |u| {
                let h = held.unit(u);
                unrolled::<ITEMS>(|r| {
                    if h.items[r] > bound {
                        h.pending &= !(1 << r);
                    }
                });
            });
        }
        base = base.saturating_add(tile);
    }
    if count > 0 {
        unsafe { merge_candidates(block, &sh, (count, kp), none) };
    }
    block.units(k, |i| unsafe {
        let item = *sh.top.add(i as usize);
        let (key, index) = if item == none {
            (K::INFINITY, NO_INDEX)
        } else {
            let (key, pos) = K::unpack(item);
            let index = if part.indices.is_null() {
                part.first_index + u64::from(pos)
            } else {
                *part.indices.add(pos as usize)
            };
            (key.decode(decode), index)
        };
        *part.out_keys.add(i as usize) = key;
        *part.out_indices.add(i as usize) = index;
    });
}

/// Merges the candidate buffer, whose first `filled` slots hold items and the rest `none`
/// ([`TopKey::NONE`]), into the running top-k (`kp` slots), and empties the buffer. Every
/// thread calls it; it starts after a barrier and ends with one.
///
/// # Safety
/// `sh`'s regions as [`select`] lays them out; `filled` at most the buffer's slots.
#[inline(always)]
unsafe fn merge_candidates<I: Copy + Ord, B: Block>(
    block: &B,
    sh: &Shared<I>,
    (filled, kp): (u32, u32),
    none: I,
) {
    let len = filled.max(kp).next_power_of_two();
    // SAFETY: slots below `len` (at most the buffer's) and `kp`.
    unsafe {
        sort(block, sh.candidates, len);
        // The kp smallest of both, as a bitonic sequence: ascending top against descending
        // candidates.
        block.units(kp, |i| {
            let theirs = *sh.candidates.add((kp - 1 - i) as usize);
            let mine = sh.top.add(i as usize);
            *mine = (*mine).min(theirs);
        });
        block.sync();
        block.units(len, |i| *sh.candidates.add(i as usize) = none);
        half_cleaners(block, sh.top, kp);
        if kp == 1 {
            // No half-cleaner step, so no barrier yet after emptying the buffer.
            block.sync();
        }
    }
}

/// Sorts the `len` (a power of two) items at `a` ascending: Batcher's bitonic sorter, a
/// barrier after each step. Every thread calls it; it starts after a barrier.
///
/// # Safety
/// `a` holds `len` items of the block's shared memory.
#[inline(always)]
unsafe fn sort<I: Copy + Ord, B: Block>(block: &B, a: *mut I, len: u32) {
    let mut size = 2;
    while size <= len {
        let mut stride = size / 2;
        while stride > 0 {
            block.units(len / 2, |p| {
                let i = 2 * p - (p & (stride - 1));
                // SAFETY: i + stride < len.
                unsafe { compare_exchange(a, i, i + stride, i & size == 0) };
            });
            block.sync();
            stride /= 2;
        }
        size *= 2;
    }
}

/// Sorts the bitonic sequence of `len` (a power of two) items at `a` ascending: half-cleaners
/// at strides `len / 2, …, 1`, a barrier after each.
///
/// # Safety
/// As [`sort`].
#[inline(always)]
unsafe fn half_cleaners<I: Copy + Ord, B: Block>(block: &B, a: *mut I, len: u32) {
    let mut stride = len / 2;
    while stride > 0 {
        block.units(len / 2, |p| {
            let i = 2 * p - (p & (stride - 1));
            // SAFETY: i + stride < len.
            unsafe { compare_exchange(a, i, i + stride, true) };
        });
        block.sync();
        stride /= 2;
    }
}

/// Puts the smaller of `a[i]` and `a[j]` (`i < j`) at `i` if `ascending`, else at `j`.
///
/// # Safety
/// Both slots are valid.
#[inline(always)]
unsafe fn compare_exchange<I: Copy + Ord>(a: *mut I, i: u32, j: u32, ascending: bool) {
    // SAFETY: the caller's contract.
    unsafe {
        let (x, y) = (*a.add(i as usize), *a.add(j as usize));
        if (x > y) == ascending {
            *a.add(i as usize) = y;
            *a.add(j as usize) = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{CpuBlock, xorshift};
    use crate::keys::{IDENTITY, KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, key_map};
    use crate::topk::{MAX_K, items_per_thread, plan, shared_bytes};

    /// The k smallest (encoded key, position) of each segment, by sorting: the reference.
    fn reference<K: TopKey + Ord>(
        keys: &[K],
        len: usize,
        k: usize,
        map: u32,
    ) -> (Vec<K>, Vec<u64>) {
        let (mut out_keys, mut out_indices) = (Vec::new(), Vec::new());
        for segment in keys.chunks(len) {
            let mut items: Vec<(K, usize)> = segment
                .iter()
                .enumerate()
                .map(|(i, &key)| (key.encode(map), i))
                .collect();
            items.sort_unstable();
            for &(key, i) in &items[..k] {
                out_keys.push(key.decode(map));
                out_indices.push(i as u64);
            }
        }
        (out_keys, out_indices)
    }

    /// Runs every round of the selection with the block code on the CPU, as the host does on
    /// the GPU (`blocks`: the blocks a GPU would run at once).
    fn run<K: TopKey, const ITEMS: usize>(
        keys: &[K],
        len: usize,
        k: u32,
        map: u32,
        blocks: u64,
    ) -> (Vec<K>, Vec<u64>) {
        assert_eq!(ITEMS as u32, items_per_thread(size_of::<K>() as u32));
        let segments = (keys.len() / len) as u64;
        let rounds: Vec<Round> =
            plan(segments, len as u64, k, size_of::<K>() as u32, blocks).collect();
        let mut shared = vec![0u128; shared_bytes(size_of::<K>() as u32, k) as usize / 16];
        let (mut in_keys, mut in_indices) = (keys.to_vec(), Vec::<u64>::new());
        for (i, &round) in rounds.iter().enumerate() {
            let out_len = (round.blocks() * u64::from(k)) as usize;
            let mut out_keys = vec![K::INFINITY; out_len];
            let mut out_indices = vec![0u64; out_len];
            let args = Args {
                keys: in_keys.as_ptr(),
                indices: if i == 0 {
                    core::ptr::null()
                } else {
                    in_indices.as_ptr()
                },
                out_keys: out_keys.as_mut_ptr(),
                out_indices: out_indices.as_mut_ptr(),
                round,
                k,
                encode: if i == 0 { map } else { IDENTITY },
                decode: if i + 1 == rounds.len() { map } else { IDENTITY },
            };
            // A launch of two blocks, each running every other part.
            for first in 0..2 {
                // SAFETY: the buffers hold what `args` says; the shared memory its bytes.
                unsafe {
                    select_parts::<K, _, ITEMS>(
                        &CpuBlock::default(),
                        shared.as_mut_ptr() as *mut u8,
                        &args,
                        first,
                        2,
                    )
                };
            }
            (in_keys, in_indices) = (out_keys, out_indices);
        }
        (in_keys, in_indices)
    }

    fn check32(keys: &[u32], len: usize, k: u32, map: u32, blocks: u64) {
        let got = run::<u32, 16>(keys, len, k, map, blocks);
        let expected = reference(keys, len, k as usize, map);
        assert!(
            got == expected,
            "u32, {} keys in rows of {len}, k = {k}, map {map}, {blocks} blocks",
            keys.len()
        );
    }

    fn check64(keys: &[u64], len: usize, k: u32, map: u32, blocks: u64) {
        let got = run::<u64, 8>(keys, len, k, map, blocks);
        let expected = reference(keys, len, k as usize, map);
        assert!(
            got == expected,
            "u64, {} keys in rows of {len}, k = {k}, map {map}, {blocks} blocks",
            keys.len()
        );
    }

    #[test]
    fn one_block_selects_the_k_smallest_of_any_length() {
        let mut next = xorshift(7);
        for n in [1usize, 2, 31, 255, 256, 257, 4095, 4096, 4097, 9000] {
            let keys: Vec<u32> = (0..n).map(|_| next() as u32).collect();
            for k in [1u32, 2, 31, 32, 33, 255, 256, 257, 1023, 1024] {
                if k as usize <= n {
                    check32(&keys, n, k, key_map(KIND_UNSIGNED, k % 2 == 0), 1);
                }
            }
        }
    }

    #[test]
    fn rounds_of_many_parts_select_like_one() {
        let mut next = xorshift(11);
        let n = 200_000;
        let keys: Vec<u32> = (0..n).map(|_| next() as u32).collect();
        for (k, blocks) in [(1, 64), (8, 32), (100, 16), (1024, 40)] {
            let rounds = plan(1, n as u64, k, 4, blocks).count();
            assert!(rounds >= 2, "k = {k}");
            check32(&keys, n, k, key_map(KIND_SIGNED, false), blocks);
        }
        let keys: Vec<u64> = (0..n).map(|_| next()).collect();
        check64(&keys, n, 64, key_map(KIND_UNSIGNED, true), 64);
    }

    #[test]
    fn ties_go_to_the_lowest_index() {
        let mut next = xorshift(3);
        // Few distinct keys: every selected key has hundreds of equals.
        let keys: Vec<u32> = (0..100_000).map(|_| (next() % 5) as u32).collect();
        for k in [1, 33, 512, 1024] {
            check32(&keys, keys.len(), k, IDENTITY, 24);
            check32(&keys, keys.len(), k, key_map(KIND_UNSIGNED, true), 24);
        }
        let equal = vec![42u64; 50_000];
        check64(&equal, equal.len(), 300, IDENTITY, 8);
        let (_, indices) = run::<u64, 8>(&equal, equal.len(), 300, IDENTITY, 8);
        assert_eq!(indices, (0..300).collect::<Vec<u64>>());
    }

    #[test]
    fn sorted_input_that_keeps_every_key_is_still_right() {
        // Each key is smaller than every key before it: all pass the bound, every buffer
        // overflows.
        let n = 70_000u32;
        let descending: Vec<u32> = (0..n).rev().collect();
        let ascending: Vec<u32> = (0..n).collect();
        for k in [1, 32, 1000] {
            check32(&descending, n as usize, k, IDENTITY, 4);
            check32(&ascending, n as usize, k, key_map(KIND_UNSIGNED, true), 4);
            check32(&ascending, n as usize, k, IDENTITY, 4);
        }
        let organ: Vec<u64> = (0..n as u64).map(|i| i.min(u64::from(n) - i)).collect();
        check64(&organ, n as usize, 777, key_map(KIND_SIGNED, true), 6);
    }

    #[test]
    fn rows_select_within_each_row() {
        let mut next = xorshift(5);
        for (rows, len, k) in [
            (50, 4096, 8),
            (7, 5000, 256),
            (300, 33, 33),
            (3, 20_000, 1),
            (64, 100, 64),
        ] {
            let keys: Vec<u32> = (0..rows * len).map(|_| (next() % 1000) as u32).collect();
            check32(&keys, len, k, key_map(KIND_UNSIGNED, true), 16);
            let keys: Vec<u64> = keys.iter().map(|&k| u64::from(k) << 20).collect();
            check64(&keys, len, k, IDENTITY, 16);
        }
    }

    #[test]
    fn floats_order_like_total_cmp_with_nan_and_signed_zeros() {
        let mut next = xorshift(9);
        let specials = [
            f32::NAN,
            -f32::NAN,
            -0.0,
            0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let floats: Vec<f32> = (0..30_000)
            .map(|i| {
                if i % 50 == 0 {
                    specials[i / 50 % specials.len()]
                } else {
                    (next() as i32) as f32 / 1e6
                }
            })
            .collect();
        let bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
        for descending in [false, true] {
            let map = key_map(KIND_FLOAT, descending);
            check32(&bits, bits.len(), 700, map, 8);
            let (keys, _) = run::<u32, 16>(&bits, bits.len(), 700, map, 8);
            let mut expected = floats.clone();
            if descending {
                expected.sort_by(|a, b| b.total_cmp(a));
            } else {
                expected.sort_by(f32::total_cmp);
            }
            let expected: Vec<u32> = expected[..700].iter().map(|f| f.to_bits()).collect();
            assert_eq!(keys, expected);
        }
        let wide: Vec<u64> = floats.iter().map(|&f| f64::from(f).to_bits()).collect();
        check64(&wide, wide.len(), 129, key_map(KIND_FLOAT, true), 8);
    }

    #[test]
    fn random_lengths_and_k() {
        let mut next = xorshift(13);
        for _ in 0..40 {
            let n = 1 + (next() % 60_000) as usize;
            let k = 1 + (next() % u64::from(MAX_K.min(n as u32))) as u32;
            let blocks = 1 + next() % 64;
            let range = 1 + next() % 1_000_000;
            let keys: Vec<u32> = (0..n).map(|_| (next() % range) as u32).collect();
            check32(&keys, n, k, key_map(KIND_SIGNED, next() % 2 == 0), blocks);
        }
    }
}
