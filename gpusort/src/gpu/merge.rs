//! Launches of the stable merge sort: the schedule of [`kernels_gpu::merge::schedule`] turned
//! into kernel launches (whole, or chunk by chunk: `Chunked`), the scratch buffer's layout,
//! and the kernels' shared-memory settings.

use super::launch::{On, Shape as Grid};
use super::modules::{Family, set_shared_attributes};
use super::overlap::{Chunked, ChunkedSort};
use super::{DeviceLimits, prefetch_ahead};
use crate::error::Result;
use cust::module::Module;
use kernels_gpu::bitonic::window::WindowTilesArgs;
use kernels_gpu::kernels::{
    Kernel, bitonic_window_tiles_u32, bitonic_window_tiles_u64, merge_partition_u32,
    merge_partition_u64, merge_pass_network_u32, merge_pass_network_u64, merge_pass_u32,
    merge_pass_u32_u32, merge_pass_u32_u64, merge_pass_u32_u128, merge_pass_u64,
    merge_pass_u64_u32, merge_pass_u64_u64, merge_pass_u64_u128, merge_sort_tiles_compact_u32_u32,
    merge_sort_tiles_compact_u32_u64, merge_sort_tiles_compact_u32_u128,
    merge_sort_tiles_compact_u64, merge_sort_tiles_compact_u64_u32,
    merge_sort_tiles_compact_u64_u64, merge_sort_tiles_compact_u64_u128, merge_sort_tiles_u32,
    merge_sort_tiles_u32_u32, merge_sort_tiles_u32_u64, merge_sort_tiles_u32_u128,
    merge_sort_tiles_u64, merge_sort_tiles_u64_u32, merge_sort_tiles_u64_u64,
    merge_sort_tiles_u64_u128, merge_two_partition_u32, merge_two_partition_u64, merge_two_u32,
    merge_two_u64,
};
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::merge::{
    MergePassArgs, MergeTwoArgs, NetworkMergeArgs, PartitionArgs, Pass, SEARCH_LANES,
    SortTilesArgs, Step, TwoPartitionArgs, chunk_schedule, merge_passes, schedule,
};
use kernels_gpu::overlap::tile_parts;
use kernels_gpu::tuning::{
    LAST_PASS_PARTS, MERGE_THREADS, MERGE_TILE, MIN_SHARED_BYTES, NETWORK_MERGE_THREADS,
    NETWORK_MERGE_TILE, PARTITION_THREADS, TILE_KEYS, WINDOW_THREADS,
    compact_merge_sort_shared_bytes, merge_overlap_chunk, merge_shared_bytes, merge_sort_compact,
    merge_sort_shared_bytes, merge_sort_threads, merge_sort_tile, network_merge,
    network_merge_shared_bytes, window_shared_bytes,
};
use std::ops::Range;

/// Value widths the kernels carry, in bytes (0: keys only). Values are only moved, so a payload
/// of any type travels in the smallest of these that holds it.
pub const VALUE_BYTES: [usize; 4] = [0, 4, 8, 16];

/// The stable tile sort of keys of `key_bytes` (4 or 8) with values of `value_bytes` (0, 4, 8
/// or 16).
fn sort_kernel(key_bytes: usize, value_bytes: usize) -> Kernel<SortTilesArgs> {
    match (key_bytes, value_bytes) {
        (4, 0) => merge_sort_tiles_u32,
        (4, 4) => merge_sort_tiles_u32_u32,
        (4, 8) => merge_sort_tiles_u32_u64,
        (4, _) => merge_sort_tiles_u32_u128,
        (_, 0) => merge_sort_tiles_u64,
        (_, 4) => merge_sort_tiles_u64_u32,
        (_, 8) => merge_sort_tiles_u64_u64,
        (_, _) => merge_sort_tiles_u64_u128,
    }
}

/// The compact tile sort ([`merge_sort_compact`]) of the same widths: every pair but 4-byte keys
/// alone, whose tile sort fits every device.
fn compact_sort_kernel(key_bytes: usize, value_bytes: usize) -> Option<Kernel<SortTilesArgs>> {
    match (key_bytes, value_bytes) {
        (4, 0) => None,
        (4, 4) => Some(merge_sort_tiles_compact_u32_u32),
        (4, 8) => Some(merge_sort_tiles_compact_u32_u64),
        (4, _) => Some(merge_sort_tiles_compact_u32_u128),
        (_, 0) => Some(merge_sort_tiles_compact_u64),
        (_, 4) => Some(merge_sort_tiles_compact_u64_u32),
        (_, 8) => Some(merge_sort_tiles_compact_u64_u64),
        (_, _) => Some(merge_sort_tiles_compact_u64_u128),
    }
}

