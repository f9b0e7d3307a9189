//! Launches of the bitonic sort: up to [`TINY_SORT_MAX_KEYS`] keys one block of the tiny sort
//! ([`kernels_gpu::bitonic::block::tiny`]), up to [`SMALL_SORT_MAX_KEYS`] one launch of the small
//! sort ([`kernels_gpu::bitonic::small`]), above that the window passes of
//! [`kernels_gpu::bitonic::window::windows`] (a tile sort, then one launch per window of the network's
//! steps) turned into kernel launches with their grid math, whole or chunk by chunk
//! ([`Chunked`]).

use super::event::Event;
use super::launch::{On, Shape};
use super::modules::{Family, set_shared_attributes};
use super::overlap::ChunkedSort;
use super::{DeviceLimits, prefetch_ahead, resident_blocks};
use crate::error::{CudaContext, Result};
use cust::memory::DeviceBuffer;
use cust::module::Module;
use cust::sys as cuda;
use kernels_gpu::bitonic::block::tiny::tiny_threads;
use kernels_gpu::bitonic::ceil_log2;
use kernels_gpu::bitonic::small::{SmallArgs, SmallPlan, TinyArgs};
use kernels_gpu::bitonic::window::{
    RowTilesArgs, WindowArgs, WindowPass, WindowProgramArgs, WindowTilesArgs, windows, windows_from,
};
use kernels_gpu::kernels::{
    Kernel, bitonic_row_tiles_u32, bitonic_small_u32, bitonic_small_u64, bitonic_tiny_u32,
    bitonic_tiny_u64, bitonic_window_compact_u64, bitonic_window_tiles_compact_u64,
    bitonic_window_tiles_u32, bitonic_window_tiles_u64, bitonic_window_u32, bitonic_window_u64,
    bitonic_window_wide_compact_u64, bitonic_window_wide_u32, bitonic_window_wide_u64,
    window_programs,
};
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::overlap::chunk_ranges;
use kernels_gpu::tuning::{
    OVERLAP_CHUNK, OVERLAP_CHUNK_LOG2, ROW_TILE_LOG2, SMALL_MAX_LOG2, SMALL_SORT_MAX_KEYS,
    SMALL_TILE_LOG2, TINY_SORT_MAX_KEYS, WINDOW_LOG2, WINDOW_PASSENGERS,
    WINDOW_PREFETCH_MAX_BLOCKS_PER_MULTIPROCESSOR, small_shared_bytes, tiny_shared_bytes,
    tiny_sort_max_keys, window_threads,
};
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

/// The small sort's device memory, allocated once per sorter (512 KiB): the scratch through
/// which its blocks exchange keys between windows (2^[`SMALL_MAX_LOG2`] keys of up to 8 bytes)
/// and the grid barrier's arrival counter. Sorts queued on different streams share them one
/// after another: each waits on the device for the event the one before recorded after its
/// launch ([`Workspace::in_turn`]).
pub(super) struct Workspace {
    scratch: DeviceBuffer<u64>,
    barrier: DeviceBuffer<u32>,
    /// Recorded after the latest launch that uses the workspace, on its stream.
    last_use: Mutex<Event>,
}

impl Workspace {
    /// Allocates the scratch and a zeroed counter (the kernels keep it a multiple of
    /// [`kernels_gpu::bitonic::small::BARRIER_STRIDE`]).
    pub(super) fn new() -> Result<Self> {
        // SAFETY: any bits are a valid u64; the kernels write scratch before reading it.
        let scratch = unsafe { DeviceBuffer::uninitialized(1 << SMALL_MAX_LOG2) }
            .context("allocating the small sort's scratch")?;
        let barrier =
            DeviceBuffer::from_slice(&[0u32]).context("allocating the grid barrier's counter")?;
        let last_use = Event::new("the small sort's workspace")?;
        Ok(Workspace {
            scratch,
            barrier,
            last_use: Mutex::new(last_use),
        })
    }

