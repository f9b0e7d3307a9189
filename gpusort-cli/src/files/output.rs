//! Writing key files atomically, one or several together.
//!
//! Each output is written into a file beside it that has no name until it is complete
//! (`O_TMPFILE`; where that is not supported, a temporary name `.NAME.XXXXXX.tmp`, removed on
//! failure and on SIGINT/SIGTERM/SIGHUP). The commit ([`commit_all`]) then, with every output
//! complete and on disk:
//!
//! 1. links each under a hidden name beside it, `.NAME.XXXXXX.new`, and flushes the directories;
//! 2. for two or more outputs, writes a journal, `.NAME.XXXXXX.commit` beside the first, that
//!    names each `.new` file and the file it replaces, and flushes it and its directory;
//! 3. with signals held off, renames each `.new` file onto its output, flushes the directories
//!    and removes the journal.
//!
//! So an output is always the old file or the complete new one; while no journal is there, the
//! outputs of one commit are all old or all new. A process killed (or a machine that loses
//! power) before step 3 leaves the old outputs and perhaps `.new` files, which the next
//! [`AtomicOutput::create`] of the same output removes; one killed during step 3 leaves the
//! journal, and the next [`AtomicOutput::create`] of any output in its directory finishes the
//! renames it lists, so that all the outputs are new.

use super::error::FileError;
use super::le::{LeKey, bytes_of, encode_into};
use super::{CHUNK_BYTES, FileFormat, npy};
use crate::cleanup;
use crate::keys::DType;
use std::collections::HashSet;
use std::ffi::{CString, OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tempfile::NamedTempFile;

/// Hidden names beside an output NAME: `.NAME.` + random characters + one of these suffixes.
/// A file being written, where `O_TMPFILE` is not supported.
const TEMP_SUFFIX: &str = ".tmp";
/// A complete file waiting for its rename onto NAME.
const NEW_SUFFIX: &str = ".new";
/// The journal of a commit of several outputs.
const JOURNAL_SUFFIX: &str = ".commit";
const TEMP_RAND: usize = 6;

/// How long a temporary file or a journal that is being written may stay unlocked: its writer
/// creates it, then locks it.
const GRACE: Duration = Duration::from_secs(2);

/// The journal's first and last lines.
const JOURNAL_HEADER: &[u8] = b"gpusort commit 1\n";
const JOURNAL_END: &[u8] = b"end\n";

fn temp_prefix(name: &OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    prefix
}

/// A hidden name for `name` with `suffix`, random characters between.
fn hidden_name(name: &OsStr, suffix: &str) -> OsString {
    let mut hidden = temp_prefix(name);
    hidden.push(random_chars());
    hidden.push(suffix);
    hidden
}

/// The NAME of a hidden name `.NAME.XXXXXX` + `suffix`, if `file_name` is one.
fn hidden_of<'a>(file_name: &'a [u8], suffix: &str) -> Option<&'a [u8]> {
    let rest = file_name
        .strip_prefix(b".")?
        .strip_suffix(suffix.as_bytes())?;
    let (name, random) = rest.split_at_checked(rest.len().checked_sub(TEMP_RAND + 1)?)?;
    let random = random.strip_prefix(b".")?;
    (!name.is_empty() && random.iter().all(u8::is_ascii_alphanumeric)).then_some(name)
}

/// Letters and digits for a temporary name, as tempfile picks them: random from std's hasher
/// keys, which are seeded from the operating system's randomness.
fn random_chars() -> String {
    use std::hash::{BuildHasher, Hasher};
    const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    (0..TEMP_RAND)
        .map(|i| {
            hasher.write_usize(i);
            ALPHANUMERIC[(hasher.finish() % ALPHANUMERIC.len() as u64) as usize] as char
        })
        .collect()
}

