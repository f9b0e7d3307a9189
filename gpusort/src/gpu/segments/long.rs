//! Segments longer than a block sorts, all of one call at once (docs/design.md, "Rows and
//! segments"). Rows of keys alone whose length is a power of two: one bitonic network over all
//! rows, in place. Other keys alone: the segments of each padded length side by side as rows of
//! that length, +∞ past each segment's end, one network over those rows (a segment alone in its
//! padded length is sorted in place instead). 4-byte keys with their positions (argsorts,
//! pairs): each key packed above its position into a `u64`, the same rows and network. 8-byte
//! keys with their positions: every long segment laid end to end and sorted by two stable radix
//! sorts, by key and then by segment ([`LongSegments`]).

use super::{Launch, Plan};
use crate::error::{Error, Result};
use crate::gpu::launch::On;
use crate::gpu::launch::Shape;
use crate::gpu::{bitonic, radix};
use kernels_gpu::kernels::{
    Kernel, segments_long_collect_u64, segments_long_gather_u64, segments_long_ids,
    segments_long_scatter_u64, segments_pack_keys_u32, segments_pack_keys_u64, segments_pack_u32,
    segments_unpack_keys_u32, segments_unpack_keys_u64, segments_unpack_u32_u32,
    segments_unpack_u32_u64, segments_unpack_u32_u128,
};
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::segments::{
    LongCollectArgs, LongGatherArgs, LongIdsArgs, LongScatterArgs, PackArgs, UnpackArgs, row_log2,
};
use std::ops::Range;

/// Most keys of long segments sorted together by the radix sorts: compact positions are `u32`.
const MAX_COMPACT: u64 = 1 << 32;

/// How the long segments of a plan are sorted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// There are none.
    Nothing,
    /// Rows of keys alone of a power of two: one network over all of them, in place.
    Rows,
    /// Packed into padded rows of these items.
    Padded(Items),
    /// 8-byte keys with their positions: the radix sorts of runs.
    Radix,
}

/// How `plan`'s long segments of the launch `l` are sorted.
fn way(plan: &Plan, l: &Launch) -> Way {
    let Some(longest) = plan.long.iter().map(|&(_, len, _)| len).max() else {
        return Way::Nothing;
    };
    match (l.indexed(), l.key_bytes) {
        (false, _) if plan.row_len == longest && longest.is_power_of_two() => Way::Rows,
        (false, _) => Way::Padded(Items::Keys),
        (true, 4) => Way::Padded(Items::Indexed),
        (true, _) => Way::Radix,
    }
}

/// What the sorts of long segments need beside the keys: the bytes of their buffer, and their
/// tables, which go to the device with the segments' offsets.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct LongNeeds {
    pub(super) bytes: u64,
    pub(super) tables: Vec<u64>,
}

/// Where the sorts of long segments find their memory: the segments' offsets and their ids
/// grouped by length (0 for rows), the buffer, and the tables ([`LongNeeds`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct LongMemory {
    pub(super) offsets: u64,
    pub(super) ids: u64,
    pub(super) buffer: u64,
    pub(super) tables: u64,
}

/// What the padded rows of long segments hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Items {
    /// The keys alone (4 or 8 bytes).
    Keys,
    /// 4-byte keys, each above its position in a `u64`.
    Indexed,
}

/// The packing of long segments into padded rows of `items` of keys of `key_bytes` (4 or 8),
/// and the bytes of one item.
fn pack_kernel(items: Items, key_bytes: u64) -> (Kernel<PackArgs>, u64) {
    match (items, key_bytes) {
        (Items::Keys, 4) => (segments_pack_keys_u32, 4),
        (Items::Keys, _) => (segments_pack_keys_u64, 8),
        (Items::Indexed, _) => (segments_pack_u32, 8),
    }
}

/// The unpacking of sorted padded rows of keys alone of `key_bytes` (4 or 8), which takes the
/// packing's argument.
fn unpack_keys_kernel(key_bytes: u64) -> Kernel<PackArgs> {
    match key_bytes {
        4 => segments_unpack_keys_u32,
        _ => segments_unpack_keys_u64,
    }
}

/// The unpacking of sorted padded rows of 4-byte keys with their positions, moving values of
/// `value_bytes` (4, 8 or 16; an argsort, without values, any of them).
fn unpack_kernel(value_bytes: usize) -> Kernel<UnpackArgs> {
    match value_bytes {
        8 => segments_unpack_u32_u64,
        16 => segments_unpack_u32_u128,
        _ => segments_unpack_u32_u32,
    }
}

/// Consecutive runs of the long segments of `lens` (their lengths, in order) whose keys add up
/// to at most `cap`, each as long as the next segment allows; a segment longer than `cap` is a
/// run of its own.
fn batches(lens: impl Iterator<Item = u64>, cap: u64) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    let mut total = 0;
    for (i, len) in lens.enumerate() {
        match runs.last_mut() {
            Some(run) if total + len <= cap => {
                run.end = i + 1;
                total += len;
            }
            _ => {
                runs.push(i..i + 1);
                total = len;
            }
        }
    }
    runs
}

