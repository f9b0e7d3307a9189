//! The segmented sorts (`sort_segments`, `sort_segments_by_key`, `argsort_segments`, on host
//! slices and on a `Queue`, with the caller's scratch and the pool's) against std's sort of each segment: rows of every length around each
//! power of two up to past a block's tile (the longest rows sorted one by one), rows of every
//! length that the register sort of short segments takes (up to 64) for every key type,
//! variable-length segments mixing empty, single-key, short, tile-sized and huge ones, offsets
//! that leave keys outside every segment, all six key types, both orders, NaN and signed zeros,
//! stability (argsort and pairs: equal keys keep their input order), values of 4, 8 and 16
//! bytes, writes past the end (guard keys), and bad segments as typed errors. Segments longer
//! than a block's tile of 8-byte keys (sorted together by two radix sorts, or as padded rows)
//! have tests of their own: rows of a power of two and not, among short ones, one huge one. Runs when a CUDA device is present; skipped
//! (said on stderr) when not; fails without one under `REQUIRE_GPU=1`.

use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use gpusort::{Error, GpuSorter, Order, Segments, SortKey, SortValue, Work};
use gpusort_cli::inputs::{Dist, generate};
use gpusort_suite::{gpu_or_skip, sprinkle_specials, test_seed};
use kernels_gpu::segments::SHORT_TILE;
use rand::{Rng, SeedableRng, rngs::StdRng};

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];

/// Keys written past the end of the slices under sort on the device; must be untouched.
const GUARD: usize = 1000;

/// The segments of `n` keys as `(start, end)` ranges.
fn ranges(segments: Segments<'_>, n: usize) -> Vec<(usize, usize)> {
    match segments {
        Segments::Rows(len) => (0..n / len.max(1))
            .map(|r| (r * len, (r + 1) * len))
            .collect(),
        Segments::Offsets(o) => o.windows(2).map(|w| (w[0], w[1])).collect(),
    }
}

/// std's stable sort of each segment: the permutation of positions within each segment (0
/// outside every segment).
fn reference<K: SortKey>(keys: &[K], segments: Segments<'_>, order: Order) -> Vec<u32> {
    let mut perm = vec![0u32; keys.len()];
    for (a, b) in ranges(segments, keys.len()) {
        let mut p: Vec<u32> = (0..(b - a) as u32).collect();
        p.sort_by_key(|&j| keys[a + j as usize].ordered_bits(order));
        perm[a..b].copy_from_slice(&p);
    }
    perm
}

