//! Sorts of keys already on the device: the synchronous calls and the `enqueue_*` calls that
//! queue a sort on the sorter's stream.

use super::auto::{self};
use super::{GpuAlgo, GpuSorter, Scratch, Sorting, check_len, merge};
use crate::error::{Error, Result};
use crate::keys::{Order, SortKey};
use cust::memory::DeviceSlice;

impl GpuSorter {
    /// Sorts keys already on the device, in place, and waits for the sort to finish: the
    /// device counterpart of [`slice::sort_unstable`] on a `&mut [K]`.
    ///
    /// Guarantees as [`GpuSorter::sort_unstable`]. When it returns `Ok`, the keys are sorted
    /// and may be read through any stream.
    ///
    /// # Current implementation
    ///
    /// `auto`'s choice ([`GpuSorter::auto_device`] with [`Sorting::Unstable`]): the fastest of
    /// the three sorts for n and the key width on the device's measured table; where that is
    /// the merge or the radix sort, it allocates (and frees) its scratch, about the size of the
    /// keys, if that fits in free device memory (and the budget of
    /// [`GpuSorter::set_memory_budget`]); where it does not, or the table says so, the bitonic
    /// network, in place, with no temporary device memory. [`GpuSorter::sort_device_with`] runs
    /// the sort you name.
    ///
    /// The bitonic network: up to
    /// [`SMALL_SORT_MAX_KEYS`](kernels_gpu::tuning::SMALL_SORT_MAX_KEYS) (2^16) keys it is one
    /// launch ([`kernels_gpu::bitonic::small`]): up to 4096 keys one block sorts them in registers; above,
    /// 2 to 16 blocks sort 4096-key tiles and finish the network in a few *windows*, exchanging
    /// keys through a 512 KiB workspace the sorter allocated once, with grid barriers between
    /// windows. Longer inputs take one tile-sort launch (8192-key tiles), then *window passes*
    /// ([`kernels_gpu::bitonic::window`]): each launch's blocks hold 8192 keys that agree on all but 13
    /// index bits and run as many of the network's following steps on those bits as they can,
    /// in registers, warp shuffles and shared memory (23 launches at 2^25 keys, 31 at 2^28).
    /// Keys are mapped to order-preserving unsigned bits as they are first loaded and mapped
    /// back as they are last stored, so signed, float and descending sorts cost no extra pass.
    ///
    /// # Errors
    /// [`Error::TooLong`] beyond [`MAX_KEYS`] keys, or [`Error::Cuda`] (launch or execution
    /// failure, including earlier work on the sorter's stream that failed).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use cust::memory::CopyDestination;
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut on_device = gpu.upload(&[5u64, 1, 4, 1])?;
    /// gpu.sort_unstable_device(&mut on_device, Order::Descending)?;
    /// let mut back = [0u64; 4];
    /// on_device.copy_to(&mut back[..]).expect("copy to the host");
    /// assert_eq!(back, [5, 4, 1, 1]);
    ///
    /// // A part of a buffer is a `DeviceSlice` too:
    /// gpu.sort_unstable_device(&mut on_device.index(1..), Order::Ascending)?;
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_unstable_device<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        let algo = self.auto_device::<K>(Sorting::Unstable, keys.len())?;
        if algo != GpuAlgo::Bitonic {
            match self.scratch_for::<K>(algo, keys.len(), 0) {
                Ok(mut scratch) => {
                    self.enqueue_sort_with(algo, keys, order, &mut scratch)?;
                    return self.synchronize(&format!("running the {} sort", algo.name()));
                }
                // Less memory than a moment ago: the bitonic sort needs none.
                Err(Error::OutOfDeviceMemory { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.enqueue_sort_with(GpuAlgo::Bitonic, keys, order, &mut Scratch::none())?;
        self.synchronize("running the bitonic sort")
    }

    /// Queues the in-place sort of device keys on [`GpuSorter::stream`] and returns without
    /// waiting; [`GpuSorter::synchronize`] waits for it.
    ///
    /// The keys are sorted once the stream reaches the end of the queued work. Until then,
    /// read or write them only through work queued on the same stream or on the legacy default
    /// stream (where `cust`'s synchronous copies run; the sorter's stream is blocking, so they are
    /// ordered after the sort). The borrow of `keys` ends when this returns: keep the buffer
    /// alive until the stream is synchronised.
    ///
    /// # Current implementation
    ///
    /// As [`GpuSorter::sort_unstable_device`], `auto`'s choice, except for the merge or radix
    /// sort's scratch: it is allocated in the order of the sorter's stream
    /// (`cuMemAllocAsync`, from the device's memory pool) and freed there right after the
    /// sort's launches (`cuMemFreeAsync`), so the memory goes back once the stream has run the
    /// sort, before the next synchronisation returns. Where the device has no memory pools, or
    /// the pool cannot supply the scratch, the bitonic network runs, in place.
    ///
    /// # Errors
    /// [`Error::TooLong`] beyond [`MAX_KEYS`] keys, or [`Error::Cuda`] /
    /// [`Error::DriverCall`] if a launch or the scratch's allocation is refused; execution
    /// errors show at the next synchronisation.
    ///
    /// # Examples
    ///
    /// Sorting two buffers back to back and waiting once:
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut a = gpu.upload(&[3u32, 1, 2])?;
    /// let mut b = gpu.upload(&[-1.5f32, 9.0, 0.0])?;
    /// gpu.enqueue_sort_unstable(&mut a, Order::Ascending)?;
    /// gpu.enqueue_sort_unstable(&mut b, Order::Descending)?;
    /// gpu.synchronize("sorting a and b")?; // now a and b may be read
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn enqueue_sort_unstable<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        check_len(keys.len())?;
        let (keys, len) = (keys.as_device_ptr().as_raw(), keys.len());
        let algo = self.auto_device::<K>(Sorting::Unstable, len)?;
        if algo != GpuAlgo::Bitonic {
            let bytes = self.scratch_bytes::<K>(algo, len, 0);
            if let Some(scratch) = self.stream_scratch(bytes)? {
                return self.enqueue_scratch_sort::<K>(
                    algo,
                    (keys, 0, 0),
                    len,
                    order,
                    scratch.range,
                );
            }
        }
        self.enqueue_scratch_sort::<K>(GpuAlgo::Bitonic, (keys, 0, 0), len, order, (0, 0))
    }

    /// Sorts keys already on the device stably, in place, and waits: `auto`'s stable sort
    /// ([`GpuSorter::auto_device`] with [`Sorting::Stable`], as [`GpuSorter::sort`] chooses).
    /// Allocates (and frees) its scratch, about the size of the keys
    /// ([`merge::scratch_bytes`], [`radix::scratch_bytes`]), after checking that much memory
    /// is free; a stable sort has no in-place fallback.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    pub fn sort_device<K: SortKey>(&self, keys: &mut DeviceSlice<K>, order: Order) -> Result<()> {
        check_len(keys.len())?;
        let algo = self.auto_device::<K>(Sorting::Stable, keys.len())?;
        self.sort_device_with(algo, keys, order)
    }

    /// `auto`'s sort for `sorting` of `n` keys of type `K` already on the device: the one
    /// [`GpuSorter::sort_unstable_device`], [`GpuSorter::enqueue_sort_unstable`],
    /// [`GpuSorter::sort_device`] and [`GpuSorter::sort_pairs_device`] run. The fastest for n,
    /// the key width and the values on the device's measured table for keys on the device
    /// ([`DeviceLimits::auto_table`]; [`GpuAlgo::fastest_for`] reads the Hopper table's); for
    /// [`Sorting::Unstable`], the bitonic sort where that choice's scratch does not fit in the
    /// free device memory (or the budget of [`GpuSorter::set_memory_budget`]), less a sixteenth.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the free memory cannot be read.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::GpuSorter;
    /// use gpusort::gpu::Sorting;
    ///
    /// let mut gpu = GpuSorter::new()?;
    /// println!("2^25 u32 keys: {:?}", gpu.auto_device::<u32>(Sorting::Unstable, 1 << 25)?);
    /// gpu.set_memory_budget(Some(1 << 20)); // no room for a scratch buffer of 128 MiB
    /// assert_eq!(
    ///     gpu.auto_device::<u32>(Sorting::Unstable, 1 << 25)?,
    ///     gpusort::gpu::GpuAlgo::Bitonic
    /// );
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn auto_device<K: SortKey>(&self, sorting: Sorting, n: usize) -> Result<GpuAlgo> {
        let (table, key_bytes) = (&self.limits.auto_table().device, size_of::<K>());
        let algo = auto::fastest(table, sorting, n as u64, key_bytes);
        if sorting.is_stable() || algo == GpuAlgo::Bitonic {
            return Ok(algo);
        }
        let max_shared = self.limits.max_shared_per_block;
        let spare = self.room()?;
        Ok(auto::choose(
            table, sorting, n as u64, key_bytes, spare, max_shared,
        ))
    }

    /// Queues the sort of device keys with `algo` on [`GpuSorter::stream`] without waiting,
    /// using `scratch` (from [`GpuSorter::scratch_for`] with the same `algo`, for at least this
    /// many keys of this type; it must live until the stream is synchronised).
    ///
    /// # Errors
    /// [`Error::TooLong`], or [`Error::Cuda`] if a launch is refused.
    ///
    /// # Panics
    /// If `scratch` is too small.
    pub fn enqueue_sort_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        order: Order,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let (len, keys) = (keys.len(), (keys.as_device_ptr().as_raw(), 0, 0));
        self.enqueue_scratch_sort::<K>(algo, keys, len, order, scratch.range())
    }

