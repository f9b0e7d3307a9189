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

proptest! {
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