/// Sorts `keys` in `segments` every way (keys on the host and on the device, pairs with each
/// value width, argsort on the host and on the device) and checks each against `reference`.
fn assert_segments_sort<K: SortKey>(
    gpu: &GpuSorter,
    keys: &[K],
    segments: Segments<'_>,
    order: Order,
    what: &str,
) {
    let n = keys.len();
    let perm = reference(keys, segments, order);
    let covered = {
        let mut c = vec![false; n];
        for (a, b) in ranges(segments, n) {
            c[a..b].iter_mut().for_each(|x| *x = true);
        }
        c
    };
    // The stable result: each covered key from its segment's permutation, others unchanged.
    let starts = {
        let mut s: Vec<usize> = (0..n).collect();
        for (a, b) in ranges(segments, n) {
            s[a..b].iter_mut().for_each(|x| *x = a);
        }
        s
    };
    let source = |i: usize| {
        if covered[i] {
            starts[i] + perm[i] as usize
        } else {
            i
        }
    };
    let want_bits: Vec<K::Bits> = (0..n).map(|i| keys[source(i)].to_bits()).collect();
    let bits = |k: &[K]| k.iter().map(|k| k.to_bits()).collect::<Vec<_>>();

    let mut host = keys.to_vec();
    gpu.sort_segments(&mut host, segments, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(bits(&host), want_bits, "{what}: keys on the host");

    // Device keys with guard keys past the end, which must survive.
    let poison = keys.first().copied().unwrap_or_else(|| K::from_small(7));
    let mut padded = keys.to_vec();
    padded.extend(std::iter::repeat_n(poison, GUARD));
    let device = gpu.upload(&padded).unwrap();
    let mut part: DeviceSlice<K> = device.index(..n);
    // The caller's scratch, of the size asked for, on the sorter's stream.
    let work = Work::SortSegments { len: n, segments };
    let bytes = gpu.scratch_bytes::<K>(work, order).unwrap();
    let mut scratch = DeviceBuffer::<u8>::zeroed(bytes.max(1) as usize).unwrap();
    let mut queue = gpu.queue().unwrap().with_scratch(&mut scratch).unwrap();
    queue
        .sort_segments(&mut part, segments, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    queue.synchronize().unwrap();
    let mut back = padded.clone();
    device.copy_to(&mut back[..]).unwrap();
    assert_eq!(bits(&back[..n]), want_bits, "{what}: keys on the device");
    assert_eq!(bits(&back[n..]), bits(&padded[n..]), "{what}: guard keys");

    let indices = gpu
        .argsort_segments(keys, segments, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(indices, perm, "{what}: argsort");
    let device_keys = gpu.upload(keys).unwrap();
    // Poisoned: positions outside every segment must come back 0.
    let mut device_indices = gpu.upload(&vec![u32::MAX; n]).unwrap();
    // The pool's scratch.
    let mut queue = gpu.queue().unwrap();
    queue
        .argsort_segments(&device_keys, &mut device_indices, segments, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    queue.synchronize().unwrap();
    let mut got = vec![0u32; n];
    device_indices.copy_to(&mut got[..]).unwrap();
    let mut unchanged = keys.to_vec();
    device_keys.copy_to(&mut unchanged[..]).unwrap();
    assert_eq!(
        bits(&unchanged),
        bits(keys),
        "{what}: argsort changed the keys"
    );
    assert_eq!(got, perm, "{what}: argsort on the device");

    assert_pairs::<K, u32>(gpu, keys, segments, order, &want_bits, &source, what);
    assert_pairs::<K, u64>(gpu, keys, segments, order, &want_bits, &source, what);
    assert_pairs::<K, u128>(gpu, keys, segments, order, &want_bits, &source, what);
}

fn assert_pairs<K: SortKey, V: SortValue + PartialEq + std::fmt::Debug>(
    gpu: &GpuSorter,
    keys: &[K],
    segments: Segments<'_>,
    order: Order,
    want_bits: &[K::Bits],
    source: &dyn Fn(usize) -> usize,
    what: &str,
) {
    let n = keys.len();
    // Values that name their input position (and differ in their high bits for wide values).
    let values: Vec<V> = (0..n as u64)
        .map(|i| V::from_index(i * 0x1_0001 % (1 << 31)))
        .collect();
    let (mut k, mut v) = (keys.to_vec(), values.clone());
    gpu.sort_segments_by_key(&mut k, &mut v, segments, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let got: Vec<K::Bits> = k.iter().map(|k| k.to_bits()).collect();
    assert_eq!(
        got,
        want_bits,
        "{what}: pair keys, {} B values",
        size_of::<V>()
    );
    let want: Vec<V> = (0..n).map(|i| values[source(i)]).collect();
    assert_eq!(v, want, "{what}: pair values, {} B", size_of::<V>());
}

/// Keys of type `K`: random, with few distinct values (many ties) every other call.
fn keys_of<K: SortKey>(n: usize, seed: u64, ties: bool) -> Vec<K> {
    let dist = if ties { Dist::Few } else { Dist::Uniform };
    generate::<K>(n, dist, seed)
}

#[test]
fn rows_of_every_length_around_the_powers_of_two() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let seed = test_seed(27);
    let mut lens: Vec<usize> = vec![1, 2, 3, 100, 1000, 3000, 10_000];
    for k in 2..=14 {
        lens.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    for (i, &len) in lens.iter().enumerate() {
        let rows = (1 << 16) / len + 1;
        let n = rows * len;
        let order = ORDERS[i % 2];
        let what = format!("rows of {len} (seed {seed})");
        let keys = keys_of::<u32>(n, seed + i as u64, i % 3 == 0);
        assert_segments_sort(&gpu, &keys, Segments::Rows(len), order, &what);
    }
}

/// Every key type, both orders, for rows of a few lengths (each way a block sorts rows: the
/// register sort, the bitonic block sort, the radix sort of a segment, the tile sort) and for
/// mixed segments.
fn every_key_type<K: SortKey>(gpu: &GpuSorter, seed: u64) {
    for (i, len) in [16usize, 129, 1000, 2048, 3000, 8192]
        .into_iter()
        .enumerate()
    {
        for order in ORDERS {
            let n = len * (20_000 / len + 3);
            let keys = keys_of::<K>(n, seed + i as u64, i % 2 == 1);
            let what = format!("{:?} rows of {len}, {order:?}", K::DTYPE);
            assert_segments_sort(gpu, &keys, Segments::Rows(len), order, &what);
        }
    }
}

#[test]
fn every_key_type_and_order() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let seed = test_seed(5);
    every_key_type::<u32>(&gpu, seed);
    every_key_type::<i32>(&gpu, seed);
    every_key_type::<f32>(&gpu, seed);
    every_key_type::<u64>(&gpu, seed);
    every_key_type::<i64>(&gpu, seed);
    every_key_type::<f64>(&gpu, seed);
}

#[test]
fn floats_with_nan_and_signed_zeros() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    for len in [7usize, 64, 1000] {
        let mut keys = keys_of::<f32>(len * 50, 3, true);
        sprinkle_specials(&mut keys, 3);
        for order in ORDERS {
            let what = format!("f32 specials, rows of {len}, {order:?}");
            assert_segments_sort(&gpu, &keys, Segments::Rows(len), order, &what);
        }
        let doubles: Vec<f64> = keys.iter().map(|&k| f64::from(k)).collect();
        assert_segments_sort(
            &gpu,
            &doubles,
            Segments::Rows(len),
            Order::Descending,
            "f64 specials",
        );
    }
}

#[test]
fn segments_of_mixed_lengths() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let seed = test_seed(99);
    let mut rng = StdRng::seed_from_u64(seed);
    // Lengths from every class: empty, one key, around the warp and tile sizes, and past a
    // block's longest row; one huge segment among many tiny ones.
    let mut lens: Vec<usize> = vec![
        0, 1, 2, 31, 32, 33, 255, 256, 257, 4095, 4097, 8191, 8192, 8193, 0, 1,
    ];
    lens.extend((0..3000).map(|_| rng.random_range(0..40)));
    lens.push(70_000);
    lens.extend((0..300).map(|_| rng.random_range(0..3000)));
    let offsets = offsets_of(lens);
    let n = *offsets.last().unwrap();
    for (i, order) in ORDERS.into_iter().enumerate() {
        let keys = keys_of::<f32>(n, seed + i as u64, i == 0);
        let what = format!("mixed segments, {order:?} (seed {seed})");
        assert_segments_sort(&gpu, &keys, Segments::Offsets(&offsets), order, &what);
        let keys = keys_of::<u64>(n, seed + 7, i == 1);
        assert_segments_sort(&gpu, &keys, Segments::Offsets(&offsets), order, &what);
    }
    // Keys before the first offset and after the last stay where they are.
    let inner = &offsets[3..offsets.len() - 2];
    let keys = keys_of::<i32>(n, seed + 3, false);
    assert_segments_sort(
        &gpu,
        &keys,
        Segments::Offsets(inner),
        Order::Ascending,
        "inner segments",
    );
}

#[test]
fn empty_inputs_and_bad_segments() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let mut none: Vec<u32> = Vec::new();
    gpu.sort_segments(&mut none, Segments::Rows(4), Order::Ascending)
        .unwrap();
    gpu.sort_segments(&mut none, Segments::Rows(0), Order::Ascending)
        .unwrap();
    gpu.sort_segments(&mut none, Segments::Offsets(&[]), Order::Ascending)
        .unwrap();
    assert!(
        gpu.argsort_segments(&none, Segments::Offsets(&[0, 0]), Order::Ascending)
            .unwrap()
            .is_empty()
    );

    let mut keys = vec![3u32, 2, 1, 0, 5];
    let before = keys.clone();
    let cases: [(Segments<'_>, &str); 4] = [
        (
            Segments::Rows(2),
            "5 keys are not a whole number of rows of 2 keys",
        ),
        (Segments::Rows(0), "rows of 0 keys cannot hold 5 keys"),
        (
            Segments::Offsets(&[0, 3, 2, 5]),
            "offsets[2] = 2 is below offsets[1] = 3: offsets must not decrease",
        ),
        (
            Segments::Offsets(&[0, 6]),
            "the last offset, 6, is past the 5 keys",
        ),
    ];
    for (segments, reason) in cases {
        match gpu.sort_segments(&mut keys, segments, Order::Ascending) {
            Err(Error::BadSegments { reason: r }) => assert_eq!(r, reason),
            other => panic!("{segments:?}: {other:?}"),
        }
        let mut values = vec![0u64; 5];
        assert!(matches!(
            gpu.sort_segments_by_key(&mut keys, &mut values, segments, Order::Ascending),
            Err(Error::BadSegments { .. })
        ));
        assert!(matches!(
            gpu.argsort_segments(&keys, segments, Order::Ascending),
            Err(Error::BadSegments { .. })
        ));
        assert_eq!(keys, before, "a refused sort leaves the keys as they were");
    }
    let mut values = vec![0u32; 4];
    assert!(matches!(
        gpu.sort_segments_by_key(&mut keys, &mut values, Segments::Rows(5), Order::Ascending),
        Err(Error::LengthMismatch { keys: 5, values: 4 })
    ));
    let device_keys = gpu.upload(&keys).unwrap();
    let mut short = gpu.upload(&[0u32; 4]).unwrap();
    let mut queue = gpu.queue().unwrap();
    assert!(matches!(
        queue.argsort_segments(
            &device_keys,
            &mut short,
            Segments::Rows(5),
            Order::Ascending
        ),
        Err(Error::LengthMismatch { .. })
    ));
    let bad = Work::SortSegments {
        len: 5,
        segments: Segments::Rows(2),
    };
    assert!(matches!(
        gpu.scratch_bytes::<u32>(bad, Order::Ascending),
        Err(Error::BadSegments { .. })
    ));
    // A caller's scratch smaller than asked for is refused before anything is queued.
    let offsets = [0, 1, 5];
    let segments = Segments::Offsets(&offsets);
    let work = Work::SortSegments { len: 5, segments };
    let bytes = gpu.scratch_bytes::<u32>(work, Order::Ascending).unwrap();
    assert!(bytes > 0, "offsets go to the device through the scratch");
    let mut scratch = DeviceBuffer::<u8>::zeroed(bytes as usize - 1).unwrap();
    let mut device_keys = gpu.upload(&keys).unwrap();
    let mut queue = gpu.queue().unwrap().with_scratch(&mut scratch).unwrap();
    assert!(matches!(
        queue.sort_segments(&mut device_keys, segments, Order::Ascending),
        Err(Error::OutOfDeviceMemory { .. })
    ));
    queue.synchronize().unwrap();
    assert_eq!(device_keys.as_host_vec().unwrap(), before);
}

#[test]
fn large_matrices_of_short_and_long_rows() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    for (len, log2) in [(16usize, 24u32), (4096, 24), (65_536, 22)] {
        let n = 1usize << log2;
        let keys = keys_of::<u32>(n, u64::from(log2) + len as u64, false);
        let mut got = keys.clone();
        gpu.sort_segments(&mut got, Segments::Rows(len), Order::Ascending)
            .unwrap();
        for (r, (row, orig)) in got.chunks(len).zip(keys.chunks(len)).enumerate() {
            let mut want = orig.to_vec();
            want.sort_unstable();
            assert_eq!(row, want, "row {r} of {len}");
        }
        let indices = gpu
            .argsort_segments(&keys, Segments::Rows(len), Order::Descending)
            .unwrap();
        assert_eq!(
            indices,
            reference(&keys, Segments::Rows(len), Order::Descending),
            "argsort rows of {len}"
        );
    }
}

#[test]
fn random_rows_and_segments() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let seed = test_seed(2026);
    let mut rng = StdRng::seed_from_u64(seed);
    for case in 0..20 {
        let len = rng.random_range(1..12_000usize);
        let rows = rng.random_range(1..(200_000 / len).max(2));
        let keys = keys_of::<i64>(len * rows, seed + case, case % 2 == 0);
        let order = ORDERS[case as usize % 2];
        let what = format!("case {case}: {rows} rows of {len} (seed {seed})");
        assert_segments_sort(&gpu, &keys, Segments::Rows(len), order, &what);
    }
}

