//! A block's work in the stable merge sort (moderngpu's names: `nt` threads, `vt` keys per
//! thread, `nv = nt · vt` keys per tile), generic over the [`Block`] so that the CPU tests run
//! this very code.
//!
//! Shared memory holds two buffers of `nv` keys and two of `nv` values; merge steps read one
//! and write the other (ping-pong), so no unit keeps registers across a barrier and the units of
//! a phase write disjoint slots.
//!
//! - [`sort_tile`]: load a tile (keys encoded, +∞ past the end), each unit sorts its run of `vt`
//!   keys in registers with odd-even transposition (stable: swaps only on strict `>`), then
//!   `log2 nt` rounds of merge-path merges of runs in shared memory.
//! - [`partition_unit`]: one merge-path split per output tile of a merge pass, in global memory.
//! - [`merge_tile`]: load the tile's slices of the two runs, each unit merges `vt` outputs.

use super::Block;
use crate::keys::KeyBits;
use crate::merge::{Pairing, TileRanges, merge_path_32, partition};

/// Values carried with the keys: `()` for keys-only sorts, `u32`, `u64` or `u128`. The kernels
/// only move them (loads, stores, register moves), never look at them: the host passes any
/// payload of up to 16 bytes in slots of one of these widths.
pub trait Payload: Copy + Default {}
impl Payload for () {}
impl Payload for u32 {}
impl Payload for u64 {}
impl Payload for u128 {}

/// The global buffers of one launch: keys and values are read from `src_*` and written to
/// `dst_*` (the same buffers for an in-place tile sort).
#[derive(Clone, Copy)]
pub struct Buffers<K, V> {
    /// Keys read.
    pub src_keys: *const K,
    /// Keys written.
    pub dst_keys: *mut K,
    /// Values read (dangling for `V = ()`).
    pub src_values: *const V,
    /// Values written (dangling for `V = ()`).
    pub dst_values: *mut V,
}

/// A block's shared memory: keys `[2][nv]`, then values `[2][nv]`. Buffers are picked by
/// offset arithmetic, not by indexing an array of pointers with a runtime index (that array
/// would move to local memory).
struct Shared<'b, K, V, B, const VT: usize> {
    keys: *mut K,
    values: *mut V,
    nt: u32,
    block: &'b B,
}

impl<'b, K: KeyBits, V: Payload, B: Block, const VT: usize> Shared<'b, K, V, B, VT> {
    /// # Safety
    /// `shared` is aligned for `K` and `V` and holds `merge_shared_bytes(nt · VT, …)` bytes used
    /// by this block alone.
    #[inline(always)]
    unsafe fn new(shared: *mut u8, nt: u32, block: &'b B) -> Self {
        let nv = (nt as usize) * VT;
        let keys = shared as *mut K;
        Shared {
            keys,
            // SAFETY: inside the shared memory (the caller's contract).
            values: unsafe { keys.add(2 * nv) } as *mut V,
            nt,
            block,
        }
    }

    /// Slot `i` of buffer `buf` (0 or 1).
    #[inline(always)]
    fn slot(&self, buf: usize, i: u32) -> usize {
        buf * (self.nt as usize * VT) + i as usize
    }

    /// Runs `f(u)` for every unit `u < nt` this thread owns (one on the GPU, all on the CPU).
    #[inline(always)]
    fn for_each_unit(&self, mut f: impl FnMut(u32)) {
        let mut u = self.block.thread();
        while u < self.nt {
            f(u);
            u += self.block.threads();
        }
    }

    #[inline(always)]
    fn key(&self, buf: usize, i: u32) -> K {
        // SAFETY: i < nv (every caller), inside buffer `buf`.
        unsafe { *self.keys.add(self.slot(buf, i)) }
    }

    #[inline(always)]
    fn value(&self, buf: usize, i: u32) -> V {
        // SAFETY: as in `key`.
        unsafe { *self.values.add(self.slot(buf, i)) }
    }

