//! The sweep's results as CSV (`bench.csv`) and as a markdown table (`bench.md`).

use super::peers::PeerRow;
use super::{Measurement, order_name, size_name};
use crate::keys::{DType, Order};
use crate::timing::Timing;
use std::fmt::Write as _;

/// The CSV's header line.
///
/// ```
/// assert!(gpusort_cli::bench::report::CSV_HEADER.starts_with("algo,dtype,order,n,"));
/// ```
pub const CSV_HEADER: &str = "algo,dtype,order,n,ms_median,ms_min,ms_max,keys_per_s,verified";

/// The measurements as CSV: [`CSV_HEADER`], then one line per measurement. Times in ms to the
/// nanosecond, keys per second at the median time, rounded to a whole key.
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::{Algo, Measurement, report::csv};
/// use gpusort::{DType, Order};
/// use gpusort_cli::timing::Timing;
///
/// let m = Measurement {
///     algo: Algo::CpuStd,
///     dtype: DType::F32,
///     order: Order::Descending,
///     n: 1024,
///     ms: Timing::of(vec![0.5]),
///     verified: true,
/// };
/// assert_eq!(
///     csv(&[m]).lines().nth(1),
///     Some("cpu_std,f32,desc,1024,0.500000,0.500000,0.500000,2048000,true")
/// );
/// ```
pub fn csv(measurements: &[Measurement]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for m in measurements {
        let row = csv_row(m.dtype, m.order, m.n as u64, &m.ms, m.verified);
        let _ = writeln!(out, "{},{row}", m.algo);
    }
    out
}

/// The columns from `dtype` to `verified` of a CSV row (shared with the multi-GPU CSV): times in
/// ms to the nanosecond, keys per second at the median time, rounded to a whole key.
pub(crate) fn csv_row(dtype: DType, order: Order, n: u64, ms: &Timing, verified: bool) -> String {
    format!(
        "{dtype},{},{n},{:.6},{:.6},{:.6},{:.0},{verified}",
        order_name(order),
        ms.median,
        ms.min,
        ms.max,
        super::keys_per_s(n as usize, ms.median),
    )
}

/// What the markdown report says above its table. See [`markdown`].
#[derive(Clone, Debug, PartialEq)]
pub struct About {
    /// The GPU's name, or "CPU only".
    pub device: String,
    /// When the sweep ran.
    pub date: String,
    /// Further lines: keys, repetitions, where the peers' rows come from.
    pub notes: Vec<String>,
}

/// A row of the markdown table: ours or a peer's.
struct Row<'a> {
    name: &'a str,
    dtype: DType,
    order: Order,
    n: usize,
    median: f64,
    min_max: Option<(f64, f64)>,
    keys_per_s: f64,
    verified: bool,
}

/// The markdown report: `about`, then one table row per measurement and per peer row, by key
/// type, order and size (ours before the peers' at the same size). Peers sort ascending and
/// report no min/max.
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::report::{About, markdown};
///
/// let about = About {
///     device: "CPU only".into(),
///     date: "2026-11-21 06:00 UTC".into(),
///     notes: vec!["Keys: uniform distribution, seed 42.".into()],
/// };
/// let md = markdown(&about, &[], &[]);
/// assert!(md.starts_with("# gpusort bench\n\n**Device:** CPU only"));
/// assert!(md.contains("| algo | dtype | order | n |"));
/// ```
pub fn markdown(about: &About, measurements: &[Measurement], peers: &[PeerRow]) -> String {
    let ours = measurements.iter().map(|m| Row {
        name: m.algo.name(),
        dtype: m.dtype,
        order: m.order,
        n: m.n,
        median: m.ms.median,
        min_max: Some((m.ms.min, m.ms.max)),
        keys_per_s: m.keys_per_s(),
        verified: m.verified,
    });
    let theirs = peers.iter().map(|p| Row {
        name: &p.peer,
        dtype: p.dtype,
        order: Order::Ascending,
        n: p.n,
        median: p.ms_median,
        min_max: None,
        keys_per_s: p.keys_per_s(),
        verified: p.correct,
    });
    let mut rows: Vec<Row<'_>> = ours.chain(theirs).collect();
    // Stable: measurement order (then the peers' files' order) within one key type, order, size.
    let dtype_rank = |d: DType| measurements.iter().position(|m| m.dtype == d);
    rows.sort_by_key(|r| (dtype_rank(r.dtype), r.dtype as u8, r.order as u8, r.n));

    let mut out = format!(
        "# gpusort bench\n\n**Device:** {} · **Date:** {}\n\n",
        about.device, about.date
    );
    for note in &about.notes {
        let _ = writeln!(out, "{note}  ");
    }
    if !about.notes.is_empty() {
        out.push('\n');
    }
    out.push_str(
        "| algo | dtype | order | n | ms median | ms min | ms max | Mkeys/s | verified |\n",
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---|\n");
    for r in rows {
        let (min, max) = r
            .min_max
            .map_or(("–".into(), "–".into()), |(lo, hi)| (ms(lo), ms(hi)));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |",
            r.name,
            r.dtype,
            order_name(r.order),
            size_name(r.n),
            ms(r.median),
            min,
            max,
            r.keys_per_s / 1e6,
            if r.verified { "yes" } else { "**NO**" }
        );
    }
    out
}