/// Rows of `lens` of `K` (made by `make` from a length and a seed), in both orders: a block of
/// the register sort's tile or less, or two full ones and part of a third.
fn short_rows_of<K: SortKey>(gpu: &GpuSorter, lens: &[usize], make: impl Fn(usize, u64) -> Vec<K>) {
    let seed = test_seed(64);
    for (i, &len) in lens.iter().enumerate() {
        let rows = if i % 2 == 0 {
            2 * (SHORT_TILE as usize / len.next_power_of_two()) + 3
        } else {
            7
        };
        let keys = make(rows * len, seed + i as u64);
        let order = ORDERS[(i / 2) % 2];
        let what = format!("{:?} rows of {len}, {order:?} (seed {seed})", K::DTYPE);
        assert_segments_sort(gpu, &keys, Segments::Rows(len), order, &what);
    }
}

/// The lengths of the register sort of short segments (up to 64 keys; two threads to a row of
/// 33 ..= 64) and the first ones past it.
fn short_lengths() -> Vec<usize> {
    (1..=34).chain([47, 48, 63, 64, 65, 66, 127, 128]).collect()
}

/// f32 keys with NaNs, infinities and both zeros among ties.
fn floats_with_specials(n: usize, seed: u64) -> Vec<f32> {
    let mut keys = keys_of::<f32>(n, seed, seed % 2 == 0);
    sprinkle_specials(&mut keys, 3);
    keys
}

