//! Stable merge sort kernels: keys of 32 or 64 bits, keys only or with values of 4, 8 or 16
//! bytes (`u32`, `u64`, `u128`: the kernels only move values, so any payload of that size fits).
//! The host launches them in the order of [`crate::merge::schedule`]: one tile sort, then per
//! merge pass one partition and one merge launch.

use crate::gpu::{CudaBlock, WarpVote, block_idx_x, dynamic_shared, global_thread_x};
use crate::kernels::{define, kernel_list};
use crate::keys::KeyBits;
use crate::merge::block::{Align16, Buffers, Payload, merge_tile, partition_unit, sort_tile};
use crate::merge::network;
use crate::merge::{
    MergePassArgs, MergeTwoArgs, NetworkMergeArgs, Pairing, PartitionArgs, Probes, SEARCH_LANES,
    SortTilesArgs, TwoPartitionArgs, merge_pass_entry, merge_two_entry, network_merge_entry,
    partition_entry, sort_tiles_entry, two_partition_entry,
};
use crate::tuning::{
    MERGE_THREADS, MERGE_TILE, MERGE_VT, NETWORK_MERGE_THREADS, PARTITION_EDGE_PROBES,
    PARTITION_KEY_PROBES, merge_sort_threads,
};

const VT: usize = MERGE_VT as usize;
const BLOCK: CudaBlock<MERGE_THREADS> = CudaBlock;

/// `p`, or a dangling (aligned, non-null) pointer for zero-sized values: keys-only launches pass
/// null value pointers, and even a zero-sized access needs a non-null pointer.
#[inline(always)]
fn payload<V>(p: *mut V) -> *mut V {
    if size_of::<V>() == 0 {
        core::ptr::NonNull::dangling().as_ptr()
    } else {
        p
    }
}

/// A launch's buffers, value pointers through [`payload`].
#[inline(always)]
fn buffers<K, V>(
    src_keys: *mut K,
    dst_keys: *mut K,
    src_values: *mut V,
    dst_values: *mut V,
    edges: *mut K,
) -> Buffers<K, V> {
    Buffers {
        src_keys,
        dst_keys,
        src_values: payload(src_values),
        dst_values: payload(dst_values),
        edges,
    }
}

/// Output tile `tile` of a merge launch paired by `pairing`, in this block: the body of the
/// merge-pass and two-run kernels.
///
/// # Safety
/// As [`merge_tile`], for a block of `MERGE_THREADS` threads with its dynamic shared memory.
#[inline(always)]
unsafe fn merge_block<K: KeyBits, V: Payload>(
    buf: Buffers<K, V>,
    splits: *const u64,
    n: u64,
    pairing: Pairing,
    tile: u64,
    decode: u32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        merge_tile::<K, V, _, VT>(
            &BLOCK,
            MERGE_THREADS,
            dynamic_shared::<Align16>() as *mut u8,
            buf,
            splits,
            n,
            pairing,
            tile,
            decode,
        )
    }
}

