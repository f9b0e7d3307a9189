//! A progress bar on stderr for sorts of large files.

use crate::gpu::{Phase, ProgressHook};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Files smaller than this are read, sorted and written in well under a second: no bar.
const MIN_BYTES: u64 = 64 << 20;

/// A progress bar through the phases of a file sort, drawn only for a large file on a terminal
/// (never into a log). Dropping it erases it, so an error message that follows starts on a
/// clean line.
pub(crate) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for a file of `bytes` bytes of keys, hidden unless it is large and stderr is a
    /// terminal.
    pub(crate) fn for_file(bytes: u64) -> Self {
        let show = bytes >= MIN_BYTES && std::io::stderr().is_terminal();
        let bar = if show {
            ProgressBar::new(bytes)
        } else {
            ProgressBar::hidden()
        };
        Progress { bar }
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
        self.bar.finish_and_clear();
    }
}
