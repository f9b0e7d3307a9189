//! Moving host slices to and from the device through pinned memory.
//!
//! A copy from pageable memory makes the driver stage it through its own small pinned buffers, one
//! piece after another, so that the copies, not the sort, set the time of a host-to-host sort
//! (docs/decisions.md, "Pinned staging, overlapped with the sort"). The sorter keeps a ring of
//! pinned slots instead and pipelines them: while the DMA engine moves the pieces queued in some
//! slots, all cores (rayon) copy the next piece of the slice into (or out of) another. Each slot's
//! event says when its last DMA is done; a slot is refilled, or read, only after that.
//!
//! Neither direction waits for the whole copy: an upload returns once every piece is in pinned
//! memory and queued, so that the caller can queue work behind each piece (the host-slice sort
//! sorts each chunk as it lands, `super::overlap`); a download makes the copy stream wait, piece
//! by piece, for the work that writes it.
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
use std::ops::Range;
use std::time::{Duration, Instant};

/// Bytes per pinned slot, the unit of each DMA. Each direction has one slot's host copy that
/// nothing overlaps (the first piece's copy in before the first DMA, the last piece's copy out
/// after the last DMA), which grows with the slot, so the slot is as small as keeps a DMA at the
/// full PCIe rate (docs/design.md, "Host slices").
const SLOT_BYTES: usize = 4 << 20;
/// Pinned slots (32 MiB in all): the DMA engine can have this many pieces queued, so that a host
/// thread held up by kernel launches or the OS does not leave it idle.
const SLOTS: usize = 8;
/// Host memcpy grain per rayon task: 16 tasks per slot.
const COPY_GRAIN: usize = 256 << 10;

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

    /// Elements per pinned slot.
    fn per_piece(self) -> usize {
        SLOT_BYTES / self.slot
    }
}

/// The pinned slots, the events that say when the DMA engine is done with each, and the slot
/// the next piece goes through (round robin, across calls, so that an upload of values right
/// after one of keys keeps the DMA engine busy).
pub(crate) struct Staging {
    slots: Vec<LockedBuffer<Byte>>,
    released: Vec<Event>,
    next: usize,
    /// Time spent in host copies into and out of the slots, and their bytes (host side),
    /// since the last [`Staging::take_copying`].
    copying: (Duration, usize),
}

impl Staging {
    pub(crate) fn new() -> Result<Staging> {
        let mut slots = Vec::with_capacity(SLOTS);
        let mut released = Vec::with_capacity(SLOTS);
        for _ in 0..SLOTS {
            // SAFETY: `Byte` may hold anything, initialised or not.
            let slot = unsafe { LockedBuffer::<Byte>::uninitialized(SLOT_BYTES) };
            slots.push(slot.context("allocating pinned host memory")?);
            let event = Event::new(EventFlags::DISABLE_TIMING);
            released.push(event.context("creating a CUDA event")?);
        }
        Ok(Staging {
            slots,
            released,
            next: 0,
            copying: (Duration::ZERO, 0),
        })
    }

    /// Time spent in host copies and the bytes they copied since the last call: whether the
    /// host or the DMA engine sets the pace.
    pub(crate) fn take_copying(&mut self) -> (Duration, usize) {
        std::mem::replace(&mut self.copying, (Duration::ZERO, 0))
    }

    /// Runs a host copy of `bytes` bytes, timing it.
    fn timed(&mut self, bytes: usize, copy: impl FnOnce(&mut Staging)) {
        let start = Instant::now();
        copy(self);
        self.copying.0 += start.elapsed();
        self.copying.1 += bytes;
    }

    /// The slot the next piece goes through, once its last DMA is done.
    fn take_slot(&mut self) -> Result<usize> {
        let slot = self.next;
        self.next = (slot + 1) % SLOTS;
        self.released[slot]
            .synchronize()
            .context("waiting for a copy through pinned memory")?;
        Ok(slot)
    }

    /// Queues `device[..] = host[..]` on `stream`, elements spread into their slots, and
    /// returns once every piece is in pinned memory and its DMA queued (not done: work queued
    /// on `stream` afterwards sees the keys). `between()` runs after each piece's DMA is
    /// queued: work queued there overlaps the copy of the next piece into pinned memory. `host`
    /// holds whole elements; `device` has one slot for each.
    ///
    /// # Safety
    /// `device` must stay allocated until the work queued on `stream` is done.
    pub(crate) unsafe fn upload(
        &mut self,
        host: &[Byte],
        slots: Slots,
        device: &mut DeviceSlice<Byte>,
        stream: &Stream,
        mut between: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        assert_eq!(device.len(), host.len() / slots.elem * slots.slot);
        let per_piece = slots.per_piece();
        if slots.slot == slots.elem && is_page_locked(host) {
            // Page-locked already: the DMA engine reads the caller's memory, no host copy.
            for (i, piece) in host.chunks(per_piece * slots.elem).enumerate() {
                let at = i * per_piece * slots.slot;
                let mut target = device.index(at..at + piece.len());
                // SAFETY: the caller keeps `host` borrowed, and the device memory allocated,
                // until the stream's work is done (the round trip synchronises before it returns,
                // on error paths too).
                unsafe { target.async_copy_from(piece, stream) }
                    .context("copying keys to the device")?;
                between()?;
            }
            return Ok(());
        }
        for (i, piece) in host.chunks(per_piece * slots.elem).enumerate() {
            let slot = self.take_slot()?;
            let len = piece.len() / slots.elem * slots.slot;
            self.timed(piece.len(), |this| {
                let pinned = &mut this.slots[slot][..len];
                copy_elements(piece, slots.elem, pinned, slots.slot, slots.elem);
            });
            let pinned = &self.slots[slot][..len];
            let at = i * per_piece * slots.slot;
            let mut target = device.index(at..at + len);
            // SAFETY: the slot stays untouched until `released[slot]` fires; the caller keeps
            // the device memory until the stream is done.
            unsafe { target.async_copy_from(pinned, stream) }
                .context("copying keys to the device")?;
            self.released[slot]
                .record(stream)
                .context("recording a CUDA event")?;
            between()?;
        }
        Ok(())
    }

