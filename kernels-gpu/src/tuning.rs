//! Tuning constants: the one place for tile sizes and launch shapes. The kernels compile them
//! in; the host reads the same values for its grid math, so the two cannot disagree.
//!
//! ```
//! use kernels_gpu::tuning::*;
//!
//! assert_eq!(TILE_KEYS, 8192); // 512 threads × 16 keys
//! // A tile of 8-byte keys fits in an H100's or H200's 227 KB of shared memory per block:
//! assert_eq!(window_shared_bytes(8), 67584);
//! ```

/// Keys per tile of the bitonic sort above the small sort (2^[`WINDOW_LOG2`]): its tile sort
/// runs the stages up to this size in one launch.
pub const TILE_KEYS: u32 = 1 << WINDOW_LOG2;

/// Shared-memory words per tile: one padding word after every 32 keys, so that a warp reading
/// 32 runs of [`SMALL_RUN`] keys hits 32 different banks.
///
/// ```
/// assert_eq!(kernels_gpu::tuning::tile_shared_words(64), 66);
/// ```
pub const fn tile_shared_words(keys: u32) -> u32 {
    keys + keys / 32
}

/// log2 of the keys each thread of the one-launch small sort keeps in registers
/// ([`crate::bitonic::small`]).
pub const SMALL_RUN_LOG2: u32 = 4;
/// Keys each thread of the small sort keeps in registers.
pub const SMALL_RUN: u32 = 1 << SMALL_RUN_LOG2;
/// log2 of the fewest keys the small sort handles per block: one warp's runs (32 × 16). Shorter
/// inputs are padded with +∞ in registers; warp shuffles then always have 32 lanes.
pub const SMALL_MIN_LOG2: u32 = SMALL_RUN_LOG2 + 5;
/// log2 of the most keys one block of the small sort holds (2^12 = 256 threads × 16 keys): a
/// sort of 2^k keys runs on 2^(k − 12) blocks, one multiprocessor each. At most
/// `SMALL_RUN_LOG2 + 9` (every bit of a block's index is then a register or lane bit in one of
/// its two layouts), and large enough that every stage above the block spans two windows at
/// most ([`crate::bitonic::small::SmallPlan::new`]): for 2^16 keys, at least 10.
pub const SMALL_TILE_LOG2: u32 = 12;
/// log2 of the keys each thread of the tiny sort holds ([`crate::bitonic::block::tiny`]).
pub const TINY_RUN_LOG2: u32 = 2;
/// Keys each thread of the tiny sort holds.
pub const TINY_RUN: u32 = 1 << TINY_RUN_LOG2;
/// log2 of the tiny sort's smallest network: one warp of [`TINY_RUN`] keys each.
pub const TINY_MIN_LOG2: u32 = TINY_RUN_LOG2 + 5;
/// log2 of the most keys the tiny sort sorts, in one block; larger sorts up to
/// [`SMALL_SORT_MAX_KEYS`] take the one-launch small sort.
pub const TINY_MAX_LOG2: u32 = 12;
/// Inputs of at most this many keys are sorted by the tiny sort (`bitonic_tiny_*`).
pub const TINY_SORT_MAX_KEYS: u64 = 1 << TINY_MAX_LOG2;

/// The most keys of `key_bytes` bytes that the host gives the tiny sort. 8-byte keys stop one
/// size earlier: at 2^12 the small sort is the faster for them, the tiny sort's 32 warps each
/// shuffling twice as many words (docs/decisions.md, "Tiny sort").
///
/// ```
/// use kernels_gpu::tuning::tiny_sort_max_keys;
/// assert_eq!((tiny_sort_max_keys(4), tiny_sort_max_keys(8)), (4096, 2048));
/// ```
pub const fn tiny_sort_max_keys(key_bytes: u32) -> u64 {
    if key_bytes > 4 {
        TINY_SORT_MAX_KEYS / 2
    } else {
        TINY_SORT_MAX_KEYS
    }
}

/// log2 of the tiny sort's network for `n` keys ([`crate::bitonic::block::tiny`]): at least [`TINY_MIN_LOG2`] (a whole warp).
///
/// ```
/// use kernels_gpu::tuning::{TINY_MIN_LOG2, network_log2};
/// assert_eq!(network_log2(2), TINY_MIN_LOG2);
/// assert_eq!(network_log2(1000), 10);
/// assert_eq!(network_log2(4096), 12);
/// ```
pub const fn network_log2(n: u32) -> u32 {
    let log2 = n.next_power_of_two().trailing_zeros();
    if log2 < TINY_MIN_LOG2 {
        TINY_MIN_LOG2
    } else {
        log2
    }
}

/// Dynamic shared memory of the tiny sort of `n` keys of `key_bytes` bytes: two buffers of the
/// network's keys, which its exchanges between warps take turns at.
///
/// ```
/// assert_eq!(kernels_gpu::tuning::tiny_shared_bytes(3000, 8), 2 * 4096 * 8);
/// ```
pub const fn tiny_shared_bytes(n: u32, key_bytes: u32) -> u32 {
    2 * (1 << network_log2(n)) * key_bytes
}