    #[inline(always)]
    fn set(&self, buf: usize, i: u32, key: K, value: V) {
        // SAFETY: as in `key`; the units of a phase write disjoint slots.
        unsafe {
            *self.keys.add(self.slot(buf, i)) = key;
            *self.values.add(self.slot(buf, i)) = value;
        }
    }

    /// Fills buffer 0 with `read(i)` for `i < len` and (+∞, default) up to `nv`, coalesced:
    /// unit `u` takes `i = r·nt + u`, all its `VT` loads in flight before its stores. Ends with a
    /// barrier.
    #[inline(always)]
    fn load(&self, len: u32, read: impl Fn(u32) -> (K, V)) {
        self.for_each_unit(|u| {
            let mut keys = [K::INFINITY; VT];
            let mut values = [V::default(); VT];
            for r in 0..VT {
                let i = r as u32 * self.nt + u;
                if i < len {
                    (keys[r], values[r]) = read(i);
                }
            }
            for r in 0..VT {
                self.set(0, r as u32 * self.nt + u, keys[r], values[r]);
            }
        });
        self.block.sync();
    }

    /// Calls `write(i, key, value)` for each slot `i < len` of buffer `buf`, coalesced.
    #[inline(always)]
    fn store(&self, buf: usize, len: u32, write: impl Fn(u32, K, V)) {
        self.for_each_unit(|u| {
            for r in 0..VT {
                let i = r as u32 * self.nt + u;
                if i < len {
                    write(i, self.key(buf, i), self.value(buf, i));
                }
            }
        });
    }

    /// Each unit sorts its run `u·VT .. (u+1)·VT` of buffer 0 in registers, stably. Ends with a
    /// barrier.
    #[inline(always)]
    fn sort_runs(&self) {
        self.for_each_unit(|u| {
            let first = u * VT as u32;
            let mut keys = [K::INFINITY; VT];
            let mut values = [V::default(); VT];
            for r in 0..VT {
                keys[r] = self.key(0, first + r as u32);
                values[r] = self.value(0, first + r as u32);
            }
            odd_even_transposition(&mut keys, &mut values);
            for r in 0..VT {
                self.set(0, first + r as u32, keys[r], values[r]);
            }
        });
        self.block.sync();
    }

    /// One unit's part of the merge of sorted lists A = `src[a .. b]` and B = `src[b .. end]`
    /// (ties to A): the `count ≤ VT` outputs from `diag` on, written to `dst[a + diag ..]`.
    #[inline(always)]
    fn merge_unit(&self, src: usize, a: u32, b: u32, end: u32, diag: u32, count: u32) {
        let dst = 1 - src;
        let split = merge_path_32(
            diag,
            b - a,
            end - b,
            |i| self.key(src, a + i),
            |j| self.key(src, b + j),
        );
        let (mut ia, mut ib) = (a + split, b + diag - split);
        let next = |i: u32, stop: u32| {
            if i < stop {
                self.key(src, i)
            } else {
                K::INFINITY
            }
        };
        let (mut ka, mut kb) = (next(ia, b), next(ib, end));
        let out = a + diag;
        for r in 0..VT {
            let r = r as u32;
            if r < count {
                // Take A's key unless A is used up or B's key is strictly smaller (ties to A).
                if ib >= end || (ia < b && ka <= kb) {
                    self.set(dst, out + r, ka, self.value(src, ia));
                    ia += 1;
                    ka = next(ia, b);
                } else {
                    self.set(dst, out + r, kb, self.value(src, ib));
                    ib += 1;
                    kb = next(ib, end);
                }
            }
        }
    }
}

