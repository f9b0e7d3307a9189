//! Pure index math of top-k selection: the k best keys of each *segment* (a whole array, or a
//! row of a matrix), sorted, ties broken by the lower index. Also compiled and tested on the
//! host, where [`plan`] and the block code ([`crate::topk::block`]) run on the CPU.
//!
//! Keys are first mapped to unsigned bits whose ascending order is the wanted order
//! ([`crate::keys`]); a key and its position then form one unsigned *item*
//! ([`TopKey::pack`]: key in the high half, position in the low half), so "the k best keys,
//! ties by the lower index" is "the k smallest items", and items are all distinct.
//!
//! A selection runs in *rounds*. In a round each segment is cut into *parts* of at most
//! `chunk` keys, one block each; a block streams its part once, keeps the k smallest items
//! it has seen in shared memory, and drops at the load every key not smaller than the k-th of
//! them (for most inputs almost every key: the round runs at the memory's pace). Each block
//! writes its k best keys (still encoded) with their indices; the next round selects among
//! those `parts × k` candidates per segment, and so on until a segment is one part: the last
//! round writes the decoded keys. Candidates are laid out part after part, so a candidate's
//! position orders equal keys as their indices do, and ties stay broken by the lower index.
//! Parts of up to [`ROW_MAX_KEYS`] keys (rows of a matrix, and the parts the rounds over
//! candidates are cut into) are instead loaded whole into registers and selected from by a
//! radix select ([`selects_in_registers`], [`crate::topk::block::rows`]).
//! Memory: `segments × parts × k` candidates (keys and `u64` indices), twice.
//!
//! ```
//! use kernels_gpu::topk::{Round, plan};
//!
//! // 2^24 keys, k = 8, on a GPU that runs 528 blocks at once: 512 blocks of 32,768 keys,
//! // then one block over their 512 × 8 candidates.
//! let rounds: Vec<Round> = plan(1, 1 << 24, 8, 4, 528).collect();
//! assert_eq!(rounds.len(), 2);
//! assert_eq!((rounds[0].parts, rounds[0].chunk), (512, 32768));
//! assert_eq!(rounds[1].len, 512 * 8);
//! assert_eq!(rounds[1].parts, 1);
//! // k = 1024: the parts' 1024 best each, in parts of 4096 selected in registers, shrink
//! // fourfold per round.
//! let parts: Vec<u64> = plan(1, 1 << 24, 1024, 4, 528).map(|r| r.parts).collect();
//! assert_eq!(parts, [512, 128, 32, 8, 2, 1]);
//! ```

pub mod block;
pub mod digits;
#[cfg(target_arch = "nvptx64")]
mod kernels;

use crate::args::Addr;
use crate::keys::KeyBits;
use crate::tuning::{TOPK_DIGITS_BYTES_PER_K, TOPK_MAX_REGISTERS_32, TOPK_MAX_REGISTERS_64};

/// Threads per block.
pub const THREADS: u32 = 256;

/// The largest k the kernels select; larger k are a sort's first k.
pub const MAX_K: u32 = 1024;

// The passes of a top-k by digits count keys in `u32`: the largest array they take must stay
// below 2^32 keys.
const _: () = assert!(MAX_K as u64 * TOPK_DIGITS_BYTES_PER_K / 4 < 1 << 32);

/// The index of a candidate slot that holds no key (a part shorter than k).
pub const NO_INDEX: u64 = u64::MAX;

/// Blocks of a round that a multiprocessor holds at once, from the kernels' register caps
/// ([`TOPK_MAX_REGISTERS_32`], [`TOPK_MAX_REGISTERS_64`]): four with 4-byte keys, three with
/// 8-byte keys. A round cuts a segment into this many parts per multiprocessor, so that they
/// all run in one wave with their loads in flight together.
///
/// ```
/// use kernels_gpu::topk::blocks_per_multiprocessor;
/// assert_eq!((blocks_per_multiprocessor(4), blocks_per_multiprocessor(8)), (4, 3));
/// ```
pub const fn blocks_per_multiprocessor(key_bytes: u32) -> u32 {
    let registers = if key_bytes > 4 {
        TOPK_MAX_REGISTERS_64
    } else {
        TOPK_MAX_REGISTERS_32
    };
    65536 / (registers * THREADS)
}

/// The fewest keys a part holds, as a multiple of k: each round shrinks its input at least
/// this many times, so there are few rounds.
pub const PART_MIN_KS: u32 = 16;

