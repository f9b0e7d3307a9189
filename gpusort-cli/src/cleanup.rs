//! What a signal finds when it ends the process: the temporary files it must remove, and which
//! outputs are already in place, so that the message and the exit code say what was changed.
//!
//! The signal thread of [`exit_cleanly_on_signals`] (SIGINT, SIGTERM, SIGHUP) removes the
//! registered temporary files, then says on stderr what the run changed and exits:
//!
//! - no output replaced: "no output was changed", exit code 128 + the signal's number (130,
//!   143, 129);
//! - every output the run created committed (by [`crate::files::commit_all`] or
//!   [`crate::files::AtomicOutput::commit`]; standard output, where keys were streamed to it,
//!   complete): the run is done, the message names the outputs and the exit code is 0;
//! - some but not all: which were replaced, exit code 128 + the signal's number.
//!
//! A step that must not be cut in two by a signal (the renames that publish the outputs of a
//! run, with the registry's update) runs inside `hold_signals`: the signal thread waits for it
//! to end, so a signal during a commit is acted on after it, as "the run is done".
//! [`crate::memory::ExitOnOom`] empties the registry too.
//!
//! SIGKILL and power loss cannot be caught: outputs are written as unnamed files where the
//! system allows it, and a commit of several outputs leaves a journal that the next run
//! completes ([`crate::files::commit_all`]).
//!
//! A test hook, `GPUSORT_TEST_SIGNAL_AT=POINT[:SIGNAL]`, makes the process send itself SIGNAL
//! (SIGINT unless SIGTERM, SIGHUP or SIGKILL is named) at the named point of a run
//! ([`test_point`]), so that tests can interrupt at a chosen moment rather than at a lucky time.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// The registered temporary files, by id.
pub(crate) struct Temps {
    next: u64,
    paths: Vec<(u64, CString)>,
}

impl Temps {
    /// Registers `path` for removal on a signal; returns its id for [`Temps::remove`].
    pub(crate) fn add(&mut self, path: &Path) -> u64 {
        self.next += 1;
        // A path with a NUL byte cannot name a file; it cannot be left behind either.
        if let Ok(c) = CString::new(path.as_os_str().as_bytes()) {
            self.paths.push((self.next, c));
        }
        self.next
    }

    /// Forgets the file `id` (renamed into place, or removed).
    pub(crate) fn remove(&mut self, id: u64) {
        self.paths.retain(|(i, _)| *i != id);
    }

    fn unlink_all(&mut self) {
        for (_, path) in self.paths.drain(..) {
            // SAFETY: a NUL-terminated path; unlink allocates nothing.
            unsafe { libc::unlink(path.as_ptr()) };
        }
    }
}

/// How far keys streamed to standard output have got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    /// Nothing is streamed there.
    None,
    /// Some of the keys were written.
    Partial,
    /// All of them.
    Complete,
}

/// What the process has done to its outputs, and what a signal must clean.
pub(crate) struct State {
    pub(crate) temps: Temps,
    /// Outputs created and neither committed nor dropped.
    pending: usize,
    /// Outputs put in place, as their paths were given.
    replaced: Vec<PathBuf>,
    /// Whether the run's outputs are all in place: a signal then changes nothing.
    finished: bool,
    stream: Stream,
}

impl State {
    /// An output was created ([`crate::files::AtomicOutput::create`]).
    pub(crate) fn created(&mut self) {
        self.pending += 1;
    }

    /// An output was dropped without its commit.
    pub(crate) fn abandoned(&mut self) {
        self.pending = self.pending.saturating_sub(1);
    }

    /// `paths`, outputs created earlier, were put in place; the run is finished if no other
    /// output is pending.
    pub(crate) fn committed(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        for path in paths {
            self.pending = self.pending.saturating_sub(1);
            self.replaced.push(path);
        }
        self.finished =
            self.pending == 0 && self.stream != Stream::Partial && !self.replaced.is_empty();
    }

    /// `path` was replaced by a means of its own (not an output counted as pending).
    fn replaced_other(&mut self, path: &Path) {
        self.replaced.push(path.to_owned());
        self.finished = false;
    }

