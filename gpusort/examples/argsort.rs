//! Sort records by one of their fields: the stable permutation of the field's keys, then the
//! records gathered through it.
//!
//!     cargo run --release -p gpusort --example argsort

use gpusort::argsort::{argsort_cpu, gather};
use gpusort::{GpuSorter, Order};

#[derive(Clone, Copy, Debug)]
struct Reading {
    station: &'static str,
    hour: u32,
    celsius: f32,
}

fn main() {
    let readings = [
        Reading {
            station: "Oslo",
            hour: 6,
            celsius: -3.5,
        },
        Reading {
            station: "Lima",
            hour: 6,
            celsius: 17.0,
        },
        Reading {
            station: "Oslo",
            hour: 12,
            celsius: 1.5,
        },
        Reading {
            station: "Pune",
            hour: 6,
            celsius: 24.0,
        },
        Reading {
            station: "Lima",
            hour: 12,
            celsius: 17.0,
        },
        Reading {
            station: "Pune",
            hour: 12,
            celsius: f32::NAN,
        }, // a broken sensor
        Reading {
            station: "Oslo",
            hour: 18,
            celsius: -0.0,
        },
    ];

    // The key column, then its stable permutation: equal temperatures keep their input order.
    // On the GPU (the stable merge sort of (key, index) pairs) where there is one, else on the
    // CPU (a radix sort); floats ordered like `total_cmp`.
    let celsius: Vec<f32> = readings.iter().map(|r| r.celsius).collect();
    let warmest_first: Vec<u64> = match GpuSorter::new() {
        Ok(gpu) => {
            println!("argsort on {}", gpu.device_name());
            gpu.argsort(&celsius, Order::Descending)
                .expect("the GPU argsort")
        }
        Err(e) => {
            println!("argsort on the CPU: {e}");
            argsort_cpu(&celsius, Order::Descending)
        }
    };
    assert_eq!(warmest_first, [5, 3, 1, 4, 2, 6, 0]);

    // Gather every record (or any other column) through the permutation.
    let sorted = gather(&readings, &warmest_first);
    println!("by temperature, warmest first (NaN sorts above +inf, like total_cmp):");
    for r in &sorted {
        println!("  {:>5.1} °C  {} at {:02}:00", r.celsius, r.station, r.hour);
    }
    // Stable: Lima 06:00 stays before Lima 12:00 at 17.0 °C.
    assert_eq!(
        sorted[2..4].iter().map(|r| r.hour).collect::<Vec<_>>(),
        [6, 12]
    );
    assert!(sorted[0].celsius.is_nan());
}
