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

impl GpuSorter {
    /// Queues `kernel` with `args` on the sorter's stream, loading its module into the sorter's
    /// context first if need be (the context is made current).
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
        let f = self.function(kernel)?;
        // SAFETY: the caller's contract; the stream is the sorter's, of its context.
        unsafe {
            launch_on(
                &f,
                kernel,
                shape,
                Residency::Any,
                self.stream.as_inner(),
                args,
            )
        }
    }

    /// As [`GpuSorter::launch`], with every block resident at once ([`Residency::Cooperative`]).
    ///
    /// # Safety
    /// As for [`GpuSorter::launch`].
    pub(crate) unsafe fn launch_cooperative<A: KernelArgs>(
        &self,
        kernel: Kernel<A>,
        shape: Shape,
        args: A,
    ) -> Result<()> {
        let f = self.function(kernel)?;
        let stream = self.stream.as_inner();
        // SAFETY: as above.
        unsafe { launch_on(&f, kernel, shape, Residency::Cooperative, stream, args) }
    }
}

/// Queues `f`, the function of `kernel` in a module of the current context, with `args` on
/// `stream` (a stream of the same context: the library's or the caller's).
///
/// # Safety
/// As for [`GpuSorter::launch`]; `stream` is a live stream of `f`'s context.
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
