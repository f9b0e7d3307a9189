//! Every GPU sort (the bitonic network, the stable merge sort and the radix sort) against std's, through one
//! set of test bodies: lengths around powers of two and both tile sizes, every block size of
//! the tiny sort and every length class of the one-launch small sort (1 to 16 blocks, both key
//! widths), random lengths, all key
//! types and both orders, std's named patterns, NaN/±0/±∞, 2^25 + 12345 keys, writes past the end
//! (poisoned tails), and for the stable sorts (merge and radix) stability (keys tagged with their
//! input index), pairs with `u32`/`u64`/`u128` values, payloads of 1 to 16 bytes
//! (`sort_by_key` with a named sort) and argsort, also
//! through the chunked path of host slices larger than a memory budget, and host slices of
//! several overlap chunks (the copies overlapping the sort), ragged last chunks included. Runs when a CUDA device
//! is present; skipped (said on stderr) when not; fails without one under `REQUIRE_GPU=1`.

use cust::memory::{CopyDestination, DeviceSlice};
use gpusort::cpu::merge_rounds;
use gpusort::gpu::{GpuAlgo, Phase, Progress, Sorting};
use gpusort::{Error, GpuSorter, Options, Order, Queue, SortKey, SortValue, Work};
use gpusort_cli::inputs::{Dist, generate};
use gpusort_suite::{gpu_or_skip, lengths_around_powers_of_two, sprinkle_specials, test_seed};
use kernels_gpu::tuning::{
    MAX_KEYS, MERGE_SORT_TILE, MERGE_TILE, OVERLAP_CHUNK, TILE_KEYS, auto, merge_overlap_chunk,
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::sync::{Arc, Mutex};

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];
const ALGOS: [GpuAlgo; 3] = [GpuAlgo::Bitonic, GpuAlgo::Merge, GpuAlgo::Radix];
/// The sorts that carry values (pairs, payloads, argsort).
const STABLE: [GpuAlgo; 2] = [GpuAlgo::Merge, GpuAlgo::Radix];

/// Keys (and values) written past the end of the slices under sort; must be untouched.
const GUARD: usize = 4096;

/// The options that name `algo`.
fn with(algo: GpuAlgo, order: Order) -> Options {
    Options {
        algo: Some(algo),
        order,
    }
}

