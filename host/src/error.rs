//! The library's error type.

use cust::error::CudaError;

/// Everything that can go wrong while sorting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The CUDA driver library is missing, a stub, or too old for this program.
    #[error("no usable CUDA driver: {0}")]
    NoDriver(String),
    /// The driver works but sees no GPU.
    #[error("no CUDA-capable device is present")]
    NoDevice,
    /// A device ordinal past the last device.
    #[error("CUDA device {ordinal} does not exist ({count} present)")]
    InvalidDevice {
        /// The ordinal asked for.
        ordinal: u32,
        /// Devices present.
        count: u32,
    },
    /// Not enough free device memory for the buffers a sort needs.
    #[error(
        "out of device memory: {what} needs {requested} bytes, {free} bytes are free of {total}"
    )]
    OutOfDeviceMemory {
        /// What the memory was for.
        what: &'static str,
        /// Bytes asked for.
        requested: u64,
        /// Bytes free on the device when asked.
        free: u64,
        /// Bytes on the device.
        total: u64,
    },
    /// More keys than the kernels can index.
    #[error("{len} keys is more than the GPU kernels support ({max} keys)")]
    TooLong {
        /// Keys asked for.
        len: u64,
        /// The most the kernels accept.
        max: u64,
    },
    /// Keys and values of a pair sort differ in length.
    #[error("{keys} keys but {values} values: a pair sort needs one value per key")]
    LengthMismatch {
        /// Keys given.
        keys: u64,
        /// Values given.
        values: u64,
    },
    /// A raw driver call, made without a `cust` wrapper, failed.
    #[error("CUDA error while {context}: {call} returned {status}")]
    DriverCall {
        /// What was being done.
        context: String,
        /// The driver function.
        call: &'static str,
        /// The status it returned.
        status: String,
    },
    /// A CUDA call failed.
    #[error("CUDA error while {context}: {source}")]
    Cuda {
        /// What was being done.
        context: String,
        /// The driver's error.
        source: CudaError,
    },
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds what was being done to a CUDA error.
pub(crate) trait CudaContext<T> {
    fn context(self, what: &str) -> Result<T>;
}

impl<T> CudaContext<T> for cust::error::CudaResult<T> {
    fn context(self, what: &str) -> Result<T> {
        self.map_err(|source| Error::Cuda {
            context: what.to_owned(),
            source,
        })
    }
}