    /// Queues `launch` on `stream` after every launch queued before that uses the workspace,
    /// on any stream, and makes the launches queued after wait for it: the device takes them
    /// in turn; the host never waits.
    fn in_turn(&self, stream: cuda::CUstream, launch: impl FnOnce() -> Result<()>) -> Result<()> {
        let last_use = self.last_use.lock().unwrap_or_else(PoisonError::into_inner);
        // An event never recorded counts as reached, so the first launch does not wait.
        last_use.wait_on(stream, "the small sort before")?;
        launch()?;
        last_use.record(stream, "the small sort's use")
    }
}

/// The kernels for keys of one width.
struct Kernels {
    /// The one-block sort of at most [`TINY_SORT_MAX_KEYS`] keys.
    tiny: Kernel<TinyArgs>,
    /// The one-launch sort of at most [`SMALL_SORT_MAX_KEYS`] keys.
    small: Kernel<SmallArgs>,
    /// The window passes' tile sort.
    window_tiles: Kernel<WindowTilesArgs>,
    /// The tile sort of rows of up to 2^`ROW_TILE_LOG2` keys, if these keys have one (else
    /// the window passes' tile sort takes them).
    row_tiles: Option<Kernel<RowTilesArgs>>,
    /// A window pass whose blocks span less than 2^32 positions (32-bit offsets).
    window: Kernel<WindowArgs>,
    /// A window pass of any span (64-bit positions).
    window_wide: Kernel<WindowArgs>,
    /// Narrow window passes with a constant program, by index into
    /// [`PROGRAMS`](kernels_gpu::bitonic::window::PROGRAMS).
    window_programs: &'static [Kernel<WindowProgramArgs>],
}

const KERNELS_32: Kernels = Kernels {
    tiny: bitonic_tiny_u32,
    small: bitonic_small_u32,
    window_tiles: bitonic_window_tiles_u32,
    row_tiles: Some(bitonic_row_tiles_u32),
    window: bitonic_window_u32,
    window_wide: bitonic_window_wide_u32,
    window_programs: window_programs(4),
};

const KERNELS_64: Kernels = Kernels {
    tiny: bitonic_tiny_u64,
    small: bitonic_small_u64,
    window_tiles: bitonic_window_tiles_u64,
    row_tiles: None,
    window: bitonic_window_u64,
    window_wide: bitonic_window_wide_u64,
    window_programs: window_programs(8),
};

/// The compact window kernels of 8-byte keys, with blocks of 2^`COMPACT_WINDOW_LOG2` keys
/// (no kernels with a constant program).
const KERNELS_64_COMPACT: Kernels = Kernels {
    tiny: bitonic_tiny_u64,
    small: bitonic_small_u64,
    window_tiles: bitonic_window_tiles_compact_u64,
    row_tiles: None,
    window: bitonic_window_compact_u64,
    window_wide: bitonic_window_wide_compact_u64,
    window_programs: &[],
};

/// The kernels of the bitonic sort of `key_bytes`-byte keys on a device of `limits`, and
/// log2 of the keys per block of their window passes
/// ([`kernels_gpu::tuning::window_log2`]).
fn kernels(key_bytes: usize, limits: &DeviceLimits) -> (&'static Kernels, u32) {
    let log2 = limits.window_log2(key_bytes);
    let kernels = match (key_bytes, log2) {
        (8, WINDOW_LOG2) => &KERNELS_64,
        (8, _) => &KERNELS_64_COMPACT,
        _ => &KERNELS_32,
    };
    (kernels, log2)
}

/// The block of the tile sorts and window passes over tiles of 2^`log2` keys of `key_bytes`:
/// `(threads, dynamic shared bytes)`.
fn tile_block(log2: u32, key_bytes: usize) -> (u32, u32) {
    (
        window_threads(log2),
        small_shared_bytes(log2, key_bytes as u32),
    )
}

