//! Sorting many rows or segments at once ([`kernels_gpu::segments`]): segments of up to 64 keys
//! are sorted in registers, 32 positions per thread; rows of keys alone of a power of two up to
//! a tile by the bitonic tile sort over the whole matrix, stopped after the row's stage; every
//! other segment that a block holds by one block's bitonic network (up to 256 keys) or radix
//! sort (512 to 8192); a launch per padded length (one in all for rows of one length); longer
//! segments all at once ([`long`]): keys alone and 4-byte keys with their positions as padded
//! rows of one bitonic network, 8-byte keys with their positions by two radix sorts.

mod long;

use super::launch::{On, Shape};
use super::queue::{DeviceMemory, DeviceMemoryMut, Queue};
use super::{GpuSorter, bitonic, check_len, check_pairs};
use crate::error::{CudaContext, Error, Result};
use crate::keys::{Order, SortKey, SortValue};
use cust::memory::CopyDestination;
use cust::module::Module;
use kernels_gpu::kernels::{
    Kernel, segments_group, segments_indexed_u32_u32, segments_indexed_u32_u64,
    segments_indexed_u32_u128, segments_indexed_u64_u32, segments_indexed_u64_u64,
    segments_indexed_u64_u128, segments_radix_keys_u32, segments_radix_keys_u64,
    segments_radix_u32, segments_radix_u64, segments_short_indexed_u32, segments_short_indexed_u64,
    segments_short_u32, segments_short_u64, segments_sort_u32, segments_sort_u64,
};
use kernels_gpu::segments::{
    GROUP_LENGTHS, GroupArgs, RADIX_ROW_LOG2, RadixArgs, ShortArgs, SortArgs, blocks,
    element_bytes, grouped_length, is_short, max_row_log2, radix_shared_bytes, radix_threads,
    row_log2, row_tile_stages, shared_bytes, short_blocks, short_shared_bytes, threads, tile_log2,
};
use kernels_gpu::tuning::SHORT_SEGMENTS_THREADS;

/// How the keys are cut into independently sorted segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segments<'a> {
    /// Rows of this many keys: the keys are a row-major matrix of `keys.len() / len` rows, each
    /// sorted along its length (NumPy's `np.sort(a, axis=-1)`, `torch.sort(dim=-1)`).
    Rows(usize),
    /// Segment `i` is `keys[offsets[i]..offsets[i + 1]]` (CSR offsets, as CUB's segmented sorts
    /// take them): non-decreasing, the last at most `keys.len()`. Segments may be empty; keys
    /// outside every segment are left as they are.
    Offsets(&'a [usize]),
}

/// Kernels per (key bytes, whether each key travels with its position, value bytes).
const KERNELS: [((usize, bool, usize), Kernel<SortArgs>); 8] = [
    ((4, false, 0), segments_sort_u32),
    ((8, false, 0), segments_sort_u64),
    ((4, true, 4), segments_indexed_u32_u32),
    ((4, true, 8), segments_indexed_u32_u64),
    ((4, true, 16), segments_indexed_u32_u128),
    ((8, true, 4), segments_indexed_u64_u32),
    ((8, true, 8), segments_indexed_u64_u64),
    ((8, true, 16), segments_indexed_u64_u128),
];

/// The kernel that sorts keys of `key_bytes` alone (`indexed` false) or with their positions
/// and values of `value_bytes` (an argsort uses the 4-byte kernel, with no values).
fn kernel(key_bytes: usize, indexed: bool, value_bytes: usize) -> Kernel<SortArgs> {
    let widths = if indexed {
        (key_bytes, true, value_bytes.max(4))
    } else {
        (key_bytes, false, 0)
    };
    chosen(&KERNELS, widths)
}

/// The kernel `table` gives `widths`; every table covers the widths the sorts pass it (keys of
/// 4 or 8 bytes, values of 4, 8 or 16).
fn chosen<W: PartialEq, A>(table: &[(W, Kernel<A>)], widths: W) -> Kernel<A> {
    table
        .iter()
        .find(|(w, _)| *w == widths)
        .map(|&(_, kernel)| kernel)
        .expect("a kernel for every width")
}

/// The register sorts of short segments per (key bytes, whether each key travels with its
/// position); values of any width go through the indexed kernels as 4-byte words.
const SHORT_KERNELS: [((usize, bool), Kernel<ShortArgs>); 4] = [
    ((4, false), segments_short_u32),
    ((8, false), segments_short_u64),
    ((4, true), segments_short_indexed_u32),
    ((8, true), segments_short_indexed_u64),
];

/// The register sort of short segments of keys of `key_bytes`, alone or `indexed`.
fn short_kernel(key_bytes: usize, indexed: bool) -> Kernel<ShortArgs> {
    chosen(&SHORT_KERNELS, (key_bytes, indexed))
}

/// The radix sorts of a segment per (key bytes, whether each key travels with its position);
/// values of any width move as 4-byte words.
const RADIX_KERNELS: [((usize, bool), Kernel<RadixArgs>); 4] = [
    ((4, false), segments_radix_keys_u32),
    ((8, false), segments_radix_keys_u64),
    ((4, true), segments_radix_u32),
    ((8, true), segments_radix_u64),
];

/// The radix sort of a segment of keys of `key_bytes`, alone or `indexed`.
fn radix_kernel(key_bytes: usize, indexed: bool) -> Kernel<RadixArgs> {
    chosen(&RADIX_KERNELS, (key_bytes, indexed))
}

/// Lets every segment kernel use the shared memory of the longest row it sorts on a device of
/// `limits` (up to 139 KB, for 8-byte keys with positions in rows of 8192).
pub(super) fn configure(module: &Module, limits: &super::DeviceLimits) -> Result<()> {
    for ((kb, indexed, _), kernel) in KERNELS {
        let bytes = element_bytes(kb as u32, indexed);
        if let Some(p) = max_row_log2(bytes, limits.max_shared_per_block) {
            super::modules::set_shared_attributes(
                module,
                limits,
                kernel.name(),
                shared_bytes(tile_log2(p), bytes),
            )?;
        }
    }
    for ((kb, indexed), kernel) in RADIX_KERNELS {
        let longest_that_fits = RADIX_ROW_LOG2
            .rev()
            .map(|p| radix_shared_bytes(p, kb as u32, indexed))
            .find(|&bytes| limits.fits(bytes));
        if let Some(bytes) = longest_that_fits {
            super::modules::set_shared_attributes(module, limits, kernel.name(), bytes)?;
        }
    }
    Ok(())
}