/// Queues `work` on a queue on the sorter's own stream and waits for it.
fn queued(
    gpu: &GpuSorter,
    work: impl FnOnce(&mut Queue<'_>) -> gpusort::Result<()>,
) -> gpusort::Result<()> {
    let mut queue = gpu.queue()?;
    work(&mut queue)?;
    queue.synchronize()
}

/// std's stable sort of `keys` with `values` carried along: the only right answer.
fn stable_reference<K: SortKey, V: Copy>(
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

/// Sorts (key, value) pairs on the device with every stable sort, inside buffers whose tails
/// are poisoned, and checks them against std's stable sort and the tails against the poison.
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
    for algo in STABLE {
        let mut keys = vec![poison.0; n + GUARD];
        keys[..n].copy_from_slice(keys_in);
        let mut values = vec![poison.1; n + GUARD];
        values[..n].copy_from_slice(values_in);
        let device_keys = gpu.upload(&keys).expect("upload keys");
        let device_values = gpu.upload(&values).expect("upload values");
        let mut k: DeviceSlice<K> = device_keys.index(..n);
        let mut v: DeviceSlice<V> = device_values.index(..n);
        let context = format!("{what} ({}): n = {n}, {} {order:?}", algo, K::DTYPE);
        queued(gpu, |q| q.sort_by_key(&mut k, &mut v, with(algo, order)))
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        device_keys.copy_to(&mut keys[..]).expect("download");
        device_values.copy_to(&mut values[..]).expect("download");
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
}

/// How [`assert_sorts`] sorts keys on the device: [`Queue::sort_unstable`] with a named sort,
/// or [`Queue::sort_unstable`] and [`Queue::sort`] with `auto`'s choice.
#[derive(Clone, Copy)]
enum DeviceCall {
    With(GpuAlgo),
    Unstable,
    Stable,
}

/// Sorts `input` with every GPU sort: on the device inside a buffer whose tail is poisoned, and
/// through the host-slice API; checks against std's stable sort (an unstable sort of keys alone
/// must give the same bits) and the tail against the poison. The default device calls
/// (`auto`'s choice, unstable and stable) too. The stable sorts also sort the keys tagged with
/// their input indices, which checks stability.
fn assert_sorts<K: SortKey>(gpu: &GpuSorter, input: &[K], order: Order, poison: K, what: &str) {
    let n = input.len();
    let indices: Vec<u32> = (0..n as u32).collect();
    let (want, _) = stable_reference(input, &indices, order);
    let calls = ALGOS.map(DeviceCall::With);
    for call in calls
        .into_iter()
        .chain([DeviceCall::Unstable, DeviceCall::Stable])
    {
        let name = match call {
            DeviceCall::With(algo) => algo.to_string(),
            DeviceCall::Unstable => "Queue::sort_unstable".into(),
            DeviceCall::Stable => "Queue::sort".into(),
        };
        let context = format!("{what} ({name}): n = {n}, {} {order:?}", K::DTYPE);
        let mut host = vec![poison; n + GUARD];
        host[..n].copy_from_slice(input);
        let device = gpu.upload(&host).expect("upload");
        let mut keys: DeviceSlice<K> = device.index(..n);
        queued(gpu, |q| match call {
            DeviceCall::With(algo) => q.sort_unstable(&mut keys, with(algo, order)),
            DeviceCall::Unstable => q.sort_unstable(&mut keys, order),
            DeviceCall::Stable => q.sort(&mut keys, order),
        })
        .unwrap_or_else(|e| panic!("{context}: {e}"));
        device.copy_to(&mut host[..]).expect("download");
        if let Some(d) = first_difference(&bits(&host[..n]), &want) {
            panic!("{context}: {d}");
        }
        assert!(
            host[n..].iter().all(|k| k.to_bits() == poison.to_bits()),
            "{context}: a key past the end was overwritten"
        );

        let DeviceCall::With(algo) = call else {
            continue;
        };
        let mut via_host = input.to_vec();
        gpu.sort_unstable(&mut via_host, with(algo, order))
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

/// Lengths of the one-block tiny sort (up to 4096 keys: around each of its block sizes, one to
/// 32 warps) and of the one-launch small sort (every block count up to 16, 2^16 keys), plus
/// the first length past it.
fn small_sort_lengths() -> Vec<usize> {
    let mut lengths = vec![2, 3, 31, 1000];
    for log2 in 7..=12 {
        let p = 1usize << log2;
        lengths.extend([p - 1, p, p + 1]);
    }
    for log2 in 13..=16 {
        let p = 1usize << log2;
        lengths.extend([p / 2 + 1, p - 1, p]);
    }
    lengths.extend([TILE_KEYS as usize + 1, 12345, 40957, 1 << 16 | 1]);
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

#[test]
fn small_sort_lengths_all_key_types() {
    let Some(gpu) = gpu_or_skip("small_sort_lengths_all_key_types") else {
        return;
    };
    let seed = test_seed(17);
    for (i, n) in small_sort_lengths().into_iter().enumerate() {
        let dist = [Dist::Uniform, Dist::Few, Dist::Blog][i % 3];
        let s = seed + n as u64;
        for order in ORDERS {
            let what = format!("small sort, seed {seed}, {dist:?}");
            assert_sorts::<u32>(&gpu, &generate(n, dist, s), order, 0xDEAD_BEEF, &what);
            assert_sorts::<i32>(&gpu, &generate(n, dist, s), order, -7, &what);
            assert_sorts::<f32>(&gpu, &generate(n, dist, s), order, 0.25, &what);
            assert_sorts::<u64>(&gpu, &generate(n, dist, s), order, u64::MAX - 1, &what);
            assert_sorts::<i64>(&gpu, &generate(n, dist, s), order, i64::MIN, &what);
            assert_sorts::<f64>(&gpu, &generate(n, dist, s), order, -0.5, &what);
        }
    }
}

#[test]
fn small_sorts_back_to_back_on_one_stream() {
    // Launches of 1, 2, 4, 8 and 16 blocks queued without waiting in between share the
    // sorter's scratch and grid-barrier counter; each must see only its own keys.
    let Some(gpu) = gpu_or_skip("small_sorts_back_to_back_on_one_stream") else {
        return;
    };
    let lengths = [
        1 << 16,
        5000,
        (1 << 14) + 3,
        1 << 13 | 1,
        1 << 16,
        777,
        (1 << 15) - 5,
    ];
    let inputs: Vec<Vec<u64>> = lengths
        .iter()
        .map(|&n| generate(n, Dist::Uniform, n as u64))
        .collect();
    let mut buffers: Vec<_> = inputs
        .iter()
        .map(|v| gpu.upload(v).expect("upload"))
        .collect();
    for _round in 0..3 {
        for (buffer, input) in buffers.iter_mut().zip(&inputs) {
            buffer.copy_from(&input[..]).expect("restore");
        }
        let mut queue = gpu.queue().unwrap();
        for buffer in buffers.iter_mut() {
            queue
                .sort_unstable(buffer, Order::Descending)
                .expect("enqueue");
        }
        queue.synchronize().expect("small sorts");
        for (buffer, input) in buffers.iter().zip(&inputs) {
            let mut want = input.clone();
            want.sort_unstable_by(|a, b| b.cmp(a));
            let mut got = vec![0u64; input.len()];
            buffer.copy_to(&mut got[..]).expect("download");
            if let Some(d) = first_difference(&got, &want) {
                panic!("n = {}: {d}", input.len());
            }
        }
    }
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

/// Every host-slice API that goes through the pipelined round trip on `input`: both sorts of
/// the keys, pairs with their input indices (stability across chunks), argsort, and a 3-byte
/// payload (spread into 4-byte slots on the way up, packed on the way down), against std's
/// stable sort.
fn assert_host_slice_sorts<K: SortKey>(gpu: &GpuSorter, input: &[K], order: Order, what: &str) {
    let n = input.len();
    let indices: Vec<u32> = (0..n as u32).collect();
    let (want, want_indices) = stable_reference(input, &indices, order);
    let context = format!(
        "{what}: n = {n} ({} chunks), {} {order:?}",
        n.div_ceil(OVERLAP_CHUNK as usize),
        K::DTYPE
    );
    for algo in ALGOS {
        let mut keys = input.to_vec();
        gpu.sort_unstable(&mut keys, with(algo, order))
            .unwrap_or_else(|e| panic!("{context}, {}: {e}", algo));
        if let Some(d) = first_difference(&bits(&keys), &want) {
            panic!("{context}, {}: {d}", algo);
        }
    }
    let (mut keys, mut values) = (input.to_vec(), indices.clone());
    gpu.sort_by_key(&mut keys, &mut values, order)
        .unwrap_or_else(|e| panic!("{context}, pairs: {e}"));
    if let Some(d) = first_difference(&bits(&keys), &want) {
        panic!("{context}, pairs: keys {d}");
    }
    if let Some(d) = first_difference(&values, &want_indices) {
        panic!("{context}, pairs: values (stability) {d}");
    }
    let got: Vec<u32> = gpu.argsort(input, order).expect("argsort");
    if let Some(d) = first_difference(&got, &want_indices) {
        panic!("{context}, argsort: {d}");
    }
    let three = |i: u32| -> [u8; 3] {
        let b = i.to_le_bytes();
        [b[0], b[1], b[2] ^ b[3]]
    };
    let mut keys = input.to_vec();
    let mut payload: Vec<[u8; 3]> = indices.iter().map(|&i| three(i)).collect();
    gpu.sort_by_key(&mut keys, &mut payload, order)
        .unwrap_or_else(|e| panic!("{context}, sort_by_key: {e}"));
    let want_payload: Vec<[u8; 3]> = want_indices.iter().map(|&i| three(i)).collect();
    if let Some(d) = first_difference(&bits(&keys), &want) {
        panic!("{context}, sort_by_key: keys {d}");
    }
    if let Some(d) = first_difference(&payload, &want_payload) {
        panic!("{context}, sort_by_key: payload {d}");
    }
}

#[test]
fn host_slices_across_overlap_chunks() {
    let Some(gpu) = gpu_or_skip("host_slices_across_overlap_chunks") else {
        return;
    };
    let c = OVERLAP_CHUNK as usize;
    let seed = test_seed(31);
    // Just under one chunk (sorted whole after the upload), a last chunk of one key, whole
    // chunks only, and a ragged last chunk; the merge sort's chunks are a multiple of its tile.
    let m = merge_overlap_chunk(u64::from(MERGE_SORT_TILE)) as usize;
    let lengths = [c - 1, c + 1, 2 * c, 3 * c + 12345, m + 1, 2 * m];
    for (i, &n) in lengths.iter().enumerate() {
        let s = seed + i as u64;
        let what = format!("seed {seed}");
        let order = ORDERS[i % 2];
        assert_host_slice_sorts::<u32>(&gpu, &generate(n, Dist::Few, s), order, &what);
        assert_host_slice_sorts::<f32>(&gpu, &generate(n, Dist::Uniform, s), order, &what);
        assert_host_slice_sorts::<i64>(&gpu, &generate(n, Dist::Blog, s), order, &what);
        assert_host_slice_sorts::<f64>(&gpu, &generate(n, Dist::Few, s), order, &what);
    }
    // Both orders and the other key types on the ragged length.
    let n = 3 * c + 12345;
    let mut specials: Vec<f32> = generate(n, Dist::Uniform, seed);
    sprinkle_specials(&mut specials, 1001);
    assert_host_slice_sorts::<f32>(&gpu, &specials, Order::Ascending, "specials");
    assert_host_slice_sorts::<i32>(
        &gpu,
        &generate(n, Dist::Saw, seed),
        Order::Descending,
        "saw",
    );
    assert_host_slice_sorts::<u64>(
        &gpu,
        &generate(n, Dist::Uniform, seed),
        Order::Descending,
        "u64",
    );
}

/// Slices in page-locked memory go straight to and from the device (no staging copies):
/// detected as such, whole buffers and parts of them, keys alone and pairs, across overlap
/// chunks; pageable memory is not taken for pinned.
#[test]
fn pinned_host_buffers_sort_in_place() {
    let Some(gpu) = gpu_or_skip("pinned_host_buffers_sort_in_place") else {
        return;
    };
    let seed = test_seed(37);
    let c = OVERLAP_CHUNK as usize;
    let pageable = vec![0u32; 1 << 20];
    assert!(!gpu.is_page_locked(&pageable), "a Vec is pageable");
    for (i, n) in [1usize, 1000, c - 1, 2 * c + 777].into_iter().enumerate() {
        let order = ORDERS[i % 2];
        let input: Vec<u32> = generate(n, Dist::Uniform, seed + i as u64);
        let indices: Vec<u32> = (0..n as u32).collect();
        let (want, want_indices) = stable_reference(&input, &indices, order);
        for algo in ALGOS {
            let mut keys = gpu.pinned_from_slice(&input).expect("pinned keys");
            assert!(
                gpu.is_page_locked(&keys[..]),
                "n = {n}: not detected as pinned"
            );
            gpu.sort_unstable(&mut keys, with(algo, order))
                .unwrap_or_else(|e| panic!("n = {n}, {}: {e}", algo));
            if let Some(d) = first_difference(&bits(&keys), &want) {
                panic!("pinned n = {n}, {} {order:?}: {d}", algo);
            }
        }
        let mut keys = gpu.pinned_from_slice(&input).expect("pinned keys");
        let mut values = gpu.pinned_from_slice(&indices).expect("pinned values");
        gpu.sort_by_key(&mut keys, &mut values, order)
            .unwrap_or_else(|e| panic!("pinned pairs n = {n}: {e}"));
        if let Some(d) = first_difference(&bits(&keys), &want) {
            panic!("pinned pairs n = {n}: keys {d}");
        }
        if let Some(d) = first_difference(&values[..], &want_indices[..]) {
            panic!("pinned pairs n = {n}: values {d}");
        }
    }
    // The middle of a pinned buffer: the rest of it stays as it was.
    let n = c + 4321;
    let input: Vec<f64> = generate(n + 2 * GUARD, Dist::Few, seed);
    let mut buffer = gpu.pinned_from_slice(&input).expect("pinned buffer");
    let middle = &mut buffer[GUARD..GUARD + n];
    assert!(gpu.is_page_locked(middle));
    gpu.sort_unstable(middle, Order::Descending)
        .expect("sorting part of a pinned buffer");
    let part = &input[GUARD..GUARD + n];
    let (want, _) = stable_reference(part, &vec![(); n], Order::Descending);
    assert_eq!(bits(&buffer[GUARD..GUARD + n]), want);
    assert_eq!(
        bits(&buffer[..GUARD]),
        bits(&input[..GUARD]),
        "written before the part"
    );
    assert_eq!(
        bits(&buffer[GUARD + n..]),
        bits(&input[GUARD + n..]),
        "written after it"
    );
}

#[test]
fn pairs_with_u32_u64_and_u128_values() {
    let Some(gpu) = gpu_or_skip("pairs_with_u32_u64_and_u128_values") else {
        return;
    };
    let seed = test_seed(13);
    // Around the merge sort's tiles and the radix sort's tiles of every key and value width.
    let mut radix_tiles: Vec<usize> = [(4, 4), (4, 8), (4, 16), (8, 4), (8, 8), (8, 16)]
        .into_iter()
        .map(|(kb, vb)| kernels_gpu::radix::tile_keys(kb, vb) as usize)
        .flat_map(|tile| [tile - 1, tile + 1, 3 * tile + 1])
        .collect();
    radix_tiles.sort_unstable();
    radix_tiles.dedup();
    for n in [1, 2, 3000, MERGE_SORT_TILE as usize * 9 + 5, 200_001]
        .into_iter()
        .chain(radix_tiles)
    {
        let values64: Vec<u64> = (0..n as u64).map(|i| i << 33 | 0x1_0000_0000 | i).collect();
        let values32: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        // Every 32-bit word of a value differs, so a value torn apart or misaligned shows.
        let values128: Vec<u128> = (0..n as u128)
            .map(|i| (i + 1) << 96 | (i ^ 0xFFFF) << 64 | (i * 3) << 32 | i)
            .collect();
        for order in ORDERS {
            let keys: Vec<u32> = generate(n, Dist::Few, seed + n as u64);
            assert_pairs_sort(&gpu, &keys, &values128, order, (5, u128::MAX), "u32/u128");
            let keys: Vec<f64> = generate(n, Dist::Blog, seed + n as u64);
            assert_pairs_sort(&gpu, &keys, &values128, order, (0.5, 7), "f64/u128");
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
    gpu.sort_by_key(&mut keys, &mut values, Order::Descending)
        .expect("sort_by_key");
    assert_eq!(bits(&keys), want_keys);
    assert_eq!(values, want_values);
}

#[test]
fn the_bitonic_sort_refuses_values_with_a_typed_error() {
    let Some(gpu) = gpu_or_skip("the_bitonic_sort_refuses_values_with_a_typed_error") else {
        return;
    };
    let bitonic = with(GpuAlgo::Bitonic, Order::Ascending);
    let (mut keys, mut values) = (vec![2u32, 1], vec![0u64, 1]);
    let err = gpu
        .sort_by_key(&mut keys, &mut values, bitonic)
        .expect_err("the bitonic sort carries no values");
    assert!(matches!(err, Error::NotStable { algo: "bitonic" }), "{err}");
    assert!(matches!(
        gpu.argsort::<_, u64>(&keys, bitonic),
        Err(Error::NotStable { .. })
    ));
    assert!(matches!(
        gpu.argsort::<_, u32>(&keys, bitonic),
        Err(Error::NotStable { .. })
    ));
    // A stable sort of keys alone refuses it too; the unstable one runs it.
    assert!(matches!(
        gpu.sort(&mut keys, bitonic),
        Err(Error::NotStable { algo: "bitonic" })
    ));
    assert_eq!(
        (&keys, &values),
        (&vec![2, 1], &vec![0, 1]),
        "left as they were"
    );

    // Keys on the device: the stable calls of a queue and their scratch sizes.
    let (mut device_keys, mut device_values) = (
        gpu.upload(&keys).expect("upload"),
        gpu.upload(&values).expect("upload"),
    );
    let mut queue = gpu.queue().unwrap();
    assert!(matches!(
        queue.sort(&mut device_keys, bitonic),
        Err(Error::NotStable { algo: "bitonic" })
    ));
    assert!(matches!(
        queue.sort_by_key(&mut device_keys, &mut device_values, bitonic),
        Err(Error::NotStable { algo: "bitonic" })
    ));
    queue.synchronize().expect("nothing queued");
    assert_eq!(device_keys.as_host_vec().expect("download"), [2, 1]);
    assert_eq!(device_values.as_host_vec().expect("download"), [0, 1]);
    let pairs = Work::SortByKey {
        len: 2,
        value_bytes: 8,
    };
    for work in [Work::Sort(2), pairs] {
        assert!(
            matches!(
                gpu.scratch_bytes::<u32>(work, bitonic),
                Err(Error::NotStable { .. })
            ),
            "{work:?}"
        );
    }
    let unstable = gpu.scratch_bytes::<u32>(Work::SortUnstable(2), bitonic);
    assert_eq!(
        unstable.expect("the bitonic sort"),
        0,
        "it needs no scratch"
    );
    queued(&gpu, |q| q.sort_unstable(&mut device_keys, bitonic)).expect("bitonic sort");
    assert_eq!(device_keys.as_host_vec().expect("download"), [1, 2]);
}

#[test]
fn argsort_matches_the_stable_sort_of_indices() {
    let Some(gpu) = gpu_or_skip("argsort_matches_the_stable_sort_of_indices") else {
        return;
    };
    fn check<K: SortKey>(gpu: &GpuSorter, keys: &[K], order: Order) {
        let mut want: Vec<u64> = (0..keys.len() as u64).collect();
        want.sort_by_key(|&i| keys[i as usize].ordered_bits(order));
        let got: Vec<u64> = gpu.argsort(keys, order).expect("argsort");
        if let Some(d) = first_difference(&got, &want) {
            panic!("argsort n = {}, {} {order:?}: {d}", keys.len(), K::DTYPE);
        }
        let got32 = gpu.argsort::<K, u32>(keys, order).expect("argsort, u32");
        let got32: Vec<u64> = got32.into_iter().map(u64::from).collect();
        assert_eq!(got32, want, "argsort u32 n = {}", keys.len());
        let got128 = gpu.argsort::<K, u128>(keys, order).expect("argsort, u128");
        let got128: Vec<u64> = got128.into_iter().map(|i| i as u64).collect();
        assert_eq!(got128, want, "argsort u128 n = {}", keys.len());
        let radix: Vec<u64> = gpu
            .argsort(keys, with(GpuAlgo::Radix, order))
            .expect("argsort radix");
        if let Some(d) = first_difference(&radix, &want) {
            panic!(
                "radix argsort n = {}, {} {order:?}: {d}",
                keys.len(),
                K::DTYPE
            );
        }
    }
    for n in [0, 1, 2, 100, 2047, 2049, MERGE_TILE as usize + 1, 123_457] {
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
                gpu.sort_unstable(&mut keys, with(algo, order))
                    .expect("chunked sort");
                if let Some(d) = first_difference(&bits(&keys), &want) {
                    panic!(
                        "{} chunked, n = {}, {} {order:?}: {d}",
                        algo,
                        input.len(),
                        K::DTYPE
                    );
                }
            }
            // The default calls: `auto`'s choice for each chunk.
            let (mut unstable, mut stable) = (input.to_vec(), input.to_vec());
            gpu.sort_unstable(&mut unstable, order)
                .expect("chunked sort_unstable");
            gpu.sort(&mut stable, order).expect("chunked sort");
            for (keys, call) in [(unstable, "sort_unstable"), (stable, "sort")] {
                if let Some(d) = first_difference(&bits(&keys), &want) {
                    panic!(
                        "{call} chunked, n = {}, {} {order:?}: {d}",
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

/// `auto`: with memory to spare, the default calls run the device's measured table's choice
/// (for keys on the device, and for host slices); an unstable sort whose choice's scratch does
/// not fit the budget runs the in-place bitonic sort (whole where the keys fit, else in chunks),
/// a stable one keeps its choice.
#[test]
fn auto_follows_the_table_and_falls_back_to_the_bitonic_sort() {
    let Some(mut gpu) = gpu_or_skip("auto_follows_the_table_and_falls_back_to_the_bitonic_sort")
    else {
        return;
    };
    let table = auto::table(gpu.limits().compute_capability);
    let (device, host) = (table.device, table.host);
    for log2 in [10, 13, 16, 17, 19, 20, 21, 22, 23, 24, 25, 26, 27] {
        let n = 1usize << log2;
        let m = n as u64;
        let on_device = |sorting, key_bytes| match key_bytes {
            4 => gpu.auto_device::<f32>(sorting, n).expect("auto"),
            _ => gpu.auto_device::<i64>(sorting, n).expect("auto"),
        };
        let on_host = |sorting, key_bytes| match key_bytes {
            4 => gpu.auto_host::<u32>(sorting, n).expect("plan"),
            _ => gpu.auto_host::<f64>(sorting, n).expect("plan"),
        };
        for kb in [4, 8] {
            let k = kb as u32;
            let what = format!("2^{log2}, {kb}-byte keys");
            assert_eq!(
                on_device(Sorting::Unstable, kb),
                device.keys(m, k).into(),
                "{what}"
            );
            assert_eq!(
                on_device(Sorting::Stable, kb),
                device.stable(m, k, 0).into()
            );
            let pairs = Sorting::Pairs { value_bytes: 8 };
            assert_eq!(on_device(pairs, kb), device.stable(m, k, 8).into());
            for (sorting, want) in [
                (Sorting::Unstable, host.keys(m, k)),
                (Sorting::Stable, host.stable(m, k, 0)),
                (pairs, host.stable(m, k, 8)),
            ] {
                let plan = on_host(sorting, kb);
                assert_eq!((plan.algo, plan.chunk), (want.into(), None), "{what}");
            }
        }
    }

    // 2^25 + 1 u64 keys (256 MiB): the radix sort on the device, the merge sort for a host slice.
    let n = (1usize << 25) + 1;
    assert_eq!(GpuAlgo::from(device.keys(n as u64, 8)), GpuAlgo::Radix);
    assert_eq!(GpuAlgo::from(host.keys(n as u64, 8)), GpuAlgo::Merge);
    let seed = test_seed(41);
    let input: Vec<u64> = generate(n, Dist::Uniform, seed);
    let want = stable_reference(&input, &vec![(); n], Order::Ascending).0;
    let check = |keys: &[u64], what: &str| {
        if let Some(d) = first_difference(&bits(keys), &want) {
            panic!("seed {seed}, {what}: {d}");
        }
    };
    // 450 MiB: room for the keys, not for the merge sort's scratch beside them. On the device,
    // where the keys already are, the radix sort's scratch fits.
    gpu.set_memory_budget(Some(450 << 20));
    let plan = gpu.auto_host::<u64>(Sorting::Unstable, n).expect("plan");
    assert_eq!((plan.algo, plan.chunk), (GpuAlgo::Bitonic, None));
    let on_device = gpu.auto_device::<u64>(Sorting::Unstable, n).expect("auto");
    assert_eq!(on_device, GpuAlgo::Radix);
    let unstable = Work::SortUnstable(n);
    let radix_bytes = gpu.scratch_bytes::<u64>(unstable, with(GpuAlgo::Radix, Order::Ascending));
    let bytes = gpu.scratch_bytes::<u64>(unstable, Order::Ascending);
    assert_eq!(bytes.expect("scratch bytes"), radix_bytes.expect("radix"));
    let mut keys = input.clone();
    gpu.sort_unstable(&mut keys, Order::Ascending)
        .expect("sort_unstable, bitonic whole");
    check(&keys, "bitonic whole");
    // A caller's scratch too small for the radix sort that `auto` chooses: the bitonic sort.
    let mut buffer = gpu.upload(&input).expect("upload");
    let mut scratch = gpu
        .alloc::<u8>(1 << 10, "too little scratch")
        .expect("alloc");
    let mut queue = gpu
        .queue()
        .unwrap()
        .with_scratch(&mut scratch)
        .expect("scratch");
    queue
        .sort_unstable(&mut buffer, Order::Ascending)
        .expect("Queue::sort_unstable with too little scratch, bitonic");
    queue.synchronize().expect("the bitonic sort");
    check(
        &buffer.as_host_vec().expect("download"),
        "bitonic in place of the radix sort",
    );
    // The stable sorts have no fallback: too little scratch is an error, nothing is queued.
    buffer.copy_from(&input[..]).expect("restore");
    match queue.sort(&mut buffer, Order::Ascending) {
        Err(Error::OutOfDeviceMemory {
            requested, free, ..
        }) => {
            assert!(requested > free && free == 1 << 10, "{requested} > {free}");
        }
        other => panic!("expected OutOfDeviceMemory, got {other:?}"),
    }
    assert!(
        buffer.as_host_vec().expect("download") == input,
        "left as it was"
    );
    // 200 MiB: the keys do not fit whole, and no scratch fits on the device.
    gpu.set_memory_budget(Some(200 << 20));
    let plan = gpu.auto_host::<u64>(Sorting::Unstable, n).expect("plan");
    assert_eq!(plan.algo, GpuAlgo::Bitonic);
    assert!(plan.chunk.is_some_and(|c| c < n as u64), "{plan:?}");
    let mut keys = input.clone();
    gpu.sort_unstable(&mut keys, Order::Ascending)
        .expect("sort_unstable in chunks");
    check(&keys, "bitonic in chunks");
    let on_device = gpu.auto_device::<u64>(Sorting::Unstable, n).expect("auto");
    assert_eq!(on_device, GpuAlgo::Bitonic);
    let bytes = gpu.scratch_bytes::<u64>(Work::SortUnstable(n), Order::Ascending);
    assert_eq!(
        bytes.expect("scratch bytes"),
        0,
        "the bitonic sort takes none"
    );
    buffer.copy_from(&input[..]).expect("restore");
    queued(&gpu, |q| q.sort_unstable(&mut buffer, Order::Ascending))
        .expect("Queue::sort_unstable, bitonic");
    check(
        &buffer.as_host_vec().expect("download"),
        "bitonic on the device",
    );
    buffer.copy_from(&input[..]).expect("restore");
    let mut queue = gpu.queue().unwrap();
    queue
        .sort_unstable(&mut buffer, Order::Ascending)
        .expect("enqueue, bitonic");
    queue.synchronize().expect("the bitonic sort");
    check(&buffer.as_host_vec().expect("download"), "bitonic enqueued");
    // A stable sort keeps its choice: on the device the budget does not bind it; host slices go
    // in chunks with room for its scratch.
    let stable = gpu.auto_device::<u64>(Sorting::Stable, n).expect("auto");
    assert_eq!(stable, GpuAlgo::from(device.stable(n as u64, 8, 0)));
    buffer.copy_from(&input[..]).expect("restore");
    queued(&gpu, |q| q.sort(&mut buffer, Order::Ascending)).expect("Queue::sort");
    check(
        &buffer.as_host_vec().expect("download"),
        "stable on the device",
    );
    let plan = gpu.auto_host::<u64>(Sorting::Stable, n).expect("plan");
    assert_ne!(plan.algo, GpuAlgo::Bitonic);
    assert!(plan.chunk.is_some(), "{plan:?}");
    let mut keys = input.clone();
    gpu.sort(&mut keys, Order::Ascending)
        .expect("sort in chunks");
    check(&keys, "stable in chunks");
}

/// [`Queue::sort_unstable`] with `auto`'s merge or radix sort: the scratch is allocated and freed
/// in the stream's order, so sorts of several buffers queued back to back each get theirs, and
/// one wait covers them all. A caller's scratch as large as the largest need serves them all
/// too, one after another.
#[test]
fn enqueued_sorts_with_scratch_in_stream_order() {
    let Some(gpu) = gpu_or_skip("enqueued_sorts_with_scratch_in_stream_order") else {
        return;
    };
    let seed = test_seed(43);
    let lengths = [
        (1 << 17) + 1,
        5000,
        (1 << 16) - 3,
        (1 << 25) + 12345,
        1 << 23,
    ];
    let inputs: Vec<Vec<u32>> = lengths
        .iter()
        .map(|&n| generate(n, Dist::Uniform, seed + n as u64))
        .collect();
    let wide: Vec<u64> = generate(1 << 20, Dist::Few, seed);
    let table = auto::table(gpu.limits().compute_capability).device;
    let chosen: Vec<GpuAlgo> = lengths
        .iter()
        .map(|&n| table.keys(n as u64, 4).into())
        .collect();
    for algo in [GpuAlgo::Radix, GpuAlgo::Merge, GpuAlgo::Bitonic] {
        assert!(chosen.contains(&algo), "{chosen:?}");
    }
    assert_eq!(GpuAlgo::from(table.keys(1 << 20, 8)), GpuAlgo::Merge);
    let mut buffers: Vec<_> = inputs
        .iter()
        .map(|v| gpu.upload(v).expect("upload"))
        .collect();
    let mut wide_buffer = gpu.upload(&wide).expect("upload");
    let bytes = |n| gpu.scratch_bytes::<u32>(Work::SortUnstable(n), Order::Ascending);
    let wide_bytes = gpu.scratch_bytes::<u64>(Work::SortUnstable(wide.len()), Order::Ascending);
    let most = lengths
        .iter()
        .map(|&n| bytes(n).expect("scratch bytes"))
        .fold(wide_bytes.expect("scratch bytes"), u64::max);
    let mut scratch = gpu
        .alloc::<u8>(most as usize, "the shared scratch")
        .expect("alloc");
    for round in 0..4 {
        let order = ORDERS[round % 2];
        for (buffer, input) in buffers.iter_mut().zip(&inputs) {
            buffer.copy_from(&input[..]).expect("restore");
        }
        wide_buffer.copy_from(&wide[..]).expect("restore");
        // Rounds 2 and 3 on the caller's scratch, the others on the pool's.
        let mut queue = match round {
            0 | 1 => gpu.queue().unwrap(),
            _ => gpu
                .queue()
                .unwrap()
                .with_scratch(&mut scratch)
                .expect("scratch"),
        };
        for buffer in buffers.iter_mut() {
            queue.sort_unstable(buffer, order).expect("enqueue");
        }
        queue
            .sort_unstable(&mut wide_buffer, order)
            .expect("enqueue");
        queue.synchronize().expect("the enqueued sorts");
        for ((buffer, input), algo) in buffers.iter().zip(&inputs).zip(&chosen) {
            let want = stable_reference(input, &vec![(); input.len()], order).0;
            let got = buffer.as_host_vec().expect("download");
            if let Some(d) = first_difference(&bits(&got), &want) {
                let n = input.len();
                panic!("seed {seed}, round {round}, n = {n}, {}: {d}", algo);
            }
        }
        let want = stable_reference(&wide, &vec![(); wide.len()], order).0;
        let got = wide_buffer.as_host_vec().expect("download");
        if let Some(d) = first_difference(&bits(&got), &want) {
            panic!("seed {seed}, round {round}, u64 merge: {d}");
        }
    }
}

/// Every [`Progress`] a hook was told, in order.
fn recording_hook(gpu: &mut GpuSorter) -> Arc<Mutex<Vec<Progress>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    gpu.set_progress(Some(Box::new(move |p| log.lock().unwrap().push(p))));
    seen
}

/// Checks what a sort of `n` keys in chunks reported: the sort phase, each chunk adding keys
/// up to `n`, then the merge phase, growing to `n` × its rounds; empties the log.
fn assert_chunked_progress(seen: &Mutex<Vec<Progress>>, n: usize, what: &str) {
    let events = std::mem::take(&mut *seen.lock().unwrap());
    let sorting: Vec<&Progress> = events
        .iter()
        .filter(|p| p.phase == Phase::Sorting)
        .collect();
    let merging: Vec<&Progress> = events
        .iter()
        .filter(|p| p.phase == Phase::Merging)
        .collect();
    assert_eq!(
        sorting.len() + merging.len(),
        events.len(),
        "{what}: unknown phase"
    );
    assert!(
        sorting.len() >= 2,
        "{what}: {} chunk(s): not chunked",
        sorting.len()
    );
    assert!(
        events[..sorting.len()]
            .iter()
            .all(|p| p.phase == Phase::Sorting),
        "{what}: every chunk is sorted before the merge starts"
    );
    assert!(sorting.windows(2).all(|w| w[0].done < w[1].done), "{what}");
    assert!(sorting.iter().all(|p| p.total == n as u64), "{what}");
    assert_eq!(sorting.last().unwrap().done, n as u64, "{what}");
    // The chunk length is the first chunk's count of keys.
    let chunk = sorting[0].done as usize;
    let total = n as u64 * u64::from(merge_rounds(n, chunk));
    assert!(merging.windows(2).all(|w| w[0].done < w[1].done), "{what}");
    assert!(merging.iter().all(|p| p.total == total), "{what}");
    assert_eq!(merging.last().map(|p| p.done), Some(total), "{what}");
}

#[test]
fn pairs_and_argsort_beyond_the_memory_budget_are_sorted_in_chunks_and_merged() {
    let Some(mut gpu) =
        gpu_or_skip("pairs_and_argsort_beyond_the_memory_budget_are_sorted_in_chunks_and_merged")
    else {
        return;
    };
    // 1 MiB: chunks of about 58,000 u32 keys with u32 values, 20,000 u64 keys with u128 values.
    gpu.set_memory_budget(Some(1 << 20));
    let seen = recording_hook(&mut gpu);
    fn pairs<K: SortKey, V: SortValue>(
        gpu: &GpuSorter,
        seen: &Mutex<Vec<Progress>>,
        keys_in: &[K],
        values_in: &[V],
    ) {
        for order in ORDERS {
            let what = format!(
                "chunked pairs n = {}, {}/{} {order:?}",
                keys_in.len(),
                K::DTYPE,
                std::any::type_name::<V>()
            );
            let (want_keys, want_values) = stable_reference(keys_in, values_in, order);
            let (mut keys, mut values) = (keys_in.to_vec(), values_in.to_vec());
            gpu.sort_by_key(&mut keys, &mut values, order)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            if let Some(d) = first_difference(&bits(&keys), &want_keys) {
                panic!("{what}: keys {d}");
            }
            if let Some(d) = first_difference(&values, &want_values) {
                panic!("{what}: values (stability across chunks) {d}");
            }
            assert_chunked_progress(seen, keys_in.len(), &what);
        }
    }
    fn argsorts<K: SortKey>(gpu: &GpuSorter, seen: &Mutex<Vec<Progress>>, keys: &[K]) {
        for order in ORDERS {
            let what = format!("chunked argsort n = {}, {} {order:?}", keys.len(), K::DTYPE);
            let mut want: Vec<u64> = (0..keys.len() as u64).collect();
            want.sort_by_key(|&i| keys[i as usize].ordered_bits(order));
            let before = keys.to_vec();
            let got: Vec<u64> = gpu.argsort(keys, order).expect("argsort");
            if let Some(d) = first_difference(&got, &want) {
                panic!("{what}: {d}");
            }
            assert_chunked_progress(seen, keys.len(), &what);
            let got32 = gpu.argsort::<K, u32>(keys, order).expect("argsort, u32");
            let got32: Vec<u64> = got32.into_iter().map(u64::from).collect();
            if let Some(d) = first_difference(&got32, &want) {
                panic!("{what} (u32 indices): {d}");
            }
            assert_chunked_progress(seen, keys.len(), &what);
            assert_eq!(bits(keys), bits(&before), "{what}: the keys were changed");
        }
    }
    let seed = test_seed(17);
    for n in [300_001, 1_000_003] {
        // Few distinct keys: equal keys in every chunk, so stability across chunks shows.
        let few32: Vec<u32> = generate(n, Dist::Few, seed + n as u64);
        let few64: Vec<f64> = generate(n, Dist::Few, seed + n as u64);
        let blog: Vec<i32> = generate(n, Dist::Blog, seed);
        let indices32: Vec<u32> = (0..n as u32).collect();
        let tags64: Vec<u64> = (0..n as u64).map(|i| i << 32 | (i ^ 0x5555)).collect();
        let tags128: Vec<u128> = (0..n as u128).map(|i| i << 64 | !i << 100 | i).collect();
        pairs(&gpu, &seen, &few32, &indices32);
        pairs(&gpu, &seen, &blog, &tags64);
        pairs(&gpu, &seen, &few64, &tags128);
        argsorts(&gpu, &seen, &few32);
        argsorts(&gpu, &seen, &few64);
    }
    // Keys that fit report nothing.
    gpu.set_memory_budget(None);
    let mut keys: Vec<u32> = generate(10_000, Dist::Few, seed);
    let mut values: Vec<u32> = (0..10_000).collect();
    gpu.sort_by_key(&mut keys, &mut values, Order::Ascending)
        .expect("sort_by_key");
    assert!(keys.is_sorted());
    assert!(
        seen.lock().unwrap().is_empty(),
        "a sort in one piece reported progress"
    );
}

/// Payloads of every size class a caller might carry: with padding, odd sizes and alignments.
mod payloads {
    /// 1 byte.
    pub type P1 = u8;
    /// 3 bytes, alignment 1: travels in a 4-byte slot.
    pub type P3 = [u8; 3];
    /// 4 bytes with 1 byte of padding, alignment 2.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct P4 {
        pub a: u16,
        pub b: u8,
    }
    /// 8 bytes with 3 bytes of padding.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct P8 {
        pub tag: u8,
        pub index: u32,
    }
    /// 12 bytes with 2 bytes of padding: travels in a 16-byte slot.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct P12 {
        pub a: u32,
        pub b: u16,
        pub c: f32,
    }
    /// 16 bytes with 7 bytes of padding, alignment 8.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct P16 {
        pub index: u64,
        pub flag: bool,
    }
    const _: () = assert!(size_of::<P3>() == 3 && size_of::<P4>() == 4 && size_of::<P8>() == 8);
    const _: () = assert!(size_of::<P12>() == 12 && size_of::<P16>() == 16);
}

/// Sorts `keys_in` with payloads `make(i)` through `sort_by_key` with every stable sort and
/// checks both against std's stable `sort_by_key` of the (key, payload) pairs.
fn assert_sort_by_key<K: SortKey, P: Copy + Send + Sync + PartialEq + std::fmt::Debug>(
    gpu: &GpuSorter,
    keys_in: &[K],
    make: impl Fn(usize) -> P,
    order: Order,
    what: &str,
) {
    let payload_in: Vec<P> = (0..keys_in.len()).map(make).collect();
    let mut want: Vec<(K, P)> = keys_in.iter().copied().zip(payload_in.clone()).collect();
    want.sort_by_key(|p| p.0.ordered_bits(order));
    let want_keys: Vec<K::Bits> = want.iter().map(|p| p.0.to_bits()).collect();
    let want_payload: Vec<P> = want.iter().map(|p| p.1).collect();
    for algo in STABLE {
        let (mut keys, mut payload) = (keys_in.to_vec(), payload_in.clone());
        let context = format!(
            "{what} ({}): n = {}, {}/{} ({} bytes) {order:?}",
            algo,
            keys.len(),
            K::DTYPE,
            std::any::type_name::<P>(),
            size_of::<P>()
        );
        gpu.sort_by_key(&mut keys, &mut payload, with(algo, order))
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        if let Some(d) = first_difference(&bits(&keys), &want_keys) {
            panic!("{context}: keys {d}");
        }
        if let Some(d) = first_difference(&payload, &want_payload) {
            panic!("{context}: payload {d}");
        }
    }
}

fn every_payload<K: SortKey>(gpu: &GpuSorter, keys: &[K], order: Order, what: &str) {
    use payloads::*;
    // Each payload is made from its input index, so a lost or reordered one shows.
    assert_sort_by_key(gpu, keys, |i| i as P1, order, what);
    assert_sort_by_key(
        gpu,
        keys,
        |i| -> P3 {
            let b = (i as u32).wrapping_mul(7).to_le_bytes();
            [b[0], b[1], b[2]]
        },
        order,
        what,
    );
    assert_sort_by_key(
        gpu,
        keys,
        |i| P4 {
            a: i as u16,
            b: (i >> 16) as u8,
        },
        order,
        what,
    );
    assert_sort_by_key(
        gpu,
        keys,
        |i| P8 {
            tag: i as u8 ^ 0xA5,
            index: i as u32,
        },
        order,
        what,
    );
    assert_sort_by_key(
        gpu,
        keys,
        |i| P12 {
            a: i as u32,
            b: !(i as u16),
            c: i as f32 * 0.5,
        },
        order,
        what,
    );
    assert_sort_by_key(
        gpu,
        keys,
        |i| P16 {
            index: (i as u64) << 20 | 0xF,
            flag: i % 3 == 0,
        },
        order,
        what,
    );
    assert_sort_by_key(gpu, keys, |i| [i as u8; 16], order, what);
    assert_sort_by_key(gpu, keys, |i| (i as u32, !(i as u64)), order, what);
}

#[test]
fn sort_by_key_carries_payloads_of_every_size() {
    let Some(gpu) = gpu_or_skip("sort_by_key_carries_payloads_of_every_size") else {
        return;
    };
    let seed = test_seed(19);
    let m = MERGE_TILE as usize;
    for n in [0, 1, 2, 17, m - 1, m + 1, 3 * m + 5, 200_001] {
        for order in ORDERS {
            let what = format!("seed {seed}");
            every_payload::<u32>(&gpu, &generate(n, Dist::Few, seed + n as u64), order, &what);
            every_payload::<f32>(
                &gpu,
                &generate(n, Dist::Blog, seed + n as u64),
                order,
                &what,
            );
            every_payload::<i64>(&gpu, &generate(n, Dist::Few, seed + n as u64), order, &what);
            every_payload::<f64>(&gpu, &generate(n, Dist::Saw, seed + n as u64), order, &what);
        }
    }
}

#[test]
fn sort_by_key_in_chunks_beyond_the_memory_budget() {
    let Some(mut gpu) = gpu_or_skip("sort_by_key_in_chunks_beyond_the_memory_budget") else {
        return;
    };
    gpu.set_memory_budget(Some(1 << 20));
    let seen = recording_hook(&mut gpu);
    let n = 250_003;
    for order in ORDERS {
        let keys: Vec<u64> = generate(n, Dist::Few, 23);
        every_payload(&gpu, &keys, order, "chunked");
        let keys: Vec<i32> = generate(n, Dist::Blog, 29);
        every_payload(&gpu, &keys, order, "chunked");
    }
    let events = seen.lock().unwrap();
    assert!(
        events
            .iter()
            .any(|p| p.phase == Phase::Merging && p.done == p.total),
        "the sorts went through the chunked path"
    );
}

#[test]
fn payloads_past_16_bytes_are_a_typed_error() {
    let Some(gpu) = gpu_or_skip("payloads_past_16_bytes_are_a_typed_error") else {
        return;
    };
    let mut keys = [3u32, 1, 2];
    let mut payload = [[7u8; 17]; 3];
    match gpu.sort_by_key(&mut keys, &mut payload, Order::Ascending) {
        Err(e @ Error::PayloadTooLarge { size: 17, max: 16 }) => {
            assert!(e.to_string().contains("17 bytes"), "{e}");
        }
        other => panic!("expected PayloadTooLarge, got {other:?}"),
    }
    assert_eq!(keys, [3, 1, 2], "nothing sorted on error");
    // Also for slices too short to need a sort: the type is the error.
    let mut one = [1u64];
    let mut big = [(0u64, 0u64, 0u8)];
    assert!(matches!(
        gpu.sort_by_key(&mut one, &mut big, Order::Ascending),
        Err(Error::PayloadTooLarge { size: 24, max: 16 })
    ));
    // A zero-sized payload is a sort of the keys alone.
    let mut keys = [2.5f32, -1.0, 0.0];
    gpu.sort_by_key(&mut keys, &mut [(); 3], Order::Descending)
        .expect("zero-sized payload");
    assert_eq!(keys, [2.5, 0.0, -1.0]);
}

#[test]
fn mismatched_lengths_are_a_typed_error() {
    let Some(gpu) = gpu_or_skip("mismatched_lengths_are_a_typed_error") else {
        return;
    };
    let mut keys = [3u32, 1, 2];
    let mut values = [0u64; 2];
    match gpu.sort_by_key(&mut keys, &mut values, Order::Ascending) {
        Err(Error::LengthMismatch { keys: 3, values: 2 }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert_eq!(keys, [3, 1, 2], "nothing sorted on error");
    let mut payload = [[0u8; 3]; 4];
    match gpu.sort_by_key(&mut keys, &mut payload, Order::Ascending) {
        Err(Error::LengthMismatch { keys: 3, values: 4 }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    // On the device: values, and an argsort's indices.
    let mut device_keys = gpu.upload(&keys).expect("upload");
    let mut device_values = gpu.upload(&values).expect("upload");
    let mut indices = gpu.upload(&[0u32; 4]).expect("upload");
    let mut queue = gpu.queue().unwrap();
    match queue.sort_by_key(&mut device_keys, &mut device_values, Order::Ascending) {
        Err(Error::LengthMismatch { keys: 3, values: 2 }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    match queue.argsort(&device_keys, &mut indices, Order::Ascending) {
        Err(Error::LengthMismatch { keys: 3, values: 4 }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    queue.synchronize().expect("nothing queued");
    let on_device = device_keys.as_host_vec().expect("download");
    assert_eq!(on_device, [3, 1, 2], "nothing sorted on error");
}

#[test]
fn too_many_keys_is_a_typed_error() {
    let Some(gpu) = gpu_or_skip("too_many_keys_is_a_typed_error") else {
        return;
    };
    let buffer = gpu.upload(&[1u32, 2, 3]).expect("upload");
    // SAFETY: never dereferenced: the length check fails before any launch.
    let fake = || unsafe {
        DeviceSlice::from_raw_parts_mut(buffer.as_device_ptr(), MAX_KEYS as usize + 1)
    };
    let (mut fake_keys, mut fake_values) = (fake(), fake());
    let mut queue = gpu.queue().unwrap();
    for result in [
        queue.sort_unstable(&mut fake_keys, Order::Ascending),
        queue.sort(&mut fake_keys, Order::Ascending),
        queue.sort_by_key(&mut fake_keys, &mut fake_values, Order::Ascending),
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
    let (free, _) = gpusort_cli::memory::device_memory(&gpu).expect("memory info");
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

/// Every sort as each device profile's sorter runs it (whatever `GPUSORT_TEST_PROFILE` says):
/// the compact kernels (8-byte bitonic windows of 2^9 keys on a T4; compact tile sorts where
/// the tile sort's tile does not fit) at lengths around their tiles, against std's.
#[test]
fn every_device_profile_sorts_like_std() {
    use gpusort::gpu::DeviceProfile;
    if gpu_or_skip("every_device_profile_sorts_like_std").is_none() {
        return;
    }
    let seed = test_seed(24);
    for (name, profile) in DeviceProfile::PRESETS {
        let gpu = GpuSorter::with_profile(0, profile).expect("a sorter under a profile");
        let limits = gpu.limits();
        assert!(
            limits.max_shared_per_block <= profile.max_shared_per_block,
            "{name}"
        );
        assert!(limits.multiprocessors <= profile.multiprocessors, "{name}");
        let t = MERGE_TILE as usize;
        for n in [2, 4097, t - 1, t + 1, 2 * t + 3, 70_001, 300_001] {
            let what = format!("{name}, n = {n}");
            for order in ORDERS {
                let keys: Vec<u64> = generate(n, Dist::Uniform, seed + n as u64);
                assert_sorts(&gpu, &keys, order, 7, &what);
                let keys: Vec<f64> = generate(n, Dist::Few, seed + n as u64);
                assert_sorts(&gpu, &keys, order, 0.5, &what);
                let keys: Vec<i32> = generate(n, Dist::Blog, seed + n as u64);
                assert_sorts(&gpu, &keys, order, 3, &what);
                let values128: Vec<u128> = (0..n as u128).map(|i| (i + 1) << 96 | i).collect();
                let values64: Vec<u64> = (0..n as u64).map(|i| i << 33 | i).collect();
                let values32: Vec<u32> = (0..n as u32).collect();
                let keys: Vec<u64> = generate(n, Dist::Few, seed + n as u64);
                assert_pairs_sort(&gpu, &keys, &values128, order, (5, u128::MAX), &what);
                assert_pairs_sort(&gpu, &keys, &values64, order, (5, u64::MAX), &what);
                let keys: Vec<u32> = generate(n, Dist::Few, seed + n as u64);
                assert_pairs_sort(&gpu, &keys, &values128, order, (5, u128::MAX), &what);
                assert_pairs_sort(&gpu, &keys, &values64, order, (5, u64::MAX), &what);
                assert_pairs_sort(&gpu, &keys, &values32, order, (5, u32::MAX), &what);
            }
        }
    }
}
