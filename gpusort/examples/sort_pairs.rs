//! Sorts keys with a payload: temperatures (f32 keys) carrying the index of their station
//! (u32 values), stably, so equal temperatures keep their stations' order.
//! Run: `cargo run --release -p gpusort --example sort_pairs`.

use gpusort::argsort::{argsort_cpu, gather};
use gpusort::{GpuSorter, Order};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut temperatures = vec![12.5f32, -3.0, 7.25, 12.5, -0.0, 0.0, 31.0, 7.25];
    let mut stations: Vec<u32> = (0..temperatures.len() as u32).collect();
    match GpuSorter::new() {
        Ok(gpu) => {
            gpu.sort_by_key(&mut temperatures, &mut stations, Order::Descending)?;
            println!("sorted on {}", gpu.device_name());
        }
        Err(e) => {
            // Without a GPU: the same stable order through the CPU argsort and a gather.
            println!("no GPU ({e}); sorting on the CPU");
            let permutation = argsort_cpu(&temperatures, Order::Descending);
            temperatures = gather(&temperatures, &permutation);
            stations = gather(&stations, &permutation);
        }
    }
    for (t, s) in temperatures.iter().zip(&stations) {
        println!("{t:>6} °C  station {s}");
    }
    // Stable: of the equal keys 12.5 (stations 0 and 3) and 7.25 (2 and 7), the earlier first.
    assert_eq!(stations, [6, 0, 3, 2, 7, 5, 4, 1]);
    Ok(())
}
