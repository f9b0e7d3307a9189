//! Top-k on the GPU against the CPU selection (`gpusort::topk::top_k_cpu`, itself checked
//! against a stable sort): every key type, both orders, NaN and signed zeros, ties (the lowest
//! indices must win), k = 1, 2, 31, 32, 33, 256, 1023, 1024 (which the longer arrays here
//! select by digits) and 1025 (the sort fallback), lengths around the blocks' tiles and parts
//! and the longest row selected in registers, sorted and reversed inputs (every key passes the
//! filter), rows of many shapes, keys already on the device ([`gpusort::Queue::top_k`], with the
//! pool's scratch and with the caller's; also starting off a 16-byte boundary, which the tiles
//! load key by key), and the typed errors. Runs when a CUDA device is present; skipped (said on
//! stderr) when not; fails without one under `REQUIRE_GPU=1`.

use cust::memory::{CopyDestination, DeviceSlice};
use gpusort::topk::{TopK, top_k_cpu};
use gpusort::{Error, GpuSorter, Order, SortKey, Work};
use gpusort_cli::inputs::{Dist, generate};
use gpusort_suite::{gpu_or_skip, sprinkle_specials, test_seed};
use kernels_gpu::topk::digits::by_digits;
use kernels_gpu::topk::{MAX_K, ROW_MAX_KEYS, tile_keys};
use rand::{Rng, SeedableRng, rngs::StdRng};

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];
const KS: [usize; 9] = [1, 2, 31, 32, 33, 256, 1023, 1024, 1025];

fn bits<K: SortKey>(top: &TopK<K>) -> (Vec<K::Bits>, Vec<u64>) {
    (
        top.keys.iter().map(|k| k.to_bits()).collect(),
        top.indices.clone(),
    )
}