/// The launches of a segmented sort, worked out on the host.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Launches of the segments that one block holds, one per padded length:
    /// `(row_log2, entries, first entry in the ids)` (rows: entry `e` is row `e`). Those of up
    /// to 64 keys ([`is_short`]) run the register sort, the others the block sort.
    pub launches: Vec<(u32, u64, usize)>,
    /// For offsets: how the device lists the segment ids of every length.
    pub grouping: Option<Grouping>,
    /// For rows: their length.
    pub row_len: u64,
    /// Rows of keys alone that the tile sort takes ([`row_tile_stages`]): `(stages, keys)`,
    /// the tile sort over the `keys` keys as one array, stopped after stage `stages`.
    pub tile_rows: Option<(u32, u64)>,
    /// Segments longer than a block sorts, `(first key, length, segment id)`.
    pub long: Vec<(u64, u64, u32)>,
    /// Whether every key lies in some segment.
    pub covers_all: bool,
}

impl Plan {
    /// Whether there is nothing to launch.
    pub(crate) fn is_empty(&self) -> bool {
        self.launches.is_empty() && self.long.is_empty() && self.tile_rows.is_none()
    }
}

/// The segment ids of a plan of offsets, grouped by padded length on the device
/// (`segments_group`): each length's ids lie together in one list, the launches' lengths first,
/// then those of long segments, each in ascending length.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Grouping {
    /// The first entry of each padded length 2^0 ..= 2^63 ([`GROUP_LENGTHS`]).
    pub firsts: Vec<u32>,
    /// Entries in all.
    pub entries: u64,
    /// Whether segments of one key are listed (an argsort writes their index).
    pub singles: bool,
}

/// Plans the sort of `n` keys cut into `segments`, where a block sorts segments of up to
/// 2^`max_row_log2` keys; `singles`: segments of one key are launched too (an argsort writes
/// their index), else skipped like empty ones. `tile_log2`: for keys sorted alone, log2 of the
/// tiles of their bitonic tile sort on the device, which then takes rows of a power of two up
/// to a tile ([`row_tile_stages`]); `None` for keys sorted with their positions.
///
/// # Errors
/// [`Error::BadSegments`] naming what is wrong with `segments` for `n` keys.
pub(crate) fn plan(
    segments: Segments<'_>,
    n: usize,
    (max_row_log2, tile_log2): (u32, Option<u32>),
    singles: bool,
) -> Result<Plan> {
    let bad = |reason: String| Err(Error::BadSegments { reason });
    match segments {
        Segments::Rows(0) if n == 0 => Ok(Plan {
            covers_all: true,
            ..Plan::default()
        }),
        Segments::Rows(0) => bad(format!("rows of 0 keys cannot hold {n} keys")),
        Segments::Rows(len) if !n.is_multiple_of(len) => bad(format!(
            "{n} keys are not a whole number of rows of {len} keys"
        )),
        Segments::Rows(len) => {
            let (rows, len) = ((n / len) as u64, len as u64);
            let mut plan = Plan {
                row_len: len,
                covers_all: true,
                ..Plan::default()
            };
            let p = row_log2(len);
            let tile_stages = tile_log2.and_then(|t| row_tile_stages(len, t));
            if rows == 0 || grouped_length(len, singles).is_none() {
            } else if let Some(stages) = tile_stages {
                plan.tile_rows = Some((stages, n as u64));
            } else if p <= max_row_log2 {
                plan.launches.push((p, rows, 0));
            } else {
                if rows > u64::from(u32::MAX) {
                    return bad(format!("{rows} rows: at most 2^32 − 1 are supported"));
                }
                plan.long = (0..rows).map(|r| (r * len, len, r as u32)).collect();
            }
            Ok(plan)
        }
        Segments::Offsets(offsets) => {
            if let Some(&last) = offsets.last().filter(|&&last| last > n) {
                return bad(format!("the last offset, {last}, is past the {n} keys"));
            }
            let segments = offsets.len().saturating_sub(1);
            if segments as u64 > u64::from(u32::MAX) {
                return bad(format!(
                    "{segments} segments: at most 2^32 − 1 are supported"
                ));
            }
            let Counts { per_length, long } = count_by_padded_length(
                offsets,
                max_row_log2,
                singles,
            )
            .map_err(|i| Error::BadSegments {
                reason: format!(
                    "offsets[{}] = {} is below offsets[{i}] = {}: offsets must not decrease",
                    i + 1,
                    offsets[i + 1],
                    offsets[i]
                ),
            })?;
            let mut launches = Vec::new();
            let mut firsts = Vec::with_capacity(GROUP_LENGTHS);
            let mut entries = 0;
            for (p, &count) in per_length.iter().enumerate() {
                if count > 0 && p as u32 <= max_row_log2 {
                    launches.push((p as u32, count, entries as usize));
                }
                firsts.push(entries as u32);
                entries += count;
            }
            let covers_all =
                offsets.first().is_none_or(|&o| o == 0) && offsets.last() == Some(&n) || n == 0;
            Ok(Plan {
                launches,
                grouping: Some(Grouping {
                    firsts,
                    entries,
                    singles,
                }),
                row_len: 0,
                tile_rows: None,
                long,
                covers_all,
            })
        }
    }
}

/// Segments per chunk of [`count_by_padded_length`]'s pass on all cores.
const GROUP_CHUNK: usize = 1 << 14;

/// The segments that launches sort per padded length 2^0 ..= 2^63, and the long ones, as
/// [`Plan::long`] lists them.
struct Counts {
    per_length: [u64; GROUP_LENGTHS],
    long: Vec<(u64, u64, u32)>,
}

/// One chunk's part of [`count_by_padded_length`], and the first segment that ends before it
/// starts.
struct ChunkCounts {
    counts: Counts,
    decreasing: Option<usize>,
}

