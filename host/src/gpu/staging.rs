//! Moving host slices to and from the device through pinned memory.
//!
//! A copy from pageable memory makes the driver stage it through its own small pinned buffers,
//! one piece after another (at 2^25 keys both copies took ~20 ms of a 25 ms host-to-host sort
//! on an H200). The sorter keeps two pinned chunks instead and pipelines them: while the DMA
//! engine moves one chunk, all cores (rayon) copy the next piece of the slice into the other.

use crate::error::{CudaContext, Result};
use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, DeviceSlice, LockedBuffer};
use cust::stream::Stream;
use rayon::prelude::*;

/// Bytes per pinned chunk: large enough that each DMA runs at full speed, small enough that
/// the first copy starts early.
const CHUNK_BYTES: usize = 16 << 20;
/// Host memcpy grain per rayon task.
const COPY_GRAIN: usize = 1 << 20;

/// Two pinned chunks and the events that say when the DMA engine is done with each.
pub(crate) struct Staging {
    chunks: [LockedBuffer<u8>; 2],
    released: [Event; 2],
}

impl Staging {
    pub(crate) fn new() -> Result<Staging> {
        // SAFETY: u8 has no invalid values; chunks are written before they are read.
        let chunk = || unsafe { LockedBuffer::<u8>::uninitialized(CHUNK_BYTES) };
        let event = || Event::new(EventFlags::DISABLE_TIMING).context("creating a CUDA event");
        Ok(Staging {
            chunks: [
                chunk().context("allocating pinned host memory")?,
                chunk().context("allocating pinned host memory")?,
            ],
            released: [event()?, event()?],
        })
    }

    /// `device[..] = host[..]` (same length), returning once the copy is complete.
    pub(crate) fn upload(
        &mut self,
        host: &[u8],
        device: &mut DeviceSlice<u8>,
        stream: &Stream,
    ) -> Result<()> {
        for (i, piece) in host.chunks(CHUNK_BYTES).enumerate() {
            let slot = i % 2;
            // The DMA that last read this chunk must be done before it is overwritten.
            self.released[slot]
                .synchronize()
                .context("waiting for a host-to-device copy")?;
            let chunk = &mut self.chunks[slot][..piece.len()];
            parallel_copy(piece, chunk);
            let at = i * CHUNK_BYTES;
            let mut target = device.index(at..at + piece.len());
            // SAFETY: the chunk stays untouched until `released[slot]` fires, and the device
            // slice outlives the stream synchronisation below.
            unsafe { target.async_copy_from(&*chunk, stream) }
                .context("copying keys to the device")?;
            self.released[slot]
                .record(stream)
                .context("recording a CUDA event")?;
        }
        stream.synchronize().context("copying keys to the device")
    }

    /// `host[..] = device[..]` (same length), after the work already queued on `stream`.
    pub(crate) fn download(
        &mut self,
        device: &DeviceSlice<u8>,
        host: &mut [u8],
        stream: &Stream,
    ) -> Result<()> {
        let total = host.len();
        let pieces = total.div_ceil(CHUNK_BYTES);
        let queue = |this: &mut Staging, i: usize| -> Result<()> {
            let slot = i % 2;
            let at = i * CHUNK_BYTES;
            let len = CHUNK_BYTES.min(total - at);
            let source = device.index(at..at + len);
            // SAFETY: the chunk is read only after `released[slot]` fires.
            unsafe { source.async_copy_to(&mut this.chunks[slot][..len], stream) }
                .context("copying sorted keys to the host")?;
            this.released[slot]
                .record(stream)
                .context("recording a CUDA event")
        };
        if pieces > 0 {
            queue(self, 0)?;
        }
        for i in 0..pieces {
            // Queue the next piece's DMA before copying this one out, so the two overlap.
            if i + 1 < pieces {
                queue(self, i + 1)?;
            }
            let slot = i % 2;
            self.released[slot]
                .synchronize()
                .context("copying sorted keys to the host")?;
            let at = i * CHUNK_BYTES;
            let len = CHUNK_BYTES.min(total - at);
            parallel_copy(&self.chunks[slot][..len], &mut host[at..at + len]);
        }
        Ok(())
    }
}

/// `dst.copy_from_slice(src)` on all cores.
fn parallel_copy(src: &[u8], dst: &mut [u8]) {
    dst.par_chunks_mut(COPY_GRAIN)
        .zip(src.par_chunks(COPY_GRAIN))
        .for_each(|(d, s)| d.copy_from_slice(s));
}