/// The GPU's top-k of `keys` (rows of `row_len`) equals the CPU's, bit for bit.
fn check<K: SortKey>(
    gpu: &GpuSorter,
    keys: &[K],
    row_len: usize,
    k: usize,
    order: Order,
    what: &str,
) {
    let before: Vec<K::Bits> = keys.iter().map(|k| k.to_bits()).collect();
    let got = gpu
        .top_k(keys, row_len, k, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = top_k_cpu(keys, row_len, k, order).unwrap();
    let (got, want) = (bits(&got), bits(&want));
    if got != want {
        let at = (0..want.0.len())
            .find(|&i| got.0.get(i) != want.0.get(i) || got.1.get(i) != want.1.get(i))
            .unwrap_or(want.0.len());
        panic!(
            "{what}: {} {} keys in rows of {row_len}, k = {k}, {order:?}: first difference at {at}: \
             got {:?} / {:?}, expected {:?} / {:?}",
            keys.len(),
            K::DTYPE,
            got.0.get(at),
            got.1.get(at),
            want.0.get(at),
            want.1.get(at)
        );
    }
    let after: Vec<K::Bits> = keys.iter().map(|k| k.to_bits()).collect();
    assert!(before == after, "{what}: the input changed");
}

/// Where [`top_k_on_device`] takes the scratch from.
#[derive(Clone, Copy, Debug)]
enum ScratchFrom {
    /// The device's memory pool, in the stream's order.
    Pool,
    /// A buffer of the caller's, of [`GpuSorter::scratch_bytes`] for [`Work::TopK`].
    Caller,
}

/// The top-`k` of each row of `row_len` keys already on the device, selected on a queue on the
/// sorter's stream into device outputs, waited for and copied back.
fn top_k_on_device<K: SortKey>(
    gpu: &GpuSorter,
    keys: &DeviceSlice<K>,
    row_len: usize,
    k: usize,
    order: Order,
    scratch: ScratchFrom,
) -> gpusort::Result<TopK<K>> {
    let out_len = keys.len().checked_div(row_len).unwrap_or(0) * k;
    let mut out_keys = gpu.alloc::<K>(out_len, "the top-k's keys")?;
    let mut out_indices = gpu.alloc::<u64>(out_len, "the top-k's indices")?;
    let mut buffer;
    let mut queue = gpu.queue().unwrap();
    if let ScratchFrom::Caller = scratch {
        let len = keys.len();
        let bytes = gpu.scratch_bytes::<K>(Work::TopK { len, row_len, k }, order)?;
        buffer = gpu.alloc::<u8>(bytes as usize, "the top-k's scratch")?;
        queue = queue.with_scratch(&mut buffer)?;
    }
    queue.top_k(keys, row_len, k, order, &mut out_keys, &mut out_indices)?;
    queue.synchronize()?;
    let mut top = TopK {
        keys: vec![K::from_bits(Default::default()); out_len],
        indices: out_indices.as_host_vec().expect("download the indices"),
    };
    out_keys
        .copy_to(&mut top.keys[..])
        .expect("download the keys");
    Ok(top)
}

fn every_k_and_length<K: SortKey>(gpu: &GpuSorter, seed: u64) {
    // The longest arrays here select the larger k by digits, the others by streaming rounds.
    let key_bytes = size_of::<K>() as u32;
    assert!(by_digits(1, 1 << 20, 256, key_bytes) && !by_digits(1, 1 << 20, 33, key_bytes));
    let tile = tile_keys(size_of::<K>() as u32) as usize;
    let in_registers = ROW_MAX_KEYS as usize;
    let mut lengths = vec![1, 2, 31, 33, tile - 1, tile, tile + 1, 3 * tile + 5];
    lengths.extend([
        in_registers - 1,
        in_registers,
        in_registers + 1,
        100_003,
        1 << 20,
    ]);
    lengths.sort_unstable();
    lengths.dedup();
    for n in lengths {
        for dist in [Dist::Uniform, Dist::Few] {
            let keys: Vec<K> = generate(n, dist, seed ^ n as u64);
            for k in KS.into_iter().filter(|&k| k <= n) {
                for order in ORDERS {
                    check(gpu, &keys, n, k, order, &format!("{dist:?}"));
                }
            }
        }
    }
}

#[test]
fn top_k_of_every_key_type_and_k() {
    let Some(gpu) = gpu_or_skip("top_k_of_every_key_type_and_k") else {
        return;
    };
    let seed = test_seed(1);
    every_k_and_length::<u32>(&gpu, seed);
    every_k_and_length::<i32>(&gpu, seed);
    every_k_and_length::<f32>(&gpu, seed);
    every_k_and_length::<u64>(&gpu, seed);
    every_k_and_length::<i64>(&gpu, seed);
    every_k_and_length::<f64>(&gpu, seed);
}

#[test]
fn top_k_orders_floats_like_total_cmp() {
    let Some(gpu) = gpu_or_skip("top_k_orders_floats_like_total_cmp") else {
        return;
    };
    for n in [10, 5000, 300_001] {
        let mut keys: Vec<f32> = generate(n, Dist::Uniform, 7);
        sprinkle_specials(&mut keys, 3);
        for k in [1, 10, 64, 1000] {
            for order in ORDERS {
                check(&gpu, &keys, n, k.min(n), order, "f32 specials");
            }
        }
        let wide: Vec<f64> = keys.iter().map(|&f| f64::from(f)).collect();
        check(
            &gpu,
            &wide,
            n,
            100.min(n),
            Order::Descending,
            "f64 specials",
        );
    }
}

#[test]
fn ties_go_to_the_lowest_indices() {
    let Some(gpu) = gpu_or_skip("ties_go_to_the_lowest_indices") else {
        return;
    };
    for n in [1000, 1 << 20] {
        let equal = vec![3i64; n];
        for k in [1, 33, 1024].map(|k: usize| k.min(n)) {
            let top = gpu.top_k(&equal, n, k, Order::Descending).unwrap();
            assert_eq!(top.indices, (0..k as u64).collect::<Vec<_>>(), "n = {n}");
        }
        let few: Vec<u32> = generate(n, Dist::Few, 3);
        for k in [7, 512, 1024, 1025].into_iter().filter(|&k| k <= n) {
            check(&gpu, &few, n, k, Order::Ascending, "few distinct");
        }
    }
}

#[test]
fn sorted_and_reversed_inputs_keep_every_key_and_stay_right() {
    let Some(gpu) = gpu_or_skip("sorted_and_reversed_inputs_keep_every_key_and_stay_right") else {
        return;
    };
    for n in [70_000, (1 << 22) + 3] {
        for dist in [Dist::Sorted, Dist::Reverse, Dist::OrganPipe, Dist::Saw] {
            let keys: Vec<u32> = generate(n, dist, 5);
            for k in [1, 256, 1024] {
                for order in ORDERS {
                    check(&gpu, &keys, n, k, order, &format!("{dist:?}"));
                }
            }
        }
    }
}

#[test]
fn random_lengths_and_k() {
    let Some(gpu) = gpu_or_skip("random_lengths_and_k") else {
        return;
    };
    let seed = test_seed(11);
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..60 {
        let n = rng.random_range(1..3_000_000);
        let k = rng.random_range(1..=(MAX_K as usize + 100).min(n));
        let keys: Vec<f32> = generate(n, Dist::Uniform, rng.random());
        let order = ORDERS[rng.random_range(0..2)];
        check(&gpu, &keys, n, k, order, &format!("seed {seed}"));
    }
}

#[test]
fn rows_select_within_each_row() {
    let Some(gpu) = gpu_or_skip("rows_select_within_each_row") else {
        return;
    };
    let shapes = [
        (1usize, 17usize, 17usize),
        (16384, 4096, 8),
        (16384, 4096, 256),
        (1024, 65536, 64),
        (64, 262_144, 256),
        (3, 1 << 20, 1024),
        (1000, 33, 1),
        (100_000, 16, 8),
        (37, 5000, 1025),
    ];
    for (rows, row_len, k) in shapes {
        let keys: Vec<i32> = generate(rows * row_len, Dist::Uniform, rows as u64);
        for order in ORDERS {
            check(&gpu, &keys, row_len, k, order, "i32 rows");
        }
        let keys: Vec<f64> = generate((rows * row_len).min(1 << 24), Dist::Few, 9);
        let rows = keys.len() / row_len;
        check(
            &gpu,
            &keys[..rows * row_len],
            row_len,
            k,
            Order::Descending,
            "f64 rows",
        );
    }
}

#[test]
fn keys_on_the_device_stay_and_give_the_same_top_k() {
    let Some(gpu) = gpu_or_skip("keys_on_the_device_stay_and_give_the_same_top_k") else {
        return;
    };
    let keys: Vec<u64> = generate(1 << 21, Dist::Uniform, 4);
    let device = gpu.upload(&keys).unwrap();
    let whole = keys.len();
    for scratch in [ScratchFrom::Pool, ScratchFrom::Caller] {
        for k in [5, 1024] {
            let got = top_k_on_device(&gpu, &device, whole, k, Order::Descending, scratch);
            assert_eq!(
                got.unwrap(),
                top_k_cpu(&keys, whole, k, Order::Descending).unwrap(),
                "k = {k}, {scratch:?} scratch"
            );
        }
        let rows = top_k_on_device(&gpu, &device, 1 << 11, 16, Order::Ascending, scratch);
        assert_eq!(
            rows.unwrap(),
            top_k_cpu(&keys, 1 << 11, 16, Order::Ascending).unwrap(),
            "{scratch:?} scratch"
        );
    }
    // Past what the kernels select, a queue refuses k; the keys' host copy takes it (a sort).
    let k = 2000;
    let refused = top_k_on_device(
        &gpu,
        &device,
        whole,
        k,
        Order::Descending,
        ScratchFrom::Pool,
    );
    assert!(
        matches!(refused, Err(Error::KOutOfRange { k: 2000, max: 1024 })),
        "{refused:?}"
    );
    let work = Work::TopK {
        len: whole,
        row_len: whole,
        k,
    };
    assert!(matches!(
        gpu.scratch_bytes::<u64>(work, Order::Descending),
        Err(Error::KOutOfRange { k: 2000, .. })
    ));
    let host = device.as_host_vec().unwrap();
    assert_eq!(
        gpu.top_k(&host, whole, k, Order::Descending).unwrap(),
        top_k_cpu(&keys, whole, k, Order::Descending).unwrap(),
        "k = {k}"
    );
    let mut after = vec![0u64; keys.len()];
    device.copy_to(&mut after[..]).unwrap();
    assert!(after == keys, "the device keys changed");
}

/// The GPU's top-k of keys already on the device equals the CPU's, bit for bit.
fn check_device<K: SortKey>(
    gpu: &GpuSorter,
    keys: &DeviceSlice<K>,
    host: &[K],
    row_len: usize,
    k: usize,
    what: &str,
) {
    let want = top_k_cpu(host, row_len, k, Order::Descending).unwrap();
    for scratch in [ScratchFrom::Pool, ScratchFrom::Caller] {
        let got = top_k_on_device(gpu, keys, row_len, k, Order::Descending, scratch)
            .unwrap_or_else(|e| panic!("{what}, {scratch:?} scratch: {e}"));
        assert!(
            bits(&got) == bits(&want),
            "{what}, {scratch:?} scratch: {} {} keys in rows of {row_len}, k = {k}",
            host.len(),
            K::DTYPE
        );
    }
}

#[test]
fn keys_off_a_16_byte_boundary_select_like_aligned_ones() {
    // A slice that starts one to three keys into its allocation: its tiles load key by key,
    // where an aligned one loads 16-byte vectors; rows of an odd length are never aligned.
    let Some(gpu) = gpu_or_skip("keys_off_a_16_byte_boundary_select_like_aligned_ones") else {
        return;
    };
    let keys: Vec<f32> = generate((1 << 20) + 7, Dist::Uniform, 12);
    let device = gpu.upload(&keys).unwrap();
    for skip in 0..4 {
        let tail = device.index(skip..);
        let host = &keys[skip..];
        for k in [1, 64, 1024] {
            check_device(
                &gpu,
                &tail,
                host,
                host.len(),
                k,
                &format!("f32, {skip} keys in"),
            );
        }
        let row_len = 4093;
        let rows = host.len() / row_len;
        let matrix = tail.index(..rows * row_len);
        for k in [8, 256] {
            let what = format!("f32 rows, {skip} keys in");
            check_device(&gpu, &matrix, &host[..rows * row_len], row_len, k, &what);
        }
    }
    let wide: Vec<u64> = generate(300_001, Dist::Uniform, 13);
    let device = gpu.upload(&wide).unwrap();
    let tail = device.index(1..);
    for k in [3, 1000] {
        check_device(&gpu, &tail, &wide[1..], wide.len() - 1, k, "u64, 1 key in");
    }
}

#[test]
fn bad_k_and_row_lengths_are_typed_errors() {
    let Some(gpu) = gpu_or_skip("bad_k_and_row_lengths_are_typed_errors") else {
        return;
    };
    let keys = [1.0f32, 2.0, 3.0, 4.0];
    assert!(matches!(
        gpu.top_k(&keys, 4, 0, Order::Ascending),
        Err(Error::KOutOfRange { k: 0, max: 4 })
    ));
    assert!(matches!(
        gpu.top_k(&keys, 4, 5, Order::Ascending),
        Err(Error::KOutOfRange { k: 5, max: 4 })
    ));
    assert!(matches!(
        gpu.top_k(&keys, 3, 1, Order::Ascending),
        Err(Error::RowLength { row_len: 3, len: 4 })
    ));
    assert!(matches!(
        gpu.top_k(&keys, 0, 1, Order::Ascending),
        Err(Error::RowLength { row_len: 0, .. })
    ));
    assert!(matches!(
        gpu.top_k(&keys, 2, 3, Order::Ascending),
        Err(Error::KOutOfRange { k: 3, max: 2 })
    ));
}