/// Blocks of a tile sort of `n` keys in tiles of 2^`log2`.
fn tiles(n: u64, log2: u32) -> u32 {
    u32::try_from(n.div_ceil(1 << log2)).expect("MAX_KEYS keeps grids below 2^32 blocks")
}

/// Every launch shape of the bitonic sort's kernels on a device of `limits`, as
/// `(kernel, threads, dynamic shared bytes)`, the largest of each kernel: what `configure_*`
/// set, and what the tests check against the limits.
pub(super) fn launches(limits: &DeviceLimits) -> Vec<(&'static str, u32, u32)> {
    let mut all = Vec::new();
    for key_bytes in [4usize, 8] {
        let (k, log2) = kernels(key_bytes, limits);
        let kb = key_bytes as u32;
        let tiny_max = tiny_sort_max_keys(kb) as u32;
        all.push((
            k.tiny.name(),
            tiny_threads(tiny_max),
            tiny_shared_bytes(TINY_SORT_MAX_KEYS as u32, kb),
        ));
        let small = SmallPlan::for_len(SMALL_SORT_MAX_KEYS);
        all.push((
            k.small.name(),
            small.threads(),
            small_shared_bytes(SMALL_TILE_LOG2, kb),
        ));
        if let Some(row_tiles) = k.row_tiles {
            let (threads, shared) = tile_block(ROW_TILE_LOG2, key_bytes);
            all.push((row_tiles.name(), threads, shared));
        }
        let (threads, shared) = tile_block(log2, key_bytes);
        let windows = [k.window_tiles.name(), k.window.name(), k.window_wide.name()];
        for name in windows
            .into_iter()
            .chain(k.window_programs.iter().map(|p| p.name()))
        {
            all.push((name, threads, shared));
        }
    }
    all
}

/// Lets each kernel of `family` that the policy launches on a device of `limits` use its
/// shared memory ([`launches`]; above the default 48 KB if need be), and asks for the largest
/// shared-memory carve-out (left to itself the driver picked 64 KB for a 34 KB tile, room for
/// one block per multiprocessor where registers allow more: docs/decisions.md,
/// "Shared-memory carve-out").
fn configure(module: &Module, limits: &DeviceLimits, family: Family) -> Result<()> {
    for (name, _, shared) in launches(limits) {
        if Family::of(name) == Some(family) {
            set_shared_attributes(module, limits, name, shared)?;
        }
    }
    Ok(())
}

/// Configures the tiny and small sorts ([`configure`]); returns how many blocks of the small
/// sort (4-byte, 8-byte keys) the device holds at once: its cooperative launches take no more.
pub(super) fn configure_small(module: &Module, limits: &DeviceLimits) -> Result<[u64; 2]> {
    configure(module, limits, Family::Small)?;
    let mut resident = [0; 2];
    for (key_bytes, resident) in [4usize, 8].into_iter().zip(&mut resident) {
        let (k, _) = kernels(key_bytes, limits);
        let plan = SmallPlan::for_len(SMALL_SORT_MAX_KEYS);
        let shared = small_shared_bytes(plan.tile_log2, key_bytes as u32);
        let launch = (k.small.name(), plan.threads(), shared);
        let per_multiprocessor = resident_blocks(module, launch)?;
        *resident = u64::from(per_multiprocessor) * u64::from(limits.multiprocessors);
    }
    Ok(resident)
}

/// Configures the window passes' tile sorts ([`configure`]).
pub(super) fn configure_tiles(module: &Module, limits: &DeviceLimits) -> Result<()> {
    configure(module, limits, Family::Tiles)
}