/// The stable merge pass of the same widths.
fn pass_kernel(key_bytes: usize, value_bytes: usize) -> Kernel<MergePassArgs> {
    match (key_bytes, value_bytes) {
        (4, 0) => merge_pass_u32,
        (4, 4) => merge_pass_u32_u32,
        (4, 8) => merge_pass_u32_u64,
        (4, _) => merge_pass_u32_u128,
        (_, 0) => merge_pass_u64,
        (_, 4) => merge_pass_u64_u32,
        (_, 8) => merge_pass_u64_u64,
        (_, _) => merge_pass_u64_u128,
    }
}

/// The keys-only path's kernels for keys of `key_bytes` ([`network_merge`]): the bitonic tile
/// sort and the network merge pass.
fn network_kernels(key_bytes: usize) -> (Kernel<WindowTilesArgs>, Kernel<NetworkMergeArgs>) {
    match key_bytes {
        4 => (bitonic_window_tiles_u32, merge_pass_network_u32),
        _ => (bitonic_window_tiles_u64, merge_pass_network_u64),
    }
}

/// The merge passes' partition of keys of `key_bytes`.
fn partition_kernel(key_bytes: usize) -> Kernel<PartitionArgs> {
    match key_bytes {
        4 => merge_partition_u32,
        _ => merge_partition_u64,
    }
}

/// The merge of two runs of keys of `key_bytes`: its partition and its merge.
fn two_kernels(key_bytes: usize) -> (Kernel<TwoPartitionArgs>, Kernel<MergeTwoArgs>) {
    match key_bytes {
        4 => (merge_two_partition_u32, merge_two_u32),
        _ => (merge_two_partition_u64, merge_two_u64),
    }
}

/// The kernels of a merge sort: the tile sort and the merge pass.
#[derive(Clone, Copy, Debug)]
enum Kernels {
    /// The stable kernels, which carry values.
    Stable {
        sort: Kernel<SortTilesArgs>,
        merge: Kernel<MergePassArgs>,
    },
    /// The keys-only path ([`network_merge`]): the bitonic tile sort and network merges, whose
    /// kernels take no value addresses.
    Network {
        sort: Kernel<WindowTilesArgs>,
        merge: Kernel<NetworkMergeArgs>,
    },
}

impl Kernels {
    /// The tile sort's name.
    fn sort_name(self) -> &'static str {
        match self {
            Kernels::Stable { sort, .. } => sort.name(),
            Kernels::Network { sort, .. } => sort.name(),
        }
    }

    /// The merge pass's name.
    fn merge_name(self) -> &'static str {
        match self {
            Kernels::Stable { merge, .. } => merge.name(),
            Kernels::Network { merge, .. } => merge.name(),
        }
    }
}

/// How a merge sort of keys of one width with values of one width runs: its kernels and their
/// tiles and blocks.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// The tile sort and the merge pass.
    kernels: Kernels,
    /// Keys per tile-sort tile (the runs the passes start from).
    sort_tile: u64,
    sort_threads: u32,
    sort_shared: u32,
    /// Keys per output tile of a merge pass (one split and two edges each).
    merge_tile: u64,
    merge_threads: u32,
    merge_shared: u32,
}

impl Shape {
    /// The shape on a device whose blocks may have `max_shared` bytes of dynamic shared
    /// memory: the tile sort of [`merge_sort_tile`] keys, or the compact one
    /// ([`merge_sort_compact`]).
    fn new(key_bytes: usize, value_bytes: usize, max_shared: u32) -> Shape {
        let (kb, vb) = (key_bytes as u32, value_bytes as u32);
        if value_bytes == 0 && network_merge(kb) {
            let (sort, merge) = network_kernels(key_bytes);
            return Shape {
                kernels: Kernels::Network { sort, merge },
                sort_tile: u64::from(TILE_KEYS),
                sort_threads: WINDOW_THREADS,
                sort_shared: window_shared_bytes(kb),
                merge_tile: u64::from(NETWORK_MERGE_TILE),
                merge_threads: NETWORK_MERGE_THREADS,
                merge_shared: network_merge_shared_bytes(kb),
            };
        }
        let merge = pass_kernel(key_bytes, value_bytes);
        if merge_sort_compact(kb, vb, max_shared) {
            let sort = compact_sort_kernel(key_bytes, value_bytes)
                .expect("a compact tile sort for every pair that needs one");
            return Shape {
                kernels: Kernels::Stable { sort, merge },
                sort_tile: u64::from(MERGE_TILE),
                sort_threads: MERGE_THREADS,
                sort_shared: compact_merge_sort_shared_bytes(kb, vb),
                merge_tile: u64::from(MERGE_TILE),
                merge_threads: MERGE_THREADS,
                merge_shared: merge_shared_bytes(MERGE_TILE, kb, vb),
            };
        }
        let sort_tile = merge_sort_tile(kb, vb);
        Shape {
            kernels: Kernels::Stable {
                sort: sort_kernel(key_bytes, value_bytes),
                merge,
            },
            sort_tile: u64::from(sort_tile),
            sort_threads: merge_sort_threads(kb, vb),
            sort_shared: merge_sort_shared_bytes(sort_tile, kb, vb),
            merge_tile: u64::from(MERGE_TILE),
            merge_threads: MERGE_THREADS,
            merge_shared: merge_shared_bytes(MERGE_TILE, kb, vb),
        }
    }

