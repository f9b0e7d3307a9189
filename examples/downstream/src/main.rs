//! Sorts a million `f32` keys and 2^20 `u64` keys stably by key with values, on the GPU where
//! there is one (checked against std's sort), and on the CPU where there is none. On the GPU it
//! also sorts, argsorts and takes the top-k of keys that cudarc allocated and filled, on
//! cudarc's own stream, and reads the results back through cudarc.
//!
//!     cargo +stable run --release --manifest-path examples/downstream/Cargo.toml

use cudarc::driver::CudaContext;
use gpusort::cpu::CpuAlgo;
use gpusort::{Error, GpuSorter, Order};

fn main() -> Result<(), Box<dyn std::error::Error>> {
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
            gpu.sort_by_key(&mut keys, &mut values, Order::Ascending)?;
            println!("sorted on {}", gpu.device_name());
            on_cudarc_stream(&gpu)?;
        }
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no CUDA GPU ({e}): sorting on the CPU");
            CpuAlgo::Radix.sort(&mut floats, Order::Ascending);
            let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(values).collect();
            pairs.sort_by_key(|&(k, _)| k);
            (keys, values) = pairs.into_iter().unzip();
        }
        Err(e) => return Err(e.into()),
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

/// Keys in cudarc's memory, sorted, argsorted and top-k'ed on cudarc's stream: the library
/// queues its work behind cudarc's copy in, and cudarc's copy out waits for it on the stream.
fn on_cudarc_stream(gpu: &GpuSorter) -> Result<(), Box<dyn std::error::Error>> {
    let stream = CudaContext::new(0)?.new_stream()?;
    let host: Vec<u32> = (0..1u32 << 20)
        .map(|i| i.wrapping_mul(0x9e37_79b9) >> 8)
        .collect();
    let mut keys = stream.clone_htod(&host)?;
    let unsorted = stream.clone_htod(&host)?;
    let mut indices = stream.alloc_zeros::<u32>(host.len())?;
    let mut top = stream.alloc_zeros::<u32>(8)?;
    let mut top_indices = stream.alloc_zeros::<u64>(8)?;

    let mut queue = gpu.queue_on(&*stream)?;
    queue.sort(&mut keys, Order::Ascending)?;
    queue.argsort(&unsorted, &mut indices, Order::Ascending)?;
    queue.top_k(
        &unsorted,
        host.len(),
        8,
        Order::Descending,
        &mut top,
        &mut top_indices,
    )?;

    let sorted = stream.clone_dtoh(&keys)?;
    let indices = stream.clone_dtoh(&indices)?;
    let (top, top_indices) = (stream.clone_dtoh(&top)?, stream.clone_dtoh(&top_indices)?);
    let mut expected = host.clone();
    expected.sort();
    assert!(sorted == expected, "cudarc keys: not what std's sort gives");
    let mut expected_indices: Vec<u32> = (0..host.len() as u32).collect();
    expected_indices.sort_by_key(|&i| host[i as usize]); // stable
    assert!(
        indices == expected_indices,
        "cudarc argsort: not std's stable order"
    );
    let mut best: Vec<(u32, u64)> = host.iter().copied().zip(0..).collect();
    best.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let (want, want_indices): (Vec<u32>, Vec<u64>) = best[..8].iter().copied().unzip();
    assert!(
        top == want && top_indices == want_indices,
        "cudarc top-k: not the 8 largest"
    );
    println!(
        "{} u32 keys in cudarc's memory sorted, argsorted and top-8 selected on its stream",
        host.len()
    );
    Ok(())
}
