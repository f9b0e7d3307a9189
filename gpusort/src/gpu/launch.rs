//! Launching a kernel: its typed handle ([`Kernel`]), its shape, its one argument and a stream.
//! Every launch of the library goes through [`GpuSorter::launch`] or [`launch_on`], so a kernel
//! is named only by its handle and receives only the argument type the kernel list gives it
//! (`kernels_gpu::kernels`).

use super::GpuSorter;
use crate::error::{Result, driver};
use cust::function::Function;
use cust::sys as cuda;
use kernels_gpu::args::KernelArgs;
use kernels_gpu::kernels::Kernel;
use std::ffi::c_void;

/// How a kernel is launched: a one-dimensional grid of `blocks` blocks of `threads` threads,
/// each with `shared` bytes of dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub blocks: u32,
    pub threads: u32,
    pub shared: u32,
}

impl Shape {
    /// `blocks` blocks of `threads` threads with `shared` bytes of dynamic shared memory each.
    pub(crate) const fn new(blocks: u32, threads: u32, shared: u32) -> Self {
        Shape {
            blocks,
            threads,
            shared,
        }
    }
}

/// Whether the blocks of a launch may wait for each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Residency {
    /// Blocks run as the device schedules them (`cuLaunchKernel`).
    Any,
    /// Every block resident at once, so that they may meet at grid barriers
    /// (`cuLaunchCooperativeKernel`, which refuses a grid the device cannot hold).
    Cooperative,
}

/// One sorter's work queued on one stream of its context: the sorter's own stream or a
/// caller's. Every launch and every stream-ordered memory operation of the library goes through
/// one, so a sort runs wherever its caller queued it.
#[derive(Clone, Copy)]
pub(crate) struct On<'a> {
    pub sorter: &'a GpuSorter,
    /// A live stream of the sorter's context.
    pub stream: cuda::CUstream,
}

// SAFETY: a CUDA stream handle may be used from any thread (the driver serialises what needs
// it); `On` only queues work on it.
unsafe impl Send for On<'_> {}
// SAFETY: as above.
unsafe impl Sync for On<'_> {}

impl std::ops::Deref for On<'_> {
    type Target = GpuSorter;

    fn deref(&self) -> &GpuSorter {
        self.sorter
    }
}

impl On<'_> {
    /// Queues `kernel` with `args` on the stream, loading its module into the sorter's context
    /// first if need be (the context is made current).
    ///
    /// # Safety
    /// `args` describes memory of this context that the kernel may read and write as its
    /// argument type documents, which stays allocated until the stream reaches the kernel's
    /// end; `shape` is one the kernel is written for.
    pub(crate) unsafe fn launch<A: KernelArgs>(
        &self,
        kernel: Kernel<A>,
        shape: Shape,
        args: A,
    ) -> Result<()> {
        let f = self.sorter.function(kernel)?;
        // SAFETY: the caller's contract; the stream is of the sorter's context.
        unsafe { launch_on(&f, kernel, shape, Residency::Any, self.stream, args) }
    }

    /// As [`On::launch`], with every block resident at once ([`Residency::Cooperative`]).
    ///
    /// # Safety
    /// As for [`On::launch`].
    pub(crate) unsafe fn launch_cooperative<A: KernelArgs>(
        &self,
        kernel: Kernel<A>,
        shape: Shape,
        args: A,
    ) -> Result<()> {
        let f = self.sorter.function(kernel)?;
        // SAFETY: as above.
        unsafe { launch_on(&f, kernel, shape, Residency::Cooperative, self.stream, args) }
    }

    /// Queues the zeroing of `bytes` bytes at device address `at`; `what` names them in an
    /// error.
    pub(crate) fn zero(&self, at: u64, bytes: u64, what: &str) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.sorter.bind()?;
        // SAFETY: the caller's memory of this context, `bytes` long; the stream is live.
        let status = unsafe { cuda::cuMemsetD8Async(at, 0, bytes as usize, self.stream) };
        driver(status, "cuMemsetD8Async", || format!("zeroing {what}"))
    }

    /// Queues the copy of `bytes` bytes from device address `from` to `to`; `what` names them
    /// in an error.
    pub(crate) fn copy(&self, (from, to): (u64, u64), bytes: u64, what: &str) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.sorter.bind()?;
        // SAFETY: the caller's memory of this context, `bytes` long at both ends; the stream
        // is live.
        let status = unsafe { cuda::cuMemcpyDtoDAsync_v2(to, from, bytes as usize, self.stream) };
        driver(status, "cuMemcpyDtoDAsync", || format!("copying {what}"))
    }
}

impl GpuSorter {
    /// Work queued on the sorter's own stream.
    pub(crate) fn on_own_stream(&self) -> On<'_> {
        On {
            sorter: self,
            stream: self.stream.as_inner(),
        }
    }
}

/// Queues `f`, the function of `kernel` in a module of the current context, with `args` on
/// `stream` (a stream of the same context: the library's or the caller's).
///
/// # Safety
/// As for [`On::launch`]; `stream` is a live stream of `f`'s context.
pub(crate) unsafe fn launch_on<A: KernelArgs>(
    f: &Function<'_>,
    kernel: Kernel<A>,
    shape: Shape,
    residency: Residency,
    stream: cuda::CUstream,
    args: A,
) -> Result<()> {
    let Shape {
        blocks,
        threads,
        shared,
    } = shape;
    // The kernel's parameters are `A`'s fields, in order: the driver reads each from its
    // field's address, in `args`, which lives until the call returns.
    let (mut params, _) = args.params();
    let (raw, params) = (f.to_raw(), params.as_mut_ptr().cast::<*mut c_void>());
    // SAFETY: `f` takes `A`'s fields (the handle's type, from the kernel list); the caller's
    // contract covers the memory and the stream.
    let (status, call) = unsafe {
        match residency {
            Residency::Any => (
                cuda::cuLaunchKernel(
                    raw,
                    blocks,
                    1,
                    1,
                    threads,
                    1,
                    1,
                    shared,
                    stream,
                    params,
                    std::ptr::null_mut(),
                ),
                "cuLaunchKernel",
            ),
            Residency::Cooperative => (
                cuda::cuLaunchCooperativeKernel(
                    raw, blocks, 1, 1, threads, 1, 1, shared, stream, params,
                ),
                "cuLaunchCooperativeKernel",
            ),
        }
    };
    driver(status, call, || {
        format!(
            "launching {} ({blocks} blocks of {threads} threads, {shared} bytes of shared memory)",
            kernel.name()
        )
    })
}