/// The tables of [`kernels_gpu::segments::LongSegments`] for the long segments `long`
/// (`(first key, length, id)`), in one buffer: the compact position of each segment's first key
/// and the number of all their keys, then the index of each segment's first key.
fn tables(long: &[(u64, u64, u32)]) -> Vec<u64> {
    let mut t = Vec::with_capacity(2 * long.len() + 1);
    t.push(0);
    for &(_, len, _) in long {
        t.push(t.last().unwrap() + len);
    }
    t.extend(long.iter().map(|&(begin, ..)| begin));
    t
}

/// Digit passes of the radix sort by segment of `segments` segments: their ids' digits, an even
/// number, so that the sort ends in the buffers it started from.
fn id_passes(segments: u64) -> u32 {
    if segments <= 1 << 16 { 2 } else { 4 }
}

/// Byte offsets into one device allocation of the radix sorts of `m` keys of long segments,
/// with values of `value_bytes` (0: none). Three parts, each holding in turn what the steps
/// need: the keys collected for the sort by key, then the segment ids of the sort by segment,
/// then the keys in the final order; the compact positions throughout; the sort by key's
/// scratch, then the sort by segment's, then the values in the final order. An argsort of
/// segments that lie end to end already keeps the first two parts in the caller's buffers
/// (`in_place`: the keys' copy and the indices): only the third is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RadixLayout {
    /// `8m` bytes: keys, then ids, then keys.
    keys: u64,
    /// `4m` bytes: compact positions.
    from: u64,
    /// The larger of the sorts' scratch and `m` values.
    work: u64,
    bytes: u64,
}

impl RadixLayout {
    fn new(m: u64, value_bytes: u64, in_place: bool) -> RadixLayout {
        let align = |x: u64| x.next_multiple_of(256);
        let (from, work) = if in_place {
            (0, 0)
        } else {
            let from = align(8 * m);
            (from, align(from + 4 * m))
        };
        let scratch = radix::scratch_bytes(m, 8, 4)
            .max(radix::scratch_bytes(m, 4, 4))
            .max(m * value_bytes);
        RadixLayout {
            keys: 0,
            from,
            work,
            bytes: align(work + scratch),
        }
    }
}

/// What the sorts of `plan`'s long segments of the launch `l` need beside the keys.
///
/// # Errors
/// [`Error::TooLong`] for an argsort's segment of more than 2^32 keys of 8 bytes.
pub(super) fn long_needs(plan: &Plan, l: &Launch) -> Result<LongNeeds> {
    Ok(match way(plan, l) {
        Way::Nothing | Way::Rows => LongNeeds::default(),
        Way::Padded(items) => {
            let padded = Padded::new(l, pack_kernel(items, l.key_bytes as u64).1);
            LongNeeds {
                bytes: padded.bytes(&padded_lengths(&plan.long), &plan.long),
                tables: Vec::new(),
            }
        }
        Way::Radix => {
            let runs = RadixRuns::new(plan, l)?;
            LongNeeds {
                bytes: runs.bytes,
                tables: runs.tables,
            }
        }
    })
}

/// The long segments of 8-byte keys with their positions (argsorts, pairs), laid end to end in
/// runs that fit the launch's spare memory (and 2^32 keys), each sorted by two stable radix
/// sorts. A run of one segment of pairs takes the radix sort of its keys and values in place;
/// one of an argsort whose sort by key and segment would not fit, the radix sort that moves
/// only indices.
struct RadixRuns {
    runs: Vec<Range<usize>>,
    /// Each run's tables ([`tables`]), where their sort by key and segment needs them.
    tables: Vec<u64>,
    /// Where each run's tables start in `tables`, in bytes.
    table_at: Vec<u64>,
    /// The buffer the largest run needs.
    bytes: u64,
    pairs: bool,
    value_bytes: u64,
}

impl RadixRuns {
    /// # Errors
    /// [`Error::TooLong`] for an argsort's segment longer than 2^32 keys (its positions would
    /// not fit their `u32`).
    fn new(plan: &Plan, l: &Launch) -> Result<RadixRuns> {
        if l.indices != 0
            && let Some(&(_, len, _)) = plan.long.iter().find(|&&(_, len, _)| len > MAX_COMPACT)
        {
            return Err(Error::TooLong {
                len,
                max: MAX_COMPACT,
            });
        }
        let pairs = l.values != 0;
        let value_bytes = if pairs { l.value_bytes as u64 } else { 0 };
        let cap = run_cap(l.spare, value_bytes, in_place(&plan.long, l));
        let mut runs = RadixRuns {
            runs: batches(plan.long.iter().map(|&(_, len, _)| len), cap),
            tables: Vec::new(),
            table_at: Vec::new(),
            bytes: 0,
            pairs,
            value_bytes,
        };
        for run in &runs.runs {
            let segments = &plan.long[run.clone()];
            runs.table_at.push(runs.tables.len() as u64 * 8);
            let bytes = match segments {
                [(_, len, _)] if pairs => radix::scratch_bytes(*len, l.key_bytes, l.value_bytes),
                [(_, len, _), ..] if gathers(segments, l) => {
                    radix::gathered_scratch_bytes(*len, l.key_bytes)
                }
                _ => {
                    // Rows need no tables.
                    if plan.row_len == 0 {
                        runs.tables.extend(tables(segments));
                    }
                    runs.layout(segments, l).bytes
                }
            };
            runs.bytes = runs.bytes.max(bytes);
        }
        Ok(runs)
    }

