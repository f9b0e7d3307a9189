//! A block's work in a keys-only merge pass: the output tile's slices of the two runs (from the
//! same merge-path splits as the stable passes) merged by a *bitonic merging network* instead of
//! per-thread serial merges.
//!
//! Why: the serial merges read shared memory at data-dependent addresses (many of a stable pass's
//! shared-memory wavefronts are bank-conflict replays, docs/decisions.md, "Keys-only merge sort")
//! and cost about 39 instructions per key. A bitonic merge of a tile of 2^12 keys is 12
//! half-cleaner steps on fixed positions: with each thread's 16 keys in registers and three
//! layouts, every step compares registers of one thread (one `min` and one `max` per pair), and the
//! two layout changes go through shared memory without bank conflicts ([`padded`]). Networks do not
//! keep equal keys in order; for keys alone that cannot be seen (equal keys are equal bits), so
//! only keys-only sorts take this path.
//!
//! The tile as a bitonic sequence: A's slice ascending at positions `0 ..`, B's slice descending
//! at positions `.. 2^12`, +∞ between them (a short last tile), so the sequence rises then
//! falls and one bitonic merge (half-cleaners on bits 11, 10, …, 0) sorts it.

use crate::bitonic::block::small::{Run, register_steps};
use crate::block::{Block, L2_LINE_BYTES};
use crate::keys::{IDENTITY, KeyBits};
use crate::merge::block::{Buffers, unrolled};
use crate::merge::{Pairing, TileRanges};
use crate::tuning::{NETWORK_MERGE_THREADS, NETWORK_MERGE_TILE, SMALL_RUN};

const RUN: usize = SMALL_RUN as usize;

const _: () = assert!(
    NETWORK_MERGE_TILE == 1 << 12 && NETWORK_MERGE_THREADS == 256 && SMALL_RUN == 16,
    "the layouts below place 8 unit bits and 4 register bits"
);

/// Tile position of unit `u`'s register `r` in layout `layout` (256 units × 16 registers, 12
/// bits). The registers hold bits 8..11 in layout 0 (a warp holds 32 consecutive positions per
/// register: coalesced loads), bits 4..7 in layout 1, and bits 0..3 in layout 2 (unit `u`
/// holds `16u .. 16u + 16`). Layout 1: the unit's bits 0..3 on bits 0..3, bit 4 on bit 9, bit 5
/// on bit 8, bits 6..7 on bits 10..11 (with [`padded`] slots, unit bit 4 then moves a warp's
/// access by 16 banks).
#[inline(always)]
pub const fn position(layout: u32, u: u32, r: u32) -> u32 {
    match layout {
        0 => u | (r << 8),
        1 => (u & 15) | ((u & 16) << 5) | ((u & 32) << 3) | ((u >> 6) << 10) | (r << 4),
        _ => (u << 4) | r,
    }
}

/// Shared slot of tile position `p`: one padding word after every 32 keys
/// ([`crate::tuning::tile_shared_words`]), which gives each warp access of every layout
/// ([`position`], one register at a time) 32 different banks (test
/// `every_layout_access_is_free_of_bank_conflicts`).
#[inline(always)]
pub const fn padded(p: u32) -> u32 {
    p + (p >> 5)
}

/// [`padded`]`(position(layout, u, r))` as a per-thread base plus a constant per register
/// (the layouts' register bits and unit bits are disjoint, and no carry crosses a padding
/// boundary: test `slots_are_a_base_plus_a_constant`), so that an access costs no arithmetic.
#[inline(always)]
fn slot(layout: u32, u: u32, r: usize) -> usize {
    (padded(position(layout, u, 0)) + padded(position(layout, 0, r as u32))) as usize
}

