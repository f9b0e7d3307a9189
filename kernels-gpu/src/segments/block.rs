//! The segmented sort's block code ([`crate::segments`]): a block loads 2^(t − p) segments, each
//! padded to 2^p positions, runs stages 1 ..= p of the bitonic network over them in registers,
//! shuffles and shared memory, and stores each segment back in place, with the segment's
//! positions (argsort) or its values (pairs) permuted alongside.
//!
//! The elements sorted are the keys alone ([`Element`] for `u32`, `u64`), or the key and its
//! position in its segment ([`Indexed32`], [`Indexed64`]), compared key first: a stable order,
//! from which indices are written and values gathered.

use crate::bitonic::block::small::each_register;
use crate::block::{SharedMem, Team};
use crate::keys::KeyBits;
use crate::segments::{LongSegments, RUN_LOG2, slot};

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

/// The item of position `g` of the launch's padded rows for the sort of segments of keys alone
/// too long for a block: the key, encoded; [`KeyBits::INFINITY`] past the segment's end. Keys
/// alone need no position: equal keys are equal bits, so any order of them is the sorted one.
///
/// # Safety
/// As [`packed_item`].
#[inline(always)]
pub unsafe fn packed_key<K: KeyBits, V>(seg: &Segments<K, V>, g: u64) -> K {
    let (e, j) = (g >> seg.row_log2, g & ((1 << seg.row_log2) - 1));
    // SAFETY: the caller's contract.
    unsafe {
        match seg.position(e, j) {
            Some((_, at)) => (*seg.keys.add(at)).encode(seg.map),
            None => K::INFINITY,
        }
    }
}

/// Puts back position `g` of the sorted padded rows `packed` (of [`packed_key`]s): the key,
/// decoded, at its segment's position `g % 2^row_log2`, unless that is past the segment's end.
///
/// # Safety
/// As [`packed_item`]; `packed` holds position `g`.
#[inline(always)]
pub unsafe fn unpack_key<K: KeyBits, V>(seg: &Segments<K, V>, packed: *const K, g: u64) {
    let (e, j) = (g >> seg.row_log2, g & ((1 << seg.row_log2) - 1));
    // SAFETY: the caller's contract.
    unsafe {
        if let Some((_, at)) = seg.position(e, j) {
            *seg.keys.add(at) = (*packed.add(g as usize)).decode(seg.map);
        }
    }
}

/// First step of the sort of long segments by two radix sorts ([`LongSegments`]): compact
/// position `c` takes its key (as it is: the radix sort encodes) into `sorted` and its own
/// position into `from`, which the radix sort by key then permutes with it.
///
/// # Safety
/// `c` is below the number of keys of `long`'s segments, which lie in `keys`; `sorted` and
/// `from` hold that many elements; the number of keys is at most 2^32.
#[inline(always)]
pub unsafe fn long_collect<K: Copy>(
    long: &LongSegments<'_>,
    keys: *const K,
    sorted: *mut K,
    from: *mut u32,
    c: u64,
) {
    // SAFETY: the caller's contract.
    unsafe {
        *sorted.add(c as usize) = *keys.add(long.key_index(c) as usize);
        *from.add(c as usize) = c as u32;
    }
}

/// Second step, after the radix sort by key: element `r` of that order gets the segment of its
/// compact position `from[r]`, the key of the radix sort by segment (`ids`), which permutes
/// `from` with it.
///
/// # Safety
/// As [`long_collect`], for `r`, `from` and `ids`; `from` holds compact positions.
#[inline(always)]
pub unsafe fn long_ids(long: &LongSegments<'_>, from: *const u32, ids: *mut u32, r: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        let (k, _, _) = long.locate(u64::from(*from.add(r as usize)));
        *ids.add(r as usize) = k as u32;
    }
}

/// Third step: compact position `f` of the order by (segment, key, position) holds the
/// element of compact position `from[f]`, position `j` of the same segment. Unless null, `j`
/// goes to `indices` at the segment's `f − start`-th place; the key of position `j`, read
/// from `keys`, to `placed[f]`; the `words` 4-byte words of its value, read from `values`, to
/// `gathered[f]`. Keys and values cannot be permuted in place: [`long_scatter`] puts them back.
///
/// # Safety
/// As [`long_collect`], for `f`, `from` (a permutation of the compact positions that keeps
/// each in its segment), `placed` and `gathered` (`words` words per element); `indices` and
/// `values` (`words` words per key) hold the segments.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn long_gather<K: Copy>(
    long: &LongSegments<'_>,
    from: *const u32,
    keys: *const K,
    indices: *mut u32,
    values: *const u32,
    placed: *mut K,
    gathered: *mut u32,
    words: u32,
    f: u64,
) {
    let (_, start, begin) = long.locate(f);
    // SAFETY: the caller's contract.
    unsafe {
        let j = u64::from(*from.add(f as usize)) - start;
        let source = (begin + j) as usize;
        if !indices.is_null() {
            *indices.add((begin + f - start) as usize) = j as u32;
        }
        if !placed.is_null() {
            *placed.add(f as usize) = *keys.add(source);
        }
        if !values.is_null() {
            let (words, f) = (words as usize, f as usize);
            for w in 0..words {
                *gathered.add(f * words + w) = *values.add(source * words + w);
            }
        }
    }
}

