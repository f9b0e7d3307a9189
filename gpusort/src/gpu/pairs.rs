//! Pairs, payloads and argsorts: values sorted with their keys, on the host and on the device.

use super::auto::Pick;
#[cfg(doc)]
use super::{GpuAlgo, Queue, radix};
use super::{GpuSorter, HostKeys, Options, Sorting, check_indices, merge, pick};
use crate::error::{Error, Result};
use crate::keys::{Order, SortKey, SortValue};
use rayon::prelude::*;

impl GpuSorter {
    /// Sorts `keys` stably and moves each payload with its key: `payload[i]` belongs to
    /// `keys[i]` before and after. The counterpart of sorting `(key, payload)` pairs with
    /// [`slice::sort_by_key`] on the key (and of thrust's `stable_sort_by_key`).
    ///
    /// `P` is any `Copy` type of at most 16 bytes (structs, arrays, tuples, padding and
    /// all). The kernels only move payloads, never look at them: payloads of 4, 8 or 16 bytes
    /// travel as they are; others are spread into slots of 4, 8 or 16 bytes as they are
    /// copied to the device, and packed again on the way back, their padding bytes copied
    /// along as bytes (a zero-sized `P` is a sort of the keys alone). For larger records, sort
    /// indices ([`GpuSorter::argsort`]) and gather the records through them.
    ///
    /// # Current implementation
    ///
    /// `auto`'s stable sort with the payloads carried along ([`GpuSorter::auto_host`] with
    /// [`Sorting::Pairs`]): the faster of the merge-path merge sort and the radix sort for n and
    /// the key width on the device's table for host slices (its pairs breakpoints are, until a
    /// sweep with values exists, those measured with keys alone:
    /// [`kernels_gpu::tuning::auto::HOST_PAIRS_32`]); [`Options`] with `algo: Some(..)` runs
    /// the one you name. On the device: [`Queue::sort_by_key`]. Device memory: keys and payload
    /// slots, twice over ([`GpuSorter::scratch_bytes`]). When that does
    /// not fit in free device memory (or the budget of [`GpuSorter::set_memory_budget`]),
    /// chunks that fit are sorted one after another and merged on the CPU, stably and on all
    /// cores, with host buffers as large as the keys and payloads; [`GpuSorter::set_progress`]
    /// reports on it.
    /// Copies go through the sorter's pinned staging slots and overlap the sort, as in
    /// [`GpuSorter::sort_unstable`].
    ///
    /// # Errors
    /// [`Error::PayloadTooLarge`] for a `P` of more than 16 bytes, [`Error::LengthMismatch`],
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`], [`Error::TooLong`],
    /// [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{Error, GpuSorter, Order};
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq)]
    /// struct Station {
    ///     id: u16,
    ///     code: [u8; 3],
    /// }
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut temperatures = [21.5f32, 19.0, 21.5, -3.0];
    /// let mut stations = [
    ///     Station { id: 1, code: *b"OSL" },
    ///     Station { id: 2, code: *b"BER" },
    ///     Station { id: 3, code: *b"ROM" },
    ///     Station { id: 4, code: *b"HEL" },
    /// ];
    /// gpu.sort_by_key(&mut temperatures, &mut stations, Order::Descending)?;
    /// assert_eq!(temperatures, [21.5, 21.5, 19.0, -3.0]);
    /// let ids: Vec<u16> = stations.iter().map(|s| s.id).collect();
    /// assert_eq!(ids, [1, 3, 2, 4]); // 1 before 3: stable
    ///
    /// let mut too_large = [[0u8; 17]; 4];
    /// assert!(matches!(
    ///     gpu.sort_by_key(&mut temperatures, &mut too_large, Order::Ascending),
    ///     Err(Error::PayloadTooLarge { size: 17, max: 16 })
    /// ));
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_by_key<K: SortKey, P: Copy + Send + Sync>(
        &self,
        keys: &mut [K],
        payload: &mut [P],
        options: impl Into<Options>,
    ) -> Result<()> {
        let options = options.into();
        let value_bytes = value_slot::<P>()?;
        let sorting = if value_bytes == 0 {
            Sorting::Stable
        } else {
            Sorting::Pairs { value_bytes }
        };
        let pick = pick(options, sorting)?;
        self.sort_host(pick, HostKeys::Sort(keys), payload, options.order)
    }

    /// The stable permutation that sorts `keys` in the order of `options`, as indices of type
    /// `I`: `u32` (up to 2^32 keys), `u64` or `u128`. `keys[perm[0]], keys[perm[1]], …` is
    /// sorted, equal keys in input order. `keys` is not changed. The keys are sorted with their
    /// indices by `auto`'s stable sort, as in [`GpuSorter::sort_by_key`] ([`Options`] with
    /// `algo: Some(..)` runs the one you name). Device memory: 2 × (keys + an index per key),
    /// and the radix sort's status words where it runs; keys that do not fit are sorted in
    /// chunks (with the indices of the whole input) and merged on the CPU, with a host copy of
    /// the keys. On the device: [`Queue::argsort`].
    ///
    /// # Errors
    /// [`Error::TooLong`] for more keys than `I` indexes; otherwise as
    /// [`GpuSorter::sort_by_key`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let ages = [36u32, 25, 36, 19];
    /// let ascending: Vec<u32> = gpu.argsort(&ages, Order::Ascending)?;
    /// assert_eq!(ascending, [3, 1, 0, 2]);
    /// assert_eq!(gpu.argsort::<_, u64>(&ages, Order::Descending)?, [0, 2, 1, 3]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn argsort<K: SortKey, I: SortValue>(
        &self,
        keys: &[K],
        options: impl Into<Options>,
    ) -> Result<Vec<I>> {
        let options = options.into();
        let index_bytes = size_of::<I>();
        check_indices(keys.len(), index_bytes)?;
        let pick = pick(
            options,
            Sorting::Pairs {
                value_bytes: index_bytes,
            },
        )?;
        self.argsort_as::<K, I>(pick, keys, options.order)
    }

    /// The stable sort of the indices `0..n` by `keys`: the keys are only read (on the device
    /// they are sorted with the indices, and only the indices come back).
    pub(super) fn argsort_as<K: SortKey, V: SortValue>(
        &self,
        pick: Pick,
        keys: &[K],
        order: Order,
    ) -> Result<Vec<V>> {
        let mut indices: Vec<V> = (0..keys.len() as u64)
            .into_par_iter()
            .map(V::from_index)
            .collect();
        self.sort_host(pick, HostKeys::Read(keys), &mut indices, order)?;
        Ok(indices)
    }
}

/// Bytes of the device slot each value of type `P` travels in ([`value_slot_of`]).
///
/// # Errors
/// [`Error::PayloadTooLarge`] past [`MAX_PAYLOAD_BYTES`].
pub(super) fn value_slot<P>() -> Result<usize> {
    value_slot_of(size_of::<P>())
}

/// Bytes of the device slot a value of `size` bytes travels in: the narrowest value width of
/// the kernels ([`merge::VALUE_BYTES`]) that holds it, 0 for zero-sized values.
///
/// # Errors
/// [`Error::PayloadTooLarge`] past [`MAX_PAYLOAD_BYTES`].
pub(super) fn value_slot_of(size: usize) -> Result<usize> {
    merge::VALUE_BYTES
        .into_iter()
        .find(|&width| width >= size)
        .ok_or(Error::PayloadTooLarge {
            size,
            max: MAX_PAYLOAD_BYTES,
        })
}

pub(super) fn check_pairs(keys: usize, values: usize) -> Result<()> {
    if keys != values {
        return Err(Error::LengthMismatch {
            keys: keys as u64,
            values: values as u64,
        });
    }
    Ok(())
}

/// The most bytes of payload the kernels carry per key.
pub(super) const MAX_PAYLOAD_BYTES: usize = 16;
