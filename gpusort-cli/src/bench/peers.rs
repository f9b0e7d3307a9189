//! The peer benchmark's results (`bench/peers/`: CUB, thrust, torch.sort; run with
//! `scripts/bench-peers.sh`), read from its CSV (`peer,dtype,n,ms_median,mkeys_per_ms,correct`),
//! and our times as ratios to CUB's.

use super::{Measurement, keys_per_s, order_name, size_name};
use crate::keys::DType;
use clap::ValueEnum;
use std::fmt::Write as _;

/// The peer CSV's columns this reads; others (`mkeys_per_ms`) are ignored.
const COLUMNS: [&str; 5] = ["peer", "dtype", "n", "ms_median", "correct"];

/// CUB's `DeviceMergeSort::SortKeys`, as the peer CSV names it. [`compare`] reports ratios to
/// it.
pub const CUB_MERGE: &str = "cub_merge";
/// CUB's `DeviceRadixSort::SortKeys`, as the peer CSV names it.
pub const CUB_RADIX: &str = "cub_radix";

/// One row of a peer CSV: an ascending sort of `n` keys. Made by [`parse`].
///
/// # Examples
///
/// ```
/// use gpusort::DType;
/// use gpusort_cli::bench::peers::PeerRow;
///
/// let row = PeerRow { peer: "torch_sort".into(), dtype: DType::I32, n: 1000, ms_median: 0.1, correct: true };
/// assert_eq!(row.keys_per_s(), 1e7);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PeerRow {
    /// The peer sort, e.g. `cub_merge`.
    pub peer: String,
    /// The key type.
    pub dtype: DType,
    /// Number of keys.
    pub n: usize,
    /// Median time of one sort, in ms.
    pub ms_median: f64,
    /// Whether the peer's output matched `std::sort`.
    pub correct: bool,
}

impl PeerRow {
    /// Keys sorted per second at the median time.
    pub fn keys_per_s(&self) -> f64 {
        keys_per_s(self.n, self.ms_median)
    }
}

