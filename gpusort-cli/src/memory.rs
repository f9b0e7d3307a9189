//! The tool's memory checks: each step that allocates in proportion to the data first asks
//! whether the process can have that much ([`check`], on the library's [`gpusort::memory`],
//! which reads `MemAvailable`, the cgroup's limits, `RLIMIT_AS` and `RLIMIT_DATA`) and refuses
//! with a message naming the step; the device's free memory ([`device_memory`]), which the
//! tool plans its GPU steps with; and an allocator that turns an allocation failure into a
//! clean exit instead of an abort ([`ExitOnOom`]).
//!
//! Setting the environment variable `GPUSORT_NO_MEMORY_CHECK=1` skips the checks (for a machine
//! whose limits are known to be misreported); an allocation that then fails still ends as an
//! error, not an abort.
//!
//! ```
//! use gpusort_cli::memory;
//!
//! let room = memory::room();
//! println!("{} bytes available ({})", room.bytes, room.bound);
//! assert!(memory::check(1, "one byte").is_ok());
//! assert!(memory::check(u64::MAX, "everything").is_err());
//! ```

use crate::error::{CudaContext, Result as GpuResult};
use gpusort::GpuSorter;
use std::alloc::{GlobalAlloc, Layout, System};

pub use gpusort::memory::{Bound, Room, fallible, room};

/// Not enough memory for a step, found before allocating.
#[derive(Debug, thiserror::Error)]
#[error(
    "not enough memory: {what} needs {need} bytes, but this process can have {} more ({}); \
     GPUSORT_NO_MEMORY_CHECK=1 skips this check",
    .room.bytes, .room.bound
)]
pub struct MemoryError {
    /// What needs the memory.
    pub what: String,
    /// Bytes needed.
    pub need: u64,
    /// What there is.
    pub room: Room,
}

/// Fails unless `need` bytes fit in [`room`] ([`gpusort::memory::check`]); `what` names the
/// step in the message.
///
/// # Errors
/// [`MemoryError`], naming the bytes needed and available and the limit.
///
/// ```
/// let err = gpusort_cli::memory::check(u64::MAX, "sorting").unwrap_err();
/// assert!(err.to_string().contains("sorting needs 18446744073709551615 bytes"));
/// ```
pub fn check(need: u64, what: impl Into<String>) -> Result<(), MemoryError> {
    gpusort::memory::check(need).map_err(|room| MemoryError {
        what: what.into(),
        need,
        room,
    })
}

/// Free and total memory of `gpu`'s device, in bytes: the driver's answer in the sorter's
/// context.
///
/// # Errors
/// [`gpusort::Error::Cuda`] if the driver cannot tell.
///
/// ```no_run
/// let gpu = gpusort::GpuSorter::new()?;
/// let (free, total) = gpusort_cli::memory::device_memory(&gpu)?;
/// println!("{} of {} MiB free", free >> 20, total >> 20);
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn device_memory(gpu: &GpuSorter) -> GpuResult<(u64, u64)> {
    gpu.bind()?;
    let (free, total) = cust::memory::mem_get_info().context("reading free device memory")?;
    Ok((free as u64, total as u64))
}

/// The system allocator, except that an allocation failure outside [`fallible`] removes the
/// registered temporary files ([`crate::cleanup`]), says so on stderr and exits with code 2,
/// where Rust would abort (SIGABRT, exit 134). For a program's `#[global_allocator]`:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOC: gpusort_cli::memory::ExitOnOom = gpusort_cli::memory::ExitOnOom;
/// ```
pub struct ExitOnOom;

impl ExitOnOom {
    #[cold]
    fn failed(size: usize) -> ! {
        crate::cleanup::remove_temporaries_now();
        let mut message = [0u8; 160];
        let mut len = 0;
        let mut put = |bytes: &[u8]| {
            let n = bytes.len().min(message.len() - len);
            message[len..len + n].copy_from_slice(&bytes[..n]);
            len += n;
        };
        put(b"gpusort: error: out of memory: an allocation of ");
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut v = size;
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        put(&digits[i..]);
        put(b" bytes failed; no output was written\n");
        // SAFETY: write and _exit are async-signal-safe and allocate nothing; the buffer lives
        // across the call.
        unsafe {
            libc::write(2, message.as_ptr().cast(), len);
            libc::_exit(2);
        }
    }

    fn check(ptr: *mut u8, size: usize) -> *mut u8 {
        if ptr.is_null() && !gpusort::memory::in_fallible() {
            Self::failed(size);
        }
        ptr
    }
}

// SAFETY: every call is forwarded to `System` unchanged; a null result either goes back to the
// caller or ends the process.
unsafe impl GlobalAlloc for ExitOnOom {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        Self::check(unsafe { System.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        Self::check(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        Self::check(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_step_and_the_room() {
        let Err(e) = check(u64::MAX, "the test's step") else {
            // GPUSORT_NO_MEMORY_CHECK=1 lets everything through.
            return;
        };
        assert_eq!((e.need, e.what.as_str()), (u64::MAX, "the test's step"));
        let message = e.to_string();
        assert!(message.contains("the test's step needs 18446744073709551615 bytes"));
        assert!(message.contains(&e.room.bound.to_string()), "{message}");
    }
}