macro_rules! merge_sort_tiles {
    ($sort_tiles:ident($args:path), $key:ty, $value:ty) => {
        sort_tiles_entry!(
            /// Sorts each tile of `MERGE_SORT_TILE` keys (and their values) stably in shared
            /// memory, from `src_*` into the same positions of `dst_*` (which may be `src_*`),
            /// keys through the key map `encode` on load and the inverse of `decode` on store,
            /// and records the first and last (encoded) key of each `MERGE_TILE` keys in `edges`
            /// (keys `2t`, `2t + 1`), for the first merge pass's partition ([`SortTilesArgs`]).
            ///
            /// Launch: `ceil(n / MERGE_SORT_TILE)` blocks of `MERGE_SORT_THREADS` threads,
            /// `merge_sort_shared_bytes(MERGE_SORT_TILE, size_of::<key>(), size_of::<value>())`
            /// bytes of dynamic shared memory.
            ///
            /// # Safety
            /// The addresses hold `n` keys and values on the device (value addresses are unused,
            /// and may be 0, when the value type is `()`); the launch shape is as above.
            $sort_tiles,
            $args,
            |args| {
                let SortTilesArgs {
                    src_keys,
                    dst_keys,
                    src_values,
                    dst_values,
                    edges,
                    n,
                    encode,
                    decode,
                } = args;
                let (src_keys, dst_keys) = (src_keys as *mut $key, dst_keys as *mut $key);
                let (src_values, dst_values) =
                    (src_values as *mut $value, dst_values as *mut $value);
                let buf = buffers(
                    src_keys,
                    dst_keys,
                    src_values,
                    dst_values,
                    edges as *mut $key,
                );
                let tile = u64::from(block_idx_x());
                const THREADS: u32 =
                    merge_sort_threads(size_of::<$key>() as u32, size_of::<$value>() as u32);
                // SAFETY: the launch contract: this block owns its tile and the shared memory.
                unsafe {
                    sort_tile::<$key, $value, _, VT, true>(
                        &CudaBlock::<THREADS>,
                        THREADS,
                        dynamic_shared::<Align16>() as *mut u8,
                        buf,
                        n,
                        tile,
                        encode,
                        decode,
                        MERGE_TILE,
                    )
                }
            },
        );
    };
}

macro_rules! merge_pass {
    ($merge:ident($args:path), $key:ty, $value:ty) => {
        merge_pass_entry!(
            /// One merge pass over runs of `width` keys ([`MergePassArgs`]): output tile
            /// `first_tile + blockIdx.x` merges its slices of two runs (from `splits`, written by
            /// the partition kernel of the same pass) from `src_*` into `dst_*`, keys through the
            /// inverse of `decode`, and records its first and last (encoded) key in `edges`
            /// (keys `2t`, `2t + 1` for tile `t`), for the next pass's partition. A pass is
            /// one launch from tile 0, or several over consecutive ranges of tiles (the
            /// host-slice pipeline splits the last pass so that each range's copy starts early).
            ///
            /// Launch: up to `ceil(n / MERGE_TILE) − first_tile` blocks of `MERGE_THREADS`
            /// threads, `merge_shared_bytes(MERGE_TILE, size_of::<key>(), size_of::<value>())`
            /// bytes of dynamic shared memory.
            ///
            /// # Safety
            /// As the tile sort (`width` a multiple of the tile sort's tile); `src_*` and `dst_*`
            /// do not overlap; `splits` holds `ceil(n / MERGE_TILE)` splits of this pass; the
            /// launch's tiles lie below `ceil(n / MERGE_TILE)`.
            $merge,
            $args,
            |args| {
                let MergePassArgs {
                    src_keys,
                    dst_keys,
                    src_values,
                    dst_values,
                    edges,
                    splits,
                    n,
                    width,
                    first_tile,
                    decode,
                } = args;
                let (src_keys, dst_keys) = (src_keys as *mut $key, dst_keys as *mut $key);
                let (src_values, dst_values) =
                    (src_values as *mut $value, dst_values as *mut $value);
                let (edges, splits) = (edges as *mut $key, splits as *const u64);
                let buf = buffers(src_keys, dst_keys, src_values, dst_values, edges);
                let tile = first_tile + u64::from(block_idx_x());
                // SAFETY: the launch contract.
                unsafe { merge_block(buf, splits, n, Pairing::Pass { width }, tile, decode) }
            },
        );
    };
}