/// Why a peer CSV cannot be read. Returned by [`parse`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerCsvError {
    /// The header lacks a column this reads.
    #[error(
        "the header has no `{0}` column (expected peer,dtype,n,ms_median,mkeys_per_ms,correct)"
    )]
    MissingColumn(&'static str),
    /// A row that does not parse.
    #[error("line {line}: {reason}")]
    BadRow {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Parses a peer CSV. Columns are found by their names in the header. Rows of a key type
/// gpusort does not sort (e.g. `f16`) are left out; blank lines are ignored.
///
/// # Errors
/// [`PeerCsvError::MissingColumn`] for a missing column, or [`PeerCsvError::BadRow`] for a row
/// with too few fields or a field that does not parse.
///
/// # Examples
///
/// ```
/// use gpusort::DType;
/// use gpusort_cli::bench::peers::{PeerCsvError, parse};
///
/// let rows = parse("peer,dtype,n,ms_median,mkeys_per_ms,correct\n\
///                   cub_merge,u32,65536,0.04,1.64,1\n\
///                   torch_sort,bf16,65536,0.07,0.9,1\n")?;
/// assert_eq!(rows.len(), 1); // bf16 is not a gpusort key type
/// assert_eq!((rows[0].peer.as_str(), rows[0].dtype, rows[0].n), ("cub_merge", DType::U32, 65536));
/// assert_eq!(parse("peer,n\n"), Err(PeerCsvError::MissingColumn("dtype")));
/// # Ok::<(), PeerCsvError>(())
/// ```
pub fn parse(text: &str) -> Result<Vec<PeerRow>, PeerCsvError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .map_or(Vec::new(), |(_, l)| l.split(',').map(str::trim).collect());
    let mut at = [0; COLUMNS.len()];
    for (slot, name) in at.iter_mut().zip(COLUMNS) {
        *slot = header
            .iter()
            .position(|&h| h == name)
            .ok_or(PeerCsvError::MissingColumn(name))?;
    }
    let mut rows = Vec::new();
    for (index, line) in lines {
        let bad = |reason: String| PeerCsvError::BadRow {
            line: index + 1,
            reason,
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let field = |column: usize| {
            fields.get(at[column]).copied().ok_or_else(|| {
                bad(format!(
                    "no `{}` field ({} fields)",
                    COLUMNS[column],
                    fields.len()
                ))
            })
        };
        let Ok(dtype) = DType::from_str(field(1)?, false) else {
            continue;
        };
        let number = |column: usize| -> Result<f64, PeerCsvError> {
            let text = field(column)?;
            text.parse()
                .map_err(|_| bad(format!("`{}` is not a number: {text:?}", COLUMNS[column])))
        };
        let n = field(2)?;
        rows.push(PeerRow {
            peer: field(0)?.to_string(),
            dtype,
            n: n.parse()
                .map_err(|_| bad(format!("`n` is not a count: {n:?}")))?,
            ms_median: number(3)?,
            correct: match field(4)? {
                "1" | "true" => true,
                "0" | "false" => false,
                other => return Err(bad(format!("`correct` is not 0/1: {other:?}"))),
            },
        });
    }
    Ok(rows)
}

/// The rows of `peers` with a key type in `dtypes` and a size in `min_n..=max_n`: the ones that
/// belong beside a sweep's results.
///
/// # Examples
///
/// ```
/// use gpusort::DType;
/// use gpusort_cli::bench::peers::{parse, relevant};
///
/// let peers = parse("peer,dtype,n,ms_median,mkeys_per_ms,correct\n\
///                    cub_merge,u32,1024,0.01,0.1,1\n\
///                    cub_radix,f32,1024,0.02,0.05,1\n")?;
/// assert_eq!(relevant(&peers, &[DType::F32], 1024, 1 << 20).len(), 1);
/// assert!(relevant(&peers, &[DType::U32], 2048, 1 << 20).is_empty());
/// # Ok::<(), gpusort_cli::bench::peers::PeerCsvError>(())
/// ```
pub fn relevant(peers: &[PeerRow], dtypes: &[DType], min_n: usize, max_n: usize) -> Vec<PeerRow> {
    peers
        .iter()
        .filter(|p| dtypes.contains(&p.dtype) && (min_n..=max_n).contains(&p.n))
        .cloned()
        .collect()
}

/// One of our GPU measurements beside CUB's sorts of the same key type and size. Made by
/// [`compare`].
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison<'a> {
    /// Our measurement.
    pub ours: &'a Measurement,
    /// Our median time over `cub_merge`'s, if the peers have it.
    pub vs_cub_merge: Option<f64>,
    /// Our median time over `cub_radix`'s, if the peers have it.
    pub vs_cub_radix: Option<f64>,
}

/// Our GPU measurements with a `cub_merge` or `cub_radix` row of the same key type and size
/// (the first such row where the peers have several; for our `_pairs` sorts, their
/// `cub_merge_pairs` and `cub_radix_pairs` rows), as time ratios: below 1 is ours faster.
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::{Algo, Measurement, peers::{compare, comparison_table}};
/// use gpusort_cli::bench::peers::parse;
/// use gpusort::{DType, Order};
/// use gpusort_cli::timing::Timing;
///
/// let peers = parse("peer,dtype,n,ms_median,mkeys_per_ms,correct\n\
///                    cub_merge,u32,1024,0.01,0.1,1\n\
///                    cub_radix,f32,1024,0.02,0.05,1\n")?;
/// let ours = [Measurement {
///     algo: Algo::Bitonic,
///     dtype: DType::U32,
///     order: Order::Ascending,
///     n: 1024,
///     ms: Timing::of(vec![0.02]),
///     verified: true,
/// }];
/// let c = compare(&ours, &peers);
/// assert_eq!((c[0].vs_cub_merge, c[0].vs_cub_radix), (Some(2.0), None));
/// print!("{}", comparison_table(&c));
/// # Ok::<(), gpusort_cli::bench::peers::PeerCsvError>(())
/// ```
pub fn compare<'a>(ours: &'a [Measurement], peers: &[PeerRow]) -> Vec<Comparison<'a>> {
    let ms_of = |peer: &str, m: &Measurement| {
        let pairs = if m.algo.carries_values() {
            "_pairs"
        } else {
            ""
        };
        let peer = format!("{peer}{pairs}");
        peers
            .iter()
            .find(|p| p.peer == peer && p.dtype == m.dtype && p.n == m.n)
            .map(|p| p.ms_median)
    };
    ours.iter()
        .filter(|m| m.algo.is_gpu())
        .map(|m| Comparison {
            ours: m,
            vs_cub_merge: ms_of(CUB_MERGE, m).map(|ms| m.ms.median / ms),
            vs_cub_radix: ms_of(CUB_RADIX, m).map(|ms| m.ms.median / ms),
        })
        .filter(|c| c.vs_cub_merge.is_some() || c.vs_cub_radix.is_some())
        .collect()
}

