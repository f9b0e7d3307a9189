//! Host tables that queued work reads on the device (a segmented sort's offsets, the first entry
//! of each length of its grouping, its long segments' tables), copied in the stream's order
//! through page-locked slots: a copy from pageable memory may make the driver wait for the
//! stream, which a queued call must not.

use super::event::Event;
use super::launch::On;
use crate::error::{CudaContext, Result, driver};
use cust::memory::LockedBuffer;
use cust::sys as cuda;
use std::sync::{Mutex, PoisonError};

/// The sorter's page-locked slots for tables on their way to the device. A slot is reused once
/// the copy that last read it has run. Allocating page-locked memory may wait for the device,
/// so the first queue of a sorter makes [`RESERVED_SLOTS`] slots ([`TableSlots::reserve`]); a
/// call that finds none free and large enough allocates another, which the sorter keeps (so
/// they number at most the tables in flight at once).
#[derive(Default)]
pub(super) struct TableSlots {
    free: Mutex<Vec<Slot>>,
}

/// A page-locked buffer and the event recorded after the copy that last read it.
struct Slot {
    words: LockedBuffer<u64>,
    copied: Event,
}

impl Slot {
    fn new(words: usize) -> Result<Slot> {
        // SAFETY: u64 has no invalid bits; the caller writes the words it copies.
        let buffer = unsafe { LockedBuffer::uninitialized(words) }
            .context("allocating page-locked memory for a table bound for the device")?;
        Ok(Slot {
            words: buffer,
            copied: Event::new("a table's copy to the device")?,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // The copy may still read the buffer: it goes once the copy has run. A failure here is
        // the context's earlier error, which has stopped the copy.
        let _ = self.copied.synchronize();
    }
}

/// Slots made with the first queue, and the words each holds: a table of offsets of 32,767
/// segments, or its first entries of each length and its long segments' tables.
pub(super) const RESERVED_SLOTS: usize = 4;
const RESERVED_WORDS: usize = 1 << 15;

impl TableSlots {
    /// Makes the reserved slots, where they are not there yet. The sorter's context must be
    /// current.
    pub(super) fn reserve(&self) -> Result<()> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while free.len() < RESERVED_SLOTS {
            free.push(Slot::new(RESERVED_WORDS)?);
        }
        Ok(())
    }

    /// A slot of at least `words` whose last copy has run, or a new one.
    fn take(&self, words: usize) -> Result<Slot> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        let fits = free
            .iter()
            .position(|slot| slot.words.len() >= words && slot.copied.is_reached());
        if let Some(i) = fits {
            return Ok(free.swap_remove(i));
        }
        drop(free);
        Slot::new(words.next_power_of_two())
    }

    fn give_back(&self, slot: Slot) {
        self.free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(slot);
    }
}

impl On<'_> {
    /// Queues the copy of `table` to device address `to`; the host does not wait for the
    /// stream. `what` names the table in an error.
    pub(super) fn upload_table(&self, table: &[u64], to: u64, what: &str) -> Result<()> {
        if table.is_empty() {
            return Ok(());
        }
        self.bind()?;
        let mut slot = self.table_slots.take(table.len())?;
        slot.words[..table.len()].copy_from_slice(table);
        // SAFETY: the slot holds the table, page-locked, and stays allocated until the event
        // recorded after the copy is reached (`Slot::drop`, `TableSlots::take`); the caller
        // gives a device address with room for the table.
        let status = unsafe {
            cuda::cuMemcpyHtoDAsync_v2(
                to,
                slot.words.as_ptr().cast(),
                size_of_val(table),
                self.stream,
            )
        };
        let copied = driver(status, "cuMemcpyHtoDAsync", || {
            format!("copying {what} to the device")
        })
        .and_then(|()| slot.copied.record(self.stream, what));
        self.table_slots.give_back(slot);
        copied
    }
}