#[test]
fn short_rows_of_every_length_and_key_type() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let lens = short_lengths();
    let ties = |seed: u64| seed % 3 == 0;
    short_rows_of::<u32>(&gpu, &lens, |n, s| keys_of(n, s, ties(s)));
    short_rows_of::<i32>(&gpu, &lens, |n, s| keys_of(n, s, ties(s)));
    short_rows_of::<f32>(&gpu, &lens, floats_with_specials);
    short_rows_of::<u64>(&gpu, &lens, |n, s| keys_of(n, s, ties(s)));
    short_rows_of::<i64>(&gpu, &lens, |n, s| keys_of(n, s, ties(s)));
    short_rows_of::<f64>(&gpu, &lens, |n, s| {
        floats_with_specials(n, s)
            .into_iter()
            .map(f64::from)
            .collect()
    });
}

/// Rows of 2^p keys for every p from the register sort's longest rows to past the tile sort's
/// tile (which takes rows of keys alone of 2^7 ..= 2^13 keys, stopped after stage p), in both
/// orders: one row, five, and a count that fills no whole number of tiles (the last tile
/// short). Every way [`assert_segments_sort`] sorts (keys alone on the host and on the device
/// with guard keys past the end, which must stay; argsorts and pairs by the block sort).
fn power_of_two_rows_of<K: SortKey>(gpu: &GpuSorter, make: impl Fn(usize, u64) -> Vec<K>) {
    let seed = test_seed(128);
    for p in 6..=14u32 {
        let len = 1usize << p;
        let many = (3usize << 13 >> p.min(13)) + 3;
        for (i, rows) in [1usize, 5, many].into_iter().enumerate() {
            let order = ORDERS[(p as usize + i) % 2];
            let case = seed + u64::from(p) * 3 + i as u64;
            let keys = make(rows * len, case);
            let what = format!(
                "{:?}, {rows} rows of 2^{p}, {order:?} (seed {seed})",
                K::DTYPE
            );
            assert_segments_sort(gpu, &keys, Segments::Rows(len), order, &what);
        }
    }
}