/// The directory of `path` (`.` for a bare name).
fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Flushes the directory `dir`: the names made or changed in it are on disk.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Checks that the directory `dir` of the output `path` is one.
fn check_dir(path: &Path, dir: &Path) -> Result<(), FileError> {
    match fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => Err(FileError::OutputDirNotDir {
            path: path.into(),
            dir: dir.into(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(FileError::NoOutputDir {
            path: path.into(),
            dir: dir.into(),
        }),
        // ENOTDIR: a parent further up is a file.
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => Err(FileError::OutputDirNotDir {
            path: path.into(),
            dir: dir.into(),
        }),
        _ => Ok(()),
    }
}

/// What a file that is neither a regular file nor a directory is, for messages.
pub(crate) fn file_kind(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_fifo() {
        "FIFO (named pipe)"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_symlink() {
        "symbolic link"
    } else if kind.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// An unnamed file in `dir` (`O_TMPFILE`), or None where the file system or the system cannot
/// make one or link it into place later (that needs `/proc/self/fd`).
fn open_unnamed(dir: &Path) -> io::Result<Option<File>> {
    if !Path::new("/proc/self/fd").is_dir() {
        return Ok(None);
    }
    let opened = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o666)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match opened {
        Ok(file) => Ok(Some(file)),
        // Not supported by this kernel or file system.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOENT)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Gives the unnamed `file` the name `path` (which must not exist).
fn link_unnamed(file: &File, path: &Path) -> io::Result<()> {
    let proc_path =
        CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL in a number");
    let to = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    // SAFETY: two NUL-terminated paths; linkat reads them and nothing else.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc_path.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Gives `file` the owner, group and mode of `existing`; the owner first, since changing it
/// clears the set-user-ID and set-group-ID bits.
fn keep_owner_and_mode(file: &File, existing: &fs::Metadata) -> io::Result<()> {
    let now = file.metadata()?;
    if (now.uid(), now.gid()) != (existing.uid(), existing.gid()) {
        std::os::unix::fs::fchown(file, Some(existing.uid()), Some(existing.gid()))?;
    }
    file.set_permissions(fs::Permissions::from_mode(existing.mode() & 0o7777))
}

/// Whether `file` was last changed more than [`GRACE`] ago.
fn older_than_grace(file: &File) -> bool {
    file.metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > GRACE)
}

/// One output of a journal: the `.new` file (its device and inode, so that a file of the same
/// name made later is not mistaken for it) and the file it replaces, both absolute.
struct JournalEntry {
    dev: u64,
    ino: u64,
    new: PathBuf,
    target: PathBuf,
}

fn encode_journal(entries: &[JournalEntry]) -> Vec<u8> {
    let mut bytes = JOURNAL_HEADER.to_vec();
    for e in entries {
        bytes.extend_from_slice(format!("{} {}\n", e.dev, e.ino).as_bytes());
        bytes.extend_from_slice(e.new.as_os_str().as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(e.target.as_os_str().as_bytes());
        bytes.push(0);
    }
    bytes.extend_from_slice(JOURNAL_END);
    bytes
}

/// The entries of a complete journal; None for one that is incomplete or not a journal.
fn parse_journal(bytes: &[u8]) -> Option<Vec<JournalEntry>> {
    let mut rest = bytes.strip_prefix(JOURNAL_HEADER)?;
    let mut entries = Vec::new();
    while rest != JOURNAL_END {
        let take = |rest: &mut &[u8], end: u8| -> Option<Vec<u8>> {
            let at = rest.iter().position(|&b| b == end)?;
            let part = rest[..at].to_vec();
            *rest = &rest[at + 1..];
            Some(part)
        };
        let ids = String::from_utf8(take(&mut rest, b'\n')?).ok()?;
        let (dev, ino) = ids.split_once(' ')?;
        let new = PathBuf::from(OsString::from_vec(take(&mut rest, 0)?));
        let target = PathBuf::from(OsString::from_vec(take(&mut rest, 0)?));
        entries.push(JournalEntry {
            dev: dev.parse().ok()?,
            ino: ino.parse().ok()?,
            new,
            target,
        });
    }
    Some(entries)
}

/// Whether `entry` is one a commit of gpusort wrote: a `.new` file of the target's own name in
/// the target's directory. Anything else in a journal is not acted on.
fn plausible(entry: &JournalEntry) -> bool {
    let (Some(new_name), Some(target_name)) = (entry.new.file_name(), entry.target.file_name())
    else {
        return false;
    };
    entry.new.is_absolute()
        && entry.new.parent() == entry.target.parent()
        && hidden_of(new_name.as_bytes(), NEW_SUFFIX) == Some(target_name.as_bytes())
}

/// Finishes the commits that killed runs left in `dir`: each complete journal that no running
/// gpusort holds has its `.new` files renamed onto their outputs (said on stderr), then is
/// removed; an incomplete one, whose run died before its commit began, is removed. Returns the
/// names of `.new` files that journals still name (a live commit's, or one that could not be
/// finished), which must stay.
fn finish_interrupted_commits(dir: &Path) -> HashSet<PathBuf> {
    let mut keep = HashSet::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return keep;
    };
    for entry in entries.flatten() {
        if hidden_of(entry.file_name().as_bytes(), JOURNAL_SUFFIX).is_none() {
            continue;
        }
        let path = entry.path();
        let Ok(mut file) = File::open(&path) else {
            continue;
        };
        let mut bytes = Vec::new();
        if !file.metadata().is_ok_and(|m| m.is_file()) || file.read_to_end(&mut bytes).is_err() {
            continue;
        }
        let journal = parse_journal(&bytes);
        if file.try_lock().is_err() {
            // A commit under way.
            keep.extend(journal.into_iter().flatten().map(|e| e.new));
            continue;
        }
        let Some(journal) = journal else {
            if older_than_grace(&file) {
                let _ = fs::remove_file(&path);
            }
            continue;
        };
        let mut renamed = Vec::new();
        let mut failed = false;
        for e in journal.iter().filter(|e| plausible(e)) {
            let same = fs::symlink_metadata(&e.new)
                .is_ok_and(|m| m.is_file() && (m.dev(), m.ino()) == (e.dev, e.ino));
            if !same {
                // Renamed already (or gone).
                continue;
            }
            match fs::rename(&e.new, &e.target) {
                Ok(()) => renamed.push(e.target.display().to_string()),
                Err(err) => {
                    eprintln!(
                        "gpusort: cannot finish the interrupted commit {}: renaming {} to {}: \
                         {err}",
                        path.display(),
                        e.new.display(),
                        e.target.display()
                    );
                    failed = true;
                }
            }
        }
        if failed {
            keep.extend(journal.into_iter().map(|e| e.new));
            continue;
        }
        let dirs: HashSet<PathBuf> = journal.iter().map(|e| parent(&e.target)).collect();
        for d in &dirs {
            let _ = sync_dir(d);
        }
        let _ = fs::remove_file(&path);
        let _ = sync_dir(dir);
        if !renamed.is_empty() {
            let verb = if renamed.len() == 1 { "holds" } else { "hold" };
            eprintln!(
                "gpusort: finished the commit of an earlier run that was killed between its \
                 renames ({}): {} now {verb} its results",
                path.display(),
                renamed.join(", ")
            );
        }
    }
    keep
}

/// Removes the hidden files of the output `name` in `dir` that a killed run left: `.new` files
/// (complete, never renamed: their run died before its commit) and `.tmp` files (partial) of its
/// own pattern that no process holds locked and that no journal in `keep` still names; a `.tmp`
/// file only when it is not brand new (a run locks its file right after creating it).
fn remove_stale_temporaries(dir: &Path, name: &OsStr, keep: &HashSet<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let bytes = file_name.as_bytes();
        let new = hidden_of(bytes, NEW_SUFFIX) == Some(name.as_bytes());
        if !new && hidden_of(bytes, TEMP_SUFFIX) != Some(name.as_bytes()) {
            continue;
        }
        let path = entry.path();
        if keep.iter().any(|k| k.file_name() == Some(&file_name)) {
            continue;
        }
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if file.metadata().is_ok_and(|m| m.is_file())
            && (new || older_than_grace(&file))
            && file.try_lock().is_ok()
        {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Keys to bytes, for a file or a stream: the header, then the keys in chunks, counted.
#[derive(Debug, Default)]
struct Encoder {
    /// Keys the header announced, and keys written since.
    expected: u64,
    written: u64,
    /// Reused between chunks.
    bytes: Vec<u8>,
}

impl Encoder {
    fn begin(
        &mut self,
        out: &mut impl Write,
        format: FileFormat,
        dtype: DType,
        shape: &[u64],
    ) -> io::Result<()> {
        self.expected = shape.iter().fold(1, |len: u64, &d| len.saturating_mul(d));
        if format == FileFormat::Npy {
            let mut header = Vec::new();
            npy::write_header(&mut header, dtype, shape)?;
            out.write_all(&header)?;
        }
        Ok(())
    }

    fn write_keys<K: LeKey>(
        &mut self,
        out: &mut impl Write,
        keys: &[K],
        progress: &mut dyn FnMut(u64),
    ) -> io::Result<()> {
        let mut bytes = std::mem::take(&mut self.bytes);
        for chunk in keys.chunks(CHUNK_BYTES / K::SIZE) {
            // In memory the keys are their little-endian bytes on a little-endian target:
            // written as they are, without a copy.
            let data = if cfg!(target_endian = "little") {
                bytes_of(chunk)
            } else {
                encode_into(chunk, &mut bytes);
                &bytes[..]
            };
            out.write_all(data)?;
            self.written += chunk.len() as u64;
            progress(data.len() as u64);
        }
        self.bytes = bytes;
        Ok(())
    }

    /// [`FileError::WrongCount`] unless as many keys were written as announced.
    fn check_count(&self, path: &Path) -> Result<(), FileError> {
        if self.written != self.expected {
            return Err(FileError::WrongCount {
                path: path.into(),
                expected: self.expected,
                written: self.written,
            });
        }
        Ok(())
    }
}

/// An output file being written. Nothing appears at its path until [`AtomicOutput::commit`]
/// (or [`commit_all`], which puts several in place together); dropped before that, it removes
/// its temporary file.
///
/// Use: [`AtomicOutput::create`], then [`AtomicOutput::begin`] once with the format, key type
/// and number of keys (or [`AtomicOutput::begin_array`] with a shape),
/// [`AtomicOutput::write_keys`] as often as needed, and
/// [`AtomicOutput::commit`], which checks that as many keys were written as announced.
///
/// # Examples
///
/// ```
/// use gpusort_cli::files::{AtomicOutput, FileFormat};
/// use gpusort::DType;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("sorted.npy");
/// let mut out = AtomicOutput::create(&path)?;
/// out.begin(FileFormat::Npy, DType::U64, 4)?;
/// out.write_keys(&[1u64, 2], &mut |_| {})?;
/// out.write_keys(&[3u64, 4], &mut |_| {})?;
/// assert!(!path.exists()); // not before the commit
/// out.commit()?;
/// assert!(path.exists());
///
/// let mut dropped = AtomicOutput::create(&dir.path().join("never.npy"))?;
/// dropped.begin(FileFormat::Raw, DType::U64, 1)?;
/// drop(dropped); // no file, no temporary file left behind
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AtomicOutput {
    path: PathBuf,
    /// The file replaced: `path`, or the file a symbolic link at `path` points to.
    target: PathBuf,
    dir: PathBuf,
    temp: Temp,
    encoder: Encoder,
    pending: Pending,
}

/// Counts an output as pending for the signal thread's message until it is committed
/// (disarmed) or dropped.
#[derive(Debug)]
struct Pending {
    armed: bool,
}

impl Pending {
    fn new() -> Self {
        cleanup::hold_signals(|state| state.created());
        Pending { armed: true }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.armed {
            cleanup::hold_signals(|state| state.abandoned());
        }
    }
}

/// A path registered for removal on a signal, unregistered when dropped.
#[derive(Debug)]
struct Registered(u64);

impl Registered {
    /// The id, without unregistering it.
    fn into_id(self) -> u64 {
        let id = self.0;
        std::mem::forget(self);
        id
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        cleanup::unregister(self.0);
    }
}

/// Where the keys go until the commit.
#[derive(Debug)]
enum Temp {
    /// An `O_TMPFILE`: no name until it is linked into place, so that nothing is left behind
    /// whatever ends the process.
    Unnamed(File),
    /// A named temporary file, registered for removal on a signal (where `O_TMPFILE` is not
    /// supported). The registration goes first when dropped, then the file.
    Named {
        reg: Registered,
        file: NamedTempFile,
    },
}

impl Temp {
    fn file(&self) -> &File {
        match self {
            Temp::Unnamed(file) => file,
            Temp::Named { file, .. } => file.as_file(),
        }
    }
}

/// An output linked (or renamed) under its `.new` name, complete and on disk, waiting for its
/// rename. Dropped before that, the `.new` file is removed.
struct Staged {
    /// As given to [`AtomicOutput::create`], for messages.
    path: PathBuf,
    /// Absolute: the file replaced, and the `.new` file beside it.
    target: PathBuf,
    new: PathBuf,
    dir: PathBuf,
    /// Open (and locked) until the commit ends.
    file: File,
    /// Its registration for removal on a signal.
    id: u64,
    pending: Pending,
    /// Renamed onto `target`, or left for a journal to finish: not to be removed.
    settled: bool,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.settled {
            cleanup::hold_signals(|state| {
                let _ = fs::remove_file(&self.new);
                state.temps.remove(self.id);
            });
        }
    }
}

impl AtomicOutput {
    /// Checks `path` and creates the file its keys are written to, in the directory of the file
    /// it will replace (so that the final rename stays on one file system).
    ///
    /// `path` must be a regular file or not exist; a symbolic link is followed to the regular
    /// file it points to, which is the file replaced (the link itself stays). An existing file
    /// lends the new one its mode and its owner and group; where they cannot be given (a
    /// different owner, without the right to change it), the output is refused. Other hard
    /// links to a replaced file keep its old contents.
    ///
    /// What killed runs left in the directory is settled first: a commit journal
    /// (`.NAME.XXXXXX.commit`) that no running gpusort holds is finished (its outputs renamed
    /// into place, said on stderr), and this output's own `.NAME.XXXXXX.new` and
    /// `.NAME.XXXXXX.tmp` files that no running gpusort holds are removed.
    ///
    /// # Errors
    /// [`FileError::NoOutputDir`], [`FileError::OutputDirNotDir`], [`FileError::OutputIsDir`],
    /// [`FileError::OutputNotRegular`], [`FileError::OutputDanglingLink`],
    /// [`FileError::OutputKeepOwner`] or [`FileError::Write`] (e.g. a read-only directory).
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::files::{AtomicOutput, FileError};
    /// use std::path::Path;
    ///
    /// let dir = tempfile::tempdir()?;
    /// assert!(AtomicOutput::create(&dir.path().join("out.bin")).is_ok());
    /// assert!(matches!(
    ///     AtomicOutput::create(&dir.path().join("missing/out.bin")),
    ///     Err(FileError::NoOutputDir { .. })
    /// ));
    /// assert!(matches!(AtomicOutput::create(dir.path()), Err(FileError::OutputIsDir { .. })));
    /// assert!(matches!(
    ///     AtomicOutput::create(Path::new("/dev/null")),
    ///     Err(FileError::OutputNotRegular { .. })
    /// ));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn create(path: &Path) -> Result<Self, FileError> {
        if path.as_os_str().as_bytes().ends_with(b"/") {
            if path.is_dir() {
                return Err(FileError::OutputIsDir { path: path.into() });
            }
            return Err(FileError::OutputTrailingSlash { path: path.into() });
        }
        check_dir(path, &parent(path))?;
        let (target, existing) = match fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => match fs::canonicalize(path) {
                Ok(target) => {
                    let meta = fs::metadata(&target).ok();
                    (target, meta)
                }
                Err(_) => return Err(FileError::OutputDanglingLink { path: path.into() }),
            },
            Ok(meta) => (path.to_owned(), Some(meta)),
            Err(_) => (path.to_owned(), None),
        };
        if let Some(meta) = &existing {
            let kind = meta.file_type();
            if kind.is_dir() {
                return Err(FileError::OutputIsDir { path: path.into() });
            }
            if !kind.is_file() {
                return Err(FileError::OutputNotRegular {
                    path: path.into(),
                    kind: file_kind(&kind),
                });
            }
        }
        let dir = parent(&target);
        let write_err = |source| FileError::Write {
            path: path.into(),
            dir: dir.clone(),
            source,
        };
        let name = target.file_name().unwrap_or_default().to_owned();
        let keep = finish_interrupted_commits(&dir);
        remove_stale_temporaries(&dir, &name, &keep);
        let temp = match open_unnamed(&dir) {
            Ok(Some(file)) => Temp::Unnamed(file),
            Ok(None) => {
                let prefix = temp_prefix(&name);
                let mut builder = tempfile::Builder::new();
                builder
                    .prefix(&prefix)
                    .suffix(TEMP_SUFFIX)
                    .rand_bytes(TEMP_RAND);
                // The temporary file's own mode, 0600, would make the output private: give it
                // the mode `File::create` gives, read-write for all less the umask.
                builder.permissions(fs::Permissions::from_mode(0o666));
                let file = builder.tempfile_in(&dir).map_err(write_err)?;
                let reg = Registered(cleanup::register(file.path()));
                Temp::Named { reg, file }
            }
            Err(e) => return Err(write_err(e)),
        };
        // Held until the process ends: a run that finds the temporary file unlocked knows that
        // its writer is gone.
        temp.file().try_lock().map_err(|e| write_err(e.into()))?;
        if let Some(meta) = &existing {
            keep_owner_and_mode(temp.file(), meta).map_err(|source| {
                FileError::OutputKeepOwner {
                    path: path.into(),
                    uid: meta.uid(),
                    gid: meta.gid(),
                    source,
                }
            })?;
        }
        Ok(AtomicOutput {
            path: path.into(),
            target,
            dir,
            temp,
            encoder: Encoder::default(),
            pending: Pending::new(),
        })
    }

    /// The file that [`AtomicOutput::commit`] replaces: the path given to
    /// [`AtomicOutput::create`], or, where that is a symbolic link, the file it points to.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let (file, link) = (dir.path().join("keys.npy"), dir.path().join("link.npy"));
    /// std::fs::write(&file, b"old")?;
    /// std::os::unix::fs::symlink(&file, &link)?;
    /// let out = gpusort_cli::files::AtomicOutput::create(&link)?;
    /// assert_eq!(out.target(), file.canonicalize()?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The final path, as given to [`AtomicOutput::create`].
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("out.npy");
    /// let out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// assert_eq!(out.path(), path);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts a `format` file of `len` keys of type `dtype`: the `.npy` header of a 1-D array,
    /// nothing for raw ([`AtomicOutput::begin_array`] for other shapes). Call it once, before
    /// [`AtomicOutput::write_keys`].
    ///
    /// # Errors
    /// [`FileError::Write`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::files::{AtomicOutput, FileFormat, KeyFile};
    /// use gpusort::DType;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("empty.npy");
    /// let mut out = AtomicOutput::create(&path)?;
    /// out.begin(FileFormat::Npy, DType::I32, 0)?;
    /// out.commit()?;
    /// assert!(KeyFile::open(&path, FileFormat::Npy, Some(DType::I32))?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn begin(&mut self, format: FileFormat, dtype: DType, len: u64) -> Result<(), FileError> {
        self.begin_array(format, dtype, &[len])
    }

    /// Starts a `format` file of an array of shape `shape` of keys of type `dtype`, in C order
    /// (the last axis varies fastest): for a `.npy`, the header of that shape; a raw file has
    /// no shape, only the keys. [`AtomicOutput::begin`] is this for a 1-D array. Call one of
    /// them once, before [`AtomicOutput::write_keys`].
    ///
    /// # Errors
    /// [`FileError::Write`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::files::{AtomicOutput, FileFormat, KeyFile};
    /// use gpusort::DType;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("matrix.npy");
    /// let mut out = AtomicOutput::create(&path)?;
    /// out.begin_array(FileFormat::Npy, DType::F64, &[2, 2])?;
    /// out.write_keys(&[1.0f64, 2.0, 3.0, 4.0], &mut |_| {})?;
    /// out.commit()?;
    /// assert_eq!(KeyFile::open_array(&path, FileFormat::Npy, None)?.shape(), [2, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn begin_array(
        &mut self,
        format: FileFormat,
        dtype: DType,
        shape: &[u64],
    ) -> Result<(), FileError> {
        let mut file = self.temp.file();
        self.encoder
            .begin(&mut file, format, dtype, shape)
            .map_err(|e| self.write_err(e))
    }

    /// Appends `keys`, little-endian, in chunks of [`CHUNK_BYTES`]; `progress` is told the bytes
    /// of each chunk. `K` should be the key type given to [`AtomicOutput::begin`]; only the
    /// number of keys is checked (by [`AtomicOutput::commit`]).
    ///
    /// # Errors
    /// [`FileError::Write`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::files::{AtomicOutput, FileFormat};
    /// use gpusort::DType;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("keys.bin");
    /// let mut out = AtomicOutput::create(&path)?;
    /// out.begin(FileFormat::Raw, DType::U32, 1)?;
    /// let mut written = 0;
    /// out.write_keys(&[0x0102_0304u32], &mut |n| written += n)?;
    /// out.commit()?;
    /// assert_eq!(written, 4);
    /// assert_eq!(std::fs::read(&path)?, [4, 3, 2, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_keys<K: LeKey>(
        &mut self,
        keys: &[K],
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), FileError> {
        let mut file = self.temp.file();
        self.encoder
            .write_keys(&mut file, keys, progress)
            .map_err(|e| self.write_err(e))
    }

    /// Flushes the file to disk and renames it to its final path, replacing what was there:
    /// [`commit_all`] of this output alone.
    ///
    /// # Errors
    /// [`FileError::WrongCount`] if the keys written are not the number [`AtomicOutput::begin`]
    /// announced, [`FileError::Write`] or [`FileError::Persist`]; the temporary file is removed.
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::files::{AtomicOutput, FileError, FileFormat};
    /// use gpusort::DType;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("short.npy");
    /// let mut out = AtomicOutput::create(&path)?;
    /// out.begin(FileFormat::Npy, DType::F64, 3)?;
    /// out.write_keys(&[1.0f64, 2.0], &mut |_| {})?;
    /// assert!(matches!(
    ///     out.commit(),
    ///     Err(FileError::WrongCount { expected: 3, written: 2, .. })
    /// ));
    /// assert!(!path.exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn commit(self) -> Result<(), FileError> {
        commit_all(vec![self])
    }

    /// Links (or renames) the complete file under a `.new` name beside its target, registered
    /// for removal on a signal.
    fn stage(self) -> Result<Staged, FileError> {
        let AtomicOutput {
            path,
            target,
            dir,
            temp,
            pending,
            ..
        } = self;
        let write_err = |source| FileError::Write {
            path: path.clone(),
            dir: dir.clone(),
            source,
        };
        let dir = fs::canonicalize(&dir).map_err(write_err)?;
        let name = target.file_name().unwrap_or_default().to_owned();
        let target = dir.join(&name);
        let (file, new, id) = match temp {
            Temp::Unnamed(file) => {
                let (new, id) = cleanup::hold_signals(|state| {
                    loop {
                        let candidate = dir.join(hidden_name(&name, NEW_SUFFIX));
                        match link_unnamed(&file, &candidate) {
                            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                            Err(e) => return Err(e),
                            Ok(()) => {
                                let id = state.temps.add(&candidate);
                                return Ok((candidate, id));
                            }
                        }
                    }
                })
                .map_err(write_err)?;
                (file, new, id)
            }
            Temp::Named { reg, file } => {
                let (file, old) = file.keep().map_err(|e| write_err(e.error))?;
                let old_id = reg.into_id();
                let staged = cleanup::hold_signals(|state| {
                    let linked = loop {
                        let candidate = dir.join(hidden_name(&name, NEW_SUFFIX));
                        match fs::hard_link(&old, &candidate) {
                            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                            other => break other.map(|()| candidate),
                        }
                    };
                    let _ = fs::remove_file(&old);
                    state.temps.remove(old_id);
                    linked.map(|new| {
                        let id = state.temps.add(&new);
                        (new, id)
                    })
                });
                let (new, id) = staged.map_err(write_err)?;
                (file, new, id)
            }
        };
        Ok(Staged {
            path,
            target,
            new,
            dir,
            file,
            id,
            pending,
            settled: false,
        })
    }

    fn write_err(&self, source: io::Error) -> FileError {
        FileError::Write {
            path: self.path.clone(),
            dir: self.dir.clone(),
            source,
        }
    }
}

