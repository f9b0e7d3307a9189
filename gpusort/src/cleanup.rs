//! Temporary files that must not outlive the process: a registry of their paths, emptied by
//! the signal thread of [`exit_cleanly_on_signals`] (SIGINT, SIGTERM, SIGHUP: the files are
//! removed, then the process exits with 128 + the signal's number) and by
//! [`crate::memory::ExitOnOom`].
//!
//! A step that must not be cut in two by a signal (a rename that publishes an output, with its
//! registration) runs inside [`hold_signals`]: the signal thread waits for it to end.
//!
//! SIGKILL and power loss cannot be caught: outputs are written as unnamed files where the
//! system allows it ([`crate::files::AtomicOutput`]), so that nothing is there to clean.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

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

static TEMPS: Mutex<Temps> = Mutex::new(Temps {
    next: 0,
    paths: Vec::new(),
});

fn lock() -> MutexGuard<'static, Temps> {
    TEMPS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` with the registry locked: a signal arriving meanwhile is acted on (files removed,
/// process ended) only after `f` returns.
pub(crate) fn hold_signals<R>(f: impl FnOnce(&mut Temps) -> R) -> R {
    f(&mut lock())
}

/// Registers `path`; see [`Temps::add`].
pub(crate) fn register(path: &Path) -> u64 {
    lock().add(path)
}

/// Forgets `id`; see [`Temps::remove`].
pub(crate) fn unregister(id: u64) {
    lock().remove(id);
}

/// Removes every registered file now, without waiting for a lock held elsewhere (then it does
/// nothing): for a process about to end from a state where waiting could deadlock.
pub(crate) fn remove_temporaries_now() {
    if let Ok(mut temps) = TEMPS.try_lock() {
        temps.unlink_all();
    }
}

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, removes the registered temporary files
/// and ends the process with exit code 128 + the signal's number (130, 143, 129), saying so on
/// stderr. For programs; a library leaves signals alone.
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
                let mut temps = lock();
                temps.unlink_all();
                let name: &[u8] = match signal {
                    SIGINT => b"gpusort: interrupted (SIGINT); no output was changed\n",
                    SIGTERM => b"gpusort: terminated (SIGTERM); no output was changed\n",
                    _ => b"gpusort: hung up (SIGHUP); no output was changed\n",
                };
                // SAFETY: write and _exit allocate nothing; the registry stays locked so that no
                // other thread publishes an output between the removal and the exit.
                unsafe {
                    libc::write(2, name.as_ptr().cast(), name.len());
                    libc::_exit(128 + signal);
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_files_are_removed_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        let mut temps = Temps {
            next: 0,
            paths: Vec::new(),
        };
        let id_a = temps.add(&a);
        temps.add(&b);
        temps.remove(id_a);
        temps.unlink_all();
        assert!(a.exists() && !b.exists());
        assert!(temps.paths.is_empty());
    }
}