    /// `host[..] = device[..]`, elements packed from their slots, by DMAs queued on `stream`;
    /// returns when all is copied. Before queueing the DMA of the elements `range`, it calls
    /// `before(range)`, which makes `stream` wait for the work that writes them (ranges come in
    /// order and cover all elements).
    pub(crate) fn download(
        &mut self,
        device: &DeviceSlice<Byte>,
        slots: Slots,
        host: &mut [Byte],
        stream: &Stream,
        mut before: impl FnMut(Range<usize>) -> Result<()>,
    ) -> Result<()> {
        let total = host.len() / slots.elem;
        assert_eq!(device.len(), total * slots.slot);
        let per_piece = slots.per_piece();
        let pieces = total.div_ceil(per_piece);
        if slots.slot == slots.elem && is_page_locked(host) {
            // Straight into the caller's page-locked memory.
            for (i, piece) in host.chunks_mut(per_piece * slots.elem).enumerate() {
                let elements = i * per_piece..i * per_piece + piece.len() / slots.elem;
                let at = elements.start * slots.slot;
                before(elements)?;
                let source = device.index(at..at + piece.len());
                // SAFETY: `host` is borrowed until this returns, after the stream is done.
                unsafe { source.async_copy_to(piece, stream) }
                    .context("copying sorted keys to the host")?;
            }
            return stream
                .synchronize()
                .context("copying sorted keys to the host");
        }
        // Elements of piece `i`.
        let piece = |i: usize| i * per_piece..(per_piece * (i + 1)).min(total);
        let mut slot_of = Vec::with_capacity(pieces);
        let mut queue = |this: &mut Staging, i: usize| -> Result<usize> {
            // The slot's last DMA (of an upload, or of a download already copied out) is done.
            let slot = this.take_slot()?;
            let elements = piece(i);
            let (at, len) = (elements.start * slots.slot, elements.len() * slots.slot);
            before(elements)?;
            let source = device.index(at..at + len);
            // SAFETY: the slot is read only after `released[slot]` fires; `device` is borrowed
            // until this returns, after the last DMA.
            unsafe { source.async_copy_to(&mut this.slots[slot][..len], stream) }
                .context("copying sorted keys to the host")?;
            this.released[slot]
                .record(stream)
                .context("recording a CUDA event")?;
            Ok(slot)
        };
        // Keep every slot's DMA queued: the next piece goes into the slot just copied out.
        for i in 0..pieces.min(SLOTS) {
            slot_of.push(queue(self, i)?);
        }
        for i in 0..pieces {
            let slot = slot_of[i];
            self.released[slot]
                .synchronize()
                .context("copying sorted keys to the host")?;
            let elements = piece(i);
            let (at, len) = (elements.start * slots.elem, elements.len() * slots.elem);
            self.timed(len, |this| {
                copy_elements(
                    &this.slots[slot][..elements.len() * slots.slot],
                    slots.slot,
                    &mut host[at..at + len],
                    slots.elem,
                    slots.elem,
                );
            });
            if i + SLOTS < pieces {
                slot_of.push(queue(self, i + SLOTS)?);
            }
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

/// Whether all of `host` lies in one page-locked allocation the driver knows (allocated with
/// `cuMemHostAlloc` or registered with `cuMemHostRegister`), so that DMAs may use it directly.
/// Pageable memory, and memory of no current context, answer false. Asked with
/// `cuPointerGetAttributes`, which (unlike `cuPointerGetAttribute`) answers pointers the driver
/// does not know with empty values rather than an error, so that tools such as
/// compute-sanitizer see no failed call.
pub(crate) fn is_page_locked(host: &[Byte]) -> bool {
    use cust::sys::{CUpointer_attribute as A, CUresult, cuPointerGetAttributes};
    if host.is_empty() {
        return false;
    }
    let ptr = host.as_ptr() as cust::sys::CUdeviceptr;
    let (mut memory_type, mut start, mut size) = (0u32, 0u64, 0u64);
    let mut attributes = [
        A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        A::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut std::ffi::c_void; 3] = [
        (&raw mut memory_type).cast(),
        (&raw mut start).cast(),
        (&raw mut size).cast(),
    ];
    // SAFETY: three attributes and three pointers to values of their types (an enum, a device
    // pointer, a size); `ptr` is only looked up.
    let status =
        unsafe { cuPointerGetAttributes(3, attributes.as_mut_ptr(), data.as_mut_ptr(), ptr) };
    let host_memory = cust::sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32;
    let end = ptr + host.len() as u64;
    status == CUresult::CUDA_SUCCESS
        && memory_type == host_memory
        && start <= ptr
        && end <= start + size
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
    fn pieces_hold_whole_slots() {
        for slot in [4, 8, 16] {
            let slots = Slots { elem: 3, slot };
            assert_eq!(slots.per_piece() * slot, SLOT_BYTES);
        }
        assert_eq!(Slots::packed(8), Slots { elem: 8, slot: 8 });
    }
}
