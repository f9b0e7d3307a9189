//! Launches of the stable merge sort: the schedule of [`kernels_gpu::merge::schedule`] turned
//! into kernel launches (whole, or chunk by chunk: `Chunked`), the scratch buffer's layout,
//! and the kernels' shared-memory settings.

use super::modules::{Family, set_shared_attributes};
use super::overlap::{Chunked, ChunkedSort};
use super::{DeviceLimits, GpuSorter, prefetch_ahead};
use crate::error::{CudaContext, Result};
use cust::launch;
use cust::module::Module;
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::merge::{Pass, SEARCH_LANES, Step, chunk_schedule, merge_passes, schedule};
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

/// Kernel names per (key bytes, value bytes): stable tile sort and merge pass.
const KERNELS: [((usize, usize), &str, &str); 8] = [
    ((4, 0), "merge_sort_tiles_u32", "merge_pass_u32"),
    ((4, 4), "merge_sort_tiles_u32_u32", "merge_pass_u32_u32"),
    ((4, 8), "merge_sort_tiles_u32_u64", "merge_pass_u32_u64"),
    ((4, 16), "merge_sort_tiles_u32_u128", "merge_pass_u32_u128"),
    ((8, 0), "merge_sort_tiles_u64", "merge_pass_u64"),
    ((8, 4), "merge_sort_tiles_u64_u32", "merge_pass_u64_u32"),
    ((8, 8), "merge_sort_tiles_u64_u64", "merge_pass_u64_u64"),
    ((8, 16), "merge_sort_tiles_u64_u128", "merge_pass_u64_u128"),
];

/// The compact tile sorts ([`merge_sort_compact`]) per (key bytes, value bytes): every pair but
/// 4-byte keys alone, whose tile sort fits every device.
const COMPACT_KERNELS: [((usize, usize), &str); 7] = [
    ((4, 4), "merge_sort_tiles_compact_u32_u32"),
    ((4, 8), "merge_sort_tiles_compact_u32_u64"),
    ((4, 16), "merge_sort_tiles_compact_u32_u128"),
    ((8, 0), "merge_sort_tiles_compact_u64"),
    ((8, 4), "merge_sort_tiles_compact_u64_u32"),
    ((8, 8), "merge_sort_tiles_compact_u64_u64"),
    ((8, 16), "merge_sort_tiles_compact_u64_u128"),
];

/// The keys-only path's kernels per key width ([`network_merge`]): the bitonic tile sort and
/// the network merge pass.
const NETWORK_KERNELS: [(usize, &str, &str); 2] = [
    (4, "bitonic_window_tiles_u32", "merge_pass_network_u32"),
    (8, "bitonic_window_tiles_u64", "merge_pass_network_u64"),
];

/// How a merge sort of keys of one width with values of one width runs: its kernels and their
/// tiles and blocks.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// The tile sort.
    sort: &'static str,
    /// The merge pass.
    merge: &'static str,
    /// Keys per tile-sort tile (the runs the passes start from).
    sort_tile: u64,
    sort_threads: u32,
    sort_shared: u32,
    /// Keys per output tile of a merge pass (one split and two edges each).
    merge_tile: u64,
    merge_threads: u32,
    merge_shared: u32,
    /// The keys-only path: bitonic tile sort and network merges, whose kernels take no value
    /// pointers.
    network: bool,
}