/// The fewest keys a part holds: enough to amortise the block's candidate sorts.
pub const PART_MIN_KEYS: u64 = 1 << 14;

/// The least factor by which a round over candidates in parts of [`ROW_MAX_KEYS`] shrinks
/// them (k at most a quarter of a part); for larger k they stream like the first round.
pub const CANDIDATE_MIN_SHRINK: u64 = 4;

/// The most keys of a part: positions within a part fit in the low half of an item with
/// room for the "no key" item ([`TopKey::NONE`]).
pub const MAX_CHUNK: u64 = 1 << 31;

/// Keys each thread loads per tile: 16 keys of 4 bytes, 8 of 8 bytes (64 bytes in flight per
/// thread, four 16-byte loads).
///
/// ```
/// use kernels_gpu::topk::items_per_thread;
/// assert_eq!((items_per_thread(4), items_per_thread(8)), (16, 8));
/// ```
pub const fn items_per_thread(key_bytes: u32) -> u32 {
    if key_bytes > 4 { 8 } else { 16 }
}

/// Bytes of one load of a thread's keys: a tile is read in vectors of this many bytes, thread
/// after thread, so a warp's load covers 512 contiguous bytes.
pub const VECTOR_BYTES: u32 = 16;

/// Position within its tile of a thread's key `q` (of [`items_per_thread`]): the thread's
/// keys are [`VECTOR_BYTES`]-byte vectors `r = q / per_vector`, each `THREADS` vectors apart.
///
/// ```
/// use kernels_gpu::topk::{THREADS, tile_position};
/// // 4-byte keys: thread 1's first vector is keys 4..8; its second starts a row of vectors on.
/// assert_eq!((tile_position(4, 1, 0), tile_position(4, 1, 3)), (4, 7));
/// assert_eq!(tile_position(4, 1, 4), 4 * THREADS + 4);
/// assert_eq!(tile_position(8, 2, 5), 2 * (2 * THREADS + 2) + 1);
/// ```
#[inline(always)]
pub const fn tile_position(key_bytes: u32, thread: u32, q: u32) -> u32 {
    let per_vector = VECTOR_BYTES / key_bytes;
    ((q / per_vector) * THREADS + thread) * per_vector + q % per_vector
}

/// Keys a block loads per tile.
pub const fn tile_keys(key_bytes: u32) -> u32 {
    THREADS * items_per_thread(key_bytes)
}

/// Slots of a block's running top-k: k rounded up to a power of two, for the bitonic merge.
///
/// ```
/// use kernels_gpu::topk::padded_k;
/// assert_eq!((padded_k(1), padded_k(33), padded_k(1024)), (1, 64, 1024));
/// ```
pub const fn padded_k(k: u32) -> u32 {
    k.next_power_of_two()
}

/// Slots of a block's candidate buffer: a power of two, at least twice the running top-k (so
/// that a sort of a full buffer is worth its merge) and two keys per thread.
///
/// ```
/// use kernels_gpu::topk::candidate_slots;
/// assert_eq!((candidate_slots(8), candidate_slots(1000)), (512, 2048));
/// ```
pub const fn candidate_slots(k: u32) -> u32 {
    let twice = 2 * padded_k(k);
    if twice > 2 * THREADS {
        twice
    } else {
        2 * THREADS
    }
}

/// Items a thread holds in registers for a bitonic network over `len` items (a power of two
/// up to [`candidate_slots`]`(MAX_K)`): `len / THREADS`, at least one. Thread `t` holds items
/// `t·v .. t·v + v`; threads past `len` hold none.
///
/// ```
/// use kernels_gpu::topk::{NETWORK_REGISTERS, network_per_thread};
/// assert_eq!((network_per_thread(16), network_per_thread(512)), (1, 2));
/// assert_eq!(network_per_thread(2048), NETWORK_REGISTERS as u32);
/// ```
pub const fn network_per_thread(len: u32) -> u32 {
    if len > THREADS { len / THREADS } else { 1 }
}

/// Registers of a thread's part of a network: enough for a full candidate buffer.
pub const NETWORK_REGISTERS: usize = (2 * MAX_K / THREADS) as usize;

/// Registers of a thread's part of the network that sorts the k items a part held in
/// registers selects ([`selects_in_registers`]): enough for [`MAX_K`].
pub const ROW_NETWORK_REGISTERS: usize = (MAX_K / THREADS) as usize;