    /// Whether this is the keys-only path ([`Kernels::Network`]).
    fn network(&self) -> bool {
        matches!(self.kernels, Kernels::Network { .. })
    }

    fn of(l: &Launch) -> Shape {
        Shape::new(l.key_bytes, l.value_bytes, l.max_shared)
    }
}

/// Every launch shape of the merge sort's kernels (the bitonic tile sorts of the keys-only
/// path are the bitonic sort's) on a device whose blocks may have `max_shared` bytes, as
/// `(kernel, threads, dynamic shared bytes)`: what [`configure`] sets, and what the tests
/// check against the limits.
pub(super) fn launches(max_shared: u32) -> Vec<(&'static str, u32, u32)> {
    let mut all = Vec::new();
    for kb in [4, 8] {
        for vb in VALUE_BYTES {
            let shape = Shape::new(kb, vb, max_shared);
            let (sort, merge) = (shape.kernels.sort_name(), shape.kernels.merge_name());
            if !shape.network() {
                all.push((sort, shape.sort_threads, shape.sort_shared));
            }
            all.push((merge, shape.merge_threads, shape.merge_shared));
        }
    }
    for kb in [4, 8] {
        let (_, merge) = network_kernels(kb);
        let shared = network_merge_shared_bytes(kb as u32);
        all.push((merge.name(), NETWORK_MERGE_THREADS, shared));
        let (partition, merge) = two_kernels(kb);
        let shared = merge_shared_bytes(MERGE_TILE, kb as u32, 0);
        all.push((merge.name(), MERGE_THREADS, shared));
        all.push((partition.name(), PARTITION_THREADS, 0));
        all.push((partition_kernel(kb).name(), PARTITION_THREADS, 0));
    }
    all
}

/// Lets each tile-sort and merge kernel the policy launches on a device of `limits` use its
/// shared memory ([`launches`]: up to 209 KB, for the tile sort of 4-byte keys with 16-byte
/// values on an H100 or H200, above the default 48 KB), and returns how far ahead the blocks
/// of each network merge pass (4-byte, 8-byte keys) prefetch there. The bitonic tile sorts are
/// configured with the bitonic kernels.
pub(super) fn configure(module: &Module, limits: &DeviceLimits) -> Result<[u64; 2]> {
    for (name, _, shared) in launches(limits.max_shared_per_block) {
        if shared > 0 {
            set_shared_attributes(module, limits, name, shared)?;
        }
    }
    let mut ahead = [0; 2];
    for (kb, ahead) in [4, 8].into_iter().zip(&mut ahead) {
        let (_, merge) = network_kernels(kb);
        let shared = network_merge_shared_bytes(kb as u32);
        let tile_bytes = NETWORK_MERGE_TILE * kb as u32;
        let launch = (merge.name(), NETWORK_MERGE_THREADS, shared, tile_bytes);
        *ahead = prefetch_ahead(module, limits, launch, u32::MAX)?;
    }
    Ok(ahead)
}

/// Bytes of device scratch the stable sort of `n` keys of `key_bytes` with values of
/// `value_bytes` (0 for keys only) needs on any device: a second buffer of `n` keys and `n`
/// values for the ping-pong, and per output tile of a merge pass one `u64` merge-path split
/// and two keys (its edges, [`kernels_gpu::merge::partition_pass`]). Zero when the keys fit
/// in one tile of the tile sort on every device (it works in place).
/// [`GpuSorter::scratch_bytes`](crate::GpuSorter::scratch_bytes) says what its device needs, which may be less (zero up to one
/// tile of its tile sort).
pub(crate) fn scratch_bytes(n: u64, key_bytes: usize, value_bytes: usize) -> u64 {
    scratch_bytes_on(n, key_bytes, value_bytes, MIN_SHARED_BYTES)
}

/// [`scratch_bytes`] on a device whose blocks may have `max_shared` bytes of shared memory.
pub(crate) fn scratch_bytes_on(
    n: u64,
    key_bytes: usize,
    value_bytes: usize,
    max_shared: u32,
) -> u64 {
    Layout::new(n, key_bytes, value_bytes, max_shared).total
}

