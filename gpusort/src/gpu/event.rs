//! CUDA events without timing, which order work across streams and tell the host what a
//! stream has reached, without waiting for it.

use crate::error::{Result, driver};
use cust::sys as cuda;

/// An event of the sorter's context, destroyed on drop.
pub(super) struct Event(cuda::CUevent);

// SAFETY: an event handle may be recorded, waited on and queried from any thread; whoever
// shares one orders its uses (a mutex).
unsafe impl Send for Event {}

impl Event {
    /// A new event, which counts as reached until first recorded. The sorter's context must
    /// be current; `what` names its use for the error.
    pub(super) fn new(what: &str) -> Result<Event> {
        let mut event = std::ptr::null_mut();
        let flags = cuda::CUevent_flags_enum::CU_EVENT_DISABLE_TIMING as u32;
        // SAFETY: an out pointer; the caller made the sorter's context current.
        let status = unsafe { cuda::cuEventCreate(&mut event, flags) };
        driver(status, "cuEventCreate", || {
            format!("creating the event of {what}")
        })?;
        Ok(Event(event))
    }

    /// Marks the point `stream` has reached in its queued work.
    pub(super) fn record(&self, stream: cuda::CUstream, what: &str) -> Result<()> {
        // SAFETY: a live event, and a live stream of the event's context (the caller's).
        let status = unsafe { cuda::cuEventRecord(self.0, stream) };
        driver(status, "cuEventRecord", || format!("recording {what}"))
    }

    /// Makes the work queued on `stream` after this call wait on the device for the latest
    /// recording; the host does not wait.
    pub(super) fn wait_on(&self, stream: cuda::CUstream, what: &str) -> Result<()> {
        // SAFETY: as in `record`.
        let status = unsafe { cuda::cuStreamWaitEvent(stream, self.0, 0) };
        driver(status, "cuStreamWaitEvent", || {
            format!("ordering work after {what}")
        })
    }

    /// Whether the stream has run the work queued before the latest recording (false where
    /// the query fails: the memory it guards is then never reused).
    pub(super) fn is_reached(&self) -> bool {
        // SAFETY: a live event.
        unsafe { cuda::cuEventQuery(self.0) == cuda::cudaError_enum::CUDA_SUCCESS }
    }

    /// Waits until the stream has run the work queued before the latest recording.
    pub(super) fn synchronize(&self) -> Result<()> {
        // SAFETY: a live event.
        let status = unsafe { cuda::cuEventSynchronize(self.0) };
        driver(status, "cuEventSynchronize", || {
            "waiting for an event".into()
        })
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate, destroyed once. A failure leaves it to the context.
        let _ = unsafe { cuda::cuEventDestroy_v2(self.0) };
    }
}
