//! The `gpusort` command-line tool: the main job (sort generated keys, time them against the
//! CPU, verify), `gpusort sort` (files), and `gpusort bench` (the benchmark sweep, its plots and
//! the comparison with NVIDIA's sorts), with the timing, seeded inputs and verification they
//! use, which the workspace's tests and benchmarks use too.
//!
//! The sorting library is the `gpusort` crate; this crate is the tool, and its API serves the
//! tool and the workspace's tests, not other programs.
#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod inputs;
pub mod timing;
pub mod verify;

// The tool's modules name the library's items through this crate's root (`crate::keys::Order`),
// the paths they have inside the library, so that code reads the same in either crate.
pub(crate) use gpusort::{Error, Order};
#[allow(unused_imports)] // named by doc links only
pub(crate) use gpusort::{GpuSorter, PinnedBuffer};
pub(crate) use gpusort::{argsort, cpu, files, gpu, keys, memory, multi, with_key_type};

/// The library's error types, and how a CUDA error says what was being done.
pub(crate) mod error {
    pub(crate) use gpusort::error::{CudaContext, Error, Result};
}
