//! Keys that stay on the GPU: upload once, sort in place on the device (no temporary device
//! memory), copy back, verify. Without a GPU it runs the same bitonic network on the CPU.
//!
//!     cargo run --release -p host --example sort_device

use cust::memory::CopyDestination;
use gpusort::cpu::par_bitonic_sort;
use gpusort::inputs::{Dist, generate};
use gpusort::{Error, GpuSorter, Order, verify};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let input: Vec<u64> = generate(1 << 22, Dist::Uniform, 7);
    let order = Order::Descending;

    let gpu = match GpuSorter::new() {
        Ok(gpu) => gpu,
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no GPU ({e}): sorting on the CPU with the same bitonic network");
            let mut keys = input.clone();
            par_bitonic_sort(&mut keys, order);
            verify::check(&keys, &input, order)?;
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
    verify::check(&keys, &input, order)?;
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