/// Configures the window passes with a constant program (`programs`) or the generic ones
/// ([`configure`]); returns how far ahead their blocks (4-byte, 8-byte keys) prefetch on a
/// device of `limits`, from how many blocks of the kernels the policy runs there the device
/// holds at once (at most [`WINDOW_PREFETCH_MAX_BLOCKS_PER_MULTIPROCESSOR`] per
/// multiprocessor).
pub(super) fn configure_windows(
    module: &Module,
    limits: &DeviceLimits,
    programs: bool,
) -> Result<[u64; 2]> {
    let family = if programs {
        Family::Windows
    } else {
        Family::GenericWindows
    };
    configure(module, limits, family)?;
    let mut ahead = [0; 2];
    for (key_bytes, ahead) in [4usize, 8].into_iter().zip(&mut ahead) {
        let (k, log2) = kernels(key_bytes, limits);
        let name = if programs {
            match k.window_programs.first() {
                Some(kernel) => kernel.name(),
                // No kernels with a constant program for these keys on this device.
                None => continue,
            }
        } else {
            k.window.name()
        };
        let (threads, shared) = tile_block(log2, key_bytes);
        let tile_bytes = (key_bytes as u32) << log2;
        let launch = (name, threads, shared, tile_bytes);
        let cap = WINDOW_PREFETCH_MAX_BLOCKS_PER_MULTIPROCESSOR;
        *ahead = prefetch_ahead(module, limits, launch, cap)?;
    }
    Ok(ahead)
}

/// Queues the whole sort of `n` keys of `key_bytes` (4 or 8) bytes at device address `keys` on
/// the sorter's stream. `map` encodes keys in the first pass and decodes them in the last.
pub(super) fn enqueue(on: &On<'_>, keys: u64, n: u64, key_bytes: usize, map: u32) -> Result<()> {
    if n <= SMALL_SORT_MAX_KEYS && fits_one_launch(on, n, key_bytes)? {
        return enqueue_small(on, keys, n, key_bytes, map);
    }
    let (_, log2) = kernels(key_bytes, &on.limits);
    let passes = windows(n, log2, WINDOW_PASSENGERS);
    enqueue_windows(on, keys, n, key_bytes, passes, (map, map))
}

/// Queues the sort of every row of 2^`row_log2` of the `n` keys at `keys` (`n` a multiple of
/// the row, the row at least a tile): the window passes of one row's network
/// ([`WindowPass::over`]), each launched over every row.
pub(super) fn enqueue_rows(
    on: &On<'_>,
    keys: u64,
    n: u64,
    key_bytes: usize,
    row_log2: u32,
    map: u32,
) -> Result<()> {
    let (_, log2) = kernels(key_bytes, &on.limits);
    debug_assert!(row_log2 >= log2 && n.is_multiple_of(1 << row_log2));
    let all = ceil_log2(n);
    let passes = windows(1 << row_log2, log2, WINDOW_PASSENGERS).map(|w| w.over(all));
    enqueue_windows(on, keys, n, key_bytes, passes, (map, map))
}

/// Queues the sort of every row of 2^`row_log2` of the `n` keys at `keys` (`n` a multiple of
/// the row, the row at most a tile, [`row_tile_stages`]): the tile sort over all of
/// them as one array, stopped after stage `row_log2`, which leaves every aligned 2^`row_log2`
/// keys ascending. Keys go through `map` as they are loaded and back as they are stored.
///
/// [`row_tile_stages`]: kernels_gpu::segments::row_tile_stages
pub(super) fn enqueue_row_tiles(
    on: &On<'_>,
    keys: u64,
    n: u64,
    key_bytes: usize,
    row_log2: u32,
    map: u32,
) -> Result<()> {
    let (k, log2) = kernels(key_bytes, &on.limits);
    debug_assert!(row_log2 <= log2 && n.is_multiple_of(1 << row_log2));
    let Some(kernel) = k.row_tiles.filter(|_| row_log2 <= ROW_TILE_LOG2) else {
        return launch_tiles(on, keys, n, key_bytes, row_log2, (map, map));
    };
    let (threads, shared) = tile_block(ROW_TILE_LOG2, key_bytes);
    let shape = Shape::new(tiles(n, ROW_TILE_LOG2), threads, shared);
    let args = RowTilesArgs {
        keys,
        n,
        map,
        row_log2,
    };
    // SAFETY: `keys` holds n keys on this context's device, sorted in place; SMALL_RUN_LOG2 ≤
    // row_log2 ≤ ROW_TILE_LOG2 (row_tile_stages); the launch shape is the kernel's.
    unsafe { on.launch(kernel, shape, args) }
}