    /// The parts of the buffer of the sort by key and segment of `segments` of `l`.
    fn layout(&self, segments: &[(u64, u64, u32)], l: &Launch) -> RadixLayout {
        let m = segments.iter().map(|&(_, len, _)| len).sum();
        RadixLayout::new(m, self.value_bytes, in_place(segments, l))
    }
}

impl On<'_> {
    /// Queues the sorts of `plan`'s segments too long for a block, in `memory` (at least what
    /// [`long_needs`] asks for, its tables on the device).
    pub(super) fn enqueue_long_segments(
        &self,
        plan: &Plan,
        l: &Launch,
        memory: LongMemory,
    ) -> Result<()> {
        match way(plan, l) {
            Way::Nothing => Ok(()),
            Way::Rows => {
                let longest = plan.row_len;
                let n = plan.long.len() as u64 * longest;
                bitonic::enqueue_rows(self, l.keys, n, l.key_bytes, row_log2(longest), l.map)
            }
            Way::Padded(items) => self.enqueue_padded(plan, l, memory, items),
            Way::Radix => self.enqueue_radix_long(plan, l, memory),
        }
    }

    /// The long segments of `plan` by padded length: packed (the keys alone, or 4-byte keys
    /// with their positions), sorted as rows by the window passes, put back (gathering the
    /// values from a copy). Each length's segments are those its list of grouped ids names
    /// (`table`), or rows; its rows go in chunks that fit the launch's spare memory beside the
    /// values' copy, one row at least, all chunks in one buffer in turn. Keys alone of a padded
    /// length that one segment has are sorted in place by the bitonic sort instead (no rows to
    /// share the launches with, no padding), and so are pairs whose row would not fit, by the
    /// radix sort of their keys and values.
    fn enqueue_padded(
        &self,
        plan: &Plan,
        l: &Launch,
        memory: LongMemory,
        items: Items,
    ) -> Result<()> {
        let (offsets_at, ids_at, at) = (memory.offsets, memory.ids, memory.buffer);
        let (kb, vb) = (l.key_bytes as u64, l.value_bytes as u64);
        let (pack, item_bytes) = pack_kernel(items, kb);
        let lengths = padded_lengths(&plan.long);
        let padded = Padded::new(l, item_bytes);
        // The segments sorted alone first: the values' copy then takes their scratch.
        for &(begin, len, _) in &plan.long {
            let p = row_log2(len);
            let count = lengths
                .iter()
                .find(|&&(q, _)| q == p)
                .map_or(1, |&(_, c)| c);
            match padded.alone(p, count) {
                Some(Alone::Bitonic) => {
                    bitonic::enqueue(self, l.keys + begin * kb, len, l.key_bytes, l.map)?
                }
                Some(Alone::Radix) => self.enqueue_radix_alone(begin, len, l, at)?,
                Some(Alone::Gathered) => self.enqueue_gathered_alone(begin, len, l, at)?,
                None => {}
            }
        }
        let values_bytes = padded.values_copy(&lengths);
        let values_in = if values_bytes == 0 {
            0
        } else {
            // Both hold the values' bytes.
            self.copy((l.values, at), l.n * vb, "the values of the long segments")?;
            at
        };
        let packed = at + values_bytes;
        for &(p, count) in lengths
            .iter()
            .filter(|&&(p, count)| padded.alone(p, count).is_none())
        {
            let chunk = padded.chunk_rows(p, count);
            let list = plan.grouping.as_ref().map(|g| g.firsts[p as usize]);
            for first in (0..count).step_by(chunk as usize) {
                let rows = chunk.min(count - first);
                // A chunk of rows starts `first` rows on; one of a list, `first` entries on.
                let on = |address: u64, bytes: u64| match (address, list) {
                    (0, _) | (_, Some(_)) => address,
                    _ => address + first * plan.row_len * bytes,
                };
                let list_at = list.map_or(0, |f| ids_at + (u64::from(f) + first) * 4);
                let all = rows << p;
                let shape = Shape::new(all.div_ceil(256).min(1 << 16) as u32, 256, 0);
                let rows_args = PackArgs {
                    keys: on(l.keys, kb),
                    packed,
                    count: rows,
                    row_len: plan.row_len,
                    offsets: offsets_at,
                    list: list_at,
                    row_log2: p,
                    map: l.map,
                };
                // SAFETY: the segments lie in the keys (checked by `plan`), `list_at` lists
                // `rows` of them (or they are rows), the buffer holds `all` items at `packed`,
                // the values' copy is apart from the values; any grid does.
                unsafe { self.launch(pack, shape, rows_args)? };
                bitonic::enqueue_rows(self, packed, all, item_bytes as usize, p, IDENTITY)?;
                if items == Items::Keys {
                    // SAFETY: as above.
                    unsafe { self.launch(unpack_keys_kernel(kb), shape, rows_args)? };
                } else {
                    let args = UnpackArgs {
                        packed,
                        keys: rows_args.keys,
                        indices: on(l.indices, 4),
                        values: on(l.values, vb),
                        values_in: on(values_in, vb),
                        count: rows,
                        row_len: plan.row_len,
                        offsets: offsets_at,
                        list: list_at,
                        row_log2: p,
                        map: l.map,
                    };
                    // SAFETY: as above.
                    unsafe { self.launch(unpack_kernel(l.value_bytes), shape, args)? };
                }
            }
        }
        Ok(())
    }

    /// The long segments of 8-byte keys with their positions (argsorts, pairs), by the runs of
    /// [`RadixRuns`], all in the one buffer in turn.
    fn enqueue_radix_long(&self, plan: &Plan, l: &Launch, memory: LongMemory) -> Result<()> {
        let runs = RadixRuns::new(plan, l)?;
        let at = memory.buffer;
        for (run, &table) in runs.runs.iter().zip(&runs.table_at) {
            let segments = &plan.long[run.clone()];
            match segments {
                [(begin, len, _)] if runs.pairs => self.enqueue_radix_alone(*begin, *len, l, at)?,
                [(begin, len, _)] if gathers(segments, l) => {
                    self.enqueue_gathered_alone(*begin, *len, l, at)?
                }
                _ => self.enqueue_radix_run(
                    segments,
                    plan.row_len,
                    l,
                    (at, runs.layout(segments, l)),
                    memory.tables + table,
                )?,
            }
        }
        Ok(())
    }

    /// One segment of pairs: the radix sort of its keys and values, in place, with the scratch
    /// at `scratch`.
    fn enqueue_radix_alone(&self, begin: u64, len: u64, l: &Launch, scratch: u64) -> Result<()> {
        let (kb, vb) = (l.key_bytes as u64, l.value_bytes as u64);
        radix::enqueue(
            self,
            &radix::Launch {
                keys: l.keys + begin * kb,
                values: l.values + begin * vb,
                scratch,
                n: len,
                key_bytes: l.key_bytes,
                value_bytes: l.value_bytes,
                map: l.map,
            },
        )
    }

    /// One segment of an argsort: the radix sort that reads its keys in place and moves only
    /// its indices, with the scratch at `scratch`.
    fn enqueue_gathered_alone(&self, begin: u64, len: u64, l: &Launch, scratch: u64) -> Result<()> {
        let kb = l.key_bytes as u64;
        let buffers = (l.keys + begin * kb, l.indices + begin * 4, scratch);
        radix::enqueue_gathered(self, buffers, len, l.key_bytes, l.map)
    }

    /// Long segments `segments` of 8-byte keys (at most 2^32 keys in all; rows of `row_len`
    /// keys, else 0) sorted at once: their keys and compact positions collected, sorted by key
    /// (the radix sort: stable), each position's segment looked up, the positions sorted by
    /// segment (stable again, by the digits the ids have; not for one segment), and through
    /// them the positions, keys and values gathered in that order and put in place. `(at,
    /// layout)`: the buffer and its parts; `tables`: the segments' [`tables`] on the device
    /// (unused for rows).
    fn enqueue_radix_run(
        &self,
        segments: &[(u64, u64, u32)],
        row_len: u64,
        l: &Launch,
        (at, layout): (u64, RadixLayout),
        tables: u64,
    ) -> Result<()> {
        let m: u64 = segments.iter().map(|&(_, len, _)| len).sum();
        let count = segments.len() as u64;
        let with_values = l.values != 0;
        let words = if with_values { l.value_bytes / 4 } else { 0 } as u32;
        // An argsort's keys are a copy and its indices free until written: segments end to end
        // are sorted in them, every step reading and writing each element's own place.
        let in_place = in_place(segments, l);
        // Rows locate by arithmetic, from their first row on; other segments by their tables.
        let (base, starts, begins) = if row_len != 0 {
            (segments[0].0, 0, 0)
        } else {
            (0, tables, tables + (count + 1) * 8)
        };
        let shift = |address: u64, bytes: u64| {
            if address == 0 {
                0
            } else {
                address + base * bytes
            }
        };
        let keys = shift(l.keys, 8);
        let indices = shift(l.indices, 4);
        let values = if with_values {
            shift(l.values, l.value_bytes as u64)
        } else {
            0
        };
        let (part, from, work) = if in_place {
            let first = segments[0].0;
            (l.keys + first * 8, l.indices + first * 4, at + layout.work)
        } else {
            (at + layout.keys, at + layout.from, at + layout.work)
        };
        let shape = Shape::new(m.div_ceil(256).min(1 << 16) as u32, 256, 0);

        let collect = LongCollectArgs {
            keys,
            sorted: part,
            from,
            all: m,
            row_len,
            starts,
            begins,
            count,
        };
        // SAFETY: the segments lie in the keys (checked by `plan`) and hold m ≤ 2^32 keys; the
        // parts of the buffer hold what the layout gives them (in place: the keys and indices
        // of the segments, each read and written by the same thread); any grid does.
        unsafe { self.launch(segments_long_collect_u64, shape, collect)? };
        let by_key = radix::Launch {
            keys: part,
            values: from,
            scratch: work,
            n: m,
            key_bytes: 8,
            value_bytes: 4,
            map: l.map,
        };
        radix::enqueue(self, &by_key)?;
        if count > 1 {
            // The keys sorted by key are not needed: their part takes the ids.
            let lookup = LongIdsArgs {
                from,
                ids: part,
                all: m,
                row_len,
                starts,
                begins,
                count,
            };
            // SAFETY: as above.
            unsafe { self.launch(segments_long_ids, shape, lookup)? };
            let by_segment = radix::Launch {
                keys: part,
                values: from,
                scratch: work,
                n: m,
                key_bytes: 4,
                value_bytes: 4,
                map: IDENTITY,
            };
            radix::enqueue_digits(self, &by_segment, id_passes(count))?;
        }
        // An argsort's keys are a copy: they need not be put in order.
        let placed = if l.indices == 0 { part } else { 0 };
        let gathered = if with_values { work } else { 0 };
        let gather = LongGatherArgs {
            from,
            keys,
            indices,
            values,
            placed,
            gathered,
            words,
            all: m,
            row_len,
            starts,
            begins,
            count,
        };
        // SAFETY: as above; `placed` and `gathered` lie apart from the keys and values.
        unsafe { self.launch(segments_long_gather_u64, shape, gather)? };
        if placed != 0 || with_values {
            let scatter = LongScatterArgs {
                placed,
                gathered,
                keys,
                values,
                words,
                all: m,
                row_len,
                starts,
                begins,
                count,
            };
            // SAFETY: as above.
            unsafe { self.launch(segments_long_scatter_u64, shape, scatter)? };
        }
        Ok(())
    }
}