/// Samples each thread gives to bound the first tile of a part: the minima of as many groups
/// of its keys, so that the samples fill the candidate buffer (2 for k up to 256, 8 for
/// k = 1024). The k-th smallest sample bounds the part's k-th smallest item, since k of the
/// part's items do not exceed it.
///
/// ```
/// use kernels_gpu::topk::samples_per_thread;
/// assert_eq!((samples_per_thread(1), samples_per_thread(256), samples_per_thread(1024)), (2, 2, 8));
/// ```
pub const fn samples_per_thread(k: u32) -> u32 {
    candidate_slots(k) / THREADS
}

/// Bytes of `items` items of `key_bytes`-byte keys in shared memory, a multiple of 16 so that
/// the next region stays aligned for 16-byte items.
const fn region(items: u32, key_bytes: u32) -> u32 {
    (items * 2 * key_bytes).next_multiple_of(16)
}

/// Dynamic shared memory of a block selecting the top `k` of `key_bytes`-byte keys: the
/// running top-k, the candidate buffer, one item (the bound of a part's first tile) and four
/// `u32` counters, in that order.
///
/// ```
/// use kernels_gpu::topk::shared_bytes;
/// assert_eq!(shared_bytes(4, 8), (8 + 512) * 8 + 16 + 16);
/// assert_eq!(shared_bytes(8, 1024), (1024 + 2048) * 16 + 16 + 16);
/// ```
pub const fn shared_bytes(key_bytes: u32, k: u32) -> u32 {
    region(padded_k(k), key_bytes)
        + region(candidate_slots(k), key_bytes)
        + region(1, key_bytes)
        + 16
}

/// Byte offsets of [`shared_bytes`]'s regions: running top-k, candidates, the first tile's
/// bound, counters.
pub const fn shared_layout(key_bytes: u32, k: u32) -> [u32; 4] {
    let top = 0;
    let candidates = top + region(padded_k(k), key_bytes);
    let bound = candidates + region(candidate_slots(k), key_bytes);
    let counters = bound + region(1, key_bytes);
    [top, candidates, bound, counters]
}

/// Keys each thread holds of a segment that one block selects from in registers
/// ([`crate::topk::block::rows`]): segments of up to [`ROW_MAX_KEYS`] keys.
pub const ROW_ITEMS: u32 = 16;

/// The longest segment a block selects from in registers: 4096 keys, 16 per thread.
pub const ROW_MAX_KEYS: u64 = (THREADS * ROW_ITEMS) as u64;

/// Bits of one digit of the radix select in registers.
pub const DIGIT_BITS: u32 = 8;

/// Bins of a digit's histogram: one per thread, so that one block-wide scan finds the digit.
pub const DIGIT_BINS: u32 = 1 << DIGIT_BITS;

const _: () = assert!(DIGIT_BINS == THREADS && THREADS.is_multiple_of(32));

/// Copies of a digit's histogram: lane `l` of a warp counts into copy `l % DIGIT_COPIES`, so
/// that the lanes adding to one bin at once (all of a warp, where keys share their top digits,
/// like floats of one sign and magnitude) are at most `32 / DIGIT_COPIES`.
pub const DIGIT_COPIES: u32 = 8;

/// Words from one copy of a histogram to the next: one more than its bins, so that a bin's
/// copies lie in different banks of shared memory.
pub const DIGIT_COPY_STRIDE: u32 = DIGIT_BINS + 1;

/// Warps of a block.
pub const WARPS: u32 = THREADS / 32;

/// Whether `round` runs as a radix select in registers rather than by streaming: parts that
/// one block holds in registers.
///
/// ```
/// use kernels_gpu::topk::{Round, selects_in_registers};
/// let rows = Round { segments: 16384, len: 4096, parts: 1, chunk: 4096 };
/// assert!(selects_in_registers(&rows));
/// assert!(!selects_in_registers(&Round { len: 4097, chunk: 4097, ..rows }));
/// assert!(selects_in_registers(&Round { len: 40_000, parts: 10, ..rows }));
/// ```
pub const fn selects_in_registers(round: &Round) -> bool {
    round.chunk <= ROW_MAX_KEYS
}