/// Queues the window passes' tile sort of the `n` keys at `keys`, in place, stopped after stage
/// `stages` (the tile's log2 or more: every tile sorted), through `encode` and back through
/// `decode`.
fn launch_tiles(
    on: &On<'_>,
    keys: u64,
    n: u64,
    key_bytes: usize,
    stages: u32,
    (encode, decode): (u32, u32),
) -> Result<()> {
    let (k, log2) = kernels(key_bytes, &on.limits);
    debug_assert!(stages >= kernels_gpu::tuning::SMALL_RUN_LOG2);
    let (threads, shared) = tile_block(log2, key_bytes);
    let shape = Shape::new(tiles(n, log2), threads, shared);
    let args = WindowTilesArgs {
        src: keys,
        dst: keys,
        edges: 0,
        n,
        encode,
        decode,
        stages,
    };
    // SAFETY: `keys` holds n keys on this context's device, sorted in place (no edges);
    // stages ≥ SMALL_RUN_LOG2; the launch shape is the kernel's (ceil(n / 2^log2) blocks of
    // window_threads(log2) threads, a tile of shared memory).
    unsafe { on.launch(k.window_tiles, shape, args) }
}

/// Whether the one-launch sorts take `n ≤ SMALL_SORT_MAX_KEYS` keys on this device: the tiny
/// sort's one block always, the small sort's blocks when the device holds them all at once
/// (its cooperative launch needs that: 16 blocks of 256 threads for 2^16 keys, which a device
/// of fewer multiprocessors may not hold). Else the window passes sort them.
fn fits_one_launch(on: &On<'_>, n: u64, key_bytes: usize) -> Result<bool> {
    let blocks = SmallPlan::for_len(n).blocks();
    if n <= tiny_sort_max_keys(key_bytes as u32) || blocks <= 1 {
        return Ok(true);
    }
    let resident = on.module(Family::Small)?.settings.resident[usize::from(key_bytes == 8)];
    Ok(u64::from(blocks) <= resident)
}

/// Queues the window passes `passes` over the `n` keys at `keys`: the tile sort (if any)
/// encodes with `encode`, the last pass decodes with `decode` (`IDENTITY` leaves the keys
/// encoded).
fn enqueue_windows(
    on: &On<'_>,
    keys: u64,
    n: u64,
    key_bytes: usize,
    passes: impl Iterator<Item = WindowPass>,
    (encode, decode): (u32, u32),
) -> Result<()> {
    let mut passes = passes.peekable();
    while let Some(pass) = passes.next() {
        // The passes before the last leave the keys encoded for the ones after them.
        let decode = if passes.peek().is_none() {
            decode
        } else {
            IDENTITY
        };
        launch_window(on, keys, n, key_bytes, &pass, (encode, decode))?;
    }
    Ok(())
}