/// The segments of `offsets` that launches sort ([`grouped_length`]) counted per padded length,
/// chunk by chunk on all cores, and those longer than 2^`max_row_log2` in order. `Err(i)`: the
/// first `i` with `offsets[i + 1] < offsets[i]`.
fn count_by_padded_length(
    offsets: &[usize],
    max_row_log2: u32,
    singles: bool,
) -> std::result::Result<Counts, usize> {
    use rayon::prelude::*;
    let segments = offsets.len().saturating_sub(1);
    let chunks: Vec<ChunkCounts> = (0..segments.div_ceil(GROUP_CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut chunk = ChunkCounts {
                counts: Counts {
                    per_length: [0; GROUP_LENGTHS],
                    long: Vec::new(),
                },
                decreasing: None,
            };
            for i in c * GROUP_CHUNK..segments.min((c + 1) * GROUP_CHUNK) {
                let Some(len) = offsets[i + 1].checked_sub(offsets[i]) else {
                    chunk.decreasing = Some(i);
                    break;
                };
                let len = len as u64;
                let Some(p) = grouped_length(len, singles) else {
                    continue;
                };
                chunk.counts.per_length[p as usize] += 1;
                if p > max_row_log2 {
                    chunk.counts.long.push((offsets[i] as u64, len, i as u32));
                }
            }
            chunk
        })
        .collect();
    if let Some(i) = chunks.iter().find_map(|c| c.decreasing) {
        return Err(i);
    }
    let mut per_length = [0; GROUP_LENGTHS];
    for chunk in &chunks {
        for (all, mine) in per_length.iter_mut().zip(chunk.counts.per_length) {
            *all += mine;
        }
    }
    let long = chunks.into_iter().flat_map(|c| c.counts.long).collect();
    Ok(Counts { per_length, long })
}

/// What a segmented sort moves with its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Carried {
    Nothing,
    /// Values of this many bytes (4, 8 or 16).
    Values(usize),
    /// Their positions in the segment (an argsort).
    Indices,
}

/// A plan and the offsets it was made from (none for rows).
pub(super) struct Planned<'o> {
    plan: Plan,
    offsets: &'o [usize],
}

impl Planned<'_> {
    /// Whether the launch `l` of the plan has nothing to do: no segment to sort, and no index
    /// outside every segment to zero.
    fn leaves_alone(&self, l: &Launch) -> bool {
        self.is_empty() && (l.indices == 0 || self.covers_all)
    }
}

impl std::ops::Deref for Planned<'_> {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        &self.plan
    }
}

/// The device memory of one segmented sort beside its keys (values, indices), in one block of
/// [`Memory::bytes`] (the caller's scratch or the pool's), as byte offsets from its start: the
/// table copied from the host (the offsets as `u64`, the first entry of each padded length
/// in the grouping's ids as `u32`, the long segments' tables), the segment ids grouped by
/// length, an argsort's copy of its keys, and the long segments' buffer.
struct Memory {
    /// Offsets, then cursors, then the long segments' tables: `head` words from the start.
    head: usize,
    cursors: u64,
    long_tables: Vec<u64>,
    long_tables_at: u64,
    ids: u64,
    /// The keys' copy (0 bytes but where the sort must not write the keys).
    keys_copy: (u64, u64),
    long: (u64, u64),
    bytes: u64,
}

impl Memory {
    /// What `plan` of the launch `l` needs.
    ///
    /// # Errors
    /// As [`long::long_needs`].
    fn new(plan: &Planned, l: &Launch) -> Result<Memory> {
        let align = |bytes: u64| bytes.next_multiple_of(256);
        let long::LongNeeds { bytes, tables } = long::long_needs(plan, l)?;
        let offsets = plan.offsets.len() as u64;
        let cursors = offsets * 8;
        let cursor_bytes = if plan.grouping.is_some() {
            GROUP_LENGTHS as u64 * 4
        } else {
            0
        };
        let long_tables_at = cursors + cursor_bytes;
        let ids = long_tables_at + tables.len() as u64 * 8;
        let ids_end = ids + offsets.saturating_sub(1) * 4;
        let keys_copy_at = align(ids_end);
        let copy_bytes = if l.copy_keys {
            l.n * l.key_bytes as u64
        } else {
            0
        };
        let long_at = align(keys_copy_at + copy_bytes);
        let end = if copy_bytes == 0 && bytes == 0 {
            ids_end
        } else {
            long_at + bytes
        };
        Ok(Memory {
            head: (ids / 8) as usize,
            cursors,
            long_tables: tables,
            long_tables_at,
            ids,
            keys_copy: (keys_copy_at, copy_bytes),
            long: (long_at, bytes),
            bytes: end,
        })
    }

    /// The table's words, as the device reads them from the start of the memory.
    fn head(&self, plan: &Planned) -> Vec<u64> {
        let mut head = Vec::with_capacity(self.head);
        head.extend(plan.offsets.iter().map(|&o| o as u64));
        if let Some(grouping) = &plan.grouping {
            let pairs = grouping.firsts.chunks(2);
            head.extend(pairs.map(|p| u64::from(p[0]) | u64::from(p[1]) << 32));
        }
        head.extend_from_slice(&self.long_tables);
        head
    }
}

/// Device addresses of one segmented sort.
struct Launch {
    keys: u64,
    /// Where the radix sorts of segments write the sorted keys: `keys` (in place), or 0 where
    /// they need no writing (argsorts whose every launch is such a sort).
    sorted_keys: u64,
    /// Keys (and values, indices) in the buffers.
    n: u64,
    /// Values permuted with the keys (0: none).
    values: u64,
    value_bytes: usize,
    /// Receives the sorting permutation of each segment (0: none).
    indices: u64,
    key_bytes: usize,
    map: u32,
    /// Bytes of device memory the long segments' sorts may take: as many as the keys and values
    /// (indices) hold, less what the call took beside them (an argsort's copy of the keys), so
    /// that a sort needs at most twice the memory of what it sorts.
    spare: u64,
    /// Whether the keys are only read: the sort works on a copy of them in its memory.
    copy_keys: bool,
}

impl Launch {
    /// The sort of the `n` keys of type `K` at device address `keys` alone, in place.
    fn keys<K: SortKey>(keys: u64, n: usize, order: Order) -> Launch {
        Launch {
            keys,
            sorted_keys: keys,
            n: n as u64,
            values: 0,
            value_bytes: 0,
            indices: 0,
            key_bytes: size_of::<K>(),
            map: K::key_map(order),
            spare: n as u64 * size_of::<K>() as u64,
            copy_keys: false,
        }
    }

    /// The sort of the `n` keys of type `K` at `keys` with their values of `value_bytes` at
    /// `values`, in place.
    fn pairs<K: SortKey>(
        (keys, values): (u64, u64),
        value_bytes: usize,
        n: usize,
        order: Order,
    ) -> Launch {
        Launch {
            values,
            value_bytes,
            spare: n as u64 * (size_of::<K>() + value_bytes) as u64,
            ..Launch::keys::<K>(keys, n, order)
        }
    }

    /// Whether each key sorts with its position (for indices or values).
    fn indexed(&self) -> bool {
        self.indices != 0 || self.values != 0
    }

    /// Whether this is an argsort: positions to the indices, no values.
    fn is_argsort(&self) -> bool {
        self.indices != 0 && self.values == 0
    }
}

