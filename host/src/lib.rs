//! Sort arrays on NVIDIA GPUs with kernels written in Rust (compiled to PTX by rustc's nvptx64
//! backend, launched with `cust`), with CPU baselines, a CPU fallback and verification.
//!
//! ```no_run
//! use gpusort::{GpuSorter, Order};
//! let sorter = GpuSorter::new()?;
//! let mut keys = vec![3.5f32, -1.0, f32::NAN, 0.0, -0.0];
//! sorter.sort_unstable(&mut keys, Order::Ascending)?;
//! assert_eq!(keys[..2], [-1.0, -0.0]);
//! # Ok::<(), gpusort::Error>(())
//! ```
#![warn(missing_docs)]

pub mod argsort;
pub mod bench;
pub mod cli;
pub mod cpu;
pub mod error;
pub mod files;
pub mod gpu;
pub mod inputs;
pub mod keys;
pub mod timing;
pub mod verify;

pub use error::{Error, Result};
pub use gpu::GpuSorter;
pub use keys::{DType, Order, SortKey, SortValue};
