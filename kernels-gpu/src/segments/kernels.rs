//! Segmented sort kernels ([`crate::segments`]): many rows or segments, each sorted in one
//! block by a bitonic network, or short ones each in one thread's registers. One kernel per key
//! width sorts keys alone; the indexed kernels sort each key with its position, for argsorts
//! (`indices`) and pairs (`values`, of 4, 8 or 16 bytes, only moved).

use crate::gpu::{
    CudaTeam, atomic_add, block_dim_x, block_idx_x, dynamic_shared, global_thread_x, grid_dim_x,
    lanemask_lt, match_bits, shfl_idx, thread_idx_x,
};
use crate::kernels::{define, kernel_list};
use crate::merge::block::Align16;
use crate::segments::block::{
    Indexed32, Indexed64, RUN, Segments, long_collect, long_gather, long_ids, long_scatter,
    packed_item, packed_key, sort, unpack_item, unpack_key,
};
use crate::segments::radix;
use crate::segments::short;
use crate::segments::{
    GROUP_LENGTHS, GroupArgs, LongCollectArgs, LongGatherArgs, LongIdsArgs, LongScatterArgs,
    LongSegments, PackArgs, RadixArgs, ShortArgs, SortArgs, UnpackArgs, group_entry,
    grouped_length, long_collect_entry, long_gather_entry, long_ids_entry, long_scatter_entry,
    pack_entry, radix_entry, short_entry, sort_entry, tile_log2, unpack_entry,
};
use crate::tuning::SHORT_SEGMENTS_THREADS;

/// A grid-stride loop over `0 .. all`: any grid of any block size.
#[inline(always)]
fn grid_stride(all: u64, mut each: impl FnMut(u64)) {
    let stride = u64::from(block_dim_x()) * u64::from(grid_dim_x());
    let mut i = global_thread_x();
    while i < all {
        each(i);
        i += stride;
    }
}

/// The segments of a launch over padded rows, of keys alone (no values, no indices).
#[inline(always)]
fn keys_alone<K>(args: PackArgs) -> Segments<K, u32> {
    Segments {
        keys: args.keys as *mut K,
        values: core::ptr::null_mut(),
        indices: core::ptr::null_mut(),
        count: args.count,
        row_len: args.row_len,
        offsets: args.offsets as *const u64,
        list: args.list as *const u32,
        row_log2: args.row_log2,
        map: args.map,
    }
}

macro_rules! segments_sort {
    ($name:ident($args:path), $key:ty, $element:ty, $value:ty) => {
        sort_entry!(
            /// Sorts `count` segments in place, each in stable order of its keys (encoded with
            /// `map` as they are loaded, decoded as they are stored): rows of `row_len` keys
            /// (`offsets` null; row `i` at `i·row_len`), or `offsets[i] .. offsets[i + 1]` of
            /// segment `list[e]` for entry `e` (`list` null: segment `e`). Every segment has at
            /// most 2^`row_log2` keys. Unless null, `values` are permuted with the keys and
            /// `indices` receive each segment's sorting permutation (indexed kernels only)
            /// ([`SortArgs`]).
            ///
            /// Launch: `blocks(count, row_log2)` blocks of `threads(tile_log2(row_log2))`
            /// threads, `shared_bytes(tile_log2(row_log2), size_of::<element>())` bytes of
            /// dynamic shared memory.
            ///
            /// # Safety
            /// Every segment lies in `keys` (and `values`, `indices`), no two overlap; `list`
            /// holds `count` segment ids; the launch is as above.
            $name,
            $args,
            |args| {
                let SortArgs {
                    keys,
                    values,
                    indices,
                    count,
                    row_len,
                    offsets,
                    list,
                    row_log2,
                    map,
                } = args;
                let seg = Segments {
                    keys: keys as *mut $key,
                    values: values as *mut $value,
                    indices: indices as *mut u32,
                    count,
                    row_len,
                    offsets: offsets as *const u64,
                    list: list as *const u32,
                    row_log2,
                    map,
                };
                let mut held = [[<$value>::default(); RUN]; 1];
                // SAFETY: the launch contract.
                unsafe {
                    let mut team = CudaTeam::<$element, RUN>::new(dynamic_shared::<$element>());
                    sort(
                        &mut team,
                        &seg,
                        tile_log2(row_log2),
                        u64::from(block_idx_x()),
                        &mut held,
                    );
                }
            },
        );
    };
}

