//! The CUDA context a [`GpuSorter`](super::GpuSorter) works in.
//!
//! Every CUDA object belongs to one context: a module and the kernel handles taken from it, a
//! stream, an event, a device allocation. A kernel handle launched on a stream of another
//! context fails ("invalid resource handle"), and a module loaded while another context is
//! current belongs to that one. A sorter therefore makes its own context current before each
//! call that creates or uses such an object ([`SorterContext::make_current`]).
//!
//! Sorters normally share their device's primary context, as CUDA's runtime API does, so that
//! their buffers and streams mix freely with other CUDA code in the process. A sorter can also
//! have a context of its own: the multi-GPU sorter gives one to each extra part it places on a
//! device it already uses, so that parts sharing a GPU are as separate as parts on different
//! GPUs, and a handle used from the wrong part fails on one GPU as it would on several.

use crate::error::{CudaContext, Result, driver};
use cust::context::Context;
use cust::device::Device;
use cust::sys as cuda;

/// Which context a new sorter works in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ContextKind {
    /// The device's primary context, shared with the rest of the process.
    Primary,
    /// A new context of the sorter's own, destroyed with the sorter.
    Own,
}

/// A sorter's context, held for the sorter's lifetime.
pub(crate) enum SorterContext {
    /// A hold on the device's primary context, released on drop.
    Primary(Context),
    /// A context created for the sorter, destroyed on drop.
    Own(OwnContext),
}

impl SorterContext {
    /// A context of `kind` on `device`, made current on the calling thread.
    pub(crate) fn open(device: Device, kind: ContextKind) -> Result<Self> {
        let context = match kind {
            ContextKind::Primary => {
                // Retains the primary context and makes it current.
                SorterContext::Primary(Context::new(device).context("creating a CUDA context")?)
            }
            ContextKind::Own => SorterContext::Own(OwnContext::create(device)?),
        };
        context.make_current()?;
        Ok(context)
    }

    /// The driver's handle.
    pub(crate) fn as_raw(&self) -> cuda::CUcontext {
        match self {
            SorterContext::Primary(context) => context.as_raw(),
            SorterContext::Own(context) => context.0,
        }
    }

    /// Makes the context current on the calling thread (the top of its context stack).
    pub(crate) fn make_current(&self) -> Result<()> {
        // SAFETY: the handle is live for as long as `self`.
        let status = unsafe { cuda::cuCtxSetCurrent(self.as_raw()) };
        driver(status, "cuCtxSetCurrent", || {
            "making the sorter's CUDA context current".into()
        })
    }
}

/// A context made with `cuCtxCreate`, owned: `cuCtxDestroy` on drop.
pub(crate) struct OwnContext(cuda::CUcontext);

// SAFETY: a CUDA context handle may be made current and used on any thread; the driver
// serialises what needs serialising. Destruction happens once, on drop.
unsafe impl Send for OwnContext {}
// SAFETY: as above; every use through `&OwnContext` is a driver call that takes the handle.
unsafe impl Sync for OwnContext {}

impl OwnContext {
    fn create(device: Device) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: an out pointer and a valid device; flags 0 is the default scheduling.
        let status = unsafe { cuda::cuCtxCreate_v2(&mut raw, 0, device.as_raw()) };
        driver(status, "cuCtxCreate", || "creating a CUDA context".into())?;
        let context = OwnContext(raw);
        // cuCtxCreate pushed the new context on this thread's stack; take it off again, so that
        // the thread's stack is as the caller left it, before `open` makes it current.
        let mut popped = std::ptr::null_mut();
        // SAFETY: the context just pushed is on top of this thread's stack.
        let status = unsafe { cuda::cuCtxPopCurrent_v2(&mut popped) };
        driver(status, "cuCtxPopCurrent", || {
            "creating a CUDA context".into()
        })?;
        debug_assert_eq!(popped, raw);
        Ok(context)
    }
}

impl Drop for OwnContext {
    fn drop(&mut self) {
        // SAFETY: created by cuCtxCreate and destroyed only here. The driver also unbinds it
        // from the calling thread if it is current there. A failure cannot be reported from
        // drop; it leaves nothing the process could act on.
        unsafe {
            cuda::cuCtxDestroy_v2(self.0);
        }
    }
}