/// Byte offsets of the shared memory of a radix select in registers of the top `k` of
/// `key_bytes`-byte keys, and its size: two digit histograms ([`DIGIT_COPIES`] copies of
/// [`DIGIT_BINS`] `u32` each, [`DIGIT_COPY_STRIDE`] apart; used in turn so that one is cleared
/// while the other counts), two sets of [`WARPS`] warp sums (`u32`), two chosen digits (4 `u32`
/// each: digit, keys below it, keys in it, spare), the counter of selected keys (16 bytes), then
/// [`padded_k`] items for the sort of the selected.
///
/// ```
/// use kernels_gpu::topk::rows_shared_layout;
/// let [hist, sums, chosen, counter, items, bytes] = rows_shared_layout(4, 8);
/// let histograms = 2 * 8 * 257 * 4;
/// assert_eq!((hist, sums, chosen, counter), (0, histograms, histograms + 64, histograms + 96));
/// assert_eq!((items, bytes), (histograms + 112, histograms + 112 + 8 * 8));
/// assert_eq!(rows_shared_layout(8, 1024)[5], histograms + 112 + 1024 * 16);
/// ```
pub const fn rows_shared_layout(key_bytes: u32, k: u32) -> [u32; 6] {
    let hist = 0;
    let sums = hist + 2 * DIGIT_COPIES * DIGIT_COPY_STRIDE * 4;
    let chosen = sums + 2 * WARPS * 4;
    let counter = chosen + 2 * 16;
    let items = counter + 16;
    [
        hist,
        sums,
        chosen,
        counter,
        items,
        items + region(padded_k(k), key_bytes),
    ]
}

/// An item that the lanes of a warp exchange (a shuffle on the GPU).
pub trait Lane: Copy {
    /// This value as lane `lane ^ lane_mask` of the warp holds it. Every lane of the warp
    /// must call it.
    #[cfg(target_arch = "nvptx64")]
    fn shfl_xor(self, lane_mask: u32) -> Self;
}

impl Lane for u64 {
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn shfl_xor(self, lane_mask: u32) -> u64 {
        crate::gpu::WarpShuffle::shfl_xor(self, lane_mask)
    }
}

impl Lane for u128 {
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn shfl_xor(self, lane_mask: u32) -> u128 {
        let low = crate::gpu::WarpShuffle::shfl_xor(self as u64, lane_mask);
        let high = crate::gpu::WarpShuffle::shfl_xor((self >> 64) as u64, lane_mask);
        (u128::from(high) << 64) | u128::from(low)
    }
}

/// Encoded key bits that pack with a position into one item, ordered by key then position.
///
/// ```
/// use kernels_gpu::topk::TopKey;
/// let (a, b) = (5u32.pack(9), 6u32.pack(0));
/// assert!(a < b && 5u32.pack(1) < a);
/// assert_eq!(u32::unpack(a), (5, 9));
/// assert_eq!(u64::unpack(u64::MAX.pack(7)), (u64::MAX, 7));
/// assert!(u64::MAX.pack(u32::MAX - 1) < <u64 as TopKey>::NONE);
/// ```
pub trait TopKey: KeyBits {
    /// The key and a position: `u64` for 4-byte keys, `u128` for 8-byte keys.
    type Item: Copy + Ord + Lane;
    /// The largest item, which no key at a position of a part ([`MAX_CHUNK`]) packs to:
    /// "no key".
    const NONE: Self::Item;
    /// The item of this key at position `pos`.
    fn pack(self, pos: u32) -> Self::Item;
    /// The key and position of an item.
    fn unpack(item: Self::Item) -> (Self, u32);
    /// The key's bits, widened: the radix select takes its digits from them.
    fn wide(self) -> u64;
    /// The key at `at` if `valid`, else `Self::INFINITY`, without a branch on the GPU (a
    /// predicated load from memory that the launch does not write).
    ///
    /// # Safety
    /// Where `valid`, `at` is a valid, aligned key not written during the launch; elsewhere
    /// it is not read.
    unsafe fn load_if(at: *const Self, valid: bool) -> Self;
}

impl TopKey for u32 {
    type Item = u64;
    const NONE: u64 = u64::MAX;
    #[inline(always)]
    fn pack(self, pos: u32) -> u64 {
        (u64::from(self) << 32) | u64::from(pos)
    }
    #[inline(always)]
    fn unpack(item: u64) -> (u32, u32) {
        ((item >> 32) as u32, item as u32)
    }
    #[inline(always)]
    fn wide(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    unsafe fn load_if(at: *const u32, valid: bool) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        let key = unsafe { crate::gpu::load_global_u32_if(at, valid, u32::MAX) };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the caller's contract.
        let key = if valid { unsafe { *at } } else { u32::MAX };
        key
    }
}

