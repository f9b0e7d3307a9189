//! What `auto` sorts with: the fastest of the bitonic, merge and radix sorts by n, key width,
//! whether values travel and where the keys are, measured per device policy. The host's default
//! calls read it (a sorter's `sort_unstable`, `sort`, `sort_by_key` and `argsort`, on host slices
//! and on a `Queue`); whether the chosen sort's
//! scratch fits is the host's to check: an unstable sort that does not fit falls back to the
//! in-place bitonic sort, a stable one has no such fallback.
//!
//! Keys on the device and host slices have lists of their own ([`Choices`]): a host slice's
//! sort overlaps the copies (each chunk of 2^22 keys is sorted as it lands, the last pass is
//! copied back range by range), which the bitonic and the merge sort do and the radix sort,
//! whose passes each need every key, cannot; and its merge or radix sort allocates and frees a
//! scratch buffer per call. So the radix sort, the fastest of the three on the device for
//! 4-byte keys from 2^17, is never the fastest end to end from 2^22 keys, and host slices do
//! not take it for keys alone (docs/decisions.md, "Host slices choose apart").
//!
//! A list is a list of [`Span`]s per key width: each gives the sort for n up to 2^`max_log2`
//! keys, above the span before it. The sizes measured are powers of two; between two of them
//! the choice measured at the larger holds (a sort of n keys costs at most what one of
//! 2^⌈log2 n⌉ keys costs: the bitonic network is that of 2^⌈log2 n⌉ positions). The rule for
//! writing a list from a sweep: at every measured size and key type the sort chosen is within
//! 5% of the fastest, and where two sorts are that close, the one that needs fewer spans. The
//! key types of one width (u32, i32, f32; u64, i64, f64) run the same kernels behind a key map,
//! so one span list serves them, within 5% of the fastest for every type measured. The sweeps
//! behind each list, and the margins at its breakpoints: docs/decisions.md, "A measured table,
//! not a rule"; the tests of `gpusort::gpu::auto` hold the lists to the committed sweeps
//! (`tests/data/`).
//!
//! ```
//! use kernels_gpu::tuning::auto::{AutoSort, HOPPER};
//!
//! assert_eq!(HOPPER.device.keys(1 << 16, 4), AutoSort::Bitonic);
//! assert_eq!(HOPPER.device.keys(1 << 18, 4), AutoSort::Radix);
//! assert_eq!(HOPPER.device.keys((1 << 16) + 1, 4), AutoSort::Radix); // n rounds up to 2^17
//! assert_eq!(HOPPER.device.stable(1 << 16, 4, 0), AutoSort::Merge);
//! assert_eq!(HOPPER.device.stable(1 << 26, 8, 4), AutoSort::Radix);
//! assert_eq!(HOPPER.host.keys(1 << 25, 4), AutoSort::Bitonic); // the copies hide the sort
//! assert_eq!(HOPPER.host.stable(1 << 26, 8, 4), AutoSort::Merge);
//! ```

use crate::bitonic::ceil_log2;

/// A GPU sort `auto` may choose (the host's `GpuAlgo` of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AutoSort {
    /// The bitonic network: unstable, in place, no scratch.
    Bitonic,
    /// The merge-path merge sort: stable, a scratch buffer as large as the keys and values.
    Merge,
    /// The LSD radix sort (Onesweep): stable, a scratch buffer as large as the keys and values
    /// and its look-back's status words.
    Radix,
}

/// The sort for every n up to 2^`max_log2` keys that an earlier span of its list does not
/// take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// log2 of the largest n of the span, rounded up ([`ceil_log2`]); [`ALL`] in a list's
    /// last span.
    pub max_log2: u32,
    /// The sort.
    pub sort: AutoSort,
}

/// `max_log2` of a list's last span: every n above the spans before it.
pub const ALL: u32 = u32::MAX;

const fn span(max_log2: u32, sort: AutoSort) -> Span {
    Span { max_log2, sort }
}

use AutoSort::{Bitonic, Merge, Radix};

