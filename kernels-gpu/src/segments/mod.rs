//! Pure index math of the segmented sort: many independent rows or segments, each sorted by a
//! bitonic network in one block ([`crate::segments::block`]).
//!
//! A segment of `len` keys is sorted as a *padded row* of 2^p positions (`p =`
//! [`row_log2`]`(len)`), the positions past `len` holding +∞. A block holds a *tile* of 2^t
//! positions ([`tile_log2`]): 2^(t − p) padded rows side by side, each thread a run of 16
//! consecutive positions in registers. The block runs stages 1 ..= p of the mirrored bitonic
//! network of [`crate::bitonic`] over the tile: after stage p every aligned 2^p positions are
//! sorted ascending, so every row is sorted, and no comparator ever pairs two rows.
//!
//! Steps on bits below 4 are register steps, bits 4 ..= 8 warp shuffles, higher bits go through
//! shared memory. Keys and (when indices or values travel) each key's position in its segment
//! sort as one element, compared key first, then position: the result is the stable order, and
//! rows of any length need no more than 2^(p+1) − 1 work slots.
//!
//! Segments padded to 2^9 ..= 2^13 positions ([`RADIX_ROW_LOG2`]) take an LSD radix sort of one
//! segment per block instead ([`crate::segments::radix`]; [`radix_threads`],
//! [`radix_layout`]).
//!
//! Short segments (padded rows of up to 2^[`SHORT_SEGMENTS_MAX_ROW_LOG2`] positions, [`is_short`])
//! take a register sort instead ([`crate::segments::short`]): a block of
//! [`SHORT_SEGMENTS_THREADS`] threads holds a tile of 32 positions per thread, each thread its 32
//! consecutive positions in registers, that is 2^(5 − p) whole rows, or half a row of 64. Every
//! step of stages 1 ..= 5 is then a compare-exchange of two registers; rows of 64 take their
//! top two steps by a shuffle with the neighbouring lane. Shared memory only stages the
//! coalesced loads and stores ([`short_slot`]).
//!
//! ```
//! use kernels_gpu::segments::{row_log2, tile_log2};
//!
//! // Rows of 100 keys are sorted as rows of 128, 16 of them to a block of 2048 positions.
//! assert_eq!(row_log2(100), 7);
//! assert_eq!(tile_log2(7), 11);
//! assert_eq!(1 << (tile_log2(7) - row_log2(100)), 16);
//! ```

pub mod block;
#[cfg(target_arch = "nvptx64")]
mod kernels;
pub mod radix;
pub mod short;

use crate::args::Addr;
use crate::bitonic::ceil_log2;
use crate::tuning::{
    ROWS_TILE_SORT_MIN_LOG2, SEGMENTS_MAX_ROW_LOG2, SEGMENTS_MIN_TILE_LOG2,
    SEGMENTS_RADIX_MIN_ROW_LOG2, SHORT_SEGMENTS_MAX_ROW_LOG2, SHORT_SEGMENTS_RUN_LOG2,
    SHORT_SEGMENTS_THREADS, SMALL_RUN_LOG2,
};

/// Positions each thread holds in registers (log2).
pub const RUN_LOG2: u32 = SMALL_RUN_LOG2;

/// Longest padded row a block sorts (log2).
pub const MAX_ROW_LOG2: u32 = SEGMENTS_MAX_ROW_LOG2;

/// Elements between two padding slots: a bank row's worth (32 banks of 4 bytes) of 4-byte
/// elements, 16 of wider ones. With these, the runs layout (lane t reads position `16t + r`)
/// meets every bank once per wavefront (tested below).
const fn padding_period(element_bytes: u32) -> u32 {
    if element_bytes <= 4 { 32 } else { 16 }
}

/// Log2 of the padded row of a segment of `len` keys (0 for 0 or 1 key).
///
/// ```
/// use kernels_gpu::segments::row_log2;
/// assert_eq!([0, 1, 2, 3, 16, 17].map(row_log2), [0, 0, 1, 2, 4, 5]);
/// ```
pub const fn row_log2(len: u64) -> u32 {
    ceil_log2(len)
}

/// Padded lengths the grouping of segments by padded length keeps a cursor for: 2^0 ..= 2^63
/// positions, every length a segment of `u64` keys can have.
pub const GROUP_LENGTHS: usize = 64;

