//! What a sorter knows of its device, and the choice of kernels and shapes made from it (as
//! CUB's per-architecture policies): read once when the sorter is created
//! ([`DeviceLimits::read`]), the same for every sort on it.
//!
//! The kernels are tuned for Hopper (sm_90: 227 KiB of shared memory per block, 132
//! multiprocessors on an H100 SXM). Every device from sm_70 (the PTX's target) runs them; a
//! kernel whose shared memory a device's block cannot have is replaced by a compact variant of
//! the same algorithm:
//!
//! | kernels | shared bytes per block | where it does not fit | instead |
//! |---|---|---|---|
//! | bitonic windows of 8-byte keys (`bitonic_window_*_u64`) | 67,584 | sm_75 (64 KiB) | windows of 2^9 keys (`*_compact_u64`, 4,224 bytes) |
//! | stable tile sorts (`merge_sort_tiles_*`) | 35,072 to 209,152 | where larger than the device's | `merge_sort_tiles_compact_*` (≤ 52,736) |
//!
//! Every other kernel fits every device from sm_70 as it is: at most 35,328 bytes of shared
//! memory (the tiny sort of 8-byte keys sets 65,536, the T4's limit), at most 1024 threads,
//! and a register cap that fits one block in 65,536 registers. Prefetch distances come from
//! the multiprocessors and the L2 cache ([`DeviceLimits::prefetch_ahead`]).

use crate::error::{CudaContext, Result, driver};
use cust::device::{Device, DeviceAttribute};
use cust::sys as cuda;
use kernels_gpu::segments::radix_shared_bytes;
use kernels_gpu::tuning::auto::{self, AutoTable};
use kernels_gpu::tuning::{prefetch_ahead_tiles, segments_radix, window_log2};

/// The limits of a device that the choice of kernels depends on, as the driver reports them
/// (and, for tests, capped by a device profile).
///
/// Every NVIDIA GPU from sm_70 runs every sort. The kernels are tuned for Hopper (sm_90), whose
/// devices run them as tuned; on a device whose blocks cannot have a kernel's shared memory (a
/// T4's 64 KiB, a V100's 96, an RTX 30xx/40xx's or L4's 99, an A100's 163) a compact variant
/// of it runs instead: the bitonic windows of 8-byte keys in blocks of 2^9 keys rather than
/// 2^13 (under 66 KiB), and a tile sort of the stable sort that keeps its values in device
/// memory, in tiles of 4352 keys ([`kernels_gpu::tuning::merge_sort_compact`]). The
/// multiprocessors and the L2 cache size the prefetch distances and the one-launch sort's grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Compute capability (major, minor): (9, 0) for an H100 or H200.
    pub compute_capability: (u32, u32),
    /// Dynamic shared memory one block may opt into, in bytes (232,448 on an H100).
    pub max_shared_per_block: u32,
    /// Multiprocessors (132 on an H100 SXM).
    pub multiprocessors: u32,
    /// L2 cache, in bytes.
    pub l2_bytes: u32,
    /// 32-bit registers of a multiprocessor (65,536 on every device from sm_70).
    pub registers_per_multiprocessor: u32,
    /// 32-bit registers one block may use (65,536 on every device from sm_70).
    pub registers_per_block: u32,
    /// Resident threads per multiprocessor (1024 on sm_75, 1536 on sm_86 and sm_89, 2048 on
    /// the others).
    pub threads_per_multiprocessor: u32,
}

impl DeviceLimits {
    /// An H100 SXM's limits: a Hopper device, as the kernels are tuned for.
    pub const H100: DeviceLimits = DeviceLimits {
        compute_capability: (9, 0),
        max_shared_per_block: 227 * 1024,
        multiprocessors: 132,
        l2_bytes: 50 << 20,
        registers_per_multiprocessor: 65536,
        registers_per_block: 65536,
        threads_per_multiprocessor: 2048,
    };

