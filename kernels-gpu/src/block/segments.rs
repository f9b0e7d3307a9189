//! The segmented sort's block code ([`crate::segments`]): a block loads 2^(t − p) segments, each
//! padded to 2^p positions, runs stages 1 ..= p of the bitonic network over them in registers,
//! shuffles and shared memory, and stores each segment back in place, with the segment's
//! positions (argsort) or its values (pairs) permuted alongside.
//!
//! The elements sorted are the keys alone ([`Element`] for `u32`, `u64`), or the key and its
//! position in its segment ([`Indexed32`], [`Indexed64`]), compared key first: a stable order,
//! from which indices are written and values gathered.

use crate::block::small::each_register;
use crate::block::{SharedMem, Team};
use crate::keys::KeyBits;
use crate::segments::{RUN_LOG2, slot};

/// Positions a thread holds in registers.
pub const RUN: usize = 1 << RUN_LOG2;

/// What the block sorts: a key, and for argsorts and pairs its position in its segment.
pub trait Element: KeyBits {
    /// The (encoded) key.
    type Key: KeyBits;
    /// Whether the element carries its position.
    const INDEXED: bool;
    /// The element of `key` at position `index` of its segment.
    fn new(key: Self::Key, index: u32) -> Self;
    /// Its key.
    fn key(self) -> Self::Key;
    /// Its position in its segment (0 for elements that carry none).
    fn index(self) -> u32;
}

macro_rules! bare_element {
    ($t:ty) => {
        impl Element for $t {
            type Key = $t;
            const INDEXED: bool = false;
            #[inline(always)]
            fn new(key: $t, _: u32) -> $t {
                key
            }
            #[inline(always)]
            fn key(self) -> $t {
                self
            }
            #[inline(always)]
            fn index(self) -> u32 {
                0
            }
        }
    };
}
bare_element!(u32);
bare_element!(u64);

/// A 4-byte key and its position, packed so that one 64-bit comparison orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Indexed32(u64);

impl KeyBits for Indexed32 {
    const INFINITY: Self = Indexed32(u64::MAX);
    #[inline(always)]
    fn encode(self, map: u32) -> Self {
        Self::new(self.key().encode(map), self.index())
    }
    #[inline(always)]
    fn decode(self, map: u32) -> Self {
        Self::new(self.key().decode(map), self.index())
    }
    #[inline(always)]
    fn complement(self, flip: bool) -> Self {
        Indexed32(self.0.complement(flip))
    }
}

impl Element for Indexed32 {
    type Key = u32;
    const INDEXED: bool = true;
    #[inline(always)]
    fn new(key: u32, index: u32) -> Self {
        Indexed32((u64::from(key) << 32) | u64::from(index))
    }
    #[inline(always)]
    fn key(self) -> u32 {
        (self.0 >> 32) as u32
    }
    #[inline(always)]
    fn index(self) -> u32 {
        self.0 as u32
    }
}

/// An 8-byte key and its position, ordered key first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, align(16))]
pub struct Indexed64 {
    key: u64,
    index: u32,
}

impl KeyBits for Indexed64 {
    const INFINITY: Self = Indexed64 {
        key: u64::MAX,
        index: u32::MAX,
    };
    #[inline(always)]
    fn encode(self, map: u32) -> Self {
        Self::new(self.key.encode(map), self.index)
    }
    #[inline(always)]
    fn decode(self, map: u32) -> Self {
        Self::new(self.key.decode(map), self.index)
    }
    #[inline(always)]
    fn complement(self, flip: bool) -> Self {
        Self::new(self.key.complement(flip), self.index.complement(flip))
    }
}

impl Element for Indexed64 {
    type Key = u64;
    const INDEXED: bool = true;
    #[inline(always)]
    fn new(key: u64, index: u32) -> Self {
        Indexed64 { key, index }
    }
    #[inline(always)]
    fn key(self) -> u64 {
        self.key
    }
    #[inline(always)]
    fn index(self) -> u32 {
        self.index
    }
}