    /// The exit code and the message for `signal` (128 + its number, 0 once the run is done).
    fn verdict(&self, signal: i32) -> (i32, String) {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let (what, name) = match signal {
            SIGINT => ("interrupted", "SIGINT"),
            SIGTERM => ("terminated", "SIGTERM"),
            _ => ("hung up", "SIGHUP"),
        };
        let mut done: Vec<String> = self
            .replaced
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if self.stream == Stream::Complete {
            done.push("standard output".into());
        }
        if self.finished {
            let verb = if done.len() == 1 { "holds" } else { "hold" };
            return (
                0,
                format!(
                    "gpusort: {name} came after the run was done: {} {verb} its complete results; \
                     nothing was undone\n",
                    list(&done)
                ),
            );
        }
        let mut message = format!("gpusort: {what} ({name}); ");
        let replaced: Vec<String> = self
            .replaced
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if replaced.is_empty() {
            message += "no output was changed";
        } else {
            let verb = if replaced.len() == 1 { "was" } else { "were" };
            message += &format!(
                "{} {verb} replaced before it; no other output was changed",
                list(&replaced)
            );
        }
        match self.stream {
            Stream::None => {}
            Stream::Partial => message += " (standard output got only part of the keys)",
            Stream::Complete => message += " (standard output got all the keys)",
        }
        message.push('\n');
        (128 + signal, message)
    }
}

/// `a`, `a and b`, `a, b and c`.
fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

static STATE: Mutex<State> = Mutex::new(State {
    temps: Temps {
        next: 0,
        paths: Vec::new(),
    },
    pending: 0,
    replaced: Vec::new(),
    finished: false,
    stream: Stream::None,
});

fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` with the state locked: a signal arriving meanwhile is acted on (files removed,
/// process ended) only after `f` returns, and sees what `f` recorded.
pub(crate) fn hold_signals<R>(f: impl FnOnce(&mut State) -> R) -> R {
    f(&mut lock())
}

/// Registers `path`; see [`Temps::add`].
pub(crate) fn register(path: &Path) -> u64 {
    lock().temps.add(path)
}

/// Forgets `id`; see [`Temps::remove`].
pub(crate) fn unregister(id: u64) {
    lock().temps.remove(id);
}

/// Removes every registered file now, without waiting for a lock held elsewhere (then it does
/// nothing): for a process about to end from a state where waiting could deadlock.
pub(crate) fn remove_temporaries_now() {
    if let Ok(mut state) = STATE.try_lock() {
        state.temps.unlink_all();
    }
}

/// Records that keys are being streamed to standard output: a signal before
/// [`wrote_standard_output`] says that it got only part of them.
pub fn writing_standard_output() {
    lock().stream = Stream::Partial;
}

/// Records that standard output got all its keys (and was flushed): if no output is pending,
/// the run is done, and a signal ends it with exit code 0.
pub fn wrote_standard_output() {
    let mut state = lock();
    state.stream = Stream::Complete;
    state.finished = state.pending == 0;
}

/// Records that `path` was replaced by the program itself (not through
/// [`crate::files::AtomicOutput`]), so that a signal does not claim that nothing was changed.
pub fn replaced(path: &Path) {
    lock().replaced_other(path);
}

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, removes the registered temporary files
/// and ends the process, saying on stderr what the run changed: exit code 128 + the signal's
/// number (130, 143, 129) unless the run's outputs were all in place, then 0 (see the module's
/// documentation). For programs; a library leaves signals alone.
///
/// # Errors
/// When the handlers cannot be installed.
pub fn exit_cleanly_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("gpusort-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let mut state = lock();
                state.temps.unlink_all();
                let (code, message) = state.verdict(signal);
                // SAFETY: write and _exit on a buffer that lives across the call; the state
                // stays locked so that no other thread publishes an output between the removal
                // and the exit.
                unsafe {
                    libc::write(2, message.as_ptr().cast(), message.len());
                    libc::_exit(code);
                }
            }
        })?;
    Ok(())
}

/// The point and signal of `GPUSORT_TEST_SIGNAL_AT`, read once.
fn test_signal() -> Option<&'static (String, i32)> {
    static SPEC: OnceLock<Option<(String, i32)>> = OnceLock::new();
    SPEC.get_or_init(|| {
        let spec = std::env::var("GPUSORT_TEST_SIGNAL_AT").ok()?;
        let (point, signal) = spec.split_once(':').unwrap_or((&spec, "SIGINT"));
        let signal = match signal {
            "SIGINT" | "INT" => libc::SIGINT,
            "SIGTERM" | "TERM" => libc::SIGTERM,
            "SIGHUP" | "HUP" => libc::SIGHUP,
            "SIGKILL" | "KILL" => libc::SIGKILL,
            _ => return None,
        };
        Some((point.to_string(), signal))
    })
    .as_ref()
}

/// Whether a signal was sent by [`test_point_held`] and not yet waited for.
static RAISED: AtomicBool = AtomicBool::new(false);

/// A named point of a run, for tests: where `GPUSORT_TEST_SIGNAL_AT` names it, the process sends
/// itself the signal there and waits (up to 10 s) for the signal thread to end it, as a signal
/// from outside arriving at that moment would. Does nothing otherwise.
///
/// The points: `reading` (before the input is read), `sorted` (before the outputs are written),
/// `written` (every output written, none put in place), `staged-I` (the I-th output linked under
/// its temporary name), `journal` (the commit's journal written, before the first rename),
/// `renamed-I` (the I-th output renamed into place), `committed` (every output in place) and
/// `reported` (the closing report printed). `journal` and `renamed-I` are inside the commit,
/// where signals wait for its end.
pub fn test_point(point: &str) {
    if let Some((name, signal)) = test_signal()
        && name == point
    {
        // SAFETY: a signal to this process, as `kill -SIG PID` sends it.
        unsafe { libc::kill(libc::getpid(), *signal) };
        wait_for_the_signal();
    }
}

/// [`test_point`] inside [`hold_signals`]: sends the signal and returns at once (the signal
/// thread waits for the lock); [`await_test_signal`] waits for it after the lock is released.
pub(crate) fn test_point_held(point: &str) {
    if let Some((name, signal)) = test_signal()
        && name == point
    {
        RAISED.store(true, Ordering::SeqCst);
        // SAFETY: as in test_point.
        unsafe { libc::kill(libc::getpid(), *signal) };
    }
}

/// After a signal sent by [`test_point_held`], waits for the signal thread to act on it.
pub(crate) fn await_test_signal() {
    if RAISED.swap(false, Ordering::SeqCst) {
        wait_for_the_signal();
    }
}

fn wait_for_the_signal() {
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            temps: Temps {
                next: 0,
                paths: Vec::new(),
            },
            pending: 0,
            replaced: Vec::new(),
            finished: false,
            stream: Stream::None,
        }
    }

    #[test]
    fn registered_files_are_removed_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        let mut temps = state().temps;
        let id_a = temps.add(&a);
        temps.add(&b);
        temps.remove(id_a);
        temps.unlink_all();
        assert!(a.exists() && !b.exists());
        assert!(temps.paths.is_empty());
    }

    #[test]
    fn the_verdict_says_what_was_replaced() {
        let mut s = state();
        s.created();
        s.created();
        let (code, message) = s.verdict(libc::SIGINT);
        assert_eq!(code, 130);
        assert_eq!(
            message,
            "gpusort: interrupted (SIGINT); no output was changed\n"
        );
        s.committed([PathBuf::from("out.npy"), PathBuf::from("idx.npy")]);
        let (code, message) = s.verdict(libc::SIGTERM);
        assert_eq!(code, 0);
        assert!(
            message.contains("SIGTERM came after the run was done: out.npy and idx.npy hold"),
            "{message}"
        );

        let mut s = state();
        s.created();
        s.created();
        s.committed([PathBuf::from("a.npy")]);
        let (code, message) = s.verdict(libc::SIGHUP);
        assert_eq!(code, 129);
        assert!(
            message.contains("a.npy was replaced before it"),
            "{message}"
        );

        let mut s = state();
        s.stream = Stream::Partial;
        let (code, message) = s.verdict(libc::SIGINT);
        assert_eq!(code, 130);
        assert!(message.contains("only part of the keys"), "{message}");
        s.replaced_other(Path::new("bench.csv"));
        assert_eq!(s.verdict(libc::SIGINT).0, 130);
    }
}
