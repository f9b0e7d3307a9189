//! The exact splitters of the multi-GPU sort: after every GPU has sorted its part, where each
//! part must be cut so that GPU `j` receives exactly the keys of global ranks
//! `[Σ_{i<j} n_i, Σ_{i≤j} n_i)` (every GPU ends with as many keys as it started with).
//!
//! Ties are broken by part, then by position: the order of the stable sort of the parts laid
//! end to end, so the multi-GPU sort is as stable as the sort of each part.
//!
//! Two rounds of device work, whatever G and n:
//! 1. every part sends a regular sample (every `stride`-th key and its last) to the host; each
//!    part then ranks every sampled key (a binary search per key on its GPU), which brackets
//!    each splitter's key between two consecutive sampled keys;
//! 2. where the splitter's key is not itself sampled, each part sends the at most `stride − 1`
//!    keys between those two, and the host finishes the search among them.

use crate::error::Result;
use std::ops::Range;

/// Sorted parts, as the selection sees them: on GPUs, or vectors in the tests.
pub(crate) trait SortedParts {
    /// The key type, in an order-preserving encoding.
    type Key: Ord + Copy;
    /// Keys per part.
    fn lens(&self) -> Vec<u64>;
    /// Per part, its regular sample at `stride` ([`kernels_gpu::multi::sample_position`]);
    /// empty for an empty part.
    fn samples(&mut self, stride: u64) -> Result<Vec<Vec<Self::Key>>>;
    /// Per part, for every probe, the keys of the part below it and not above it.
    fn ranks(&mut self, probes: &[Self::Key]) -> Result<Vec<Ranks>>;
    /// Per part `i`, the keys of each range of `ranges[i]` (all parts at once, so the GPUs
    /// can read at the same time).
    fn spans(&mut self, ranges: &[Vec<Range<u64>>]) -> Result<Vec<Vec<Vec<Self::Key>>>>;
}

/// The ranks of a list of probes in one part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ranks {
    /// Keys below each probe.
    pub below: Vec<u64>,
    /// Keys not above each probe.
    pub not_above: Vec<u64>,
}

/// Cuts of the parts: `cuts[j][i]` is the first key of part `i` that goes to GPU `j` or later
/// (`cuts[0][i] = 0`, `cuts[G][i] = n_i`), so GPU `j` receives `cuts[j][i]..cuts[j + 1][i]` of
/// every part `i`, in part order.
pub(crate) type Cuts = Vec<Vec<u64>>;

