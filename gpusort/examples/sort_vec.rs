//! Sort a `Vec<f32>` on the GPU, or on the CPU when there is no GPU.
//!
//!     cargo run --release -p gpusort --example sort_vec

use gpusort::cpu::CpuAlgo;
use gpusort::{Error, GpuSorter, Order};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A million random floats and the values whose order `total_cmp` fixes.
    let mut keys: Vec<f32> = (0..1u64 << 20).map(random_f32).collect();
    keys.extend([
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
    ]);
    let input = keys.clone();

    let sorted_on = match GpuSorter::new() {
        Ok(gpu) => {
            // One device buffer of n keys: upload, sort in place, download.
            gpu.sort_unstable(&mut keys, Order::Ascending)?;
            gpu.device_name().to_string()
        }
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no GPU ({e}): sorting on the CPU");
            CpuAlgo::Radix.sort(&mut keys, Order::Ascending);
            "the CPU (radix sort)".to_string()
        }
        Err(e) => return Err(e.into()),
    };

    // Bit for bit what std's sort gives, -NaN first and NaN last.
    let mut expected = input;
    expected.sort_by(f32::total_cmp);
    assert!(
        keys.iter()
            .map(|k| k.to_bits())
            .eq(expected.iter().map(|k| k.to_bits())),
        "not what std's sort gives"
    );
    let n = keys.len();
    println!(
        "sorted {n} f32 keys on {sorted_on}: {:?} {:?} {:?} … {:?} {:?}",
        keys[0],
        keys[1],
        keys[2],
        keys[n - 2],
        keys[n - 1]
    );
    Ok(())
}

/// Key `i` of a reproducible input: a multiplicative hash of `i`, in [-0.5, 0.5).
fn random_f32(i: u64) -> f32 {
    (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as f32 / (1 << 24) as f32 - 0.5
}