/// log2 of the largest network the small sort handles (2^16 keys: 16 blocks); it sizes the
/// sorter's workspace (2^16 × 8 bytes).
pub const SMALL_MAX_LOG2: u32 = 16;
/// Inputs of at most this many keys are sorted by the one-launch small sort
/// (`bitonic_small_*`), longer ones by the tile sort and its passes. Set it to 0 to sort every
/// length with the multi-launch path (for comparisons).
pub const SMALL_SORT_MAX_KEYS: u64 = 1 << SMALL_MAX_LOG2;

/// Dynamic shared memory of a small-sort block, in bytes, for blocks of 2^`tile_log2` keys of
/// `key_bytes` bytes: one padded tile ([`tile_shared_words`]), which its transposes go through.
///
/// ```
/// use kernels_gpu::tuning::small_shared_bytes;
/// assert_eq!(small_shared_bytes(12, 8), (4096 + 128) * 8);
/// ```
pub const fn small_shared_bytes(tile_log2: u32, key_bytes: u32) -> u32 {
    tile_shared_words(1 << tile_log2) * key_bytes
}

/// log2 of the keys per block of the window passes (L, [`crate::bitonic::window`]): 512 threads × 16
/// keys in registers. Every local bit is then a register or lane bit in one of the block's two
/// layouts (at most `SMALL_RUN_LOG2 + 9`), and two blocks fit a multiprocessor (64 registers
/// per thread, 2 × 33 KiB of shared memory for 4-byte keys). 2^25 keys take 23 launches, one
/// bit less (2^12) would take 27.
pub const WINDOW_LOG2: u32 = 13;
/// Global bits free in every window: 2^5 consecutive keys are a warp's 32 lanes in the
/// columns layout, so every load and store of a window is coalesced (128 bytes of 4-byte keys).
pub const WINDOW_PASSENGERS: u32 = 5;
/// Threads per block of the window passes and their tile sort.
pub const WINDOW_THREADS: u32 = 1 << (WINDOW_LOG2 - SMALL_RUN_LOG2);

/// Dynamic shared memory of a window-pass block (and of their tile sort), in bytes: one padded
/// tile of 2^[`WINDOW_LOG2`] keys ([`small_shared_bytes`]).
///
/// ```
/// assert_eq!(kernels_gpu::tuning::window_shared_bytes(4), (8192 + 256) * 4);
/// ```
pub const fn window_shared_bytes(key_bytes: u32) -> u32 {
    small_shared_bytes(WINDOW_LOG2, key_bytes)
}

/// log2 of the keys per block of the compact window passes of 8-byte keys
/// (`bitonic_window_compact_u64`, `bitonic_window_wide_compact_u64` and their tile sort
/// `bitonic_window_tiles_compact_u64`), which devices run where the 2^[`WINDOW_LOG2`]-key tile
/// of 8-byte keys (67,584 bytes) does not fit: the T4's (sm_75) 64 KiB ([`window_log2`]). One
/// warp × 16 keys (4,224 bytes): besides 13, the one block size the window engine's layouts
/// and programs are built and tested for ([`crate::bitonic::window::WindowPass::block_window`]). More
/// passes than with 2^13 keys, but no scratch memory: the bitonic sort stays in place.
pub const COMPACT_WINDOW_LOG2: u32 = 9;

/// log2 of the keys per block of the bitonic window passes (and their tile sort) of keys of
/// `key_bytes` on a device whose blocks may have `max_shared` bytes of dynamic shared memory:
/// [`WINDOW_LOG2`] where its tile fits, else [`COMPACT_WINDOW_LOG2`] (8-byte keys on a
/// device of less than 66 KiB per block: sm_75).
///
/// ```
/// use kernels_gpu::tuning::{COMPACT_WINDOW_LOG2, WINDOW_LOG2, window_log2};
/// assert_eq!(window_log2(8, 227 * 1024), WINDOW_LOG2); // H100, H200
/// assert_eq!(window_log2(8, 96 * 1024), WINDOW_LOG2); // V100
/// assert_eq!(window_log2(8, 64 * 1024), COMPACT_WINDOW_LOG2); // T4
/// assert_eq!(window_log2(4, 64 * 1024), WINDOW_LOG2);
/// ```
pub const fn window_log2(key_bytes: u32, max_shared: u32) -> u32 {
    if window_shared_bytes(key_bytes) <= max_shared {
        WINDOW_LOG2
    } else {
        COMPACT_WINDOW_LOG2
    }
}

/// Threads per block of the window passes of 2^`log2` keys ([`window_log2`]): 16 keys each.
pub const fn window_threads(log2: u32) -> u32 {
    1 << (log2 - SMALL_RUN_LOG2)
}

/// Smallest tile (log2 positions) of a block of the segmented sort ([`crate::segments`]): blocks
/// of short rows hold 2^11 positions (128 threads), several rows each.
pub const SEGMENTS_MIN_TILE_LOG2: u32 = 11;

/// Register cap of the segmented sort's kernels: their largest blocks (rows of 2^13 keys)
/// have 512 threads, which the 65536 registers of a block allow 128 each.
pub const SEGMENTS_MAX_REGISTERS: u32 = 65536 / (1 << (13 - SMALL_RUN_LOG2));

/// log2 of the positions each thread of the segmented sort's register sort of short segments
/// holds ([`crate::segments::short`]): 32, one padded row of 32 or several shorter ones.
pub const SHORT_SEGMENTS_RUN_LOG2: u32 = 5;

