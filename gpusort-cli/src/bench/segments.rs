//! The segmented sorts' sweep, as `gpusort bench --rows` and `--segments` run it: rows of one
//! length and variable-length segments of 2^k keys in all, keys alone, pairs (`u32` values) and
//! argsorts, each timed as the peers time CUB's segmented sorts and checked against std's
//! stable sort of every segment.

use crate::error::{CudaContext, Result};
use crate::gpu::{GpuSorter, Segments};
use crate::inputs::{Dist, generate};
use crate::keys::{DType, Order, SortKey};
use crate::timing::{self, Timing};
use crate::with_key_type;
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer};
use rayon::prelude::*;

/// What a row of the sweep sorts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Keys alone, in place.
    Keys,
    /// Keys with `u32` values.
    Pairs,
    /// The stable permutation of each segment (`u32` positions).
    Argsort,
}

impl Work {
    /// Every kind, in the order the sweep runs them.
    pub const ALL: [Work; 3] = [Work::Keys, Work::Pairs, Work::Argsort];

    /// Its name in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Work::Keys => "keys",
            Work::Pairs => "pairs",
            Work::Argsort => "argsort",
        }
    }
}

/// One timed segmented sort.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentRow {
    /// `rows{len}` for rows of one length, else the distribution's name.
    pub layout: String,
    /// Keys, pairs or argsort.
    pub work: Work,
    /// The key type.
    pub dtype: DType,
    /// Segments.
    pub segments: usize,
    /// Keys in all.
    pub n: usize,
    /// Median, min and max, in ms.
    pub ms: Timing,
    /// Whether the result equalled std's stable sort of every segment.
    pub verified: bool,
}

/// A distribution of segment lengths for [`offsets`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lengths {
    /// `max(1, ⌊20 / (1 − 0.9999u)^(1/1.1)⌋ − 19)` for uniform u: mostly short segments, mean
    /// about 100, a few of tens of thousands of keys.
    PowerLaw,
    /// `1 + ⌊2048u⌋`: uniform over 1 ..= 2048.
    Uniform,
}

impl Lengths {
    /// Both, in the order the sweep runs them.
    pub const ALL: [Lengths; 2] = [Lengths::PowerLaw, Lengths::Uniform];

    /// Its name in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Lengths::PowerLaw => "power-law",
            Lengths::Uniform => "uniform1-2048",
        }
    }
}

/// The offsets of segments of lengths drawn from `lengths` (seeded by `seed`) while they fit in
/// `n` keys.
///
/// ```
/// use gpusort_cli::bench::segments::{Lengths, offsets};
///
/// let o = offsets(Lengths::Uniform, 1 << 20, 5);
/// assert!(o.windows(2).all(|w| (1..=2048).contains(&(w[1] - w[0]))));
/// assert!(*o.last().unwrap() <= 1 << 20 && *o.last().unwrap() > (1 << 20) - 2048);
/// ```
pub fn offsets(lengths: Lengths, n: usize, seed: u64) -> Vec<usize> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut offsets = vec![0usize];
    loop {
        let u: f64 = rng.random();
        let len = match lengths {
            Lengths::PowerLaw => ((20.0 / (1.0 - u * 0.9999).powf(1.0 / 1.1)) as usize)
                .saturating_sub(19)
                .max(1),
            Lengths::Uniform => 1 + (u * 2048.0) as usize,
        };
        let end = offsets.last().expect("starts with 0") + len;
        if end > n {
            return offsets;
        }
        offsets.push(end);
    }
}

/// Times `work` on keys of `dtype` cut into `segments` (of `n` keys), `reps` times after a
/// warm-up, and checks the last result.
///
/// # Errors
/// [`Error::OutOfDeviceMemory`](crate::Error::OutOfDeviceMemory),
/// [`Error::BadSegments`](crate::Error::BadSegments) or [`Error::Cuda`](crate::Error::Cuda).
pub fn time(
    gpu: &GpuSorter,
    dtype: DType,
    work: Work,
    segments: Segments<'_>,
    n: usize,
    reps: u32,
    seed: u64,
) -> Result<(Timing, bool)> {
    with_key_type!(dtype, K => time_as::<K>(gpu, work, segments, n, reps, seed))
}

fn time_as<K: SortKey>(
    gpu: &GpuSorter,
    work: Work,
    segments: Segments<'_>,
    n: usize,
    reps: u32,
    seed: u64,
) -> Result<(Timing, bool)> {
    let input: Vec<K> = generate(n, Dist::Uniform, seed);
    let order = Order::Ascending;
    let pristine = gpu.upload(&input)?;
    let mut keys = gpu.alloc::<K>(n, "the working keys")?;
    let positions: Vec<u32> = (0..n as u32).collect();
    let pristine_values = gpu.upload(&positions)?;
    let mut values = gpu.alloc::<u32>(n, "the working values or indices")?;
    let stream = gpu.stream();
    let mut queue = gpu.queue()?;
    let what = format!("the segmented sort ({})", work.name());
    let ms = timing::gpu_like_peers(gpu, reps, &what, |sort| {
        restore(&mut keys, &pristine, stream)?;
        if work == Work::Pairs {
            restore(&mut values, &pristine_values, stream)?;
        }
        if !sort {
            return Ok(());
        }
        match work {
            Work::Keys => queue.sort_segments(&mut keys, segments, order),
            Work::Pairs => queue.sort_segments_by_key(&mut keys, &mut values, segments, order),
            Work::Argsort => queue.argsort_segments(&keys, &mut values, segments, order),
        }
    })?;
    let mut got_keys = input.clone();
    keys.copy_to(&mut got_keys[..])
        .context("copying the sorted keys back")?;
    // Keys alone leave the values' buffer unwritten.
    let mut got_values = positions;
    if work != Work::Keys {
        values
            .copy_to(&mut got_values[..])
            .context("copying the values back")?;
    }
    Ok((ms, verified(&input, &got_keys, &got_values, work, segments)))
}

