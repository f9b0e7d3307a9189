//! Host slice → sorted host slice with the copies overlapping the sort.
//!
//! Two streams: the sorter's own (kernels) and a copy stream (every DMA through the pinned
//! staging slots, both ways). The keys (and values) go up in chunks of [`OVERLAP_CHUNK`] keys.
//! After each chunk's last piece the copy stream records a *landed* event; the sorter's stream
//! waits for it and sorts that chunk ([`ChunkedSort::sort_chunk`]) while the next chunk is in
//! flight. Then the passes over the whole array ([`ChunkedSort::finish`]) run; the last ones
//! write the final keys range by range (the merge sort's last pass in a few launches over
//! ranges of output tiles, the end of the bitonic sort's last stage chunk by chunk), each
//! range followed by a *written* event. The download's pieces wait on the copy stream for the
//! event of the keys they carry, so the first pieces move while the last launches still run.
//!
//! ```text
//! copy stream:   [up 0][up 1][up 2][up 3]                        [down 0][down 1][down 2]…
//!                     ↘landed ↘landed ↘landed ↘landed           ↗written ↗written
//! sorter stream:       [sort 0][sort 1][sort 2][sort 3][whole-array passes|last ones by range]
//! ```
//!
//! The host waits only where the pinned slots require it: before refilling a slot (its last
//! DMA must be done) and before copying a downloaded piece out of one. A slice of at most one
//! chunk goes the same way, its one chunk sorted whole.
//!
//! With the environment variable `GPUSORT_TRACE` set, each round trip prints to stderr when
//! its phases ended: on the device (CUDA events, ms after the first upload DMA was queued) and
//! on the host (ms after the round trip started, its device buffers not yet allocated).

use super::launch::On;
use super::staging::{Byte, Slots, Staging, bytes_of, bytes_of_mut};
use super::{GpuSorter, HostKeys, value_slot};
use crate::error::{CudaContext, Result};
use crate::keys::SortKey;
use cust::event::{Event, EventFlags};
use cust::memory::DeviceSlice;
use cust::stream::{Stream, StreamWaitEventFlags};
use kernels_gpu::overlap::chunk_ranges;
use kernels_gpu::tuning::OVERLAP_CHUNK;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// A device sort cut for the pipeline: queued chunk by chunk as the keys land, then finished
/// over the whole array. Both methods queue on the sorter's stream and return at once.
pub(super) trait ChunkedSort {
    /// Keys per chunk: about [`OVERLAP_CHUNK`], a multiple of what the sort can sort as one run
    /// (the bitonic sort: a power of two; the merge sort: its tile times a power of two).
    fn chunk(&self) -> u64 {
        OVERLAP_CHUNK
    }

    /// Queues the sort of the keys (and values) in `range`, an aligned chunk of
    /// [`ChunkedSort::chunk`] keys or the shorter last one, which are on the device by then.
    /// With a single chunk this is the whole sort, decoding included.
    fn sort_chunk(&mut self, range: Range<u64>) -> Result<()>;

    /// Queues the passes over the whole array that finish the sort, after every chunk's
    /// sort, and calls `written(range)` right after queueing the launch that writes the final
    /// keys (and values) `range`: consecutive ranges from 0 up to n, at least one.
    fn finish(&mut self, written: &mut dyn FnMut(Range<u64>) -> Result<()>) -> Result<()>;
}

/// A sort whose launches `L` are queued by the pipeline: the merge and the radix sort each
/// implement [`ChunkedSort`] for their launch beside their launches.
pub(super) struct Chunked<'a, L> {
    pub on: On<'a>,
    pub launch: L,
}

/// Things that become ready in order, each covering the positions up to its end: the
/// download waits for them piece by piece.
struct Gate<T> {
    pending: VecDeque<(u64, T)>,
    open_to: u64,
}

impl<T> Gate<T> {
    fn new() -> Gate<T> {
        Gate {
            pending: VecDeque::new(),
            open_to: 0,
        }
    }

    /// Adds the next one, covering positions up to `end`.
    fn push(&mut self, end: u64, item: T) {
        self.pending.push_back((end, item));
    }

    /// Hands `wait` every pending item needed for positions up to `end`, in order (none when
    /// an earlier call already covered them).
    ///
    /// # Panics
    /// If the items pushed do not reach `end`.
    fn open_through(&mut self, end: u64, mut wait: impl FnMut(T) -> Result<()>) -> Result<()> {
        while self.open_to < end {
            let (to, item) = self
                .pending
                .pop_front()
                .expect("the written ranges cover every key");
            wait(item)?;
            self.open_to = to;
        }
        Ok(())
    }
}

/// Waits for both streams when dropped, so that no copy or kernel still uses the device
/// buffers of a round trip when they are freed, on error paths too (on success both are idle
/// by then, and this costs two driver calls).
struct Drain<'a>(&'a Stream, &'a Stream);

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        // An error here is the one the round trip already returned, or shows at the next call.
        let _ = self.0.synchronize();
        let _ = self.1.synchronize();
    }
}