/// log2 of the longest padded row that the register sort of short segments takes: rows of up to
/// 64 keys, two threads to a row of 33 ..= 64 (their two top steps by warp shuffles). Longer
/// rows take the block sort, whose steps above a warp go through shared memory.
pub const SHORT_SEGMENTS_MAX_ROW_LOG2: u32 = 6;

/// log2 of the shortest rows that the bitonic tile sort takes, stopped after their stage p
/// ([`crate::segments::row_tile_stages`]: rows of keys alone whose length is a power of two,
/// up to the tile): every such row longer than the register sort of short segments takes.
/// Stopped after stage p, the tile sort does a part of what it does for a whole sort, with each
/// thread's loads issued together, few registers (four blocks of 512 threads per multiprocessor
/// for 4-byte keys) and the steps above a warp in registers after a transpose, where the block
/// sort runs the same network with fewer warps and each step above a warp through shared
/// memory: faster at every such row length and key width measured (docs/decisions.md, "Rows of
/// keys alone by the tile sort").
pub const ROWS_TILE_SORT_MIN_LOG2: u32 = SHORT_SEGMENTS_MAX_ROW_LOG2 + 1;

/// log2 of the tiles of the tile sort of rows of 4-byte keys alone up to this length
/// (`bitonic_row_tiles_u32`; longer rows take the window passes' tile sort). Blocks of 256
/// threads, whose columns hold local bits 8 ..= 11 right above the quads' 4 ..= 7, so every
/// stage above 5 runs its steps on bits 4 and up in registers but one (bit 8 in stage 9), where
/// tiles of 2^13 take three lane steps more per key and barriers over twice the warps; the
/// smaller blocks also let twice as many share a multiprocessor, one block's transposes
/// overlapping another's register steps (docs/decisions.md, "Rows in tiles of 2^12: quads and a
/// 16-key network").
pub const ROW_TILE_LOG2: u32 = 12;

/// Longest padded row a block of the segmented sort sorts (log2): 8192 positions, 512 threads.
pub const SEGMENTS_MAX_ROW_LOG2: u32 = 13;

/// log2 of the shortest padded segments that take the radix sort of a segment
/// ([`crate::segments::radix`]) rather than the block's bitonic network, keys sorted alone
/// or with their positions (argsorts, pairs): from the shortest it takes (512 keys, one warp),
/// faster than the bitonic block sort at every length and key width measured, with positions or
/// without (docs/decisions.md, "Segments by a radix sort in one block"). Rows of keys alone of a
/// power of two take the tile sort before either.
pub const SEGMENTS_RADIX_MIN_ROW_LOG2: u32 = 9;

/// Whether segments padded to 2^`row_log2` keys take the radix sort of a segment.
///
/// ```
/// use kernels_gpu::tuning::segments_radix;
/// assert!(segments_radix(12) && segments_radix(13));
/// assert!(!segments_radix(8) && !segments_radix(14));
/// ```
pub const fn segments_radix(row_log2: u32) -> bool {
    row_log2 >= SEGMENTS_RADIX_MIN_ROW_LOG2 && row_log2 <= SEGMENTS_MAX_ROW_LOG2
}

/// Register cap of the radix sort of a segment: four blocks of 256 threads per multiprocessor
/// (rows of 4096 8-byte keys with positions take 48 KiB of shared memory each), two of 512. The
/// indexed kernels spill a few hundred bytes under it and are still faster than under 80
/// (three blocks) or unbounded (112 registers, two): docs/decisions.md, "Segments by a radix
/// sort in one block".
pub const SEGMENTS_RADIX_MAX_REGISTERS: u32 = 64;

/// Threads per block of the register sort of short segments: two warps, a tile of 2048
/// positions, at most 33 KiB of shared memory (16-byte elements), under the 48 KiB that every
/// device gives a block without asking, with enough blocks per multiprocessor to keep the
/// memory busy.
pub const SHORT_SEGMENTS_THREADS: u32 = 64;

/// The most dynamic shared memory per block that every device from sm_70 lets a kernel opt
/// into: the T4's (sm_75) 64 KiB. (V100: 96 KiB; A100: 163; sm_86, sm_89, sm_120: 99; H100,
/// H200: 227.) Every kernel has a shape that fits it.
pub const MIN_SHARED_BYTES: u32 = 64 * 1024;

/// Whether the stable merge sort of keys of `key_bytes` with values of `value_bytes` sorts its
/// tiles with the compact tile sort (`merge_sort_tiles_compact_*`: [`MERGE_THREADS`] threads,
/// tiles of [`MERGE_TILE`] keys, values read from device memory by slot rather than staged in
/// shared memory; [`compact_merge_sort_shared_bytes`]) on a device whose blocks may have
/// `max_shared` bytes: when the tile sort of [`merge_sort_tile`] keys does not fit.
///
/// ```
/// use kernels_gpu::tuning::merge_sort_compact;
/// // H100, H200: every pair fits.
/// for (k, v) in [(4, 0), (4, 16), (8, 0), (8, 8), (8, 16)] {
///     assert!(!merge_sort_compact(k, v, 227 * 1024));
/// }
/// assert!(merge_sort_compact(8, 8, 163 * 1024)); // A100: 174,592 bytes
/// assert!(!merge_sort_compact(4, 0, 64 * 1024)); // T4: 35,072 bytes
/// assert!(merge_sort_compact(8, 0, 64 * 1024)); // T4: 70,144 bytes
/// ```
pub const fn merge_sort_compact(key_bytes: u32, value_bytes: u32, max_shared: u32) -> bool {
    let tile = merge_sort_tile(key_bytes, value_bytes);
    merge_sort_shared_bytes(tile, key_bytes, value_bytes) > max_shared
}

