//! Segmented sort kernels ([`crate::segments`]): many rows or segments, each sorted in one
//! block by a bitonic network, or short ones each in one thread's registers. One kernel per key
//! width sorts keys alone; the indexed kernels sort each key with its position, for argsorts
//! (`indices`) and pairs (`values`, of 4, 8 or 16 bytes, only moved).

use crate::block::segments::{Indexed32, Indexed64, RUN, Segments, packed_item, sort, unpack_item};
use crate::block::short_segments;
use crate::gpu::{CudaTeam, block_dim_x, block_idx_x, dynamic_shared, global_thread_x, grid_dim_x};
use crate::segments::tile_log2;
use crate::tuning::SHORT_SEGMENTS_THREADS;

macro_rules! segments_sort {
    ($name:ident, $key:ty, $element:ty, $value:ty) => {
        /// Sorts `count` segments in place, each in stable order of its keys (encoded with
        /// `map` as they are loaded, decoded as they are stored): rows of `row_len` keys
        /// (`offsets` null; row `i` at `i·row_len`), or `offsets[i] .. offsets[i + 1]` of
        /// segment `list[e]` for entry `e` (`list` null: segment `e`). Every segment has at most
        /// 2^`row_log2` keys. Unless null, `values` are permuted with the keys and `indices`
        /// receive each segment's sorting permutation (indexed kernels only).
        ///
        /// Launch: `blocks(count, row_log2)` blocks of `threads(tile_log2(row_log2))` threads,
        /// `shared_bytes(tile_log2(row_log2), size_of::<element>())` bytes of dynamic shared
        /// memory.
        ///
        /// # Safety
        /// Every segment lies in `keys` (and `values`, `indices`), no two overlap; `list`
        /// holds `count` segment ids; the launch is as above.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "gpu-kernel" fn $name(
            keys: *mut $key,
            values: *mut $value,
            indices: *mut u32,
            count: u64,
            row_len: u64,
            offsets: *const u64,
            list: *const u32,
            row_log2: u32,
            map: u32,
        ) {
            let seg = Segments {
                keys,
                values,
                indices,
                count,
                row_len,
                offsets,
                list,
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
        }
    };
}

macro_rules! segments_short {
    ($name:ident, $key:ty, $element:ty) => {
        /// Sorts `count` segments of at most 2^`row_log2` ≤ 64 keys in place, as
        /// `segments_sort_*` does, each thread 32 positions of them in registers
        /// (`block::short_segments`). Values, unless null, are `value_words` 4-byte words each,
        /// permuted with the keys; indices, unless null, receive each segment's sorting
        /// permutation (indexed kernels only; keys-alone kernels ignore both).
        ///
        /// Launch: `short_blocks(count, row_log2)` blocks of `SHORT_SEGMENTS_THREADS` threads,
        /// `short_shared_bytes(size_of::<element>())` bytes of dynamic shared memory.
        ///
        /// # Safety
        /// As `segments_sort_*`; the launch is as above.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "gpu-kernel" fn $name(
            keys: *mut $key,
            values: *mut u32,
            indices: *mut u32,
            count: u64,
            row_len: u64,
            offsets: *const u64,
            list: *const u32,
            row_log2: u32,
            map: u32,
            value_words: u32,
        ) {
            let seg = Segments {
                keys,
                values,
                indices,
                count,
                row_len,
                offsets,
                list,
                row_log2,
                map,
            };
            let mut held = [[0u32; short_segments::RUN]; 1];
            // SAFETY: the launch contract.
            unsafe {
                let mut team = CudaTeam::<$element, { short_segments::RUN }>::new(
                    dynamic_shared::<$element>(),
                );
                short_segments::sort(
                    &mut team,
                    &seg,
                    SHORT_SEGMENTS_THREADS,
                    u64::from(block_idx_x()),
                    value_words,
                    &mut held,
                );
            }
        }
    };
}

macro_rules! segments_positions {
    ($name:ident, $key:ty) => {
        /// Writes `indices[i] = i` for `i < n`: the positions of a segment that a stable sort of
        /// pairs then permutes (the argsort of segments too long for one block).
        ///
        /// Launch: any grid of any block size (a grid-stride loop).
        ///
        /// # Safety
        /// `indices` holds `n` device words.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(indices: *mut $key, n: u64) {
            let stride = u64::from(block_dim_x()) * u64::from(grid_dim_x());
            let mut i = global_thread_x();
            while i < n {
                // SAFETY: i < n.
                unsafe { *indices.add(i as usize) = i as $key };
                i += stride;
            }
        }
    };
}

macro_rules! segments_pack {
    ($name:ident, $key:ty) => {
        /// Writes `packed[g] = packed_item(g)` for every position `g < count·2^row_log2` of the
        /// padded rows of the launch's segments (as `segments_sort_*` describes them, every one
        /// longer than a block sorts): each key, encoded with `map`, above its position in its
        /// segment, +∞ past its end. A grid-stride loop: any grid of any block size.
        ///
        /// # Safety
        /// As `segments_sort_*`; `packed` holds `count·2^row_log2` items.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "gpu-kernel" fn $name(
            keys: *mut $key,
            packed: *mut u64,
            count: u64,
            row_len: u64,
            offsets: *const u64,
            list: *const u32,
            row_log2: u32,
            map: u32,
        ) {
            let seg = Segments::<$key, u32> {
                keys,
                values: core::ptr::null_mut(),
                indices: core::ptr::null_mut(),
                count,
                row_len,
                offsets,
                list,
                row_log2,
                map,
            };
            let (stride, all) = (
                u64::from(block_dim_x()) * u64::from(grid_dim_x()),
                count << row_log2,
            );
            let mut g = global_thread_x();
            while g < all {
                // SAFETY: the launch contract; g < count·2^row_log2.
                unsafe { *packed.add(g as usize) = packed_item(&seg, g) };
                g += stride;
            }
        }
    };
}

macro_rules! segments_unpack {
    ($name:ident, $key:ty, $value:ty) => {
        /// Puts back every position of the sorted padded rows `packed` (`unpack_item`): keys,
        /// decoded with `map`; unless null, each key's position in its segment in `indices`,
        /// and the value of that position, read from `values_in`, in `values`. A grid-stride
        /// loop: any grid of any block size.
        ///
        /// # Safety
        /// As `segments_pack_*`, whose items `packed` holds, sorted row by row; `values_in`
        /// holds the segments' values when `values` is not null, apart from `values`.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "gpu-kernel" fn $name(
            packed: *const u64,
            keys: *mut $key,
            indices: *mut u32,
            values: *mut $value,
            values_in: *const $value,
            count: u64,
            row_len: u64,
            offsets: *const u64,
            list: *const u32,
            row_log2: u32,
            map: u32,
        ) {
            let seg = Segments {
                keys,
                values,
                indices,
                count,
                row_len,
                offsets,
                list,
                row_log2,
                map,
            };
            let (stride, all) = (
                u64::from(block_dim_x()) * u64::from(grid_dim_x()),
                count << row_log2,
            );
            let mut g = global_thread_x();
            while g < all {
                // SAFETY: the launch contract; g < count·2^row_log2.
                unsafe { unpack_item(&seg, packed, values_in, g) };
                g += stride;
            }
        }
    };
}

kernel_list!(segments, define);
