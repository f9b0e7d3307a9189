//! Every CPU sort against std's, through one test body: std's named patterns, lengths around
//! powers of two, all key types and both orders; property tests with arbitrary keys.

use gpusort::cpu::CpuAlgo;
use gpusort::{Order, SortKey};
use gpusort_cli::inputs::{Dist, generate};
use gpusort_cli::verify::check;
use gpusort_suite::{lengths_around_powers_of_two, sprinkle_specials};
use proptest::prelude::*;

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];

fn assert_sorts<K: SortKey>(algo: CpuAlgo, input: &[K], order: Order) {
    let mut keys = input.to_vec();
    algo.sort(&mut keys, order);
    if let Err(m) = check(&keys, input, order) {
        panic!(
            "{algo}: n = {}, {} {order:?}: {m}; input starts {:?}",
            input.len(),
            K::DTYPE,
            &input[..input.len().min(16)]
        );
    }
}

fn patterns_and_lengths<K: SortKey>() {
    for algo in CpuAlgo::ALL {
        for dist in Dist::ALL {
            for n in lengths_around_powers_of_two(11)
                .into_iter()
                .chain([3000, 5001])
            {
                let input: Vec<K> = generate(n, dist, n as u64);
                for order in ORDERS {
                    assert_sorts(algo, &input, order);
                }
            }
        }
    }
}

#[test]
fn u32_patterns_and_lengths() {
    patterns_and_lengths::<u32>();
}

#[test]
fn i32_patterns_and_lengths() {
    patterns_and_lengths::<i32>();
}

#[test]
fn f32_patterns_and_lengths() {
    patterns_and_lengths::<f32>();
}

#[test]
fn wide_keys_patterns_and_lengths() {
    patterns_and_lengths::<u64>();
    patterns_and_lengths::<i64>();
    patterns_and_lengths::<f64>();
}

#[test]
fn floats_sort_in_total_order() {
    let mut keys = vec![
        1.0f32,
        f32::NAN,
        -0.0,
        f32::NEG_INFINITY,
        0.0,
        -f32::NAN,
        f32::INFINITY,
        -1.0,
    ];
    for algo in CpuAlgo::ALL {
        algo.sort(&mut keys, Order::Ascending);
        let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
        let expected: Vec<u32> = [
            -f32::NAN,
            f32::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1.0,
            f32::INFINITY,
            f32::NAN,
        ]
        .iter()
        .map(|k| k.to_bits())
        .collect();
        assert_eq!(bits, expected, "{algo}");
    }
}

#[test]
fn bitonic_on_many_threads_with_large_blocks() {
    // Large enough that the parallel bitonic splits blocks across threads.
    let mut input: Vec<f32> = generate((1 << 17) + 5, Dist::Uniform, 9);
    sprinkle_specials(&mut input, 7);
    for order in ORDERS {
        assert_sorts(CpuAlgo::BitonicN, &input, order);
    }
}

/// Keys made from the bits of `u64`s: every value of the type, NaNs of both signs and signed
/// zeros included, through `from_bits`.
fn from_bits<K: SortKey>(bits: &[u64]) -> Vec<K>
where
    K::Bits: TryFrom<u64>,
{
    bits.iter()
        .map(|&b| {
            let b = if size_of::<K>() == 4 { b >> 32 } else { b };
            K::from_bits(K::Bits::try_from(b).ok().expect("fits the key's width"))
        })
        .collect()
}

/// The radix sort at the sizes where its steps change: std's sort below 1024 keys, one scatter
/// piece up to 2^16, several pieces beyond, buckets large enough to be split again; keys of
/// every kind (few distinct values, a narrow range, all bits random, specials), all six types.
fn radix_sizes<K: SortKey>()
where
    K::Bits: TryFrom<u64>,
{
    for n in [1023, 1024, 1025, (1 << 16) + 1, (1 << 18) + 7] {
        for dist in [
            Dist::Uniform,
            Dist::Few,
            Dist::Equal,
            Dist::Sorted,
            Dist::Blog,
        ] {
            let input: Vec<K> = generate(n, dist, n as u64);
            for order in ORDERS {
                assert_sorts(CpuAlgo::Radix, &input, order);
            }
        }
        // Every bit random: NaNs, infinities, subnormals and both zeros among the floats.
        let mut state = n as u64;
        let bits: Vec<u64> = (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                state ^ (state >> 29)
            })
            .collect();
        let mut input: Vec<K> = from_bits(&bits);
        // Runs of signed zeros and of both NaNs, so that equal ordered bits repeat.
        let specials = from_bits::<K>(&[0, 1 << 63, u64::MAX, (1 << 63) | 1]);
        for (i, k) in input.iter_mut().enumerate().step_by(7) {
            *k = specials[i % specials.len()];
        }
        for order in ORDERS {
            assert_sorts(CpuAlgo::Radix, &input, order);
        }
    }
}

#[test]
fn radix_at_its_thresholds_narrow_keys() {
    radix_sizes::<u32>();
    radix_sizes::<i32>();
    radix_sizes::<f32>();
}

#[test]
fn radix_at_its_thresholds_wide_keys() {
    radix_sizes::<u64>();
    radix_sizes::<i64>();
    radix_sizes::<f64>();
}

proptest! {
    #[test]
    fn radix_sorts_arbitrary_bits(
        bits in proptest::collection::vec(any::<u64>(), 0..5000),
        narrow in 0u32..64,
        desc: bool,
    ) {
        // Keys of `narrow` random low bits (a narrow range, as from small integers) or all.
        let bits: Vec<u64> = bits.iter().map(|b| b >> narrow).collect();
        let order = if desc { Order::Descending } else { Order::Ascending };
        assert_sorts(CpuAlgo::Radix, &from_bits::<u32>(&bits), order);
        assert_sorts(CpuAlgo::Radix, &from_bits::<i32>(&bits), order);
        assert_sorts(CpuAlgo::Radix, &from_bits::<f32>(&bits), order);
        assert_sorts(CpuAlgo::Radix, &from_bits::<u64>(&bits), order);
        assert_sorts(CpuAlgo::Radix, &from_bits::<i64>(&bits), order);
        assert_sorts(CpuAlgo::Radix, &from_bits::<f64>(&bits), order);
    }

    #[test]
    fn bitonic_sorts_arbitrary_u32(keys in proptest::collection::vec(any::<u32>(), 0..2000), desc: bool) {
        let order = if desc { Order::Descending } else { Order::Ascending };
        assert_sorts(CpuAlgo::Bitonic1, &keys, order);
        assert_sorts(CpuAlgo::BitonicN, &keys, order);
    }

    #[test]
    fn bitonic_sorts_arbitrary_f32_bits(bits in proptest::collection::vec(any::<u32>(), 0..2000), desc: bool) {
        let keys: Vec<f32> = bits.into_iter().map(f32::from_bits).collect();
        let order = if desc { Order::Descending } else { Order::Ascending };
        assert_sorts(CpuAlgo::Bitonic1, &keys, order);
        assert_sorts(CpuAlgo::BitonicN, &keys, order);
    }

    #[test]
    fn bitonic_sorts_arbitrary_i32(keys in proptest::collection::vec(any::<i32>(), 0..2000), desc: bool) {
        let order = if desc { Order::Descending } else { Order::Ascending };
        assert_sorts(CpuAlgo::Bitonic1, &keys, order);
    }
}