/// The padded length (log2) whose launch sorts a segment of `len` keys, or `None` for a segment
/// that no launch sorts: an empty one, and one of a single key unless `singles` (an argsort
/// writes its index).
///
/// ```
/// use kernels_gpu::segments::grouped_length;
/// assert_eq!([0, 1, 2, 100].map(|len| grouped_length(len, false)), [None, None, Some(1), Some(7)]);
/// assert_eq!(grouped_length(1, true), Some(0));
/// ```
pub const fn grouped_length(len: u64, singles: bool) -> Option<u32> {
    if len > 1 || (singles && len == 1) {
        Some(row_log2(len))
    } else {
        None
    }
}

/// Log2 of the tile of a block that sorts padded rows of 2^`row_log2` positions: at least
/// [`SEGMENTS_MIN_TILE_LOG2`], so that blocks of short rows still have whole warps and enough
/// work to hide the loads.
pub const fn tile_log2(row_log2: u32) -> u32 {
    if row_log2 > SEGMENTS_MIN_TILE_LOG2 {
        row_log2
    } else {
        SEGMENTS_MIN_TILE_LOG2
    }
}

/// Threads of a block whose tile has 2^`tile_log2` positions.
pub const fn threads(tile_log2: u32) -> u32 {
    1 << (tile_log2 - RUN_LOG2)
}

/// Padded rows (or segments) per block.
pub const fn rows_per_block(row_log2: u32) -> u64 {
    1 << (tile_log2(row_log2) - row_log2)
}

/// The shared-memory slot of tile position `s` for elements of `element_bytes` (4, 8 or 16):
/// one unused slot after every `padding_period` elements.
///
/// ```
/// use kernels_gpu::segments::slot;
/// assert_eq!(slot(31, 4), 31);
/// assert_eq!(slot(32, 4), 33);
/// assert_eq!(slot(16, 8), 17);
/// assert_eq!(slot(16, 16), 17);
/// ```
#[inline(always)]
pub const fn slot(s: u32, element_bytes: u32) -> u32 {
    s + s / padding_period(element_bytes)
}

/// Dynamic shared memory of a block with tiles of 2^`tile_log2` elements of `element_bytes`.
///
/// ```
/// use kernels_gpu::segments::shared_bytes;
/// assert_eq!(shared_bytes(12, 4), (4096 + 128) * 4);
/// ```
pub const fn shared_bytes(tile_log2: u32, element_bytes: u32) -> u32 {
    slot(1 << tile_log2, element_bytes) * element_bytes
}

/// The longest padded row (log2) a block sorts with elements of `element_bytes` on a device
/// that gives a block at most `max_shared` bytes of shared memory; `None` if not even the
/// smallest tile fits.
///
/// ```
/// use kernels_gpu::segments::max_row_log2;
/// assert_eq!(max_row_log2(4, 48 * 1024), Some(13));
/// assert_eq!(max_row_log2(16, 48 * 1024), Some(11));
/// assert_eq!(max_row_log2(8, 48 * 1024), Some(12));
/// assert_eq!(max_row_log2(16, 227 * 1024), Some(13));
/// ```
pub const fn max_row_log2(element_bytes: u32, max_shared: u32) -> Option<u32> {
    let mut p = MAX_ROW_LOG2;
    loop {
        if shared_bytes(tile_log2(p), element_bytes) <= max_shared {
            return Some(p);
        }
        if tile_log2(p) == SEGMENTS_MIN_TILE_LOG2 {
            return None;
        }
        p -= 1;
    }
}

/// Bytes of one element of the block sort: the key alone, or the key and its position in its
/// segment (a `u32`: packed with a 4-byte key into 8 bytes, beside an 8-byte key in 16).
///
/// ```
/// use kernels_gpu::segments::element_bytes;
/// assert_eq!((element_bytes(4, false), element_bytes(4, true), element_bytes(8, true)), (4, 8, 16));
/// ```
pub const fn element_bytes(key_bytes: u32, indexed: bool) -> u32 {
    match (key_bytes, indexed) {
        (k, false) => k,
        (4, true) => 8,
        _ => 16,
    }
}

/// Blocks of a launch over `segments` segments (or rows) padded to 2^`row_log2`.
pub const fn blocks(segments: u64, row_log2: u32) -> u64 {
    segments.div_ceil(rows_per_block(row_log2))
}

/// Whether segments padded to 2^`row_log2` positions take the register sort of short segments
/// rather than the block sort.
///
/// ```
/// use kernels_gpu::segments::{is_short, row_log2};
/// assert!(is_short(row_log2(1)) && is_short(row_log2(33)) && is_short(row_log2(64)));
/// assert!(!is_short(row_log2(65)));
/// ```
pub const fn is_short(row_log2: u32) -> bool {
    row_log2 <= SHORT_SEGMENTS_MAX_ROW_LOG2
}