macro_rules! segments_group {
    ($name:ident($args:path), $id:ty) => {
        group_entry!(
            /// Groups the segments of `offsets` by padded length for their launches: every
            /// segment `i < segments` that a launch sorts (`grouped_length(len, singles != 0) =
            /// Some(p)`) takes the next entry of its length, `ids[cursors[p]++] = i`
            /// ([`GroupArgs`]). The lanes of a warp whose segments share a length take
            /// consecutive entries in lane order, by one atomic add, so that neighbouring
            /// segments stay neighbours. The order of the warps' turns is free: a launch sorts
            /// each entry's segment on its own. A grid-stride loop over whole warps: any grid of
            /// blocks of a multiple of 32 threads.
            ///
            /// # Safety
            /// `offsets` holds `segments + 1` non-decreasing offsets, `segments < 2^32`;
            /// `cursors` holds `GROUP_LENGTHS` words, each the first free entry of its length in
            /// `ids`, which has room for every segment of that length.
            $name,
            $args,
            |args| {
                let GroupArgs {
                    offsets,
                    segments,
                    singles,
                    cursors,
                    ids,
                } = args;
                let (offsets, cursors) = (offsets as *const u64, cursors as *mut u32);
                let ids = ids as *mut $id;
                // Above every padded length: the code of segments that no launch sorts.
                const NONE: u32 = GROUP_LENGTHS as u32;
                let lane = thread_idx_x() % 32;
                let stride = u64::from(block_dim_x()) * u64::from(grid_dim_x());
                // The warp's first segment: the loop's bound is the same for all its lanes.
                let mut first = global_thread_x() - u64::from(lane);
                while first < segments {
                    let i = first + u64::from(lane);
                    let length = if i < segments {
                        // SAFETY: i + 1 ≤ segments, within the offsets.
                        let len =
                            unsafe { *offsets.add(i as usize + 1) - *offsets.add(i as usize) };
                        grouped_length(len, singles != 0)
                    } else {
                        None
                    };
                    let code = match length {
                        Some(p) => p,
                        None => NONE,
                    };
                    let peers = match_bits::<7>(code);
                    let leader = peers.trailing_zeros();
                    let mut entry = 0;
                    if lane == leader && code != NONE {
                        // SAFETY: code < GROUP_LENGTHS, a word of the cursors.
                        entry =
                            unsafe { atomic_add(cursors.add(code as usize), peers.count_ones()) };
                    }
                    let entry = shfl_idx(entry, leader) + (peers & lanemask_lt()).count_ones();
                    if code != NONE {
                        // SAFETY: the entry lies in the room of its length (the launch
                        // contract).
                        unsafe { *ids.add(entry as usize) = i as $id };
                    }
                    first += stride;
                }
            },
        );
    };
}

macro_rules! segments_short {
    ($name:ident($args:path), $key:ty, $element:ty) => {
        short_entry!(
            /// Sorts `count` segments of at most 2^`row_log2` ≤ 64 keys in place, as
            /// `segments_sort_*` does, each thread 32 positions of them in registers
            /// (`block::short_segments`). Values, unless null, are `value_words` 4-byte words
            /// each, permuted with the keys; indices, unless null, receive each segment's
            /// sorting permutation (indexed kernels only; keys-alone kernels ignore both)
            /// ([`ShortArgs`]).
            ///
            /// Launch: `short_blocks(count, row_log2)` blocks of `SHORT_SEGMENTS_THREADS`
            /// threads, `short_shared_bytes(size_of::<element>())` bytes of dynamic shared
            /// memory.
            ///
            /// # Safety
            /// As `segments_sort_*`; the launch is as above.
            $name,
            $args,
            |args| {
                let ShortArgs {
                    keys,
                    values,
                    indices,
                    count,
                    row_len,
                    offsets,
                    list,
                    row_log2,
                    map,
                    value_words,
                } = args;
                let seg = Segments {
                    keys: keys as *mut $key,
                    values: values as *mut u32,
                    indices: indices as *mut u32,
                    count,
                    row_len,
                    offsets: offsets as *const u64,
                    list: list as *const u32,
                    row_log2,
                    map,
                };
                let mut held = [[0u32; short::RUN]; 1];
                // SAFETY: the launch contract.
                unsafe {
                    let mut team =
                        CudaTeam::<$element, { short::RUN }>::new(dynamic_shared::<$element>());
                    short::sort(
                        &mut team,
                        &seg,
                        SHORT_SEGMENTS_THREADS,
                        u64::from(block_idx_x()),
                        value_words,
                        &mut held,
                    );
                }
            },
        );
    };
}