/// Queues one window pass over the `n` keys at `keys` on the sorter's stream: the tile sort
/// (which encodes with `encode`), or a later window, on the narrow kernel when its blocks span
/// less than 2^32 positions.
fn launch_window(
    on: &On<'_>,
    keys: u64,
    n: u64,
    key_bytes: usize,
    pass: &WindowPass,
    (encode, decode): (u32, u32),
) -> Result<()> {
    let (k, log2) = kernels(key_bytes, &on.limits);
    debug_assert_eq!(pass.tile_log2, log2);
    let (threads, shared) = tile_block(log2, key_bytes);
    let blocks = u32::try_from(pass.blocks(n)).expect("MAX_KEYS keeps grids below 2^32 blocks");
    let shape = Shape::new(blocks, threads, shared);
    if pass.sort {
        return launch_tiles(on, keys, n, key_bytes, log2, (encode, decode));
    }
    let win = pass.block_window();
    // A narrow window whose program has a kernel of its own runs there: the program a
    // constant, no dispatch (docs/design.md, "Window programs").
    let program = win
        .program()
        .and_then(|i| k.window_programs.get(i).copied())
        .filter(|_| win.narrow());
    // Each block prefetches the keys of a block that runs later (how far: by its kernel's
    // occupancy).
    let family = if program.is_some() {
        Family::Windows
    } else {
        Family::GenericWindows
    };
    let ahead = on.module(family)?.settings.ahead[usize::from(key_bytes == 8)];
    if let Some(kernel) = program {
        let args = WindowProgramArgs {
            keys,
            n,
            fixed: win.fixed,
            mirror: win.mirror,
            span: win.span,
            load_map: win.load_map,
            store_map: win.store_map,
            decode,
            ahead,
        };
        // SAFETY: `keys` holds n keys on this context's device, each block's permuted in
        // place; the arguments are the window's, from `windows` (or its restriction to the
        // chunk `keys` points to), launched in order, on the kernel of its program, which takes
        // narrow windows; the launch shape is the kernel's.
        unsafe { on.launch(kernel, shape, args) }
    } else {
        let kernel = if win.narrow() {
            k.window
        } else {
            k.window_wide
        };
        let args = WindowArgs {
            keys,
            n,
            fixed: win.fixed,
            mirror: win.mirror,
            span: win.span,
            load_map: win.load_map,
            store_map: win.store_map,
            plan: win.plan,
            phases: win.phases,
            steps: win.steps,
            decode,
            ahead,
        };
        // SAFETY: as above; the narrow kernel only for narrow windows.
        unsafe { on.launch(kernel, shape, args) }
    }
}

/// The bitonic sort of `n` keys at device address `keys` as the host-slice pipeline queues it
/// ([`ChunkedSort`]): each chunk sorted ascending on its own, which is exactly what the
/// network's stages up to the chunk leave (every comparator points the same way: see
/// [`kernels_gpu::bitonic`]), then the stages above the chunk over the whole array. The last
/// stage's windows after those that hold its steps on bits of the chunk and above compare keys
/// within chunks only ([`WindowPass::stays_within`]): they run chunk by chunk, so that each
/// chunk's keys are final, and copied back, while the next is merged. Keys are encoded by each
/// chunk's tile sort and decoded by each chunk's last window.
pub(super) struct Chunked<'a> {
    pub on: On<'a>,
    pub keys: u64,
    pub n: u64,
    pub key_bytes: usize,
    pub map: u32,
}