/// The comparisons as a compact text table, one line per comparison after a header; a
/// one-line note when there is none.
///
/// ```
/// use gpusort_cli::bench::peers::comparison_table;
/// assert!(comparison_table(&[]).starts_with("no GPU measurement"));
/// ```
pub fn comparison_table(comparisons: &[Comparison<'_>]) -> String {
    if comparisons.is_empty() {
        return "no GPU measurement has a cub_merge or cub_radix row of the same key type and size\n"
            .into();
    }
    let ratio = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}"));
    let mut out = String::from("time ratios to CUB (below 1: ours is faster)\n");
    let _ = writeln!(
        out,
        "{:<10} {:<5} {:<5} {:>6} {:>10} {:>12} {:>12}",
        "algo", "dtype", "order", "n", "ms", "/cub_merge", "/cub_radix"
    );
    for c in comparisons {
        let m = c.ours;
        let _ = writeln!(
            out,
            "{:<10} {:<5} {:<5} {:>6} {:>10.4} {:>12} {:>12}",
            m.algo.name(),
            m.dtype.to_string(),
            order_name(m.order),
            size_name(m.n),
            m.ms.median,
            ratio(c.vs_cub_merge),
            ratio(c.vs_cub_radix)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Algo;
    use crate::keys::Order;
    use crate::timing::Timing;

    const SAMPLE: &str = "peer,dtype,n,ms_median,mkeys_per_ms,correct\n\
        cub_radix,u32,65536,0.0524,1.250,1\n\
        cub_merge,u32,65536,0.0400,1.640,1\n\
        torch_sort,bf16,65536,0.07,0.9,1\n\
        \n\
        cub_merge,f32,1048576,0.5,2.0,0\n";

    fn ours(algo: Algo, dtype: DType, n: usize, ms: f64) -> Measurement {
        Measurement {
            algo,
            dtype,
            order: Order::Ascending,
            n,
            ms: Timing {
                median: ms,
                min: ms,
                max: ms,
            },
            verified: true,
        }
    }

    #[test]
    fn parses_the_peer_csv_and_leaves_out_key_types_we_do_not_sort() {
        let rows = parse(SAMPLE).expect("parses");
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            PeerRow {
                peer: "cub_radix".into(),
                dtype: DType::U32,
                n: 65536,
                ms_median: 0.0524,
                correct: true
            }
        );
        assert!(!rows[2].correct);
        assert_eq!(rows[1].keys_per_s(), 65536.0 / 0.04e-3);
    }

    #[test]
    fn finds_columns_by_name() {
        let rows = parse("n,correct,ms_median,dtype,peer\n1024,1,0.01,i64,torch_sort\n").unwrap();
        assert_eq!(
            (rows[0].peer.as_str(), rows[0].dtype, rows[0].n),
            ("torch_sort", DType::I64, 1024)
        );
    }

    #[test]
    fn says_what_is_wrong_with_a_bad_csv() {
        assert_eq!(parse(""), Err(PeerCsvError::MissingColumn("peer")));
        assert_eq!(
            parse("peer,dtype,n,ms_median\n"),
            Err(PeerCsvError::MissingColumn("correct"))
        );
        let header = "peer,dtype,n,ms_median,mkeys_per_ms,correct\n";
        for (row, needle) in [
            (
                "cub_merge,u32,lots,0.1,1,1",
                "line 2: `n` is not a count: \"lots\"",
            ),
            ("cub_merge,u32,1024,fast,1,1", "`ms_median` is not a number"),
            ("cub_merge,u32,1024,0.1,1,yes", "`correct` is not 0/1"),
            ("cub_merge,u32,1024", "no `ms_median` field (3 fields)"),
        ] {
            let err = parse(&format!("{header}{row}\n")).unwrap_err().to_string();
            assert!(err.contains(needle), "{row}: {err}");
        }
    }

    #[test]
    fn relevant_rows_match_the_sweep() {
        let rows = parse(SAMPLE).unwrap();
        let kept = relevant(&rows, &[DType::U32], 1024, 1 << 16);
        assert_eq!(kept.len(), 2);
        assert!(relevant(&rows, &[DType::U32], 1 << 17, 1 << 20).is_empty());
    }

    #[test]
    fn ratios_to_cub_for_gpu_sorts_only() {
        let peers = parse(SAMPLE).unwrap();
        let measured = [
            ours(Algo::Bitonic, DType::U32, 65536, 0.08),
            ours(Algo::CpuStd, DType::U32, 65536, 1.0),
            ours(Algo::Bitonic, DType::F32, 1 << 20, 0.25),
            ours(Algo::Bitonic, DType::U64, 65536, 0.1),
        ];
        let c = compare(&measured, &peers);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].ours, &measured[0]);
        assert!((c[0].vs_cub_merge.unwrap() - 2.0).abs() < 1e-12);
        assert!((c[0].vs_cub_radix.unwrap() - 0.08 / 0.0524).abs() < 1e-12);
        assert_eq!((c[1].vs_cub_merge, c[1].vs_cub_radix), (Some(0.5), None));

        let table = comparison_table(&c);
        assert!(
            table.contains("bitonic    u32   asc     2^16     0.0800         2.00         1.53"),
            "{table}"
        );
        assert!(
            table.contains("2^20     0.2500         0.50            -"),
            "{table}"
        );
        assert!(comparison_table(&[]).starts_with("no GPU measurement"));
    }
}