/// How a long segment of the padded path is sorted alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Alone {
    /// Keys alone, in place by the bitonic sort.
    Bitonic,
    /// Keys and values, in place by the radix sort.
    Radix,
    /// An argsort's keys, read in place by the radix sort that moves only indices.
    Gathered,
}

/// The buffer of the padded path of one call: the values' copy (4-byte keys with values), then
/// each length's rows, a chunk at a time, in the room left of the launch's spare memory.
struct Padded {
    item_bytes: u64,
    keys_alone: bool,
    pairs: bool,
    argsort: bool,
    key_bytes: usize,
    value_bytes: usize,
    values_bytes: u64,
    room: u64,
}

impl Padded {
    fn new(l: &Launch, item_bytes: u64) -> Padded {
        let keys_alone = !l.indexed();
        let values_bytes = if keys_alone || l.values == 0 {
            0
        } else {
            aligned(l.n * l.value_bytes as u64)
        };
        Padded {
            item_bytes,
            keys_alone,
            pairs: l.values != 0,
            argsort: l.is_argsort(),
            key_bytes: l.key_bytes,
            value_bytes: l.value_bytes,
            values_bytes,
            room: l.spare.saturating_sub(values_bytes),
        }
    }

    /// Whether the segments of padded length 2^`p`, `count` of them, are each sorted alone:
    /// keys alone where one segment has the length, pairs and argsorts whose row does not fit
    /// the room.
    fn alone(&self, p: u32, count: u64) -> Option<Alone> {
        if self.keys_alone && count == 1 {
            Some(Alone::Bitonic)
        } else if self.too_wide(p) {
            Some(if self.pairs {
                Alone::Radix
            } else {
                Alone::Gathered
            })
        } else {
            None
        }
    }