impl ChunkedSort for Chunked<'_> {
    fn sort_chunk(&mut self, range: Range<u64>) -> Result<()> {
        let len = range.end - range.start;
        let at = self.keys + range.start * self.key_bytes as u64;
        // The only chunk is the whole sort (one launch for small ones): it decodes too.
        if self.n <= OVERLAP_CHUNK {
            return enqueue(&self.on, at, len, self.key_bytes, self.map);
        }
        let maps = (self.map, IDENTITY);
        let (_, log2) = kernels(self.key_bytes, &self.on.limits);
        let passes = windows(len, log2, WINDOW_PASSENGERS);
        enqueue_windows(&self.on, at, len, self.key_bytes, passes, maps)
    }

    /// The windows of the stages above the chunk over the whole array; those at the end that
    /// compare keys within chunks only ([`WindowPass::stays_within`]) chunk by chunk, each
    /// launched on its chunk alone ([`WindowPass::restricted`]), the chunk's keys final (and
    /// decoded) once its last window is done.
    fn finish(&mut self, written: &mut dyn FnMut(Range<u64>) -> Result<()>) -> Result<()> {
        let (n, kb) = (self.n, self.key_bytes);
        let (_, log2) = kernels(kb, &self.on.limits);
        let rest: Vec<WindowPass> =
            windows_from(n, OVERLAP_CHUNK_LOG2, log2, WINDOW_PASSENGERS).collect();
        if rest.is_empty() {
            // At most one chunk: its sort was the whole sort.
            return written(0..n);
        }
        let tail = rest
            .iter()
            .rev()
            .take_while(|w| w.stays_within(OVERLAP_CHUNK_LOG2))
            .count();
        assert!(
            tail > 0,
            "the last window compares keys within one block at most"
        );
        let (head, tail) = rest.split_at(rest.len() - tail);
        for pass in head {
            launch_window(&self.on, self.keys, n, kb, pass, (IDENTITY, IDENTITY))?;
        }
        for range in chunk_ranges(n, OVERLAP_CHUNK) {
            let at = self.keys + range.start * kb as u64;
            let len = range.end - range.start;
            let passes = tail.iter().map(|w| w.restricted(OVERLAP_CHUNK_LOG2));
            enqueue_windows(&self.on, at, len, kb, passes, (IDENTITY, self.map))?;
            written(range)?;
        }
        Ok(())
    }
}