/// 4-byte keys alone (u32, i32, f32) on the device, any sort, from the Hopper sweep
/// (`tests/data/h100-auto-sweep.csv`, u32 and f32, 2^10..2^27, and
/// `tests/data/h100-auto-sweep-2p28.csv`): the bitonic sort up to 2^16 but at 2^13, where the
/// merge sort is the fastest, and the radix sort from 2^17.
pub const KEYS_32: [Span; 4] = [
    span(12, Bitonic),
    span(13, Merge),
    span(16, Bitonic),
    span(ALL, Radix),
];

/// 8-byte keys alone (u64, i64, f64) on the device, any sort (the same sweep, u64): the bitonic
/// sort up to 2^12 and at 2^14-2^16, the merge sort at 2^13 and at 2^17-2^21, the radix sort
/// from 2^22.
pub const KEYS_64: [Span; 5] = [
    span(12, Bitonic),
    span(13, Merge),
    span(16, Bitonic),
    span(21, Merge),
    span(ALL, Radix),
];

/// 4-byte keys alone on the device, stable sorts only (`sort_device`): the faster of the merge
/// and the radix sort in the sweep of [`KEYS_32`]: the merge sort up to 2^16, the radix sort
/// from 2^17.
pub const STABLE_KEYS_32: [Span; 2] = [span(16, Merge), span(ALL, Radix)];

/// 8-byte keys alone on the device, stable sorts only: the faster of the two in the sweep of
/// [`KEYS_64`], the merge sort up to 2^21, the radix sort from 2^22.
pub const STABLE_KEYS_64: [Span; 2] = [span(21, Merge), span(ALL, Radix)];

/// 4-byte keys with values on the device (`Queue::sort_by_key`),
/// measured with 4-byte values (`tests/data/h100-auto-sweep-pairs.csv`, u32 keys with u32
/// values, 2^10..2^27): the merge sort up to 2^15, the radix sort from 2^16. Wider values
/// follow the same spans, unmeasured.
pub const PAIRS_32: [Span; 2] = [span(15, Merge), span(ALL, Radix)];

/// 8-byte keys with values on the device, measured with 8-byte values (the same sweep, u64 keys
/// with u64 values): the merge sort up to 2^16 and at 2^20, the radix sort at 2^17-2^19 and
/// from 2^21.
pub const PAIRS_64: [Span; 4] = [
    span(16, Merge),
    span(19, Radix),
    span(20, Merge),
    span(ALL, Radix),
];

/// Host slices of 4-byte keys alone (`sort_unstable`), any sort: the bitonic sort up to 2^26,
/// the merge sort above. Measured end to end from a `PinnedBuffer`
/// (`tests/data/h100-host-slices.csv`, u32 and f32, 2^16..2^28, medians of 2 to 7 runs). From
/// 2^21, where the runs agree closely, the bitonic sort is the fastest or within the 5% rule up
/// to 2^26, the merge sort above, and the radix sort, whose passes cannot overlap the copies,
/// is never the fastest. Below 2^21 a host slice's time is the copies' latency and the
/// scratch's allocation, and runs differ by more than the sorts do: there the bitonic sort,
/// which allocates nothing, was the fastest or within that noise.
pub const HOST_KEYS_32: [Span; 2] = [span(26, Bitonic), span(ALL, Merge)];

/// Host slices of 8-byte keys alone: the bitonic sort up to 2^25, the merge sort above (the
/// same sweep, u64 to 2^27; the radix sort is never the fastest).
pub const HOST_KEYS_64: [Span; 2] = [span(25, Bitonic), span(ALL, Merge)];

/// Host slices of 4-byte keys alone, stable sorts only (`sort`): as on the device up to 2^20
/// keys (below one overlap chunk, so the copies overlap neither sort), then the merge sort,
/// whose chunks are sorted as they land (the same sweep: from 2^21 the faster of the two or
/// within the 5% rule).
pub const HOST_STABLE_KEYS_32: [Span; 3] = [span(16, Merge), span(20, Radix), span(ALL, Merge)];

