//! Tuning constants: the one place for tile sizes and launch shapes. The kernels compile them
//! in; the host reads the same values for its grid math, so the two cannot disagree.
//!
//! ```
//! use kernels_gpu::tuning::*;
//!
//! assert_eq!(TILE_KEYS, 8192); // 512 threads × 16 keys
//! assert_eq!(TILE_LOG2, 13);
//! // A tile of 8-byte keys fits in an H100's or H200's 227 KB of shared memory per block:
//! assert_eq!(tile_shared_bytes(8), 67584);
//! ```

/// Threads per block of the shared-memory tile kernels (tile sort and tile merge).
pub const TILE_THREADS: u32 = 512;
/// log2 of the keys each tile-kernel thread keeps in registers.
pub const TILE_RUN_LOG2: u32 = 4;
/// Keys each tile-kernel thread keeps in registers: a contiguous run of the tile, sorted and
/// merged with register-only networks so that the shortest strides need no barrier.
pub const TILE_RUN: u32 = 1 << TILE_RUN_LOG2;
/// Keys per shared-memory tile: stages up to this size run in one launch.
pub const TILE_KEYS: u32 = TILE_THREADS * TILE_RUN;
/// log2 of [`TILE_KEYS`].
pub const TILE_LOG2: u32 = TILE_KEYS.trailing_zeros();

/// Shared-memory words per tile: one padding word after every 32 keys, so that a warp reading
/// 32 runs of [`TILE_RUN`] keys hits 32 different banks.
///
/// ```
/// assert_eq!(kernels_gpu::tuning::tile_shared_words(64), 66);
/// ```
pub const fn tile_shared_words(keys: u32) -> u32 {
    keys + keys / 32
}

/// Dynamic shared memory of one tile-kernel block, in bytes, for keys of `key_bytes` bytes:
/// what the host passes at launch and sets as the kernels' maximum.
///
/// ```
/// use kernels_gpu::tuning::{TILE_KEYS, tile_shared_bytes};
/// assert_eq!(tile_shared_bytes(4), (TILE_KEYS + TILE_KEYS / 32) * 4);
/// ```
pub const fn tile_shared_bytes(key_bytes: u32) -> u32 {
    tile_shared_words(TILE_KEYS) * key_bytes
}

/// log2 of the keys each thread of the one-launch small sort keeps in registers
/// ([`crate::small`]).
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
/// most ([`crate::small::SmallPlan::new`]): for 2^16 keys, at least 10.
pub const SMALL_TILE_LOG2: u32 = 12;
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

/// Threads per block of the global compare-exchange passes.
pub const GLOBAL_THREADS: u32 = 256;
/// Most bitonic steps one global pass fuses: each thread holds 2^m keys in registers and writes
/// them once.
pub const GLOBAL_MAX_FUSED_STEPS: u32 = 4;
/// Most steps of the first, mirrored global pass of a stage, which holds two groups: 2 × 2^3
/// keys. With 4 steps (32 keys and their 64-bit addresses) it took 139 registers and ran at 12%
/// occupancy, 0.092 ms a pass against 0.067 ms for the others (docs/perf.md).
pub const GLOBAL_MAX_MIRROR_STEPS: u32 = 3;

/// Register limit of each kernel (`.maxnreg`, written into the PTX by `host/build.rs`, as
/// `__launch_bounds__` would in CUDA C++). The tile merge fits in 40 registers without spilling,
/// which lets three 512-thread blocks share a multiprocessor instead of two (docs/perf.md).
/// The small-sort kernels get what fits their largest block (256 registers a thread for 256
/// threads, so no limit at the current tuning; 128 for blocks of 2^13 keys).
pub const MAX_REGISTERS: &[(&str, u32)] = &[
    ("bitonic_merge_tiles_u32", 40),
    ("bitonic_small_u32", SMALL_MAX_REGISTERS),
    ("bitonic_small_u64", SMALL_MAX_REGISTERS),
];

/// Registers a thread of the small sort may use: a block of 2^SMALL_TILE_LOG2 / SMALL_RUN
/// threads must fit the multiprocessor's 65536 registers (ptxas used 126 for `u32` keys and 160
/// for `u64` keys with no limit, docs/perf.md).
const SMALL_MAX_REGISTERS: u32 = {
    let fit = 65536 >> (SMALL_TILE_LOG2 - SMALL_RUN_LOG2);
    if fit < 255 { fit } else { 255 }
};

