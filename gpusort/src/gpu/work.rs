//! What a caller's scratch must hold for each operation of a [`Queue`]: one
//! query, [`GpuSorter::scratch_bytes`], over every operation ([`Work`]).

use super::auto::Sorting;
use super::pairs::value_slot_of;
use super::queue::Options;
use super::segments::{Carried, Segments};
use super::{GpuSorter, check_indices, radix};
use crate::error::Result;
use crate::keys::SortKey;
#[cfg(doc)]
use crate::{Error, GpuAlgo, Queue};

/// What a scratch size is asked for ([`GpuSorter::scratch_bytes`]): the operation and the
/// number of keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work<'a> {
    /// [`Queue::sort`] of this many keys.
    Sort(usize),
    /// [`Queue::sort_unstable`] of this many keys.
    SortUnstable(usize),
    /// [`Queue::sort_by_key`] of this many keys with values of `value_bytes` (4, 8 or 16).
    SortByKey {
        /// Keys (and values).
        len: usize,
        /// Bytes per value.
        value_bytes: usize,
    },
    /// [`Queue::argsort`] of this many keys.
    Argsort(usize),
    /// [`Queue::top_k`]: `k` of each row of `row_len` of `len` keys.
    TopK {
        /// Keys in all.
        len: usize,
        /// Keys per row (`len` for the whole array).
        row_len: usize,
        /// Keys selected per row.
        k: usize,
    },
    /// [`Queue::sort_segments`] of this many keys.
    SortSegments {
        /// Keys in all.
        len: usize,
        /// The segments, as the call is given them.
        segments: Segments<'a>,
    },
    /// [`Queue::sort_segments_by_key`] with values of `value_bytes` (4, 8 or 16).
    SortSegmentsByKey {
        /// Keys (and values) in all.
        len: usize,
        /// The segments, as the call is given them.
        segments: Segments<'a>,
        /// Bytes per value.
        value_bytes: usize,
    },
    /// [`Queue::argsort_segments`] of this many keys.
    ArgsortSegments {
        /// Keys in all.
        len: usize,
        /// The segments, as the call is given them.
        segments: Segments<'a>,
    },
}

impl GpuSorter {
    /// Bytes of scratch `work` takes on keys of type `K` with `options`: what a caller's
    /// scratch ([`Queue::with_scratch`]) must hold for it. 0 where it needs none (the bitonic
    /// sort, short inputs).
    ///
    /// For [`Work::SortUnstable`] under `auto`, the choice depends on free device memory: a
    /// caller's scratch smaller than this when the sort is queued makes it run the bitonic
    /// sort, in place, instead.
    ///
    /// # Errors
    /// [`Error::KOutOfRange`] or [`Error::RowLength`] for a top-k that cannot be done,
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`] where a stable sort is needed, or
    /// [`Error::Cuda`] if the free memory cannot be read.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order, Work};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let bytes = gpu.scratch_bytes::<f32>(Work::Sort(1 << 20), Order::Ascending)?;
    /// assert!(bytes >= 4 << 20); // about the keys once more
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn scratch_bytes<K: SortKey>(
        &self,
        work: Work<'_>,
        options: impl Into<Options>,
    ) -> Result<u64> {
        let options = options.into();
        let sorted = |sorting: Sorting, len: usize| -> Result<u64> {
            let algo = self.device_choice::<K>(options, sorting, len)?;
            Ok(self.scratch_bytes_of::<K>(algo, len, sorting.value_bytes()))
        };
        match work {
            Work::Sort(len) => sorted(Sorting::Stable, len),
            Work::SortUnstable(len) => sorted(Sorting::Unstable, len),
            Work::SortByKey {
                len,
                value_bytes: 0,
            } => sorted(Sorting::Stable, len),
            Work::SortByKey { len, value_bytes } => {
                let value_bytes = value_slot_of(value_bytes)?;
                sorted(Sorting::Pairs { value_bytes }, len)
            }
            Work::Argsort(len) => {
                check_indices(len, 4)?;
                Ok(radix::gathered_scratch_bytes(len as u64, size_of::<K>()))
            }
            Work::TopK { len, row_len, k } => self.top_k_scratch_bytes::<K>(len, row_len, k),
            Work::SortSegments { len, segments } => self
                .on_own_stream()
                .segments_scratch_bytes::<K>(segments, len, Carried::Nothing),
            Work::SortSegmentsByKey {
                len,
                segments,
                value_bytes,
            } => self.on_own_stream().segments_scratch_bytes::<K>(
                segments,
                len,
                // Values of no bytes still take the narrowest slot of the pairs' kernels.
                Carried::Values(value_slot_of(value_bytes.max(1))?),
            ),
            Work::ArgsortSegments { len, segments } => self
                .on_own_stream()
                .segments_scratch_bytes::<K>(segments, len, Carried::Indices),
        }
    }
}