/// Where the parts of the scratch buffer start (byte offsets, each 8-aligned, the values
/// aligned to their width: 16-byte values are moved with 16-byte accesses).
struct Layout {
    values: u64,
    splits: u64,
    edges: u64,
    total: u64,
}

impl Layout {
    /// The layout on a device whose blocks may have `max_shared` bytes of shared memory
    /// (where it is not zero, the same on every device).
    fn new(n: u64, key_bytes: usize, value_bytes: usize, max_shared: u32) -> Layout {
        let shape = Shape::new(key_bytes, value_bytes, max_shared);
        if merge_passes(n, shape.sort_tile) == 0 {
            return Layout {
                values: 0,
                splits: 0,
                edges: 0,
                total: 0,
            };
        }
        let tiles = n.div_ceil(shape.merge_tile);
        let values = (n * key_bytes as u64).next_multiple_of(value_bytes.max(8) as u64);
        let splits = values + (n * value_bytes as u64).next_multiple_of(8);
        let edges = splits + tiles * 8;
        let total = edges + tiles * 2 * key_bytes as u64;
        Layout {
            values,
            splits,
            edges,
            total,
        }
    }
}

/// Device addresses of one sort.
pub(super) struct Launch {
    /// `n` keys, sorted in place.
    pub keys: u64,
    /// `n` values (0 for keys only), permuted with the keys.
    pub values: u64,
    /// At least [`scratch_bytes`] bytes, 8-aligned.
    pub scratch: u64,
    pub n: u64,
    pub key_bytes: usize,
    pub value_bytes: usize,
    /// Key map applied in the tile sort.
    pub encode: u32,
    /// Key map undone in the last pass (`IDENTITY` leaves the keys encoded).
    pub decode: u32,
    /// Shared memory a block may have on the sorter's device (its
    /// [`DeviceLimits::max_shared_per_block`]), which chooses the tile sort ([`Shape::new`]).
    pub max_shared: u32,
}

/// Queues the whole stable sort on the sorter's stream. The tile sort writes to the scratch
/// buffer or in place, chosen by the parity of the number of merge passes, so that the last
/// pass lands in the caller's buffer with no copy ([`kernels_gpu::merge::schedule`]).
pub(super) fn enqueue(on: &On<'_>, l: &Launch) -> Result<()> {
    if l.n == 0 {
        return Ok(());
    }
    let all = BufferRange::new(l, 0..l.n);
    for step in schedule(l.n, Shape::of(l).sort_tile, 1) {
        enqueue_step(on, l, &all, step, 1, &mut |_| Ok(()))?;
    }
    Ok(())
}

/// The part of every buffer of a sort that the launches for keys `range` see: for a chunk, its
/// keys, values, scratch and splits, with the chunk's length as `n`.
struct BufferRange {
    keys: u64,
    values: u64,
    scratch_keys: u64,
    scratch_values: u64,
    splits: u64,
    edges: u64,
    n: u64,
}

impl BufferRange {
    /// `range` starts at a multiple of the merge tile (its splits start at its first tile's).
    fn new(l: &Launch, range: Range<u64>) -> BufferRange {
        let layout = Layout::new(l.n, l.key_bytes, l.value_bytes, l.max_shared);
        let tile = Shape::of(l).merge_tile;
        let (kb, vb, at) = (l.key_bytes as u64, l.value_bytes as u64, range.start);
        debug_assert_eq!(at % tile, 0);
        // No values: null pointers, as the kernels expect.
        let values = |base: u64| if vb == 0 { 0 } else { base + at * vb };
        BufferRange {
            keys: l.keys + at * kb,
            values: values(l.values),
            scratch_keys: l.scratch + at * kb,
            scratch_values: values(l.scratch + layout.values),
            splits: l.scratch + layout.splits + at / tile * 8,
            edges: l.scratch + layout.edges + at / tile * 2 * kb,
            n: range.end - range.start,
        }
    }
}

