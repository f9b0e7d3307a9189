//! Bitonic sort kernels for 32- and 64-bit keys. Up to
//! [`TINY_SORT_MAX_KEYS`](crate::tuning::TINY_SORT_MAX_KEYS) keys, the host launches the
//! one-block tiny sort; up to [`SMALL_SORT_MAX_KEYS`](crate::tuning::SMALL_SORT_MAX_KEYS) keys,
//! the one-launch small sort; above, the window passes of [`crate::bitonic::window::windows`] (a tile
//! sort, then `bitonic_window_*` launches).

use crate::bitonic::block::small::SmallSort;
use crate::bitonic::block::window::{WindowSort, sort_tile, tile_edge};
use crate::bitonic::small::{SmallArgs, SmallPlan, TinyArgs, small_entry, tiny_entry};
use crate::bitonic::window::{
    BlockWindow, PROGRAMS, RowTilesArgs, WindowArgs, WindowProgramArgs, WindowTilesArgs,
    row_tiles_entry, window_entry, window_program_entry, window_tiles_entry,
};
use crate::gpu::{CudaTeam, block_idx_x, dynamic_shared, grid_sync, sync_threads, thread_idx_x};
use crate::kernels::{define, kernel_list};
use crate::tuning::{COMPACT_WINDOW_LOG2, NETWORK_MERGE_TILE, ROW_TILE_LOG2, WINDOW_LOG2};

macro_rules! bitonic_small {
    ($small:ident($args:path), $key:ty) => {
        small_entry!(
            /// Sorts `keys[..n]` ascending in one launch (`2 ≤ n ≤ 2^SMALL_MAX_LOG2`,
            /// [`SmallArgs`]): the windows of `SmallPlan::for_len(n)` with a grid barrier
            /// between each two (`crate::bitonic::small`, `crate::bitonic::block::small`). Keys go through the
            /// key map `encode` when first loaded and through the inverse of `decode` when last
            /// stored.
            ///
            /// Launch: `plan.blocks()` blocks of `plan.threads()` threads, cooperative when
            /// there are several blocks (`cuLaunchCooperativeKernel`: they wait for each other,
            /// so all must be resident); `small_shared_bytes(plan.tile_log2, size_of::<key>())`
            /// bytes of dynamic shared memory.
            ///
            /// # Safety
            /// `keys` holds `n` device keys, `scratch` `2^plan.log2` (when there are several
            /// blocks); `barrier` is a device word, a multiple of `small::BARRIER_STRIDE`, used
            /// by no concurrent launch; the launch is as above.
            $small,
            $args,
            |args| {
                let SmallArgs {
                    keys,
                    scratch,
                    barrier,
                    n,
                    encode,
                    decode,
                } = args;
                let (keys, scratch) = (keys as *mut $key, scratch as *mut $key);
                let barrier = barrier as *mut u32;
                let plan = SmallPlan::for_len(u64::from(n));
                // SAFETY: the launch gives each block a tile of shared memory and
                // plan.threads() threads.
                let mut sort = unsafe {
                    SmallSort::new(CudaTeam::new(dynamic_shared::<$key>()), plan, block_idx_x())
                };
                let mut w = 0;
                while w < plan.windows() {
                    if w > 0 {
                        // SAFETY: a cooperative launch of plan.blocks() blocks, all of whose
                        // threads get here once per window.
                        unsafe { grid_sync(barrier, plan.blocks()) };
                    }
                    // SAFETY: the launch contract; the barrier ends window w − 1 everywhere.
                    unsafe { sort.window(w, keys, scratch, n, encode, decode) };
                    w += 1;
                }
            },
        );
    };
}

macro_rules! bitonic_tiny {
    ($tiny:ident($args:path), $key:ty) => {
        tiny_entry!(
            /// Sorts `keys[..n]` ascending in place (`2 ≤ n ≤ TINY_SORT_MAX_KEYS`,
            /// [`TinyArgs`]) in one block, each thread holding `TINY_RUN` keys
            /// (`crate::bitonic::block::tiny`). Keys go through the key map `encode` as they are loaded
            /// and through the inverse of `decode` as they are stored.
            ///
            /// Launch: one block of `tiny_threads(n)` threads, `tiny_shared_bytes(n,
            /// size_of::<key>())` bytes of dynamic shared memory.
            ///
            /// # Safety
            /// `keys` holds `n` device keys; the launch is as above.
            $tiny,
            $args,
            |args| {
                let TinyArgs {
                    keys,
                    n,
                    encode,
                    decode,
                } = args;
                // SAFETY: the launch contract: the block's threads and shared memory fit `n`.
                unsafe {
                    let mut team = CudaTeam::new(dynamic_shared::<$key>());
                    crate::bitonic::block::tiny::sort(
                        &mut team,
                        keys as *mut $key,
                        n,
                        (encode, decode),
                    );
                }
            },
        );
    };
}

