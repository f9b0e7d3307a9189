//! Running a [`Plan`]: for each key type, order and size, generate the keys once, sort them with
//! std once as the oracle, then time and verify every sort that runs at that size.

use super::plan::Plan;
use super::{Algo, Measurement};
use crate::error::Result;
use crate::gpu::GpuSorter;
use crate::inputs::{Dist, generate};
use crate::keys::{DType, Order, SortKey};
use crate::timing::{self, GpuTiming, Timing};
use crate::verify::{Mismatch, check_against, check_stable_values, reference};
use crate::with_key_type;

/// How each sort is timed, and the keys.
///
/// # Examples
///
/// ```
/// use gpusort_cli::{bench::sweep::Settings, inputs::Dist, timing::GpuTiming};
///
/// let settings = Settings {
///     reps: 10,
///     gpu_timing: GpuTiming::Sort,
///     cpu_reps: 3,
///     dist: Dist::Uniform,
///     seed: 42,
/// };
/// assert_eq!(settings.seed, 42);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Timed repetitions of a GPU sort, after one warm-up.
    pub reps: u32,
    /// How a GPU sort is timed.
    pub gpu_timing: GpuTiming,
    /// Timed repetitions of a CPU sort.
    pub cpu_reps: u32,
    /// Distribution of the keys.
    pub dist: Dist,
    /// Seed of the keys.
    pub seed: u64,
}

/// What the sweep is doing, for a progress display: [`run`] passes one to its `observe`
/// callback before generating each size's keys, before each sort, and after each measurement.
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::sweep::Step;
///
/// fn show(step: Step<'_>) {
///     match step {
///         Step::Oracle { dtype, n, .. } => eprintln!("{dtype} n={n}: generating"),
///         Step::Start { algo, .. } => eprintln!("timing {algo}"),
///         Step::Done { measurement, mismatch } => {
///             eprintln!("{} ms {}", measurement.ms.median, if mismatch.is_some() { "WRONG" } else { "ok" })
///         }
///     }
/// }
/// ```
#[derive(Debug)]
pub enum Step<'a> {
    /// About to generate `n` keys and sort them with std as the oracle (at 2^28 keys this takes
    /// longer than timing every sort).
    Oracle {
        /// The key type.
        dtype: DType,
        /// The order.
        order: Order,
        /// Number of keys.
        n: usize,
    },
    /// About to time `algo` on `n` keys.
    Start {
        /// The sort.
        algo: Algo,
        /// The key type.
        dtype: DType,
        /// The order.
        order: Order,
        /// Number of keys.
        n: usize,
    },
    /// A measurement is done; `mismatch` says why its output is wrong, if it is.
    Done {
        /// The measurement.
        measurement: &'a Measurement,
        /// Why the output differs from std's sort.
        mismatch: Option<&'a Mismatch>,
    },
}

/// What a sweep measured, and the GPU error that stopped it early, if one did. See [`run`].
#[derive(Debug)]
pub struct Outcome {
    /// Every measurement made, in the order made.
    pub measurements: Vec<Measurement>,
    /// The error that ended the sweep before the plan was done.
    pub error: Option<crate::Error>,
}

/// Runs `plan`. GPU sorts need `gpu`; without one they are skipped (leave them out of the plan
/// so that [`Plan::measurements`] counts right). A wrong output is recorded as not verified and
/// the sweep goes on; a GPU error stops it, keeping what was measured.
///
/// For each size it holds the input, std's sort of it and one output at a time: three copies
/// of the keys on the host, and two on the device for GPU sorts ([`timing::gpu_kernel`]).
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::{Algo, plan::Plan, sweep::{self, Settings, Step}};
/// use gpusort_cli::timing::GpuTiming;
/// use gpusort::{DType, GpuSorter, Order};
/// use gpusort_cli::inputs::Dist;
///
/// let gpu = GpuSorter::new().ok(); // GPU sorts are skipped without one
/// let algos = if gpu.is_some() { vec![Algo::Bitonic, Algo::CpuStd] } else { vec![Algo::CpuStd] };
/// let plan = Plan {
///     min_log2: 8,
///     max_log2: 10,
///     algos,
///     named: true,
///     cpu_max_log2: 24,
///     dtypes: vec![DType::F32, DType::I64],
///     orders: vec![Order::Ascending, Order::Descending],
/// };
/// let settings = Settings {
///     reps: 3,
///     gpu_timing: GpuTiming::Sort,
///     cpu_reps: 1,
///     dist: Dist::Few,
///     seed: 1,
/// };
/// let mut done = 0;
/// let outcome = sweep::run(&plan, &settings, gpu.as_ref(), &mut |step| {
///     if let Step::Done { .. } = step {
///         done += 1;
///     }
/// });
/// assert!(outcome.error.is_none());
/// assert_eq!(outcome.measurements.len(), plan.measurements());
/// assert_eq!(done, plan.measurements());
/// ```
pub fn run(
    plan: &Plan,
    settings: &Settings,
    gpu: Option<&GpuSorter>,
    observe: &mut dyn FnMut(Step<'_>),
) -> Outcome {
    let mut measurements = Vec::with_capacity(plan.measurements());
    let mut error = None;
    'sweep: for &dtype in &plan.dtypes {
        for &order in &plan.orders {
            for log2 in plan.log2_sizes() {
                let algos = plan.algos_at(log2);
                let size = Size {
                    dtype,
                    order,
                    n: 1 << log2,
                };
                let result = with_key_type!(dtype, K => sweep_size::<K>(
                    size, &algos, settings, gpu, &mut measurements, observe
                ));
                if let Err(e) = result {
                    error = Some(e);
                    break 'sweep;
                }
            }
        }
    }
    Outcome {
        measurements,
        error,
    }
}

