//! Sorts of host slices: each sort planned against the device's free memory, its keys staged
//! through pinned slots with the copies overlapped with the sort, or sorted in chunks that fit and
//! merged on the CPU.

#[cfg(doc)]
use super::Queue;
use super::auto::{self, Pick};
use super::overlap::Chunked;
use super::{
    GpuAlgo, GpuSorter, HostPlan, Options, Phase, Progress, ProgressHook, Sorting, bitonic,
    check_len, check_pairs, merge, pick, radix, value_slot,
};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::keys::{Order, SortKey};
#[cfg(doc)]
use kernels_gpu::tuning::MAX_KEYS;
use rayon::prelude::*;
use std::sync::{Mutex, PoisonError};

impl GpuSorter {
    /// Sorts the host slice `keys` on the GPU in the order of `options` (an [`Order`], or
    /// [`Options`] that also name the sort): the counterpart of [`slice::sort_unstable`].
    ///
    /// This sort is unstable (equal keys may be reordered), but keys equal in its order have the
    /// same bits, so the result is bit for bit std's sort of the same keys. Floats are ordered
    /// like [`f32::total_cmp`]: NaNs with the sign bit set first, then −∞, …, −0.0, +0.0, …, +∞,
    /// the other NaNs; descending is the exact reverse.
    ///
    /// # Current implementation
    ///
    /// Copies the keys into a new device buffer of the same length, sorts it there with
    /// `auto`'s choice ([`GpuSorter::auto_host`] with [`Sorting::Unstable`]), copies it back
    /// and frees it. `auto` takes the fastest of the three sorts end to end for n and the key
    /// width on the device's measured table for host slices (the Hopper table: the bitonic network
    /// up to 2^26 4-byte or 2^25 8-byte keys, the merge sort above; the radix sort, the fastest
    /// on the device for most sizes above 2^16, cannot overlap the copies;
    /// [`kernels_gpu::tuning::auto`]); where
    /// that is the merge sort and its scratch (as large as the keys) does not fit in free device
    /// memory (or the budget of [`GpuSorter::set_memory_budget`]), the bitonic network, which
    /// sorts in place: O(n log² n) compare-exchanges, the same for every input of length n. The
    /// copies go through eight reused 4 MiB pinned slots, filled and emptied on all cores while
    /// the DMA engine moves others, and overlap the sort: the keys go up in chunks of
    /// [`OVERLAP_CHUNK`](kernels_gpu::tuning::OVERLAP_CHUNK) keys, each sorted as soon as it
    /// has landed (by the bitonic and the merge sort; the radix sort waits for all of them), and
    /// the last pass is launched in parts, each copied back as soon as it is written. Device
    /// memory: n keys, and the scratch of the merge or radix sort where one runs; host memory:
    /// the slots, allocated by the first host-slice sort. Keys that do not fit even alone are
    /// sorted in chunks that do and merged on the CPU. For 0 or 1 keys it returns at once,
    /// without touching the device. With keys already on the device, queue
    /// [`Queue::sort_unstable`] and save both copies; [`Options`] with `algo: Some(..)` runs the
    /// sort you name, any of the three.
    ///
    /// # Errors
    /// [`Error::TooLong`] beyond [`MAX_KEYS`] keys, [`Error::OutOfDeviceMemory`] if a buffer
    /// does not fit after all, or [`Error::Cuda`] if a copy, launch or the sort fails. On error
    /// `keys` is unchanged unless the final copy back failed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut v = vec![-5i32, 4, 1, -3, 2];
    /// gpu.sort_unstable(&mut v, Order::Ascending)?;
    /// assert_eq!(v, [-5, -3, 1, 2, 4]);
    ///
    /// let mut f = vec![0.0f32, f32::NAN, -0.0, f32::NEG_INFINITY];
    /// gpu.sort_unstable(&mut f, Order::Descending)?;
    /// assert!(f[0].is_nan());
    /// assert_eq!(f[1..].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
    ///            [0.0f32.to_bits(), (-0.0f32).to_bits(), f32::NEG_INFINITY.to_bits()]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_unstable<K: SortKey>(
        &self,
        keys: &mut [K],
        options: impl Into<Options>,
    ) -> Result<()> {
        let options = options.into();
        let pick = pick(options, Sorting::Unstable)?;
        self.sort_keys(pick, keys, options.order)
    }

    /// Caps the device memory that host-slice sorts ([`GpuSorter::sort_unstable`],
    /// [`GpuSorter::sort`], [`GpuSorter::sort_by_key`], [`GpuSorter::argsort`]) plan with, and
    /// the scratch that `auto` gives the sorts of a [`Queue`] ([`GpuSorter::auto_device`]);
    /// `None` (the default) means the memory free when they start. Keys (and values) whose sort needs more are sorted in chunks that fit, one after
    /// another, and the sorted chunks are merged on the CPU (stably, on all cores), with a host
    /// buffer as large as the keys and values; an unstable sort whose faster choice's scratch
    /// does not fit runs the in-place bitonic sort instead. Mostly for testing those paths
    /// without filling a GPU.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let mut gpu = GpuSorter::new()?;
    /// gpu.set_memory_budget(Some(64 << 20)); // 64 MiB: 2^26 u64 keys go in chunks
    /// let mut keys: Vec<u64> = (0..1u64 << 26).rev().collect();
    /// gpu.sort(&mut keys, Order::Ascending)?;
    /// assert!(keys.is_sorted());
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn set_memory_budget(&mut self, bytes: Option<u64>) {
        self.memory_budget = bytes;
    }

    /// Sets the hook that host-slice sorts in chunks (those that do not fit on the device, see
    /// [`GpuSorter::set_memory_budget`]) report their [`Progress`] to, or removes it (`None`).
    /// Sorts that fit on the device in one piece do not call it.
    ///
    /// The hook is called on the sorting thread after each chunk is sorted, and by the merging
    /// threads, one call at a time, after each piece of the merge (64 Ki keys): keep it short,
    /// e.g. updating a progress bar.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::gpu::{Phase, Progress};
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let mut gpu = GpuSorter::new()?;
    /// gpu.set_memory_budget(Some(16 << 20));
    /// gpu.set_progress(Some(Box::new(|p: Progress| {
    ///     if p.done == p.total {
    ///         eprintln!("{:?} done: {} keys", p.phase, p.total);
    ///     }
    /// })));
    /// let mut keys: Vec<u32> = (0..10_000_000u32).rev().collect();
    /// gpu.sort(&mut keys, Order::Ascending)?; // prints "Sorting done", then "Merging done"
    /// gpu.set_progress(None);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn set_progress(&mut self, hook: Option<ProgressHook>) {
        self.progress = hook;
    }

    pub(super) fn report(&self, progress: Progress) {
        if let Some(hook) = &self.progress {
            hook(progress);
        }
    }

    /// Every host-slice sort: `keys` sorted with `pick` (a named sort or `auto`'s), `values`
    /// (one per key; zero-sized for keys alone, or any payload of up to 16 bytes for the stable
    /// sorts) permuted with them. Sorted on the device in one round trip when keys, values and
    /// scratch fit there, else in chunks that fit, merged on the CPU ([`auto::plan_host`]).
    pub(super) fn sort_host<K: SortKey, P: Copy + Send + Sync>(
        &self,
        pick: Pick,
        keys: HostKeys<'_, K>,
        values: &mut [P],
        order: Order,
    ) -> Result<()> {
        let slot = value_slot::<P>()?;
        check_pairs(keys.len(), values.len())?;
        let n = keys.len();
        if n <= 1 {
            return Ok(());
        }
        check_len(n)?;
        let room = self.room()?;
        let plan = self.plan_host::<K>(pick, n, slot, room);
        match plan.chunk {
            None => self.sort_fitting(keys, values, order, plan.algo),
            Some(chunk) => {
                // The chunks are sorted in place and merged: an argsort's keys need a copy.
                let mut copy = Vec::new();
                let keys = match keys {
                    HostKeys::Sort(keys) => keys,
                    HostKeys::Read(keys) => {
                        keys.par_iter().copied().collect_into_vec(&mut copy);
                        &mut copy[..]
                    }
                };
                self.sort_in_chunks(keys, values, chunk as usize, order, (pick, room))
            }
        }
    }

    /// The device memory that host-slice sorts and `auto` plan with: the memory free now, or
    /// the budget if that is less, less a sixteenth kept back for the small buffers.
    pub(super) fn room(&self) -> Result<u64> {
        let (free, _) = self.memory_info()?;
        let room = self.memory_budget.map_or(free, |budget| budget.min(free));
        Ok(room - room / 16)
    }

    /// [`auto::plan_host`] on this device for `n` keys of `K` with values in slots of `slot`
    /// bytes and `room` bytes of device memory.
    pub(super) fn plan_host<K: SortKey>(
        &self,
        pick: Pick,
        n: usize,
        slot: usize,
        room: u64,
    ) -> HostPlan {
        let (table, max_shared) = (self.limits.auto_table(), self.limits.max_shared_per_block);
        auto::plan_host(
            table,
            pick,
            n as u64,
            size_of::<K>(),
            slot,
            room,
            max_shared,
        )
    }

    /// Sorts `keys` (and `values`) chunk by chunk, each with the sort `pick` names or with
    /// `auto`'s choice for its length in `room` bytes, then merges the sorted chunks on the CPU.
    /// Values hold whatever the caller put there: an argsort's indices are positions in the
    /// whole input, so equal keys of different chunks merge in input order.
    pub(super) fn sort_in_chunks<K: SortKey, P: Copy + Send + Sync>(
        &self,
        keys: &mut [K],
        values: &mut [P],
        chunk: usize,
        order: Order,
        (pick, room): (Pick, u64),
    ) -> Result<()> {
        let n = keys.len() as u64;
        let slot = value_slot::<P>()?;
        let mut sorted = 0;
        for (part, part_values) in keys.chunks_mut(chunk).zip(values.chunks_mut(chunk)) {
            sorted += part.len() as u64;
            let algo = self.plan_host::<K>(pick, part.len(), slot, room).algo;
            self.sort_fitting(HostKeys::Sort(part), part_values, order, algo)?;
            self.report(Progress::new(Phase::Sorting, sorted, n));
        }
        let total = n * u64::from(crate::cpu::merge_rounds(keys.len(), chunk));
        let merged = Mutex::new(0);
        let written = |count: usize| {
            if self.progress.is_some() {
                let mut done = merged.lock().unwrap_or_else(PoisonError::into_inner);
                *done += count as u64;
                self.report(Progress::new(Phase::Merging, *done, total));
            }
        };
        crate::cpu::merge_runs(keys, values, chunk, |k| k.ordered_bits(order), &written);
        Ok(())
    }

    /// Sorts host keys (and values) that fit on the device with `algo`: one round trip, the
    /// copies overlapping the sort ([`overlap`]).
    pub(super) fn sort_fitting<K: SortKey, P: Copy>(
        &self,
        keys: HostKeys<'_, K>,
        values: &mut [P],
        order: Order,
        algo: GpuAlgo,
    ) -> Result<()> {
        check_len(keys.len())?;
        let slot = value_slot::<P>()?;
        let n = keys.len() as u64;
        let key_bytes = size_of::<K>();
        let map = K::key_map(order);
        self.bind()?;
        if algo == GpuAlgo::Bitonic {
            assert_eq!(slot, 0, "the bitonic sort carries no values");
            return self.round_trip(keys, values, |keys, _| {
                Ok(bitonic::Chunked {
                    on: self.on_own_stream(),
                    keys,
                    n,
                    key_bytes,
                    map,
                })
            });
        }
        // `buffer` lives until the round trip has waited for the sort.
        let buffer = self.scratch_for::<K>(algo, keys.len(), slot)?;
        let (scratch, max_shared) = (buffer.device_ptr(), self.limits.max_shared_per_block);
        if algo == GpuAlgo::Radix {
            self.round_trip(keys, values, |keys, values| {
                let launch = radix::Launch {
                    keys,
                    values,
                    scratch,
                    n,
                    key_bytes,
                    value_bytes: slot,
                    map,
                };
                Ok(Chunked {
                    on: self.on_own_stream(),
                    launch,
                })
            })
        } else {
            self.round_trip(keys, values, |keys, values| {
                let launch = merge::Launch {
                    keys,
                    values,
                    scratch,
                    n,
                    key_bytes,
                    value_bytes: slot,
                    encode: map,
                    decode: map,
                    max_shared,
                };
                Ok(Chunked {
                    on: self.on_own_stream(),
                    launch,
                })
            })
        }
    }

    /// Sorts `keys` stably (equal keys keep their order; floats as `total_cmp`) through device
    /// buffers: the counterpart of [`slice::sort`].
    ///
    /// `auto` chooses the sort ([`GpuSorter::auto_host`] with [`Sorting::Stable`]): the faster
    /// end to end of the merge-path merge sort and the radix sort for n and the key width on the
    /// device's measured table for host slices (the Hopper table: the merge sort, whose chunks are
    /// sorted as they land, but for 2^17 to 2^20 4-byte keys: the radix sort); [`Options`] with
    /// `algo: Some(..)` runs the one you name. On the device: [`Queue::sort`].
    /// Device memory: the keys plus the sort's scratch ([`GpuSorter::scratch_bytes`]: about as much
    /// again). Keys whose sort does not fit (or exceeds
    /// [`GpuSorter::set_memory_budget`]) are sorted in chunks that fit and merged on the CPU,
    /// stably, with a host buffer as large as the keys.
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`], [`Error::TooLong`],
    /// [`Error::OutOfDeviceMemory`], or [`Error::Cuda`]. On error `keys` is unchanged unless the
    /// final copy back failed, or a chunk was already sorted.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = vec![2.5f64, -1.0, f64::NAN, -0.0, 0.0];
    /// gpu.sort(&mut keys, Order::Ascending)?;
    /// assert_eq!(keys[..4], [-1.0, -0.0, 0.0, 2.5]);
    /// assert!(keys[4].is_nan());
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort<K: SortKey>(&self, keys: &mut [K], options: impl Into<Options>) -> Result<()> {
        let options = options.into();
        let pick = pick(options, Sorting::Stable)?;
        self.sort_keys(pick, keys, options.order)
    }

    /// How a host-slice sort of `n` keys of type `K` runs with `auto` for `sorting` (for
    /// [`Sorting::Pairs`], `value_bytes` is the slot the values travel in: 4, 8 or 16): the
    /// sort [`GpuSorter::sort_unstable`], [`GpuSorter::sort`], [`GpuSorter::sort_by_key`] and
    /// [`GpuSorter::argsort`] would run given an [`Order`] with the memory free now, and whether
    /// in chunks. The choice is the device table's for host slices, measured
    /// end to end (the copies overlap the bitonic and the merge sort, not the radix sort). The
    /// keys, values and the choice's scratch go on the device
    /// whole where they fit in free memory (and the budget), less a sixteenth; an unstable sort
    /// that does not fit with its scratch runs the bitonic sort whole if the keys alone fit;
    /// else the keys go in chunks that fit, each sorted with `auto`'s choice for its length,
    /// merged on the CPU.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the free memory cannot be read.
    pub fn auto_host<K: SortKey>(&self, sorting: Sorting, n: usize) -> Result<HostPlan> {
        let room = self.room()?;
        Ok(self.plan_host::<K>(Pick::Auto(sorting), n, sorting.value_bytes(), room))
    }

    /// Sorts host keys alone with `pick`.
    pub(super) fn sort_keys<K: SortKey>(
        &self,
        pick: Pick,
        keys: &mut [K],
        order: Order,
    ) -> Result<()> {
        // Zero-sized values: nothing is allocated, copied or moved for them.
        let mut no_values = vec![(); keys.len()];
        self.sort_host(pick, HostKeys::Sort(keys), &mut no_values, order)
    }
}

/// Keys of a host-slice sort: sorted in place, or only read (an argsort, whose result is the
/// permutation).
pub(super) enum HostKeys<'a, K> {
    Sort(&'a mut [K]),
    Read(&'a [K]),
}

impl<K> HostKeys<'_, K> {
    pub(super) fn as_slice(&self) -> &[K] {
        match self {
            HostKeys::Sort(keys) => keys,
            HostKeys::Read(keys) => keys,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.as_slice().len()
    }
}