#[cfg(target_arch = "nvptx64")]
mod shuffle {
    use super::{Indexed32, Indexed64};
    use crate::gpu::WarpShuffle;

    impl WarpShuffle for Indexed32 {
        #[inline(always)]
        fn shfl_xor(self, lane_mask: u32) -> Self {
            Indexed32(self.0.shfl_xor(lane_mask))
        }
    }

    impl WarpShuffle for Indexed64 {
        #[inline(always)]
        fn shfl_xor(self, lane_mask: u32) -> Self {
            Indexed64 {
                key: self.key.shfl_xor(lane_mask),
                index: self.index.shfl_xor(lane_mask),
            }
        }
    }
}

/// The segments of one launch and where their results go.
pub struct Segments<K, V> {
    /// The keys, sorted in place within each segment.
    pub keys: *mut K,
    /// Values permuted with the keys, in place; null for none.
    pub values: *mut V,
    /// Receives each segment's sorting permutation (positions in the segment); null for none.
    pub indices: *mut u32,
    /// Segments in this launch: rows, or entries of `list`.
    pub count: u64,
    /// Without `offsets`: every segment is a row of this many keys, row `i` at `i·row_len`.
    pub row_len: u64,
    /// Segment `i` is `offsets[i] .. offsets[i + 1]`; null for rows.
    pub offsets: *const u64,
    /// Entry `e` of the launch is segment `list[e]`; null: segment `e`.
    pub list: *const u32,
    /// Every segment of the launch has at most 2^`row_log2` keys.
    pub row_log2: u32,
    /// Key map applied as keys are loaded, undone as they are stored.
    pub map: u32,
}

impl<K, V> Segments<K, V> {
    /// `(first key, length)` of entry `e` (`(0, 0)` past the launch's entries).
    ///
    /// # Safety
    /// `offsets` and `list`, where not null, hold what the launch's contract says.
    #[inline(always)]
    pub unsafe fn segment(&self, e: u64) -> (u64, u64) {
        if e >= self.count {
            return (0, 0);
        }
        // SAFETY: e < count entries of list; segment ids index offsets[..= segments].
        unsafe {
            let id = if self.list.is_null() {
                e
            } else {
                u64::from(*self.list.add(e as usize))
            };
            if self.offsets.is_null() {
                (id * self.row_len, self.row_len)
            } else {
                let begin = *self.offsets.add(id as usize);
                (begin, *self.offsets.add(id as usize + 1) - begin)
            }
        }
    }

    /// Position `j` of entry `e`'s segment: `(first key, global index)` if the segment holds
    /// it, `None` past its end (padding).
    ///
    /// # Safety
    /// As [`Segments::segment`].
    #[inline(always)]
    pub unsafe fn position(&self, e: u64, j: u64) -> Option<(u64, usize)> {
        // SAFETY: the caller's contract.
        let (begin, len) = unsafe { self.segment(e) };
        (j < len).then_some((begin, (begin + j) as usize))
    }
}

/// The item of position `g` of the launch's padded rows (entry `g >> row_log2`, position `g %
/// 2^row_log2` in it) for the sort of segments too long for a block: a 4-byte key, encoded, above
/// its position, so that one 64-bit comparison orders them stably; `u64::MAX` past the segment's
/// end, above every item.
///
/// # Safety
/// Entry `g >> row_log2`'s segment lies in `keys`, as [`Segments::segment`] asks.
#[inline(always)]
pub unsafe fn packed_item<V>(seg: &Segments<u32, V>, g: u64) -> u64 {
    let (e, j) = (g >> seg.row_log2, g & ((1 << seg.row_log2) - 1));
    // SAFETY: the caller's contract.
    unsafe {
        match seg.position(e, j) {
            Some((_, at)) => (u64::from((*seg.keys.add(at)).encode(seg.map)) << 32) | j,
            None => u64::MAX,
        }
    }
}

