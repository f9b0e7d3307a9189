//! `auto`: the sort the default calls run, chosen from the measured table of the device's
//! policy ([`kernels_gpu::tuning::auto`]) by n, key width and values, and the device memory
//! there is: an unstable sort whose faster choice's scratch does not fit runs the in-place
//! bitonic sort instead; a stable one keeps its choice (and fails, or goes in chunks, as any
//! stable sort). Pure functions of the sizes and the memory, tested on the CPU; the sorter's
//! calls read the memory and apply them.

use super::{GpuAlgo, merge, radix};
#[cfg(test)]
use kernels_gpu::tuning::auto::HOPPER;
use kernels_gpu::tuning::auto::{AutoSort, AutoTable, Choices};

impl From<AutoSort> for GpuAlgo {
    fn from(sort: AutoSort) -> GpuAlgo {
        match sort {
            AutoSort::Bitonic => GpuAlgo::Bitonic,
            AutoSort::Merge => GpuAlgo::Merge,
            AutoSort::Radix => GpuAlgo::Radix,
        }
    }
}

/// What a call asks of `auto`: which sorts it may run, and whether values travel.
///
/// ```
/// use gpusort::GpuSorter;
/// use gpusort::gpu::Sorting;
///
/// # fn ask(gpu: &GpuSorter) -> gpusort::Result<()> {
/// println!("{:?}", gpu.auto_device::<u32>(Sorting::Pairs { value_bytes: 4 }, 1 << 20)?);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sorting {
    /// Keys alone, any sort (`sort_unstable`, on host slices and on a [`Queue`](super::Queue)):
    /// the bitonic sort where the faster one's scratch does not fit.
    Unstable,
    /// Keys alone, a stable sort (`sort`): the merge or the radix sort.
    Stable,
    /// Keys with values of `value_bytes` bytes each (`sort_by_key`, the host slices' `argsort`;
    /// payloads travel in slots of 4, 8 or 16 bytes): the merge or the radix sort.
    Pairs {
        /// Bytes per value (slot).
        value_bytes: usize,
    },
}

impl Sorting {
    /// Whether only stable sorts may run.
    pub(crate) fn is_stable(self) -> bool {
        self != Sorting::Unstable
    }

    /// Bytes per value (0 for keys alone).
    pub(crate) fn value_bytes(self) -> usize {
        match self {
            Sorting::Pairs { value_bytes } => value_bytes,
            Sorting::Unstable | Sorting::Stable => 0,
        }
    }
}

#[cfg(test)]
impl GpuAlgo {
    /// The fastest sort of `n` keys of `key_bytes` already on the device by the Hopper table,
    /// memory aside.
    pub(crate) fn fastest_for(n: usize, key_bytes: usize) -> GpuAlgo {
        fastest(&HOPPER.device, Sorting::Unstable, n as u64, key_bytes)
    }

    /// The fastest stable sort of `n` keys of `key_bytes` with values of `value_bytes` (0: keys
    /// alone) already on the device by the Hopper table.
    pub(crate) fn fastest_stable_for(n: usize, key_bytes: usize, value_bytes: usize) -> GpuAlgo {
        let sorting = if value_bytes == 0 {
            Sorting::Stable
        } else {
            Sorting::Pairs { value_bytes }
        };
        fastest(&HOPPER.device, sorting, n as u64, key_bytes)
    }
}

/// The fastest sort in `table` for `sorting` of `n` keys of `key_bytes`, memory aside.
pub(crate) fn fastest(table: &Choices, sorting: Sorting, n: u64, key_bytes: usize) -> GpuAlgo {
    let kb = key_bytes as u32;
    match sorting {
        Sorting::Unstable => table.keys(n, kb),
        Sorting::Stable | Sorting::Pairs { .. } => {
            table.stable(n, kb, sorting.value_bytes() as u32)
        }
    }
    .into()
}