/// `--algo auto` for keys alone sorts with the bitonic network for 2^AUTO_BITONIC_MIN_LOG2 ≤ n <
/// 2^AUTO_BITONIC_END_LOG2 and with the merge sort otherwise. Measured (H200, 2026-11-21,
/// `docs/results/h200-2026-11-21/bench.csv`, u32 and f32 alike), bitonic time / merge time:
/// 1.5 at 2^10–2^11 (the merge sort's 2048-key tile vs the bitonic's 8192), 1.0 at 2^12,
/// 0.77–0.88 from 2^13 to 2^21, 0.98–1.00 at 2^22–2^23, then 1.32 at 2^24 rising to 1.69 at
/// 2^28. 64-bit keys use the same bounds until measured.
pub const AUTO_BITONIC_MIN_LOG2: u32 = 12;
/// See [`AUTO_BITONIC_MIN_LOG2`].
pub const AUTO_BITONIC_END_LOG2: u32 = 23;

/// Largest number of keys the kernels accept. The global passes use 64-bit indices; the limit
/// comes from the grid: a one-step pass launches n/2 threads in blocks of [`GLOBAL_THREADS`],
/// and a grid has at most 2^31 − 1 blocks.
pub const MAX_KEYS: u64 = 1 << 39;

/// Threads per block of the merge sort's kernels (`nt`).
pub const MERGE_THREADS: u32 = 256;
/// Keys each merge-sort thread sorts in registers and merges per step (`vt`). Odd-even
/// transposition sorts a thread's run in `vt` rounds, and the loops over it unroll fully.
pub const MERGE_VT: u32 = 8;
/// Keys per merge-sort tile (`nv = nt · vt`): the runs the tile sort makes, and the outputs of
/// one block of a merge pass.
pub const MERGE_TILE: u32 = MERGE_THREADS * MERGE_VT;
/// Threads per block of the merge sort's partition kernel (one split per output tile).
pub const PARTITION_THREADS: u32 = 128;

/// Threads per block of the multi-GPU helper kernels (sample, ranks, fill, check).
pub const MULTI_THREADS: u32 = 256;

/// Blocks of the multi-GPU check kernel: enough to fill an H200 several times over, few enough
/// that the host adds the partial results in microseconds.
pub const MULTI_CHECK_BLOCKS: u32 = 1024;

/// Samples per part (at most, plus one) when the multi-GPU sort looks for its splitters: every
/// GPU ranks all parts' samples (G · 2^14 binary searches, microseconds), and the host then
/// reads a window of at most `n_i / 2^14` keys per part and splitter (64 KB for 2^28 u32).
pub const MULTI_SAMPLES: u64 = 1 << 14;

/// Dynamic shared memory of a merge-sort block, in bytes: two buffers (ping-pong) of `keys`
/// keys of `key_bytes` and two of their values of `value_bytes` (0 for keys-only sorts).
pub const fn merge_shared_bytes(keys: u32, key_bytes: u32, value_bytes: u32) -> u32 {
    2 * keys * (key_bytes + value_bytes)
}

const _: () = assert!(MERGE_THREADS.is_power_of_two() && MERGE_TILE >= 2048);
const _: () = assert!(TILE_RUN >= 2 && TILE_RUN.is_power_of_two());
const _: () = assert!(TILE_THREADS.is_power_of_two() && TILE_THREADS >= 32);
const _: () = assert!(GLOBAL_MAX_FUSED_STEPS >= 1 && GLOBAL_MAX_FUSED_STEPS <= 5);
const _: () =
    assert!(GLOBAL_MAX_MIRROR_STEPS >= 1 && GLOBAL_MAX_MIRROR_STEPS <= GLOBAL_MAX_FUSED_STEPS);
const _: () = assert!(SMALL_RUN_LOG2 >= 1 && SMALL_RUN_LOG2 <= 5);
const _: () = assert!(SMALL_MIN_LOG2 <= SMALL_TILE_LOG2 && SMALL_TILE_LOG2 <= SMALL_RUN_LOG2 + 9);
const _: () = assert!(SMALL_TILE_LOG2 <= SMALL_MAX_LOG2 && SMALL_MAX_LOG2 <= 20);
const _: () = assert!(SMALL_SORT_MAX_KEYS <= 1 << SMALL_MAX_LOG2);
// Every length up to 2^SMALL_MAX_LOG2 has a plan of one window per stage above the block.
const _: () = assert!(crate::small::SmallPlan::new(SMALL_MAX_LOG2, SMALL_TILE_LOG2).is_some());