impl TopKey for u64 {
    type Item = u128;
    const NONE: u128 = u128::MAX;
    #[inline(always)]
    fn pack(self, pos: u32) -> u128 {
        (u128::from(self) << 64) | u128::from(pos)
    }
    #[inline(always)]
    fn unpack(item: u128) -> (u64, u32) {
        ((item >> 64) as u64, item as u32)
    }
    #[inline(always)]
    fn wide(self) -> u64 {
        self
    }
    #[inline(always)]
    unsafe fn load_if(at: *const u64, valid: bool) -> u64 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        let key = unsafe { crate::gpu::load_global_u64_if(at, valid, u64::MAX) };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the caller's contract.
        let key = if valid { unsafe { *at } } else { u64::MAX };
        key
    }
}

/// One round of a selection: each of `segments` segments of `len` keys (laid out one after
/// another) is cut into `parts` parts of `chunk` keys (the last may be shorter), one block
/// each, and each part's k best keys go out as candidates: `segments × parts × k` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    /// Segments.
    pub segments: u64,
    /// Keys per segment in this round's input.
    pub len: u64,
    /// Parts per segment.
    pub parts: u64,
    /// Keys per part, a multiple of the tile unless the segment is one part.
    pub chunk: u64,
}

crate::args::kernel_args! { $
    /// The argument of a round of a selection (`topk_round_*`, streaming, and `topk_rows_*`, in
    /// registers): each part of `chunk` keys of each of `segments` segments of `len` keys gives
    /// its `k` best keys and their indices (a [`Round`] and its buffers).
    pub struct RoundArgs, entry round_entry {
        /// The round's input, read: `segments × len` keys, segment after segment (encoded
        /// with `encode` as they are loaded).
        pub keys: Addr,
        /// Their `u64` indices within their segment ([`NO_INDEX`]: no key), read; or 0 for
        /// none (the first round), a key's index then being its position in its segment.
        pub indices: Addr,
        /// Where the round writes its candidates: `segments × parts × k` keys, part after
        /// part (decoded through the inverse of `decode` as they are stored).
        pub out_keys: Addr,
        /// Where it writes their `u64` indices within their segment, as many ([`NO_INDEX`]
        /// where a part had fewer than `k` keys).
        pub out_indices: Addr,
        /// Segments ([`Round::segments`]).
        pub segments: u64,
        /// Keys per segment in the round's input ([`Round::len`]).
        pub len: u64,
        /// Parts per segment ([`Round::parts`]).
        pub parts: u64,
        /// Keys per part ([`Round::chunk`]).
        pub chunk: u64,
        /// Keys selected per part, `1 ..= MAX_K`.
        pub k: u32,
        /// Key map applied as the keys are loaded (the first round) or `IDENTITY`.
        pub encode: u32,
        /// Key map undone as the keys are stored (the last round) or `IDENTITY`.
        pub decode: u32,
    }
}

impl Round {
    /// Blocks of the round (parts in all).
    pub const fn blocks(&self) -> u64 {
        self.segments * self.parts
    }

    /// The range of part `p` within its segment (empty past the segment's end).
    ///
    /// ```
    /// use kernels_gpu::topk::Round;
    /// let r = Round { segments: 2, len: 10, parts: 3, chunk: 4 };
    /// assert_eq!((r.part(0), r.part(2)), ((0, 4), (8, 10)));
    /// ```
    pub const fn part(&self, p: u64) -> (u64, u64) {
        let start = p * self.chunk;
        let end = start + self.chunk;
        let end = if end < self.len { end } else { self.len };
        let start = if start < end { start } else { end };
        (start, end)
    }

    /// Candidates the round writes per segment.
    pub const fn candidates(&self, k: u32) -> u64 {
        self.parts * k as u64
    }
}

