//! Bitonic sort kernels for 32- and 64-bit keys. The host launches them in the order of
//! [`crate::bitonic::schedule`]: one tile sort, then per larger stage some global passes and
//! one tile merge.

use crate::bitonic::{FusedPass, fused_pass_unit};
use crate::block::tile::Tile;
use crate::gpu::{block_idx_x, dynamic_shared, global_thread_x};
use crate::tuning::TILE_KEYS;

/// The tile of this block: its first key and how many keys it holds.
#[inline(always)]
fn this_tile(n: u64) -> (u64, u32) {
    let base = u64::from(block_idx_x()) * u64::from(TILE_KEYS);
    (base, (n - base).min(u64::from(TILE_KEYS)) as u32)
}

macro_rules! bitonic_kernels {
    ($key:ty, $sort_tiles:ident, $merge_tiles:ident, [$($global:ident: $group:literal, $mirror:literal),*]) => {
        /// Sorts each tile of `TILE_KEYS` keys ascending in shared memory, applying the key map
        /// `encode` as keys are loaded and the inverse of `decode` as they are stored
        /// (`decode` = `IDENTITY` unless this is the only pass).
        ///
        /// Launch: `ceil(n / TILE_KEYS)` blocks of `TILE_THREADS` threads,
        /// `tile_shared_bytes(size_of::<key>())` bytes of dynamic shared memory.
        ///
        /// # Safety
        /// `keys` points to `n` device keys; the launch shape is as above.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $sort_tiles(keys: *mut $key, n: u64, encode: u32, decode: u32) {
            let (base, len) = this_tile(n);
            // SAFETY: the launch contract gives this block keys[base..base+len] and the shared
            // memory.
            let mut tile = unsafe { Tile::new(keys, dynamic_shared::<$key>(), base, len) };
            tile.load(encode);
            tile.sort();
            tile.store(decode);
        }

        /// Finishes stage `2^stage > TILE_KEYS` inside each tile: all its steps of distance below
        /// `TILE_KEYS`. Stores through the inverse of `decode` (`IDENTITY` unless it is the last
        /// pass).
        ///
        /// Launch: as the tile sort.
        ///
        /// # Safety
        /// As the tile sort.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $merge_tiles(keys: *mut $key, n: u64, decode: u32) {
            let (base, len) = this_tile(n);
            // SAFETY: as in the tile sort.
            let mut tile = unsafe { Tile::new(keys, dynamic_shared::<$key>(), base, len) };
            tile.load(crate::keys::IDENTITY);
            tile.merge();
            tile.store(decode);
        }

        $(
            /// A global pass fusing `log2(group)` steps of one stage: the steps of distance
            /// 2^top, 2^(top−1), …; the first is the stage's mirrored step if `$mirror`.
            ///
            /// Launch: `FusedPass::units(n)` threads (extra ones return) in blocks of
            /// `GLOBAL_THREADS`.
            ///
            /// # Safety
            /// `keys` points to `n` device keys; `top < ceil_log2(n)`.
            #[unsafe(no_mangle)]
            pub unsafe extern "gpu-kernel" fn $global(keys: *mut $key, n: u64, top: u32) {
                let steps = ($group as u32).trailing_zeros();
                let pass = FusedPass { top, steps, mirror: $mirror };
                let unit = global_thread_x();
                if unit < pass.units(n) {
                    // SAFETY: units of one pass own disjoint keys (see `FusedPass`).
                    unsafe { fused_pass_unit::<$key, $group>(keys, n, pass, unit) }
                }
            }
        )*
    };
}

bitonic_kernels!(u32, bitonic_sort_tiles_u32, bitonic_merge_tiles_u32, [
    bitonic_global_1_u32: 2, false,
    bitonic_global_2_u32: 4, false,
    bitonic_global_3_u32: 8, false,
    bitonic_global_4_u32: 16, false,
    bitonic_global_mirror_1_u32: 2, true,
    bitonic_global_mirror_2_u32: 4, true,
    bitonic_global_mirror_3_u32: 8, true
]);
bitonic_kernels!(u64, bitonic_sort_tiles_u64, bitonic_merge_tiles_u64, [
    bitonic_global_1_u64: 2, false,
    bitonic_global_2_u64: 4, false,
    bitonic_global_3_u64: 8, false,
    bitonic_global_4_u64: 16, false,
    bitonic_global_mirror_1_u64: 2, true,
    bitonic_global_mirror_2_u64: 4, true,
    bitonic_global_mirror_3_u64: 8, true
]);