/// Queues one step of the sort on the keys `w` sees, the merge in `parts` launches over
/// consecutive ranges of output tiles, calling `written(keys)` after each (with the keys it
/// writes, relative to the range).
fn enqueue_step(
    on: &On<'_>,
    l: &Launch,
    w: &BufferRange,
    step: Step,
    parts: u64,
    written: &mut dyn FnMut(Range<u64>) -> Result<()>,
) -> Result<()> {
    let shape = Shape::of(l);
    let (n, splits, edges) = (w.n, w.splits, w.edges);
    let tile = shape.merge_tile;
    let tiles = n.div_ceil(tile);
    let pick = |scratch: bool| {
        if scratch {
            (w.scratch_keys, w.scratch_values)
        } else {
            (w.keys, w.values)
        }
    };
    let ((src_k, src_v), (dst_k, dst_v)) = (pick(step.from_scratch), pick(step.to_scratch));
    let decode = if step.last { l.decode } else { IDENTITY };
    // SAFETY (all launches): the buffers hold the range's keys and values (and the scratch
    // its layout) on this context's device; the launch shapes are those the kernels document.
    match step.pass {
        Pass::SortTiles => {
            let grid = Grid::new(
                n.div_ceil(shape.sort_tile) as u32,
                shape.sort_threads,
                shape.sort_shared,
            );
            match shape.kernels {
                Kernels::Network { sort, .. } => {
                    let args = WindowTilesArgs {
                        src: src_k,
                        dst: dst_k,
                        edges,
                        n,
                        encode: l.encode,
                        decode,
                        // Every stage of the tile's network: each tile sorted whole.
                        stages: shape.sort_tile.trailing_zeros(),
                    };
                    unsafe { on.launch(sort, grid, args)? }
                }
                Kernels::Stable { sort, .. } => {
                    let args = SortTilesArgs {
                        src_keys: src_k,
                        dst_keys: dst_k,
                        src_values: src_v,
                        dst_values: dst_v,
                        edges,
                        n,
                        encode: l.encode,
                        decode,
                    };
                    unsafe { on.launch(sort, grid, args)? }
                }
            }
            written(0..n)
        }
        Pass::Merge { width } => {
            let args = PartitionArgs {
                keys: src_k,
                edges,
                splits,
                n,
                width,
                tile,
            };
            let grid = Grid::new(partition_blocks(tiles, 1), PARTITION_THREADS, 0);
            unsafe { on.launch(partition_kernel(l.key_bytes), grid, args)? };
            let (threads, shared) = (shape.merge_threads, shape.merge_shared);
            for part in tile_parts(tiles, parts) {
                let first_tile = part.start;
                let grid = Grid::new((part.end - part.start) as u32, threads, shared);
                match shape.kernels {
                    Kernels::Network { merge, .. } => {
                        // Each block prefetches the input of a tile a later block merges.
                        let ahead = on.module(Family::Merge)?.settings.ahead;
                        let args = NetworkMergeArgs {
                            src_keys: src_k,
                            dst_keys: dst_k,
                            edges,
                            splits,
                            n,
                            width,
                            first_tile,
                            ahead: ahead[usize::from(l.key_bytes == 8)],
                            decode,
                        };
                        unsafe { on.launch(merge, grid, args)? }
                    }
                    Kernels::Stable { merge, .. } => {
                        let args = MergePassArgs {
                            src_keys: src_k,
                            dst_keys: dst_k,
                            src_values: src_v,
                            dst_values: dst_v,
                            edges,
                            splits,
                            n,
                            width,
                            first_tile,
                            decode,
                        };
                        unsafe { on.launch(merge, grid, args)? }
                    }
                }
                written(part.start * tile..(part.end * tile).min(n))?;
            }
            Ok(())
        }
    }
}

/// The stable sort of [`Launch`] as the host-slice pipeline queues it ([`ChunkedSort`]): each
/// chunk's tile sort and merge passes up to runs of a chunk on the chunk alone
/// ([`kernels_gpu::merge::chunk_schedule`]), which leaves it sorted as one run in the buffer
/// where the whole sort would have left it; then the merge passes over the whole array, the
/// last one's merge in [`LAST_PASS_PARTS`] launches. Keys are encoded by each chunk's tile sort
/// and decoded by the last pass.
impl ChunkedSort for Chunked<'_, Launch> {
    fn chunk(&self) -> u64 {
        merge_overlap_chunk(Shape::of(&self.launch).sort_tile)
    }

    fn sort_chunk(&mut self, range: Range<u64>) -> Result<()> {
        let (l, tile) = (&self.launch, Shape::of(&self.launch).sort_tile);
        let w = BufferRange::new(l, range);
        for step in chunk_schedule(l.n, tile, self.chunk()) {
            enqueue_step(&self.on, l, &w, step, 1, &mut |_| Ok(()))?;
        }
        Ok(())
    }

    fn finish(&mut self, written: &mut dyn FnMut(Range<u64>) -> Result<()>) -> Result<()> {
        let (l, tile) = (&self.launch, Shape::of(&self.launch).sort_tile);
        let all = BufferRange::new(l, 0..l.n);
        let mut steps = schedule(l.n, tile, self.chunk()).peekable();
        while let Some(step) = steps.next() {
            if steps.peek().is_some() {
                enqueue_step(&self.on, l, &all, step, 1, &mut |_| Ok(()))?;
            } else {
                return enqueue_step(&self.on, l, &all, step, LAST_PASS_PARTS, written);
            }
        }
        // At most one chunk: its steps were the whole sort.
        written(0..l.n)
    }
}