impl GpuSorter {
    /// Sorts every segment of `keys` independently, in `order`: each row of a row-major matrix
    /// ([`Segments::Rows`]) or each `keys[offsets[i]..offsets[i + 1]]`
    /// ([`Segments::Offsets`]), through a device copy of the keys. Keys outside every segment
    /// stay as they are.
    ///
    /// # Current implementation
    ///
    /// Segments are padded to a power of two and grouped by it, one launch per padded length.
    /// Segments of up to 64 keys are sorted in registers by a bitonic network, each thread 32
    /// positions (several segments of up to 32 keys, or half of one of up to 64), loaded and
    /// stored through shared memory. Rows of 128 to 8192 keys (a power of two; up to 512 for
    /// 8-byte keys on devices with less shared memory) are sorted by the bitonic sort's tile sort
    /// run over all of them as one array and stopped once every row is sorted. Every other
    /// segment of up to 8192 keys (fewer for 8-byte keys on devices with less shared memory) is
    /// sorted by one block: up to 256 keys by a bitonic network in shared memory and registers,
    /// several segments to a block, longer ones by an LSD radix sort of the segment held in
    /// registers. Longer segments, all of a call
    /// together: keys alone in rows of their padded length (+∞ past each segment's end; rows
    /// of a power of two in place) by one bitonic network over those rows; 4-byte keys with
    /// their positions the same way, packed into 8-byte items; 8-byte keys with their
    /// positions laid end to end and sorted by two stable radix sorts, by key and then by
    /// segment. Device memory beside the keys (and values, indices), the offsets and 4 bytes per
    /// segment for their ids: for long segments at most as much as the keys and values
    /// (indices) hold, less an argsort's copy of its keys, and the radix sorts' status words;
    /// they go in chunks and runs that fit it, and an argsort's segment too long for them by a
    /// radix sort that moves only its indices.
    ///
    /// # Errors
    /// [`Error::BadSegments`] for rows that do not divide the keys, decreasing offsets or
    /// offsets past the keys; [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or
    /// [`Error::Cuda`]. On error `keys` is unchanged unless the final copy back failed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order, Segments};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut matrix = [3u32, 1, 2, /* next row */ 9, 7, 8];
    /// gpu.sort_segments(&mut matrix, Segments::Rows(3), Order::Ascending)?;
    /// assert_eq!(matrix, [1, 2, 3, 7, 8, 9]);
    ///
    /// let mut keys = [5.0f32, -1.0, /* | */ 4.0, /* | */ 2.0, 0.0, -3.0];
    /// gpu.sort_segments(&mut keys, Segments::Offsets(&[0, 2, 3, 6]), Order::Descending)?;
    /// assert_eq!(keys, [5.0, -1.0, 4.0, 2.0, 0.0, -3.0]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_segments<K: SortKey>(
        &self,
        keys: &mut [K],
        segments: Segments<'_>,
        order: Order,
    ) -> Result<()> {
        let queue = self.own_queue();
        let plan = queue.on.plan_segments::<K>(segments, keys.len(), false)?;
        if plan.is_empty() {
            return Ok(());
        }
        let device = self.upload(keys)?;
        let at = device.as_device_ptr().as_raw();
        queue.run_segments(&plan, Launch::keys::<K>(at, keys.len(), order))?;
        queue.synchronize()?;
        device
            .copy_to(keys)
            .context("copying sorted segments to the host")
    }

    /// Sorts every segment of `keys` stably (equal keys keep their order) and moves each value
    /// with its key: [`GpuSorter::sort_segments`] for pairs (`u32`, `u64` or `u128` values).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`]; otherwise as [`GpuSorter::sort_segments`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order, Segments};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = [2i64, 1, 2, /* next row */ 0, 0, -1];
    /// let mut values = [10u32, 11, 12, 13, 14, 15];
    /// gpu.sort_segments_by_key(&mut keys, &mut values, Segments::Rows(3), Order::Ascending)?;
    /// assert_eq!(values, [11, 10, 12, 15, 13, 14]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_segments_by_key<K: SortKey, V: SortValue>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        segments: Segments<'_>,
        order: Order,
    ) -> Result<()> {
        let n = keys.len();
        check_pairs(n, values.len())?;
        let queue = self.own_queue();
        let plan = queue.on.plan_segments::<K>(segments, n, true)?;
        if plan.is_empty() {
            return Ok(());
        }
        let device_keys = self.upload(keys)?;
        let device_values = self.upload(values)?;
        let at = (device_keys.as_device_ptr(), device_values.as_device_ptr());
        let launch = Launch::pairs::<K>((at.0.as_raw(), at.1.as_raw()), size_of::<V>(), n, order);
        queue.run_segments(&plan, launch)?;
        queue.synchronize()?;
        device_keys
            .copy_to(keys)
            .context("copying sorted segments to the host")?;
        device_values
            .copy_to(values)
            .context("copying sorted segments' values to the host")
    }

    /// The stable sorting permutation of every segment of `keys`, as positions within the
    /// segment (`torch.sort(dim=-1, stable=True)`'s indices for rows): `indices[s + j]` is the
    /// position in segment `s..` of its `j`-th key in `order`, equal keys in input order.
    /// Positions outside every segment are 0. `keys` is not changed.
    ///
    /// # Errors
    /// As [`GpuSorter::sort_segments`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order, Segments};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let scores = [0.5f32, 0.9, 0.5, /* next row */ 0.1, 0.3, 0.2];
    /// let ranks = gpu.argsort_segments(&scores, Segments::Rows(3), Order::Descending)?;
    /// assert_eq!(ranks, [1, 0, 2, 1, 2, 0]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn argsort_segments<K: SortKey>(
        &self,
        keys: &[K],
        segments: Segments<'_>,
        order: Order,
    ) -> Result<Vec<u32>> {
        let n = keys.len();
        let queue = self.own_queue();
        let plan = queue.on.plan_segments::<K>(segments, n, true)?;
        if plan.is_empty() {
            // Every key lies in an empty segment or in none: position 0.
            return Ok(vec![0; n]);
        }
        let device_keys = self.upload(keys)?;
        let device_indices = self.alloc::<u32>(n, "the segments' indices")?;
        let at = (device_keys.as_device_ptr(), device_indices.as_device_ptr());
        // The upload is the sort's own, sorted in place: no copy.
        let launch =
            queue
                .on
                .argsort_launch::<K>(&plan, (at.0.as_raw(), at.1.as_raw()), n, order, false);
        queue.run_segments(&plan, launch)?;
        queue.synchronize()?;
        let mut indices = vec![0u32; n];
        device_indices
            .copy_to(&mut indices[..])
            .context("copying segment indices to the host")?;
        Ok(indices)
    }
}

