//! Sorts a million `f32` keys and 2^20 `u64` keys stably by key with values, on the GPU where
//! there is one (checked against std's sort), and on the CPU where there is none.
//!
//!     cargo +stable run --release --manifest-path examples/downstream/Cargo.toml

use gpusort::cpu::CpuAlgo;
use gpusort::{Error, GpuSorter, Order};

fn main() -> Result<(), Error> {
    // Reproducible keys: a multiplicative hash of each index, and the values whose order
    // `total_cmp` fixes.
    let hash = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut floats: Vec<f32> = (0..1u64 << 20)
        .map(|i| (hash(i) >> 40) as f32 / (1 << 24) as f32 - 0.5)
        .chain([f32::NAN, f32::NEG_INFINITY, -0.0, 0.0])
        .collect();
    let mut expected_floats = floats.clone();
    expected_floats.sort_by(f32::total_cmp);

    let mut keys: Vec<u64> = (0..1u64 << 20).map(|i| hash(i) >> 48).collect();
    let mut values: Vec<u32> = (0..keys.len() as u32).collect();
    let mut expected_pairs: Vec<(u64, u32)> = keys.iter().copied().zip(values.clone()).collect();
    expected_pairs.sort_by_key(|&(k, _)| k); // stable: equal keys keep their values' order

    match GpuSorter::new() {
        Ok(gpu) => {
            gpu.sort_unstable(&mut floats, Order::Ascending)?;
            gpu.sort_pairs(&mut keys, &mut values, Order::Ascending)?;
            println!("sorted on {}", gpu.device_name());
        }
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no CUDA GPU ({e}): sorting on the CPU");
            CpuAlgo::Radix.sort(&mut floats, Order::Ascending);
            let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(values).collect();
            pairs.sort_by_key(|&(k, _)| k);
            (keys, values) = pairs.into_iter().unzip();
        }
        Err(e) => return Err(e),
    }

    assert!(
        floats
            .iter()
            .map(|k| k.to_bits())
            .eq(expected_floats.iter().map(|k| k.to_bits())),
        "f32 keys: not what std's sort gives"
    );
    let pairs: Vec<(u64, u32)> = keys.into_iter().zip(values).collect();
    assert!(
        pairs == expected_pairs,
        "pairs: not what std's stable sort gives"
    );
    println!(
        "{} f32 keys and {} (u64, u32) pairs sorted and checked against std's sort",
        floats.len(),
        pairs.len()
    );
    Ok(())
}
