//! Sorts of keys already on the device: which sort `auto` runs for them.

#[cfg(doc)]
use super::Queue;
use super::auto::Pick;
use super::auto::{self};
use super::{GpuAlgo, GpuSorter, Options, Sorting, merge, pick};
use crate::error::Result;
use crate::keys::SortKey;

impl GpuSorter {
    /// `auto`'s sort for `sorting` of `n` keys of type `K` already on the device: the one
    /// [`Queue::sort_unstable`], [`Queue::sort`] and [`Queue::sort_by_key`] run. The fastest for
    /// n, the key width and the values on the measured table of the device's compute capability
    /// for keys on the device ([`kernels_gpu::tuning::auto::table`]); for [`Sorting::Unstable`],
    /// the bitonic sort where that choice's scratch does not fit in the free device memory (or
    /// the budget of [`GpuSorter::set_memory_budget`]), less a sixteenth.
    ///
    /// # Errors
    /// [`Error::Cuda`](crate::Error::Cuda) if the free memory cannot be read.
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
        let algo = self.auto_device_table::<K>(sorting, n);
        if sorting.is_stable() || algo == GpuAlgo::Bitonic {
            return Ok(algo);
        }
        let max_shared = self.limits.max_shared_per_block;
        let spare = self.room()?;
        Ok(auto::choose(
            table, sorting, n as u64, key_bytes, spare, max_shared,
        ))
    }

    /// The sort a device call with `options` runs for `sorting` of `n` keys of type `K`: the one
    /// named (a stable one where `sorting` needs it), or [`GpuSorter::auto_device`]'s.
    pub(crate) fn device_choice<K: SortKey>(
        &self,
        options: Options,
        sorting: Sorting,
        n: usize,
    ) -> Result<GpuAlgo> {
        match pick(options, sorting)? {
            Pick::Algo(algo) => Ok(algo),
            Pick::Auto(sorting) => self.auto_device::<K>(sorting, n),
        }
    }

    /// The device table's fastest sort for `sorting` of `n` keys of type `K`, whatever the
    /// free memory.
    pub(crate) fn auto_device_table<K: SortKey>(&self, sorting: Sorting, n: usize) -> GpuAlgo {
        let table = &self.limits.auto_table().device;
        auto::fastest(table, sorting, n as u64, size_of::<K>())
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
        merge::enqueue(&self.on_own_stream(), &launch)
    }
}
