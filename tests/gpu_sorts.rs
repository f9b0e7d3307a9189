//! Every GPU sort (the bitonic network and the stable merge sort) against std's, through one
//! set of test bodies: lengths around powers of two and both tile sizes, random lengths, all key
//! types and both orders, std's named patterns, NaN/±0/±∞, 2^25 + 12345 keys, writes past the end
//! (poisoned tails), and for the merge sort stability (keys tagged with their input index), pairs
//! with `u32`/`u64` values and argsort. Runs when a CUDA device is present; skipped (said on
//! stderr) when not; fails without one under `REQUIRE_GPU=1`.

use cust::memory::{CopyDestination, DeviceSlice};
use gpusort::gpu::GpuAlgo;
use gpusort::inputs::{Dist, generate};
use gpusort::{Error, GpuSorter, Order, SortKey, SortValue};
use gpusort_suite::{gpu_or_skip, lengths_around_powers_of_two, sprinkle_specials, test_seed};
use kernels_gpu::tuning::{MAX_KEYS, MERGE_SORT_TILE, MERGE_TILE, TILE_KEYS};
use rand::{Rng, SeedableRng, rngs::StdRng};

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];
const ALGOS: [GpuAlgo; 2] = [GpuAlgo::Bitonic, GpuAlgo::Merge];

/// Keys (and values) written past the end of the slices under sort; must be untouched.
const GUARD: usize = 4096;

/// std's stable sort of `keys` with `values` carried along: the only right answer.
fn stable_reference<K: SortKey, V: SortValue>(
    keys: &[K],
    values: &[V],
    order: Order,
) -> (Vec<K::Bits>, Vec<V>) {
    let mut perm: Vec<usize> = (0..keys.len()).collect();
    perm.sort_by_key(|&i| keys[i].ordered_bits(order));
    (
        perm.iter().map(|&i| keys[i].to_bits()).collect(),
        perm.iter().map(|&i| values[i]).collect(),
    )
}

fn bits<K: SortKey>(keys: &[K]) -> Vec<K::Bits> {
    keys.iter().map(|k| k.to_bits()).collect()
}

/// First position where `got` and `want` differ, with both values, for failure messages.
fn first_difference<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("length {} instead of {}", got.len(), want.len()));
    }
    got.iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .map(|i| format!("at {i}: got {:?}, expected {:?}", got[i], want[i]))
}

