//! Moving host slices to and from the device through pinned memory.
//!
//! A copy from pageable memory makes the driver stage it through its own small pinned buffers,
//! one piece after another (at 2^25 keys both copies took ~20 ms of a 25 ms host-to-host sort
//! on an H200). The sorter keeps two pinned chunks instead and pipelines them: while the DMA
//! engine moves one chunk, all cores (rayon) copy the next piece of the slice into the other.
//!
//! Copies move [`Byte`]s, which may be uninitialised (the padding of a payload type), and may
//! spread elements into wider slots on the way to the device ([`Slots`]) and pack them again
//! on the way back, so that payloads of any size reach the kernels in 4-, 8- or 16-byte slots
//! without a host copy of their own.

use crate::error::{CudaContext, Result};
use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, DeviceCopy, DeviceSlice, LockedBuffer};
use cust::stream::Stream;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Bytes per pinned chunk: large enough that each DMA runs at full speed, small enough that
/// the first copy starts early.
const CHUNK_BYTES: usize = 16 << 20;
/// Host memcpy grain per rayon task.
const COPY_GRAIN: usize = 1 << 20;

/// A byte that need not be initialised: what the copies move. Any value's bytes, padding
/// included, may be viewed as `Byte`s; none is ever read as an integer.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Byte(#[allow(dead_code)] MaybeUninit<u8>);

// SAFETY: a plain byte, holding no reference to host memory.
unsafe impl DeviceCopy for Byte {}

/// The bytes of `values`, to copy them.
pub(crate) fn bytes_of<T>(values: &[T]) -> &[Byte] {
    // SAFETY: every byte of every value (padding too) is a valid `MaybeUninit<u8>`, alignment 1
    // suits any address, and the view covers exactly the slice, which it borrows.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<Byte>(), size_of_val(values)) }
}

/// The bytes of `values`, to copy into them.
///
/// # Safety
/// What is written through the view must leave every element a valid `T`: here, always the
/// bytes of a permutation of the elements' own values (a sort's output).
pub(crate) unsafe fn bytes_of_mut<T>(values: &mut [T]) -> &mut [Byte] {
    // SAFETY: as in `bytes_of`; the caller answers for what is written.
    unsafe {
        std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<Byte>(), size_of_val(values))
    }
}

/// How a slice's elements lie on the device: `elem` bytes each (`elem > 0`), in slots of `slot`
/// bytes (`slot >= elem`). The bytes of a slot past its element are padding that the kernels
/// move along and the host never reads back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slots {
    pub(crate) elem: usize,
    pub(crate) slot: usize,
}

impl Slots {
    /// Elements stored back to back, as keys are.
    pub(crate) fn packed(elem: usize) -> Slots {
        Slots { elem, slot: elem }
    }

    /// Elements per pinned chunk.
    fn per_chunk(self) -> usize {
        CHUNK_BYTES / self.slot
    }
}

/// Two pinned chunks and the events that say when the DMA engine is done with each.
pub(crate) struct Staging {
    chunks: [LockedBuffer<Byte>; 2],
    released: [Event; 2],
}

impl Staging {
    pub(crate) fn new() -> Result<Staging> {
        // SAFETY: `Byte` may hold anything, initialised or not.
        let chunk = || unsafe { LockedBuffer::<Byte>::uninitialized(CHUNK_BYTES) };
        let event = || Event::new(EventFlags::DISABLE_TIMING).context("creating a CUDA event");
        Ok(Staging {
            chunks: [
                chunk().context("allocating pinned host memory")?,
                chunk().context("allocating pinned host memory")?,
            ],
            released: [event()?, event()?],
        })
    }