// The tile sort stops after a stage of its network, not within the sort of each thread's run
// of 2^SMALL_RUN_LOG2 keys; and rows short enough for the register sort stay there.
const _: () = assert!(
    ROWS_TILE_SORT_MIN_LOG2 >= SMALL_RUN_LOG2
        && ROWS_TILE_SORT_MIN_LOG2 > SHORT_SEGMENTS_MAX_ROW_LOG2
);

/// The stages of the bitonic tile sort that sort rows of `len` keys alone, if they take it: on
/// a device whose tile sort of keys of their width has tiles of 2^`tile_log2` keys
/// ([`window_log2`](crate::tuning::window_log2)), rows whose length is a power of two 2^p
/// from 2^[`ROWS_TILE_SORT_MIN_LOG2`] up to the tile, p stages. The network's first p stages
/// leave every aligned 2^p keys ascending, so the tile sort run over the whole matrix as one
/// array and stopped after stage p sorts every row, in one launch, faster than the block sort
/// (see [`ROWS_TILE_SORT_MIN_LOG2`]). Shorter rows take the register sort, longer ones the
/// window passes of one row's network; argsorts, pairs and other lengths the block sort.
///
/// ```
/// use kernels_gpu::segments::row_tile_stages;
/// assert_eq!(row_tile_stages(2048, 13), Some(11));
/// assert_eq!(row_tile_stages(8192, 13), Some(13));
/// assert_eq!(row_tile_stages(16384, 13), None); // longer than the tile: window passes
/// assert_eq!(row_tile_stages(64, 13), None); // the register sort of short segments
/// assert_eq!(row_tile_stages(1000, 13), None); // not a power of two: the block sort
/// assert_eq!(row_tile_stages(1024, 9), None); // 8-byte keys' compact tiles of 2^9
/// ```
pub const fn row_tile_stages(len: u64, tile_log2: u32) -> Option<u32> {
    let p = row_log2(len);
    if len.is_power_of_two() && p >= ROWS_TILE_SORT_MIN_LOG2 && p <= tile_log2 {
        Some(p)
    } else {
        None
    }
}

/// Positions of a block's tile in the register sort of short segments: 32 per thread.
pub const SHORT_TILE: u32 = SHORT_SEGMENTS_THREADS << SHORT_SEGMENTS_RUN_LOG2;

// Whole warps (rows of 64 shuffle with the neighbouring lane), a multiple of every short row
// (each thread's iterations then stay at one position of their rows), and short rows that the
// block sort could take as well.
const _: () = assert!(
    SHORT_SEGMENTS_THREADS % 32 == 0
        && SHORT_SEGMENTS_THREADS.is_multiple_of(1 << SHORT_SEGMENTS_MAX_ROW_LOG2)
        && SHORT_SEGMENTS_MAX_ROW_LOG2 <= MAX_ROW_LOG2
);

/// Padded rows (or segments) per block of the register sort of short segments.
///
/// ```
/// use kernels_gpu::segments::short_rows_per_block;
/// // Two warps of 32 positions per thread: 64 rows of 32, 128 of 16, 32 of 64.
/// assert_eq!([5, 4, 6].map(short_rows_per_block), [64, 128, 32]);
/// ```
pub const fn short_rows_per_block(row_log2: u32) -> u64 {
    (SHORT_TILE >> row_log2) as u64
}

/// Blocks of a launch of the register sort of short segments over `segments` segments (or rows)
/// padded to 2^`row_log2` ([`is_short`]).
pub const fn short_blocks(segments: u64, row_log2: u32) -> u64 {
    segments.div_ceil(short_rows_per_block(row_log2))
}

/// The shared-memory slot of tile position `s` in the register sort of short segments: one
/// unused slot after every 32 elements, so that the 32 lanes of a warp reading their runs
/// (thread t position 32t + r) meet every bank once per wavefront for elements of 4, 8 and 16
/// bytes (tested below), and the coalesced loads and stores (thread t position i·threads + t)
/// too.
///
/// ```
/// use kernels_gpu::segments::short_slot;
/// assert_eq!([0, 31, 32, 64].map(short_slot), [0, 31, 33, 66]);
/// ```
#[inline(always)]
pub const fn short_slot(s: u32) -> u32 {
    s + (s >> SHORT_SEGMENTS_RUN_LOG2)
}