/// When the phases of one round trip ended, recorded only under `GPUSORT_TRACE`.
struct Trace {
    enabled: bool,
    start: Instant,
    host: Vec<(&'static str, f64)>,
    device: Vec<(&'static str, Event)>,
    /// Host copies through the pinned slots: direction, time, bytes.
    copies: Vec<(&'static str, Duration, usize)>,
}

impl Trace {
    fn new() -> Trace {
        static ENABLED: OnceLock<bool> = OnceLock::new();
        Trace {
            enabled: *ENABLED.get_or_init(|| std::env::var_os("GPUSORT_TRACE").is_some()),
            start: Instant::now(),
            host: Vec::new(),
            device: Vec::new(),
            copies: Vec::new(),
        }
    }

    /// The host copies of one direction took `time` for `bytes`.
    fn copies(&mut self, what: &'static str, (time, bytes): (Duration, usize)) {
        if self.enabled {
            self.copies.push((what, time, bytes));
        }
    }

    /// The host is past `what`.
    fn host(&mut self, what: &'static str) {
        if self.enabled {
            let ms = self.start.elapsed().as_secs_f64() * 1e3;
            self.host.push((what, ms));
        }
    }

    /// `stream` is past `what` once the work queued on it so far is done.
    fn device(&mut self, what: &'static str, stream: &Stream) -> Result<()> {
        if self.enabled {
            let event = Event::new(EventFlags::DEFAULT).context("creating a CUDA event")?;
            event.record(stream).context("recording a CUDA event")?;
            self.device.push((what, event));
        }
        Ok(())
    }

    /// Prints the phases (all recorded events must be done).
    fn print(&self, what: &str) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        let mut line = format!("gpusort trace: {what} | device ms:");
        if let Some((_, first)) = self.device.first() {
            for (name, event) in &self.device {
                let ms = event
                    .elapsed_time_f32(first)
                    .context("reading a CUDA event")?;
                line += &format!(" {name} {ms:.3},");
            }
        }
        line.pop();
        line += " | host ms:";
        for (name, ms) in &self.host {
            line += &format!(" {name} {ms:.3},");
        }
        line.pop();
        line += " | host copies through pinned memory:";
        for (name, time, bytes) in &self.copies {
            let ms = time.as_secs_f64() * 1e3;
            let rate = *bytes as f64 / time.as_secs_f64().max(1e-9) / 1e9;
            line += &format!(" {name} {ms:.3} ms ({rate:.1} GB/s),");
        }
        line.pop();
        eprintln!("{line}");
        Ok(())
    }
}

fn new_event() -> Result<Event> {
    Event::new(EventFlags::DISABLE_TIMING).context("creating a CUDA event")
}

impl GpuSorter {
    /// Copies `keys` and `values` into new device buffers, sorts them with the sort `make`
    /// returns for the keys' and values' device addresses (values 0 when zero-sized), and
    /// copies the results back (the keys only if they are to be sorted), with the copies
    /// overlapping the sort as the module documentation says. Values travel in slots of
    /// [`value_slot`] bytes.
    pub(super) fn round_trip<K: SortKey, P: Copy, S: ChunkedSort>(
        &self,
        keys: HostKeys<'_, K>,
        values: &mut [P],
        make: impl FnOnce(u64, u64) -> Result<S>,
    ) -> Result<()> {
        let mut trace = Trace::new();
        let n = keys.len();
        let value_slots = Slots {
            elem: size_of::<P>(),
            slot: value_slot::<P>()?,
        };
        let key_slots = Slots::packed(size_of::<K>());
        let device = self.alloc::<K>(n, "the keys")?;
        let device_values = self.alloc::<Byte>(n * value_slots.slot, "the values")?;
        // SAFETY: the byte view covers exactly the device buffer, which outlives it.
        let device_bytes = unsafe {
            DeviceSlice::from_raw_parts_mut(
                device.as_device_ptr().cast::<Byte>(),
                n * key_slots.elem,
            )
        };
        let values_ptr = if value_slots.slot > 0 {
            device_values.as_device_ptr().as_raw()
        } else {
            0
        };
        let mut sort = make(device.as_device_ptr().as_raw(), values_ptr)?;
        let (sorting, copies) = (&self.stream, &self.copies);
        // Declared after the buffers, so dropped (waiting for both streams) before them.
        let _drain = Drain(sorting, copies);
        let mut staging = self.staging.lock().unwrap_or_else(PoisonError::into_inner);
        let staging = match &mut *staging {
            Some(staging) => staging,
            empty => {
                // The slots' events belong to the context current when they are made.
                self.bind()?;
                empty.insert(Staging::new()?)
            }
        };
        trace.host("buffers");
        trace.device("up start", copies)?;
        staging.take_copying();

        // Up, chunk by chunk. A chunk's sort is queued once the next piece's DMA is queued, so
        // that the DMA engine has work while the host queues the launches.
        let chunk = sort.chunk();
        let mut landed: Option<(Range<u64>, Event)> = None;
        let mut sort_landed = |landed: &mut Option<(Range<u64>, Event)>| -> Result<()> {
            if let Some((range, event)) = landed.take() {
                sorting
                    .wait_event(event, StreamWaitEventFlags::DEFAULT)
                    .context("making the sort wait for its keys")?;
                sort.sort_chunk(range)?;
            }
            Ok(())
        };
        for range in chunk_ranges(n as u64, chunk) {
            let (from, to) = (range.start as usize, range.end as usize);
            let parts: [(Slots, &[Byte], &DeviceSlice<Byte>); 2] = [
                (key_slots, bytes_of(keys.as_slice()), &device_bytes),
                (value_slots, bytes_of(values), &device_values),
            ];
            for (slots, host, device) in parts {
                if slots.slot == 0 {
                    continue;
                }
                let host = &host[from * slots.elem..to * slots.elem];
                let mut device = device.index(from * slots.slot..to * slots.slot);
                // SAFETY: the device buffers outlive the streams' work (`_drain`).
                unsafe {
                    staging.upload(host, slots, &mut device, copies, || {
                        sort_landed(&mut landed)
                    })?;
                }
            }
            let event = new_event()?;
            event.record(copies).context("recording a CUDA event")?;
            landed = Some((range, event));
        }
        sort_landed(&mut landed)?;
        trace.host("upload copied");
        trace.copies("in", staging.take_copying());
        trace.device("up end", copies)?;
        trace.device("chunks sorted", sorting)?;

        // The passes over the whole array; the copy stream waits for the written events.
        let mut written = Gate::new();
        sort.finish(&mut |range| {
            let event = new_event()?;
            event.record(sorting).context("recording a CUDA event")?;
            written.push(range.end, event);
            trace.device("written", sorting)
        })?;
        trace.host("sort queued");
        let mut wait_written = |elements: Range<usize>| {
            written.open_through(elements.end as u64, |event| {
                copies
                    .wait_event(event, StreamWaitEventFlags::DEFAULT)
                    .context("making a copy wait for the sort")
            })
        };

        // Down: the keys if they are sorted in place (an argsort only reads them), the values.
        if let HostKeys::Sort(keys) = keys {
            // SAFETY: SortKey types are plain integers and floats (the trait is sealed): any
            // bytes are a valid key.
            let host = unsafe { bytes_of_mut(keys) };
            staging.download(&device_bytes, key_slots, host, copies, &mut wait_written)?;
        }
        if value_slots.slot > 0 {
            // SAFETY: the device holds the values' own bytes, permuted with the keys, each
            // value's bytes still together in its slot: valid values of `P`.
            let host = unsafe { bytes_of_mut(values) };
            staging.download(&device_values, value_slots, host, copies, &mut wait_written)?;
        }
        // Every kernel's error shows here, if no copy waited for it.
        sorting.synchronize().context("running the sort")?;
        trace.device("down end", copies)?;
        copies
            .synchronize()
            .context("copying sorted keys to the host")?;
        trace.host("done");
        trace.copies("out", staging.take_copying());
        trace.print(&format!(
            "{n} keys of {} B, values in {} B slots, {} chunk(s)",
            size_of::<K>(),
            value_slots.slot,
            (n as u64).div_ceil(chunk)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_opens_each_item_once_in_order() {
        let mut gate = Gate::new();
        for (end, name) in [(10, "a"), (20, "b"), (25, "c")] {
            gate.push(end, name);
        }
        let mut opened = Vec::new();
        let mut open = |end: u64, opened: &mut Vec<&str>| {
            gate.open_through(end, |item| {
                opened.push(item);
                Ok(())
            })
            .unwrap();
        };
        open(0, &mut opened);
        assert!(opened.is_empty(), "nothing needed for no positions");
        open(4, &mut opened);
        assert_eq!(opened, ["a"]);
        open(10, &mut opened);
        assert_eq!(opened, ["a"], "already open");
        open(11, &mut opened);
        assert_eq!(opened, ["a", "b"]);
        open(25, &mut opened);
        assert_eq!(opened, ["a", "b", "c"]);
        // A second download (the values) over the same positions waits for nothing more.
        open(25, &mut opened);
        assert_eq!(opened.len(), 3);
    }

    #[test]
    fn one_piece_past_several_items_opens_them_all() {
        let mut gate = Gate::new();
        for end in [3u64, 6, 9, 12] {
            gate.push(end, end);
        }
        let mut opened = Vec::new();
        gate.open_through(10, |end| {
            opened.push(end);
            Ok(())
        })
        .unwrap();
        assert_eq!(opened, [3, 6, 9, 12]);
    }

    #[test]
    #[should_panic(expected = "cover every key")]
    fn a_gate_short_of_the_end_is_a_bug() {
        let mut gate = Gate::new();
        gate.push(5, ());
        let _ = gate.open_through(6, |()| Ok(()));
    }
}