/// The journal of a commit of several outputs, linked (locked) beside the first.
struct Journal {
    path: PathBuf,
    dir: PathBuf,
    /// Held, with its lock, until the commit ends.
    _file: File,
}

impl Journal {
    /// Writes the journal of `staged` beside the first output, complete and on disk before it
    /// has its name, and flushes its directory.
    fn write(staged: &[Staged]) -> Result<Journal, FileError> {
        let first = &staged[0];
        let write_err = |source| FileError::Write {
            path: first.path.clone(),
            dir: first.dir.clone(),
            source,
        };
        let mut entries = Vec::new();
        for s in staged {
            let meta = s.file.metadata().map_err(write_err)?;
            entries.push(JournalEntry {
                dev: meta.dev(),
                ino: meta.ino(),
                new: s.new.clone(),
                target: s.target.clone(),
            });
        }
        let bytes = encode_journal(&entries);
        let name = first.target.file_name().unwrap_or_default();
        let candidate = || first.dir.join(hidden_name(name, JOURNAL_SUFFIX));
        let (file, path) = match open_unnamed(&first.dir).map_err(write_err)? {
            Some(mut file) => {
                file.try_lock().map_err(|e| write_err(e.into()))?;
                file.write_all(&bytes)
                    .and_then(|()| file.sync_all())
                    .map_err(write_err)?;
                let path = loop {
                    let path = candidate();
                    match link_unnamed(&file, &path) {
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                        other => break other.map(|()| path).map_err(write_err)?,
                    }
                };
                (file, path)
            }
            None => {
                // Named from the start: incomplete until its last line, which a run that finds
                // it unlocked and older than the grace period takes for a dead run's.
                let (mut file, path) = loop {
                    let path = candidate();
                    match fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&path)
                    {
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                        other => break (other.map_err(write_err)?, path),
                    }
                };
                let written = file
                    .try_lock()
                    .map_err(io::Error::from)
                    .and_then(|()| file.write_all(&bytes))
                    .and_then(|()| file.sync_all());
                if let Err(e) = written {
                    let _ = fs::remove_file(&path);
                    return Err(write_err(e));
                }
                (file, path)
            }
        };
        let journal = Journal {
            path,
            dir: first.dir.clone(),
            _file: file,
        };
        sync_dir(&journal.dir).map_err(write_err)?;
        Ok(journal)
    }
}

