//! The `gpusort` command-line tool: the main job (sort generated keys, time them against the
//! CPU, verify), `gpusort sort` (files), and `gpusort bench` (the benchmark sweep, its plots and
//! the comparison with NVIDIA's sorts), with the timing, seeded inputs and verification they
//! use, which the workspace's tests and benchmarks use too.
//!
//! The sorting library is the `gpusort` crate, which sorts what a program already holds; this
//! crate is the tool, with what a tool needs around the sorts and the library leaves out:
//!
//! - [`files`]: `.npy` and raw key files, read in chunks, written atomically;
//! - [`cleanup`]: removing a run's temporary files when a signal ends it, and saying what it
//!   changed;
//! - [`memory`]: the checks before each step that allocates in proportion to the data, and an
//!   allocator that turns an allocation failure into a clean exit.
//!
//! Its API serves the tool and the workspace's tests, not other programs.
#![warn(missing_docs)]

pub mod bench;
pub mod cleanup;
pub mod cli;
pub mod files;
pub mod inputs;
pub mod memory;
pub mod timing;
pub mod verify;

// The tool's modules name the library's items through this crate's root (`crate::keys::Order`),
// the paths they have inside the library, so that code reads the same in either crate.
pub(crate) use gpusort::{Error, Order};
#[allow(unused_imports)] // named by doc links only
pub(crate) use gpusort::{GpuSorter, PinnedBuffer};
pub(crate) use gpusort::{argsort, cpu, gpu, keys, multi, with_key_type};

/// The library's error types, and how a CUDA error says what was being done.
pub(crate) mod error {
    pub(crate) use gpusort::error::{CudaContext, Error, Result};
}