macro_rules! merge_sort_tiles_compact {
    ($name:ident($args:path), $key:ty, $value:ty) => {
        sort_tiles_entry!(
            /// The compact tile sort (`tuning::merge_sort_compact`, [`SortTilesArgs`]): as the
            /// tile sort, in tiles of `MERGE_TILE` keys, whose values stay in device memory:
            /// each output's value is read from `src_values` by its slot (`sort_tile` without
            /// `STAGED`).
            ///
            /// Launch: `ceil(n / MERGE_TILE)` blocks of `MERGE_THREADS` threads,
            /// `compact_merge_sort_shared_bytes(size_of::<key>(), size_of::<value>())` bytes of
            /// dynamic shared memory.
            ///
            /// # Safety
            /// As the tile sort.
            $name,
            $args,
            |args| {
                let SortTilesArgs {
                    src_keys,
                    dst_keys,
                    src_values,
                    dst_values,
                    edges,
                    n,
                    encode,
                    decode,
                } = args;
                let (src_keys, dst_keys) = (src_keys as *mut $key, dst_keys as *mut $key);
                let (src_values, dst_values) =
                    (src_values as *mut $value, dst_values as *mut $value);
                let buf = buffers(
                    src_keys,
                    dst_keys,
                    src_values,
                    dst_values,
                    edges as *mut $key,
                );
                let tile = u64::from(block_idx_x());
                // SAFETY: the launch contract: this block owns its tile and the shared memory.
                unsafe {
                    sort_tile::<$key, $value, _, VT, false>(
                        &BLOCK,
                        MERGE_THREADS,
                        dynamic_shared::<Align16>() as *mut u8,
                        buf,
                        n,
                        tile,
                        encode,
                        decode,
                        MERGE_TILE,
                    )
                }
            },
        );
    };
}

macro_rules! merge_partition {
    ($name:ident($args:path), $key:ty) => {
        partition_entry!(
            /// The merge-path splits of a merge pass over runs of `width` keys
            /// ([`PartitionArgs`]): `splits[k]` = the first key of the first run that output
            /// tile `k` (of `tile` keys: `MERGE_TILE` for the stable passes,
            /// `NETWORK_MERGE_TILE` for the keys-only ones) takes, found with the help of the
            /// `edges` the step before recorded (`crate::merge::partition_pass`), each by one
            /// thread (`Probes`: `PARTITION_EDGE_PROBES` probes per round over the edges, which
            /// the L2 cache holds, `PARTITION_KEY_PROBES` over the keys): a warp's 33-ary search
            /// reads ≈ 3 KB of scattered sectors per split, which at 2^28 keys made the
            /// partition bound by device memory (docs/decisions.md, "Merge partition").
            ///
            /// Launch: a thread per split, `ceil(n / tile)` threads (extra threads return) in
            /// blocks of `PARTITION_THREADS`.
            ///
            /// # Safety
            /// `keys` holds `n` device keys; `splits` has room for `ceil(n / tile)` splits;
            /// `edges` holds the edges of the keys' `ceil(n / tile)` tiles, as the step that
            /// wrote the keys recorded them.
            $name,
            $args,
            |args| {
                let PartitionArgs {
                    keys,
                    edges,
                    splits,
                    n,
                    width,
                    tile,
                } = args;
                let (keys, edges) = (keys as *const $key, edges as *const $key);
                let splits = splits as *mut u64;
                // SAFETY: the launch contract.
                unsafe {
                    partition_unit(
                        keys,
                        splits,
                        n,
                        Pairing::Pass { width },
                        tile,
                        global_thread_x(),
                        edges,
                        (
                            &Probes::<PARTITION_EDGE_PROBES>,
                            &Probes::<PARTITION_KEY_PROBES>,
                        ),
                    )
                }
            },
        );
    };
}

