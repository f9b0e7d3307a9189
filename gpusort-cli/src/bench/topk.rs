//! The top-k sweep of `gpusort bench --topk`: `Queue::top_k` of whole arrays and of the rows
//! of matrices, keys on the device, each result checked against the CPU selection, written as
//! a CSV in the peer CSV's columns (so that its rows and `torch.topk`'s, from
//! `bench/peers/torch_peers.py topk` and `topk-rows`, sit side by side) and a markdown table
//! with the ratio to `torch.topk` where the peers' CSV has the same row.
//!
//! Row names: `topk_k{k}` for an array of `n` keys, `topk_rows{L}_k{k}` for `n / L` rows of
//! `L`; `torch.topk`'s are the same with `torch_` in front. The k largest, as `torch.topk`
//! selects by default.
//!
//! ```
//! use gpusort_cli::bench::topk::{Shape, row_name};
//! assert_eq!(row_name(Shape::Array(1 << 24), 64), "topk_k64");
//! assert_eq!(row_name(Shape::Rows(16384, 4096), 8), "topk_rows4096_k8");
//! assert_eq!("1024x65536".parse::<Shape>(), Ok(Shape::Rows(1024, 65536)));
//! ```

use super::peers::PeerRow;
use super::{keys_per_s, size_name};
use crate::error::Result;
use crate::gpu::GpuSorter;
use crate::inputs::{Dist, generate};
use crate::keys::{DType, Order, SortKey};
use crate::timing::{self, Timing};
use crate::with_key_type;
use gpusort::topk::top_k_cpu;
use std::fmt::Write as _;
use std::str::FromStr;

/// The k of the sweep when `--topk` names none: `torch_peers.py`'s.
pub const DEFAULT_KS: [usize; 5] = [1, 8, 64, 256, 1024];

/// The matrices of the per-row sweep when `--topk-rows` names none: the issue's targets.
pub const DEFAULT_ROWS: [Shape; 2] = [Shape::Rows(16384, 4096), Shape::Rows(1024, 65536)];

/// What a top-k selects from: one array of `n` keys, or `rows` rows of `len` keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One array of this many keys.
    Array(usize),
    /// Rows, and keys per row.
    Rows(usize, usize),
}

impl Shape {
    /// Keys in all.
    pub fn len(self) -> usize {
        match self {
            Shape::Array(n) => n,
            Shape::Rows(rows, len) => rows * len,
        }
    }

    /// Whether it has no keys.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Keys per row (the whole array's length for an array).
    pub fn row_len(self) -> usize {
        match self {
            Shape::Array(n) => n,
            Shape::Rows(_, len) => len,
        }
    }
}

impl FromStr for Shape {
    type Err = String;

    /// `ROWSxLEN`, e.g. `16384x4096`.
    fn from_str(s: &str) -> Result<Shape, String> {
        let (rows, len) = s
            .split_once('x')
            .ok_or_else(|| format!("{s}: not ROWSxLEN (e.g. 16384x4096)"))?;
        let number = |t: &str| {
            t.parse::<usize>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("{s}: {t} is not a positive number"))
        };
        Ok(Shape::Rows(number(rows)?, number(len)?))
    }
}

/// The CSV and table name of a top-k of `shape` with this `k`.
pub fn row_name(shape: Shape, k: usize) -> String {
    match shape {
        Shape::Array(_) => format!("topk_k{k}"),
        Shape::Rows(_, len) => format!("topk_rows{len}_k{k}"),
    }
}

/// One timed top-k.
#[derive(Clone, Debug, PartialEq)]
pub struct TopKMeasurement {
    /// Its row name ([`row_name`]).
    pub name: String,
    /// The key type.
    pub dtype: DType,
    /// What it selected from.
    pub shape: Shape,
    /// Keys selected (per row).
    pub k: usize,
    /// Median, min and max time, in ms.
    pub ms: Timing,
    /// Whether the result equals the CPU selection's.
    pub verified: bool,
}

/// Times and checks the top-`k` (largest) of `shape` keys of type `dtype` (uniform, from
/// `seed`), `reps` timed runs.
///
/// # Errors
/// A GPU error, or a shape the top-k refuses.
pub fn measure(
    gpu: &GpuSorter,
    dtype: DType,
    shape: Shape,
    k: usize,
    (reps, seed): (u32, u64),
) -> Result<TopKMeasurement> {
    with_key_type!(dtype, K => measure_as::<K>(gpu, shape, k, reps, seed))
}

