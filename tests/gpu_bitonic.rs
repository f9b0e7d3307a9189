//! The bitonic sort on the GPU against std's sort: lengths, key types, orders, patterns, and
//! writes past the end. Runs when a CUDA device is present; skipped (said on stderr) when not;
//! fails without one under `REQUIRE_GPU=1`.

use cust::memory::{CopyDestination, DeviceSlice};
use gpusort::inputs::{Dist, generate};
use gpusort::verify::check;
use gpusort::{Error, GpuSorter, Order, SortKey};
use gpusort_suite::{gpu_or_skip, lengths_around_powers_of_two, sprinkle_specials, test_seed};
use kernels_gpu::tuning::{MAX_KEYS, TILE_KEYS};
use rand::{Rng, SeedableRng, rngs::StdRng};

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];

/// Keys written past the end of the slice under sort; must be untouched afterwards.
const GUARD: usize = 4096;

/// Sorts `input` on the device inside a buffer whose tail past the keys is poisoned, checks the
/// result against std's sort and the tail against the poison; then sorts a host copy through the
/// host-slice API and checks that too.
fn assert_sorts<K: SortKey>(gpu: &GpuSorter, input: &[K], order: Order, poison: K, what: &str) {
    let n = input.len();
    let mut host = vec![poison; n + GUARD];
    host[..n].copy_from_slice(input);
    let device = gpu.upload(&host).expect("upload");
    let mut keys: DeviceSlice<K> = device.index(..n);
    gpu.sort_unstable_device(&mut keys, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    device.copy_to(&mut host[..]).expect("download");
    if let Err(m) = check(&host[..n], input, order) {
        panic!("{what}: n = {n}, {} {order:?}: {m}", K::DTYPE);
    }
    let clobbered = host[n..]
        .iter()
        .position(|k| k.to_bits() != poison.to_bits());
    assert_eq!(
        clobbered, None,
        "{what}: n = {n}: a key past the end was overwritten"
    );

    let mut via_host = input.to_vec();
    gpu.sort_unstable(&mut via_host, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Err(m) = check(&via_host, input, order) {
        panic!(
            "{what} (host slice API): n = {n}, {} {order:?}: {m}",
            K::DTYPE
        );
    }
}

#[test]
fn lengths_around_powers_of_two_and_the_tile() {
    let Some(gpu) = gpu_or_skip("lengths_around_powers_of_two_and_the_tile") else {
        return;
    };
    let t = TILE_KEYS as usize;
    let mut lengths = lengths_around_powers_of_two(20);
    lengths.extend([
        t - 1,
        t,
        t + 1,
        2 * t - 1,
        2 * t + 1,
        3 * t + 7,
        17 * t - 3,
        1_000_003,
    ]);
    let seed = test_seed(1);
    for (i, &n) in lengths.iter().enumerate() {
        let input: Vec<u32> = generate(n, Dist::Uniform, seed + i as u64);
        for order in ORDERS {
            assert_sorts(&gpu, &input, order, 0xDEAD_BEEF, &format!("seed {seed}"));
        }
    }
}

#[test]
fn random_lengths_up_to_2_pow_20() {
    let Some(gpu) = gpu_or_skip("random_lengths_up_to_2_pow_20") else {
        return;
    };
    let seed = test_seed(2);
    let mut rng = StdRng::seed_from_u64(seed);
    for case in 0..40 {
        let n = rng.random_range(0..=1usize << 20);
        let order = ORDERS[case % 2];
        let input: Vec<u32> = generate(n, Dist::Uniform, seed ^ case as u64);
        assert_sorts(
            &gpu,
            &input,
            order,
            0x5A5A_5A5A,
            &format!("seed {seed} case {case}"),
        );
    }
}

fn every_pattern<K: SortKey>(gpu: &GpuSorter, poison: K) {
    let t = TILE_KEYS as usize;
    for dist in Dist::ALL {
        for n in [1000, t + 1, 5 * t - 3, 300_007] {
            let input: Vec<K> = generate(n, dist, 7 + n as u64);
            for order in ORDERS {
                assert_sorts(gpu, &input, order, poison, &format!("{dist:?}"));
            }
        }
    }
}

#[test]
fn key_types_and_patterns() {
    let Some(gpu) = gpu_or_skip("key_types_and_patterns") else {
        return;
    };
    every_pattern::<u32>(&gpu, 0x0BAD_F00D);
    every_pattern::<i32>(&gpu, -0x0BAD_F00D);
    every_pattern::<f32>(&gpu, f32::from_bits(0x7FC0_0BAD));
}

#[test]
fn key_types_and_patterns_64_bit() {
    let Some(gpu) = gpu_or_skip("key_types_and_patterns_64_bit") else {
        return;
    };
    every_pattern::<u64>(&gpu, 0x0BAD_F00D_DEAD_BEEF);
    every_pattern::<i64>(&gpu, -0x0BAD_F00D_DEAD_BEEF);
    every_pattern::<f64>(&gpu, f64::from_bits(0x7FF8_0000_0BAD_F00D));
    let input: Vec<u64> = generate((1 << 22) + 77, Dist::Uniform, 64);
    assert_sorts(&gpu, &input, Order::Descending, 0xABCD, "large u64");
}

#[test]
fn floats_with_nan_signed_zeros_and_infinities() {
    let Some(gpu) = gpu_or_skip("floats_with_nan_signed_zeros_and_infinities") else {
        return;
    };
    for (n, stride) in [
        (10, 1),
        (4097, 3),
        (TILE_KEYS as usize * 3 + 11, 17),
        (1 << 20, 101),
    ] {
        let mut input: Vec<f32> = generate(n, Dist::Uniform, n as u64);
        sprinkle_specials(&mut input, stride);
        for order in ORDERS {
            assert_sorts(&gpu, &input, order, 1.25, "specials");
            let wide: Vec<f64> = input.iter().map(|&x| f64::from(x)).collect();
            assert_sorts(&gpu, &wide, order, 1.25, "specials f64");
        }
    }
}

#[test]
fn large_arrays() {
    let Some(gpu) = gpu_or_skip("large_arrays") else {
        return;
    };
    for n in [1 << 25, (1 << 25) + 12345] {
        let input: Vec<u32> = generate(n, Dist::Uniform, n as u64);
        assert_sorts(&gpu, &input, Order::Ascending, 0xFFFF_0000, "large u32");
        let input: Vec<f32> = generate(n, Dist::Uniform, n as u64);
        assert_sorts(&gpu, &input, Order::Descending, 0.5, "large f32");
    }
    let input: Vec<i32> = generate((1 << 24) + 3, Dist::Blog, 3);
    assert_sorts(&gpu, &input, Order::Descending, 77, "large i32 blog");
}

#[test]
fn too_many_keys_is_a_typed_error() {
    let Some(gpu) = gpu_or_skip("too_many_keys_is_a_typed_error") else {
        return;
    };
    let buffer = gpu.upload(&[1u32, 2, 3]).expect("upload");
    // SAFETY: never dereferenced: the length check fails before any launch.
    let mut fake =
        unsafe { DeviceSlice::from_raw_parts_mut(buffer.as_device_ptr(), MAX_KEYS as usize + 1) };
    match gpu.sort_unstable_device(&mut fake, Order::Ascending) {
        Err(Error::TooLong { len, max }) => assert_eq!((len, max), (MAX_KEYS + 1, MAX_KEYS)),
        other => panic!("expected TooLong, got {other:?}"),
    }
}

#[test]
fn too_large_allocation_names_bytes_needed_and_free() {
    let Some(gpu) = gpu_or_skip("too_large_allocation_names_bytes_needed_and_free") else {
        return;
    };
    let (free, _) = gpu.memory_info().expect("memory info");
    let too_many = (free / 4 + (1 << 20)) as usize;
    match gpu.alloc::<u32>(too_many, "the keys") {
        Err(
            e @ Error::OutOfDeviceMemory {
                requested, free: f, ..
            },
        ) => {
            assert!(requested > f, "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains(&requested.to_string()) && msg.contains("free"),
                "{msg}"
            );
        }
        Err(e) => panic!("expected OutOfDeviceMemory, got {e}"),
        Ok(_) => panic!("allocating {too_many} u32 with {free} bytes free succeeded"),
    }
}