/// Queues the stable merge of `args` ([`MergeTwoArgs`]): the two sorted runs of keys of
/// `key_bytes` (encoded), A = `src[..a_len]` and B = `src[a_len..n]`, into `dst[..n]`,
/// decoding with `decode`, with `splits` room for `ceil(n / MERGE_TILE)` splits. `a_len = n`
/// copies A.
pub(crate) fn enqueue_merge_two(on: &On<'_>, key_bytes: usize, args: MergeTwoArgs) -> Result<()> {
    let n = args.n;
    if n == 0 {
        return Ok(());
    }
    let (partition, merge) = two_kernels(key_bytes);
    let tiles = n.div_ceil(u64::from(MERGE_TILE));
    let partition_args = TwoPartitionArgs {
        keys: args.src,
        splits: args.splits,
        n,
        a_len: args.a_len,
    };
    let grid = Grid::new(partition_blocks(tiles, SEARCH_LANES), PARTITION_THREADS, 0);
    // SAFETY: the caller's buffers hold n keys and the splits on this context's device; the
    // launch shapes are those the kernels document.
    unsafe { on.launch(partition, grid, partition_args)? };
    let shared = merge_shared_bytes(MERGE_TILE, key_bytes as u32, 0);
    // SAFETY: as above.
    unsafe { on.launch(merge, Grid::new(tiles as u32, MERGE_THREADS, shared), args) }
}

