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
pub const MAX_REGISTERS: &[(&str, u32)] = &[("bitonic_merge_tiles_u32", 40)];

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

/// log2 of [`OVERLAP_CHUNK`].
pub const OVERLAP_CHUNK_LOG2: u32 = 22;
/// Keys per chunk of a host-slice sort that overlaps its copies with the sort
/// ([`crate::overlap`]): each chunk is sorted (bitonic stages up to it, or tile sort and merge
/// passes up to runs of it) as soon as it has landed, while the next one is in flight. A power
/// of two multiple of both tiles. 2^22 u32 keys are 16 MiB, 0.33 ms of PCIe Gen5 (~50 GB/s),
/// about what sorting them takes (0.26 ms merge, 0.34 ms bitonic, from the per-pass times at
/// 2^25 in docs/perf.md); smaller chunks leave more passes over the whole array after the
/// upload, larger ones a longer sort of the last chunk (docs/perf.md, "Overlapping the copies
/// with the sort"). Slices of at most one chunk are sorted after the whole upload.
pub const OVERLAP_CHUNK: u64 = 1 << OVERLAP_CHUNK_LOG2;
/// Launches the last merge pass of an overlapped merge sort is split into (ranges of output
/// tiles), so that the copy of each range back to the host starts when its launch is done: the
/// download (2.7 ms at 2^25 u32) then waits for a quarter of the last pass (~0.04 ms) instead
/// of all of it. More parts cost more partly filled waves. (The bitonic sort splits the end of
/// its last stage by chunks instead: `bitonic::block_tail`.)
pub const LAST_PASS_PARTS: u64 = 4;

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
const _: () = assert!(
    OVERLAP_CHUNK.is_power_of_two()
        && OVERLAP_CHUNK >= TILE_KEYS as u64
        && OVERLAP_CHUNK >= MERGE_TILE as u64
        && LAST_PASS_PARTS >= 1
);