/// Queues the copy of `pristine` into `work` on `stream`.
fn restore<T: cust::memory::DeviceCopy>(
    work: &mut DeviceBuffer<T>,
    pristine: &DeviceBuffer<T>,
    stream: &cust::stream::Stream,
) -> Result<()> {
    // SAFETY: both buffers outlive the copy: the timing synchronises the stream after it.
    unsafe { work.async_copy_from(pristine, stream) }.context("restoring the input")
}

/// Whether `keys` (and `values`: the input positions for pairs, the permutation for argsort)
/// are std's stable sort of every segment of `input`.
fn verified<K: SortKey>(
    input: &[K],
    keys: &[K],
    values: &[u32],
    work: Work,
    segments: Segments<'_>,
) -> bool {
    let ranges: Vec<(usize, usize)> = match segments {
        Segments::Rows(len) => (0..input.len() / len)
            .map(|r| (r * len, (r + 1) * len))
            .collect(),
        Segments::Offsets(o) => o.windows(2).map(|w| (w[0], w[1])).collect(),
    };
    ranges.par_iter().all(|&(a, b)| {
        let mut perm: Vec<u32> = (0..(b - a) as u32).collect();
        perm.sort_by_key(|&j| input[a + j as usize].ordered_bits(Order::Ascending));
        // An argsort leaves the keys as they were.
        let keys_ok = if work == Work::Argsort {
            keys[a..b]
                .iter()
                .zip(&input[a..b])
                .all(|(k, i)| k.to_bits() == i.to_bits())
        } else {
            perm.iter()
                .zip(&keys[a..b])
                .all(|(&j, k)| input[a + j as usize].to_bits() == k.to_bits())
        };
        keys_ok
            && match work {
                Work::Keys => true,
                Work::Pairs => perm
                    .iter()
                    .zip(&values[a..b])
                    .all(|(&j, &v)| v as usize == a + j as usize),
                Work::Argsort => perm[..] == values[a..b],
            }
    })
}

/// The CSV of the sweep: a header, then a line per row.
///
/// ```
/// use gpusort_cli::bench::segments::{SegmentRow, Work, csv};
/// use gpusort_cli::timing::Timing;
/// use gpusort::DType;
///
/// let row = SegmentRow {
///     layout: "rows128".into(),
///     work: Work::Keys,
///     dtype: DType::U32,
///     segments: 2,
///     n: 256,
///     ms: Timing { median: 0.5, min: 0.4, max: 0.6 },
///     verified: true,
/// };
/// assert_eq!(csv(&[row]).lines().nth(1), Some("rows128,keys,u32,2,256,0.5000,0.001,true"));
/// ```
pub fn csv(rows: &[SegmentRow]) -> String {
    let mut out = String::from("layout,work,dtype,segments,n,ms_median,gkeys_per_s,verified\n");
    for r in rows {
        out += &format!(
            "{},{},{},{},{},{:.4},{:.3},{}\n",
            r.layout,
            r.work.name(),
            r.dtype,
            r.segments,
            r.n,
            r.ms.median,
            r.n as f64 / r.ms.median / 1e6,
            r.verified
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_law_segments_are_mostly_short_with_a_long_tail() {
        let o = offsets(Lengths::PowerLaw, 1 << 24, 5);
        let lens: Vec<usize> = o.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = (1 << 24) as f64 / lens.len() as f64;
        assert!((40.0..300.0).contains(&mean), "mean {mean}");
        assert!(
            lens.iter().any(|&l| l > 8192),
            "some segments longer than a block's rows"
        );
        assert!(lens.iter().filter(|&&l| l <= 32).count() * 2 > lens.len());
        assert_eq!(offsets(Lengths::PowerLaw, 1 << 24, 5), o, "seeded");
    }

    #[test]
    fn verification_catches_an_unstable_pair_and_a_wrong_key() {
        let input = [3u32, 1, 3, 2];
        let rows = Segments::Rows(4);
        let keys = [1u32, 2, 3, 3];
        assert!(verified(&input, &keys, &[1, 3, 0, 2], Work::Pairs, rows));
        assert!(!verified(&input, &keys, &[1, 3, 2, 0], Work::Pairs, rows));
        assert!(verified(&input, &input, &[1, 3, 0, 2], Work::Argsort, rows));
        assert!(
            !verified(&input, &keys, &[1, 3, 0, 2], Work::Argsort, rows),
            "keys changed"
        );
        assert!(!verified(
            &input,
            &[1, 2, 3, 4],
            &[1, 3, 0, 2],
            Work::Keys,
            rows
        ));
    }
}
