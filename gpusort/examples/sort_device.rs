//! Keys that stay on the GPU: upload once, sort in place on the device (no temporary device
//! memory), copy back, verify. Without a GPU it runs the same bitonic network on the CPU.
//!
//!     cargo run --release -p gpusort --example sort_device

use cust::memory::CopyDestination;
use gpusort::cpu::CpuAlgo;
use gpusort::{Error, GpuSorter, Order};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A reproducible input: a multiplicative hash of each index.
    let input: Vec<u64> = (0..1u64 << 22)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17))
        .collect();
    let order = Order::Descending;
    let mut expected = input.clone();
    expected.sort_unstable_by(|a, b| b.cmp(a));

    let gpu = match GpuSorter::new() {
        Ok(gpu) => gpu,
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no GPU ({e}): sorting on the CPU with the same bitonic network");
            let mut keys = input.clone();
            CpuAlgo::BitonicN.sort(&mut keys, order);
            assert_eq!(keys, expected, "not what std's sort gives");
            println!(
                "sorted {} u64 keys descending on the CPU; verified",
                keys.len()
            );
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };

    // `Vec<u64>` → `DeviceBuffer<u64>` (derefs to `DeviceSlice<u64>`, the device `&mut [u64]`).
    let mut on_device = gpu.upload(&input)?;
    let (free_before, _) = gpu.memory_info()?;
    gpu.sort_unstable_device(&mut on_device, order)?; // in place; waits for the sort
    let (free_after, _) = gpu.memory_info()?;

    // Back to the host, and checked against std's sort.
    let mut keys = vec![0u64; input.len()];
    on_device.copy_to(&mut keys[..])?;
    assert_eq!(keys, expected, "not what std's sort gives");
    println!(
        "sorted {} u64 keys descending on {} in place (free device memory before and after: \
         {} and {} MiB); verified",
        keys.len(),
        gpu.device_name(),
        free_before >> 20,
        free_after >> 20
    );
    Ok(())
}