/// The cuts of sorted `parts` ([`Cuts`]), sampling every `stride` keys.
pub(crate) fn cuts<P: SortedParts>(parts: &mut P, stride: u64) -> Result<Cuts> {
    let lens = parts.lens();
    let g = lens.len();
    let total: u64 = lens.iter().sum();
    let mut cuts = vec![vec![0; g]; g + 1];
    cuts[g].clone_from(&lens);
    let targets: Vec<u64> = (1..g).map(|j| lens[..j].iter().sum()).collect();
    if targets.iter().all(|&r| r == 0 || r == total) {
        for (j, &r) in targets.iter().enumerate() {
            cuts[j + 1] = if r == 0 { vec![0; g] } else { lens.clone() };
        }
        return Ok(cuts);
    }
    let samples = parts.samples(stride)?;
    let mut probes: Vec<P::Key> = samples.concat();
    // G sorted runs laid end to end: std's stable sort finds and merges them in about G·2^14
    // steps, where the unstable sort would sort them afresh (docs/decisions.md, "Cuts from a
    // sample, a workspace per GPU").
    probes.sort();
    probes.dedup();
    // From the samples alone, each probe's total rank is known to within a stride per part:
    // only the probes whose bounds straddle a target (and their neighbours) need exact ranks.
    let bounds = |u: P::Key| -> (u64, u64) {
        let mut total = (0, 0);
        for (part, &n) in samples.iter().zip(&lens) {
            let (lo, hi) = not_above_bounds(part, n, stride, u);
            total = (total.0 + lo, total.1 + hi);
        }
        total
    };
    let ranges: Vec<(usize, usize)> = targets
        .iter()
        .filter(|&&r| r > 0 && r < total)
        .map(|&r| {
            // Past the last probe surely below r keys, up to the first surely at r or more.
            let first =
                partition_point(probes.len(), |p| bounds(probes[p]).1 < r).saturating_sub(1);
            let last = partition_point(probes.len(), |p| bounds(probes[p]).0 < r);
            (first, last.min(probes.len() - 1))
        })
        .collect();
    let mut wanted: Vec<usize> = ranges.iter().flat_map(|&(a, b)| a..=b).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let wanted_probes: Vec<P::Key> = wanted.iter().map(|&p| probes[p]).collect();
    let ranks = parts.ranks(&wanted_probes)?;
    // Ranks of probe p (an index into `probes` that is wanted), per part: (below, not above).
    let exact = |p: usize, part: usize| -> (u64, u64) {
        let w = wanted.binary_search(&p).expect("ranked probe");
        (ranks[part].below[w], ranks[part].not_above[w])
    };
    let total_not_above = |p: usize| -> u64 { (0..g).map(|i| exact(p, i).1).sum() };
    // Per inner target: its key's ranks per part if it is a probe, else the spans that
    // hold it (the keys strictly between probes a − 1 and a; a > first, since probe `first`
    // has fewer than r keys not above it or is the smallest key).
    enum Found {
        Probe(Vec<u64>, Vec<u64>),
        Between(Vec<Range<u64>>),
    }
    let inner: Vec<(usize, u64)> = targets
        .iter()
        .enumerate()
        .filter(|&(_, &r)| r > 0 && r < total)
        .map(|(j, &r)| (j, r))
        .collect();
    let found: Vec<Found> = inner
        .iter()
        .zip(&ranges)
        .map(|(&(_, r), &(first, last))| {
            // The first probe with at least r keys not above it: the r-th key is at most it.
            let a = first + partition_point(last - first, |k| total_not_above(first + k) < r);
            let below_a: u64 = (0..g).map(|i| exact(a, i).0).sum();
            if below_a < r {
                let (below, not_above) = (0..g).map(|i| exact(a, i)).unzip();
                Found::Probe(below, not_above)
            } else {
                Found::Between((0..g).map(|i| exact(a - 1, i).1..exact(a, i).0).collect())
            }
        })
        .collect();
    let requests: Vec<Vec<Range<u64>>> = (0..g)
        .map(|i| {
            let between = found.iter().filter_map(|f| match f {
                Found::Between(ranges) => Some(ranges[i].clone()),
                Found::Probe(..) => None,
            });
            between.collect()
        })
        .collect();
    let mut spans = parts.spans(&requests)?;
    let mut next_span = 0;
    for (j, &r) in targets.iter().enumerate() {
        cuts[j + 1] = if r == 0 { vec![0; g] } else { lens.clone() };
    }
    for (&(j, r), f) in inner.iter().zip(found) {
        let (below, not_above) = match f {
            Found::Probe(below, not_above) => (below, not_above),
            Found::Between(ranges) => {
                let part_spans: Vec<(u64, Vec<P::Key>)> = (0..g)
                    .map(|i| (ranges[i].start, std::mem::take(&mut spans[i][next_span])))
                    .collect();
                next_span += 1;
                key_ranks_in_spans(&part_spans, r)
            }
        };
        cuts[j + 1] = stable_cut(&below, &not_above, r);
    }
    Ok(cuts)
}

/// Bounds on the keys not above `u` in a sorted part of `n` keys with regular sample `samples`
/// at `stride`: between one past the last sample not above `u` and the first sample above it.
fn not_above_bounds<K: Ord>(samples: &[K], n: u64, stride: u64, u: K) -> (u64, u64) {
    use kernels_gpu::multi::sample_position;
    let c = samples.partition_point(|s| *s <= u) as u64;
    let lo = if c == 0 {
        0
    } else {
        sample_position(c - 1, n, stride) + 1
    };
    let hi = if c == samples.len() as u64 {
        n
    } else {
        sample_position(c, n, stride)
    };
    (lo, hi)
}

/// The per-part ranks (below, not above) of the r-th smallest key (1-based), found among the
/// keys of `spans` (per part: its first position and its keys), which hold it; the keys
/// before each span are all below it.
fn key_ranks_in_spans<K: Ord + Copy>(spans: &[(u64, Vec<K>)], r: u64) -> (Vec<u64>, Vec<u64>) {
    let mut candidates: Vec<K> = spans.iter().flat_map(|(_, w)| w.iter().copied()).collect();
    candidates.sort(); // sorted spans laid end to end: merged, not sorted from scratch
    candidates.dedup();
    let not_above = |v: K| -> Vec<u64> {
        let count = |(start, w): &(u64, Vec<K>)| start + w.partition_point(|&k| k <= v) as u64;
        spans.iter().map(count).collect()
    };
    let c = partition_point(candidates.len(), |c| {
        not_above(candidates[c]).iter().sum::<u64>() < r
    });
    let v = candidates[c];
    let below = spans
        .iter()
        .map(|(start, w)| start + w.partition_point(|&k| k < v) as u64)
        .collect();
    (below, not_above(v))
}

/// The cut at global rank `r` when the r-th key has `below[i]` keys below it and `not_above[i]`
/// not above it in part `i`: all keys below it, then its equals part by part until `r` keys.
fn stable_cut(below: &[u64], not_above: &[u64], r: u64) -> Vec<u64> {
    let mut need = r - below.iter().sum::<u64>();
    below
        .iter()
        .zip(not_above)
        .map(|(&b, &na)| {
            let take = (na - b).min(need);
            need -= take;
            b + take
        })
        .collect()
}