#[test]
fn rows_of_a_power_of_two_around_the_tile_sort_every_key_type() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let ties = |seed: u64| seed % 2 == 0;
    power_of_two_rows_of::<u32>(&gpu, |n, s| keys_of(n, s, ties(s)));
    power_of_two_rows_of::<i32>(&gpu, |n, s| keys_of(n, s, ties(s)));
    power_of_two_rows_of::<f32>(&gpu, floats_with_specials);
    power_of_two_rows_of::<u64>(&gpu, |n, s| keys_of(n, s, ties(s)));
    power_of_two_rows_of::<i64>(&gpu, |n, s| keys_of(n, s, ties(s)));
    power_of_two_rows_of::<f64>(&gpu, |n, s| {
        floats_with_specials(n, s)
            .into_iter()
            .map(f64::from)
            .collect()
    });
}

/// The offsets of segments of `lens` one after another, from 0.
fn offsets_of(lens: Vec<usize>) -> Vec<usize> {
    let mut offsets = vec![0usize];
    for l in lens {
        offsets.push(offsets.last().unwrap() + l);
    }
    offsets
}

/// The offsets of segments of `lens` in a random order (a Fisher–Yates shuffle by `rng`).
fn shuffled_offsets(rng: &mut StdRng, mut lens: Vec<usize>) -> Vec<usize> {
    for i in (1..lens.len()).rev() {
        lens.swap(i, rng.random_range(0..=i));
    }
    offsets_of(lens)
}