/// Blocks of a partition kernel for `tiles` output tiles, `lanes` threads per split (a pass's
/// partition: 1; a merge of two runs: a warp, [`SEARCH_LANES`]).
fn partition_blocks(tiles: u64, lanes: u32) -> u32 {
    (tiles * u64::from(lanes)).div_ceil(u64::from(PARTITION_THREADS)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::tuning::{MAX_SHARED_BYTES, MERGE_SORT_TILE};

    /// Every (key bytes, value bytes) the stable kernels take.
    const WIDTHS: [(usize, usize); 8] = [
        (4, 0),
        (4, 4),
        (4, 8),
        (4, 16),
        (8, 0),
        (8, 4),
        (8, 8),
        (8, 16),
    ];

    #[test]
    fn scratch_is_a_second_buffer_plus_splits_and_edges_or_nothing() {
        for (kb, vb) in [(4, 0), (8, 0), (4, 4), (8, 8), (8, 16)] {
            let shape = Shape::new(kb, vb, MAX_SHARED_BYTES);
            let (s, t) = (shape.sort_tile, shape.merge_tile);
            let (kb64, vb64) = (kb as u64, vb as u64);
            // A split (8 bytes) and two edge keys per merge tile.
            let splits = |n: u64| n.div_ceil(t) * (8 + 2 * kb64);
            assert_eq!(scratch_bytes_on(0, kb, vb, MAX_SHARED_BYTES), 0);
            assert_eq!(
                scratch_bytes_on(s, kb, vb, MAX_SHARED_BYTES),
                0,
                "one tile sorts in place"
            );
            for n in [s + 1, 3 * s, 5 * s + 7] {
                let keys = kb64 * n;
                let values = (vb64 * n).next_multiple_of(8);
                assert_eq!(
                    scratch_bytes_on(n, kb, vb, MAX_SHARED_BYTES),
                    keys.next_multiple_of(vb64.max(8)) + values + splits(n),
                    "n = {n}, {kb}-byte keys, {vb}-byte values"
                );
            }
        }
        // 16-byte values start 16-aligned whatever n.
        let s = u64::from(MERGE_SORT_TILE);
        for n in [s + 1, s + 2, s + 3, 5 * s + 7] {
            for vb in VALUE_BYTES {
                let layout = Layout::new(n, 4, vb, MAX_SHARED_BYTES);
                assert_eq!(
                    layout.values % vb.max(8) as u64,
                    0,
                    "n = {n}, {vb}-byte values"
                );
                assert_eq!(layout.splits % 8, 0);
                assert_eq!(layout.edges % 8, 0);
            }
        }
    }

    /// The serial merges and register sorts index their arrays with constants only, in fully
    /// unrolled loops: if LLVM stops unrolling one (a larger `MERGE_VT`, an iterator where an
    /// index loop was), the arrays move to local memory, and the kernels slow down severalfold.
    #[test]
    fn merge_kernels_keep_their_arrays_in_registers() {
        let others = [4, 8].into_iter().flat_map(|kb| {
            let (partition, merge) = two_kernels(kb);
            [
                partition_kernel(kb).name(),
                merge.name(),
                partition.name(),
                network_kernels(kb).1.name(),
            ]
        });
        // The 16-byte-value kernels stage one group of values through a 64-byte stack slot
        // (LLVM's lowering of the 16-byte vector stores of `u128`s): measured apart.
        let names = WIDTHS
            .into_iter()
            .filter(|&(_, vb)| vb < 16)
            .flat_map(|(kb, vb)| [sort_kernel(kb, vb).name(), pass_kernel(kb, vb).name()])
            .chain(others);
        for name in names {
            super::super::assert_no_local_memory(
                name,
                "docs/decisions.md, straight-line code over registers",
            );
        }
    }

    #[test]
    fn a_chunk_range_offsets_every_buffer_by_its_first_key() {
        for (kb, vb) in [(4, 0), (8, 0), (4, 16), (8, 4), (8, 8), (8, 16)] {
            let shape = Shape::new(kb, vb, MAX_SHARED_BYTES);
            let (c, t) = (merge_overlap_chunk(shape.sort_tile), shape.merge_tile);
            assert_eq!(c % t, 0, "chunks start on a merge tile");
            let n = 3 * c + 12345;
            let l = Launch {
                keys: 0x1000_0000_0000,
                values: if vb == 0 { 0 } else { 0x2000_0000_0000 },
                scratch: 0x3000_0000_0000,
                n,
                key_bytes: kb,
                value_bytes: vb,
                encode: IDENTITY,
                decode: IDENTITY,
                max_shared: MAX_SHARED_BYTES,
            };
            let layout = Layout::new(n, kb, vb, MAX_SHARED_BYTES);
            let (kb, vb) = (kb as u64, vb as u64);
            let whole = BufferRange::new(&l, 0..n);
            assert_eq!((whole.keys, whole.values, whole.n), (l.keys, l.values, n));
            assert_eq!(whole.splits, l.scratch + layout.splits);
            for (i, range) in kernels_gpu::overlap::chunk_ranges(n, c).enumerate() {
                let w = BufferRange::new(&l, range.clone());
                let at = range.start;
                assert_eq!(w.n, if i < 3 { c } else { 12345 });
                assert_eq!(w.keys, l.keys + at * kb);
                assert_eq!(w.scratch_keys, l.scratch + at * kb);
                assert_eq!(w.splits, l.scratch + layout.splits + at / t * 8);
                assert_eq!(w.edges, l.scratch + layout.edges + at / t * 2 * kb);
                if vb == 0 {
                    assert_eq!((w.values, w.scratch_values), (0, 0), "no values: null");
                } else {
                    assert_eq!(w.values, l.values + at * vb);
                    assert_eq!(w.scratch_values, l.scratch + layout.values + at * vb);
                    assert_eq!(w.scratch_values % vb.max(8), 0, "values stay aligned");
                }
                // The chunk's splits and edges lie inside the scratch buffer.
                let tiles = w.n.div_ceil(t);
                assert!(w.splits + tiles * 8 <= layout.edges + l.scratch);
                assert!(w.edges + tiles * 2 * kb <= l.scratch + layout.total);
            }
        }
    }

    /// Each width's handles are its kernels, every one of them in the PTX.
    #[test]
    fn every_width_picks_its_kernels() {
        let mut names = Vec::new();
        for (kb, vb) in WIDTHS {
            let bits = kb * 8;
            let values = match vb {
                0 => String::new(),
                _ => format!("_u{}", vb * 8),
            };
            let sort = sort_kernel(kb, vb).name();
            assert_eq!(sort, format!("merge_sort_tiles_u{bits}{values}"));
            let merge = pass_kernel(kb, vb).name();
            assert_eq!(merge, format!("merge_pass_u{bits}{values}"));
            names.extend([sort, merge]);
            let compact = compact_sort_kernel(kb, vb).map(|k| k.name());
            let expected = format!("merge_sort_tiles_compact_u{bits}{values}");
            assert_eq!(compact, ((kb, vb) != (4, 0)).then_some(expected.as_str()));
            names.extend(compact);
        }
        for kb in [4, 8] {
            let bits = kb * 8;
            let (sort, merge) = network_kernels(kb);
            assert_eq!(sort.name(), format!("bitonic_window_tiles_u{bits}"));
            assert_eq!(merge.name(), format!("merge_pass_network_u{bits}"));
            let partition = partition_kernel(kb).name();
            assert_eq!(partition, format!("merge_partition_u{bits}"));
            let (two_partition, two) = two_kernels(kb);
            assert_eq!(two_partition.name(), format!("merge_two_partition_u{bits}"));
            assert_eq!(two.name(), format!("merge_two_u{bits}"));
            names.extend([sort.name(), merge.name(), partition]);
            names.extend([two_partition.name(), two.name()]);
        }
        for name in names {
            assert!(
                super::super::KERNELS_PTX.contains(&format!(".entry {name}(")),
                "{name} is not in the PTX"
            );
        }
    }

    #[test]
    fn every_width_pair_has_kernels() {
        for kb in [4, 8] {
            for vb in VALUE_BYTES {
                let shape = Shape::new(kb, vb, MAX_SHARED_BYTES);
                assert_eq!(shape.network(), vb == 0 && network_merge(kb as u32));
                for name in [shape.kernels.sort_name(), shape.kernels.merge_name()] {
                    assert!(
                        super::super::KERNELS_PTX.contains(&format!(".entry {name}(")),
                        "{name} is not in the PTX"
                    );
                }
                // Each output tile of a pass lies in one pair of runs: the merge tile divides
                // the tile sort's.
                assert_eq!(shape.sort_tile % shape.merge_tile, 0, "{shape:?}");
            }
        }
    }

    #[test]
    fn scratch_for_any_device_is_enough_for_each() {
        use crate::gpu::DeviceProfile;
        for (kb, vb) in [(4, 0), (8, 0), (4, 4), (4, 16), (8, 8), (8, 16)] {
            for n in [0, 1, 4351, 4352, 4353, 8704, 8705, 100_000] {
                for (_, p) in DeviceProfile::PRESETS {
                    let on = scratch_bytes_on(n, kb, vb, p.max_shared_per_block);
                    assert!(scratch_bytes(n, kb, vb) >= on, "n = {n}, {kb}/{vb}, {p:?}");
                }
                let h100 = scratch_bytes_on(n, kb, vb, MAX_SHARED_BYTES);
                assert!(scratch_bytes(n, kb, vb) >= h100);
            }
        }
    }

    /// Whether `shape` sorts its tiles with a compact tile sort.
    fn is_compact(shape: Shape) -> bool {
        let compact = |(kb, vb)| compact_sort_kernel(kb, vb).map(|k| k.name());
        WIDTHS
            .into_iter()
            .any(|widths| compact(widths) == Some(shape.kernels.sort_name()))
    }

    #[test]
    fn compact_tile_sorts_where_the_tile_does_not_fit() {
        use crate::gpu::DeviceProfile;
        // T4: every pair with values, and 8-byte keys alone, sort compact tiles of MERGE_TILE.
        let t4 = DeviceProfile::T4.max_shared_per_block;
        for (kb, vb) in [(4, 4), (4, 8), (4, 16), (8, 0), (8, 4), (8, 8), (8, 16)] {
            let shape = Shape::new(kb, vb, t4);
            let compact = compact_sort_kernel(kb, vb).map(|k| k.name());
            assert_eq!(Some(shape.kernels.sort_name()), compact, "{shape:?}");
            assert_eq!(shape.sort_tile, u64::from(MERGE_TILE));
            assert!(shape.sort_shared <= t4);
        }
        // A100: only the pairs above 163 KiB.
        let a100 = DeviceProfile::A100.max_shared_per_block;
        let compact: Vec<(usize, usize)> =
            [(4, 4), (4, 8), (4, 16), (8, 0), (8, 4), (8, 8), (8, 16)]
                .into_iter()
                .filter(|&(kb, vb)| is_compact(Shape::new(kb, vb, a100)))
                .collect();
        assert_eq!(compact, [(4, 16), (8, 8)]);
        // H100, H200: none.
        for kb in [4, 8] {
            for vb in VALUE_BYTES {
                assert!(!is_compact(Shape::new(kb, vb, MAX_SHARED_BYTES)));
            }
        }
    }

    #[test]
    fn the_largest_tile_fits_in_shared_memory() {
        // The tile sort of 8-byte keys with 16-byte values needs the most: under the 227 KB an
        // H100 or H200 allows a block (after `configure` sets the attribute).
        let largest = WIDTHS
            .into_iter()
            .map(|(kb, vb)| Shape::new(kb, vb, MAX_SHARED_BYTES))
            .map(|s| s.sort_shared.max(s.merge_shared))
            .max();
        assert!(largest <= Some(MAX_SHARED_BYTES));
        // Only 8-byte keys with 16-byte values need the smaller tile.
        assert_eq!(
            Shape::new(8, 16, MAX_SHARED_BYTES).sort_tile,
            u64::from(MERGE_TILE)
        );
        assert_eq!(
            Shape::new(8, 8, MAX_SHARED_BYTES).sort_tile,
            u64::from(MERGE_SORT_TILE)
        );
    }
}