/// The first index in `0..len` where `pred` is false (`pred` true then false).
fn partition_point(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Sorted parts in host vectors: the selection's CPU reference, and the model the tests check
/// the GPU parts against.
#[cfg(any(test, feature = "testing"))]
#[derive(Clone, Debug)]
pub(crate) struct HostParts<K> {
    /// The sorted parts.
    pub parts: Vec<Vec<K>>,
    /// Keys read by [`SortedParts::spans`] so far (the cost of round 2).
    pub span_keys: u64,
    /// Probes ranked by [`SortedParts::ranks`] so far.
    pub ranked: u64,
}

#[cfg(any(test, feature = "testing"))]
impl<K: Ord + Copy> SortedParts for HostParts<K> {
    type Key = K;

    fn lens(&self) -> Vec<u64> {
        self.parts.iter().map(|p| p.len() as u64).collect()
    }

    fn samples(&mut self, stride: u64) -> Result<Vec<Vec<K>>> {
        use kernels_gpu::multi::{sample_count, sample_position};
        Ok(self
            .parts
            .iter()
            .map(|p| {
                let n = p.len() as u64;
                if n == 0 {
                    return Vec::new();
                }
                (0..sample_count(n, stride))
                    .map(|m| p[sample_position(m, n, stride) as usize])
                    .collect()
            })
            .collect())
    }

    fn ranks(&mut self, probes: &[K]) -> Result<Vec<Ranks>> {
        self.ranked += probes.len() as u64;
        Ok(self
            .parts
            .iter()
            .map(|p| Ranks {
                below: probes
                    .iter()
                    .map(|&v| p.partition_point(|&k| k < v) as u64)
                    .collect(),
                not_above: probes
                    .iter()
                    .map(|&v| p.partition_point(|&k| k <= v) as u64)
                    .collect(),
            })
            .collect())
    }

    fn spans(&mut self, ranges: &[Vec<Range<u64>>]) -> Result<Vec<Vec<Vec<K>>>> {
        let read = |(part, ranges): (&Vec<K>, &Vec<Range<u64>>)| -> Vec<Vec<K>> {
            let slice = |r: &Range<u64>| part[r.start as usize..r.end as usize].to_vec();
            ranges.iter().map(slice).collect()
        };
        self.span_keys += ranges
            .iter()
            .flatten()
            .map(|r| r.end - r.start)
            .sum::<u64>();
        Ok(self.parts.iter().zip(ranges).map(read).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The cuts by brute force: tag every key with (part, position), sort stably, count.
    fn brute_force(parts: &[Vec<u8>]) -> Cuts {
        let g = parts.len();
        let mut all: Vec<(u8, usize)> = parts
            .iter()
            .enumerate()
            .flat_map(|(i, p)| p.iter().map(move |&k| (k, i)))
            .collect();
        all.sort(); // by key, then part (positions within a part are already in order)
        let mut cuts = vec![vec![0u64; g]; g + 1];
        let mut start = 0;
        for j in 0..g {
            let end = start + parts[j].len();
            for &(_, i) in &all[..end] {
                cuts[j + 1][i] += 1;
            }
            start = end;
        }
        cuts
    }

    fn sorted_parts() -> impl Strategy<Value = Vec<Vec<u8>>> {
        prop::collection::vec(prop::collection::vec(0u8..12, 0..60), 1..7).prop_map(|mut ps| {
            ps.iter_mut().for_each(|p| p.sort());
            ps
        })
    }

    proptest! {
        #[test]
        fn cuts_match_the_stable_sort_of_the_parts(parts in sorted_parts(), stride in 1u64..9) {
            let mut host = HostParts { parts: parts.clone(), span_keys: 0, ranked: 0 };
            let cuts = cuts(&mut host, stride).unwrap();
            prop_assert_eq!(cuts, brute_force(&parts));
        }
    }

    #[test]
    fn spans_stay_within_a_stride_per_part_and_cut() {
        let stride = 64;
        let parts: Vec<Vec<u32>> = (0..4u32)
            .map(|i| {
                let mut p: Vec<u32> = (0..5000u32)
                    .map(|k| k.wrapping_mul(2654435761) ^ i)
                    .collect();
                p.sort();
                p
            })
            .collect();
        let mut host = HostParts {
            parts,
            span_keys: 0,
            ranked: 0,
        };
        cuts(&mut host, stride).unwrap();
        assert!(host.span_keys <= 3 * 4 * (stride - 1), "{}", host.span_keys);
        // A handful of probes per target, not every sample.
        assert!(host.ranked <= 3 * 30, "{} probes ranked", host.ranked);
    }

    #[test]
    fn all_equal_keys_are_cut_in_part_order() {
        let mut host = HostParts {
            parts: vec![vec![7u8; 5], vec![7; 3], vec![7; 4]],
            span_keys: 0,
            ranked: 0,
        };
        let cuts = cuts(&mut host, 2).unwrap();
        assert_eq!(
            cuts,
            vec![vec![0, 0, 0], vec![5, 0, 0], vec![5, 3, 0], vec![5, 3, 4]]
        );
    }
}