/// The body of the window kernels: the window from its fields, then this block's part of it
/// with `$key` keys and `$offset` positions, its team over the block's dynamic shared memory,
/// through `WindowSort::$run` (`run`, or `run_unrolled` where the program is a constant), with
/// blocks of 2^`$log2` keys (`WINDOW_LOG2`, or `COMPACT_WINDOW_LOG2` for the compact kernels). A
/// macro, not a function: the kernels' code is exactly what it was when written out in each.
macro_rules! window_block {
    (
        $key:ty, $log2:expr, $offset:ty, $run:ident,
        ($keys:ident, $n:ident, $decode:ident, $ahead:ident),
        ($($field:ident),*)
    ) => {{
        let win = BlockWindow { tile_log2: $log2, $($field),* };
        // SAFETY: the launch contract: the block's threads and shared memory, and keys no
        // other block touches.
        unsafe {
            let team = CudaTeam::new(dynamic_shared::<$key>());
            let block = u64::from(block_idx_x());
            let mut sort = WindowSort::new(team, win, block).prefetching($ahead);
            sort.$run::<$offset>($keys, $n, $decode);
        }
    }};
}

macro_rules! bitonic_window_tiles {
    ($tiles:ident($args:path), $key:ty, $log2:expr) => {
        window_tiles_entry!(
            /// The tile sort of the window passes ([`WindowTilesArgs`]): block b sorts keys
            /// `b·2^L ..` of `src` (the last tile may be short) ascending into the same
            /// positions of `dst` (which may be `src`), through the key map `encode` as they
            /// are loaded and the inverse of `decode` as they are stored (`IDENTITY` unless this
            /// is the only pass). The small sort's window 0 on one tile
            /// (`crate::bitonic::block::window::sort_tile`). Unless `edges` is null, it then records the
            /// first and last key stored of each `NETWORK_MERGE_TILE` keys (keys `2t`, `2t + 1`
            /// for piece `t` of the launch's keys), for the partition of the keys-only merge
            /// sort's first pass.
            ///
            /// L is `WINDOW_LOG2`, or `COMPACT_WINDOW_LOG2` for the compact kernel
            /// (`tuning::window_log2`).
            ///
            /// `stages` below L stops the network after that stage: every aligned 2^`stages`
            /// keys come out ascending rather than the tile, which sorts the rows of a matrix of
            /// keys alone (`segments::row_tile_stages`). The whole sort (`stages` ≥ L) runs its
            /// own copy of the network, every stage a constant, as fast as with no such
            /// argument.
            ///
            /// Launch: `ceil(n / 2^L)` blocks of `window_threads(L)` threads,
            /// `small_shared_bytes(L, size_of::<key>())` bytes of dynamic shared memory.
            ///
            /// # Safety
            /// `src` and `dst` hold `n` device keys; `edges` is null or has room for
            /// `2 · ceil(n / NETWORK_MERGE_TILE)` keys; `stages` ≥ `SMALL_RUN_LOG2`; the launch
            /// is as above.
            $tiles,
            $args,
            |args| {
                let WindowTilesArgs {
                    src,
                    dst,
                    edges,
                    n,
                    encode,
                    decode,
                    stages,
                } = args;
                let (src, dst) = (src as *const $key, dst as *mut $key);
                let edges = edges as *mut $key;
                let tile = u64::from(block_idx_x());
                // SAFETY: the launch gives each block its tile, window_threads(L) threads and a
                // tile of shared memory; stages ≥ SMALL_RUN_LOG2.
                unsafe {
                    let team = CudaTeam::new(dynamic_shared::<$key>());
                    let stages = if stages >= $log2 { $log2 } else { stages };
                    if stages == $log2 {
                        sort_tile(team, ($log2, $log2), (src, dst), n, tile, (encode, decode));
                    } else {
                        sort_tile(team, ($log2, stages), (src, dst), n, tile, (encode, decode));
                    }
                }
                if !edges.is_null() {
                    // The block's stores are visible to its threads after the barrier.
                    sync_threads();
                    let piece = u64::from(NETWORK_MERGE_TILE);
                    if let Some((slot, at)) = tile_edge($log2, piece, n, tile, thread_idx_x()) {
                        // SAFETY: at < n; slot < 2 · ceil(n / piece).
                        unsafe { *edges.add(slot as usize) = *dst.add(at as usize) };
                    }
                }
            },
        );
    };
}