fn measure_as<K: SortKey>(
    gpu: &GpuSorter,
    shape: Shape,
    k: usize,
    reps: u32,
    seed: u64,
) -> Result<TopKMeasurement> {
    let input: Vec<K> = generate(shape.len(), Dist::Uniform, seed);
    let order = Order::Descending;
    let (ms, top) = timing::gpu_top_k(gpu, &input, shape.row_len(), k, order, reps)?;
    let want = top_k_cpu(&input, shape.row_len(), k, order)?;
    let bits = |keys: &[K]| keys.iter().map(|k| k.to_bits()).collect::<Vec<_>>();
    let verified = bits(&top.keys) == bits(&want.keys) && top.indices == want.indices;
    Ok(TopKMeasurement {
        name: row_name(shape, k),
        dtype: K::DTYPE,
        shape,
        k,
        ms,
        verified,
    })
}

/// The measurements as CSV in the peer CSV's columns (`peer,dtype,n,ms_median,mkeys_per_ms,
/// correct`), then min, max and the shape.
pub fn csv(measurements: &[TopKMeasurement]) -> String {
    let mut out = String::from("peer,dtype,n,ms_median,mkeys_per_ms,correct,ms_min,ms_max,shape\n");
    for m in measurements {
        let shape = match m.shape {
            Shape::Array(n) => n.to_string(),
            Shape::Rows(rows, len) => format!("{rows}x{len}"),
        };
        let _ = writeln!(
            out,
            "{},{},{},{:.4},{:.3},{},{:.4},{:.4},{shape}",
            m.name,
            m.dtype,
            m.shape.len(),
            m.ms.median,
            keys_per_s(m.shape.len(), m.ms.median) / 1e9,
            u8::from(m.verified),
            m.ms.min,
            m.ms.max,
        );
    }
    out
}

/// A markdown table of the measurements, with `torch.topk`'s time and the ratio to it where
/// `peers` has the row `torch_{name}` of the same key type and size.
pub fn markdown(
    device: &str,
    when: &str,
    measurements: &[TopKMeasurement],
    peers: &[PeerRow],
) -> String {
    let mut out = format!(
        "# gpusort top-k on {device}\n\n{when}. The k largest, keys and indices; CUDA events, \
         median. `vs torch`: our time over torch.topk's (below 1 is faster).\n\n\
         | top-k | dtype | keys | ms | torch ms | vs torch | verified |\n|---|---|---|---|---|---|---|\n"
    );
    for m in measurements {
        let peer = peers.iter().find(|p| {
            p.peer == format!("torch_{}", m.name) && p.dtype == m.dtype && p.n == m.shape.len()
        });
        let (torch, ratio) = peer.map_or(("–".into(), "–".into()), |p| {
            (
                format!("{:.4}", p.ms_median),
                format!("{:.2}", m.ms.median / p.ms_median),
            )
        });
        let keys = match m.shape {
            Shape::Array(n) => size_name(n),
            Shape::Rows(rows, len) => format!("{rows} × {len}"),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {keys} | {:.4} | {torch} | {ratio} | {} |",
            m.name,
            m.dtype,
            m.ms.median,
            if m.verified { "yes" } else { "NO" },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_name_their_rows() {
        assert_eq!("16384x4096".parse(), Ok(Shape::Rows(16384, 4096)));
        assert!("16384".parse::<Shape>().is_err());
        assert!("0x5".parse::<Shape>().is_err());
        assert_eq!(Shape::Rows(3, 5).len(), 15);
        assert_eq!(Shape::Array(7).row_len(), 7);
        assert_eq!(
            row_name(Shape::Rows(1024, 65536), 256),
            "topk_rows65536_k256"
        );
    }

    #[test]
    fn the_csv_reads_as_a_peer_csv_and_the_table_finds_torch() {
        let m = TopKMeasurement {
            name: "topk_k8".into(),
            dtype: DType::F32,
            shape: Shape::Array(1 << 24),
            k: 8,
            ms: Timing {
                median: 0.1,
                min: 0.09,
                max: 0.2,
            },
            verified: true,
        };
        let rows = super::super::peers::parse(&csv(std::slice::from_ref(&m))).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].peer.as_str(), rows[0].n), ("topk_k8", 1 << 24));
        let torch = PeerRow {
            peer: "torch_topk_k8".into(),
            dtype: DType::F32,
            n: 1 << 24,
            ms_median: 0.4,
            correct: true,
        };
        let table = markdown("GPU", "now", &[m], &[torch]);
        assert!(
            table.contains("| topk_k8 | f32 | 2^24 | 0.1000 | 0.4000 | 0.25 | yes |"),
            "{table}"
        );
    }
}