/// Offsets of every length from 0 to past the register sort (each twice, in a random order),
/// with segments for the block sort and one longer than a block among them.
fn short_and_long_offsets(seed: u64) -> Vec<usize> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut lens: Vec<usize> = (0..=70).chain(0..=70).collect();
    lens.extend([100, 129, 1000, 5000, 8192, 9000]);
    shuffled_offsets(&mut rng, lens)
}

/// Sorts keys of `make` cut by `offsets` in both orders, and again cut by the offsets less
/// `trim` at each end (so that keys before the first offset and after the last are in no
/// segment); ten keys past the last offset are in no segment in either.
fn offsets_every_order<K: SortKey>(
    gpu: &GpuSorter,
    (offsets, trim): (&[usize], usize),
    seed: u64,
    label: &str,
    make: impl Fn(usize, u64) -> Vec<K>,
) {
    let n = *offsets.last().unwrap();
    for (i, order) in ORDERS.into_iter().enumerate() {
        let keys = make(n + 10, seed + i as u64);
        let what = format!("{:?} {label}, {order:?} (seed {seed})", K::DTYPE);
        assert_segments_sort(gpu, &keys, Segments::Offsets(offsets), order, &what);
        let inner = &offsets[trim..offsets.len() - trim];
        assert_segments_sort(gpu, &keys, Segments::Offsets(inner), order, &what);
    }
}

fn short_and_long_segments_of<K: SortKey>(gpu: &GpuSorter, keys: impl Fn(usize, u64) -> Vec<K>) {
    let seed = test_seed(33);
    let offsets = short_and_long_offsets(seed);
    offsets_every_order(gpu, (&offsets, 5), seed, "short and long segments", keys);
}

#[test]
fn short_segments_among_long_ones_every_key_type() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let ties = |seed: u64| seed % 2 == 0;
    short_and_long_segments_of::<u32>(&gpu, |n, s| keys_of(n, s, ties(s)));
    short_and_long_segments_of::<i32>(&gpu, |n, s| keys_of(n, s, ties(s)));
    short_and_long_segments_of::<f32>(&gpu, floats_with_specials);
    short_and_long_segments_of::<u64>(&gpu, |n, s| keys_of(n, s, ties(s)));
    short_and_long_segments_of::<i64>(&gpu, |n, s| keys_of(n, s, ties(s)));
    short_and_long_segments_of::<f64>(&gpu, |n, s| {
        floats_with_specials(n, s)
            .into_iter()
            .map(f64::from)
            .collect()
    });
}

/// 8-byte keys of type `K` with many ties every other seed; f64 with NaNs, infinities and both
/// zeros.
fn wide_keys<K: SortKey>(n: usize, seed: u64) -> Vec<K> {
    keys_of(n, seed, seed % 2 == 0)
}

fn wide_floats(n: usize, seed: u64) -> Vec<f64> {
    floats_with_specials(n, seed)
        .into_iter()
        .map(f64::from)
        .collect()
}

/// Rows longer than a block's tile, of a power of two and not, for `K`.
fn long_rows_of<K: SortKey>(gpu: &GpuSorter, make: impl Fn(usize, u64) -> Vec<K>) {
    let seed = test_seed(8193);
    for (i, (len, rows)) in [
        (8193usize, 3usize),
        (10_000, 5),
        (16_384, 4),
        (20_000, 2),
        (40_000, 1),
    ]
    .into_iter()
    .enumerate()
    {
        let order = ORDERS[i % 2];
        let keys = make(len * rows, seed + i as u64);
        let what = format!(
            "{:?} {rows} rows of {len}, {order:?} (seed {seed})",
            K::DTYPE
        );
        assert_segments_sort(gpu, &keys, Segments::Rows(len), order, &what);
    }
}

