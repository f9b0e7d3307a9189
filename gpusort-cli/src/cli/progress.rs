//! A progress bar on stderr for every job that runs longer than a couple of seconds: the file
//! commands (reading, sorting, writing) and the main job (its steps).
//!
//! A bar appears only on a terminal, and only once its job has run for
//! `GPUSORT_PROGRESS_DELAY_MS` milliseconds (2000 unless set), so that quick jobs print nothing
//! but their report.

use crate::gpu::{Phase, ProgressHook};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a job runs before its bar appears.
fn delay() -> Duration {
    let ms = std::env::var("GPUSORT_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    Duration::from_millis(ms)
}

/// A progress bar through the phases or steps of a job, drawn on stderr once the job has run for
/// the delay, and only on a terminal (never into a log). Dropping it erases it, so an error
/// message that follows starts on a clean line.
pub(crate) struct Progress {
    bar: ProgressBar,
    /// The thread that shows the bar after the delay; dropping the sender stops it.
    shower: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl Progress {
    /// A bar, hidden until the job has run for the delay (never shown unless stderr is a
    /// terminal).
    pub(crate) fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        let shower = std::io::stderr().is_terminal().then(|| {
            let (stop, stopped) = mpsc::channel::<()>();
            let shown = bar.clone();
            let thread = std::thread::spawn(move || {
                if stopped.recv_timeout(delay()) == Err(RecvTimeoutError::Timeout) {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.tick();
                }
            });
            (stop, thread)
        });
        Progress { bar, shower }
    }

    /// Starts a phase that moves `bytes` bytes, e.g. "reading".
    pub(crate) fn phase(&self, what: &'static str, bytes: u64) {
        start_phase(&self.bar, what, bytes);
    }

    /// A hook for [`GpuSorter::set_progress`](crate::GpuSorter::set_progress) that shows a sort
    /// in chunks on this bar: "sorting" as the chunks come back from the GPU, then "merging"
    /// on the CPU, in bytes of keys of `key_bytes` each (the merge counts each of its rounds).
    pub(crate) fn sort_hook(&self, key_bytes: u64) -> ProgressHook {
        let bar = self.bar.clone();
        let shown = Mutex::new(None);
        Box::new(move |p| {
            let mut shown = shown.lock().unwrap_or_else(PoisonError::into_inner);
            // A new phase, or a new sort: restart the bar.
            if *shown != Some((p.phase, p.total)) {
                let what = match p.phase {
                    Phase::Sorting => "sorting",
                    _ => "merging",
                };
                start_phase(&bar, what, p.total * key_bytes);
                *shown = Some((p.phase, p.total));
            }
            bar.set_position(p.done * key_bytes);
        })
    }

    /// Starts a phase whose progress cannot be measured, e.g. "sorting".
    pub(crate) fn spin(&self, what: &'static str) {
        let style = ProgressStyle::with_template("{msg:>8} {spinner} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        self.bar.set_style(style);
        self.bar.set_message(what);
        self.bar.reset();
        self.bar.enable_steady_tick(Duration::from_millis(100));
    }

    /// Counts the job in `total` steps, each named by [`Progress::step`].
    pub(crate) fn steps(&self, total: usize) {
        let style =
            ProgressStyle::with_template("[{bar:20}] step {pos}/{len} {elapsed:>4}: {wide_msg}")
                .map(|s| s.progress_chars("=> "))
                .unwrap_or_else(|_| ProgressStyle::default_bar());
        self.bar.set_style(style);
        self.bar.set_length(total as u64);
        self.bar.set_position(0);
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }

    /// Starts the next step, `what` (the steps before it done).
    pub(crate) fn step(&self, what: impl Into<std::borrow::Cow<'static, str>>) {
        if self.bar.message().is_empty() {
            self.bar.set_position(0);
        } else {
            self.bar.inc(1);
        }
        self.bar.set_message(what);
    }

    /// Counts `bytes` more bytes done.
    pub(crate) fn inc(&self, bytes: u64) {
        self.bar.inc(bytes);
    }
}

/// Restyles `bar` for a phase that moves `bytes` bytes and starts counting from zero.
fn start_phase(bar: &ProgressBar, what: &'static str, bytes: u64) {
    bar.disable_steady_tick();
    let style = ProgressStyle::with_template(
        "{msg:>8} [{bar:40}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta})",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(what);
    bar.set_length(bytes);
    // Position, elapsed time and rate count from the start of the phase.
    bar.reset();
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.shower.take() {
            drop(stop);
            let _ = thread.join();
        }
        self.bar.finish_and_clear();
    }
}