    /// `device[..] = host[..]`, elements spread into their slots, returning once the copy is
    /// complete. `host` holds whole elements; `device` has one slot for each.
    pub(crate) fn upload(
        &mut self,
        host: &[Byte],
        slots: Slots,
        device: &mut DeviceSlice<Byte>,
        stream: &Stream,
    ) -> Result<()> {
        assert_eq!(device.len(), host.len() / slots.elem * slots.slot);
        let per_chunk = slots.per_chunk();
        for (i, piece) in host.chunks(per_chunk * slots.elem).enumerate() {
            let slot = i % 2;
            // The DMA that last read this chunk must be done before it is overwritten.
            self.released[slot]
                .synchronize()
                .context("waiting for a host-to-device copy")?;
            let len = piece.len() / slots.elem * slots.slot;
            let chunk = &mut self.chunks[slot][..len];
            copy_elements(piece, slots.elem, chunk, slots.slot, slots.elem);
            let at = i * per_chunk * slots.slot;
            let mut target = device.index(at..at + len);
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

    /// `host[..] = device[..]`, elements packed from their slots, after the work already queued
    /// on `stream`.
    pub(crate) fn download(
        &mut self,
        device: &DeviceSlice<Byte>,
        slots: Slots,
        host: &mut [Byte],
        stream: &Stream,
    ) -> Result<()> {
        let total = host.len() / slots.elem;
        assert_eq!(device.len(), total * slots.slot);
        let per_chunk = slots.per_chunk();
        let pieces = total.div_ceil(per_chunk);
        // Elements of piece `i`: its first and its count.
        let piece = |i: usize| (i * per_chunk, per_chunk.min(total - i * per_chunk));
        let queue = |this: &mut Staging, i: usize| -> Result<()> {
            let slot = i % 2;
            let (first, count) = piece(i);
            let (at, len) = (first * slots.slot, count * slots.slot);
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
            let (first, count) = piece(i);
            let (at, len) = (first * slots.elem, count * slots.elem);
            copy_elements(
                &self.chunks[slot][..count * slots.slot],
                slots.slot,
                &mut host[at..at + len],
                slots.elem,
                slots.elem,
            );
        }
        Ok(())
    }
}

/// Copies the `elem`-byte elements of `src`, which start every `src_stride` bytes, to `dst`,
/// where they start every `dst_stride` bytes, on all cores. Bytes of `dst` between elements are
/// left as they are. With both strides `elem` it is `dst.copy_from_slice(src)`.
fn copy_elements(
    src: &[Byte],
    src_stride: usize,
    dst: &mut [Byte],
    dst_stride: usize,
    elem: usize,
) {
    if src_stride == elem && dst_stride == elem {
        dst.par_chunks_mut(COPY_GRAIN)
            .zip(src.par_chunks(COPY_GRAIN))
            .for_each(|(d, s)| d.copy_from_slice(s));
        return;
    }
    let per_task = (COPY_GRAIN / src_stride.max(dst_stride)).max(1);
    dst.par_chunks_mut(per_task * dst_stride)
        .zip(src.par_chunks(per_task * src_stride))
        .for_each(|(d, s)| {
            for (d, s) in d
                .chunks_exact_mut(dst_stride)
                .zip(s.chunks_exact(src_stride))
            {
                d[..elem].copy_from_slice(&s[..elem]);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of `values` read back as numbers; only for test data without padding.
    fn numbers(bytes: &[Byte]) -> Vec<u8> {
        // SAFETY: the tests only pass bytes of initialised `u8`s here.
        bytes.iter().map(|b| unsafe { b.0.assume_init() }).collect()
    }

    #[test]
    fn elements_spread_into_slots_and_pack_back() {
        let packed: Vec<u8> = (0..3 * 1000).map(|i| (i % 251) as u8).collect();
        let mut slotted = vec![0u8; 4 * 1000];
        // SAFETY: the copy writes initialised bytes into a byte buffer.
        copy_elements(
            bytes_of(&packed),
            3,
            unsafe { bytes_of_mut(&mut slotted) },
            4,
            3,
        );
        for (i, slot) in slotted.as_chunks::<4>().0.iter().enumerate() {
            assert_eq!(slot[..3], packed[3 * i..3 * i + 3], "slot {i}");
            assert_eq!(slot[3], 0, "padding of slot {i} untouched");
        }
        let mut back = vec![0u8; packed.len()];
        // SAFETY: as above.
        copy_elements(
            bytes_of(&slotted),
            4,
            unsafe { bytes_of_mut(&mut back) },
            3,
            3,
        );
        assert_eq!(back, packed);
    }

    #[test]
    fn packed_copies_are_plain_copies() {
        let src: Vec<u8> = (0..3 * COPY_GRAIN + 17).map(|i| (i * 7) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        // SAFETY: as above.
        copy_elements(bytes_of(&src), 1, unsafe { bytes_of_mut(&mut dst) }, 1, 1);
        assert_eq!(numbers(bytes_of(&dst)), src);
    }

    #[test]
    fn chunks_hold_whole_slots() {
        for slot in [4, 8, 16] {
            let slots = Slots { elem: 3, slot };
            assert_eq!(slots.per_chunk() * slot, CHUNK_BYTES);
        }
        assert_eq!(Slots::packed(8), Slots { elem: 8, slot: 8 });
    }
}
