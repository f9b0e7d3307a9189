//! Pairs, payloads and argsorts: values sorted with their keys, on the host and on the device.

use super::auto::Pick;
use super::{GpuAlgo, GpuSorter, HostKeys, Scratch, Sorting, merge, stable};
use crate::error::{Error, Result};
use crate::keys::{Order, SortKey, SortValue};
use cust::memory::DeviceSlice;
use rayon::prelude::*;

impl GpuSorter {
    /// Sorts `keys` stably and applies the same permutation to `values` (one per key): `auto`'s
    /// stable sort (the merge or the radix sort) with the values carried along, as in
    /// [`GpuSorter::sort_by_key`]. Values are `u32`, `u64` or `u128` ([`SortValue`]);
    /// [`GpuSorter::sort_by_key`] takes any payload of up to 16 bytes.
    ///
    /// Device memory: keys and values, twice over (see [`merge::scratch_bytes`],
    /// [`radix::scratch_bytes`]); pairs that do not fit are sorted in chunks and merged on the
    /// CPU, as in [`GpuSorter::sort_by_key`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or
    /// [`Error::Cuda`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = [3i32, 1, 3, 2];
    /// let mut values = [10u64, 11, 12, 13];
    /// gpu.sort_pairs(&mut keys, &mut values, Order::Ascending)?;
    /// assert_eq!((keys, values), ([1, 2, 3, 3], [11, 13, 10, 12]));
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_pairs<K: SortKey, V: SortValue>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        order: Order,
    ) -> Result<()> {
        self.sort_by_key(keys, values, order)
    }

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
    /// [`kernels_gpu::tuning::auto::HOST_PAIRS_32`]);
    /// [`GpuSorter::sort_by_key_with`] runs the one you name. Device memory: keys and payload
    /// slots, twice over ([`merge::scratch_bytes`], [`radix::scratch_bytes`]). When that does
    /// not fit in free device memory (or the budget of [`GpuSorter::set_memory_budget`]),
    /// chunks that fit are sorted one after another and merged on the CPU, stably and on all
    /// cores, with host buffers as large as the keys and payloads; [`GpuSorter::set_progress`]
    /// reports on it.
    /// Copies go through the sorter's pinned staging slots and overlap the sort, as in
    /// [`GpuSorter::sort_unstable`].
    ///
    /// # Errors
    /// [`Error::PayloadTooLarge`] for a `P` of more than 16 bytes, [`Error::LengthMismatch`],
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
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
        order: Order,
    ) -> Result<()> {
        let value_bytes = value_slot::<P>()?;
        let sorting = if value_bytes == 0 {
            Sorting::Stable
        } else {
            Sorting::Pairs { value_bytes }
        };
        self.sort_host(Pick::Auto(sorting), HostKeys::Sort(keys), payload, order)
    }

    /// [`GpuSorter::sort_by_key`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`] (device memory: keys and payload slots twice over, and
    /// [`radix::scratch_bytes`]'s status words).
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::sort_by_key`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::gpu::GpuAlgo;
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = [3u64, 1, 3, 2];
    /// let mut names = [*b"c0", *b"a0", *b"c1", *b"b0"];
    /// gpu.sort_by_key_with(GpuAlgo::Radix, &mut keys, &mut names, Order::Ascending)?;
    /// assert_eq!(names, [*b"a0", *b"b0", *b"c0", *b"c1"]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_by_key_with<K: SortKey, P: Copy + Send + Sync>(
        &self,
        algo: GpuAlgo,
        keys: &mut [K],
        payload: &mut [P],
        order: Order,
    ) -> Result<()> {
        stable(algo)?;
        self.sort_host(Pick::Algo(algo), HostKeys::Sort(keys), payload, order)
    }

    /// [`GpuSorter::sort_pairs`] on device buffers, in place; waits. Values are `u32`, `u64` or
    /// `u128` ([`SortValue`]). `auto`'s stable sort ([`GpuSorter::auto_device`] with
    /// [`Sorting::Pairs`]); allocates (and frees) its scratch ([`merge::scratch_bytes`],
    /// [`radix::scratch_bytes`]).
    ///
    /// # Errors
    /// As [`GpuSorter::sort_pairs`].
    pub fn sort_pairs_device<K: SortKey, V: SortValue>(
        &self,
        keys: &mut DeviceSlice<K>,
        values: &mut DeviceSlice<V>,
        order: Order,
    ) -> Result<()> {
        let value_bytes = size_of::<V>();
        let algo = self.auto_device::<K>(Sorting::Pairs { value_bytes }, keys.len())?;
        self.sort_pairs_device_with(algo, keys, values, order)
    }

    /// [`GpuSorter::sort_pairs_device`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`]. Allocates (and frees) its scratch ([`GpuSorter::scratch_for`]).
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::sort_pairs`].
    pub fn sort_pairs_device_with<K: SortKey, V: SortValue>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        values: &mut DeviceSlice<V>,
        order: Order,
    ) -> Result<()> {
        stable(algo)?;
        check_pairs(keys.len(), values.len())?;
        let mut scratch = self.scratch_for::<K>(algo, keys.len(), size_of::<V>())?;
        self.enqueue_sort_pairs_with(algo, keys, values, order, &mut scratch)?;
        // `scratch` lives until the sort is done.
        self.synchronize(&format!("running the {} sort of pairs", algo.name()))
    }

    /// Queues the stable sort with `algo` of device keys and their values on
    /// [`GpuSorter::stream`] without waiting, using `scratch` (from [`GpuSorter::scratch_for`]
    /// with the same `algo`, for at least this many keys of this type with values of this
    /// type; it must live until the stream is synchronised).
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`], [`Error::LengthMismatch`],
    /// [`Error::TooLong`], or [`Error::Cuda`] if a launch is refused.
    ///
    /// # Panics
    /// If `scratch` is too small.
    pub fn enqueue_sort_pairs_with<K: SortKey, V: SortValue>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        values: &mut DeviceSlice<V>,
        order: Order,
        scratch: &mut Scratch,
    ) -> Result<()> {
        stable(algo)?;
        check_pairs(keys.len(), values.len())?;
        let buffers = (
            keys.as_device_ptr().as_raw(),
            values.as_device_ptr().as_raw(),
            size_of::<V>(),
        );
        self.enqueue_scratch_sort::<K>(algo, buffers, keys.len(), order, scratch.range())
    }

    /// The stable permutation that sorts `keys` in `order`, as `u64` indices (any length):
    /// `keys[perm[0]], keys[perm[1]], …` is sorted, equal keys in input order. `keys` is not
    /// changed. The keys are sorted with their indices by `auto`'s stable sort, as in
    /// [`GpuSorter::sort_pairs`] ([`GpuSorter::argsort_with`] runs the one you name). Device
    /// memory: 2 × (keys + 8 bytes per key), and the radix sort's status words where it runs;
    /// keys that do not fit are sorted in chunks (with the indices of the whole input) and
    /// merged on the CPU, with a host copy of the keys.
    ///
    /// # Errors
    /// As [`GpuSorter::sort_pairs`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let ages = [36u32, 25, 36, 19];
    /// assert_eq!(gpu.argsort(&ages, Order::Ascending)?, [3, 1, 0, 2]);
    /// assert_eq!(gpu.argsort(&ages, Order::Descending)?, [0, 2, 1, 3]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn argsort<K: SortKey>(&self, keys: &[K], order: Order) -> Result<Vec<u64>> {
        let sorting = Sorting::Pairs { value_bytes: 8 };
        self.argsort_as::<K, u64>(Pick::Auto(sorting), keys, order)
    }

    /// [`GpuSorter::argsort`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`].
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::argsort`].
    pub fn argsort_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &[K],
        order: Order,
    ) -> Result<Vec<u64>> {
        stable(algo)?;
        self.argsort_as::<K, u64>(Pick::Algo(algo), keys, order)
    }

    /// [`GpuSorter::argsort`] with `u32` indices: less memory and traffic (2 × (keys + 4 bytes
    /// per key)), for up to 2^32 keys.
    ///
    /// # Errors
    /// [`Error::TooLong`] past 2^32 keys; otherwise as [`GpuSorter::sort_pairs`].
    pub fn argsort_u32<K: SortKey>(&self, keys: &[K], order: Order) -> Result<Vec<u32>> {
        let sorting = Sorting::Pairs { value_bytes: 4 };
        self.argsort_u32_as(Pick::Auto(sorting), keys, order)
    }

    /// [`GpuSorter::argsort_u32`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`].
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::argsort_u32`].
    pub fn argsort_u32_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &[K],
        order: Order,
    ) -> Result<Vec<u32>> {
        stable(algo)?;
        self.argsort_u32_as(Pick::Algo(algo), keys, order)
    }

    /// [`GpuSorter::argsort_as`] with `u32` indices, for up to 2^32 keys.
    pub(super) fn argsort_u32_as<K: SortKey>(
        &self,
        pick: Pick,
        keys: &[K],
        order: Order,
    ) -> Result<Vec<u32>> {
        let max = u64::from(u32::MAX) + 1;
        if keys.len() as u64 > max {
            return Err(Error::TooLong {
                len: keys.len() as u64,
                max,
            });
        }
        self.argsort_as::<K, u32>(pick, keys, order)
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

/// Bytes of the device slot each value of type `P` travels in: the narrowest value width of
/// the kernels ([`merge::VALUE_BYTES`]) that holds it, 0 for zero-sized values.
///
/// # Errors
/// [`Error::PayloadTooLarge`] past [`MAX_PAYLOAD_BYTES`].
pub(super) fn value_slot<P>() -> Result<usize> {
    let size = size_of::<P>();
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