/// Sorts (key, value) pairs on the device inside buffers whose tails are poisoned and checks
/// them against std's stable sort and the tails against the poison.
fn assert_pairs_sort<K: SortKey, V: SortValue>(
    gpu: &GpuSorter,
    keys_in: &[K],
    values_in: &[V],
    order: Order,
    poison: (K, V),
    what: &str,
) {
    let n = keys_in.len();
    let (want_keys, want_values) = stable_reference(keys_in, values_in, order);
    let mut keys = vec![poison.0; n + GUARD];
    keys[..n].copy_from_slice(keys_in);
    let mut values = vec![poison.1; n + GUARD];
    values[..n].copy_from_slice(values_in);
    let device_keys = gpu.upload(&keys).expect("upload keys");
    let device_values = gpu.upload(&values).expect("upload values");
    let mut k: DeviceSlice<K> = device_keys.index(..n);
    let mut v: DeviceSlice<V> = device_values.index(..n);
    gpu.sort_pairs_device(&mut k, &mut v, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    device_keys.copy_to(&mut keys[..]).expect("download");
    device_values.copy_to(&mut values[..]).expect("download");
    let context = format!("{what}: n = {n}, {} {order:?}", K::DTYPE);
    if let Some(d) = first_difference(&bits(&keys[..n]), &want_keys) {
        panic!("{context}: keys {d}");
    }
    if let Some(d) = first_difference(&values[..n], &want_values) {
        panic!("{context}: values (stability) {d}");
    }
    assert!(
        keys[n..].iter().all(|k| k.to_bits() == poison.0.to_bits()),
        "{context}: a key past the end was overwritten"
    );
    assert!(
        values[n..].iter().all(|&x| x == poison.1),
        "{context}: a value past the end was overwritten"
    );
}

/// Sorts `input` with every GPU sort: on the device inside a buffer whose tail is poisoned, and
/// through the host-slice API; checks against std's stable sort (an unstable sort of keys alone
/// must give the same bits) and the tail against the poison. The merge sort also sorts the keys
/// tagged with their input indices, which checks stability.
fn assert_sorts<K: SortKey>(gpu: &GpuSorter, input: &[K], order: Order, poison: K, what: &str) {
    let n = input.len();
    let indices: Vec<u32> = (0..n as u32).collect();
    let (want, _) = stable_reference(input, &indices, order);
    for algo in ALGOS {
        let context = format!("{what} ({}): n = {n}, {} {order:?}", algo.name(), K::DTYPE);
        let mut host = vec![poison; n + GUARD];
        host[..n].copy_from_slice(input);
        let device = gpu.upload(&host).expect("upload");
        let mut keys: DeviceSlice<K> = device.index(..n);
        match algo {
            GpuAlgo::Bitonic => gpu.sort_unstable_device(&mut keys, order),
            GpuAlgo::Merge => gpu.sort_device(&mut keys, order),
        }
        .unwrap_or_else(|e| panic!("{context}: {e}"));
        device.copy_to(&mut host[..]).expect("download");
        if let Some(d) = first_difference(&bits(&host[..n]), &want) {
            panic!("{context}: {d}");
        }
        assert!(
            host[n..].iter().all(|k| k.to_bits() == poison.to_bits()),
            "{context}: a key past the end was overwritten"
        );

        let mut via_host = input.to_vec();
        gpu.sort_with(algo, &mut via_host, order)
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        if let Some(d) = first_difference(&bits(&via_host), &want) {
            panic!("{context} (host slice API): {d}");
        }
    }
    assert_pairs_sort(gpu, input, &indices, order, (poison, 0xDEAD_BEEF), what);
}

#[test]
fn lengths_around_powers_of_two_and_the_tiles() {
    let Some(gpu) = gpu_or_skip("lengths_around_powers_of_two_and_the_tiles") else {
        return;
    };
    let mut lengths = lengths_around_powers_of_two(20);
    for t in [
        MERGE_TILE as usize,
        MERGE_SORT_TILE as usize,
        TILE_KEYS as usize,
    ] {
        lengths.extend([
            t - 1,
            t,
            t + 1,
            2 * t - 1,
            2 * t + 1,
            3 * t + 7,
            5 * t,
            17 * t - 3,
        ]);
    }
    lengths.push(1_000_003);
    let seed = test_seed(1);
    for (i, &n) in lengths.iter().enumerate() {
        // Few distinct keys, so that stability shows.
        let input: Vec<u32> = generate(n, Dist::Few, seed + i as u64);
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
    for case in 0..30 {
        let n = rng.random_range(0..=1usize << 20);
        let order = ORDERS[case % 2];
        let dist = [Dist::Uniform, Dist::Blog, Dist::Few][case % 3];
        let input: Vec<u32> = generate(n, dist, seed ^ case as u64);
        let what = format!("seed {seed} case {case} {dist:?}");
        assert_sorts(&gpu, &input, order, 0x5A5A_5A5A, &what);
    }
}

fn every_pattern<K: SortKey>(gpu: &GpuSorter, poison: K) {
    let (m, s, t) = (
        MERGE_TILE as usize,
        MERGE_SORT_TILE as usize,
        TILE_KEYS as usize,
    );
    for dist in Dist::ALL {
        for n in [1000, m + 1, s + 1, t + 1, 5 * t - 3, 300_007] {
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
    }
    let input: Vec<f32> = generate((1 << 25) + 12345, Dist::Blog, 25);
    assert_sorts(&gpu, &input, Order::Descending, 0.5, "large f32 blog");
    let input: Vec<f64> = generate((1 << 22) + 77, Dist::Uniform, 64);
    assert_sorts(&gpu, &input, Order::Descending, 0.5, "large f64");
}

#[test]
fn pairs_with_u32_and_u64_values() {
    let Some(gpu) = gpu_or_skip("pairs_with_u32_and_u64_values") else {
        return;
    };
    let seed = test_seed(13);
    for n in [1, 2, 3000, MERGE_SORT_TILE as usize * 9 + 5, 200_001] {
        let values64: Vec<u64> = (0..n as u64).map(|i| i << 33 | 0x1_0000_0000 | i).collect();
        let values32: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        for order in ORDERS {
            let keys: Vec<i32> = generate(n, Dist::Blog, seed + n as u64);
            assert_pairs_sort(&gpu, &keys, &values64, order, (7, u64::MAX), "i32/u64");
            let keys: Vec<f64> = generate(n, Dist::Few, seed + n as u64);
            assert_pairs_sort(&gpu, &keys, &values32, order, (0.5, 77), "f64/u32");
            assert_pairs_sort(&gpu, &keys, &values64, order, (0.5, 77), "f64/u64");
            let keys: Vec<u64> = generate(n, Dist::Uniform, seed + n as u64);
            assert_pairs_sort(&gpu, &keys, &values32, order, (9, 1), "u64/u32");
        }
    }
    // The host-slice API.
    let mut keys: Vec<f32> = generate(10_000, Dist::Few, seed);
    let mut values: Vec<u64> = (0..10_000).collect();
    let (want_keys, want_values) = stable_reference(&keys, &values, Order::Descending);
    gpu.sort_pairs(&mut keys, &mut values, Order::Descending)
        .expect("sort_pairs");
    assert_eq!(bits(&keys), want_keys);
    assert_eq!(values, want_values);
}

#[test]
fn argsort_matches_the_stable_sort_of_indices() {
    let Some(gpu) = gpu_or_skip("argsort_matches_the_stable_sort_of_indices") else {
        return;
    };
    fn check<K: SortKey>(gpu: &GpuSorter, keys: &[K], order: Order) {
        let mut want: Vec<u64> = (0..keys.len() as u64).collect();
        want.sort_by_key(|&i| keys[i as usize].ordered_bits(order));
        let got = gpu.argsort(keys, order).expect("argsort");
        if let Some(d) = first_difference(&got, &want) {
            panic!("argsort n = {}, {} {order:?}: {d}", keys.len(), K::DTYPE);
        }
        let got32 = gpu.argsort_u32(keys, order).expect("argsort_u32");
        let got32: Vec<u64> = got32.into_iter().map(u64::from).collect();
        assert_eq!(got32, want, "argsort_u32 n = {}", keys.len());
    }
    for n in [0, 1, 2, 100, MERGE_TILE as usize + 1, 123_457] {
        for order in ORDERS {
            check::<u32>(&gpu, &generate(n, Dist::Few, 1), order);
            check::<i32>(&gpu, &generate(n, Dist::Blog, 2), order);
            check::<f32>(&gpu, &generate(n, Dist::Uniform, 3), order);
            check::<u64>(&gpu, &generate(n, Dist::Saw, 4), order);
            check::<i64>(&gpu, &generate(n, Dist::OrganPipe, 5), order);
            check::<f64>(&gpu, &generate(n, Dist::Few, 6), order);
        }
    }
}

#[test]
fn keys_beyond_the_memory_budget_are_sorted_in_chunks_and_merged() {
    let Some(mut gpu) =
        gpu_or_skip("keys_beyond_the_memory_budget_are_sorted_in_chunks_and_merged")
    else {
        return;
    };
    // 1 MiB: chunks of about 245,000 u32 keys for the bitonic sort, half that for the merge sort.
    gpu.set_memory_budget(Some(1 << 20));
    fn check<K: SortKey>(gpu: &GpuSorter, input: &[K]) {
        for order in ORDERS {
            let indices: Vec<u32> = (0..input.len() as u32).collect();
            let (want, _) = stable_reference(input, &indices, order);
            for algo in ALGOS {
                let mut keys = input.to_vec();
                gpu.sort_with(algo, &mut keys, order).expect("chunked sort");
                if let Some(d) = first_difference(&bits(&keys), &want) {
                    panic!(
                        "{} chunked, n = {}, {} {order:?}: {d}",
                        algo.name(),
                        input.len(),
                        K::DTYPE
                    );
                }
            }
        }
    }
    for n in [300_001, 1_000_003] {
        check::<u32>(&gpu, &generate(n, Dist::Few, n as u64));
        check::<f64>(&gpu, &generate(n, Dist::Uniform, n as u64));
    }
}

#[test]
fn mismatched_lengths_are_a_typed_error() {
    let Some(gpu) = gpu_or_skip("mismatched_lengths_are_a_typed_error") else {
        return;
    };
    let mut keys = [3u32, 1, 2];
    let mut values = [0u64; 2];
    match gpu.sort_pairs(&mut keys, &mut values, Order::Ascending) {
        Err(Error::LengthMismatch { keys: 3, values: 2 }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert_eq!(keys, [3, 1, 2], "nothing sorted on error");
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
    for result in [
        gpu.sort_unstable_device(&mut fake, Order::Ascending),
        gpu.sort_device(&mut fake, Order::Ascending),
    ] {
        match result {
            Err(Error::TooLong { len, max }) => assert_eq!((len, max), (MAX_KEYS + 1, MAX_KEYS)),
            other => panic!("expected TooLong, got {other:?}"),
        }
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