/// Milliseconds with four significant digits, at least to the microsecond.
fn ms(ms: f64) -> String {
    match ms {
        _ if ms >= 100.0 => format!("{ms:.1}"),
        _ if ms >= 10.0 => format!("{ms:.2}"),
        _ => format!("{ms:.3}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Algo;
    use crate::timing::Timing;

    fn measurement(
        algo: Algo,
        dtype: DType,
        order: Order,
        n: usize,
        verified: bool,
    ) -> Measurement {
        Measurement {
            algo,
            dtype,
            order,
            n,
            ms: Timing {
                median: 2.0,
                min: 1.5,
                max: 12.25,
            },
            verified,
        }
    }

    #[test]
    fn csv_has_the_header_and_one_line_per_measurement() {
        let csv = csv(&[
            measurement(Algo::Bitonic, DType::U32, Order::Ascending, 1 << 20, true),
            measurement(
                Algo::CpuBitonicN,
                DType::F64,
                Order::Descending,
                1024,
                false,
            ),
        ]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines,
            [
                "algo,dtype,order,n,ms_median,ms_min,ms_max,keys_per_s,verified",
                "bitonic,u32,asc,1048576,2.000000,1.500000,12.250000,524288000,true",
                "cpu_bitonicN,f64,desc,1024,2.000000,1.500000,12.250000,512000,false",
            ]
        );
    }

    #[test]
    fn empty_csv_is_the_header_alone() {
        assert_eq!(csv(&[]), format!("{CSV_HEADER}\n"));
    }

    #[test]
    fn markdown_has_the_device_line_and_rows_by_key_type_order_and_size() {
        let about = About {
            device: "NVIDIA H200".into(),
            date: "2026-11-21 10:00 UTC".into(),
            notes: vec!["keys: uniform, seed 42".into()],
        };
        let measured = [
            measurement(Algo::Bitonic, DType::F32, Order::Ascending, 2048, true),
            measurement(Algo::Bitonic, DType::F32, Order::Ascending, 1024, false),
            measurement(Algo::CpuStd, DType::U32, Order::Ascending, 1024, true),
        ];
        let peers = [PeerRow {
            peer: "cub_merge".into(),
            dtype: DType::F32,
            n: 1024,
            ms_median: 0.04,
            correct: true,
        }];
        let md = markdown(&about, &measured, &peers);
        assert!(md.starts_with(
            "# gpusort bench\n\n**Device:** NVIDIA H200 · **Date:** 2026-11-21 10:00 UTC\n"
        ));
        assert!(md.contains("keys: uniform, seed 42"));
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(
            rows,
            [
                "| algo | dtype | order | n | ms median | ms min | ms max | Mkeys/s | verified |",
                "| bitonic | f32 | asc | 2^10 | 2.000 | 1.500 | 12.25 | 0.5 | **NO** |",
                "| cub_merge | f32 | asc | 2^10 | 0.040 | – | – | 25.6 | yes |",
                "| bitonic | f32 | asc | 2^11 | 2.000 | 1.500 | 12.25 | 1.0 | yes |",
                "| cpu_std | u32 | asc | 2^10 | 2.000 | 1.500 | 12.25 | 0.5 | yes |",
            ]
        );
    }
}