/// Dynamic shared memory of a compact tile-sort block (`merge_sort_tiles_compact_*`), in
/// bytes: that of a merge pass ([`merge_shared_bytes`] of [`MERGE_TILE`] keys), at most
/// 52,736 (8-byte keys with values), which every device from sm_70 offers.
///
/// ```
/// use kernels_gpu::tuning::{MIN_SHARED_BYTES, compact_merge_sort_shared_bytes};
/// assert_eq!(compact_merge_sort_shared_bytes(8, 16), 52_736);
/// assert!(compact_merge_sort_shared_bytes(8, 16) <= MIN_SHARED_BYTES);
/// ```
pub const fn compact_merge_sort_shared_bytes(key_bytes: u32, value_bytes: u32) -> u32 {
    merge_shared_bytes(MERGE_TILE, key_bytes, value_bytes)
}

/// Threads per block of a radix digit pass, by the bytes of a key and of its value. The first
/// [`RADIX`](crate::radix::RADIX) threads speak for the digits in the per-digit steps; the
/// others only load, rank and store. Pairs whose widest type has 8 bytes take 384 threads (12
/// warps) of fewer keys each, under a cap of 80 registers, so that two blocks, 24 warps, share
/// a multiprocessor (CUB's Onesweep shape on sm_90); keys alone and 4-byte pairs take 256
/// (docs/decisions.md, "Blocks of 384 threads", "Four blocks of keys alone").
pub const fn radix_pass_threads(key_bytes: u32, value_bytes: u32) -> u32 {
    if radix_item_bytes(key_bytes, value_bytes) == 8 && value_bytes > 0 {
        384
    } else {
        256
    }
}

/// The wider of a radix pass's key and value, in bytes: what its tile's shared memory holds
/// per key (the keys, then the values in the same bytes), and what its shape follows.
pub const fn radix_item_bytes(key_bytes: u32, value_bytes: u32) -> u32 {
    if key_bytes > value_bytes {
        key_bytes
    } else {
        value_bytes
    }
}

/// Keys per thread of a radix digit pass, by the bytes of a key and of its value. Larger
/// tiles make longer runs of each digit in the scatter (fewer partly written sectors) and
/// spread each tile's scans and look-back over more keys, as long as the keys stay in
/// registers: 32 for 4-byte keys (256 threads), 16 for 8-byte keys alone (256 threads), 14 for
/// pairs whose widest type has 8 bytes (384 threads), 8 for 16-byte values. Values follow their
/// keys through the same shared memory after the ranking, so a pass with values takes a tile by
/// its wider type; its threads hold a slot and a digit per key beside the values, packed four
/// and two to a register, or in shared memory ([`radix_pass_slots_in_shared`]). Every
/// tile fits in 64 KiB of shared memory, which every device from sm_70 lets a block opt into
/// (docs/decisions.md, "Tiles and register caps of the digit passes", "Values after the
/// ranking", "Fourteen 8-byte pairs a thread").
pub const fn radix_pass_items(key_bytes: u32, value_bytes: u32) -> u32 {
    match (radix_item_bytes(key_bytes, value_bytes), value_bytes) {
        (4, _) => 32,
        (8, 0) => 16,
        (8, _) => 14,
        _ => 8,
    }
}

/// Registers a thread of a radix digit pass may use ([`radix_pass_items`]): 64 for keys alone,
/// four blocks of 256 threads (32 warps) per multiprocessor; 80 for pairs of at most 8-byte
/// types, three blocks of 256 threads (4-byte pairs, whose shared memory allows no more) or two
/// of 384; 128 for 16-byte values (docs/decisions.md, "Three blocks of 4-byte keys", "Four
/// blocks of keys alone", "Slots in shared memory for 4-byte pairs").
pub const fn radix_pass_max_registers(key_bytes: u32, value_bytes: u32) -> u32 {
    if value_bytes == 0 {
        64
    } else if radix_item_bytes(key_bytes, value_bytes) <= 8 {
        80
    } else {
        128
    }
}

/// Whether a radix digit pass keeps each key's slot in the tile's sorted order and each
/// slot's digit in shared memory rather than in registers beside the values: for 4-byte keys
/// with 4-byte values, whose 32 values per thread through the look-back leave no registers for
/// them under the cap of [`radix_pass_max_registers`]. The 8-byte pairs keep them in registers,
/// where they cost no shared-memory traffic.
pub const fn radix_pass_slots_in_shared(key_bytes: u32, value_bytes: u32) -> bool {
    value_bytes > 0 && radix_item_bytes(key_bytes, value_bytes) == 4
}

/// Registers a thread of the radix histogram may use: eight blocks of
/// [`RADIX`](crate::radix::RADIX) threads per multiprocessor (the most it holds), so that
/// [`HISTOGRAM_MAX_BLOCKS`](crate::radix::HISTOGRAM_MAX_BLOCKS) blocks run in one wave on an
/// H100 or H200, each thread's 64 bytes of keys in flight together
/// ([`histogram_items`](crate::radix::histogram_items)).
pub const RADIX_HISTOGRAM_MAX_REGISTERS: u32 = 32;