/// Puts back position `g` of the sorted padded rows `packed` (of [`packed_item`]s): the key,
/// decoded, at its segment's position `g % 2^row_log2`; its input position in `indices` (if not
/// null); the value of that input position, read from `values_in`, in `values` (if not null).
///
/// # Safety
/// As [`packed_item`]; `packed` holds position `g`; `values_in` holds the values of the
/// segment when `values` is not null, and is not `values`.
#[inline(always)]
pub unsafe fn unpack_item<V: Copy>(
    seg: &Segments<u32, V>,
    packed: *const u64,
    values_in: *const V,
    g: u64,
) {
    let (e, j) = (g >> seg.row_log2, g & ((1 << seg.row_log2) - 1));
    // SAFETY: the caller's contract.
    unsafe {
        let Some((begin, at)) = seg.position(e, j) else {
            return;
        };
        let item = *packed.add(g as usize);
        let from = item as u32;
        *seg.keys.add(at) = ((item >> 32) as u32).decode(seg.map);
        if !seg.indices.is_null() {
            *seg.indices.add(at) = from;
        }
        if !seg.values.is_null() {
            *seg.values.add(at) = *values_in.add(begin as usize + from as usize);
        }
    }
}

/// Puts the smaller of `run[i]`, `run[j]` at `i`.
#[inline(always)]
fn order<E: PartialOrd + Copy>(run: &mut [E; RUN], i: usize, j: usize) {
    let (a, b) = (run[i], run[j]);
    let swap = b < a;
    run[i] = if swap { b } else { a };
    run[j] = if swap { a } else { b };
}

/// Keeps the smaller of `mine` and `theirs` if `lower`, else the larger.
#[inline(always)]
pub(crate) fn keep<E: PartialOrd + Copy>(mine: &mut E, theirs: E, lower: bool) {
    let take = if lower {
        theirs < *mine
    } else {
        *mine < theirs
    };
    if take {
        *mine = theirs;
    }
}