/// Dynamic shared memory of a block of the register sort of short segments with elements of
/// `element_bytes` ([`element_bytes`]).
///
/// ```
/// use kernels_gpu::segments::short_shared_bytes;
/// assert_eq!(short_shared_bytes(4), 2112 * 4);
/// assert!(short_shared_bytes(16) <= 48 * 1024);
/// ```
pub const fn short_shared_bytes(element_bytes: u32) -> u32 {
    short_slot(SHORT_TILE) * element_bytes
}

/// log2 of the keys each thread holds in the radix sort of a segment
/// ([`crate::segments::radix`]).
pub const RADIX_ITEMS_LOG2: u32 = 4;

/// Keys each thread holds in the radix sort of a segment.
pub const RADIX_ITEMS: u32 = 1 << RADIX_ITEMS_LOG2;

/// Padded lengths (log2) the radix sort of a segment takes: from whole warps (512 keys, 32
/// threads) to the block sort's longest rows (8192 keys, 512 threads).
pub const RADIX_ROW_LOG2: core::ops::RangeInclusive<u32> =
    SEGMENTS_RADIX_MIN_ROW_LOG2..=MAX_ROW_LOG2;

/// Threads of a block of the radix sort of one segment padded to 2^`row_log2` keys
/// ([`RADIX_ROW_LOG2`]): [`RADIX_ITEMS`] keys each.
///
/// ```
/// use kernels_gpu::segments::radix_threads;
/// assert_eq!([9, 12, 13].map(radix_threads), [32, 256, 512]);
/// ```
pub const fn radix_threads(row_log2: u32) -> u32 {
    1 << (row_log2 - RADIX_ITEMS_LOG2)
}

/// Byte offsets of the parts of a block's shared memory in the radix sort of a segment. The
/// keys, in their order after a pass, start at 0; after the last pass the same bytes hold the
/// values' words, one word of every value at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadixLayout {
    /// The keys' positions in their segment, as `u16`, in the same order (indexed sorts).
    pub positions: u32,
    /// Per warp, a counter per digit.
    pub counts: u32,
    /// The block scan's word per warp.
    pub sums: u32,
    /// All of it.
    pub bytes: u32,
}

/// The shared memory of a block holding `tile` keys of `key_bytes` (with their positions where
/// `indexed`) in `warps` warps.
///
/// ```
/// use kernels_gpu::segments::radix_layout;
/// let l = radix_layout(4096, 8, true, 8);
/// assert_eq!((l.positions, l.counts, l.sums, l.bytes), (32768, 40960, 49152, 49184));
/// assert_eq!(radix_layout(4096, 4, false, 8).bytes, 16384 + 8192 + 32);
/// ```
pub const fn radix_layout(tile: u32, key_bytes: u32, indexed: bool, warps: u32) -> RadixLayout {
    let positions = tile * key_bytes;
    let counts = positions + if indexed { tile * 2 } else { 0 };
    let sums = counts + warps * crate::radix::RADIX * 4;
    RadixLayout {
        positions,
        counts,
        sums,
        bytes: sums + warps * 4,
    }
}

/// Dynamic shared memory of a block of the radix sort of one segment padded to 2^`row_log2`.
pub const fn radix_shared_bytes(row_log2: u32, key_bytes: u32, indexed: bool) -> u32 {
    let threads = radix_threads(row_log2);
    radix_layout(threads * RADIX_ITEMS, key_bytes, indexed, threads / 32).bytes
}

