//! Keys that stay on the GPU: upload once, sort in place on the device (queued on the sorter's
//! stream, then waited for), copy back, verify. Without a GPU it runs the bitonic network on
//! the CPU.
//!
//!     cargo run --release -p gpusort --example sort_device

use cust::memory::{CopyDestination, mem_get_info};
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
    // `cust`'s own calls act on the current context: the sorter's, once bound to this thread.
    gpu.bind()?;
    let (free_before, _) = mem_get_info()?;
    // `auto`'s sort, in place; the merge or radix sort's scratch comes from the device's memory
    // pool in the stream's order and goes back to it once the sort has run.
    let mut queue = gpu.queue()?;
    queue.sort_unstable(&mut on_device, order)?; // returns once the sort is queued
    queue.synchronize()?; // waits for it
    let (free_after, _) = mem_get_info()?;

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