/// The rounds that select the `k` best of each of `segments` segments of `len` keys of
/// `key_bytes` bytes, on a GPU that runs `blocks` blocks at once; the last round has one part
/// per segment. Needs `1 ≤ k ≤ len`.
///
/// The first round cuts a segment into as many parts as keep `blocks` blocks busy (rows share
/// them), of at least [`PART_MIN_KEYS`] and [`PART_MIN_KS`]` × k` keys each, so that it shrinks
/// its input more than tenfold. Later rounds, over candidates, cut them into parts of
/// [`ROW_MAX_KEYS`] (each shrinking at least fourfold, [`CANDIDATE_MIN_SHRINK`]), which
/// blocks select from in registers.
///
/// ```
/// use kernels_gpu::topk::plan;
/// // Rows: 16384 rows of 4096 keys are one round of a block per row.
/// let rows: Vec<_> = plan(16384, 4096, 256, 4, 528).collect();
/// assert_eq!((rows.len(), rows[0].parts), (1, 1));
/// // 64 rows of 2^18 keys: 8 parts per row, then a block per row.
/// let long: Vec<_> = plan(64, 1 << 18, 8, 4, 528).collect();
/// assert_eq!((long.len(), long[0].parts, long[1].len), (2, 8, 64));
/// // 2^24 keys, k = 256: 512 parts, then their candidates in parts of 4096.
/// let parts: Vec<_> = plan(1, 1 << 24, 256, 4, 528).map(|r| (r.parts, r.chunk)).collect();
/// assert_eq!(parts, [(512, 32768), (32, 4096), (2, 4096), (1, 512)]);
/// ```
pub fn plan(segments: u64, len: u64, k: u32, key_bytes: u32, blocks: u64) -> Plan {
    Plan {
        segments,
        len,
        k,
        tile: u64::from(tile_keys(key_bytes)),
        blocks,
        candidates: false,
        done: false,
    }
}

/// The rounds of a selection, from [`plan`].
#[derive(Clone, Debug)]
pub struct Plan {
    segments: u64,
    len: u64,
    k: u32,
    tile: u64,
    blocks: u64,
    /// Whether the next round's input is candidates (not the first round).
    candidates: bool,
    done: bool,
}

impl Iterator for Plan {
    type Item = Round;

    fn next(&mut self) -> Option<Round> {
        if self.done || self.segments == 0 {
            return None;
        }
        let len = self.len;
        let min_part = max(PART_MIN_KEYS, u64::from(PART_MIN_KS) * u64::from(self.k));
        let busy = max(1, self.blocks / self.segments);
        let parts = max(min(len.div_ceil(min_part), busy), len.div_ceil(MAX_CHUNK));
        let in_registers =
            self.candidates && u64::from(self.k) * CANDIDATE_MIN_SHRINK <= ROW_MAX_KEYS;
        let (parts, chunk) = if in_registers && len > ROW_MAX_KEYS {
            (len.div_ceil(ROW_MAX_KEYS), ROW_MAX_KEYS)
        } else if parts <= 1 {
            (1, len)
        } else {
            let chunk = min(len.div_ceil(parts).next_multiple_of(self.tile), MAX_CHUNK);
            (len.div_ceil(chunk), chunk)
        };
        let round = Round {
            segments: self.segments,
            len,
            parts,
            chunk,
        };
        self.done = parts == 1;
        self.candidates = true;
        self.len = round.candidates(self.k);
        Some(round)
    }
}

const fn max(a: u64, b: u64) -> u64 {
    if a > b { a } else { b }
}

const fn min(a: u64, b: u64) -> u64 {
    if a < b { a } else { b }
}