/// Host slices of 8-byte keys alone, stable sorts only: the merge sort (the same sweep: the
/// faster of the two at every size).
pub const HOST_STABLE_KEYS_64: [Span; 1] = [span(ALL, Merge)];

/// Host slices of 4-byte keys with values (`sort_by_key`, `argsort`). Not
/// measured end to end with values: the spans of [`HOST_STABLE_KEYS_32`] (the radix sort
/// cannot overlap the copies with values either).
pub const HOST_PAIRS_32: [Span; 3] = [span(16, Merge), span(20, Radix), span(ALL, Merge)];

/// Host slices of 8-byte keys with values. Not measured end to end with values: the span of
/// [`HOST_STABLE_KEYS_64`].
pub const HOST_PAIRS_64: [Span; 1] = [span(ALL, Merge)];

/// `auto`'s choices on the devices of one policy: for keys on the device and for host slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoTable {
    /// The device(s) it was measured on, for reports.
    pub measured_on: &'static str,
    /// For keys already on the device (the calls of a `Queue`).
    pub device: Choices,
    /// For host slices (`sort_unstable`, `sort`, `sort_by_key`, `argsort`).
    pub host: Choices,
}

/// A span list per (key width, kind of sort).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choices {
    /// Keys alone, any sort: 4-byte, 8-byte keys.
    pub keys: [&'static [Span]; 2],
    /// Keys alone, stable sorts only.
    pub stable_keys: [&'static [Span]; 2],
    /// Keys with values (stable sorts only).
    pub pairs: [&'static [Span]; 2],
}

impl Choices {
    /// The fastest sort of `n` keys of `key_bytes` (4 or 8) alone.
    pub const fn keys(&self, n: u64, key_bytes: u32) -> AutoSort {
        lookup(self.keys[width(key_bytes)], n)
    }

    /// The fastest stable sort (merge or radix) of `n` keys of `key_bytes` with values of
    /// `value_bytes` (0: keys alone).
    pub const fn stable(&self, n: u64, key_bytes: u32, value_bytes: u32) -> AutoSort {
        let spans = if value_bytes == 0 {
            self.stable_keys
        } else {
            self.pairs
        };
        lookup(spans[width(key_bytes)], n)
    }
}

/// The lists' index of keys of `key_bytes`.
const fn width(key_bytes: u32) -> usize {
    if key_bytes > 4 { 1 } else { 0 }
}

/// The sort of the first span of `spans` that takes `n` keys.
const fn lookup(spans: &[Span], n: u64) -> AutoSort {
    let log2 = ceil_log2(n);
    let mut i = 0;
    while i + 1 < spans.len() && spans[i].max_log2 < log2 {
        i += 1;
    }
    spans[i].sort
}

/// The Hopper policy (sm_90): written from one device's sweeps ([`KEYS_32`] and the other
/// lists); its device lists are also within 5% of the fastest at every size of a second Hopper
/// device's sweeps (`tests/data/h200-auto-sweep.csv` and `h200-auto-sweep-pairs.csv`).
pub const HOPPER: AutoTable = AutoTable {
    measured_on: "H100",
    device: Choices {
        keys: [&KEYS_32, &KEYS_64],
        stable_keys: [&STABLE_KEYS_32, &STABLE_KEYS_64],
        pairs: [&PAIRS_32, &PAIRS_64],
    },
    host: Choices {
        keys: [&HOST_KEYS_32, &HOST_KEYS_64],
        stable_keys: [&HOST_STABLE_KEYS_32, &HOST_STABLE_KEYS_64],
        pairs: [&HOST_PAIRS_32, &HOST_PAIRS_64],
    },
};

/// The table of a device of compute capability `compute_capability`: [`HOPPER`] for sm_90. No
/// other architecture has been swept yet, so every other one also gets [`HOPPER`]; a sweep on
/// another device (`gpusort bench`) would give it a table of its own here.
///
/// ```
/// use kernels_gpu::tuning::auto::{HOPPER, table};
/// assert_eq!(table((9, 0)), &HOPPER);
/// assert_eq!(table((8, 0)).measured_on, "H100"); // sm_80: the Hopper table, not swept there
/// ```
pub const fn table(compute_capability: (u32, u32)) -> &'static AutoTable {
    match compute_capability {
        (9, _) => &HOPPER,
        // Not swept: the measured table is the best guess.
        _ => &HOPPER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists() -> Vec<(&'static str, &'static [Span])> {
        vec![
            ("KEYS_32", &KEYS_32),
            ("KEYS_64", &KEYS_64),
            ("STABLE_KEYS_32", &STABLE_KEYS_32),
            ("STABLE_KEYS_64", &STABLE_KEYS_64),
            ("PAIRS_32", &PAIRS_32),
            ("PAIRS_64", &PAIRS_64),
            ("HOST_KEYS_32", &HOST_KEYS_32),
            ("HOST_KEYS_64", &HOST_KEYS_64),
            ("HOST_STABLE_KEYS_32", &HOST_STABLE_KEYS_32),
            ("HOST_STABLE_KEYS_64", &HOST_STABLE_KEYS_64),
            ("HOST_PAIRS_32", &HOST_PAIRS_32),
            ("HOST_PAIRS_64", &HOST_PAIRS_64),
        ]
    }

    #[test]
    fn spans_rise_and_the_last_takes_every_n() {
        for (name, spans) in lists() {
            assert_eq!(spans.last().map(|s| s.max_log2), Some(ALL), "{name}");
            assert!(
                spans.windows(2).all(|w| w[0].max_log2 < w[1].max_log2),
                "{name}"
            );
            assert!(
                spans.windows(2).all(|w| w[0].sort != w[1].sort),
                "{name}: merge the spans"
            );
        }
    }

    #[test]
    fn stable_lists_hold_only_stable_sorts() {
        let stable = lists()
            .into_iter()
            .filter(|(n, _)| n.contains("STABLE") || n.contains("PAIRS"));
        for (name, spans) in stable {
            assert!(spans.iter().all(|s| s.sort != Bitonic), "{name}");
        }
    }

    #[test]
    fn a_span_ends_at_its_power_of_two() {
        let t = &HOPPER.device;
        for (n, sort) in [
            (0, Bitonic),
            (1, Bitonic),
            (1 << 12, Bitonic),
            ((1 << 12) + 1, Merge),
            (1 << 13, Merge),
            ((1 << 13) + 1, Bitonic),
            (1 << 16, Bitonic),
            ((1 << 16) + 1, Radix),
            (1 << 22, Radix),
            (1 << 40, Radix),
        ] {
            assert_eq!(t.keys(n, 4), sort, "n = {n}");
        }
        assert_eq!(t.keys(1 << 13, 8), Merge);
        assert_eq!(t.keys((1 << 13) + 1, 8), Bitonic);
        assert_eq!(t.keys(1 << 19, 8), Merge);
        assert_eq!(t.keys(1 << 21, 8), Merge);
        assert_eq!(t.keys((1 << 21) + 1, 8), Radix);
        assert_eq!(t.stable(1 << 10, 8, 0), Merge);
        assert_eq!(t.stable(1 << 16, 4, 0), Merge);
        assert_eq!(t.stable(1 << 17, 4, 0), Radix);
        assert_eq!(t.stable(1 << 15, 4, 8), Merge);
        assert_eq!(t.stable(1 << 16, 4, 8), Radix);
        assert_eq!(t.stable(1 << 20, 8, 8), Merge);
        assert_eq!(t.stable(1 << 30, 4, 16), Radix);
        let h = &HOPPER.host;
        assert_eq!(
            (h.keys(1 << 26, 4), h.keys((1 << 26) + 1, 4)),
            (Bitonic, Merge)
        );
        assert_eq!(
            (h.keys(1 << 25, 8), h.keys((1 << 25) + 1, 8)),
            (Bitonic, Merge)
        );
        assert_eq!(
            (h.stable(1 << 20, 4, 0), h.stable(1 << 21, 4, 0)),
            (Radix, Merge)
        );
        assert_eq!(h.stable(1 << 30, 8, 8), Merge);
    }
}