// The radix kernels' blocks, per padded length, are the arms of their `match`.
const _: () = assert!(
    *crate::segments::RADIX_ROW_LOG2.start() == 9 && *crate::segments::RADIX_ROW_LOG2.end() == 13
);

macro_rules! segments_radix {
    ($name:ident($args:path), $key:ty, $indexed:tt) => {
        radix_entry!(
            /// Sorts `count` segments, each in stable order of its keys, as `segments_sort_*`
            /// does, one segment per block by an LSD radix sort of its keys held in registers
            /// (`block::segment_radix`): the sorted keys go to the same places of `sorted_keys`
            /// (`keys` to sort in place; null: not written, for argsorts of keys left as they
            /// are). Indexed kernels write each segment's sorting permutation to `indices` and
            /// permute `values` (`value_words` 4-byte words each) unless null; the keys-alone
            /// kernels ignore both ([`RadixArgs`]).
            ///
            /// Launch: `count` blocks of `radix_threads(row_log2)` threads (`row_log2` in
            /// `RADIX_ROW_LOG2`), `radix_shared_bytes(row_log2, size_of::<key>(), indexed)`
            /// bytes of dynamic shared memory.
            ///
            /// # Safety
            /// As `segments_sort_*`; `sorted_keys` as long as `keys`, or null; the launch is as
            /// above.
            $name,
            $args,
            |args| {
                let RadixArgs {
                    keys,
                    sorted_keys,
                    values,
                    indices,
                    count,
                    row_len,
                    offsets,
                    list,
                    row_log2,
                    map,
                    value_words,
                } = args;
                let sorted_keys = sorted_keys as *mut $key;
                let seg = Segments {
                    keys: keys as *mut $key,
                    values: values as *mut u32,
                    indices: indices as *mut u32,
                    count,
                    row_len,
                    offsets: offsets as *const u64,
                    list: list as *const u32,
                    row_log2,
                    map,
                };
                let e = u64::from(block_idx_x());
                let shared = dynamic_shared::<Align16>() as *mut u8;
                // SAFETY: the launch contract; the block has the row's threads.
                unsafe {
                    match row_log2 {
                        9 => radix::sort::<$key, $indexed, 32>(
                            &seg,
                            sorted_keys,
                            e,
                            value_words,
                            shared,
                        ),
                        10 => radix::sort::<$key, $indexed, 64>(
                            &seg,
                            sorted_keys,
                            e,
                            value_words,
                            shared,
                        ),
                        11 => radix::sort::<$key, $indexed, 128>(
                            &seg,
                            sorted_keys,
                            e,
                            value_words,
                            shared,
                        ),
                        12 => radix::sort::<$key, $indexed, 256>(
                            &seg,
                            sorted_keys,
                            e,
                            value_words,
                            shared,
                        ),
                        _ => radix::sort::<$key, $indexed, 512>(
                            &seg,
                            sorted_keys,
                            e,
                            value_words,
                            shared,
                        ),
                    }
                }
            },
        );
    };
}

macro_rules! segments_pack {
    ($name:ident($args:path), $key:ty, $packed:ty, $item:ident) => {
        pack_entry!(
            /// Writes `packed[g] = $item(g)` for every position `g < count·2^row_log2` of the
            /// padded rows of the launch's segments (as `segments_sort_*` describes them, every
            /// one longer than a block sorts): each key, encoded with `map`, +∞ past its
            /// segment's end; above its position in its segment where it sorts with it
            /// (`packed_item`), alone otherwise (`packed_key`) ([`PackArgs`]). A grid-stride
            /// loop: any grid of any block size.
            ///
            /// # Safety
            /// As `segments_sort_*`; `packed` holds `count·2^row_log2` items.
            $name,
            $args,
            |args| {
                let packed = args.packed as *mut $packed;
                let seg = keys_alone::<$key>(args);
                // SAFETY: the launch contract; g < count·2^row_log2.
                grid_stride(args.count << args.row_log2, |g| unsafe {
                    *packed.add(g as usize) = $item(&seg, g)
                });
            },
        );
    };
}