    /// Whether a row of pairs or of an argsort of 2^`p` positions would not fit the room.
    fn too_wide(&self, p: u32) -> bool {
        (self.pairs || self.argsort) && (self.item_bytes << p) > self.room
    }

    /// Bytes of scratch of a segment of `len` keys sorted alone for its width.
    fn alone_scratch(&self, len: u64) -> u64 {
        if self.pairs {
            radix::scratch_bytes(len, self.key_bytes, self.value_bytes)
        } else {
            radix::gathered_scratch_bytes(len, self.key_bytes)
        }
    }

    /// Rows of a chunk of the `count` rows of 2^`p` positions: as many as the room holds, one
    /// at least.
    fn chunk_rows(&self, p: u32, count: u64) -> u64 {
        (self.room / (self.item_bytes << p)).clamp(1, count)
    }

    /// The buffer's bytes for the long segments `long` of padded `lengths`: the larger of the
    /// radix sorts' scratch of those sorted alone, and the values' copy with the largest
    /// chunk.
    fn bytes(&self, lengths: &[(u32, u64)], long: &[(u64, u64, u32)]) -> u64 {
        let scratch = long
            .iter()
            .filter(|&&(_, len, _)| self.too_wide(row_log2(len)))
            .map(|&(_, len, _)| self.alone_scratch(len))
            .max()
            .unwrap_or(0);
        let rows = lengths
            .iter()
            .filter(|&&(p, count)| self.alone(p, count).is_none())
            .map(|&(p, count)| aligned(self.chunk_rows(p, count) * (self.item_bytes << p)))
            .max();
        rows.map_or(scratch, |rows| {
            scratch.max(self.values_copy(lengths) + rows)
        })
    }