impl Queue<'_> {
    /// Queues the sort of every segment of `keys` on its own, in place: the device counterpart
    /// of [`GpuSorter::sort_segments`]. The offsets are copied (through page-locked memory the
    /// sorter keeps) as the call queues its work: they may be dropped once it returns.
    ///
    /// # Errors
    /// As [`GpuSorter::sort_segments`]; [`Error::OutOfDeviceMemory`] where the scratch
    /// ([`Work::SortSegments`](super::Work::SortSegments)) cannot be had.
    pub fn sort_segments<K: SortKey>(
        &mut self,
        keys: &mut (impl DeviceMemoryMut<K> + ?Sized),
        segments: Segments<'_>,
        order: Order,
    ) -> Result<()> {
        let n = keys.len();
        let plan = self.on.plan_segments::<K>(segments, n, false)?;
        let keys_at = self.write(keys, "the keys")?;
        let launch = Launch::keys::<K>(keys_at.address, n, order);
        self.run_segments(&plan, launch)
    }

    /// Queues the stable sort of every segment of `keys` with `values` (one per key) moved
    /// along: the device counterpart of [`GpuSorter::sort_segments_by_key`].
    ///
    /// # Errors
    /// As [`Queue::sort_segments`], and [`Error::LengthMismatch`].
    pub fn sort_segments_by_key<K: SortKey, V: SortValue>(
        &mut self,
        keys: &mut (impl DeviceMemoryMut<K> + ?Sized),
        values: &mut (impl DeviceMemoryMut<V> + ?Sized),
        segments: Segments<'_>,
        order: Order,
    ) -> Result<()> {
        let n = keys.len();
        check_pairs(n, values.len())?;
        let plan = self.on.plan_segments::<K>(segments, n, true)?;
        let keys_at = self.write(keys, "the keys")?;
        let values_at = self.write(values, "the values")?;
        let at = (keys_at.address, values_at.address);
        self.run_segments(&plan, Launch::pairs::<K>(at, size_of::<V>(), n, order))
    }

    /// Queues the stable argsort of every segment of `keys` into `indices` (as many, positions
    /// within the segment, 0 outside every segment): the device counterpart of
    /// [`GpuSorter::argsort_segments`]. `keys` is only read.
    ///
    /// # Errors
    /// As [`Queue::sort_segments`], and [`Error::LengthMismatch`].
    pub fn argsort_segments<K: SortKey>(
        &mut self,
        keys: &(impl DeviceMemory<K> + ?Sized),
        indices: &mut (impl DeviceMemoryMut<u32> + ?Sized),
        segments: Segments<'_>,
        order: Order,
    ) -> Result<()> {
        let n = keys.len();
        check_pairs(n, indices.len())?;
        let plan = self.on.plan_segments::<K>(segments, n, true)?;
        let keys_at = self.read(keys, "the keys")?;
        let indices_at = self.write(indices, "the indices")?;
        let at = (keys_at.address, indices_at.address);
        let launch = self.on.argsort_launch::<K>(&plan, at, n, order, true);
        self.run_segments(&plan, launch)
    }

    /// Queues `plan` of the launch `l` in memory of its own, the caller's scratch or the
    /// pool's.
    fn run_segments(&self, plan: &Planned, l: Launch) -> Result<()> {
        if plan.leaves_alone(&l) {
            return Ok(());
        }
        let memory = Memory::new(plan, &l)?;
        let scratch = self.require_scratch(memory.bytes, "the segmented sort's memory")?;
        self.on
            .enqueue_segments(plan, l, &memory, scratch.range().0)
    }
}