/// Registers a thread of the compact tile sorts may use: one block of [`MERGE_THREADS`]
/// threads fits a multiprocessor's 65536 (the architecture's 255).
pub const COMPACT_MERGE_SORT_MAX_REGISTERS: u32 = registers_to_fit(MERGE_THREADS.ilog2());

/// Registers a thread of the window passes may use with 4-byte keys: three blocks of
/// [`WINDOW_THREADS`] threads per multiprocessor (65536 registers; shared memory 3 × 33 KiB).
/// ptxas 12.9 (sm_90): the pass spills one word, stored once after the load's set-up and loaded
/// once for the store (48 registers uncapped; with a cap of 64, two blocks, it takes 56 and
/// spills nothing), and three blocks per multiprocessor are worth more than the spill
/// (docs/decisions.md, "Register caps").
pub const WINDOW_MAX_REGISTERS_32: u32 = 40;
/// Registers of the window kernels with a constant program: four blocks per multiprocessor,
/// the most threads it holds (shared memory 4 × 33 KiB). ptxas 12.9 (sm_90) fits 14 of the 17
/// in 32 registers; the other three spill one or two words.
pub const WINDOW_PROGRAM_MAX_REGISTERS_32: u32 = 32;
/// Registers a thread of the window passes' tile sort may use with 4-byte keys: four blocks per
/// multiprocessor, the most threads it holds (shared memory 4 × 33 KiB). ptxas 12.9 fits it in
/// 32 without spilling (1% more instructions than with 40: register moves).
pub const WINDOW_TILES_MAX_REGISTERS_32: u32 = 32;
/// Registers of the window passes and their tile sort with 8-byte keys (their 16 keys take 32
/// registers): two blocks per multiprocessor. ptxas 12.9: the tile sort fits (72 uncapped); the
/// pass spills 6 words of its phase loop's bookkeeping (79 uncapped), which stay in L1.
pub const WINDOW_MAX_REGISTERS_64: u32 = 65536 / (2 * WINDOW_THREADS);

/// Registers a thread of the top-k rounds may use with 4-byte keys: four blocks of
/// [`topk::THREADS`](crate::topk::THREADS) per multiprocessor (65536 registers), so that four
/// tiles of loads (64 KiB) are in flight on it. ptxas 13.5 (sm_90): 73 uncapped; capped, a few
/// long-lived words (the part's pointers) spill, about six local accesses per tile, in L1.
pub const TOPK_MAX_REGISTERS_32: u32 = 64;
/// Registers of the top-k rounds with 8-byte keys, whose items take four registers (a network
/// of eight per thread, 32): three blocks per multiprocessor. ptxas 13.5 (sm_90): 91 uncapped;
/// capped, 36 bytes spilled, in L1.
pub const TOPK_MAX_REGISTERS_64: u32 = 80;

/// Registers of the top-k rounds that select in registers, with 4-byte keys: three blocks per
/// multiprocessor. Capped at 64 (four blocks), ptxas 13 (sm_90) spilled 144 bytes and rows of
/// 4096 keys were slower, as they were at 96 (two blocks): docs/decisions.md, "Parts held in
/// registers: a radix select".
pub const TOPK_ROWS_MAX_REGISTERS_32: u32 = 80;
/// Registers of the top-k rounds that select in registers, with 8-byte keys: three blocks per
/// multiprocessor (ptxas 13, sm_90: 4 bytes spilled).
pub const TOPK_ROWS_MAX_REGISTERS_64: u32 = 80;

/// Registers of the steps of a top-k by digits ([`topk::digits`](crate::topk::digits)), whose
/// threads hold a tile's 16 keys: three blocks per multiprocessor, as the rounds in registers
/// (ptxas 13, sm_90: the `u64` kernel spills 16 bytes, the `u32` one none).
pub const TOPK_DIGITS_MAX_REGISTERS: u32 = 80;

/// The least k for which a top-k of one array goes by digits ([`topk::digits::by_digits`](
/// crate::topk::digits::by_digits)). Below it the digit passes were no reliable gain at any
/// size over the streaming rounds, which read the keys once and sort few candidates
/// (docs/decisions.md, "Top-k of one array by digits").
pub const TOPK_DIGITS_MIN_K: u32 = 64;

/// Bytes of keys per unit of k up to which a top-k of one array goes by digits: the digit
/// passes read the keys four to five times, the streaming rounds once but with candidate
/// sorts that grow with k, so the size up to which the passes are the faster grows with k:
/// with both ways timed, for `f32` and `u64` keys alike, it doubled with each doubling of k
/// (docs/decisions.md, "Top-k of one array by digits").
pub const TOPK_DIGITS_BYTES_PER_K: u64 = 512 << 10;

/// Registers a thread of the small sort may use: a block of 2^SMALL_TILE_LOG2 / SMALL_RUN
/// threads must fit (ptxas used 126 for `u32` keys and 160 for `u64` keys with no limit,
/// ptxas 12.9, sm_90).
pub const SMALL_MAX_REGISTERS: u32 = registers_to_fit(SMALL_TILE_LOG2 - SMALL_RUN_LOG2);

/// Registers a thread of the tiny sort may use: its largest block (2^TINY_MAX_LOG2 / TINY_RUN
/// threads) must fit.
pub const TINY_MAX_REGISTERS: u32 = registers_to_fit(TINY_MAX_LOG2 - TINY_RUN_LOG2);