    /// Bytes of the values' copy, which only the rows of padded `lengths` read: none where
    /// every segment is sorted alone.
    fn values_copy(&self, lengths: &[(u32, u64)]) -> u64 {
        let rows = lengths
            .iter()
            .any(|&(p, count)| self.alone(p, count).is_none());
        if rows { self.values_bytes } else { 0 }
    }
}

/// `bytes` rounded up to an allocation's alignment, so that parts of one buffer start as
/// buffers of their own would.
fn aligned(bytes: u64) -> u64 {
    bytes.next_multiple_of(256)
}

/// The padded lengths of the long segments `long`, ascending, each with its number of
/// segments.
fn padded_lengths(long: &[(u64, u64, u32)]) -> Vec<(u32, u64)> {
    let mut lengths: std::collections::BTreeMap<u32, u64> = Default::default();
    for &(_, len, _) in long {
        *lengths.entry(row_log2(len)).or_default() += 1;
    }
    lengths.into_iter().collect()
}

/// Whether the radix sorts of the long segments `segments` of `l` run in its own buffers: an
/// argsort's, whose keys are a copy and whose indices are free until written, for segments
/// that lie end to end.
fn in_place(segments: &[(u64, u64, u32)], l: &Launch) -> bool {
    l.indices != 0 && segments.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0)
}

/// Whether a run of the long segments `segments` of 8-byte keys of `l` is an argsort's one
/// segment whose sorts by key and segment would not fit the spare memory: it takes the radix
/// sort that moves only indices instead.
fn gathers(segments: &[(u64, u64, u32)], l: &Launch) -> bool {
    let m = segments.iter().map(|&(_, len, _)| len).sum();
    l.is_argsort()
        && segments.len() == 1
        && RadixLayout::new(m, 0, in_place(segments, l)).bytes > l.spare
}