/// Sorts `VT` keys and their values stably: odd-even transposition, `VT` rounds of
/// compare-exchanges that swap only on a strict `>`. Loops with constant trip counts, so they
/// unroll and the arrays stay in registers.
#[inline(always)]
pub fn odd_even_transposition<K: KeyBits, V: Copy, const VT: usize>(
    keys: &mut [K; VT],
    values: &mut [V; VT],
) {
    for round in 0..VT {
        let mut i = round & 1;
        while i + 1 < VT {
            if keys[i] > keys[i + 1] {
                keys.swap(i, i + 1);
                values.swap(i, i + 1);
            }
            i += 2;
        }
    }
}

/// Tile `tile` of the tile sort: keys `tile·nv .. min((tile+1)·nv, n)` of `buf.src_*` sorted
/// stably (keys through `encode` on the way in, through the inverse of `decode` on the way out)
/// into the same positions of `buf.dst_*`.
///
/// # Safety
/// The buffers hold `n` keys and values, and no other block touches this tile's positions
/// (`src` may equal `dst`: every read happens before the first barrier, every write after the
/// last); `shared` as for the merge tile (`merge_shared_bytes(nt · VT, …)`, aligned); `nt` a
/// power of two, the same for every thread of the block.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sort_tile<K: KeyBits, V: Payload, B: Block, const VT: usize>(
    block: &B,
    nt: u32,
    shared: *mut u8,
    buf: Buffers<K, V>,
    n: u64,
    tile: u64,
    encode: u32,
    decode: u32,
) {
    // SAFETY: the caller's contract.
    let sh = unsafe { Shared::<K, V, B, VT>::new(shared, nt, block) };
    let nv = nt * VT as u32;
    let base = tile * u64::from(nv);
    let len = (n - base).min(u64::from(nv)) as u32;
    // SAFETY (reads and writes): base + i < n for i < len.
    sh.load(len, |i| unsafe {
        let at = (base + u64::from(i)) as usize;
        (
            (*buf.src_keys.add(at)).encode(encode),
            *buf.src_values.add(at),
        )
    });
    sh.sort_runs();
    // Round `coop`: groups of `coop` units merge two runs of `coop/2 · VT` keys. Slots past
    // `len` hold +∞, which a stable sort keeps after every real key (they come later).
    let mut src = 0;
    let mut coop = 2;
    while coop <= nt {
        let run = coop / 2 * VT as u32;
        sh.for_each_unit(|u| {
            let first = (u & !(coop - 1)) * VT as u32;
            sh.merge_unit(
                src,
                first,
                first + run,
                first + 2 * run,
                u * VT as u32 - first,
                VT as u32,
            );
        });
        block.sync();
        src = 1 - src;
        coop *= 2;
    }
    sh.store(src, len, |i, key, value| unsafe {
        let at = (base + u64::from(i)) as usize;
        *buf.dst_keys.add(at) = key.decode(decode);
        *buf.dst_values.add(at) = value;
    });
}

/// Unit `k` of the partition kernel of a merge launch paired by `pairing`: writes the merge-path
/// split at the start of output tile `k` (tiles of `nv` keys) to `splits[k]`; units past the
/// last tile do nothing.
///
/// # Safety
/// `keys` holds `n` keys; `splits` has room for `ceil(n / nv)` indices.
#[inline(always)]
pub unsafe fn partition_unit<K: KeyBits>(
    keys: *const K,
    splits: *mut u64,
    n: u64,
    pairing: Pairing,
    nv: u64,
    k: u64,
) {
    if k < n.div_ceil(nv) {
        // SAFETY: the search reads indices < n.
        let split = partition(k, n, pairing, nv, |i| unsafe { *keys.add(i as usize) });
        // SAFETY: k < ceil(n / nv).
        unsafe { *splits.add(k as usize) = split };
    }
}