impl Shape {
    /// The shape on a device whose blocks may have `max_shared` bytes of dynamic shared
    /// memory: the tile sort of [`merge_sort_tile`] keys, or the compact one
    /// ([`merge_sort_compact`]).
    fn new(key_bytes: usize, value_bytes: usize, max_shared: u32) -> Shape {
        let (kb, vb) = (key_bytes as u32, value_bytes as u32);
        if value_bytes == 0 && network_merge(kb) {
            let (_, sort, merge) = *NETWORK_KERNELS
                .iter()
                .find(|(k, ..)| *k == key_bytes)
                .expect("keys of 4 or 8 bytes");
            return Shape {
                sort,
                merge,
                sort_tile: u64::from(TILE_KEYS),
                sort_threads: WINDOW_THREADS,
                sort_shared: window_shared_bytes(kb),
                merge_tile: u64::from(NETWORK_MERGE_TILE),
                merge_threads: NETWORK_MERGE_THREADS,
                merge_shared: network_merge_shared_bytes(kb),
                network: true,
            };
        }
        let (_, sort, merge) = *KERNELS
            .iter()
            .find(|(widths, ..)| *widths == (key_bytes, value_bytes))
            .expect("keys of 4 or 8 bytes, values of 0, 4, 8 or 16 bytes");
        if merge_sort_compact(kb, vb, max_shared) {
            let (_, sort) = *COMPACT_KERNELS
                .iter()
                .find(|(widths, _)| *widths == (key_bytes, value_bytes))
                .expect("a compact tile sort for every pair that needs one");
            return Shape {
                sort,
                merge,
                sort_tile: u64::from(MERGE_TILE),
                sort_threads: MERGE_THREADS,
                sort_shared: compact_merge_sort_shared_bytes(kb, vb),
                merge_tile: u64::from(MERGE_TILE),
                merge_threads: MERGE_THREADS,
                merge_shared: merge_shared_bytes(MERGE_TILE, kb, vb),
                network: false,
            };
        }
        let sort_tile = merge_sort_tile(kb, vb);
        Shape {
            sort,
            merge,
            sort_tile: u64::from(sort_tile),
            sort_threads: merge_sort_threads(kb, vb),
            sort_shared: merge_sort_shared_bytes(sort_tile, kb, vb),
            merge_tile: u64::from(MERGE_TILE),
            merge_threads: MERGE_THREADS,
            merge_shared: merge_shared_bytes(MERGE_TILE, kb, vb),
            network: false,
        }
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
            if !shape.network {
                all.push((shape.sort, shape.sort_threads, shape.sort_shared));
            }
            all.push((shape.merge, shape.merge_threads, shape.merge_shared));
        }
    }
    for (kb, _, merge) in NETWORK_KERNELS {
        let shared = network_merge_shared_bytes(kb as u32);
        all.push((merge, NETWORK_MERGE_THREADS, shared));
    }
    for (kb, name) in [(4, "merge_two_u32"), (8, "merge_two_u64")] {
        all.push((name, MERGE_THREADS, merge_shared_bytes(MERGE_TILE, kb, 0)));
    }
    for name in [
        "merge_partition_u32",
        "merge_partition_u64",
        "merge_two_partition_u32",
        "merge_two_partition_u64",
    ] {
        all.push((name, PARTITION_THREADS, 0));
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
    for ((kb, _, merge), ahead) in NETWORK_KERNELS.into_iter().zip(&mut ahead) {
        let shared = network_merge_shared_bytes(kb as u32);
        let tile_bytes = NETWORK_MERGE_TILE * kb as u32;
        let launch = (merge, NETWORK_MERGE_THREADS, shared, tile_bytes);
        *ahead = prefetch_ahead(module, limits, launch, u32::MAX)?;
    }
    Ok(ahead)
}