    /// Reads `device`'s limits from the driver.
    ///
    /// # Errors
    /// [`crate::Error::Cuda`] if the driver cannot tell.
    pub(crate) fn read(device: &Device) -> Result<Self> {
        let get = |attribute: DeviceAttribute| -> Result<u32> {
            let value = device
                .get_attribute(attribute)
                .context(&format!("reading the device's {attribute:?}"))?;
            Ok(value.max(0) as u32)
        };
        Ok(DeviceLimits {
            compute_capability: (
                get(DeviceAttribute::ComputeCapabilityMajor)?,
                get(DeviceAttribute::ComputeCapabilityMinor)?,
            ),
            max_shared_per_block: shared_optin(device)?,
            multiprocessors: get(DeviceAttribute::MultiprocessorCount)?,
            l2_bytes: get(DeviceAttribute::L2CacheSize)?,
            registers_per_multiprocessor: get(DeviceAttribute::MaxRegistersPerMultiprocessor)?,
            registers_per_block: get(DeviceAttribute::MaxRegistersPerBlock)?,
            threads_per_multiprocessor: get(DeviceAttribute::MaxThreadsPerMultiprocessor)?,
        })
    }

    /// These limits, each no larger than `profile`'s caps.
    pub(crate) fn capped(self, profile: DeviceProfile) -> Self {
        DeviceLimits {
            max_shared_per_block: self.max_shared_per_block.min(profile.max_shared_per_block),
            multiprocessors: self.multiprocessors.min(profile.multiprocessors),
            l2_bytes: self.l2_bytes.min(profile.l2_bytes),
            ..self
        }
    }

    /// Whether a block with `bytes` of dynamic shared memory launches.
    pub(crate) fn fits(&self, bytes: u32) -> bool {
        bytes <= self.max_shared_per_block
    }

    /// Whether segments padded to 2^`row_log2` keys of `key_bytes` (with their positions where
    /// `indexed`) take the radix sort of a segment ([`kernels_gpu::tuning::segments_radix`])
    /// on this device: where the tuning says so and its block's shared memory fits.
    pub(crate) fn segments_radix(&self, row_log2: u32, key_bytes: usize, indexed: bool) -> bool {
        segments_radix(row_log2)
            && self.fits(radix_shared_bytes(row_log2, key_bytes as u32, indexed))
    }

    /// log2 of the keys per block of the bitonic window passes of `key_bytes`-byte keys
    /// ([`kernels_gpu::tuning::window_log2`]).
    pub(crate) fn window_log2(&self, key_bytes: usize) -> u32 {
        window_log2(key_bytes as u32, self.max_shared_per_block)
    }

    /// `auto`'s measured choices for this device's policy
    /// ([`kernels_gpu::tuning::auto::table`] of its compute capability): the Hopper table for
    /// sm_90, and, until another architecture is swept, for every other device too.
    pub(crate) fn auto_table(&self) -> &'static AutoTable {
        auto::table(self.compute_capability)
    }

    /// How many blocks ahead of its own a block of a streaming pass prefetches, for a kernel
    /// of which `per_multiprocessor` blocks are resident on each multiprocessor, each reading
    /// `tile_bytes`: [`prefetch_ahead_tiles`] of the blocks resident on the device, and no more
    /// than a quarter of the L2 cache holds (on an H100 or H200 the first is always the
    /// smaller).
    pub(crate) fn prefetch_ahead(&self, per_multiprocessor: u32, tile_bytes: u32) -> u64 {
        let resident = u64::from(per_multiprocessor) * u64::from(self.multiprocessors);
        let l2_tiles = u64::from(self.l2_bytes) / 4 / u64::from(tile_bytes.max(1));
        prefetch_ahead_tiles(resident).min(l2_tiles)
    }
}

/// The dynamic shared memory a block of `device` may opt into (cust's `DeviceAttribute` does
/// not name the attribute).
fn shared_optin(device: &Device) -> Result<u32> {
    use cuda::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN as OPTIN;
    let mut value = 0;
    // SAFETY: a valid device handle, a documented attribute and an out pointer.
    let status = unsafe { cuda::cuDeviceGetAttribute(&mut value, OPTIN, device.as_raw()) };
    driver(status, "cuDeviceGetAttribute", || {
        "reading the device's opt-in shared memory per block".into()
    })?;
    Ok(value.max(0) as u32)
}

/// Caps that make a sorter choose its kernels and shapes as on a smaller device: shared memory
/// per block, multiprocessors (which size the prefetch distances and the one-launch sort's
/// grid) and L2 cache. For tests only: they run the whole GPU suite on an H100 or H200 as
/// the sorter would run on each of the presets ([`crate::GpuSorter::with_profile`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceProfile {
    /// Shared memory per block, in bytes (the device's opt-in maximum).
    pub max_shared_per_block: u32,
    /// Multiprocessors.
    pub multiprocessors: u32,
    /// L2 cache, in bytes.
    pub l2_bytes: u32,
}