/// Sorts block `block`'s segments of `seg` (entries `block·rows_per_block(p) ..`), in a tile of
/// 2^`tile_log2` positions (`tile_log2 ≥ p`, `tile_log2 − 4` threads' worth of whole warps).
/// `held` keeps each thread's gathered values across a barrier: one run on the GPU (the calling
/// thread's), one per thread on the CPU.
///
/// # Safety
/// The team has 2^(`tile_log2` − 4) threads and `shared_bytes(tile_log2, size_of::<E>())`
/// bytes of shared memory; every entry's segment has at most 2^`row_log2` keys, lies in
/// `keys` (and `values`, `indices` where not null) and no other block's entries overlap it.
#[inline(always)]
pub unsafe fn sort<E, V, T>(
    team: &mut T,
    seg: &Segments<E::Key, V>,
    tile_log2: u32,
    block: u64,
    held: &mut [[V; RUN]],
) where
    E: Element,
    V: Copy,
    T: Team<E, RUN>,
{
    let p = seg.row_log2;
    let threads = 1u32 << (tile_log2 - RUN_LOG2);
    let first = block << (tile_log2 - p);
    let bytes = size_of::<E>() as u32;
    let row_mask = (1u32 << p) - 1;
    // Global memory to shared memory, coalesced: position s = r·threads + t. Every load of a
    // thread is issued before any key is used, so that all are in flight together (with each
    // key stored to shared memory as it came, a thread waited for its loads one at a time).
    // Positions past a segment's end hold the key that the map encodes to +∞.
    let padding = <E::Key as KeyBits>::INFINITY.decode(seg.map);
    team.each(|t, run, shared| {
        each_register(|r| {
            let s = r as u32 * threads + t;
            let j = s & row_mask;
            // SAFETY: the contract: the entry's segment lies in `keys`.
            let key = match unsafe { seg.position(first + u64::from(s >> p), u64::from(j)) } {
                Some((_, at)) => unsafe { *seg.keys.add(at) },
                None => padding,
            };
            // The key alone for now: its position, held too, would take registers.
            run[r] = E::new(key, 0);
        });
        each_register(|r| {
            let s = r as u32 * threads + t;
            let e = E::new(run[r].key().encode(seg.map), s & row_mask);
            // SAFETY: positions below the tile.
            unsafe { shared.write(t, slot(s, bytes), e) };
        })
    });
    team.sync();
    // Shared memory to runs: thread t holds positions 16t .. 16t + 15.
    team.each(|t, run, shared| {
        each_register(|r| {
            // SAFETY: positions below 2^tile_log2.
            run[r] = unsafe { shared.read(t, slot(t * RUN as u32 + r as u32, bytes)) };
        })
    });
    network(team, p, bytes);
    team.each(|t, run, shared| {
        each_register(|r| {
            // SAFETY: as above; the last phase that read shared memory ended in a barrier.
            unsafe { shared.write(t, slot(t * RUN as u32 + r as u32, bytes), run[r]) };
        })
    });
    team.sync();
    // Shared memory to global memory, coalesced; values gathered by position first. The
    // positions and segments are computed afresh (`opaque`): kept from the loads, they would
    // hold registers through the whole network.
    let gather = !seg.values.is_null();
    let slots = held.len();
    team.each(|t, _, shared| {
        let mine = &mut held[t as usize % slots];
        let fresh = T::opaque(t);
        each_register(|r| {
            let s = r as u32 * threads + fresh;
            // SAFETY: the contract, as for the loads.
            unsafe {
                let j = s & row_mask;
                if let Some((begin, at)) = seg.position(first + u64::from(s >> p), u64::from(j)) {
                    let e = shared.read(t, slot(s, bytes));
                    *seg.keys.add(at) = e.key().decode(seg.map);
                    if E::INDEXED && !seg.indices.is_null() {
                        *seg.indices.add(at) = e.index();
                    }
                    if E::INDEXED && gather {
                        mine[r] = *seg.values.add((begin + u64::from(e.index())) as usize);
                    }
                }
            }
        })
    });
    if E::INDEXED && gather {
        // Every value of the block's segments is read before any is overwritten.
        team.sync();
        team.each(|t, _, _| {
            let mine = &held[t as usize % slots];
            let fresh = T::opaque(t);
            each_register(|r| {
                let s = r as u32 * threads + fresh;
                // SAFETY: as above.
                unsafe {
                    let j = u64::from(s & row_mask);
                    if let Some((_, at)) = seg.position(first + u64::from(s >> p), j) {
                        *seg.values.add(at) = mine[r];
                    }
                }
            })
        });
    }
}

/// Stages 1 ..= `p` of the mirrored bitonic network over the runs (thread t holds positions
/// 16t + r), every stage and step a constant so that registers are addressed by constants.
#[inline(always)]
fn network<E: Element, T: Team<E, RUN>>(team: &mut T, p: u32, bytes: u32) {
    macro_rules! stages {
        ($($k:literal)*) => {$(
            if $k <= p {
                stage::<E, T, $k>(team, bytes);
            }
        )*};
    }
    const _: () = assert!(crate::segments::MAX_ROW_LOG2 == 13, "stages 1 ..= 13 below");
    stages!(1 2 3 4 5 6 7 8 9 10 11 12 13);
}

/// Stage `K`: its flip (position i with i ^ (2^K − 1)), then steps on bits K − 2 ..= 0.
#[inline(always)]
fn stage<E: Element, T: Team<E, RUN>, const K: u32>(team: &mut T, bytes: u32) {
    flip::<E, T, K>(team, bytes);
    macro_rules! steps {
        ($($b:literal)*) => {$(
            if $b + 1 < K {
                step::<E, T, $b>(team, bytes);
            }
        )*};
    }
    steps!(11 10 9 8 7 6 5 4 3 2 1 0);
}

