//! Progress of host-slice sorts too large for the device: what a hook set with
//! [`GpuSorter::set_progress`](super::GpuSorter::set_progress) is told.

/// Where a sort in chunks is: sent to the hook of
/// [`GpuSorter::set_progress`](super::GpuSorter::set_progress) after each chunk sorted on the
/// GPU and each piece merged on the CPU.
///
/// `done` grows from call to call within a phase and reaches `total` at its end; counts are in
/// keys, so that a caller can show bytes (times the key's size) or a percentage.
///
/// # Examples
///
/// ```
/// use gpusort::gpu::{Phase, Progress};
///
/// fn describe(p: Progress) -> String {
///     let what = match p.phase {
///         Phase::Sorting => "sorted on the GPU",
///         Phase::Merging => "merged on the CPU",
///         _ => "done",
///     };
///     format!("{:.0}% {what}", 100.0 * p.done as f64 / p.total as f64)
/// }
/// # let _ = describe;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// The phase.
    pub phase: Phase,
    /// Keys done so far in this phase.
    pub done: u64,
    /// Keys the phase will have done at its end.
    pub total: u64,
}

/// The phases of a sort in chunks, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// Chunks that fit on the device, each copied there, sorted and copied back, one after
    /// another: `done` counts the keys of the chunks sorted so far, `total` every key.
    Sorting,
    /// The sorted chunks merged on the CPU in ⌈log₂ chunks⌉ rounds
    /// ([`merge_rounds`](crate::cpu::merge_rounds)), each of which writes every key once: `done`
    /// counts keys written over all rounds, `total` is the keys times the rounds.
    Merging,
}

/// The hook [`GpuSorter::set_progress`](super::GpuSorter::set_progress) takes.
pub type ProgressHook = Box<dyn Fn(Progress) + Send + Sync>;

impl Progress {
    pub(super) fn new(phase: Phase, done: u64, total: u64) -> Progress {
        Progress { phase, done, total }
    }
}