/// The most registers per thread (at most 255, the architecture's) with which a block of
/// 2^`threads_log2` threads fits a multiprocessor's 65536 registers.
const fn registers_to_fit(threads_log2: u32) -> u32 {
    let fit = 65536 >> threads_log2;
    if fit < 255 { fit } else { 255 }
}

// `auto`'s choice among the bitonic, merge and radix sorts (by n, key width and values, per
// device policy, from measurements): `tuning/auto.rs`. The host's alone: the kernels never read
// it, and outside the nvptx64 build the PTX does not depend on it.
#[cfg(not(target_arch = "nvptx64"))]
pub mod auto;

/// Largest number of keys the kernels accept; they use 64-bit positions. At this many keys the
/// window passes' grids (n / 2^13 blocks) and the merge passes' stay far below a grid's
/// 2^31 − 1 blocks.
pub const MAX_KEYS: u64 = 1 << 39;

/// Threads per block of the merge passes (`nt`; also `merge_two_*`): 256, as CUB on sm_90. The
/// tile sort's blocks are [`MERGE_SORT_THREADS`].
pub const MERGE_THREADS: u32 = 256;
/// Keys each merge-sort thread sorts in registers and merges per step (`vt`). Odd, so that the
/// thread-ordered shared-memory accesses (thread `u` at slots `u·vt + k`) of a warp hit 32
/// different banks; 17 as CUB on sm_90 for 4-byte keys, which makes the tile (4352 keys) large
/// enough that 2^25 keys need 13 merge passes (2^25 / 4096 = 8192 tiles) rather than 14. The
/// serial merge and the register sort are straight-line code over `vt` keys, so their arrays
/// stay in registers (`ptxas -v`: no stack frame, no spills, checked for 11 ≤ `vt` ≤ 33; at most
/// [`MERGE_KEY_PAD`]). 33 with [`MERGE_SORT_THREADS`] = 256 (8448-key tiles everywhere) halves
/// the search instructions per key but leaves fewer warps per multiprocessor.
pub const MERGE_VT: u32 = 17;
/// Keys per merge-pass tile (`nv = nt · vt`): the outputs of one block of a merge pass (and of
/// a `merge_two_*` launch).
pub const MERGE_TILE: u32 = MERGE_THREADS * MERGE_VT;
/// Threads per block of the tile sort (`merge_sort_tiles_*`), a multiple of [`MERGE_THREADS`]: 512,
/// so that the tile sort makes runs of [`MERGE_SORT_TILE`] = 8704 keys and one merge pass fewer
/// follows (12 at 2^25 keys, 15 at 2^28). A round of merges inside a block costs less than a merge
/// pass through device memory. Set it to [`MERGE_THREADS`] (256) for the other variant (CUB's
/// shape: 13 passes at 2^25, 16 at 2^28). 1024 (one pass fewer again) was slower: its tenth round,
/// one block per multiprocessor, costs more than the pass it saves (docs/decisions.md, "Tile
/// sort of 1024 threads"). At most 128 registers per thread at 512
/// threads: their caps in the kernel list ([`crate::kernels`]) keep them there.
pub const MERGE_SORT_THREADS: u32 = 512;
/// Keys per tile-sort tile: the sorted runs the merge passes start from.
pub const MERGE_SORT_TILE: u32 = MERGE_SORT_THREADS * MERGE_VT;

/// log2 of the output tile of the keys-only merge passes (`merge_pass_network_*`,
/// [`crate::merge::network`]): 256 threads × 16 keys, merged by a bitonic network.
pub const NETWORK_MERGE_LOG2: u32 = 12;
/// Keys per output tile of the keys-only merge passes; it divides the bitonic tile sort's
/// tile ([`TILE_KEYS`]), which the keys-only merge sort starts from.
pub const NETWORK_MERGE_TILE: u32 = 1 << NETWORK_MERGE_LOG2;
/// Threads per block of the keys-only merge passes.
pub const NETWORK_MERGE_THREADS: u32 = NETWORK_MERGE_TILE / SMALL_RUN;

/// Dynamic shared memory of a keys-only merge-pass block, in bytes: one padded tile
/// ([`tile_shared_words`]), which its layout changes go through.
///
/// ```
/// assert_eq!(kernels_gpu::tuning::network_merge_shared_bytes(4), (4096 + 128) * 4);
/// ```
pub const fn network_merge_shared_bytes(key_bytes: u32) -> u32 {
    tile_shared_words(NETWORK_MERGE_TILE) * key_bytes
}

/// Whether the merge sort of keys alone (no values) of `key_bytes` bytes sorts its tiles with
/// the bitonic tile sort (`bitonic_window_tiles_*`, tiles of [`TILE_KEYS`]) and merges with
/// networks (`merge_pass_network_*`), rather than with the stable tile sort and serial
/// merges: the two give the same bits for keys alone (equal keys are equal bits). For 4-byte
/// keys the bitonic tile sort is the faster and the network passes are as fast as the serial
/// merges; 8-byte keys stay stable, their stable tile sort being the faster for them
/// (docs/decisions.md, "Keys-only merge sort").
pub const fn network_merge(key_bytes: u32) -> bool {
    key_bytes == 4
}

/// Dynamic shared memory one block may have on an H100 or H200.
pub const MAX_SHARED_BYTES: u32 = 227 * 1024;

