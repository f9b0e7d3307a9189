//! Shared harness of the workspace tests and benchmarks: finding the GPU, skipping without one,
//! and failing without one when `REQUIRE_GPU=1`; and the device profile the GPU tests run
//! under (`GPUSORT_TEST_PROFILE`, [`test_profile`]).

use gpusort::gpu::DeviceProfile;
use gpusort::multi::Exchange;
use gpusort::{Error, GpuSorter, MultiGpuSorter};
use std::io::Write;

/// The device profile the GPU tests' sorters run under: `GPUSORT_TEST_PROFILE` = `v100`,
/// `t4`, `a100` or `rtx4090` makes every sorter of [`gpu_or_skip`] and [`multi_gpu`] choose
/// its kernels and shapes as on that device ([`GpuSorter::with_profile`]); unset, empty or
/// `native`, the device's own limits. Read here, by the tests, never by the library.
///
/// # Panics
/// On any other name.
pub fn test_profile() -> Option<DeviceProfile> {
    let name = std::env::var("GPUSORT_TEST_PROFILE").unwrap_or_default();
    if name.is_empty() || name.eq_ignore_ascii_case("native") {
        return None;
    }
    let profile = DeviceProfile::named(&name);
    assert!(
        profile.is_some(),
        "GPUSORT_TEST_PROFILE={name}: not native, v100, t4, a100 or rtx4090"
    );
    profile
}

/// A multi-GPU sorter on `ordinals` under the tests' profile ([`test_profile`]).
///
/// # Errors
/// As [`MultiGpuSorter::with_devices`].
pub fn multi_gpu(ordinals: &[u32], exchange: Exchange) -> gpusort::Result<MultiGpuSorter> {
    MultiGpuSorter::with_profile(ordinals, exchange, test_profile())
}

/// Whether `REQUIRE_GPU=1` is set: a missing device is then a failure, not a skip.
pub fn gpu_required() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// A sorter on the first GPU (under the tests' profile, [`test_profile`]), or `None` after
/// saying on stderr (past the test harness's capture) that `what` was skipped.
///
/// # Panics
/// When there is no GPU and `REQUIRE_GPU=1`, or when a GPU is present but unusable.
pub fn gpu_or_skip(what: &str) -> Option<GpuSorter> {
    let sorter = match test_profile() {
        Some(profile) => GpuSorter::with_profile(0, profile),
        None => GpuSorter::new(),
    };
    match sorter {
        Ok(sorter) => Some(sorter),
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            assert!(
                !gpu_required(),
                "REQUIRE_GPU=1 but {what} found no GPU: {e}"
            );
            let _ = writeln!(std::io::stderr(), "skipped {what}: {e} (no CUDA device)");
            None
        }
        Err(e) => panic!("a CUDA device is present but unusable: {e}"),
    }
}

/// Seed for randomised tests: `GPUSORT_TEST_SEED` if set, else `default`. Printed on failure by
/// the tests that use it, so a failing case can be replayed.
pub fn test_seed(default: u64) -> u64 {
    std::env::var("GPUSORT_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Lengths around every power of two up to `2^max_log2`: 2^k − 1, 2^k, 2^k + 1.
pub fn lengths_around_powers_of_two(max_log2: u32) -> Vec<usize> {
    let mut v = vec![0];
    for k in 0..=max_log2 {
        let p = 1usize << k;
        v.extend([p - 1, p, p + 1]);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The special floats every float test mixes in.
pub const SPECIAL_F32: [f32; 10] = [
    f32::NAN,
    -f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    f32::MIN_POSITIVE,
    f32::MAX,
    f32::MIN,
    -f32::MIN_POSITIVE,
];

/// Overwrites every `stride`-th key with a special float.
pub fn sprinkle_specials(keys: &mut [f32], stride: usize) {
    for (i, k) in keys.iter_mut().enumerate().step_by(stride.max(1)) {
        *k = SPECIAL_F32[(i / stride.max(1)) % SPECIAL_F32.len()];
    }
}

/// CUDA devices present (0 without a driver), after checking `REQUIRE_GPUS=N`: with fewer than
/// `N` devices that is a failure. Says on stderr that `what` was skipped when fewer than `need`
/// are present.
///
/// # Panics
/// When `REQUIRE_GPUS` asks for more devices than there are.
pub fn gpus_or_skip(what: &str, need: usize) -> usize {
    // Counting needs the driver only, not sorters (contexts, kernels, peer access) on every GPU.
    let count = cust::init(cust::CudaFlags::empty())
        .and_then(|()| cust::device::Device::num_devices())
        .unwrap_or(0) as usize;
    let required: usize = std::env::var("REQUIRE_GPUS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(
        count >= required,
        "REQUIRE_GPUS={required} but {what} found {count} CUDA device(s)"
    );
    if count < need {
        let _ = writeln!(
            std::io::stderr(),
            "skipped {what}: needs {need} CUDA devices, {count} present"
        );
    }
    count
}