/// The flip of stage `K`.
#[inline(always)]
fn flip<E: Element, T: Team<E, RUN>, const K: u32>(team: &mut T, bytes: u32) {
    if K <= RUN_LOG2 {
        let d = (1usize << K) - 1;
        team.each(|_, run, _| {
            each_register(|r| {
                if r < r ^ d {
                    order(run, r, r ^ d);
                }
            })
        });
    } else {
        // Position 16t + r meets 16(t ^ m) + (15 − r); the lower one keeps the smaller.
        let m = (1u32 << (K - RUN_LOG2)) - 1;
        across_threads(team, m, true, K - 1 - RUN_LOG2, bytes);
    }
}

/// The step on bit `B`.
#[inline(always)]
fn step<E: Element, T: Team<E, RUN>, const B: u32>(team: &mut T, bytes: u32) {
    if B < RUN_LOG2 {
        let d = 1usize << B;
        team.each(|_, run, _| {
            each_register(|r| {
                if r & d == 0 {
                    order(run, r, r | d);
                }
            })
        });
    } else {
        across_threads(team, 1 << (B - RUN_LOG2), false, B - RUN_LOG2, bytes);
    }
}

/// A step between thread t and thread t ^ `m`, register r with register r (15 − r if
/// `mirror`); the thread whose bit `bit` is clear holds the lower positions. Within a warp by
/// shuffles, else through shared memory.
#[inline(always)]
fn across_threads<E: Element, T: Team<E, RUN>>(
    team: &mut T,
    m: u32,
    mirror: bool,
    bit: u32,
    bytes: u32,
) {
    let partner = |r: usize| if mirror { RUN - 1 - r } else { r };
    if m < 32 {
        team.exchange(m, |t, run, theirs| {
            let lower = (t >> bit) & 1 == 0;
            each_register(|r| keep(&mut run[r], theirs[partner(r)], lower));
        });
    } else {
        // Positions are computed afresh in each step (`opaque`): held from one shared step to
        // the next, they would take registers the runs need.
        team.each(|t, run, shared| {
            let at = T::opaque(t) * RUN as u32;
            each_register(|r| {
                // SAFETY: positions below the tile.
                unsafe { shared.write(t, slot(at + r as u32, bytes), run[r]) };
            })
        });
        team.sync();
        team.each(|t, run, shared| {
            let lower = (t >> bit) & 1 == 0;
            let u = (T::opaque(t) ^ m) * RUN as u32;
            each_register(|r| {
                // SAFETY: as above.
                let theirs = unsafe { shared.read(t, slot(u + partner(r) as u32, bytes)) };
                keep(&mut run[r], theirs, lower);
            })
        });
        team.sync();
    }
}