/// Output tile `tile` of a merge launch paired by `pairing`: merges its slices of the two runs
/// (from the splits of [`partition_unit`]) from `buf.src_*` into `buf.dst_*`, keys through the
/// inverse of `decode`.
///
/// # Safety
/// The buffers hold `n` keys and values and do not overlap; `splits` holds the pass's splits;
/// `shared` as in [`sort_tile`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn merge_tile<K: KeyBits, V: Payload, B: Block, const VT: usize>(
    block: &B,
    nt: u32,
    shared: *mut u8,
    buf: Buffers<K, V>,
    splits: *const u64,
    n: u64,
    pairing: Pairing,
    tile: u64,
    decode: u32,
) {
    // SAFETY: the caller's contract.
    let sh = unsafe { Shared::<K, V, B, VT>::new(shared, nt, block) };
    let nv = u64::from(nt) * VT as u64;
    // SAFETY: the caller's contract: one split per tile; `next` is read only for a tile k + 1
    // that exists.
    let r = unsafe {
        TileRanges::new(tile, n, pairing, nv, *splits.add(tile as usize), || {
            *splits.add(tile as usize + 1)
        })
    };
    let a_len = (r.a_end - r.a_begin) as u32;
    let total = r.len() as u32;
    // SAFETY: the ranges lie inside the n keys.
    sh.load(total, |i| unsafe {
        let at = if i < a_len {
            r.a_begin + u64::from(i)
        } else {
            r.b_begin + u64::from(i - a_len)
        } as usize;
        (*buf.src_keys.add(at), *buf.src_values.add(at))
    });
    sh.for_each_unit(|u| {
        let diag = (u * VT as u32).min(total);
        sh.merge_unit(0, 0, a_len, total, diag, (total - diag).min(VT as u32));
    });
    block.sync();
    let base = tile * nv;
    sh.store(1, total, |i, key, value| unsafe {
        let at = (base + u64::from(i)) as usize;
        *buf.dst_keys.add(at) = key.decode(decode);
        *buf.dst_values.add(at) = value;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::OneThread;
    use crate::keys::{IDENTITY, KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, key_map};
    use crate::merge::{Pass, Step, chunk_schedule, schedule};
    use crate::overlap::{chunk_ranges, tile_parts};
    use crate::tuning::merge_shared_bytes;
    use proptest::prelude::*;

    /// The GPU schedule on the CPU through the kernels' own block code: the same launches, the
    /// same ping-pong between `keys` and a scratch buffer, blocks run one after another.
    fn emulate<K: KeyBits + Default, V: Payload, const VT: usize>(
        keys: &mut [K],
        values: &mut [V],
        nt: u32,
        map: u32,
    ) {
        emulate_chunked::<K, V, VT>(keys, values, nt, map, None);
    }

    /// As [`emulate`], or with `Some((chunk, parts))` as the host-slice pipeline launches the
    /// sort: the steps of `chunk_schedule` on one chunk of `chunk` keys at a time (each launch
    /// given the chunk's part of every buffer and the chunk's length), then those of
    /// `schedule(n, nv, chunk)` on the whole array, the last one's merge launched in `parts`
    /// ranges of tiles.
    fn emulate_chunked<K: KeyBits + Default, V: Payload, const VT: usize>(
        keys: &mut [K],
        values: &mut [V],
        nt: u32,
        map: u32,
        chunked: Option<(u64, u64)>,
    ) {
        let n = keys.len() as u64;
        if n == 0 {
            return;
        }
        let nv = u64::from(nt) * VT as u64;
        let mut scratch_keys = vec![K::default(); keys.len()];
        let mut scratch_values = vec![V::default(); values.len()];
        let mut splits = vec![u64::MAX; n.div_ceil(nv) as usize];
        let bytes = merge_shared_bytes(nv as u32, size_of::<K>() as u32, size_of::<V>() as u32);
        // 16-aligned, as the kernels declare it: `u128` values live there too.
        let mut shared = vec![0u128; (bytes as usize).div_ceil(16)];
        let shared = shared.as_mut_ptr() as *mut u8;
        let (k0, v0) = (keys.as_mut_ptr(), values.as_mut_ptr());
        let (k1, v1) = (scratch_keys.as_mut_ptr(), scratch_values.as_mut_ptr());
        let splits = splits.as_mut_ptr();
        // One step launched on keys `at .. at + len` (a chunk, or all of them), its merge in
        // `parts` launches.
        let launch = |step: Step, at: u64, len: u64, parts: u64| {
            let at = at as usize;
            // SAFETY: `at + len <= n`: every pointer stays inside its buffer.
            let (k0, v0, k1, v1) = unsafe { (k0.add(at), v0.add(at), k1.add(at), v1.add(at)) };
            let splits = unsafe { splits.add(at / nv as usize) };
            let pick = |scratch: bool| if scratch { (k1, v1) } else { (k0, v0) };
            let ((sk, sv), (dk, dv)) = (pick(step.from_scratch), pick(step.to_scratch));
            let buf = Buffers {
                src_keys: sk,
                dst_keys: dk,
                src_values: sv,
                dst_values: dv,
            };
            let decode = if step.last { map } else { IDENTITY };
            let tiles = len.div_ceil(nv);
            // SAFETY: buffers of len keys and values; shared memory of the right size.
            unsafe {
                match step.pass {
                    Pass::SortTiles => {
                        for tile in 0..tiles {
                            sort_tile::<K, V, _, VT>(
                                &OneThread, nt, shared, buf, len, tile, map, decode,
                            );
                        }
                    }
                    Pass::Merge { width } => {
                        let pairing = Pairing::Pass { width };
                        for k in 0..tiles {
                            partition_unit(sk, splits, len, pairing, nv, k);
                        }
                        for part in tile_parts(tiles, parts) {
                            // The kernel's tile is its first tile plus its block index.
                            for tile in part {
                                merge_tile::<K, V, _, VT>(
                                    &OneThread, nt, shared, buf, splits, len, pairing, tile, decode,
                                );
                            }
                        }
                    }
                }
            }
        };
        match chunked {
            None => schedule(n, nv, 1).for_each(|step| launch(step, 0, n, 1)),
            Some((chunk, parts)) => {
                for range in chunk_ranges(n, chunk) {
                    for step in chunk_schedule(n, nv, chunk) {
                        launch(step, range.start, range.end - range.start, 1);
                    }
                }
                let rest: Vec<Step> = schedule(n, nv, chunk).collect();
                for (i, &step) in rest.iter().enumerate() {
                    let last = i + 1 == rest.len();
                    launch(step, 0, n, if last { parts } else { 1 });
                }
            }
        }
    }

    /// Checks the emulated sort of `input` (tagged with indices as values) against std's
    /// stable sort of the encoded keys.
    fn check<K: KeyBits + Default + Ord + core::fmt::Debug, const VT: usize>(
        input: &[K],
        nt: u32,
        map: u32,
    ) {
        let mut keys = input.to_vec();
        let mut values: Vec<u32> = (0..input.len() as u32).collect();
        emulate::<K, u32, VT>(&mut keys, &mut values, nt, map);
        let mut expected: Vec<(K, u32)> = input.iter().copied().zip(0..).collect();
        expected.sort_by_key(|&(k, _)| k.encode(map));
        let got: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        assert_eq!(
            got,
            expected,
            "n = {}, nt = {nt}, vt = {VT}, map = {map}",
            input.len()
        );
        // Keys only: the same keys.
        let mut keys_only = input.to_vec();
        emulate::<K, (), VT>(&mut keys_only, &mut vec![(); input.len()], nt, map);
        let expected_keys: Vec<K> = expected.iter().map(|&(k, _)| k).collect();
        assert_eq!(keys_only, expected_keys);
    }

    fn lengths() -> Vec<usize> {
        let mut v = vec![0, 1, 2, 3];
        for k in 2..12 {
            v.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
        }
        v.extend([1000, 1234, 3001]);
        v
    }

    fn maps() -> Vec<u32> {
        let mut m = Vec::new();
        for kind in [KIND_UNSIGNED, KIND_SIGNED, KIND_FLOAT] {
            for desc in [false, true] {
                m.push(key_map(kind, desc));
            }
        }
        m
    }

    /// Keys with few distinct values (so that stability matters), raw bits of every kind.
    fn few_distinct_u32(n: usize, seed: u64) -> Vec<u32> {
        let pool = [
            0u32,
            1,
            7,
            0x8000_0000,
            0xFFFF_FFFF,
            0x7F80_0000,
            0xFF80_0000,
            42,
        ];
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                pool[(x >> 60) as usize % pool.len()]
            })
            .collect()
    }

    #[test]
    fn gpu_schedule_sorts_stably_every_length_and_map() {
        for n in lengths() {
            let input = few_distinct_u32(n, n as u64);
            for map in maps() {
                check::<u32, 2>(&input, 4, map);
                check::<u32, 3>(&input, 8, map);
                let wide: Vec<u64> = input
                    .iter()
                    .map(|&k| u64::from(k) << 32 | u64::from(k % 3))
                    .collect();
                check::<u64, 4>(&wide, 2, map);
            }
        }
    }

    #[test]
    fn gpu_schedule_with_the_real_tuning() {
        use crate::tuning::{MERGE_THREADS, MERGE_VT};
        const VT: usize = MERGE_VT as usize;
        for n in [2047usize, 2048, 2049, 5000, 3 * 2048 + 17] {
            let input = few_distinct_u32(n, 99);
            check::<u32, VT>(&input, MERGE_THREADS, key_map(KIND_FLOAT, true));
            let random: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect();
            check::<u64, VT>(&random, MERGE_THREADS, key_map(KIND_SIGNED, false));
        }
    }

    #[test]
    fn pairs_with_u64_values() {
        let input = few_distinct_u32(777, 5);
        let values: Vec<u64> = (0..777u64).map(|i| i << 40 | i).collect();
        let (mut keys, mut got_values) = (input.clone(), values.clone());
        emulate::<u32, u64, 3>(&mut keys, &mut got_values, 4, IDENTITY);
        let mut expected: Vec<(u32, u64)> = input.iter().copied().zip(values.clone()).collect();
        expected.sort_by_key(|p| p.0);
        let got: Vec<(u32, u64)> = keys.into_iter().zip(got_values).collect();
        assert_eq!(got, expected);

        let wide: Vec<u64> = input.iter().map(|&k| u64::from(k) << 31).collect();
        let map = key_map(KIND_SIGNED, true);
        let (mut keys, mut got_values) = (wide.clone(), values.clone());
        emulate::<u64, u64, 2>(&mut keys, &mut got_values, 8, map);
        let mut expected: Vec<(u64, u64)> = wide.iter().copied().zip(values).collect();
        expected.sort_by_key(|p| p.0.encode(map));
        let got: Vec<(u64, u64)> = keys.into_iter().zip(got_values).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn pairs_with_u128_values() {
        // 16-byte values (the slots of payloads of 9 to 16 bytes): every bit must travel.
        for (n, nt) in [(777usize, 4u32), (2049, 8), (5000, 16)] {
            let input = few_distinct_u32(n, n as u64);
            let values: Vec<u128> = (0..n as u128)
                .map(|i| i << 96 | (!i & 0xFFFF) << 64 | i.wrapping_mul(0x9E37_79B9) << 16 | i)
                .collect();
            let wide: Vec<u64> = input.iter().map(|&k| u64::from(k) << 29 | 3).collect();
            let map = key_map(KIND_FLOAT, true);
            let (mut keys, mut got_values) = (wide.clone(), values.clone());
            emulate::<u64, u128, 3>(&mut keys, &mut got_values, nt, map);
            let mut expected: Vec<(u64, u128)> = wide.iter().copied().zip(values.clone()).collect();
            expected.sort_by_key(|p| p.0.encode(map));
            let got: Vec<(u64, u128)> = keys.into_iter().zip(got_values).collect();
            assert_eq!(got, expected, "u64 keys, n = {n}");

            let (mut keys, mut got_values) = (input.clone(), values.clone());
            emulate::<u32, u128, 2>(&mut keys, &mut got_values, nt, IDENTITY);
            let mut expected: Vec<(u32, u128)> = input.iter().copied().zip(values).collect();
            expected.sort_by_key(|p| p.0);
            let got: Vec<(u32, u128)> = keys.into_iter().zip(got_values).collect();
            assert_eq!(got, expected, "u32 keys, n = {n}");
        }
    }

    #[test]
    fn chunked_launches_sort_stably_like_the_whole_sort() {
        // Tiles of 8 keys (nt = 4, vt = 2), chunks of 8 to 64: one chunk, several, ragged last
        // chunks down to one key, last passes in several parts.
        for n in [1usize, 7, 8, 9, 63, 64, 65, 100, 129, 200, 257, 1000, 1025] {
            let input = few_distinct_u32(n, n as u64 + 3);
            let values: Vec<u32> = (0..n as u32).collect();
            for map in [IDENTITY, key_map(KIND_FLOAT, true)] {
                let (mut want_keys, mut want_values) = (input.clone(), values.clone());
                emulate::<u32, u32, 2>(&mut want_keys, &mut want_values, 4, map);
                for chunk in [8u64, 16, 64] {
                    for parts in [1u64, 3, 4] {
                        let (mut keys, mut got_values) = (input.clone(), values.clone());
                        let chunked = Some((chunk, parts));
                        emulate_chunked::<u32, u32, 2>(&mut keys, &mut got_values, 4, map, chunked);
                        let what = format!("n = {n}, map = {map}, chunk = {chunk}, {parts} parts");
                        assert_eq!(keys, want_keys, "{what}");
                        assert_eq!(got_values, want_values, "{what}");
                        let mut keys_only = input.clone();
                        let mut none = vec![(); n];
                        emulate_chunked::<u32, (), 2>(&mut keys_only, &mut none, 4, map, chunked);
                        assert_eq!(keys_only, want_keys, "{what}, keys only");
                    }
                }
            }
        }
        // The real tiles with chunks of 4 tiles, and 64-bit keys with 16-byte values.
        use crate::tuning::{MERGE_THREADS, MERGE_VT};
        const VT: usize = MERGE_VT as usize;
        let tile = u64::from(MERGE_THREADS) * VT as u64;
        for n in [
            4 * tile as usize - 1,
            4 * tile as usize + 1,
            3 * 4 * tile as usize + 1234,
        ] {
            let wide: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 3)
                .collect();
            let values: Vec<u128> = (0..n as u128).map(|i| i << 64 | !i).collect();
            let map = key_map(KIND_SIGNED, true);
            let (mut want_keys, mut want_values) = (wide.clone(), values.clone());
            emulate::<u64, u128, VT>(&mut want_keys, &mut want_values, MERGE_THREADS, map);
            let (mut keys, mut got_values) = (wide.clone(), values.clone());
            let chunked = Some((4 * tile, 4));
            emulate_chunked::<u64, u128, VT>(
                &mut keys,
                &mut got_values,
                MERGE_THREADS,
                map,
                chunked,
            );
            assert_eq!(keys, want_keys, "n = {n}");
            assert_eq!(got_values, want_values, "n = {n}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn random_lengths_and_keys(
            input in prop::collection::vec(any::<u32>(), 0..3000),
            map_index in 0usize..6,
            small_range in any::<bool>(),
        ) {
            let input: Vec<u32> = if small_range { input.iter().map(|k| k % 5).collect() } else { input };
            check::<u32, 2>(&input, 8, maps()[map_index]);
        }
    }
}