    /// Sorts keys already on the device with `algo` and waits for the sort: scratch from
    /// [`GpuSorter::scratch_for`], [`GpuSorter::enqueue_sort_with`], then a wait.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    pub fn sort_device_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        let mut scratch = self.scratch_for::<K>(algo, keys.len(), 0)?;
        self.enqueue_sort_with(algo, keys, order, &mut scratch)?;
        self.synchronize(&format!("running the {} sort", algo.name()))
    }

    /// Queues the stable merge sort of device keys on [`GpuSorter::stream`] without waiting,
    /// using `scratch` (from [`GpuSorter::sort_scratch`] for at least this many keys of this
    /// type; it must live until the stream is synchronised). `auto`'s stable sort, queued:
    /// [`GpuSorter::auto_device`], [`GpuSorter::scratch_for`], [`GpuSorter::enqueue_sort_with`].
    ///
    /// # Errors
    /// [`Error::TooLong`], or [`Error::Cuda`] if a launch is refused.
    ///
    /// # Panics
    /// If `scratch` is too small.
    pub fn enqueue_sort<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
        scratch: &mut Scratch,
    ) -> Result<()> {
        self.enqueue_sort_with(GpuAlgo::Merge, keys, order, scratch)
    }

    /// Queues the stable sort of `len` keys of `key_bytes` at device address `keys`, encoding
    /// them with `encode` and decoding with `decode` at the end (`IDENTITY` leaves them
    /// encoded), with `scratch` of at least [`merge::scratch_bytes`] bytes.
    pub(crate) fn enqueue_merge_sort_raw(
        &self,
        keys: u64,
        len: u64,
        key_bytes: usize,
        (encode, decode): (u32, u32),
        scratch: u64,
    ) -> Result<()> {
        self.bind()?;
        let launch = merge::Launch {
            keys,
            values: 0,
            scratch,
            n: len,
            key_bytes,
            value_bytes: 0,
            encode,
            decode,
            max_shared: self.limits.max_shared_per_block,
        };
        merge::enqueue(self, &launch)
    }
}