/// One (key type, order, size) of the sweep.
#[derive(Clone, Copy)]
struct Size {
    dtype: DType,
    order: Order,
    n: usize,
}

fn sweep_size<K: SortKey>(
    size: Size,
    algos: &[Algo],
    settings: &Settings,
    gpu: Option<&GpuSorter>,
    measurements: &mut Vec<Measurement>,
    observe: &mut dyn FnMut(Step<'_>),
) -> Result<()> {
    if algos.is_empty() {
        return Ok(());
    }
    let Size { dtype, order, n } = size;
    observe(Step::Oracle { dtype, order, n });
    let input: Vec<K> = generate(n, settings.dist, settings.seed);
    let oracle = reference(&input, order);
    for &algo in algos {
        if algo.is_gpu() && gpu.is_none() {
            continue;
        }
        observe(Step::Start {
            algo,
            dtype,
            order,
            n,
        });
        let (ms, sorted, wrong_values) = match (algo.cpu(), gpu) {
            (Some(cpu), _) => {
                let (ms, sorted) = timing::cpu(cpu, &input, order, settings.cpu_reps);
                (ms, sorted, None)
            }
            (None, Some(gpu)) => time_gpu(algo, gpu, &input, order, settings)?,
            (None, None) => unreachable!("GPU sorts without a GPU are skipped above"),
        };
        let mismatch = check_against(&sorted, &oracle, order)
            .err()
            .or(wrong_values);
        // Freed before the next sort runs: at 2^28 8-byte keys each copy is 2 GiB.
        drop(sorted);
        measurements.push(Measurement {
            algo,
            dtype,
            order,
            n,
            ms,
            verified: mismatch.is_none(),
        });
        observe(Step::Done {
            measurement: measurements.last().expect("just pushed"),
            mismatch: mismatch.as_ref(),
        });
    }
    Ok(())
}

/// Times a GPU sort with CUDA events ([`timing::gpu_kernel`], or for the `_pairs` sorts
/// [`timing::gpu_kernel_pairs`] with values as wide as the keys); returns the timing, the
/// sorted keys and, for pairs, why the values are not the stable sorting permutation.
fn time_gpu<K: SortKey>(
    algo: Algo,
    gpu: &GpuSorter,
    input: &[K],
    order: Order,
    settings: &Settings,
) -> Result<(Timing, Vec<K>, Option<Mismatch>)> {
    let (reps, how) = (settings.reps, settings.gpu_timing);
    let Some((sort, pairs)) = algo.gpu() else {
        unreachable!("{algo} is a CPU sort")
    };
    if !pairs {
        let (ms, sorted) = timing::gpu_kernel(gpu, sort, input, order, reps, how)?;
        return Ok((ms, sorted, None));
    }
    let (ms, sorted, wrong) = if size_of::<K>() == 4 {
        let (ms, keys, values) =
            timing::gpu_kernel_pairs::<K, u32>(gpu, sort, input, order, reps, how)?;
        let wrong = check_stable_values(input, &keys, &values).err();
        (ms, keys, wrong)
    } else {
        let (ms, keys, values) =
            timing::gpu_kernel_pairs::<K, u64>(gpu, sort, input, order, reps, how)?;
        let wrong = check_stable_values(input, &keys, &values).err();
        (ms, keys, wrong)
    };
    Ok((ms, sorted, wrong))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            reps: 1,
            gpu_timing: GpuTiming::Sort,
            cpu_reps: 1,
            dist: Dist::Uniform,
            seed: 7,
        }
    }

    #[test]
    fn cpu_sweep_measures_and_verifies_every_planned_sort() {
        let plan = Plan {
            min_log2: 4,
            max_log2: 7,
            algos: vec![Algo::CpuStd, Algo::CpuBitonic1, Algo::CpuBitonicN],
            named: true,
            cpu_max_log2: 6,
            dtypes: vec![DType::I32, DType::F64],
            orders: vec![Order::Descending, Order::Ascending],
        };
        let (mut oracles, mut started, mut done) = (0, 0, 0);
        let outcome = run(&plan, &settings(), None, &mut |step| match step {
            Step::Oracle { .. } => oracles += 1,
            Step::Start { .. } => started += 1,
            Step::Done { mismatch, .. } => {
                assert!(mismatch.is_none());
                done += 1;
            }
        });
        assert!(outcome.error.is_none());
        // Sizes 2^4..=2^6 (2^7 is past --cpu-max-log2) × 3 sorts × 2 key types × 2 orders.
        assert_eq!(plan.measurements(), 3 * 3 * 2 * 2);
        assert_eq!(outcome.measurements.len(), plan.measurements());
        assert_eq!(
            (oracles, started, done),
            (3 * 2 * 2, 36, 36),
            "no oracle at 2^7"
        );
        assert!(outcome.measurements.iter().all(|m| m.verified));
        let first = &outcome.measurements[0];
        assert_eq!(
            (first.algo, first.dtype, first.order, first.n),
            (Algo::CpuStd, DType::I32, Order::Descending, 16)
        );
        assert!(first.ms.min <= first.ms.median && first.ms.median <= first.ms.max);
    }

    #[test]
    fn gpu_sorts_are_skipped_without_a_gpu() {
        let plan = Plan {
            min_log2: 3,
            max_log2: 3,
            algos: vec![Algo::Bitonic, Algo::CpuRayon],
            named: false,
            cpu_max_log2: 24,
            dtypes: vec![DType::U32],
            orders: vec![Order::Ascending],
        };
        let outcome = run(&plan, &settings(), None, &mut |_| {});
        let algos: Vec<_> = outcome.measurements.iter().map(|m| m.algo).collect();
        assert_eq!(algos, [Algo::CpuRayon]);
    }
}