/// Puts every output of `outputs` in place together: after it, all of them are the new files;
/// after an error, none of them is (unless [`FileError::PartlyCommitted`] says otherwise), and
/// no temporary file is left.
///
/// Every output is flushed to disk and linked under a hidden name beside it
/// (`.NAME.XXXXXX.new`); for two or more, a journal naming them is written beside the first
/// (`.NAME.XXXXXX.commit`); then, with SIGINT, SIGTERM and SIGHUP held off (their handling by
/// [`crate::cleanup::exit_cleanly_on_signals`] waits), each is renamed onto its output, the
/// directories are flushed and the journal is removed. A signal after that finds the run's
/// outputs in place: it says so and exits with 0 if no other output is pending. A process killed
/// between the renames leaves the journal, which the next [`AtomicOutput::create`] of an output
/// in that directory finishes (see [`crate::files`]).
///
/// # Errors
/// [`FileError::WrongCount`] if an output's keys are not the number announced,
/// [`FileError::Write`] or [`FileError::Persist`] (no output changed), or
/// [`FileError::PartlyCommitted`] when a rename failed after another succeeded (the journal is
/// left for the next run to finish).
///
/// # Examples
///
/// ```
/// use gpusort_cli::files::{AtomicOutput, FileFormat, commit_all};
/// use gpusort::DType;
///
/// let dir = tempfile::tempdir()?;
/// let (keys, index) = (dir.path().join("sorted.npy"), dir.path().join("idx.npy"));
/// let mut out = AtomicOutput::create(&keys)?;
/// out.begin(FileFormat::Npy, DType::F32, 2)?;
/// out.write_keys(&[-1.0f32, 2.5], &mut |_| {})?;
/// let mut idx = AtomicOutput::create(&index)?;
/// idx.begin(FileFormat::Npy, DType::I64, 2)?;
/// idx.write_keys(&[1i64, 0], &mut |_| {})?;
/// commit_all(vec![out, idx])?; // both appear together
/// assert!(keys.exists() && index.exists());
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 2); // no journal, no .new file
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn commit_all(outputs: Vec<AtomicOutput>) -> Result<(), FileError> {
    for out in &outputs {
        out.encoder.check_count(&out.path)?;
    }
    // On disk before it gets a name, so that a crash cannot leave a named but partial file.
    for out in &outputs {
        out.temp.file().sync_all().map_err(|e| out.write_err(e))?;
    }
    let mut staged = Vec::with_capacity(outputs.len());
    for (i, out) in outputs.into_iter().enumerate() {
        staged.push(out.stage()?);
        cleanup::test_point(&format!("staged-{}", i + 1));
    }
    if staged.is_empty() {
        return Ok(());
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for s in &staged {
        if !dirs.contains(&s.dir) {
            dirs.push(s.dir.clone());
        }
    }
    let persist_err = |s: &Staged, source| FileError::Persist {
        path: s.path.clone(),
        source,
    };
    for d in &dirs {
        sync_dir(d).map_err(|e| persist_err(&staged[0], e))?;
    }
    // One rename is atomic on its own; two or more need the journal.
    let journal = if staged.len() > 1 {
        Some(Journal::write(&staged)?)
    } else {
        None
    };
    let result = cleanup::hold_signals(|state| {
        cleanup::test_point_held("journal");
        for i in 0..staged.len() {
            if let Err(source) = fs::rename(&staged[i].new, &staged[i].target) {
                if i == 0 {
                    if let Some(j) = &journal {
                        let _ = fs::remove_file(&j.path);
                    }
                    return Err(persist_err(&staged[0], source));
                }
                // The journal stays, and the `.new` files it names, for the next run.
                let journal = journal
                    .as_ref()
                    .expect("two or more outputs have a journal");
                let done: Vec<PathBuf> = staged[..i].iter().map(|s| s.path.clone()).collect();
                for s in &mut staged[i..] {
                    s.settled = true;
                    state.temps.remove(s.id);
                }
                for s in &mut staged[..i] {
                    s.pending.armed = false;
                }
                state.committed(done.iter().cloned());
                return Err(FileError::PartlyCommitted {
                    path: staged[i].path.clone(),
                    done,
                    journal: journal.path.clone(),
                    source,
                });
            }
            staged[i].settled = true;
            state.temps.remove(staged[i].id);
            cleanup::test_point_held(&format!("renamed-{}", i + 1));
        }
        for s in &mut staged {
            s.pending.armed = false;
        }
        state.committed(staged.iter().map(|s| s.path.clone()));
        // The renames themselves on disk, then the journal can go.
        for d in &dirs {
            sync_dir(d).map_err(|e| persist_err(&staged[0], e))?;
        }
        if let Some(j) = &journal {
            let _ = fs::remove_file(&j.path);
        }
        Ok(())
    });
    cleanup::await_test_signal();
    result?;
    cleanup::test_point("committed");
    Ok(())
}

/// Keys written to a stream (standard output) as [`AtomicOutput`] writes them to a file: the
/// same `.npy` header or raw bytes, in the same chunks. A stream cannot be put in place
/// atomically: a reader sees the keys as they come, and a run that fails or is interrupted
/// leaves it cut short (a `.npy` reader then finds fewer keys than its header announces).
///
/// # Examples
///
/// ```no_run
/// use gpusort_cli::files::{FileFormat, StreamOutput};
/// use gpusort::DType;
///
/// let mut out = StreamOutput::stdout()?;
/// out.begin(FileFormat::Npy, DType::U32, 3)?;
/// out.write_keys(&[1u32, 2, 3], &mut |_| {})?;
/// out.finish()?;
/// # Ok::<(), gpusort_cli::files::FileError>(())
/// ```
#[derive(Debug)]
pub struct StreamOutput {
    name: PathBuf,
    file: File,
    encoder: Encoder,
}

impl StreamOutput {
    /// Standard output (a duplicate of its descriptor), named "standard output" in messages.
    ///
    /// # Errors
    /// [`FileError::StreamWrite`] when the descriptor cannot be duplicated (it is closed).
    pub fn stdout() -> Result<Self, FileError> {
        let name = PathBuf::from("standard output");
        let fd = io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|source| FileError::StreamWrite {
                name: name.clone(),
                source,
            })?;
        Ok(StreamOutput {
            name,
            file: File::from(fd),
            encoder: Encoder::default(),
        })
    }

    /// The stream's name in messages.
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// As [`AtomicOutput::begin_array`]; from here until the last key is written a signal says
    /// that the stream was cut short ([`crate::cleanup::writing_standard_output`]).
    ///
    /// # Errors
    /// [`FileError::StreamWrite`].
    pub fn begin_array(
        &mut self,
        format: FileFormat,
        dtype: DType,
        shape: &[u64],
    ) -> Result<(), FileError> {
        cleanup::writing_standard_output();
        self.encoder
            .begin(&mut self.file, format, dtype, shape)
            .map_err(|source| FileError::StreamWrite {
                name: self.name.clone(),
                source,
            })?;
        self.note_complete();
        Ok(())
    }

    /// Once every key announced is written (unbuffered: they are in the stream), a signal
    /// counts the stream as complete.
    fn note_complete(&self) {
        if self.encoder.written == self.encoder.expected {
            cleanup::wrote_standard_output();
        }
    }

    /// As [`AtomicOutput::begin`].
    ///
    /// # Errors
    /// [`FileError::StreamWrite`].
    pub fn begin(&mut self, format: FileFormat, dtype: DType, len: u64) -> Result<(), FileError> {
        self.begin_array(format, dtype, &[len])
    }

    /// As [`AtomicOutput::write_keys`].
    ///
    /// # Errors
    /// [`FileError::StreamWrite`] (for example a pipe whose reader is gone).
    pub fn write_keys<K: LeKey>(
        &mut self,
        keys: &[K],
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), FileError> {
        self.encoder
            .write_keys(&mut self.file, keys, progress)
            .map_err(|source| FileError::StreamWrite {
                name: self.name.clone(),
                source,
            })?;
        self.note_complete();
        Ok(())
    }

    /// Checks that as many keys were written as announced and flushes the stream; a signal
    /// after it counts the stream as complete ([`crate::cleanup::wrote_standard_output`]).
    ///
    /// # Errors
    /// [`FileError::WrongCount`] or [`FileError::StreamWrite`].
    pub fn finish(mut self) -> Result<(), FileError> {
        self.encoder.check_count(&self.name)?;
        self.file.flush().map_err(|source| FileError::StreamWrite {
            name: self.name.clone(),
            source,
        })?;
        cleanup::wrote_standard_output();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn output(path: &Path, keys: &[u32]) -> AtomicOutput {
        let mut out = AtomicOutput::create(path).unwrap();
        out.begin(FileFormat::Raw, DType::U32, keys.len() as u64)
            .unwrap();
        out.write_keys(keys, &mut |_| {}).unwrap();
        out
    }

    #[test]
    fn hidden_names_are_recognised() {
        assert_eq!(
            hidden_of(b".out.npy.Ab12Cd.new", NEW_SUFFIX),
            Some(&b"out.npy"[..])
        );
        assert_eq!(
            hidden_of(b".a.b.Ab12Cd.commit", JOURNAL_SUFFIX),
            Some(&b"a.b"[..])
        );
        assert_eq!(hidden_of(b".out.npy.Ab12C.new", NEW_SUFFIX), None);
        assert_eq!(hidden_of(b"out.npy.Ab12Cd.new", NEW_SUFFIX), None);
        assert_eq!(hidden_of(b"..Ab12Cd.new", NEW_SUFFIX), None);
        assert_eq!(hidden_of(b".out.npy.Ab-2Cd.new", NEW_SUFFIX), None);
        let name = hidden_name(OsStr::new("x.npy"), NEW_SUFFIX);
        assert_eq!(hidden_of(name.as_bytes(), NEW_SUFFIX), Some(&b"x.npy"[..]));
    }

    #[test]
    fn journals_round_trip_and_incomplete_ones_are_refused() {
        let entries = vec![JournalEntry {
            dev: 3,
            ino: 99,
            new: PathBuf::from("/d/.a.npy.Ab12Cd.new"),
            target: PathBuf::from("/d/a.npy"),
        }];
        let bytes = encode_journal(&entries);
        let back = parse_journal(&bytes).unwrap();
        assert_eq!((back[0].dev, back[0].ino), (3, 99));
        assert_eq!(back[0].new, entries[0].new);
        assert!(plausible(&back[0]));
        assert!(parse_journal(&bytes[..bytes.len() - 1]).is_none());
        assert!(parse_journal(b"something else").is_none());
        let elsewhere = JournalEntry {
            dev: 3,
            ino: 99,
            new: PathBuf::from("/d/.a.npy.Ab12Cd.new"),
            target: PathBuf::from("/etc/passwd"),
        };
        assert!(!plausible(&elsewhere));
    }

    #[test]
    fn commit_all_replaces_every_output_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
        fs::write(&a, b"old").unwrap();
        commit_all(vec![output(&a, &[1]), output(&b, &[2, 3])]).unwrap();
        assert_eq!(fs::read(&a).unwrap(), 1u32.to_le_bytes());
        assert_eq!(fs::read(&b).unwrap().len(), 8);
        assert_eq!(names(dir.path()), ["a.bin", "b.bin"]);
    }

    #[test]
    fn a_wrong_count_commits_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
        fs::write(&a, b"old").unwrap();
        let mut short = AtomicOutput::create(&b).unwrap();
        short.begin(FileFormat::Raw, DType::U32, 2).unwrap();
        let err = commit_all(vec![output(&a, &[1]), short]).unwrap_err();
        assert!(matches!(err, FileError::WrongCount { .. }), "{err}");
        assert_eq!(fs::read(&a).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["a.bin"]);
    }

    /// What a run killed between its renames leaves: the first output new, the second's `.new`
    /// file and the journal; the next create in the directory finishes the commit.
    #[test]
    fn an_interrupted_commit_is_finished_by_the_next_create() {
        let dir = tempfile::tempdir().unwrap();
        let d = fs::canonicalize(dir.path()).unwrap();
        let (a, b) = (d.join("a.bin"), d.join("b.bin"));
        fs::write(&a, b"old a").unwrap();
        fs::write(&b, b"old b").unwrap();
        let new_a = d.join(".a.bin.Aaaaaa.new");
        let new_b = d.join(".b.bin.Bbbbbb.new");
        fs::write(&new_b, b"new b").unwrap();
        fs::write(&a, b"new a").unwrap(); // the first rename happened
        let meta = fs::metadata(&new_b).unwrap();
        let entries = [
            JournalEntry {
                dev: meta.dev(),
                ino: 1, // the first file's inode: gone, renamed
                new: new_a,
                target: a.clone(),
            },
            JournalEntry {
                dev: meta.dev(),
                ino: meta.ino(),
                new: new_b.clone(),
                target: b.clone(),
            },
        ];
        let journal = d.join(".a.bin.Cccccc.commit");
        fs::write(&journal, encode_journal(&entries)).unwrap();
        // A stale `.new` of another output with no journal naming it stays: not this output's.
        fs::write(d.join(".c.bin.Dddddd.new"), b"c").unwrap();
        drop(AtomicOutput::create(&d.join("c.bin.other")).unwrap());
        assert_eq!(fs::read(&a).unwrap(), b"new a");
        assert_eq!(fs::read(&b).unwrap(), b"new b");
        assert!(!journal.exists() && !new_b.exists());
        assert_eq!(names(&d), [".c.bin.Dddddd.new", "a.bin", "b.bin"]);
        // The output's own stale `.new` goes when it is created.
        drop(AtomicOutput::create(&d.join("c.bin")).unwrap());
        assert_eq!(names(&d), ["a.bin", "b.bin"]);
    }

    #[test]
    fn a_journal_held_by_a_live_run_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let d = fs::canonicalize(dir.path()).unwrap();
        let new_b = d.join(".b.bin.Bbbbbb.new");
        fs::write(&new_b, b"new b").unwrap();
        let meta = fs::metadata(&new_b).unwrap();
        let journal = d.join(".a.bin.Cccccc.commit");
        let entries = [JournalEntry {
            dev: meta.dev(),
            ino: meta.ino(),
            new: new_b.clone(),
            target: d.join("b.bin"),
        }];
        fs::write(&journal, encode_journal(&entries)).unwrap();
        let held = File::open(&journal).unwrap();
        held.try_lock().unwrap();
        drop(AtomicOutput::create(&d.join("b.bin")).unwrap());
        assert!(journal.exists() && new_b.exists() && !d.join("b.bin").exists());
        drop(held);
        drop(AtomicOutput::create(&d.join("b.bin")).unwrap());
        assert_eq!(names(&d), ["b.bin"]);
    }
}