impl On<'_> {
    /// Bytes of scratch the segmented sort of `n` keys of type `K` in `segments` takes,
    /// carrying `carried` along.
    pub(super) fn segments_scratch_bytes<K: SortKey>(
        &self,
        segments: Segments<'_>,
        n: usize,
        carried: Carried,
    ) -> Result<u64> {
        let plan = self.plan_segments::<K>(segments, n, carried != Carried::Nothing)?;
        // Any nonzero address stands for the memory the launch will have.
        let order = Order::Ascending;
        let l = match carried {
            Carried::Nothing => Launch::keys::<K>(1, n, order),
            Carried::Indices => self.argsort_launch::<K>(&plan, (1, 1), n, order, true),
            Carried::Values(value_bytes) => Launch::pairs::<K>((1, 1), value_bytes, n, order),
        };
        if plan.leaves_alone(&l) {
            return Ok(0);
        }
        Ok(Memory::new(&plan, &l)?.bytes)
    }

    /// The launch of an argsort of `plan` of the `n` keys at `keys` into the indices at
    /// `indices`, which may sort the keys in place unless `read_only` (then a copy, where a
    /// launch must write them).
    fn argsort_launch<K: SortKey>(
        &self,
        plan: &Plan,
        (keys, indices): (u64, u64),
        n: usize,
        order: Order,
        read_only: bool,
    ) -> Launch {
        // The radix sorts of segments read the keys and need not write them back.
        let writes_keys = !self.radix_alone(plan, size_of::<K>());
        let copy_keys = read_only && writes_keys;
        Launch {
            sorted_keys: if writes_keys { keys } else { 0 },
            // A copy takes the keys' share of the memory to spare: the indices' is left.
            spare: n as u64
                * if copy_keys {
                    4
                } else {
                    size_of::<K>() as u64 + 4
                },
            copy_keys,
            indices,
            ..Launch::keys::<K>(keys, n, order)
        }
    }

    /// Whether every launch of `plan`, for keys of `key_bytes` with their positions, is a radix
    /// sort of a segment.
    fn radix_alone(&self, plan: &Plan, key_bytes: usize) -> bool {
        plan.long.is_empty()
            && plan.tile_rows.is_none()
            && plan
                .launches
                .iter()
                .all(|&(p, _, _)| !is_short(p) && self.limits.segments_radix(p, key_bytes, true))
    }

    /// The plan of a segmented sort of `n` keys of type `K`, with positions if `indexed` (an
    /// argsort's segments of one key too, which write their index).
    fn plan_segments<'o, K: SortKey>(
        &self,
        segments: Segments<'o>,
        n: usize,
        indexed: bool,
    ) -> Result<Planned<'o>> {
        check_len(n)?;
        let bytes = element_bytes(size_of::<K>() as u32, indexed);
        let max = max_row_log2(bytes, self.limits.max_shared_per_block).unwrap_or(0);
        let tile = (!indexed).then(|| self.limits.window_log2(size_of::<K>()));
        Ok(Planned {
            plan: plan(segments, n, (max, tile), indexed)?,
            offsets: match segments {
                Segments::Offsets(offsets) => offsets,
                Segments::Rows(_) => &[],
            },
        })
    }

    /// Lists the ids of `plan`'s segments by length (`segments_group`), from the offsets and
    /// the cursors in the memory at `at`.
    fn enqueue_grouping(&self, plan: &Planned, memory: &Memory, at: u64) -> Result<()> {
        let segments = plan.offsets.len().saturating_sub(1) as u64;
        let grid = segments.div_ceil(256).min(1 << 16) as u32;
        let args = GroupArgs {
            offsets: at,
            segments,
            singles: u32::from(plan.grouping.as_ref().is_some_and(|g| g.singles)),
            cursors: at + memory.cursors,
            ids: at + memory.ids,
        };
        // SAFETY: the memory holds the segments' offsets (non-decreasing, checked by `plan`),
        // the cursors, the first entry of each length, and room for every listed segment, the
        // grouping's counts of each length; any grid of 256 threads does.
        unsafe { self.launch(segments_group, Shape::new(grid, 256, 0), args) }
    }

    /// Queues `plan`'s launches of `l` with their memory at `at` (`memory.bytes`): the table
    /// copied there, an argsort's keys copied where they are only read and its indices outside
    /// every segment zeroed, the ids grouped, the long segments' sorts, then the blocks'.
    fn enqueue_segments(&self, plan: &Planned, l: Launch, memory: &Memory, at: u64) -> Result<()> {
        self.bind()?;
        self.upload_table(&memory.head(plan), at, "the segments' offsets and tables")?;
        let l = if l.copy_keys {
            let copy = at + memory.keys_copy.0;
            self.copy((l.keys, copy), memory.keys_copy.1, "the keys to argsort")?;
            Launch {
                keys: copy,
                sorted_keys: copy,
                ..l
            }
        } else {
            l
        };
        if l.indices != 0 && !plan.covers_all && l.n > 0 {
            self.zero(l.indices, l.n * 4, "the indices outside every segment")?;
        }
        let (offsets_at, ids_at) = match &plan.grouping {
            Some(grouping) => {
                if grouping.entries > 0 {
                    self.enqueue_grouping(plan, memory, at)?;
                }
                (at, at + memory.ids)
            }
            None => (0, 0),
        };
        let l = &l;
        let bytes = element_bytes(l.key_bytes as u32, l.indexed());
        let value_words = if l.values == 0 {
            0
        } else {
            (l.value_bytes / 4) as u32
        };
        let grid_of = |blocks: u64| {
            u32::try_from(blocks).map_err(|_| Error::TooLong {
                len: blocks,
                max: u64::from(u32::MAX),
            })
        };
        let long = long::LongMemory {
            offsets: offsets_at,
            ids: ids_at,
            buffer: at + memory.long.0,
            tables: at + memory.long_tables_at,
        };
        self.enqueue_long_segments(plan, l, long)?;
        for &(p, count, first) in &plan.launches {
            let list = if ids_at == 0 {
                0
            } else {
                ids_at + first as u64 * 4
            };
            if is_short(p) {
                let grid = grid_of(short_blocks(count, p))?;
                let shape = Shape::new(grid, SHORT_SEGMENTS_THREADS, short_shared_bytes(bytes));
                let args = ShortArgs {
                    keys: l.keys,
                    values: l.values,
                    indices: l.indices,
                    count,
                    row_len: plan.row_len,
                    offsets: offsets_at,
                    list,
                    row_log2: p,
                    map: l.map,
                    value_words,
                };
                // SAFETY: every entry's segment lies in the keys (checked by `plan`), values
                // (of `value_words` words) and indices are as long as the keys; the launch
                // shape is the kernel's.
                unsafe { self.launch(short_kernel(l.key_bytes, l.indexed()), shape, args)? };
            } else if self.limits.segments_radix(p, l.key_bytes, l.indexed()) {
                let bytes = radix_shared_bytes(p, l.key_bytes as u32, l.indexed());
                let shape = Shape::new(grid_of(count)?, radix_threads(p), bytes);
                let args = RadixArgs {
                    keys: l.keys,
                    sorted_keys: l.sorted_keys,
                    values: l.values,
                    indices: l.indices,
                    count,
                    row_len: plan.row_len,
                    offsets: offsets_at,
                    list,
                    row_log2: p,
                    map: l.map,
                    value_words,
                };
                // SAFETY: as above.
                unsafe { self.launch(radix_kernel(l.key_bytes, l.indexed()), shape, args)? };
            } else {
                let (t, grid) = (tile_log2(p), grid_of(blocks(count, p))?);
                let shape = Shape::new(grid, threads(t), shared_bytes(t, bytes));
                let args = SortArgs {
                    keys: l.keys,
                    values: l.values,
                    indices: l.indices,
                    count,
                    row_len: plan.row_len,
                    offsets: offsets_at,
                    list,
                    row_log2: p,
                    map: l.map,
                };
                let kernel = kernel(l.key_bytes, l.indexed(), l.value_bytes);
                // SAFETY: as above.
                unsafe { self.launch(kernel, shape, args)? };
            }
        }
        if let Some((stages, n)) = plan.tile_rows {
            bitonic::enqueue_row_tiles(self, l.keys, n, l.key_bytes, stages, l.map)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::kernels::Family;

    /// The table (offsets, cursors, long tables) heads the memory, in the words the device
    /// reads; the ids follow it, and an argsort's keys' copy and the long segments' buffer
    /// lie apart from everything, 256-aligned, within the bytes asked for.
    #[test]
    fn a_segmented_sorts_memory_holds_its_parts_apart() {
        let offsets: Vec<usize> = vec![0, 3, 3, 20_000, 20_100, 70_000];
        let n = 70_000;
        let planned = Planned {
            plan: plan(Segments::Offsets(&offsets), n, (13, None), true).unwrap(),
            offsets: &offsets,
        };
        assert_eq!(planned.long.len(), 2, "two segments longer than a block");
        let argsort = Launch {
            indices: 1 << 41,
            spare: n as u64 * 4,
            copy_keys: true,
            ..Launch::keys::<u64>(1 << 40, n, Order::Ascending)
        };
        let memory = Memory::new(&planned, &argsort).unwrap();
        let head = memory.head(&planned);
        assert_eq!(head.len(), memory.head);
        assert_eq!(head[..offsets.len()], [0, 3, 3, 20_000, 20_100, 70_000]);
        assert_eq!(memory.cursors, offsets.len() as u64 * 8);
        let firsts = &planned.grouping.as_ref().unwrap().firsts;
        let cursor = |i: usize| head[offsets.len() + i / 2] >> (32 * (i % 2)) & 0xffff_ffff;
        assert!((0..GROUP_LENGTHS).all(|i| cursor(i) == u64::from(firsts[i])));
        assert_eq!(
            memory.long_tables_at,
            memory.cursors + GROUP_LENGTHS as u64 * 4
        );
        assert!(
            !memory.long_tables.is_empty(),
            "8-byte keys' runs have tables"
        );
        assert_eq!(memory.ids, head.len() as u64 * 8);
        let ids_end = memory.ids + 5 * 4;
        let (copy, copy_bytes) = memory.keys_copy;
        let (long, long_bytes) = memory.long;
        assert_eq!(copy_bytes, n as u64 * 8);
        assert!(copy >= ids_end && copy % 256 == 0);
        assert!(long >= copy + copy_bytes && long % 256 == 0 && long_bytes > 0);
        assert_eq!(memory.bytes, long + long_bytes);

        // Rows of keys alone, sorted in place by one launch: no memory at all.
        let rows = Planned {
            plan: plan(Segments::Rows(100), 1000, (13, None), false).unwrap(),
            offsets: &[],
        };
        let keys = Launch::keys::<u32>(1 << 40, 1000, Order::Ascending);
        let memory = Memory::new(&rows, &keys).unwrap();
        assert_eq!((memory.head, memory.bytes), (0, 0));
    }

    #[test]
    fn rows_launch_once_and_long_rows_sort_alone() {
        let p = plan(Segments::Rows(100), 1000, (13, None), false).unwrap();
        assert_eq!(p.launches, [(7, 10, 0)]);
        assert!(p.grouping.is_none() && p.long.is_empty() && p.covers_all);
        let p = plan(Segments::Rows(10_000), 30_000, (13, None), false).unwrap();
        assert!(p.launches.is_empty());
        assert_eq!(
            p.long,
            [(0, 10_000, 0), (10_000, 10_000, 1), (20_000, 10_000, 2)]
        );
        // Rows of one key: nothing to sort, but an argsort writes their index.
        assert!(
            plan(Segments::Rows(1), 5, (13, None), false)
                .unwrap()
                .launches
                .is_empty()
        );
        assert_eq!(
            plan(Segments::Rows(1), 5, (13, None), true)
                .unwrap()
                .launches,
            [(0, 5, 0)]
        );
        assert_eq!(
            plan(Segments::Rows(0), 0, (13, None), false).unwrap(),
            Plan {
                covers_all: true,
                ..Plan::default()
            }
        );
    }

    #[test]
    fn rows_of_keys_alone_of_a_power_of_two_take_the_tile_sort() {
        // Keys alone, tiles of 2^13: rows of 2^7 ..= 2^13 keys.
        for (len, tiles) in [
            (64, None),
            (65, None),
            (128, Some(7)),
            (1000, None),
            (1024, Some(10)),
            (2048, Some(11)),
            (8192, Some(13)),
            (16_384, None),
        ] {
            let n = len * 7;
            let p = plan(Segments::Rows(len), n, (13, Some(13)), false).unwrap();
            assert_eq!(p.tile_rows, tiles.map(|s| (s, n as u64)), "rows of {len}");
            // Nothing else is launched for them; the others as without the tile sort.
            let without = plan(Segments::Rows(len), n, (13, None), false).unwrap();
            if tiles.is_some() {
                assert!(p.launches.is_empty() && p.long.is_empty() && !p.is_empty());
                assert!(!without.launches.is_empty() || !without.long.is_empty());
            } else {
                assert_eq!(p, without, "rows of {len}");
            }
        }
        // Compact tiles of 2^9 (8-byte keys on small devices): rows up to 512 only.
        let p = plan(Segments::Rows(512), 5120, (12, Some(9)), false).unwrap();
        assert_eq!(p.tile_rows, Some((9, 5120)));
        let p = plan(Segments::Rows(1024), 5120, (12, Some(9)), false).unwrap();
        assert_eq!((p.tile_rows, p.launches), (None, vec![(10, 5, 0)]));
        // One row is a row too; no rows, nothing.
        let p = plan(Segments::Rows(4096), 4096, (13, Some(13)), false).unwrap();
        assert_eq!(p.tile_rows, Some((12, 4096)));
        assert!(
            plan(Segments::Rows(4096), 0, (13, Some(13)), false)
                .unwrap()
                .is_empty()
        );
        // Segments given by offsets keep the block sort, even of rows' shape.
        let offsets: Vec<usize> = (0..=4).map(|i| i * 1024).collect();
        let p = plan(Segments::Offsets(&offsets), 4096, (13, Some(13)), false).unwrap();
        assert_eq!((p.tile_rows, p.launches), (None, vec![(10, 4, 0)]));
    }

    /// The ids `segments_group` lists for `plan` of `offsets`, its warps taking their turns
    /// one after another.
    fn listed(plan: &Plan, offsets: &[usize]) -> Vec<u32> {
        let grouping = plan.grouping.as_ref().unwrap();
        let mut cursors = grouping.firsts.clone();
        let mut ids = vec![u32::MAX; grouping.entries as usize];
        for (i, w) in offsets.windows(2).enumerate() {
            if let Some(p) = grouped_length((w[1] - w[0]) as u64, grouping.singles) {
                ids[cursors[p as usize] as usize] = i as u32;
                cursors[p as usize] += 1;
            }
        }
        // Every length fills its room and stops where the next begins.
        for p in 0..GROUP_LENGTHS - 1 {
            assert_eq!(cursors[p], grouping.firsts[p + 1], "length 2^{p}");
        }
        assert_eq!(u64::from(cursors[GROUP_LENGTHS - 1]), grouping.entries);
        ids
    }

    #[test]
    fn offsets_group_segments_by_padded_length() {
        let offsets = [0, 0, 1, 3, 7, 8, 12, 20_000, 20_002];
        let p = plan(Segments::Offsets(&offsets), 20_002, (13, None), false).unwrap();
        // Lengths 0, 1, 2, 4, 1, 4, 19988, 2: the launches', then the long one.
        assert_eq!(p.launches, [(1, 2, 0), (2, 2, 2)]);
        assert_eq!(listed(&p, &offsets), [2, 7, 3, 5, 6]);
        assert_eq!(p.grouping.as_ref().unwrap().firsts[15], 4);
        assert_eq!(p.long, [(12, 19_988, 6)]);
        assert!(p.covers_all);
        let singles = plan(Segments::Offsets(&offsets), 20_002, (13, None), true).unwrap();
        assert_eq!(singles.launches[0], (0, 2, 0));
        assert_eq!(listed(&singles, &offsets)[..2], [1, 4]);
        // Keys before the first offset or after the last are in no segment.
        assert!(
            !plan(Segments::Offsets(&[2, 5]), 5, (13, None), false)
                .unwrap()
                .covers_all
        );
        assert!(
            !plan(Segments::Offsets(&[0, 4]), 5, (13, None), false)
                .unwrap()
                .covers_all
        );
        assert!(
            plan(Segments::Offsets(&[]), 0, (13, None), false)
                .unwrap()
                .covers_all
        );
    }

    #[test]
    fn offsets_across_chunks_group_like_one_pass() {
        // Lengths cycling through 0 ..= 70 and a long one now and then, over several chunks.
        let lens: Vec<usize> = (0..3 * GROUP_CHUNK + 77)
            .map(|i| if i % 5001 == 0 { 9000 } else { i % 71 })
            .collect();
        let mut offsets = vec![0];
        for len in &lens {
            offsets.push(offsets.last().unwrap() + len);
        }
        let n = *offsets.last().unwrap();
        let p = plan(Segments::Offsets(&offsets), n, (13, None), true).unwrap();
        // The same grouping, one segment at a time.
        let mut expect: Vec<Vec<u32>> = vec![Vec::new(); GROUP_LENGTHS];
        let mut long = Vec::new();
        for (i, &len) in lens.iter().enumerate() {
            let r = row_log2(len as u64);
            if len == 0 {
                continue;
            }
            expect[r as usize].push(i as u32);
            if r > 13 {
                long.push((offsets[i] as u64, len as u64, i as u32));
            }
        }
        let mut at = 0;
        let mut launches = Vec::new();
        for (r, ids) in expect.iter().enumerate().filter(|(_, ids)| !ids.is_empty()) {
            if r <= 13 {
                launches.push((r as u32, ids.len() as u64, at));
            }
            at += ids.len();
        }
        assert_eq!(p.launches, launches);
        assert_eq!(listed(&p, &offsets), expect.concat());
        assert_eq!(p.long, long);
        // A decrease in a later chunk is named, the first of two.
        let mut bad_offsets = offsets.clone();
        bad_offsets[2 * GROUP_CHUNK + 5] = 0;
        bad_offsets[3 * GROUP_CHUNK + 5] = 0;
        match plan(Segments::Offsets(&bad_offsets), n, (13, None), false) {
            Err(Error::BadSegments { reason }) => assert!(
                reason.starts_with(&format!("offsets[{}] = 0 is below", 2 * GROUP_CHUNK + 5)),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_segments_say_what_is_wrong() {
        let message = |s, n| match plan(s, n, (13, None), false) {
            Err(Error::BadSegments { reason }) => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message(Segments::Rows(3), 10),
            "10 keys are not a whole number of rows of 3 keys"
        );
        assert_eq!(
            message(Segments::Rows(0), 10),
            "rows of 0 keys cannot hold 10 keys"
        );
        assert_eq!(
            message(Segments::Offsets(&[0, 5, 4]), 10),
            "offsets[2] = 4 is below offsets[1] = 5: offsets must not decrease"
        );
        assert_eq!(
            message(Segments::Offsets(&[0, 11]), 10),
            "the last offset, 11, is past the 10 keys"
        );
    }

    #[test]
    fn short_rows_and_segments_take_the_register_sort() {
        // Rows of up to 64 keys (padded to 2^6) take the register sort, longer ones the block.
        for (len, short) in [(1, true), (16, true), (33, true), (64, true), (65, false)] {
            let p = plan(Segments::Rows(len), len * 10, (13, None), true).unwrap();
            assert_eq!(p.launches.len(), 1);
            assert_eq!(is_short(p.launches[0].0), short, "rows of {len}");
        }
        // Segments: a launch per padded length, short ones and long ones apart.
        let offsets = [0, 5, 37, 101, 102, 300, 364];
        let p = plan(Segments::Offsets(&offsets), 364, (13, None), false).unwrap();
        // Lengths 5, 32, 64, 1, 198, 64.
        assert_eq!(p.launches, [(3, 1, 0), (5, 1, 1), (6, 2, 2), (8, 1, 4)]);
        let short: Vec<bool> = p.launches.iter().map(|l| is_short(l.0)).collect();
        assert_eq!(short, [true, true, true, false]);
    }

    #[test]
    fn the_register_sorts_keep_their_runs_in_registers() {
        for (_, kernel) in SHORT_KERNELS {
            super::super::assert_no_local_memory(
                kernel.name(),
                "docs/decisions.md, \"Short segments in registers\"",
            );
        }
    }

    /// Whether the PTX has kernel `name`.
    fn in_ptx(name: &str) -> bool {
        super::super::KERNELS_PTX.contains(&format!(".entry {name}("))
    }

    #[test]
    fn every_width_has_a_kernel() {
        for (kb, indexed) in [(4, false), (8, false), (4, true), (8, true)] {
            let bits = kb * 8;
            let k = short_kernel(kb, indexed);
            let expected = if indexed {
                format!("segments_short_indexed_u{bits}")
            } else {
                format!("segments_short_u{bits}")
            };
            assert_eq!(k.name(), expected);
            assert_eq!(
                (k.info().key_bytes as usize, k.family()),
                (kb, Family::ShortSegments)
            );
            let k = radix_kernel(kb, indexed);
            assert_eq!(
                (k.info().key_bytes as usize, k.family()),
                (kb, Family::Segments)
            );
            assert_eq!(k.name().contains("keys"), !indexed, "{}", k.name());
        }
        for kb in [4, 8] {
            let bits = kb * 8;
            assert_eq!(
                kernel(kb, false, 0).name(),
                format!("segments_sort_u{bits}")
            );
            for vb in [0, 4, 8, 16] {
                // An argsort (no values) sorts with the 4-byte values' kernel.
                let expected = format!("segments_indexed_u{bits}_u{}", vb.max(4) * 8);
                assert_eq!(kernel(kb, true, vb).name(), expected);
            }
        }
        let names = KERNELS.map(|(_, k)| k.name());
        let short = SHORT_KERNELS.map(|(_, k)| k.name());
        let radix = RADIX_KERNELS.map(|(_, k)| k.name());
        for name in names.into_iter().chain(short).chain(radix) {
            assert!(in_ptx(name), "{name}");
        }
        assert_eq!(segments_group.family(), Family::ShortSegments);
        assert!(in_ptx(segments_group.name()));
    }
}