/// Runs the launch `seg` block by block on the CPU, as the kernels would (a [`CpuTeam`]
/// per block, which panics on a shared-memory race).
///
/// # Safety
/// As [`sort`], for every block of the launch.
///
/// [`CpuTeam`]: crate::block::CpuTeam
#[cfg(not(target_arch = "nvptx64"))]
pub unsafe fn sort_like_the_gpu<E: Element, V: Copy + Default>(seg: &Segments<E::Key, V>) {
    use crate::block::CpuTeam;
    use crate::segments::{blocks, shared_bytes, threads, tile_log2};
    let t = tile_log2(seg.row_log2);
    let bytes = size_of::<E>() as u32;
    for block in 0..blocks(seg.count, seg.row_log2) {
        let mut team = CpuTeam::<E, RUN>::new(threads(t), shared_bytes(t, bytes) / bytes);
        let mut held = vec![[V::default(); RUN]; threads(t) as usize];
        // SAFETY: the caller's contract.
        unsafe { sort(&mut team, seg, t, block, &mut held) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::xorshift;
    use crate::keys::{KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, key_map};
    use crate::segments::{MAX_ROW_LOG2, row_log2};
    use core::ptr::{null, null_mut};

    /// Rows of `len` of `keys` sorted on the CPU like the GPU, with indices and values when
    /// `E` is indexed.
    fn rows<E: Element>(
        keys: &mut [E::Key],
        len: usize,
        map: u32,
        with: bool,
    ) -> (Vec<u32>, Vec<u64>) {
        let n = keys.len();
        let mut indices = vec![u32::MAX; n];
        let mut values: Vec<u64> = (0..n as u64).map(|i| i * 3 + 1).collect();
        let seg = Segments {
            keys: keys.as_mut_ptr(),
            values: if with {
                values.as_mut_ptr()
            } else {
                null_mut()
            },
            indices: if with {
                indices.as_mut_ptr()
            } else {
                null_mut()
            },
            count: (n / len.max(1)) as u64,
            row_len: len as u64,
            offsets: null(),
            list: null(),
            row_log2: row_log2(len as u64),
            map,
        };
        unsafe { sort_like_the_gpu::<E, u64>(&seg) };
        (indices, values)
    }

    #[test]
    fn rows_of_every_length_sort_like_std() {
        let mut next = xorshift(7);
        let lens = [
            1usize, 2, 3, 5, 15, 16, 17, 31, 32, 33, 100, 127, 128, 129, 511, 512, 513, 1000, 2048,
            2049, 4096, 5000, 8192,
        ];
        for &len in &lens {
            let rows_n = (3 * 8192 / len).clamp(2, 40);
            let original: Vec<u32> = (0..len * rows_n).map(|_| (next() % 50) as u32).collect();
            let mut keys = original.clone();
            rows::<u32>(&mut keys, len, key_map(KIND_UNSIGNED, false), false);
            for (row, want) in keys.chunks(len).zip(original.chunks(len)) {
                let mut want = want.to_vec();
                want.sort_unstable();
                assert_eq!(row, want, "len {len}");
            }
        }
    }

    #[test]
    fn indexed_rows_give_the_stable_permutation_and_carry_values() {
        let mut next = xorshift(11);
        for &len in &[1usize, 7, 16, 33, 200, 1025, 4096, 6000] {
            assert!(row_log2(len as u64) <= MAX_ROW_LOG2);
            let rows_n = (2 * 8192 / len).clamp(2, 9);
            let n = len * rows_n;
            // Floats with many ties, NaN and signed zeros, descending.
            let floats: Vec<f32> = (0..n)
                .map(|i| match i % 13 {
                    0 => f32::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    _ => (next() % 9) as f32 - 4.0,
                })
                .collect();
            let mut keys: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
            let (indices, values) =
                rows::<Indexed32>(&mut keys, len, key_map(KIND_FLOAT, true), true);
            for r in 0..rows_n {
                let row = &floats[r * len..(r + 1) * len];
                let mut want: Vec<u32> = (0..len as u32).collect();
                want.sort_by(|&a, &b| row[b as usize].total_cmp(&row[a as usize]));
                assert_eq!(&indices[r * len..(r + 1) * len], want, "len {len}");
                for (j, &i) in want.iter().enumerate() {
                    assert_eq!(keys[r * len + j], row[i as usize].to_bits());
                    assert_eq!(values[r * len + j], (r * len + i as usize) as u64 * 3 + 1);
                }
            }
            // 8-byte keys: i64, ascending.
            let ints: Vec<i64> = (0..n).map(|_| (next() % 7) as i64 - 3).collect();
            let mut keys: Vec<u64> = ints.iter().map(|&i| i as u64).collect();
            let (indices, _) = rows::<Indexed64>(&mut keys, len, key_map(KIND_SIGNED, false), true);
            for r in 0..rows_n {
                let row = &ints[r * len..(r + 1) * len];
                let mut want: Vec<u32> = (0..len as u32).collect();
                want.sort_by_key(|&i| row[i as usize]);
                assert_eq!(&indices[r * len..(r + 1) * len], want, "len {len}");
            }
        }
    }

    #[test]
    fn packed_items_sorted_by_row_unpack_to_the_stable_order() {
        let mut next = xorshift(5);
        let lens = [20_000u64, 9000, 16_384];
        let mut offsets = vec![0u64];
        for l in lens {
            offsets.push(offsets.last().unwrap() + l);
        }
        let n = *offsets.last().unwrap() as usize;
        let floats: Vec<f32> = (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    -0.0
                } else {
                    (next() % 5) as f32 - 2.0
                }
            })
            .collect();
        let mut keys: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
        let values_in: Vec<u64> = (0..n as u64).map(|i| i * 7).collect();
        let mut values = vec![0u64; n];
        let mut indices = vec![u32::MAX; n];
        // Segments 0 and 2 (padded to 2^15), descending.
        let list = [0u32, 2];
        let map = key_map(KIND_FLOAT, true);
        let seg = Segments {
            keys: keys.as_mut_ptr(),
            values: values.as_mut_ptr(),
            indices: indices.as_mut_ptr(),
            count: 2,
            row_len: 0,
            offsets: offsets.as_ptr(),
            list: list.as_ptr(),
            row_log2: 15,
            map,
        };
        let mut packed: Vec<u64> = (0..2u64 << 15)
            .map(|g| unsafe { packed_item(&seg, g) })
            .collect();
        packed
            .chunks_mut(1 << 15)
            .for_each(|row| row.sort_unstable());
        for g in 0..2u64 << 15 {
            unsafe { unpack_item(&seg, packed.as_ptr(), values_in.as_ptr(), g) };
        }
        for &id in &list {
            let (a, b) = (
                offsets[id as usize] as usize,
                offsets[id as usize + 1] as usize,
            );
            let mut want: Vec<u32> = (0..(b - a) as u32).collect();
            want.sort_by(|&x, &y| floats[a + y as usize].total_cmp(&floats[a + x as usize]));
            assert_eq!(indices[a..b], want[..], "segment {id}");
            for (j, &i) in want.iter().enumerate() {
                assert_eq!(keys[a + j], floats[a + i as usize].to_bits());
                assert_eq!(values[a + j], (a + i as usize) as u64 * 7);
            }
        }
        // Segment 1 is not in the launch: untouched.
        let (a, b) = (offsets[1] as usize, offsets[2] as usize);
        assert!(indices[a..b].iter().all(|&i| i == u32::MAX));
    }

    #[test]
    fn listed_segments_of_mixed_lengths_sort_and_the_rest_stays() {
        let mut next = xorshift(3);
        let lens = [0u64, 1, 2, 40, 64, 3, 0, 64, 17, 33, 1];
        let mut offsets = vec![0u64];
        for l in lens {
            offsets.push(offsets.last().unwrap() + l);
        }
        let n = *offsets.last().unwrap() as usize;
        let original: Vec<u64> = (0..n).map(|_| next() % 1000).collect();
        let mut keys = original.clone();
        // Only the segments of 33 ..= 64 keys, padded to 64, in one launch.
        let list: Vec<u32> = (0..lens.len() as u32)
            .filter(|&i| (33..=64).contains(&lens[i as usize]))
            .collect();
        let seg = Segments::<u64, u64> {
            keys: keys.as_mut_ptr(),
            values: null_mut(),
            indices: null_mut(),
            count: list.len() as u64,
            row_len: 0,
            offsets: offsets.as_ptr(),
            list: list.as_ptr(),
            row_log2: 6,
            map: key_map(KIND_UNSIGNED, false),
        };
        unsafe { sort_like_the_gpu::<u64, u64>(&seg) };
        for (i, w) in offsets.windows(2).enumerate() {
            let (a, b) = (w[0] as usize, w[1] as usize);
            let mut want = original[a..b].to_vec();
            if list.contains(&(i as u32)) {
                want.sort_unstable();
            }
            assert_eq!(keys[a..b], want, "segment {i}");
        }
    }
}