macro_rules! bitonic_row_tiles {
    ($name:ident($args:path), $key:ty, $log2:expr) => {
        row_tiles_entry!(
            /// Sorts every aligned row of 2^`row_log2` keys of `keys[..n]` ascending, in place
            /// (`segments::row_tile_stages`, [`RowTilesArgs`]): the tile sort of tiles of 2^L
            /// keys (L = `ROW_TILE_LOG2`) stopped after stage `row_log2`, through the key map
            /// `map` as the keys are loaded and back as they are stored.
            ///
            /// Launch: `ceil(n / 2^L)` blocks of `window_threads(L)` threads,
            /// `small_shared_bytes(L, size_of::<key>())` bytes of dynamic shared memory.
            ///
            /// # Safety
            /// `keys` holds `n` device keys; `SMALL_RUN_LOG2 ≤ row_log2 ≤ L`; the launch is as
            /// above.
            $name,
            $args,
            |args| {
                let RowTilesArgs {
                    keys,
                    n,
                    map,
                    row_log2,
                } = args;
                let keys = keys as *mut $key;
                let tile = u64::from(block_idx_x());
                // SAFETY: the launch gives each block its tile, window_threads(L) threads and a
                // tile of shared memory; the caller's row_log2.
                unsafe {
                    let team = CudaTeam::new(dynamic_shared::<$key>());
                    sort_tile(team, ($log2, row_log2), (keys, keys), n, tile, (map, map));
                }
            },
        );
    };
}

macro_rules! bitonic_window {
    ($window:ident($args:path), $key:ty, $log2:expr, $offset:ty) => {
        window_entry!(
            /// One window pass over `keys[..n]` (`crate::bitonic::window`, [`WindowArgs`]): each block
            /// loads its 2^L keys (as the tile sort), runs the window's steps in registers,
            /// shuffles and shared memory, and stores them back in place, the last window
            /// through the inverse of `decode` (`IDENTITY` before). First, unless `ahead` is 0,
            /// each block asks the L2 cache for the keys of block `blockIdx.x + ahead`, which a
            /// later block sorts (`tuning::prefetch_ahead_tiles`). The other arguments are the
            /// fields of `WindowPass::block_window`. Positions are `$offset` offsets from each
            /// block's high bits: the `u32` kernel takes only windows that are
            /// `BlockWindow::narrow`.
            ///
            /// Launch: `WindowPass::blocks(n)` blocks of `window_threads(L)` threads,
            /// `small_shared_bytes(L, size_of::<key>())` bytes of dynamic shared memory.
            ///
            /// # Safety
            /// `keys` holds `n` device keys; the arguments come from a window of
            /// `windows(n, L, WINDOW_PASSENGERS)` (or its restriction to a chunk,
            /// launched on the chunk), run in order; the launch is as above.
            $window,
            $args,
            |args| {
                let WindowArgs {
                    keys,
                    n,
                    fixed,
                    mirror,
                    span,
                    load_map,
                    store_map,
                    plan,
                    phases,
                    steps,
                    decode,
                    ahead,
                } = args;
                let keys = keys as *mut $key;
                window_block! {
                    $key, $log2, $offset, run,
                    (keys, n, decode, ahead),
                    (fixed, mirror, span, load_map, store_map, plan, phases, steps)
                }
            },
        );
    };
}

macro_rules! bitonic_window_program {
    ($name:ident($args:path), $key:ty, $i:literal) => {
        window_program_entry!(
            /// The window pass of `bitonic_window_u32` (`_u64`) for windows whose program
            /// (`plan`, `phases`, `steps`) is `PROGRAMS[i]`, with that program a constant: its
            /// phases written out, every layout, step and switch straight-line code. The
            /// arguments are the window's, less the program ([`WindowProgramArgs`]).
            ///
            /// # Safety
            /// As `bitonic_window_u32` (`_u64`), for a window whose `BlockWindow::program` is
            /// `Some(i)`.
            $name,
            $args,
            |args| {
                let WindowProgramArgs {
                    keys,
                    n,
                    fixed,
                    mirror,
                    span,
                    load_map,
                    store_map,
                    decode,
                    ahead,
                } = args;
                let keys = keys as *mut $key;
                let (plan, phases, steps) = PROGRAMS[$i];
                window_block! {
                    $key, WINDOW_LOG2, u32, run_unrolled,
                    (keys, n, decode, ahead),
                    (fixed, mirror, span, load_map, store_map, plan, phases, steps)
                }
            },
        );
    };
}

kernel_list!(bitonic, define);