/// Bytes of scratch `algo` needs for `n` keys of `key_bytes` with values of `value_bytes` on
/// a device whose blocks may have `max_shared` bytes of shared memory: none for the bitonic
/// sort.
pub(crate) fn scratch_bytes(
    algo: GpuAlgo,
    n: u64,
    key_bytes: usize,
    value_bytes: usize,
    max_shared: u32,
) -> u64 {
    match algo {
        GpuAlgo::Bitonic => 0,
        GpuAlgo::Merge => merge::scratch_bytes_on(n, key_bytes, value_bytes, max_shared),
        GpuAlgo::Radix => radix::scratch_bytes(n, key_bytes, value_bytes),
    }
}

/// `auto`'s sort for `sorting` of `n` keys of `key_bytes` with the choices of `table` on a
/// device of `max_shared` bytes of shared memory per block, with `spare` bytes of device memory
/// for its scratch: the table's choice, or for keys alone unstable the in-place bitonic sort
/// when that choice's scratch does not fit.
pub(crate) fn choose(
    table: &Choices,
    sorting: Sorting,
    n: u64,
    key_bytes: usize,
    spare: u64,
    max_shared: u32,
) -> GpuAlgo {
    let algo = fastest(table, sorting, n, key_bytes);
    let scratch = scratch_bytes(algo, n, key_bytes, sorting.value_bytes(), max_shared);
    if sorting == Sorting::Unstable && scratch > spare {
        GpuAlgo::Bitonic
    } else {
        algo
    }
}

/// Which sort a host-slice call runs: the one it names, or `auto`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    Algo(GpuAlgo),
    Auto(Sorting),
}

/// How a host-slice sort runs ([`GpuSorter::auto_host`](super::GpuSorter::auto_host)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPlan {
    /// The sort: of the whole, or of each chunk as long as `chunk` (a shorter last chunk may
    /// get another).
    pub algo: GpuAlgo,
    /// Keys per chunk when the whole does not fit on the device (the sorted chunks are then
    /// merged on the CPU); `None` for one round trip.
    pub chunk: Option<u64>,
}

/// Device bytes per key that a host-slice sort with `algo` plans its chunks with, for keys of
/// `key_bytes` and values in slots of `slot` bytes: the keys alone (the bitonic sort carries no
/// values), or keys and values twice over and the merge sort's splits (its scratch,
/// [`merge::scratch_bytes`]) or the radix sort's status words (at most 4/3 bytes per key).
fn per_key(algo: GpuAlgo, key_bytes: u64, slot: u64) -> u64 {
    match algo {
        GpuAlgo::Bitonic => key_bytes,
        GpuAlgo::Merge => 2 * (key_bytes + slot) + 1,
        GpuAlgo::Radix => 2 * (key_bytes + slot) + 2,
    }
}