/// Queues the sort of `n ≤ SMALL_SORT_MAX_KEYS` keys (nothing for n < 2): the tiny sort's one
/// block up to `tiny_sort_max_keys`, else the one-launch small sort. One small-sort block is a
/// plain launch; several wait for each other at grid barriers, so they go through a
/// cooperative launch ([`GpuSorter::launch_cooperative`]), which guarantees that all are
/// resident at once (or refuses).
fn enqueue_small(on: &On<'_>, keys: u64, n: u64, key_bytes: usize, map: u32) -> Result<()> {
    if n < 2 {
        return Ok(());
    }
    let (k, _) = kernels(key_bytes, &on.limits);
    if n <= tiny_sort_max_keys(key_bytes as u32) {
        let n = n as u32;
        let (threads, shared) = (tiny_threads(n), tiny_shared_bytes(n, key_bytes as u32));
        let args = TinyArgs {
            keys,
            n,
            encode: map,
            decode: map,
        };
        // SAFETY: `keys` holds n ≤ TINY_SORT_MAX_KEYS keys on this context's device; the launch
        // shape is the kernel's.
        return unsafe { on.launch(k.tiny, Shape::new(1, threads, shared), args) };
    }
    let plan = SmallPlan::for_len(n);
    let (blocks, threads) = (plan.blocks(), plan.threads());
    let shape = Shape::new(
        blocks,
        threads,
        small_shared_bytes(plan.tile_log2, key_bytes as u32),
    );
    let args = SmallArgs {
        keys,
        scratch: on.small.scratch.as_device_ptr().as_raw(),
        barrier: on.small.barrier.as_device_ptr().as_raw(),
        n: n as u32,
        encode: map,
        decode: map,
    };
    // SAFETY: `keys` holds n ≤ 2^plan.log2 keys on this context's device; the scratch and the
    // counter are this sorter's, used in stream order; the launch shape is the kernel's, its
    // blocks all resident at once where there are several (a cooperative launch, which the
    // driver refuses otherwise).
    on.small.in_turn(on.stream, || unsafe {
        if blocks == 1 {
            on.launch(k.small, shape, args)
        } else {
            on.launch_cooperative(k.small, shape, args)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each thread's 16 keys are indexed with constants only, in written-out code: if LLVM
    /// stops unrolling a loop over them, they move to local memory and the window passes slow
    /// down severalfold (docs/decisions.md, "Straight-line code over registers").
    #[test]
    fn window_kernels_keep_their_keys_in_registers() {
        for k in [&KERNELS_32, &KERNELS_64, &KERNELS_64_COMPACT] {
            let names = [
                k.window_tiles.name(),
                k.window.name(),
                k.window_wide.name(),
                k.small.name(),
                k.tiny.name(),
            ];
            for name in names {
                super::super::assert_no_local_memory(
                    name,
                    "docs/decisions.md, straight-line code over registers",
                );
            }
        }
    }

    /// Each table's handles are the kernels of its keys, every one of them in the PTX.
    #[test]
    fn every_kernel_of_the_tables_is_in_the_ptx() {
        for (k, bits, compact) in [
            (&KERNELS_32, 32, ""),
            (&KERNELS_64, 64, ""),
            (&KERNELS_64_COMPACT, 64, "compact_"),
        ] {
            assert_eq!(k.tiny.name(), format!("bitonic_tiny_u{bits}"));
            assert_eq!(k.small.name(), format!("bitonic_small_u{bits}"));
            let tiles = format!("bitonic_window_tiles_{compact}u{bits}");
            assert_eq!(k.window_tiles.name(), tiles);
            assert_eq!(k.window.name(), format!("bitonic_window_{compact}u{bits}"));
            let wide = format!("bitonic_window_wide_{compact}u{bits}");
            assert_eq!(k.window_wide.name(), wide);
            let row_tiles = k.row_tiles.map(|r| r.name());
            let expected = format!("bitonic_row_tiles_u{bits}");
            assert_eq!(row_tiles, (bits == 32).then_some(expected.as_str()));
            let programs = if compact.is_empty() {
                kernels_gpu::bitonic::window::PROGRAMS.len()
            } else {
                0
            };
            assert_eq!(k.window_programs.len(), programs);
            let names = [
                k.tiny.name(),
                k.small.name(),
                k.window_tiles.name(),
                k.window.name(),
                k.window_wide.name(),
            ];
            let programs = k.window_programs.iter().map(|p| p.name());
            for name in names.into_iter().chain(row_tiles).chain(programs) {
                assert!(
                    super::super::KERNELS_PTX.contains(&format!(".entry {name}(")),
                    "{name} is not in the PTX"
                );
            }
        }
    }

    #[test]
    fn window_kernels_have_their_register_caps() {
        // `.maxnreg` from the kernel list; the caps let several 512-thread blocks share a
        // multiprocessor: 4 (4-byte tile sort), 3 (4-byte passes), 2 (8-byte keys).
        use kernels_gpu::tuning::WINDOW_THREADS;
        for (k, blocks) in [
            (&KERNELS_32, [4, 3, 3]),
            (&KERNELS_64, [2, 2, 2]),
            (&KERNELS_64_COMPACT, [32, 32, 32]),
        ] {
            for (info, blocks) in [k.window_tiles.info(), k.window.info(), k.window_wide.info()]
                .into_iter()
                .zip(blocks)
            {
                let name = info.name;
                let cap = info.max_registers;
                let cap = cap.unwrap_or_else(|| panic!("no register cap for {name}"));
                let threads = if std::ptr::eq(k, &KERNELS_64_COMPACT) {
                    32
                } else {
                    WINDOW_THREADS
                };
                assert!(blocks * cap * threads <= 65536, "{name}");
                let body = super::super::kernel_ptx(name);
                assert!(body.contains(&format!(".maxnreg {cap}\n")), "{name}");
            }
        }
    }

    #[test]
    fn the_window_shared_memory_fits_the_blocks_the_registers_allow() {
        use kernels_gpu::tuning::window_shared_bytes;
        // Of the 228 KiB a multiprocessor has: 4 × 33 KiB (4-byte keys), 2 × 66 KiB (8-byte).
        assert!(4 * window_shared_bytes(4) <= 228 * 1024);
        assert!(2 * window_shared_bytes(8) <= 228 * 1024);
        assert!(window_shared_bytes(8) <= kernels_gpu::tuning::MAX_SHARED_BYTES);
    }
}