/// Candidates (keys and indices) the rounds of `plan` other than the last write at most, per
/// buffer: the two buffers the rounds ping-pong between hold this many each.
///
/// ```
/// use kernels_gpu::topk::{candidate_capacity, plan};
/// assert_eq!(candidate_capacity(plan(1, 1 << 24, 64, 4, 528)), 512 * 64);
/// assert_eq!(candidate_capacity(plan(16384, 4096, 8, 4, 528)), 0);
/// ```
pub fn candidate_capacity(plan: Plan) -> u64 {
    let k = plan.k;
    plan.filter(|r| r.parts > 1)
        .map(|r| r.segments * r.candidates(k))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shared_memory_fits_every_device_for_every_k() {
        for k in 1..=MAX_K {
            for kb in [4, 8] {
                assert!(
                    shared_bytes(kb, k) <= crate::tuning::MIN_SHARED_BYTES,
                    "{kb} {k}"
                );
                assert!(rows_shared_layout(kb, k)[5] <= crate::tuning::MIN_SHARED_BYTES);
                let [top, cand, bound, counters] = shared_layout(kb, k);
                assert!(top < cand && cand < bound && bound < counters);
                assert_eq!(counters + 16, shared_bytes(kb, k));
                assert!(cand % 16 == 0 && bound % 16 == 0 && counters % 16 == 0);
                // The samples of a thread are minima of equal groups of its keys.
                let samples = samples_per_thread(k);
                assert!(samples <= items_per_thread(kb));
                assert_eq!(items_per_thread(kb) % samples, 0);
            }
            let slots = candidate_slots(k);
            assert!(slots >= 2 * padded_k(k) && slots.is_power_of_two());
            // Every network (a buffer, the samples, the running top-k) fits the registers.
            assert!(network_per_thread(slots) as usize <= NETWORK_REGISTERS);
            assert_eq!(samples_per_thread(k) * THREADS, slots);
        }
    }

    #[test]
    fn a_tile_is_every_position_once_in_vectors() {
        for kb in [4, 8] {
            let per_vector = VECTOR_BYTES / kb;
            let mut seen = vec![false; tile_keys(kb) as usize];
            for t in 0..THREADS {
                for q in 0..items_per_thread(kb) {
                    let p = tile_position(kb, t, q);
                    assert!(!seen[p as usize], "{kb} {t} {q}");
                    seen[p as usize] = true;
                    // A vector's keys are consecutive and start at a multiple of the vector.
                    if q % per_vector == 0 {
                        assert_eq!(p % per_vector, 0);
                    } else {
                        assert_eq!(p, tile_position(kb, t, q - 1) + 1);
                    }
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn items_order_by_key_then_position() {
        let items = [(0u32, 0u32), (0, 1), (1, 0), (u32::MAX, u32::MAX - 1)];
        for w in items.windows(2) {
            assert!(w[0].0.pack(w[0].1) < w[1].0.pack(w[1].1));
            let (a, b) = (u64::from(w[0].0) << 32, u64::from(w[1].0) << 32);
            assert!(a.pack(w[0].1) < b.pack(w[1].1));
        }
        assert!(u32::MAX.pack(u32::MAX - 1) < <u32 as TopKey>::NONE);
    }

    proptest! {
        #[test]
        fn rounds_cover_every_key_once_and_end_in_one_part(
            segments in 1u64..5000,
            len in 1u64..(1 << 34),
            k in 1u32..=MAX_K,
            blocks in 1u64..2000,
            wide: bool,
        ) {
            let len = len.max(u64::from(k));
            let key_bytes = if wide { 8 } else { 4 };
            let rounds: Vec<Round> = plan(segments, len, k, key_bytes, blocks).collect();
            prop_assert!(!rounds.is_empty() && rounds.len() <= 10, "{rounds:?}");
            let mut expect_len = len;
            for (i, r) in rounds.iter().enumerate() {
                prop_assert_eq!(r.len, expect_len);
                prop_assert!(r.parts >= 1 && r.chunk >= 1 && r.chunk <= MAX_CHUNK);
                // The parts tile the segment: each starts where the one before ended, none
                // is empty, and the last ends at the segment's end.
                prop_assert_eq!(r.part(0).0, 0);
                prop_assert_eq!(r.part(r.parts - 1).1, r.len);
                prop_assert!(r.part(r.parts - 1).0 < r.len);
                if r.parts > 1 {
                    prop_assert_eq!(r.chunk % u64::from(tile_keys(key_bytes)), 0);
                    prop_assert!(r.candidates(k) < r.len, "each round shrinks: {r:?}");
                }
                if i > 0 && r.parts > 1 {
                    // Rounds over candidates select in registers and shrink fourfold.
                    prop_assert!(selects_in_registers(r));
                    prop_assert!(r.candidates(k) * CANDIDATE_MIN_SHRINK <= r.len + ROW_MAX_KEYS);
                }
                prop_assert_eq!(r.parts == 1, i + 1 == rounds.len());
                expect_len = r.candidates(k);
            }
        }

        #[test]
        fn positions_fit_below_no_key(pos in 0u32..(MAX_CHUNK as u32), key: u64) {
            prop_assert!((key as u32).pack(pos) < <u32 as TopKey>::NONE);
            prop_assert!(key.pack(pos) < <u64 as TopKey>::NONE);
            prop_assert_eq!(u64::unpack(key.pack(pos)), (key, pos));
        }
    }
}