/// Bytes of device scratch the stable sort of `n` keys of `key_bytes` with values of
/// `value_bytes` (0 for keys only) needs on any device: a second buffer of `n` keys and `n`
/// values for the ping-pong, and per output tile of a merge pass one `u64` merge-path split
/// and two keys (its edges, [`kernels_gpu::merge::partition_pass`]). Zero when the keys fit
/// in one tile of the tile sort on every device (it works in place).
/// [`GpuSorter::sort_scratch`] allocates what its device needs, which may be less (zero up to
/// one tile of its tile sort).
pub fn scratch_bytes(n: u64, key_bytes: usize, value_bytes: usize) -> u64 {
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
pub(super) fn enqueue(sorter: &GpuSorter, l: &Launch) -> Result<()> {
    if l.n == 0 {
        return Ok(());
    }
    let all = BufferRange::new(l, 0..l.n);
    for step in schedule(l.n, Shape::of(l).sort_tile, 1) {
        enqueue_step(sorter, l, &all, step, 1, &mut |_| Ok(()))?;
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
    sorter: &GpuSorter,
    l: &Launch,
    w: &BufferRange,
    step: Step,
    parts: u64,
    written: &mut dyn FnMut(Range<u64>) -> Result<()>,
) -> Result<()> {
    let shape = Shape::of(l);
    let partition_name = if l.key_bytes == 8 {
        "merge_partition_u64"
    } else {
        "merge_partition_u32"
    };
    let (stream, n, splits, edges) = (&sorter.stream, w.n, w.splits, w.edges);
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
            let f = sorter.function_named(shape.sort)?;
            let (grid, map) = (n.div_ceil(shape.sort_tile) as u32, l.encode);
            let (threads, shared) = (shape.sort_threads, shape.sort_shared);
            let launched = if shape.network {
                // Every stage of the tile's network: each tile sorted whole.
                let stages = shape.sort_tile.trailing_zeros();
                unsafe {
                    launch!(f<<<grid, threads, shared, stream>>>(
                        src_k, dst_k, edges, n, map, decode, stages
                    ))
                }
            } else {
                unsafe {
                    launch!(f<<<grid, threads, shared, stream>>>(
                        src_k, dst_k, src_v, dst_v, edges, n, map, decode
                    ))
                }
            };
            launched.context(&format!("launching the tile sort for {n} keys"))?;
            written(0..n)
        }
        Pass::Merge { width } => {
            let f = sorter.function_named(partition_name)?;
            let partition_blocks = partition_blocks(tiles, 1);
            unsafe {
                launch!(f<<<partition_blocks, PARTITION_THREADS, 0, stream>>>(
                    src_k, edges, splits, n, width, tile
                ))
            }
            .context(&format!("launching the merge partition for {n} keys"))?;
            let f = sorter.function_named(shape.merge)?;
            let (threads, shared) = (shape.merge_threads, shape.merge_shared);
            for part in tile_parts(tiles, parts) {
                let (first_tile, grid) = (part.start, (part.end - part.start) as u32);
                let launched = if shape.network {
                    // Each block prefetches the input of a tile a later block merges.
                    let ahead = sorter.module(Family::Merge)?.settings.ahead;
                    let ahead = ahead[usize::from(l.key_bytes == 8)];
                    unsafe {
                        launch!(f<<<grid, threads, shared, stream>>>(
                            src_k, dst_k, edges, splits, n, width, first_tile, ahead, decode
                        ))
                    }
                } else {
                    unsafe {
                        launch!(f<<<grid, threads, shared, stream>>>(
                            src_k, dst_k, src_v, dst_v, edges, splits, n, width, first_tile,
                            decode
                        ))
                    }
                };
                launched.context(&format!(
                    "launching a merge pass of width {width} for {n} keys"
                ))?;
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
            enqueue_step(self.sorter, l, &w, step, 1, &mut |_| Ok(()))?;
        }
        Ok(())
    }

    fn finish(&mut self, written: &mut dyn FnMut(Range<u64>) -> Result<()>) -> Result<()> {
        let (l, tile) = (&self.launch, Shape::of(&self.launch).sort_tile);
        let all = BufferRange::new(l, 0..l.n);
        let mut steps = schedule(l.n, tile, self.chunk()).peekable();
        while let Some(step) = steps.next() {
            if steps.peek().is_some() {
                enqueue_step(self.sorter, l, &all, step, 1, &mut |_| Ok(()))?;
            } else {
                return enqueue_step(self.sorter, l, &all, step, LAST_PASS_PARTS, written);
            }
        }
        // At most one chunk: its steps were the whole sort.
        written(0..l.n)
    }
}

/// Queues the stable merge of two sorted runs of keys (encoded), A = `src[..a_len]` and
/// B = `src[a_len..n]`, into `dst[..n]`, decoding with `decode`; `splits` has room for
/// `ceil(n / MERGE_TILE)` splits. `a_len = n` copies A.
#[allow(clippy::too_many_arguments)]
pub(crate) fn enqueue_merge_two(
    sorter: &GpuSorter,
    key_bytes: usize,
    src: u64,
    dst: u64,
    splits: u64,
    n: u64,
    a_len: u64,
    decode: u32,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let (partition_name, merge_name) = if key_bytes == 8 {
        ("merge_two_partition_u64", "merge_two_u64")
    } else {
        ("merge_two_partition_u32", "merge_two_u32")
    };
    let stream = &sorter.stream;
    let tiles = n.div_ceil(u64::from(MERGE_TILE));
    let partition_blocks = partition_blocks(tiles, SEARCH_LANES);
    let f = sorter.function_named(partition_name)?;
    // SAFETY: the caller's buffers hold n keys and the splits on this context's device; the
    // launch shapes are those the kernels document.
    unsafe {
        launch!(f<<<partition_blocks, PARTITION_THREADS, 0, stream>>>(src, splits, n, a_len))
    }
    .context(&format!("launching the partition of a merge of {n} keys"))?;
    let f = sorter.function_named(merge_name)?;
    let shared = merge_shared_bytes(MERGE_TILE, key_bytes as u32, 0);
    // SAFETY: as above.
    unsafe {
        launch!(f<<<tiles as u32, MERGE_THREADS, shared, stream>>>(
            src, dst, splits, n, a_len, decode
        ))
    }
    .context(&format!("launching a merge of {n} keys"))
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
        let others = [
            "merge_partition_u32",
            "merge_partition_u64",
            "merge_two_u32",
            "merge_two_u64",
            "merge_two_partition_u32",
            "merge_two_partition_u64",
        ];
        // The 16-byte-value kernels stage one group of values through a 64-byte stack slot
        // (LLVM's lowering of the 16-byte vector stores of `u128`s): measured apart.
        let names = KERNELS
            .iter()
            .filter(|&&((_, vb), ..)| vb < 16)
            .flat_map(|&(_, sort, merge)| [sort, merge])
            .chain(NETWORK_KERNELS.iter().map(|&(_, _, merge)| merge))
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

    #[test]
    fn every_width_pair_has_kernels() {
        for kb in [4, 8] {
            for vb in VALUE_BYTES {
                let shape = Shape::new(kb, vb, MAX_SHARED_BYTES);
                assert_eq!(shape.network, vb == 0 && network_merge(kb as u32));
                for name in [shape.sort, shape.merge] {
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

    #[test]
    fn compact_tile_sorts_where_the_tile_does_not_fit() {
        use crate::gpu::DeviceProfile;
        // T4: every pair with values, and 8-byte keys alone, sort compact tiles of MERGE_TILE.
        let t4 = DeviceProfile::T4.max_shared_per_block;
        for (kb, vb) in [(4, 4), (4, 8), (4, 16), (8, 0), (8, 4), (8, 8), (8, 16)] {
            let shape = Shape::new(kb, vb, t4);
            assert!(
                shape.sort.starts_with("merge_sort_tiles_compact_"),
                "{shape:?}"
            );
            assert_eq!(shape.sort_tile, u64::from(MERGE_TILE));
            assert!(shape.sort_shared <= t4);
        }
        // A100: only the pairs above 163 KiB.
        let a100 = DeviceProfile::A100.max_shared_per_block;
        let compact: Vec<(usize, usize)> =
            [(4, 4), (4, 8), (4, 16), (8, 0), (8, 4), (8, 8), (8, 16)]
                .into_iter()
                .filter(|&(kb, vb)| Shape::new(kb, vb, a100).sort.contains("compact"))
                .collect();
        assert_eq!(compact, [(4, 16), (8, 8)]);
        // H100, H200: none.
        for kb in [4, 8] {
            for vb in VALUE_BYTES {
                assert!(
                    !Shape::new(kb, vb, MAX_SHARED_BYTES)
                        .sort
                        .contains("compact")
                );
            }
        }
    }

    #[test]
    fn the_largest_tile_fits_in_shared_memory() {
        // The tile sort of 8-byte keys with 16-byte values needs the most: under the 227 KB an
        // H100 or H200 allows a block (after `configure` sets the attribute).
        let largest = KERNELS
            .iter()
            .map(|&((kb, vb), ..)| Shape::new(kb, vb, MAX_SHARED_BYTES))
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