#[cfg(any(test, feature = "testing"))]
impl DeviceProfile {
    /// Tesla V100 (sm_70): 96 KiB, 80 multiprocessors, 6 MiB of L2.
    pub const V100: DeviceProfile = DeviceProfile {
        max_shared_per_block: 96 * 1024,
        multiprocessors: 80,
        l2_bytes: 6 << 20,
    };
    /// Tesla T4 (sm_75): 64 KiB, 40 multiprocessors, 4 MiB of L2.
    pub const T4: DeviceProfile = DeviceProfile {
        max_shared_per_block: 64 * 1024,
        multiprocessors: 40,
        l2_bytes: 4 << 20,
    };
    /// A100 (sm_80): 163 KiB, 108 multiprocessors, 40 MiB of L2.
    pub const A100: DeviceProfile = DeviceProfile {
        max_shared_per_block: 163 * 1024,
        multiprocessors: 108,
        l2_bytes: 40 << 20,
    };
    /// GeForce RTX 4090 (sm_89): 99 KiB, 128 multiprocessors, 72 MiB of L2.
    pub const RTX_4090: DeviceProfile = DeviceProfile {
        max_shared_per_block: 99 * 1024,
        multiprocessors: 128,
        l2_bytes: 72 << 20,
    };
    /// Every preset, by the name tests give it.
    pub const PRESETS: [(&'static str, DeviceProfile); 4] = [
        ("v100", DeviceProfile::V100),
        ("t4", DeviceProfile::T4),
        ("a100", DeviceProfile::A100),
        ("rtx4090", DeviceProfile::RTX_4090),
    ];

    /// The preset named `name` (`v100`, `t4`, `a100`, `rtx4090`; any case).
    pub fn named(name: &str) -> Option<DeviceProfile> {
        DeviceProfile::PRESETS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, p)| p)
    }

    /// An H100's limits capped by this profile (what the tests run under).
    #[cfg(test)]
    pub(crate) fn on_h100(self) -> DeviceLimits {
        DeviceLimits::H100.capped(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::kernels::{
        bitonic_window_compact_u64, bitonic_window_tiles_compact_u64,
        bitonic_window_wide_compact_u64, kernel, window_programs,
    };
    use kernels_gpu::tuning::{MIN_SHARED_BYTES, MULTI_THREADS};

    /// The H100 and the four presets on it.
    fn devices() -> Vec<(&'static str, DeviceLimits)> {
        let mut all = vec![("h100", DeviceLimits::H100)];
        all.extend(DeviceProfile::PRESETS.map(|(name, p)| (name, p.on_h100())));
        all
    }

    /// Every launch shape the sorter may use on a device of `limits`: the bitonic sort's, the
    /// merge sort's and the multi-GPU kernels'.
    fn launches(limits: &DeviceLimits) -> Vec<(&'static str, u32, u32)> {
        let mut all = super::super::bitonic::launches(limits);
        all.extend(super::super::merge::launches(limits.max_shared_per_block));
        all.extend(super::super::radix::launches());
        use kernels_gpu::kernels as k;
        let multi = [
            k::multi_sample_u32.name(),
            k::multi_ranks_u32.name(),
            k::multi_fill_u32.name(),
            k::multi_check_u32.name(),
            k::multi_sample_u64.name(),
            k::multi_ranks_u64.name(),
            k::multi_fill_u64.name(),
            k::multi_check_u64.name(),
        ];
        all.extend(multi.map(|name| (name, MULTI_THREADS, 2 * MULTI_THREADS * 8)));
        all
    }

    /// The register cap of kernel `name` in the kernel list, which `cargo xtask ptx` writes into
    /// its PTX (255, the architecture's limit, for a kernel with none).
    fn register_cap(name: &str) -> u32 {
        let k = kernel(name).unwrap_or_else(|| panic!("{name} is not in the kernel list"));
        k.max_registers.unwrap_or(255)
    }

    #[test]
    fn every_launch_fits_every_device() {
        for (device, limits) in devices() {
            let all = launches(&limits);
            assert!(all.len() > 40, "{device}");
            for (name, threads, shared) in all {
                let what = format!("{name} on {device}: {threads} threads, {shared} bytes");
                assert!(shared <= limits.max_shared_per_block, "{what}");
                assert!(threads <= 1024 && threads % 32 == 0, "{what}");
                let cap = register_cap(name);
                assert!(
                    cap * threads <= limits.registers_per_block,
                    "{what}: {cap} registers"
                );
            }
        }
    }

    #[test]
    fn every_launch_fits_the_smallest_device_from_sm_70() {
        let smallest = DeviceLimits {
            max_shared_per_block: MIN_SHARED_BYTES,
            multiprocessors: 8,
            ..DeviceLimits::H100
        };
        for (name, threads, shared) in launches(&smallest) {
            assert!(shared <= MIN_SHARED_BYTES, "{name}: {shared} bytes");
            assert!(register_cap(name) * threads <= 65536, "{name}");
        }
    }

    #[test]
    fn segments_take_the_radix_sort_where_its_block_fits() {
        let h100 = DeviceLimits::H100;
        assert!(h100.segments_radix(13, 8, true) && h100.segments_radix(9, 4, false));
        assert!(!h100.segments_radix(8, 8, true) && !h100.segments_radix(14, 4, false));
        // 8192 8-byte keys with positions take 96 KiB and 64 bytes.
        let v100 = DeviceLimits::H100.capped(DeviceProfile::V100);
        assert!(!v100.segments_radix(13, 8, true));
        assert!(v100.segments_radix(13, 4, true) && v100.segments_radix(12, 8, true));
        let t4 = DeviceLimits::H100.capped(DeviceProfile::T4);
        assert!(!t4.segments_radix(13, 4, true) && t4.segments_radix(13, 4, false));
        assert!(t4.segments_radix(12, 8, true));
    }

    #[test]
    fn hopper_runs_the_kernels_it_was_tuned_with() {
        let h100 = launches(&DeviceLimits::H100);
        assert!(h100.iter().all(|(name, ..)| !name.contains("compact")));
        // Every program kernel of 8-byte keys, and the 8-byte tile sort of 2^13 keys.
        for kernel in window_programs(8) {
            let name = kernel.name();
            assert!(h100.iter().any(|&(n, ..)| n == name), "{name}");
        }
        // The devices of 96 KiB and more run the 2^13-key windows of 8-byte keys too; the T4
        // runs the compact ones.
        let compact = [
            bitonic_window_tiles_compact_u64.name(),
            bitonic_window_compact_u64.name(),
            bitonic_window_wide_compact_u64.name(),
        ];
        for (device, limits) in devices() {
            let compact_windows = launches(&limits)
                .iter()
                .any(|(name, ..)| compact.contains(name));
            assert_eq!(compact_windows, device == "t4", "{device}");
        }
    }

    #[test]
    fn profiles_cap_the_device() {
        let t4 = DeviceProfile::named("T4").map(DeviceProfile::on_h100);
        let t4 = t4.expect("a preset");
        assert_eq!(
            (t4.max_shared_per_block, t4.multiprocessors, t4.l2_bytes),
            (65536, 40, 4 << 20)
        );
        assert_eq!(t4.registers_per_block, 65536);
        assert_eq!(DeviceProfile::named("h100"), None);
        // A profile larger than the device leaves it as it is.
        let huge = DeviceProfile {
            max_shared_per_block: u32::MAX,
            multiprocessors: u32::MAX,
            l2_bytes: u32::MAX,
        };
        assert_eq!(DeviceLimits::H100.capped(huge), DeviceLimits::H100);
    }

    #[test]
    fn prefetch_distances_follow_the_multiprocessors_and_the_l2() {
        // H100: a quarter of the resident blocks (the L2 bound is far above).
        let h100 = DeviceLimits::H100;
        assert_eq!(h100.prefetch_ahead(8, 16 * 1024), 264);
        assert_eq!(h100.prefetch_ahead(3, 32 * 1024), 99);
        assert_eq!(h100.prefetch_ahead(2, 64 * 1024), 66);
        // T4: 40 multiprocessors; its 4 MiB of L2 bound 64 KiB tiles to 16 ahead.
        let t4 = DeviceProfile::T4.on_h100();
        assert_eq!(t4.prefetch_ahead(3, 32 * 1024), 30);
        assert_eq!(t4.prefetch_ahead(8, 64 * 1024), 16);
    }
}