crate::args::kernel_args! { $
    /// The argument of the block sorts of segments (`segments_sort_*`, `segments_indexed_*`):
    /// the segments of one launch and where their results go.
    pub struct SortArgs, entry sort_entry {
        /// The keys, each segment's sorted in place.
        pub keys: Addr,
        /// Values permuted with the keys, in place (the kernel's value type); 0 for none, and
        /// unused by the kernels of keys alone.
        pub values: Addr,
        /// Receives each segment's sorting permutation: per key, a `u32` position in its
        /// segment; 0 for none, and unused by the kernels of keys alone.
        pub indices: Addr,
        /// Segments in the launch: rows, or entries of `list`.
        pub count: u64,
        /// Without `offsets`: every segment is a row of this many keys, row `i` at key
        /// `i·row_len`.
        pub row_len: u64,
        /// The segments' `u64` offsets: segment `i` is keys `offsets[i] .. offsets[i + 1]`; 0
        /// for rows.
        pub offsets: Addr,
        /// The launch's `count` segment ids (`u32`): entry `e` is segment `list[e]`; 0: entry
        /// `e` is segment (or row) `e`.
        pub list: Addr,
        /// Every segment of the launch has at most 2^`row_log2` keys: its padded length.
        pub row_log2: u32,
        /// The key map applied as keys are loaded, undone as they are stored.
        pub map: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the register sorts of short segments (`segments_short_*`): as
    /// [`SortArgs`], with values of any width moved as 4-byte words.
    pub struct ShortArgs, entry short_entry {
        /// As in [`SortArgs`].
        pub keys: Addr,
        /// Values permuted with the keys, in place, `value_words` `u32` words each; 0 for
        /// none, and unused by the kernels of keys alone.
        pub values: Addr,
        /// As in [`SortArgs`].
        pub indices: Addr,
        /// As in [`SortArgs`].
        pub count: u64,
        /// As in [`SortArgs`].
        pub row_len: u64,
        /// As in [`SortArgs`].
        pub offsets: Addr,
        /// As in [`SortArgs`].
        pub list: Addr,
        /// As in [`SortArgs`]; at most [`SHORT_SEGMENTS_MAX_ROW_LOG2`].
        pub row_log2: u32,
        /// As in [`SortArgs`].
        pub map: u32,
        /// 4-byte words of each value (0 without values).
        pub value_words: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the radix sorts of one segment per block (`segments_radix_*`): as
    /// [`SortArgs`], with the sorted keys written where `sorted_keys` says and values of any
    /// width moved as 4-byte words.
    pub struct RadixArgs, entry radix_entry {
        /// The keys, read.
        pub keys: Addr,
        /// Where the sorted keys go, each segment at the same places as in `keys`: `keys`
        /// itself to sort in place; 0: not written (argsorts that leave the keys as they are).
        pub sorted_keys: Addr,
        /// As in [`ShortArgs`].
        pub values: Addr,
        /// As in [`SortArgs`].
        pub indices: Addr,
        /// As in [`SortArgs`].
        pub count: u64,
        /// As in [`SortArgs`].
        pub row_len: u64,
        /// As in [`SortArgs`].
        pub offsets: Addr,
        /// As in [`SortArgs`].
        pub list: Addr,
        /// As in [`SortArgs`]; one of [`RADIX_ROW_LOG2`].
        pub row_log2: u32,
        /// As in [`SortArgs`].
        pub map: u32,
        /// As in [`ShortArgs`].
        pub value_words: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the grouping of segments by padded length (`segments_group`).
    pub struct GroupArgs, entry group_entry {
        /// The `segments + 1` `u64` offsets of the segments, non-decreasing; read.
        pub offsets: Addr,
        /// Segments in all, below 2^32.
        pub segments: u64,
        /// Not 0: segments of one key are listed too (an argsort writes their index).
        pub singles: u32,
        /// [`GROUP_LENGTHS`] `u32` cursors, one per padded length, each the first free entry of
        /// its length in `ids`; advanced as the segments take their entries.
        pub cursors: Addr,
        /// The `u32` ids of the listed segments, grouped by padded length; written.
        pub ids: Addr,
    }
}

crate::args::kernel_args! { $
    /// The argument of the packing of long segments into padded rows (`segments_pack_*`) and of
    /// the unpacking of sorted rows of keys alone (`segments_unpack_keys_*`): the segments of
    /// one launch, as [`SortArgs`] describes them, and their padded rows.
    pub struct PackArgs, entry pack_entry {
        /// The segments' keys: read by the packing, written by the unpacking.
        pub keys: Addr,
        /// The padded rows, `count·2^row_log2` items: written by the packing, read (sorted row
        /// by row) by the unpacking. Items are `u64`s of a 4-byte key above its position
        /// (`segments_pack_u32`) or the keys alone.
        pub packed: Addr,
        /// As in [`SortArgs`].
        pub count: u64,
        /// As in [`SortArgs`].
        pub row_len: u64,
        /// As in [`SortArgs`].
        pub offsets: Addr,
        /// As in [`SortArgs`].
        pub list: Addr,
        /// As in [`SortArgs`]: every row has 2^`row_log2` positions.
        pub row_log2: u32,
        /// The key map applied as keys are packed, undone as they are unpacked.
        pub map: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the unpacking of sorted padded rows of 4-byte keys with their positions
    /// (`segments_unpack_*`), which puts the keys back and writes the indices or moves the
    /// values.
    pub struct UnpackArgs, entry unpack_entry {
        /// The sorted padded rows of `u64` items ([`PackArgs`]); read.
        pub packed: Addr,
        /// The segments' keys, written.
        pub keys: Addr,
        /// As in [`SortArgs`].
        pub indices: Addr,
        /// Receives each key's value (the kernel's value type), read from `values_in`; 0 for
        /// none.
        pub values: Addr,
        /// The segments' values as they were before the sort, apart from `values`; unused
        /// where `values` is 0.
        pub values_in: Addr,
        /// As in [`SortArgs`].
        pub count: u64,
        /// As in [`SortArgs`].
        pub row_len: u64,
        /// As in [`SortArgs`].
        pub offsets: Addr,
        /// As in [`SortArgs`].
        pub list: Addr,
        /// As in [`PackArgs`].
        pub row_log2: u32,
        /// The key map undone as keys are stored.
        pub map: u32,
    }
}

/// The long segments of one sort laid end to end, for the radix sorts that sort them all at once
/// (8-byte keys with their positions: argsorts and pairs): *compact* position `c` of the
/// concatenation is position `c − start` of the segment whose compact positions `start ..` hold
/// it. Rows of `row_len` keys are their own concatenation; other segments find theirs in two
/// tables.
///
/// ```
/// use kernels_gpu::segments::LongSegments;
///
/// // Segments of 9000 and 10000 keys at keys 100 and 20000.
/// let long = LongSegments { row_len: 0, starts: &[0, 9000, 19_000], begins: &[100, 20_000] };
/// assert_eq!(long.locate(8999), (0, 0, 100));
/// assert_eq!(long.locate(9000), (1, 9000, 20_000));
/// let rows = LongSegments { row_len: 10_000, starts: &[], begins: &[] };
/// assert_eq!(rows.locate(25_000), (2, 20_000, 20_000));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LongSegments<'a> {
    /// Every segment is a row of this many keys, row `k` at key `k·row_len` and at compact
    /// position `k·row_len`; 0: the tables say where the segments are.
    pub row_len: u64,
    /// Compact position of each segment's first key, increasing, and the number of keys of
    /// all of them last (one entry more than segments); empty for rows.
    pub starts: &'a [u64],
    /// Index of each segment's first key in the keys; empty for rows.
    pub begins: &'a [u64],
}

impl LongSegments<'_> {
    /// `(segment, its first compact position, the index of its first key)` of compact position
    /// `c`, below the number of keys of all segments.
    #[inline(always)]
    pub fn locate(&self, c: u64) -> (u64, u64, u64) {
        if let Some(k) = c.checked_div(self.row_len) {
            let start = k * self.row_len;
            return (k, start, start);
        }
        // The last segment that starts at or before c (segments are never empty).
        let k = self.starts.partition_point(|&s| s <= c) - 1;
        (k as u64, self.starts[k], self.begins[k])
    }

    /// The index in the keys of compact position `c`.
    #[inline(always)]
    pub fn key_index(&self, c: u64) -> u64 {
        let (_, start, begin) = self.locate(c);
        begin + (c - start)
    }
}

crate::args::kernel_args! { $
    /// The argument of the first step of the sort of long segments by two radix sorts
    /// (`segments_long_collect_*`): each compact position's key and the position itself.
    pub struct LongCollectArgs, entry long_collect_entry {
        /// The keys the segments lie in; read.
        pub keys: Addr,
        /// Receives each compact position's key, `all` of them.
        pub sorted: Addr,
        /// Receives each compact position, `all` `u32`s.
        pub from: Addr,
        /// Keys of all the segments, at most 2^32.
        pub all: u64,
        /// As [`LongSegments::row_len`].
        pub row_len: u64,
        /// [`LongSegments::starts`]: `count + 1` `u64`s; unused for rows.
        pub starts: Addr,
        /// [`LongSegments::begins`]: `count` `u64`s; unused for rows.
        pub begins: Addr,
        /// Segments in the tables.
        pub count: u64,
    }
}

crate::args::kernel_args! { $
    /// The argument of the second step (`segments_long_ids`): the segment of each element of
    /// the order by key.
    pub struct LongIdsArgs, entry long_ids_entry {
        /// The compact positions in the order by key, `all` `u32`s; read.
        pub from: Addr,
        /// Receives the segment of each, `all` `u32`s.
        pub ids: Addr,
        /// As in [`LongCollectArgs`].
        pub all: u64,
        /// As in [`LongCollectArgs`].
        pub row_len: u64,
        /// As in [`LongCollectArgs`].
        pub starts: Addr,
        /// As in [`LongCollectArgs`].
        pub begins: Addr,
        /// As in [`LongCollectArgs`].
        pub count: u64,
    }
}

crate::args::kernel_args! { $
    /// The argument of the third step (`segments_long_gather_*`): each element of the order by
    /// (segment, key, position) gathered, its position in its segment written.
    pub struct LongGatherArgs, entry long_gather_entry {
        /// The compact positions in the order by (segment, key, position), `all` `u32`s; read.
        pub from: Addr,
        /// The keys the segments lie in; read.
        pub keys: Addr,
        /// Receives each segment's sorting permutation (`u32` positions in the segment, at the
        /// segment's places); 0 for none.
        pub indices: Addr,
        /// The values of the segments' keys, `words` `u32` words each; read; 0 for none.
        pub values: Addr,
        /// Receives the keys in that order, `all` of them, apart from `keys`; 0 for none.
        pub placed: Addr,
        /// Receives the values in that order, `all·words` words, apart from `values`; unused
        /// where `values` is 0.
        pub gathered: Addr,
        /// 4-byte words of each value.
        pub words: u32,
        /// As in [`LongCollectArgs`].
        pub all: u64,
        /// As in [`LongCollectArgs`].
        pub row_len: u64,
        /// As in [`LongCollectArgs`].
        pub starts: Addr,
        /// As in [`LongCollectArgs`].
        pub begins: Addr,
        /// As in [`LongCollectArgs`].
        pub count: u64,
    }
}

crate::args::kernel_args! { $
    /// The argument of the last step (`segments_long_scatter_*`): the keys and values gathered
    /// by [`LongGatherArgs`] put in their places in the segments.
    pub struct LongScatterArgs, entry long_scatter_entry {
        /// The gathered keys, `all` of them; read; 0: the keys are not written.
        pub placed: Addr,
        /// The gathered values, `all·words` words; read where `values` is not 0.
        pub gathered: Addr,
        /// The keys the segments lie in; written unless `placed` is 0.
        pub keys: Addr,
        /// The segments' values, `words` words each; written; 0 for none.
        pub values: Addr,
        /// As in [`LongGatherArgs`].
        pub words: u32,
        /// As in [`LongCollectArgs`].
        pub all: u64,
        /// As in [`LongCollectArgs`].
        pub row_len: u64,
        /// As in [`LongCollectArgs`].
        pub starts: Addr,
        /// As in [`LongCollectArgs`].
        pub begins: Addr,
        /// As in [`LongCollectArgs`].
        pub count: u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuning::MIN_SHARED_BYTES;

    #[test]
    fn a_tile_holds_whole_rows_and_whole_warps() {
        for p in 0..=MAX_ROW_LOG2 {
            let t = tile_log2(p);
            assert!(t >= p && t <= MAX_ROW_LOG2);
            assert_eq!(rows_per_block(p) << p, 1 << t);
            assert_eq!(threads(t) % 32, 0, "shuffles need whole warps");
        }
    }

    #[test]
    fn the_tile_sort_takes_the_rows_of_a_power_of_two_between_the_register_sort_and_the_tile() {
        use crate::tuning::{COMPACT_WINDOW_LOG2, WINDOW_LOG2};
        for tile in [COMPACT_WINDOW_LOG2, WINDOW_LOG2] {
            let mut taken = Vec::new();
            for len in 0..=1u64 << 15 {
                if let Some(stages) = row_tile_stages(len, tile) {
                    assert_eq!(1 << stages, len);
                    assert!(!is_short(stages) && stages <= tile && stages >= SMALL_RUN_LOG2);
                    taken.push(stages);
                }
            }
            // Every power of two past the register sort, up to the tile, once.
            let want: Vec<u32> = (SHORT_SEGMENTS_MAX_ROW_LOG2 + 1..=tile).collect();
            assert_eq!(taken, want, "tiles of 2^{tile}");
        }
    }

    #[test]
    fn runs_read_shared_memory_without_bank_conflicts() {
        for bytes in [4u32, 8, 16] {
            let words = bytes / 4;
            for r in 0..16 {
                // A warp's lanes in one wavefront: 128 bytes at a time.
                let lanes_per_wavefront = 32 / words;
                for wave in 0..words {
                    let mut banks = std::collections::HashSet::new();
                    for lane in wave * lanes_per_wavefront..(wave + 1) * lanes_per_wavefront {
                        let first = slot(lane * 16 + r, bytes) * words;
                        for w in 0..words {
                            assert!(banks.insert((first + w) % 32), "{bytes} B, r {r}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_element_fits_some_device() {
        for bytes in [4, 8, 16] {
            let p = max_row_log2(bytes, MIN_SHARED_BYTES).unwrap();
            assert!(shared_bytes(tile_log2(p), bytes) <= MIN_SHARED_BYTES);
            assert!(p >= 11);
        }
        assert_eq!(max_row_log2(16, 1024), None);
    }

    #[test]
    fn slots_are_distinct_and_within_the_shared_memory() {
        for bytes in [4, 8, 16] {
            let t = 12;
            let mut seen = vec![false; (shared_bytes(t, bytes) / bytes) as usize];
            for s in 0..1 << t {
                let at = slot(s, bytes) as usize;
                assert!(!seen[at]);
                seen[at] = true;
            }
        }
    }

    #[test]
    fn short_tiles_fit_every_device_without_asking() {
        for bytes in [4, 8, 16] {
            assert!(short_shared_bytes(bytes) <= 48 * 1024);
        }
        assert!((0..=MAX_ROW_LOG2).all(|p| is_short(p) == (p <= SHORT_SEGMENTS_MAX_ROW_LOG2)));
    }

    /// The banks of the 4-byte words that a warp's lanes `lanes` touch reading element slots
    /// `slot_of(lane)` of `bytes`, wavefront by wavefront (128 bytes each): none twice.
    fn conflict_free(bytes: u32, slot_of: impl Fn(u32) -> u32) -> bool {
        let words = bytes / 4;
        let per_wavefront = 32 / words;
        (0..words).all(|wave| {
            let mut banks = std::collections::HashSet::new();
            (wave * per_wavefront..(wave + 1) * per_wavefront).all(|lane| {
                let first = slot_of(lane) * words;
                (0..words).all(|w| banks.insert((first + w) % 32))
            })
        })
    }

    #[test]
    fn short_runs_and_coalesced_phases_meet_every_bank_once() {
        for bytes in [4u32, 8, 16] {
            for warp in 0..SHORT_SEGMENTS_THREADS / 32 {
                for r in 0..32 {
                    // Runs: lane t holds positions 32t + r.
                    let run = |lane| short_slot((warp * 32 + lane) * 32 + r);
                    assert!(conflict_free(bytes, run), "{bytes} B, runs, r {r}");
                    // Loads and stores: thread t takes position i·threads + t.
                    let phase = |lane| short_slot(r * SHORT_SEGMENTS_THREADS + warp * 32 + lane);
                    assert!(conflict_free(bytes, phase), "{bytes} B, phases, i {r}");
                }
            }
        }
    }

    proptest::proptest! {
        /// Over a launch of `count` segments padded to 2^`p`: the load and store positions of
        /// the threads (iteration i, thread t: tile position i·threads + t) and their runs (thread t:
        /// 32t ..= 32t + 31) each cover every position of every block's tile once; a run holds
        /// whole rows, or for rows of 64 half of one, the other half in the neighbouring lane;
        /// every (segment, position) of the launch lies in exactly one block's tile.
        #[test]
        fn short_launches_cover_every_position_once(count in 0u64..2000, p in 0u32..=SHORT_SEGMENTS_MAX_ROW_LOG2) {
            let threads = SHORT_SEGMENTS_THREADS;
            let mut phases = vec![0u8; SHORT_TILE as usize];
            for i in 0..32 {
                for t in 0..threads {
                    phases[(i * threads + t) as usize] += 1;
                }
            }
            proptest::prop_assert!(phases.iter().all(|&c| c == 1));
            for t in 0..threads {
                let (lo, hi) = (32 * t, 32 * t + 31);
                if p <= SHORT_SEGMENTS_RUN_LOG2 {
                    proptest::prop_assert_eq!(lo >> p << p, lo);
                    proptest::prop_assert_eq!((hi + 1) >> p << p, hi + 1);
                } else {
                    proptest::prop_assert_eq!(lo >> p, (32 * (t ^ 1)) >> p);
                    proptest::prop_assert_eq!(t / 32, (t ^ 1) / 32);
                }
            }
            let rows = short_rows_per_block(p);
            proptest::prop_assert_eq!(rows << p, u64::from(SHORT_TILE));
            let mut seen = vec![0u8; (count << p) as usize];
            for b in 0..short_blocks(count, p) {
                for s in 0..SHORT_TILE {
                    let (e, j) = (b * rows + u64::from(s >> p), u64::from(s) & ((1 << p) - 1));
                    if e < count {
                        seen[((e << p) + j) as usize] += 1;
                    }
                }
            }
            proptest::prop_assert!(seen.iter().all(|&c| c == 1));
            proptest::prop_assert!(short_blocks(count, p) * rows < count + rows);
        }
    }
}
