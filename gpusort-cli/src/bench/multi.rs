//! The multi-GPU sweep (`gpusort bench --gpus 1,2,4`): the sort of keys already on the GPUs
//! ([`MultiGpuSorter::sort_device`]) for each GPU count, key type, order and size, keys made and
//! checked on the GPUs, written to `bench-multi.csv` and `bench-multi.md`.

use super::{order_name, size_name};
use crate::error::Result;
use crate::keys::{DType, Order, SortKey};
use crate::multi::{MultiGpuSorter, MultiStats};
use crate::timing::Timing;
use crate::with_key_type;
use std::fmt::Write as _;

/// One timed multi-GPU sort.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiMeasurement {
    /// GPUs used.
    pub gpus: usize,
    /// The key type.
    pub dtype: DType,
    /// The order.
    pub order: Order,
    /// Number of keys, over all GPUs.
    pub n: u64,
    /// Median, min and max time of one sort, in ms (host clock, keys on the GPUs before and
    /// after, buffers allocated before).
    pub ms: Timing,
    /// Every repetition's result was sorted within and across GPUs with the input's multiset
    /// checksum.
    pub verified: bool,
    /// The phases of the median repetition.
    pub median_stats: MultiStats,
}

/// The exchange's path in the tables: the links the sort used ("peer-to-peer", "host-staged",
/// or both), or why there were none.
///
/// ```
/// use gpusort::multi::{Link, MultiStats};
/// use gpusort_cli::bench::multi::path;
///
/// let mut stats = MultiStats {
///     gpus: 2,
///     n: 10,
///     links: vec![Link::Peer, Link::Host],
///     exchanged_bytes: 0,
///     sort_ms: 1.0,
///     select_ms: 0.5,
///     exchange_ms: 0.25,
///     merge_ms: 0.25,
///     total_ms: 2.0,
/// };
/// assert_eq!(path(&stats), "peer-to-peer + host-staged");
/// stats.links.clear();
/// assert_eq!(path(&stats), "none (no key changed GPU)");
/// ```
pub fn path(stats: &MultiStats) -> String {
    match stats.links.as_slice() {
        [] if stats.gpus == 1 => "none (one GPU)".into(),
        [] => "none (no key changed GPU)".into(),
        links => {
            let names: Vec<String> = links.iter().map(ToString::to_string).collect();
            names.join(" + ")
        }
    }
}

/// The CSV's header line: the bench CSV's columns with the GPU count after the algorithm and
/// the exchange path at the end.
pub const CSV_HEADER: &str =
    "algo,gpus,dtype,order,n,ms_median,ms_min,ms_max,keys_per_s,verified,path";

/// Times `reps` sorts (after one warm-up) of `n` random keys of `dtype` made on the GPUs of
/// `multi`, each checked on the GPUs.
///
/// # Errors
/// Out of device memory, or a CUDA error.
pub fn measure(
    multi: &MultiGpuSorter,
    dtype: DType,
    order: Order,
    n: u64,
    reps: u32,
    seed: u64,
) -> Result<MultiMeasurement> {
    with_key_type!(dtype, K => measure_as::<K>(multi, order, n, reps, seed))
}

fn measure_as<K: SortKey>(
    multi: &MultiGpuSorter,
    order: Order,
    n: u64,
    reps: u32,
    seed: u64,
) -> Result<MultiMeasurement> {
    let mut parts = multi.alloc_parts::<K>(n)?;
    let mut runs: Vec<MultiStats> = Vec::new();
    let mut verified = true;
    for rep in 0..=reps {
        multi.fill_random(&mut parts, seed.wrapping_add(u64::from(rep)))?;
        let before = multi.check(&parts, order)?;
        let stats = multi.sort_device(&mut parts, order)?;
        let after = multi.check(&parts, order)?;
        verified &= after.sorted() && after.checksum == before.checksum && after.n == n;
        if rep > 0 {
            runs.push(stats);
        }
    }
    runs.sort_by(|a, b| a.total_ms.total_cmp(&b.total_ms));
    let ms = Timing::of(runs.iter().map(|run| run.total_ms).collect());
    Ok(MultiMeasurement {
        gpus: multi.gpus().len(),
        dtype: K::DTYPE,
        order,
        n,
        ms,
        verified,
        median_stats: runs[runs.len() / 2].clone(),
    })
}

/// The measurements as CSV ([`CSV_HEADER`]); algo `multi_merge`.
pub fn csv(measurements: &[MultiMeasurement]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for m in measurements {
        let row = super::report::csv_row(m.dtype, m.order, m.n, &m.ms, m.verified);
        let path = path(&m.median_stats);
        let _ = writeln!(out, "multi_merge,{},{row},{path}", m.gpus);
    }
    out
}

/// The measurements as a markdown table with each sort's phases and its speed-up over the
/// one-GPU row of the same key type, order and size (when there is one).
pub fn markdown(device: &str, date: &str, measurements: &[MultiMeasurement]) -> String {
    let mut out = format!(
        "# gpusort multi-GPU bench\n\n{device}, {date}. Keys made and checked on the GPUs; times \
         on the host clock from keys on the GPUs to keys sorted across them (median of the reps).\n\n\
         | GPUs | dtype | order | n | median ms | speed-up | sort | cuts | exchange | merge | path | verified |\n\
         |---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n"
    );
    for m in measurements {
        let one = measurements
            .iter()
            .find(|o| o.gpus == 1 && (o.dtype, o.order, o.n) == (m.dtype, m.order, m.n));
        let speedup = one.map_or("-".into(), |o| format!("{:.2}x", o.ms.median / m.ms.median));
        let s = &m.median_stats;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} |",
            m.gpus,
            m.dtype,
            order_name(m.order),
            size_name(m.n as usize),
            m.ms.median,
            speedup,
            s.sort_ms,
            s.select_ms,
            s.exchange_ms,
            s.merge_ms,
            path(s),
            if m.verified { "yes" } else { "FAILED" }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multi::Link;

    fn measurement(gpus: usize, median: f64) -> MultiMeasurement {
        MultiMeasurement {
            gpus,
            dtype: DType::U32,
            order: Order::Ascending,
            n: 1 << 30,
            ms: Timing::of(vec![median]),
            verified: true,
            median_stats: MultiStats {
                gpus,
                n: 1 << 30,
                links: if gpus > 1 { vec![Link::Peer] } else { vec![] },
                exchanged_bytes: 0,
                sort_ms: median,
                select_ms: 0.0,
                exchange_ms: 0.0,
                merge_ms: 0.0,
                total_ms: median,
            },
        }
    }

    #[test]
    fn csv_and_markdown_record_gpus_path_and_speedup() {
        let ms = [measurement(1, 100.0), measurement(2, 50.0)];
        let csv = csv(&ms);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert!(lines[2].starts_with("multi_merge,2,u32,asc,1073741824,50.000000,"));
        assert!(lines[2].ends_with(",true,peer-to-peer"), "{}", lines[2]);
        let md = markdown("H200", "2026-11-21", &ms);
        assert!(
            md.contains("| 2 | u32 | asc | 2^30 | 50.000 | 2.00x |"),
            "{md}"
        );
    }
}