/// Most keys of a run of long segments whose radix sorts, with values of `value_bytes`, fit
/// `spare` bytes ([`RadixLayout`]), at least one and at most [`MAX_COMPACT`].
fn run_cap(spare: u64, value_bytes: u64, in_place: bool) -> u64 {
    let fits = |m: u64| RadixLayout::new(m, value_bytes, in_place).bytes <= spare;
    let (mut low, mut high) = (1, MAX_COMPACT);
    if fits(high) {
        return high;
    }
    // fits(low) or low = 1; !fits(high).
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if fits(mid) { low = mid } else { high = mid }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_kernel_is_in_the_segmented_sorts_module() {
        use kernels_gpu::args::KernelArgs;
        use kernels_gpu::kernels::Family;
        fn described<A: KernelArgs>(k: Kernel<A>) -> (&'static str, Family) {
            (k.name(), k.family())
        }
        let kernels = [
            described(pack_kernel(Items::Keys, 4).0),
            described(pack_kernel(Items::Keys, 8).0),
            described(unpack_keys_kernel(4)),
            described(unpack_keys_kernel(8)),
            described(pack_kernel(Items::Indexed, 4).0),
            described(unpack_kernel(4)),
            described(unpack_kernel(8)),
            described(unpack_kernel(16)),
            described(segments_long_collect_u64),
            described(segments_long_ids),
            described(segments_long_gather_u64),
            described(segments_long_scatter_u64),
        ];
        for (name, family) in kernels {
            assert_eq!(family, Family::Segments, "{name}");
            assert!(crate::gpu::KERNELS_PTX.contains(&format!(".entry {name}(")));
        }
    }

    #[test]
    fn each_width_packs_and_unpacks_with_its_kernels() {
        for kb in [4, 8] {
            let bits = kb * 8;
            let (pack, item_bytes) = pack_kernel(Items::Keys, kb);
            assert_eq!(pack.name(), format!("segments_pack_keys_u{bits}"));
            assert_eq!(item_bytes, kb);
            let unpack = unpack_keys_kernel(kb).name();
            assert_eq!(unpack, format!("segments_unpack_keys_u{bits}"));
        }
        let (pack, item_bytes) = pack_kernel(Items::Indexed, 4);
        assert_eq!((pack.name(), item_bytes), ("segments_pack_u32", 8));
        // An argsort (no values) unpacks with the 4-byte values' kernel.
        for (vb, values) in [(0, "u32"), (4, "u32"), (8, "u64"), (16, "u128")] {
            let expected = format!("segments_unpack_u32_{values}");
            assert_eq!(unpack_kernel(vb).name(), expected);
        }
    }

    #[test]
    fn runs_hold_at_most_the_cap_unless_one_segment_is_longer() {
        assert_eq!(
            batches([3, 4, 5, 9, 1].into_iter(), 8),
            [0..2, 2..3, 3..4, 4..5]
        );
        assert!(batches(std::iter::empty(), 8).is_empty());
        assert_eq!(batches([8, 8].into_iter(), 8), [0..1, 1..2]);
    }

    #[test]
    fn tables_give_compact_starts_then_first_keys() {
        let long = [(5, 9000, 1), (20_000, 10_000, 4)];
        assert_eq!(tables(&long), [0, 9000, 19_000, 5, 20_000]);
    }

    #[test]
    fn the_sort_by_segment_takes_the_ids_digits() {
        assert_eq!(id_passes(2), 2);
        assert_eq!(id_passes(1 << 16), 2);
        assert_eq!(id_passes((1 << 16) + 1), 4);
        assert_eq!(id_passes(u64::from(u32::MAX)), 4);
    }

    #[test]
    fn runs_take_what_the_spare_memory_holds() {
        for spare in [0, 1000, 1 << 20, 12 << 26, 24 << 26, 1 << 45] {
            for value_bytes in [0, 4, 8, 16] {
                for in_place in [false, true] {
                    let bytes = |m| RadixLayout::new(m, value_bytes, in_place).bytes;
                    let cap = run_cap(spare, value_bytes, in_place);
                    assert!((1..=MAX_COMPACT).contains(&cap));
                    assert!(bytes(cap) <= spare || cap == 1, "{spare} {value_bytes}");
                    assert!(cap == MAX_COMPACT || bytes(cap + 1) > spare);
                }
            }
        }
        // 2^26 `u64` pairs with `u32` values: runs of about half the keys.
        let cap = run_cap(12 << 26, 4, false);
        assert!(cap > (1 << 26) * 2 / 5 && cap < (1 << 26) / 2, "{cap}");
    }

    /// A launch of `n` keys of `key_bytes` that the padded path sorts: keys alone
    /// (`value_bytes` 0, `argsort` false), pairs, or an argsort of a copy of the keys.
    fn launch(n: u64, key_bytes: usize, value_bytes: usize, argsort: bool) -> Launch {
        let keys = Launch::keys::<u32>(1 << 40, n as usize, crate::Order::Ascending);
        let keys = Launch {
            key_bytes,
            spare: n * key_bytes as u64,
            ..keys
        };
        match (value_bytes, argsort) {
            (0, false) => keys,
            (_, false) => Launch {
                values: 1 << 41,
                value_bytes,
                spare: n * (key_bytes + value_bytes) as u64,
                ..keys
            },
            _ => Launch {
                indices: 1 << 41,
                spare: n * 4,
                ..keys
            },
        }
    }

    /// An argsort's segment of 8-byte keys too long for the sorts by key and segment in the
    /// spare memory (that of a copy of the keys, as on the host, or of the indices alone, as
    /// for device keys) takes the sort that moves only indices, which fits it and the status
    /// words; runs of several segments and pairs never do.
    #[test]
    fn argsorts_of_one_segment_too_long_move_only_indices() {
        let n = 1_000_003;
        let argsort = |spare| Launch {
            spare,
            ..launch(n, 8, 0, true)
        };
        for spare in [12 * n, 4 * n] {
            let l = argsort(spare);
            let whole = [(0, n, 0)];
            assert!(gathers(&whole, &l));
            let status = radix::gathered_scratch_bytes(n, 8) - 4 * n;
            assert!(radix::gathered_scratch_bytes(n, 8) <= l.spare + status);
            assert!(!gathers(&[(0, n / 2, 0), (n / 2, n - n / 2, 1)], &l));
            let small = [(0, 8193, 0)];
            assert!(!gathers(&small, &l));
        }
        let pairs = launch(n, 8, 4, false);
        assert!(!gathers(&[(0, n, 0)], &pairs));
    }

    proptest! {
        /// The padded path's buffer fits the launch's spare memory and the radix sort's status
        /// words, for pairs sorted alone and argsorts' segments whose row does not fit.
        #[test]
        fn padded_rows_fit_the_spare_memory(
            lens in proptest::collection::vec(8193u64..200_000, 1..12),
            short in 0u64..(1 << 22),
            key_bytes in prop::sample::select(vec![4usize, 8]),
            value_bytes in prop::sample::select(vec![0usize, 4, 8, 16]),
            argsort: bool,
        ) {
            prop_assume!(key_bytes == 4 || (value_bytes == 0 && !argsort));
            let mut long = Vec::new();
            let mut n = short;
            for (i, &len) in lens.iter().enumerate() {
                long.push((n, len, i as u32));
                n += len;
            }
            let l = launch(n, key_bytes, value_bytes, argsort);
            let item_bytes = if l.indexed() { 8 } else { key_bytes as u64 };
            let padded = Padded::new(&l, item_bytes);
            let lengths = padded_lengths(&long);
            let bytes = padded.bytes(&lengths, &long);
            let status = if argsort {
                radix::gathered_scratch_bytes(n, key_bytes) - n * 4
            } else {
                radix::scratch_bytes(n, key_bytes, value_bytes) - n * (key_bytes + value_bytes) as u64
            };
            let row = |p: u32| item_bytes << p;
            prop_assert!(bytes <= l.spare + status, "{} > {}", bytes, l.spare);
            // The buffer holds what each step puts in it.
            let values = padded.values_copy(&lengths);
            for &(p, count) in &lengths {
                match padded.alone(p, count) {
                    None => {
                        let chunk = padded.chunk_rows(p, count);
                        prop_assert!((1..=count).contains(&chunk));
                        prop_assert!(chunk == 1 || values + chunk * row(p) <= l.spare);
                        prop_assert!(values + aligned(chunk * row(p)) <= bytes);
                    }
                    Some(Alone::Radix) => {
                        prop_assert!(!argsort);
                        for &(_, len, _) in long.iter().filter(|s| row_log2(s.1) == p) {
                            prop_assert!(radix::scratch_bytes(len, key_bytes, value_bytes) <= bytes);
                        }
                    }
                    Some(Alone::Gathered) => {
                        prop_assert!(argsort);
                        for &(_, len, _) in long.iter().filter(|s| row_log2(s.1) == p) {
                            prop_assert!(radix::gathered_scratch_bytes(len, key_bytes) <= bytes);
                        }
                    }
                    Some(Alone::Bitonic) => prop_assert_eq!(count, 1),
                }
            }
        }

        /// Runs cover the segments in order, each as full as the next segment allows.
        #[test]
        fn runs_partition_the_segments_greedily(
            lens in proptest::collection::vec(1u64..50, 0..40),
            cap in 1u64..120,
        ) {
            let runs = batches(lens.iter().copied(), cap);
            let mut next = 0;
            for (i, run) in runs.iter().enumerate() {
                prop_assert_eq!(run.start, next);
                prop_assert!(run.end > run.start);
                let total: u64 = lens[run.clone()].iter().sum();
                prop_assert!(total <= cap || run.len() == 1);
                if i + 1 < runs.len() {
                    prop_assert!(total + lens[run.end] > cap);
                }
                next = run.end;
            }
            prop_assert_eq!(next, lens.len());
        }

        /// The layout's three parts lie apart, 256-aligned, within the allocation, each as
        /// large as what it holds in turn; beside the keys and positions no more than the
        /// larger of the sort by key's scratch and the values.
        #[test]
        fn layout_parts_hold_what_they_hold_in_turn(
            m in 8193u64..(1 << 26),
            value_bytes in prop::sample::select(vec![0u64, 4, 8, 16]),
        ) {
            let l = RadixLayout::new(m, value_bytes, false);
            let scratch = radix::scratch_bytes(m, 8, 4).max(radix::scratch_bytes(m, 4, 4));
            let parts = [(l.keys, 8 * m), (l.from, 4 * m), (l.work, scratch.max(value_bytes * m))];
            for (i, a) in parts.iter().enumerate() {
                prop_assert!(a.0 % 256 == 0 && a.0 + a.1 <= l.bytes);
                for b in &parts[i + 1..] {
                    prop_assert!(a.0 + a.1 <= b.0 || b.0 + b.1 <= a.0);
                }
            }
            prop_assert!(radix::scratch_bytes(m, 4, 4) <= radix::scratch_bytes(m, 8, 4));
            let beside = l.bytes - l.work;
            let most = radix::scratch_bytes(m, 8, 4).max(value_bytes * m);
            prop_assert!(beside <= most.next_multiple_of(256));
            // In place (argsorts, no values): the scratch alone.
            let l = RadixLayout::new(m, 0, true);
            let scratch = radix::scratch_bytes(m, 8, 4).next_multiple_of(256);
            prop_assert_eq!((l.work, l.bytes), (0, scratch));
        }
    }
}