/// Unit `u`'s share of bringing a tile's input, `a_len` keys from `a` and `b_len` from `b`,
/// into the L2 cache: every `NETWORK_MERGE_THREADS`-th line of the two slices from its `u`-th
/// (at most one per unit for 4-byte keys), without waiting for them.
#[inline(always)]
fn prefetch_tile<K: KeyBits, B: Block>(
    block: &B,
    u: u32,
    (a, a_len): (*const K, u32),
    (b, b_len): (*const K, u32),
) {
    // The lines `first .. first + count` that hold `len` keys from `at`.
    let lines = |at: *const K, len: u32| {
        let first = at as usize / L2_LINE_BYTES;
        let end = (at as usize + len as usize * size_of::<K>()).div_ceil(L2_LINE_BYTES);
        (first, end.saturating_sub(first) as u32)
    };
    let (a_first, a_count) = lines(a, a_len);
    let (b_first, b_count) = lines(b, b_len);
    // At most a tile's lines, and one more per slice where it straddles a boundary; a
    // constant trip count once `K` is known: unrolled.
    let most = NETWORK_MERGE_TILE as usize * size_of::<K>() / L2_LINE_BYTES + 2;
    for i in 0..most.div_ceil(NETWORK_MERGE_THREADS as usize) as u32 {
        let q = u + i * NETWORK_MERGE_THREADS;
        if q < a_count + b_count {
            let line = if q < a_count {
                a_first + q as usize
            } else {
                b_first + (q - a_count) as usize
            };
            block.prefetch((line * L2_LINE_BYTES) as *const u8);
        }
    }
}