/// Threads of the tile sort of keys of `key_bytes` with values of `value_bytes`:
/// [`MERGE_SORT_THREADS`], or half as many, and so on down to [`MERGE_THREADS`], while that
/// tile does not fit in shared memory.
///
/// ```
/// use kernels_gpu::tuning::{MERGE_THREADS, merge_sort_threads};
/// // 8-byte keys with 16-byte values: 8704 keys would take 244 KB, 4352 take 122 KB.
/// assert_eq!(merge_sort_threads(8, 16), MERGE_THREADS);
/// ```
pub const fn merge_sort_threads(key_bytes: u32, value_bytes: u32) -> u32 {
    let mut threads = MERGE_SORT_THREADS;
    while threads > MERGE_THREADS
        && merge_sort_shared_bytes(threads * MERGE_VT, key_bytes, value_bytes) > MAX_SHARED_BYTES
    {
        threads /= 2;
    }
    threads
}

/// Registers per thread that let one tile-sort block of keys of `key_bytes` with values of
/// `value_bytes` fit in a multiprocessor's 65536 (255 at most, the architecture's limit):
/// `__launch_bounds__(merge_sort_threads(..))`. Crate-private: only the host's kernel list reads
/// it, and the nvptx64 build then compiles no code for it.
#[cfg_attr(target_arch = "nvptx64", allow(dead_code))]
pub(crate) const fn merge_sort_registers(key_bytes: u32, value_bytes: u32) -> u32 {
    let fit = 65536 / merge_sort_threads(key_bytes, value_bytes);
    if fit > 255 { 255 } else { fit }
}

/// Keys per tile-sort tile for keys of `key_bytes` with values of `value_bytes`.
pub const fn merge_sort_tile(key_bytes: u32, value_bytes: u32) -> u32 {
    merge_sort_threads(key_bytes, value_bytes) * MERGE_VT
}
/// Threads per block of the merge sort's partition kernels (a pass's: a thread per split of
/// an output tile, binary searches; a merge of two runs: a warp per split, a 33-ary search,
/// [`crate::merge::merge_path_search`]).
pub const PARTITION_THREADS: u32 = 128;
/// Probes per round of a pass partition's search over the edges, one thread per split
/// ([`crate::merge::Probes`]): a binary search. A thread's extra probes per round cost more
/// than the round trips they save, even in the L2 cache: the merge sort was slower with every
/// count above one (docs/decisions.md, "Merge partition").
pub const PARTITION_EDGE_PROBES: u32 = 1;
/// Probes per round of a pass partition's search over the keys in device memory (each probe a
/// scattered sector): a binary search, for the same reason (docs/decisions.md, "Merge
/// partition").
pub const PARTITION_KEY_PROBES: u32 = 1;
/// Slots after a tile's keys in shared memory that the merges may read but never use: a
/// thread's serial merge reads one key ahead, and past the end of a partial tile up to `vt`
/// keys ahead. At least [`MERGE_VT`] (checked where the block code is instantiated).
pub const MERGE_KEY_PAD: u32 = 64;

/// How many blocks ahead of its own a block of a pass that streams through device memory (the
/// keys-only network merge passes, the bitonic window passes) asks the L2 cache for the input
/// of (`prefetch.global.L2`, before its own loads), with `resident_blocks` blocks of the pass
/// on the device at once: a quarter of them. The block that runs later then finds its keys in
/// L2 instead of waiting for device memory. Too near, and the prefetch is not back in time;
/// too far, and the L2 evicts the lines before they are used. Between those, the time is flat
/// over a wide range of distances, for the merge passes and the window passes alike; a share of
/// the resident blocks, rather than a count, keeps the distance in that range on any device
/// (docs/decisions.md, "L2 prefetch").
///
/// ```
/// assert_eq!(kernels_gpu::tuning::prefetch_ahead_tiles(1056), 264);
/// ```
pub const fn prefetch_ahead_tiles(resident_blocks: u64) -> u64 {
    resident_blocks / 4
}

/// The most blocks per multiprocessor that the bitonic window passes' prefetch distance counts
/// ([`prefetch_ahead_tiles`] of the resident blocks so counted). The kernels with a constant
/// program fit four blocks of 4-byte keys per multiprocessor; a quarter of those was slightly
/// slower than a quarter of three, what the generic kernel's occupancy gives
/// (docs/decisions.md, "L2 prefetch").
pub const WINDOW_PREFETCH_MAX_BLOCKS_PER_MULTIPROCESSOR: u32 = 3;

/// log2 of [`OVERLAP_CHUNK`].
pub const OVERLAP_CHUNK_LOG2: u32 = 22;

/// Keys per overlap chunk of the merge sort with tile-sort tiles of `tile` keys: the tile times
/// the power of two that comes nearest [`OVERLAP_CHUNK`] from above (its chunks must be whole
/// runs of the merge passes).
pub const fn merge_overlap_chunk(tile: u64) -> u64 {
    tile * OVERLAP_CHUNK.div_ceil(tile).next_power_of_two()
}
/// Keys per chunk of a host-slice sort that overlaps its copies with the sort ([`crate::overlap`]):
/// each chunk is sorted (bitonic stages up to it, or tile sort and merge passes up to runs of it)
/// as soon as it has landed, while the next one is in flight. A power of two multiple of both
/// tiles. A chunk of 2^22 u32 keys (16 MiB) takes about as long to cross PCIe as to sort, so the
/// sort of each chunk hides behind the next one's copy; smaller chunks leave more passes over the
/// whole array after the upload, larger ones a longer sort of the last chunk (docs/design.md,
/// "Host slices"; docs/decisions.md, "Pinned staging, overlapped with the sort"). Slices of at
/// most one chunk are sorted after the whole upload.
pub const OVERLAP_CHUNK: u64 = 1 << OVERLAP_CHUNK_LOG2;
/// Launches the last merge pass of an overlapped merge sort is split into (ranges of output
/// tiles), so that the copy of each range back to the host starts when its launch is done: the
/// download then waits for a quarter of the last pass instead of all of it, a small part of the
/// copy's own time. More parts cost more partly filled waves. (The bitonic sort splits the end of
/// its last stage by chunks instead: `window::WindowPass::stays_within`.)
pub const LAST_PASS_PARTS: u64 = 4;