macro_rules! segments_unpack {
    ($name:ident($args:path), $key:ty, $value:ty) => {
        unpack_entry!(
            /// Puts back every position of the sorted padded rows `packed` (`unpack_item`):
            /// keys, decoded with `map`; unless null, each key's position in its segment in
            /// `indices`, and the value of that position, read from `values_in`, in `values`
            /// ([`UnpackArgs`]). A grid-stride loop: any grid of any block size.
            ///
            /// # Safety
            /// As `segments_pack_*`, whose items `packed` holds, sorted row by row; `values_in`
            /// holds the segments' values when `values` is not null, apart from `values`.
            $name,
            $args,
            |args| {
                let UnpackArgs {
                    packed,
                    keys,
                    indices,
                    values,
                    values_in,
                    count,
                    row_len,
                    offsets,
                    list,
                    row_log2,
                    map,
                } = args;
                let (packed, values_in) = (packed as *const u64, values_in as *const $value);
                let seg = Segments {
                    keys: keys as *mut $key,
                    values: values as *mut $value,
                    indices: indices as *mut u32,
                    count,
                    row_len,
                    offsets: offsets as *const u64,
                    list: list as *const u32,
                    row_log2,
                    map,
                };
                // SAFETY: the launch contract; g < count·2^row_log2.
                grid_stride(count << row_log2, |g| unsafe {
                    unpack_item(&seg, packed, values_in, g)
                });
            },
        );
    };
}

macro_rules! segments_unpack_keys {
    ($name:ident($args:path), $key:ty) => {
        pack_entry!(
            /// Puts back every position of the sorted padded rows `packed` (`unpack_key`): the
            /// keys, decoded with `map`, at their segments' positions ([`PackArgs`], the
            /// argument of the packing). A grid-stride loop: any grid of any block size.
            ///
            /// # Safety
            /// As `segments_pack_keys_*`, whose keys `packed` holds, sorted row by row.
            $name,
            $args,
            |args| {
                let packed = args.packed as *const $key;
                let seg = keys_alone::<$key>(args);
                // SAFETY: the launch contract; g < count·2^row_log2.
                grid_stride(args.count << args.row_log2, |g| unsafe {
                    unpack_key(&seg, packed, g)
                });
            },
        );
    };
}

/// The long segments of a launch: rows of `row_len` keys, or (`row_len` 0) the `count`
/// segments of the tables `starts` (`count + 1` compact positions) and `begins` (`count` key
/// indices).
///
/// # Safety
/// Unless `row_len` is not 0, `starts` and `begins` hold `count + 1` and `count` words.
#[inline(always)]
unsafe fn long_segments<'a>(
    row_len: u64,
    starts: *const u64,
    begins: *const u64,
    count: u64,
) -> LongSegments<'a> {
    if row_len != 0 {
        return LongSegments {
            row_len,
            starts: &[],
            begins: &[],
        };
    }
    // SAFETY: the caller's contract.
    unsafe {
        LongSegments {
            row_len,
            starts: core::slice::from_raw_parts(starts, count as usize + 1),
            begins: core::slice::from_raw_parts(begins, count as usize),
        }
    }
}

macro_rules! segments_long_collect {
    ($name:ident($args:path), $key:ty) => {
        long_collect_entry!(
            /// For every compact position `c < all` of the long segments (`long_collect`): its
            /// key into `sorted`, `c` into `from` ([`LongCollectArgs`]). A grid-stride loop: any
            /// grid of any block size.
            ///
            /// # Safety
            /// As `long_segments` and `long_collect`: the segments lie in `keys`, hold
            /// `all ≤ 2^32` keys; `sorted` and `from` hold `all` elements.
            $name,
            $args,
            |args| {
                let LongCollectArgs {
                    keys,
                    sorted,
                    from,
                    all,
                    row_len,
                    starts,
                    begins,
                    count,
                } = args;
                let (keys, sorted) = (keys as *const $key, sorted as *mut $key);
                let from = from as *mut u32;
                // SAFETY: the launch contract.
                let long = unsafe {
                    long_segments(row_len, starts as *const u64, begins as *const u64, count)
                };
                // SAFETY: c < all.
                grid_stride(all, |c| unsafe {
                    long_collect(&long, keys, sorted, from, c)
                });
            },
        );
    };
}