/// Output tile `tile` of a keys-only merge launch paired by `pairing`: its slices of the two
/// runs (from `splits`, as for the stable passes) from `buf.src_keys`, merged by a bitonic
/// network into `buf.dst_keys` through the inverse of `decode`; records the tile's first and
/// last (encoded) key in `buf.edges` (unless null) for the next pass's partition. Before its
/// own loads it asks the L2 cache for the slices of tile `tile + ahead` (unless `ahead` is 0),
/// which a later block merges, so that their keys come from L2 rather than device memory.
///
/// Phases: load (layout 0, straight from device memory into registers) and the steps on bits
/// 11..8; write the keys to shared memory; read layout 1, steps on bits 7..4, write back the
/// same slots; read layout 2, steps on bits 3..0, write back; read layout 0 and store
/// (a warp's 32 consecutive outputs per store).
///
/// # Safety
/// `buf.src_keys` and `buf.dst_keys` hold `n` keys and do not overlap; `splits` holds the
/// pass's splits for tiles of `NETWORK_MERGE_TILE` keys; `shared` holds
/// `network_merge_shared_bytes(size_of::<K>())` bytes used by this block alone; `buf.edges`,
/// unless null, has room for the tile's edges.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn merge_tile<K: KeyBits, B: Block>(
    block: &B,
    shared: *mut K,
    buf: Buffers<K, ()>,
    splits: *const u64,
    n: u64,
    pairing: Pairing,
    (tile, ahead): (u64, u64),
    decode: u32,
) {
    let nv = NETWORK_MERGE_TILE;
    let tiles = n.div_ceil(u64::from(nv));
    // SAFETY (both): the caller's contract: one split per tile; `next` is read only for a tile
    // k + 1 that exists.
    let ranges_of = |k: u64| unsafe {
        TileRanges::new(
            k,
            n,
            pairing,
            u64::from(nv),
            *splits.add(k as usize),
            || *splits.add(k as usize + 1),
        )
    };
    let ranges = ranges_of(tile);
    // The input of a tile a later block merges, asked of the L2 cache before this block's own
    // loads; its splits are read with this tile's, in one round trip.
    let later = tile + ahead;
    if ahead > 0 && later < tiles {
        let r = ranges_of(later);
        let slice = |begin: u64, end: u64| {
            (
                buf.src_keys.wrapping_add(begin as usize),
                (end - begin) as u32,
            )
        };
        let (a, b) = (slice(r.a_begin, r.a_end), slice(r.b_begin, r.b_end));
        block.units(NETWORK_MERGE_THREADS, |u| prefetch_tile(block, u, a, b));
    }
    let a_len = (ranges.a_end - ranges.a_begin) as u32;
    let total = ranges.len() as u32;
    // Positions >= b_from hold B's slice reversed: position p holds B's key
    // b_begin + (nv − 1 − p).
    let b_from = nv - (total - a_len);
    let full = total == nv;
    let a = buf.src_keys.wrapping_add(ranges.a_begin as usize);
    let b = buf
        .src_keys
        .wrapping_add(ranges.b_begin as usize + nv as usize - 1);
    block.units(NETWORK_MERGE_THREADS, |u| {
        let mut keys: Run<K> = [K::INFINITY; RUN];
        unrolled::<RUN>(|r| {
            let p = position(0, u, r as u32);
            // One load per key, from one of two per-thread bases with a constant offset.
            let at = if p < a_len {
                a.wrapping_add(p as usize)
            } else {
                b.wrapping_sub(p as usize)
            };
            // A full tile has no gap between the slices: no bounds check (block-uniform).
            if full || p < a_len || p >= b_from {
                // SAFETY: p < a_len reads A's slice, p >= b_from B's (nv − 1 − p < its length).
                keys[r] = unsafe { *at };
            }
        });
        register_steps(&mut keys, 3, 0);
        // SAFETY: slots < nv, each written by one unit.
        unrolled::<RUN>(|r| unsafe { *shared.add(slot(0, u, r)) = keys[r] });
    });
    block.sync();
    // Each unit writes back the slots it read: no barrier between its reads and writes.
    block.units(NETWORK_MERGE_THREADS, |u| {
        // SAFETY: slots < nv; the units' slots are disjoint.
        let mut keys: Run<K> = core::array::from_fn(|r| unsafe { *shared.add(slot(1, u, r)) });
        register_steps(&mut keys, 3, 0);
        unrolled::<RUN>(|r| unsafe { *shared.add(slot(1, u, r)) = keys[r] });
    });
    block.sync();
    let base = tile * u64::from(nv);
    let dst = buf.dst_keys.wrapping_add(base as usize);
    block.units(NETWORK_MERGE_THREADS, |u| {
        // SAFETY: as above.
        let mut keys: Run<K> = core::array::from_fn(|r| unsafe { *shared.add(slot(2, u, r)) });
        register_steps(&mut keys, 3, 0);
        let first = u * SMALL_RUN;
        if !buf.edges.is_null() && first < total {
            // SAFETY: the caller's contract: room for tile `tile`'s two edges.
            unsafe {
                let edges = buf.edges.add(2 * tile as usize);
                if u == 0 {
                    *edges = keys[0];
                }
                if (total - 1) / SMALL_RUN == u {
                    let last = ((total - 1) % SMALL_RUN) as usize;
                    unrolled::<RUN>(|r| {
                        if r == last {
                            *edges.add(1) = keys[r];
                        }
                    });
                }
            }
        }
        // Back to the unit's own slots, then each warp stores 32 consecutive outputs at a time
        // (each thread's 16 outputs as 16-byte stores split every 32-byte sector between two
        // instructions and tripled the L2's write sectors).
        // SAFETY: the unit's own slots of layout 2.
        unrolled::<RUN>(|r| unsafe { *shared.add(slot(2, u, r)) = keys[r] });
    });
    block.sync();
    // SAFETY (both): slots < nv; outputs p < total lie inside the n positions.
    if full && decode == IDENTITY {
        // Every pass but the last, on all tiles but the last: no bounds, no key map.
        block.units(NETWORK_MERGE_THREADS, |u| {
            unrolled::<RUN>(|r| unsafe {
                *dst.add(position(0, u, r as u32) as usize) = *shared.add(slot(0, u, r));
            });
        });
    } else {
        block.units(NETWORK_MERGE_THREADS, |u| {
            unrolled::<RUN>(|r| {
                let p = position(0, u, r as u32);
                if p < total {
                    unsafe {
                        let k = *shared.add(slot(0, u, r));
                        *dst.add(p as usize) = k.decode(decode);
                    }
                }
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{CpuBlock, xorshift};
    use crate::merge::{AllLanes, partition};

    #[test]
    fn each_layout_is_a_permutation_of_the_tile() {
        for layout in 0..3 {
            let mut seen = vec![false; NETWORK_MERGE_TILE as usize];
            for u in 0..NETWORK_MERGE_THREADS {
                for r in 0..SMALL_RUN {
                    let p = position(layout, u, r) as usize;
                    assert!(!seen[p], "layout {layout}: position {p} twice");
                    seen[p] = true;
                }
            }
            // The register bits are the layout's: bits 8..11, 4..7, 0..3.
            let shift = [8, 4, 0][layout as usize];
            assert_eq!(position(layout, 37, 5) >> shift & 15, 5);
            assert_eq!(position(layout, 37, 0) >> shift & 15, 0);
        }
    }

    #[test]
    fn slots_are_a_base_plus_a_constant() {
        for layout in 0..3 {
            for u in 0..NETWORK_MERGE_THREADS {
                for r in 0..SMALL_RUN {
                    let p = position(layout, u, r);
                    assert_eq!(slot(layout, u, r as usize), padded(p) as usize);
                    assert!(slot(layout, u, r as usize) < padded(NETWORK_MERGE_TILE) as usize);
                }
            }
        }
    }

    #[test]
    fn every_layout_access_is_free_of_bank_conflicts() {
        for layout in 0..3 {
            for warp in 0..NETWORK_MERGE_THREADS / 32 {
                for r in 0..SMALL_RUN {
                    let banks = (0..32)
                        .map(|lane| padded(position(layout, 32 * warp + lane, r)) % 32)
                        .fold(0u64, |m, bank| m | 1 << bank);
                    assert_eq!(
                        banks,
                        u32::MAX as u64,
                        "layout {layout}, warp {warp}, r {r}"
                    );
                }
            }
        }
    }

    /// The splits of a pass over `keys` (runs of `width`): one per output tile.
    fn pass_splits(keys: &[u32], width: u64) -> Vec<u64> {
        let (n, nv) = (keys.len() as u64, u64::from(NETWORK_MERGE_TILE));
        let pairing = Pairing::Pass { width };
        (0..n.div_ceil(nv))
            .map(|k| partition(k, n, pairing, nv, |i| keys[i as usize], &AllLanes))
            .collect()
    }

    /// One pass over `keys` (runs of `width`) through the block code, tile by tile, each
    /// prefetching for the tile 3 ahead.
    fn pass(keys: &[u32], width: u64, decode: u32) -> (Vec<u32>, Vec<u32>) {
        let (out, edges, _) = pass_ahead(keys, width, decode, 3);
        (out, edges)
    }

    /// [`pass`] with the tiles prefetching `ahead`; also each tile's prefetched addresses.
    fn pass_ahead(
        keys: &[u32],
        width: u64,
        decode: u32,
        ahead: u64,
    ) -> (Vec<u32>, Vec<u32>, Vec<Vec<usize>>) {
        let n = keys.len() as u64;
        let nv = u64::from(NETWORK_MERGE_TILE);
        let pairing = Pairing::Pass { width };
        let tiles = n.div_ceil(nv);
        let splits = pass_splits(keys, width);
        let mut out = vec![0xdead_beef_u32; keys.len()];
        let mut edges = vec![0u32; 2 * tiles as usize];
        let mut shared = vec![0u32; padded(NETWORK_MERGE_TILE) as usize];
        let buf = Buffers {
            src_keys: keys.as_ptr(),
            dst_keys: out.as_mut_ptr(),
            src_values: core::ptr::null(),
            dst_values: core::ptr::null_mut(),
            edges: edges.as_mut_ptr(),
        };
        let mut prefetched = Vec::new();
        for tile in 0..tiles {
            let block = CpuBlock::default();
            // SAFETY: buffers of n keys, one split per tile, a tile of shared memory.
            unsafe {
                let (shared, splits) = (shared.as_mut_ptr(), splits.as_ptr());
                merge_tile(
                    &block,
                    shared,
                    buf,
                    splits,
                    n,
                    pairing,
                    (tile, ahead),
                    decode,
                )
            };
            prefetched.push(block.prefetched.take());
        }
        (out, edges, prefetched)
    }

    /// Runs of `width` keys, each sorted: random keys from a small range (many ties) or a
    /// wide one.
    fn runs(n: usize, width: usize, seed: u64, range: u64) -> Vec<u32> {
        let mut next = xorshift(seed);
        let mut keys: Vec<u32> = (0..n).map(|_| (next() % range) as u32).collect();
        keys.chunks_mut(width).for_each(|run| run.sort_unstable());
        keys
    }

    #[test]
    fn a_pass_merges_every_pair_of_runs() {
        let tile = NETWORK_MERGE_TILE as usize;
        for (n, width) in [
            (2 * tile, tile),
            (3 * tile + 1, tile),
            (8 * tile, 2 * tile),
            (5 * tile - 17, 2 * tile),
            (7 * tile + 123, 4 * tile),
            (tile + 1, tile),
            (2 * tile - 1, tile),
        ] {
            for (seed, range) in [(1, 5), (2, 1 << 32), (3, 1000)] {
                let keys = runs(n, width, seed, range);
                let (out, edges) = pass(&keys, width as u64, IDENTITY);
                let mut expected = keys.clone();
                expected
                    .chunks_mut(2 * width)
                    .for_each(|pair| pair.sort_unstable());
                assert_eq!(out, expected, "n = {n}, width = {width}, range = {range}");
                for (t, chunk) in out.chunks(tile).enumerate() {
                    assert_eq!(edges[2 * t], chunk[0], "first edge of tile {t}");
                    assert_eq!(edges[2 * t + 1], *chunk.last().unwrap(), "last edge {t}");
                }
            }
        }
    }

    #[test]
    fn a_block_prefetches_exactly_the_input_of_the_tile_ahead() {
        let nv = NETWORK_MERGE_TILE as usize;
        for (n, width, ahead) in [(8 * nv, nv, 3), (7 * nv + 123, 2 * nv, 2), (3 * nv, nv, 5)] {
            let keys = runs(n, width, 9, 1000);
            let (_, _, prefetched) = pass_ahead(&keys, width as u64, IDENTITY, ahead);
            let splits = pass_splits(&keys, width as u64);
            let pairing = Pairing::Pass {
                width: width as u64,
            };
            let (n, nv) = (n as u64, nv as u64);
            for (tile, asked) in prefetched.iter().enumerate() {
                let later = tile as u64 + ahead;
                let mut want = std::collections::BTreeSet::new();
                if later < n.div_ceil(nv) {
                    let next = || splits.get(later as usize + 1).copied().unwrap_or(0);
                    let r = TileRanges::new(later, n, pairing, nv, splits[later as usize], next);
                    for i in (r.a_begin..r.a_end).chain(r.b_begin..r.b_end) {
                        want.insert(
                            keys.as_ptr().wrapping_add(i as usize) as usize / L2_LINE_BYTES,
                        );
                    }
                }
                let lines: std::collections::BTreeSet<usize> =
                    asked.iter().map(|&at| at / L2_LINE_BYTES).collect();
                let what = format!("n = {n}, width {width}, tile {tile}");
                assert_eq!(asked.len(), want.len(), "each line once: {what}");
                assert_eq!(lines, want, "{what}");
            }
        }
    }

    #[test]
    fn the_last_pass_decodes() {
        use crate::keys::{KIND_SIGNED, key_map};
        let map = key_map(KIND_SIGNED, true);
        let width = NETWORK_MERGE_TILE as usize;
        let n = 3 * width + 77;
        let keys = runs(n, width, 4, 1 << 32);
        let (out, _) = pass(&keys, width as u64, map);
        let mut expected = keys.clone();
        expected
            .chunks_mut(2 * width)
            .for_each(|pair| pair.sort_unstable());
        let expected: Vec<u32> = expected.into_iter().map(|k| k.decode(map)).collect();
        assert_eq!(out, expected);
    }
}