#[test]
fn long_rows_of_8_byte_keys() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    long_rows_of::<u64>(&gpu, wide_keys);
    long_rows_of::<i64>(&gpu, wide_keys);
    long_rows_of::<f64>(&gpu, wide_floats);
}

/// Offsets with long segments (two of one padded length, one alone in its padded length, some
/// of a power of two) among empty, short and block-sized ones.
fn long_among_short_offsets(seed: u64) -> Vec<usize> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut lens: Vec<usize> = vec![8193, 9000, 16_384, 20_000, 30_000, 70_000, 10_000];
    lens.extend([0, 0, 1, 2, 33, 64, 100, 4096, 8192, 0]);
    lens.extend((0..200).map(|_| rng.random_range(0..200)));
    shuffled_offsets(&mut rng, lens)
}

fn long_among_short_of<K: SortKey>(gpu: &GpuSorter, make: impl Fn(usize, u64) -> Vec<K>) {
    let seed = test_seed(16_385);
    let offsets = long_among_short_offsets(seed);
    offsets_every_order(gpu, (&offsets, 3), seed, "long among short segments", make);
}

#[test]
fn long_segments_of_8_byte_keys_among_short_ones() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    long_among_short_of::<u64>(&gpu, wide_keys);
    long_among_short_of::<i64>(&gpu, wide_keys);
    long_among_short_of::<f64>(&gpu, wide_floats);
}

#[test]
fn one_huge_8_byte_segment_among_many_tiny_ones() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    let seed = test_seed(300_000);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut lens: Vec<usize> = (0..3000).map(|_| rng.random_range(0..8)).collect();
    lens.insert(1234, 300_000);
    let offsets = offsets_of(lens);
    let n = *offsets.last().unwrap();
    for (i, order) in ORDERS.into_iter().enumerate() {
        let what = format!("one huge segment, {order:?} (seed {seed})");
        let keys = wide_keys::<u64>(n, seed + i as u64);
        assert_segments_sort(&gpu, &keys, Segments::Offsets(&offsets), order, &what);
        let keys = wide_floats(n, seed + 2 + i as u64);
        assert_segments_sort(&gpu, &keys, Segments::Offsets(&offsets), order, &what);
    }
}

/// One long segment (or row) of `K`, of lengths no power of two: an argsort sorts it by the
/// radix sort that moves only indices, whose passes read the keys in place through them.
fn one_long_segment_of<K: SortKey>(gpu: &GpuSorter, make: impl Fn(usize, u64) -> Vec<K>) {
    let seed = test_seed(100_003);
    for (i, n) in [100_003usize, (1 << 17) + 1, 70_001]
        .into_iter()
        .enumerate()
    {
        let offsets = [0, n];
        for order in ORDERS {
            let keys = make(n, seed + i as u64);
            let what = format!(
                "{:?}: one segment of {n}, {order:?} (seed {seed})",
                K::DTYPE
            );
            assert_segments_sort(gpu, &keys, Segments::Offsets(&offsets), order, &what);
            let what = format!("{:?}: one row of {n}, {order:?} (seed {seed})", K::DTYPE);
            assert_segments_sort(gpu, &keys, Segments::Rows(n), order, &what);
        }
    }
}

#[test]
fn one_long_segment_every_key_type() {
    let Some(gpu) = gpu_or_skip("segmented sort") else {
        return;
    };
    one_long_segment_of::<u32>(&gpu, |n, seed| keys_of(n, seed, seed % 2 == 0));
    one_long_segment_of::<i32>(&gpu, |n, seed| keys_of(n, seed, seed % 2 == 1));
    one_long_segment_of::<f32>(&gpu, floats_with_specials);
    one_long_segment_of::<u64>(&gpu, wide_keys);
    one_long_segment_of::<i64>(&gpu, wide_keys);
    one_long_segment_of::<f64>(&gpu, wide_floats);
}