/// Last step, after [`long_gather`]: the key (unless `placed` is null) and the value (unless
/// `values` is null) gathered for compact position `f` go to its place in the segments.
///
/// # Safety
/// As [`long_gather`].
#[inline(always)]
pub unsafe fn long_scatter<K: Copy>(
    long: &LongSegments<'_>,
    placed: *const K,
    gathered: *const u32,
    keys: *mut K,
    values: *mut u32,
    words: u32,
    f: u64,
) {
    let at = long.key_index(f) as usize;
    // SAFETY: the caller's contract.
    unsafe {
        if !placed.is_null() {
            *keys.add(at) = *placed.add(f as usize);
        }
        if !values.is_null() {
            let (words, f) = (words as usize, f as usize);
            for w in 0..words {
                *values.add(at * words + w) = *gathered.add(f * words + w);
            }
        }
    }
}

/// Puts the smaller of `run[i]`, `run[j]` at `i`.
#[inline(always)]
pub(crate) fn order<E: PartialOrd + Copy, const N: usize>(run: &mut [E; N], i: usize, j: usize) {
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

    #[test]
    fn packed_keys_sorted_by_row_unpack_to_sorted_segments() {
        let mut next = xorshift(9);
        // f64 with NaN and signed zeros, descending; segments 0 and 2 padded to 2^14.
        let lens = [10_000u64, 300, 16_384];
        let mut offsets = vec![0u64];
        for l in lens {
            offsets.push(offsets.last().unwrap() + l);
        }
        let n = *offsets.last().unwrap() as usize;
        let floats: Vec<f64> = (0..n)
            .map(|i| match i % 11 {
                0 => f64::NAN,
                1 => -0.0,
                2 => 0.0,
                3 => -f64::NAN,
                _ => (next() % 9) as f64 - 4.0,
            })
            .collect();
        let mut keys: Vec<u64> = floats.iter().map(|f| f.to_bits()).collect();
        let list = [0u32, 2];
        let map = key_map(KIND_FLOAT, true);
        let seg = Segments::<u64, u32> {
            keys: keys.as_mut_ptr(),
            values: null_mut(),
            indices: null_mut(),
            count: 2,
            row_len: 0,
            offsets: offsets.as_ptr(),
            list: list.as_ptr(),
            row_log2: 14,
            map,
        };
        let mut packed: Vec<u64> = (0..2u64 << 14)
            .map(|g| unsafe { packed_key(&seg, g) })
            .collect();
        packed
            .chunks_mut(1 << 14)
            .for_each(|row| row.sort_unstable());
        for g in 0..2u64 << 14 {
            unsafe { unpack_key(&seg, packed.as_ptr(), g) };
        }
        for (i, w) in offsets.windows(2).enumerate() {
            let (a, b) = (w[0] as usize, w[1] as usize);
            let mut want = floats[a..b].to_vec();
            if list.contains(&(i as u32)) {
                want.sort_by(|x, y| y.total_cmp(x));
            }
            let want: Vec<u64> = want.iter().map(|f| f.to_bits()).collect();
            assert_eq!(keys[a..b], want[..], "segment {i}");
        }
        // 4-byte keys: rows of 9000 padded to 2^14, u32::MAX among them.
        let original: Vec<u32> = (0..3 * 9000)
            .map(|i| if i % 5 == 0 { u32::MAX } else { next() as u32 })
            .collect();
        let mut keys = original.clone();
        let rows = Segments::<u32, u32> {
            keys: keys.as_mut_ptr(),
            values: null_mut(),
            indices: null_mut(),
            count: 3,
            row_len: 9000,
            offsets: null(),
            list: null(),
            row_log2: 14,
            map: key_map(KIND_UNSIGNED, false),
        };
        let mut packed: Vec<u32> = (0..3u64 << 14)
            .map(|g| unsafe { packed_key(&rows, g) })
            .collect();
        packed
            .chunks_mut(1 << 14)
            .for_each(|row| row.sort_unstable());
        for g in 0..3u64 << 14 {
            unsafe { unpack_key(&rows, packed.as_ptr(), g) };
        }
        for (row, want) in keys.chunks(9000).zip(original.chunks(9000)) {
            let mut want = want.to_vec();
            want.sort_unstable();
            assert_eq!(row, want);
        }
    }

    /// The long segments `lens` (a gap of `gap` keys in no segment before each) as the tables
    /// of [`LongSegments`], and the keys they span.
    fn long_tables(lens: &[u64], gap: u64) -> (Vec<u64>, Vec<u64>, u64) {
        let (mut starts, mut begins, mut at) = (vec![0u64], Vec::new(), 0);
        for &len in lens {
            at += gap;
            begins.push(at);
            starts.push(starts.last().unwrap() + len);
            at += len;
        }
        (starts, begins, at + gap)
    }

    /// The sort of long segments as the host runs it, with std's stable sorts standing for the
    /// radix sorts (which are stable): collect, sort by key, segment ids, sort by segment (only
    /// for more than one segment), gather, scatter. Returns the indices (`u32::MAX` where none
    /// was written); `keys_too`: the keys are written (not for an argsort); `in_place`: an
    /// argsort of segments end to end from this key on, which sorts in the keys and indices.
    #[allow(clippy::too_many_arguments)]
    fn long_sort_like_the_gpu(
        long: &LongSegments<'_>,
        keys: &mut [u64],
        values: &mut [u32],
        words: u32,
        map: u32,
        segments: u64,
        keys_too: bool,
        in_place: Option<usize>,
    ) -> Vec<u32> {
        let m = if long.row_len != 0 {
            segments * long.row_len
        } else {
            *long.starts.last().unwrap()
        } as usize;
        let mut indices = vec![u32::MAX; keys.len()];
        let (mut own_sorted, mut own_from) = (vec![0u64; m], vec![0u32; m]);
        let (keys_at, indices_at) = (keys.as_mut_ptr(), indices.as_mut_ptr());
        let (sorted, from) = match in_place {
            Some(first) => unsafe { (keys_at.add(first), indices_at.add(first)) },
            None => (own_sorted.as_mut_ptr(), own_from.as_mut_ptr()),
        };
        for c in 0..m as u64 {
            unsafe { long_collect(long, keys_at, sorted, from, c) };
        }
        let stable_sort = |by: &mut dyn FnMut(usize) -> u64| {
            let mut order: Vec<usize> = (0..m).collect();
            order.sort_by_key(|&i| by(i));
            let old: Vec<u32> = (0..m).map(|i| unsafe { *from.add(i) }).collect();
            for (i, &o) in order.iter().enumerate() {
                unsafe { *from.add(i) = old[o] };
            }
        };
        let encoded: Vec<u64> = (0..m)
            .map(|i| unsafe { (*sorted.add(i)).encode(map) })
            .collect();
        stable_sort(&mut |i| encoded[i]);
        if segments > 1 {
            let mut ids = vec![0u32; m];
            for r in 0..m as u64 {
                unsafe { long_ids(long, from, ids.as_mut_ptr(), r) };
            }
            stable_sort(&mut |i| u64::from(ids[i]));
        }
        let mut placed = vec![0u64; m];
        let mut gathered = vec![0u32; m * words as usize];
        let placed_at = if keys_too {
            placed.as_mut_ptr()
        } else {
            null_mut()
        };
        let values_at = if words > 0 {
            values.as_mut_ptr()
        } else {
            null_mut()
        };
        for f in 0..m as u64 {
            unsafe {
                long_gather(
                    long,
                    from,
                    keys_at,
                    indices_at,
                    values_at,
                    placed_at,
                    gathered.as_mut_ptr(),
                    words,
                    f,
                )
            };
        }
        for f in 0..m as u64 {
            unsafe {
                long_scatter(
                    long,
                    placed_at,
                    gathered.as_ptr(),
                    keys_at,
                    values_at,
                    words,
                    f,
                )
            };
        }
        indices
    }

    /// Checks [`long_sort_like_the_gpu`] of i64 or f64 keys (raw bits `bits`) in `ranges` of
    /// `n` keys against std's stable sort of each segment; keys elsewhere stay, and all of them
    /// for an `argsort`.
    fn check_long_sort(
        long: &LongSegments<'_>,
        ranges: &[(usize, usize)],
        bits: &[u64],
        (float, descending): (bool, bool),
        words: u32,
        argsort: bool,
    ) {
        let n = bits.len();
        let map = key_map(if float { KIND_FLOAT } else { KIND_SIGNED }, descending);
        let mut keys = bits.to_vec();
        let values_in: Vec<u32> = (0..n as u32 * words.max(1)).map(|w| w * 3 + 1).collect();
        let mut values = values_in.clone();
        let segments = ranges.len() as u64;
        // An argsort of segments end to end sorts in its keys' copy and its indices.
        let end_to_end = ranges.windows(2).all(|w| w[0].1 == w[1].0);
        let in_place = (argsort && end_to_end).then_some(ranges[0].0);
        let indices = long_sort_like_the_gpu(
            long,
            &mut keys,
            &mut values,
            words,
            map,
            segments,
            !argsort,
            in_place,
        );
        if argsort && in_place.is_none() {
            assert_eq!(keys, bits, "an argsort writes no keys");
        }
        let mut covered = vec![false; n];
        for &(a, b) in ranges {
            let mut want: Vec<u32> = (0..(b - a) as u32).collect();
            want.sort_by_key(|&j| bits[a + j as usize].encode(map));
            assert_eq!(indices[a..b], want[..], "positions of {a}..{b}");
            for (j, &i) in want.iter().enumerate() {
                let (at, from) = (a + j, a + i as usize);
                if !argsort {
                    assert_eq!(keys[at], bits[from], "key {at}");
                }
                let w = words as usize;
                assert_eq!(
                    values[at * w..(at + 1) * w],
                    values_in[from * w..(from + 1) * w]
                );
            }
            covered[a..b].iter_mut().for_each(|c| *c = true);
        }
        for i in (0..n).filter(|&i| !covered[i]) {
            assert_eq!(
                (keys[i], indices[i]),
                (bits[i], u32::MAX),
                "key {i} is in no segment"
            );
            let w = words as usize;
            assert_eq!(values[i * w..(i + 1) * w], values_in[i * w..(i + 1) * w]);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// Long segments between keys of no segment (or end to end: argsorts in place), with
        /// few distinct keys (NaN and signed zeros among the floats): the two stable sorts and
        /// the steps around them give each segment's stable order, its positions and its
        /// values, and leave the rest.
        #[test]
        fn long_segments_sort_stably_by_two_stable_sorts(
            lens in proptest::collection::vec(1u64..3000, 1..6),
            gap in proptest::sample::select(vec![0u64, 0, 1, 7, 39]),
            seed in 0u64..1000,
            float: bool,
            descending: bool,
            words in proptest::sample::select(vec![0u32, 1, 2, 4]),
            argsort: bool,
        ) {
            let (starts, begins, n) = long_tables(&lens, gap);
            let long = LongSegments { row_len: 0, starts: &starts, begins: &begins };
            let mut next = xorshift(seed + 1);
            let specials = [f64::NAN.to_bits(), (-0.0f64).to_bits(), 0, (-f64::NAN).to_bits()];
            let bits: Vec<u64> = (0..n)
                .map(|i| match (float, i % 9) {
                    (true, 0..=3) => specials[(i % 9) as usize],
                    (true, _) => ((next() % 7) as f64 - 3.0).to_bits(),
                    (false, _) => ((next() % 7) as i64 - 3) as u64,
                })
                .collect();
            let ranges: Vec<(usize, usize)> = begins
                .iter()
                .zip(&lens)
                .map(|(&b, &l)| (b as usize, (b + l) as usize))
                .collect();
            check_long_sort(&long, &ranges, &bits, (float, descending), words, argsort);
        }

        /// Rows locate by arithmetic and sort the same way.
        #[test]
        fn long_rows_sort_stably_by_two_stable_sorts(
            len in 1u64..2000,
            rows in 1u64..5,
            seed in 0u64..1000,
            words in proptest::sample::select(vec![0u32, 1, 4]),
        ) {
            let long = LongSegments { row_len: len, starts: &[], begins: &[] };
            let mut next = xorshift(seed + 7);
            let bits: Vec<u64> = (0..len * rows).map(|_| next() % 50).collect();
            let ranges: Vec<(usize, usize)> =
                (0..rows).map(|r| ((r * len) as usize, ((r + 1) * len) as usize)).collect();
            let argsort = words == 0 && seed % 3 == 0;
            check_long_sort(&long, &ranges, &bits, (false, seed % 2 == 0), words, argsort);
        }

        /// Every compact position lies in the segment the tables give it, at the right key.
        #[test]
        fn compact_positions_locate_their_segment(
            lens in proptest::collection::vec(1u64..100, 1..30),
            gap in 0u64..5,
        ) {
            let (starts, begins, _) = long_tables(&lens, gap);
            let long = LongSegments { row_len: 0, starts: &starts, begins: &begins };
            let mut c = 0;
            for (k, &len) in lens.iter().enumerate() {
                for j in 0..len {
                    proptest::prop_assert_eq!(long.locate(c), (k as u64, starts[k], begins[k]));
                    proptest::prop_assert_eq!(long.key_index(c), begins[k] + j);
                    c += 1;
                }
            }
        }
    }
}