/// Threads per block of the multi-GPU helper kernels (sample, ranks, fill, check).
pub const MULTI_THREADS: u32 = 256;

/// Blocks of the multi-GPU check kernel: enough to fill a large GPU several times over, few enough
/// that the host adds the partial results in microseconds.
pub const MULTI_CHECK_BLOCKS: u32 = 1024;

/// Samples per part (at most, plus one) when the multi-GPU sort looks for its splitters: every
/// GPU ranks all parts' samples (G · 2^14 binary searches, microseconds), and the host then
/// reads a span of at most `n_i / 2^14` keys per part and splitter (64 KB for 2^28 u32).
pub const MULTI_SAMPLES: u64 = 1 << 14;

/// Bytes of a merge-sort block's shared key buffer: `keys` keys of `key_bytes` and
/// [`MERGE_KEY_PAD`] more, rounded up to 16 bytes so that the next buffer is aligned for
/// 16-byte accesses.
pub const fn merge_key_buffer_bytes(keys: u32, key_bytes: u32) -> u32 {
    ((keys + MERGE_KEY_PAD) * key_bytes).next_multiple_of(16)
}

/// Dynamic shared memory of a merge-pass block (`merge_pass_*`, `merge_two_*`) for tiles of
/// `keys` keys, in bytes: the key buffer, and with values (`value_bytes > 0`) one `u32` per key,
/// the tile slot each output came from. Values themselves never go through shared memory: the
/// store reads each output's value from device memory at the slot's position.
///
/// ```
/// use kernels_gpu::tuning::{merge_shared_bytes, merge_sort_shared_bytes};
///
/// // 4352 u32 keys, 64 keys of padding; with u64 values, 4352 slots more.
/// assert_eq!(merge_shared_bytes(4352, 4, 0), 17_664);
/// assert_eq!(merge_shared_bytes(4352, 4, 8), 17_664 + 17_408);
/// // The tile sort of 8704 u64 keys with u64 values: keys, slots and values.
/// assert_eq!(merge_sort_shared_bytes(8704, 8, 8), 70_144 + 34_816 + 69_632);
/// ```
pub const fn merge_shared_bytes(keys: u32, key_bytes: u32, value_bytes: u32) -> u32 {
    let slots = if value_bytes > 0 {
        (keys * 4).next_multiple_of(16)
    } else {
        0
    };
    merge_key_buffer_bytes(keys, key_bytes) + slots
}

/// Dynamic shared memory of a tile-sort block (`merge_sort_tiles_*`), in bytes: as
/// [`merge_shared_bytes`], plus the tile's values, loaded once and read once, by the slot each
/// output came from.
pub const fn merge_sort_shared_bytes(keys: u32, key_bytes: u32, value_bytes: u32) -> u32 {
    merge_shared_bytes(keys, key_bytes, value_bytes) + keys * value_bytes
}

const _: () = assert!(MERGE_THREADS.is_power_of_two() && MERGE_THREADS >= 32 && MERGE_TILE >= 2048);
const _: () = assert!(MERGE_VT <= MERGE_KEY_PAD && PARTITION_THREADS % 32 == 0);
const _: () = assert!(
    MERGE_SORT_THREADS.is_power_of_two()
        && MERGE_SORT_THREADS >= MERGE_THREADS
        && MERGE_SORT_THREADS <= 1024
);
const _: () = assert!(
    OVERLAP_CHUNK.is_power_of_two()
        && OVERLAP_CHUNK >= TILE_KEYS as u64
        && OVERLAP_CHUNK >= MERGE_TILE as u64
        && LAST_PASS_PARTS >= 1
);
const _: () = assert!(SMALL_RUN_LOG2 >= 1 && SMALL_RUN_LOG2 <= 5);
const _: () = assert!(
    SMALL_RUN_LOG2 == 4
        && WINDOW_PASSENGERS > SMALL_RUN_LOG2
        && WINDOW_PASSENGERS < WINDOW_LOG2
        && WINDOW_LOG2 <= SMALL_RUN_LOG2 + 9,
    "the window engine's layouts: 16 registers, 32 lanes"
);
const _: () = assert!(SMALL_MIN_LOG2 <= SMALL_TILE_LOG2 && SMALL_TILE_LOG2 <= SMALL_RUN_LOG2 + 9);
const _: () = assert!(SMALL_TILE_LOG2 <= SMALL_MAX_LOG2 && SMALL_MAX_LOG2 <= 20);
const _: () = assert!(SMALL_SORT_MAX_KEYS <= 1 << SMALL_MAX_LOG2);