macro_rules! merge_pass_network {
    ($name:ident($args:path), $key:ty) => {
        network_merge_entry!(
            /// One keys-only merge pass over runs of `width` keys ([`NetworkMergeArgs`]): output
            /// tile `first_tile + blockIdx.x` (of `NETWORK_MERGE_TILE` keys) merges its slices
            /// of two runs (from `splits`, written by the partition kernel of the same pass)
            /// with a bitonic network (`crate::merge::network`), from `src_keys` into
            /// `dst_keys`, keys through the inverse of `decode`, and records its first and last
            /// (encoded) key in `edges`. Each block first has the L2 cache fetch the slices of
            /// tile `tile + ahead` (0: none; `tuning::prefetch_ahead_tiles`), which a later
            /// block merges.
            ///
            /// Launch: up to `ceil(n / NETWORK_MERGE_TILE) − first_tile` blocks of
            /// `NETWORK_MERGE_THREADS` threads, `network_merge_shared_bytes(size_of::<key>())`
            /// bytes of dynamic shared memory.
            ///
            /// # Safety
            /// `src_keys` and `dst_keys` hold `n` device keys and do not overlap; `width` is a
            /// multiple of `NETWORK_MERGE_TILE`; `splits` holds `ceil(n / NETWORK_MERGE_TILE)`
            /// splits of this pass, `edges` room for as many pairs of keys; the launch's tiles
            /// lie below `ceil(n / NETWORK_MERGE_TILE)`.
            $name,
            $args,
            |args| {
                let NetworkMergeArgs {
                    src_keys,
                    dst_keys,
                    edges,
                    splits,
                    n,
                    width,
                    first_tile,
                    ahead,
                    decode,
                } = args;
                let (src_keys, dst_keys) = (src_keys as *mut $key, dst_keys as *mut $key);
                let (edges, splits) = (edges as *mut $key, splits as *const u64);
                let none = core::ptr::null_mut::<()>();
                let buf = buffers(src_keys, dst_keys, none, none, edges);
                let tile = first_tile + u64::from(block_idx_x());
                // SAFETY: the launch contract.
                unsafe {
                    network::merge_tile(
                        &CudaBlock::<NETWORK_MERGE_THREADS>,
                        dynamic_shared::<$key>(),
                        buf,
                        splits,
                        n,
                        Pairing::Pass { width },
                        (tile, ahead),
                        decode,
                    )
                }
            },
        );
    };
}

macro_rules! merge_two_partition {
    ($partition:ident($args:path), $key:ty) => {
        two_partition_entry!(
            /// The merge-path splits of the stable merge of two sorted runs, A = `keys[..a_len]`
            /// and B = `keys[a_len..n]` ([`TwoPartitionArgs`]): `splits[k]` = the first key of
            /// A that output tile `k` (of `MERGE_TILE` keys) takes.
            ///
            /// Launch: as the merge-pass partition.
            ///
            /// # Safety
            /// `keys` holds `n >= a_len` device keys; `splits` has room for
            /// `ceil(n / MERGE_TILE)` splits.
            $partition,
            $args,
            |args| {
                let TwoPartitionArgs {
                    keys,
                    splits,
                    n,
                    a_len,
                } = args;
                let (keys, splits) = (keys as *const $key, splits as *mut u64);
                // SAFETY: the launch contract.
                unsafe {
                    partition_unit(
                        keys,
                        splits,
                        n,
                        Pairing::Two { a_len },
                        u64::from(MERGE_TILE),
                        global_thread_x() / u64::from(SEARCH_LANES),
                        core::ptr::null(),
                        (&WarpVote, &WarpVote),
                    )
                }
            },
        );
    };
}

macro_rules! merge_two {
    ($merge:ident($args:path), $key:ty) => {
        merge_two_entry!(
            /// The stable merge of two sorted runs of keys, A = `src[..a_len]` and
            /// B = `src[a_len..n]`, into `dst[..n]`, keys through the inverse of `decode`
            /// ([`MergeTwoArgs`]).
            ///
            /// Launch: `ceil(n / MERGE_TILE)` blocks of `MERGE_THREADS` threads,
            /// `merge_shared_bytes(MERGE_TILE, size_of::<key>(), 0)` bytes of dynamic shared
            /// memory.
            ///
            /// # Safety
            /// `src` and `dst` hold `n` keys and do not overlap; `splits` holds the splits of
            /// the partition kernel for the same runs.
            $merge,
            $args,
            |args| {
                let MergeTwoArgs {
                    src,
                    dst,
                    splits,
                    n,
                    a_len,
                    decode,
                } = args;
                let (src, dst) = (src as *mut $key, dst as *mut $key);
                let splits = splits as *const u64;
                let none = core::ptr::null_mut::<()>();
                let buf = buffers(src, dst, none, none, core::ptr::null_mut());
                let tile = u64::from(block_idx_x());
                // SAFETY: the launch contract.
                unsafe { merge_block(buf, splits, n, Pairing::Two { a_len }, tile, decode) }
            },
        );
    };
}

kernel_list!(merge, define);