/// How a host-slice sort of `n` keys of `key_bytes` with values in slots of `slot` bytes runs
/// when `room` bytes of device memory are its to use, on a device of `table` (its host slices'
/// choices) and `max_shared`:
///
/// - a named sort: whole if its keys, values and scratch fit, else in chunks that do;
/// - `auto`: its choice ([`choose`]) whole where that fits with its keys and values (an
///   unstable sort of keys alone falls back to the bitonic sort, which needs only the keys);
///   else chunks that the bitonic sort fits (keys alone, unstable) or that both stable sorts
///   fit (planned for the radix sort, which needs a little more than the merge sort), each
///   sorted with `auto`'s choice for its length.
pub(crate) fn plan_host(
    table: &AutoTable,
    pick: Pick,
    n: u64,
    key_bytes: usize,
    slot: usize,
    room: u64,
    max_shared: u32,
) -> HostPlan {
    let (kb, sb) = (key_bytes as u64, slot as u64);
    match pick {
        Pick::Algo(algo) => {
            let per_key = per_key(algo, kb, sb);
            let fits = n.saturating_mul(per_key) <= room;
            HostPlan {
                algo,
                chunk: (!fits).then(|| (room / per_key).max(1)),
            }
        }
        Pick::Auto(sorting) => {
            let table = &table.host;
            let on_device = |n: u64| n.saturating_mul(kb + sb);
            let spare = |n: u64| room.saturating_sub(on_device(n));
            let algo = choose(table, sorting, n, key_bytes, spare(n), max_shared);
            let scratch = scratch_bytes(algo, n, key_bytes, slot, max_shared);
            if on_device(n).saturating_add(scratch) <= room {
                return HostPlan { algo, chunk: None };
            }
            let planned = if sorting.is_stable() {
                GpuAlgo::Radix
            } else {
                GpuAlgo::Bitonic
            };
            let chunk = (room / per_key(planned, kb, sb)).clamp(1, n);
            HostPlan {
                algo: choose(table, sorting, chunk, key_bytes, spare(chunk), max_shared),
                chunk: Some(chunk),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sortings_say_what_they_need() {
        assert_eq!(super::Sorting::Pairs { value_bytes: 4 }.value_bytes(), 4);
        assert!(!super::Sorting::Unstable.is_stable());
        assert!(super::Sorting::Stable.is_stable());
    }

    use super::*;
    use kernels_gpu::tuning::MAX_SHARED_BYTES;
    use kernels_gpu::tuning::auto::table;
    use std::collections::BTreeMap;

    const GIB: u64 = 1 << 30;

    /// The sweeps the Hopper table was written from (`tests/data/h100-*.csv`; each file's first
    /// lines say how it was measured), built into the tests so that they run wherever the test
    /// executable does.
    const BENCH: (&str, &str) = (
        "h100-auto-sweep.csv",
        include_str!("../../../tests/data/h100-auto-sweep.csv"),
    );
    const BENCH_PAIRS: (&str, &str) = (
        "h100-auto-sweep-pairs.csv",
        include_str!("../../../tests/data/h100-auto-sweep-pairs.csv"),
    );
    const BENCH_2P28: (&str, &str) = (
        "h100-auto-sweep-2p28.csv",
        include_str!("../../../tests/data/h100-auto-sweep-2p28.csv"),
    );
    /// A second Hopper device's sweeps (`tests/data/h200-*.csv`), by the same commands.
    const H200_BENCH: (&str, &str) = (
        "h200-auto-sweep.csv",
        include_str!("../../../tests/data/h200-auto-sweep.csv"),
    );
    const H200_BENCH_PAIRS: (&str, &str) = (
        "h200-auto-sweep-pairs.csv",
        include_str!("../../../tests/data/h200-auto-sweep-pairs.csv"),
    );
    const HOST_SLICES: (&str, &str) = (
        "h100-host-slices.csv",
        include_str!("../../../tests/data/h100-host-slices.csv"),
    );

    /// Median ms by (dtype, n) and sort, from the CSVs `files` (name, text; header row first;
    /// lines starting with `#` are notes): `algo`, `dtype`, `n`, `ms_median` columns, any others.
    fn sweep(files: &[(&str, &str)]) -> BTreeMap<(String, u64), BTreeMap<String, f64>> {
        let mut all: BTreeMap<(String, u64), BTreeMap<String, f64>> = BTreeMap::new();
        for &(path, text) in files {
            let mut lines = text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty());
            let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
            let column = |name: &str| {
                header
                    .iter()
                    .position(|h| *h == name)
                    .unwrap_or_else(|| panic!("no column {name} in {path}"))
            };
            let (algo, dtype, n, ms) = (
                column("algo"),
                column("dtype"),
                column("n"),
                column("ms_median"),
            );
            let order = header.iter().position(|h| *h == "order");
            for line in lines {
                let cells: Vec<&str> = line.split(',').collect();
                if order.is_some_and(|o| cells[o] != "asc") {
                    continue;
                }
                let key = (cells[dtype].to_string(), cells[n].parse().expect("n"));
                let ms: f64 = cells[ms].parse().expect("ms_median");
                all.entry(key)
                    .or_default()
                    .insert(cells[algo].to_string(), ms);
            }
        }
        all
    }

    /// Checks that `choice` is within 5% of the fastest of `algos` (the CSV's names) at every
    /// measured (key type, n) of `sweep` where they all were measured; returns how many.
    fn within_five_percent(
        sweep: &BTreeMap<(String, u64), BTreeMap<String, f64>>,
        algos: &[&str],
        what: &str,
        choice: impl Fn(u64, usize) -> GpuAlgo,
    ) -> usize {
        let mut checked = 0;
        for ((dtype, n), times) in sweep {
            let Some(times): Option<Vec<f64>> =
                algos.iter().map(|a| times.get(*a).copied()).collect()
            else {
                continue;
            };
            let key_bytes = if dtype.ends_with("32") { 4 } else { 8 };
            let best = times.iter().copied().fold(f64::INFINITY, f64::min);
            let chosen = choice(*n, key_bytes);
            let at = algos
                .iter()
                .position(|a| a.starts_with(chosen.name()))
                .unwrap_or_else(|| panic!("{what}: {} is not among {algos:?}", chosen.name()));
            let ratio = times[at] / best;
            assert!(
                ratio <= 1.05,
                "{what}: {dtype} n = 2^{}: {} takes {ratio:.3}× the fastest ({times:?} for {algos:?})",
                n.ilog2(),
                chosen.name()
            );
            checked += 1;
        }
        checked
    }

    /// Checks the Hopper table's choices for keys on the device against the sweeps `keys` (keys
    /// alone among all three sorts, stable keys alone among the stable ones; `sizes` per key
    /// type at least) and `pairs` (values as wide as the keys, the stable sorts; 2^10..2^27 of
    /// u32 and u64).
    fn check_hopper_device_table(keys: &[(&str, &str)], pairs: &[(&str, &str)], sizes: usize) {
        let keys_sweep = sweep(keys);
        let t = &table((9, 0)).device;
        let checked = within_five_percent(
            &keys_sweep,
            &["bitonic", "merge", "radix"],
            "keys",
            |n, kb| fastest(t, Sorting::Unstable, n, kb),
        );
        assert!(checked >= sizes, "{checked} sizes checked");
        let stable = within_five_percent(&keys_sweep, &["merge", "radix"], "stable", |n, kb| {
            fastest(t, Sorting::Stable, n, kb)
        });
        assert_eq!(stable, checked);
        let pairs = within_five_percent(
            &sweep(pairs),
            &["merge_pairs", "radix_pairs"],
            "pairs",
            |n, kb| fastest(t, Sorting::Pairs { value_bytes: kb }, n, kb),
        );
        assert_eq!(pairs, 2 * 18);
    }

    /// The Hopper table's choice for keys on the device is within 5% of the fastest sort at
    /// every size and key type of the sweeps it was written from (u32, f32, u64: 2^10..2^27,
    /// and u32 and u64 at 2^28).
    #[test]
    fn the_hopper_table_is_within_five_percent_of_the_h100_sweep() {
        check_hopper_device_table(&[BENCH, BENCH_2P28], &[BENCH_PAIRS], 3 * 18 + 2);
    }

    /// The same against a second Hopper device's sweeps (u32, f32, u64: 2^10..2^27): the spans
    /// hold there too.
    #[test]
    fn the_hopper_table_is_within_five_percent_of_the_h200_sweep() {
        check_hopper_device_table(&[H200_BENCH], &[H200_BENCH_PAIRS], 3 * 18);
    }

    /// The Hopper table's choice for host slices is within 5% of the fastest end to end at every
    /// size and key type of the host-slice sweep from 2^21 keys, where its runs agree closely
    /// (below, the copies' latency and the allocations make runs differ by more than the sorts
    /// do: the choice there is documented in `HOST_KEYS_32`).
    #[test]
    fn the_hopper_host_table_is_within_five_percent_of_the_h100_host_sweep() {
        let mut sweep = sweep(&[HOST_SLICES]);
        sweep.retain(|&(_, n), _| n >= 1 << 21);
        let t = &table((9, 0)).host;
        let keys = within_five_percent(&sweep, &["bitonic", "merge", "radix"], "host", |n, kb| {
            fastest(t, Sorting::Unstable, n, kb)
        });
        // u32, f32: 2^21..2^28; u64: 2^21..2^27.
        assert_eq!(keys, 8 + 8 + 7);
        for sorting in [Sorting::Stable, Sorting::Pairs { value_bytes: 4 }] {
            let checked =
                within_five_percent(&sweep, &["merge", "radix"], "host stable", |n, kb| {
                    fastest(t, sorting, n, kb)
                });
            assert_eq!(checked, keys);
        }
    }

    #[test]
    fn the_associated_functions_read_the_hopper_table() {
        for log2 in 0..=32 {
            let n = 1usize << log2;
            for kb in [4, 8] {
                assert_eq!(
                    GpuAlgo::fastest_for(n, kb),
                    fastest(&HOPPER.device, Sorting::Unstable, n as u64, kb)
                );
                assert_ne!(GpuAlgo::fastest_stable_for(n, kb, 0), GpuAlgo::Bitonic);
                assert_ne!(GpuAlgo::fastest_stable_for(n, kb, 16), GpuAlgo::Bitonic);
            }
        }
    }

    #[test]
    fn unstable_sorts_fall_back_to_the_bitonic_sort_when_the_scratch_does_not_fit() {
        let n = 1u64 << 25;
        assert_eq!(
            fastest(&HOPPER.device, Sorting::Unstable, n, 4),
            GpuAlgo::Radix
        );
        let needed = radix::scratch_bytes(n, 4, 0);
        let choose = |spare| {
            choose(
                &HOPPER.device,
                Sorting::Unstable,
                n,
                4,
                spare,
                MAX_SHARED_BYTES,
            )
        };
        assert_eq!(choose(needed), GpuAlgo::Radix);
        assert_eq!(choose(needed - 1), GpuAlgo::Bitonic);
        assert_eq!(choose(0), GpuAlgo::Bitonic);
        // Where the table says bitonic, no memory is needed.
        assert_eq!(
            super::choose(
                &HOPPER.device,
                Sorting::Unstable,
                1 << 16,
                8,
                0,
                MAX_SHARED_BYTES
            ),
            GpuAlgo::Bitonic
        );
        // The merge sort's scratch, for 8-byte keys at 2^20.
        let needed = merge::scratch_bytes_on(1 << 20, 8, 0, MAX_SHARED_BYTES);
        let choose = |spare| {
            super::choose(
                &HOPPER.device,
                Sorting::Unstable,
                1 << 20,
                8,
                spare,
                MAX_SHARED_BYTES,
            )
        };
        assert_eq!(
            (choose(needed), choose(needed - 1)),
            (GpuAlgo::Merge, GpuAlgo::Bitonic)
        );
    }

    #[test]
    fn stable_sorts_keep_their_choice_whatever_the_memory() {
        for sorting in [Sorting::Stable, Sorting::Pairs { value_bytes: 8 }] {
            for (n, algo) in [(1u64 << 12, GpuAlgo::Merge), (1 << 28, GpuAlgo::Radix)] {
                for spare in [0, GIB, u64::MAX] {
                    let chosen = choose(&HOPPER.device, sorting, n, 8, spare, MAX_SHARED_BYTES);
                    assert_eq!(chosen, algo, "{sorting:?}, n = {n}, {spare} bytes");
                }
            }
        }
    }

    #[test]
    fn a_named_sort_goes_whole_or_in_chunks_as_before() {
        let plan = |algo, n, slot, room| {
            plan_host(
                &HOPPER,
                Pick::Algo(algo),
                n,
                4,
                slot,
                room,
                MAX_SHARED_BYTES,
            )
        };
        let whole = |algo| HostPlan { algo, chunk: None };
        assert_eq!(
            plan(GpuAlgo::Bitonic, 1000, 0, 4000),
            whole(GpuAlgo::Bitonic)
        );
        assert_eq!(
            plan(GpuAlgo::Bitonic, 1001, 0, 4000),
            HostPlan {
                algo: GpuAlgo::Bitonic,
                chunk: Some(1000)
            }
        );
        assert_eq!(plan(GpuAlgo::Merge, 1000, 4, 17_000), whole(GpuAlgo::Merge));
        assert_eq!(
            plan(GpuAlgo::Radix, 1000, 4, 17_000),
            HostPlan {
                algo: GpuAlgo::Radix,
                chunk: Some(1000 * 17 / 18)
            }
        );
    }

    #[test]
    fn auto_on_the_host_takes_the_bitonic_sort_whole_before_chunks() {
        let plan = |sorting: Sorting, n: u64, room| {
            let slot = sorting.value_bytes();
            plan_host(
                &HOPPER,
                Pick::Auto(sorting),
                n,
                4,
                slot,
                room,
                MAX_SHARED_BYTES,
            )
        };
        let whole = |algo| HostPlan { algo, chunk: None };
        // 2^27 host keys: the merge sort, where its scratch fits.
        let n = 1u64 << 27;
        assert_eq!(
            fastest(&HOPPER.host, Sorting::Unstable, n, 4),
            GpuAlgo::Merge
        );
        let keys = 4 * n;
        let merge = keys + merge::scratch_bytes_on(n, 4, 0, MAX_SHARED_BYTES);
        assert_eq!(plan(Sorting::Unstable, n, merge), whole(GpuAlgo::Merge));
        // Room for the keys alone: the bitonic sort, whole, in place.
        for room in [merge - 1, keys] {
            let chosen = plan(Sorting::Unstable, n, room);
            assert_eq!(chosen, whole(GpuAlgo::Bitonic), "{room} bytes");
        }
        // Less: chunks as long as the bitonic sort allows, each sorted by it.
        assert_eq!(
            plan(Sorting::Unstable, n, keys - 1),
            HostPlan {
                algo: GpuAlgo::Bitonic,
                chunk: Some(n - 1)
            }
        );
        // A stable sort keeps a stable choice, in chunks that leave room for its scratch.
        let stable = plan(Sorting::Stable, n, keys);
        assert_eq!(stable.chunk, Some(keys / 10));
        assert_eq!(
            stable.algo,
            fastest(&HOPPER.host, Sorting::Stable, keys / 10, 4)
        );
        let pairs = plan(Sorting::Pairs { value_bytes: 4 }, n, merge);
        assert_ne!(pairs.algo, GpuAlgo::Bitonic);
        assert!(pairs.chunk.is_some_and(|c| c < n));
        // Plenty of room: the host table's choice, whatever the call.
        for sorting in [
            Sorting::Unstable,
            Sorting::Stable,
            Sorting::Pairs { value_bytes: 16 },
        ] {
            for log2 in [10, 16, 20, 24, 28] {
                let n = 1u64 << log2;
                let want = whole(fastest(&HOPPER.host, sorting, n, 4));
                assert_eq!(plan(sorting, n, 64 * GIB), want, "{sorting:?} 2^{log2}");
            }
        }
    }

    #[test]
    fn every_chunk_of_an_auto_plan_fits_its_room() {
        for sorting in [
            Sorting::Unstable,
            Sorting::Stable,
            Sorting::Pairs { value_bytes: 8 },
        ] {
            for kb in [4, 8] {
                let slot = sorting.value_bytes();
                for room in [64 << 20, 100_000_000, 3 * GIB] {
                    let n = 1u64 << 30;
                    let plan = plan_host(
                        &HOPPER,
                        Pick::Auto(sorting),
                        n,
                        kb,
                        slot,
                        room,
                        MAX_SHARED_BYTES,
                    );
                    let chunk = plan.chunk.expect("2^30 keys do not fit");
                    let need = chunk * (kb + slot) as u64
                        + scratch_bytes(plan.algo, chunk, kb, slot, MAX_SHARED_BYTES);
                    assert!(need <= room, "{sorting:?} {kb}: {need} > {room}");
                }
            }
        }
    }
}