macro_rules! segments_long_ids {
    ($name:ident($args:path), $key:ty) => {
        long_ids_entry!(
            /// For every element `r < all` of the order by key (`long_ids`): the segment of its
            /// compact position `from[r]` into `ids` ([`LongIdsArgs`]). A grid-stride loop.
            ///
            /// # Safety
            /// As `segments_long_collect_*`; `from` holds compact positions, `ids` `all`
            /// elements.
            $name,
            $args,
            |args| {
                let LongIdsArgs {
                    from,
                    ids,
                    all,
                    row_len,
                    starts,
                    begins,
                    count,
                } = args;
                let (from, ids) = (from as *const $key, ids as *mut u32);
                // SAFETY: the launch contract.
                let long = unsafe {
                    long_segments(row_len, starts as *const u64, begins as *const u64, count)
                };
                // SAFETY: r < all.
                grid_stride(all, |r| unsafe { long_ids(&long, from, ids, r) });
            },
        );
    };
}

macro_rules! segments_long_gather {
    ($name:ident($args:path), $key:ty) => {
        long_gather_entry!(
            /// For every compact position `f < all` of the order by (segment, key, position)
            /// (`long_gather`), the element of compact position `from[f]`: unless null, its
            /// position in its segment into `indices`, its key into `placed`, the `words` words
            /// of its value, read from `values`, into `gathered` ([`LongGatherArgs`]). A
            /// grid-stride loop.
            ///
            /// # Safety
            /// As `segments_long_collect_*`, with `from` the compact positions in that order;
            /// `indices` and `values` (`words` words per key) hold the segments; `placed` holds
            /// `all` keys, `gathered` `all·words` words, apart from the keys and values.
            $name,
            $args,
            |args| {
                let LongGatherArgs {
                    from,
                    keys,
                    indices,
                    values,
                    placed,
                    gathered,
                    words,
                    all,
                    row_len,
                    starts,
                    begins,
                    count,
                } = args;
                let (from, keys) = (from as *const u32, keys as *const $key);
                let (indices, values) = (indices as *mut u32, values as *const u32);
                let (placed, gathered) = (placed as *mut $key, gathered as *mut u32);
                // SAFETY: the launch contract.
                let long = unsafe {
                    long_segments(row_len, starts as *const u64, begins as *const u64, count)
                };
                grid_stride(all, |f| {
                    // SAFETY: f < all.
                    unsafe {
                        long_gather(
                            &long, from, keys, indices, values, placed, gathered, words, f,
                        )
                    }
                });
            },
        );
    };
}

macro_rules! segments_long_scatter {
    ($name:ident($args:path), $key:ty) => {
        long_scatter_entry!(
            /// For every compact position `f < all` (`long_scatter`): the key of `placed[f]`
            /// (unless null) and the `words` words of `gathered[f]` (unless `values` is null)
            /// into its place in the segments ([`LongScatterArgs`]). A grid-stride loop.
            ///
            /// # Safety
            /// As `segments_long_gather_*`, after it.
            $name,
            $args,
            |args| {
                let LongScatterArgs {
                    placed,
                    gathered,
                    keys,
                    values,
                    words,
                    all,
                    row_len,
                    starts,
                    begins,
                    count,
                } = args;
                let (placed, gathered) = (placed as *const $key, gathered as *const u32);
                let (keys, values) = (keys as *mut $key, values as *mut u32);
                // SAFETY: the launch contract.
                let long = unsafe {
                    long_segments(row_len, starts as *const u64, begins as *const u64, count)
                };
                grid_stride(all, |f| {
                    // SAFETY: f < all.
                    unsafe { long_scatter(&long, placed, gathered, keys, values, words, f) }
                });
            },
        );
    };
}

kernel_list!(segments, define);
