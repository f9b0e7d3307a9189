//! Writing a key file atomically: into a file beside it that has no name until it is complete
//! (`O_TMPFILE`; where that is not supported, a temporary name removed on failure and on
//! SIGINT/SIGTERM/SIGHUP), then linked or renamed onto it and flushed with its directory, so
//! that the output is always either the old file or the complete new one and a failure leaves
//! no new file.

use super::error::FileError;
use super::le::{LeKey, bytes_of, encode_into};
use super::{CHUNK_BYTES, FileFormat, npy};
use crate::cleanup;
use crate::keys::DType;
use std::ffi::{CString, OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tempfile::NamedTempFile;

/// Temporary names: `.NAME.` + random characters + `.tmp`, beside the output.
const TEMP_SUFFIX: &str = ".tmp";
const TEMP_RAND: usize = 6;

fn temp_prefix(name: &OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    prefix
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

/// Removes the temporary files of the output `name` in `dir` that a killed run left: those of
/// its own pattern that no process holds locked, and that are not brand new (a run locks its
/// file right after creating it).
fn remove_stale_temporaries(dir: &Path, name: &OsStr) {
    let prefix = temp_prefix(name);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let bytes = file_name.as_bytes();
        let Some(middle) = bytes
            .strip_prefix(prefix.as_bytes())
            .and_then(|rest| rest.strip_suffix(TEMP_SUFFIX.as_bytes()))
        else {
            continue;
        };
        if middle.len() != TEMP_RAND || !middle.iter().all(u8::is_ascii_alphanumeric) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = File::open(&path) else {
            continue;
        };
        let old = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > Duration::from_secs(2));
        if file.metadata().is_ok_and(|m| m.is_file()) && old && file.try_lock().is_ok() {
            let _ = fs::remove_file(&path);
        }
    }
}

/// An output file being written. Nothing appears at its path until [`AtomicOutput::commit`];
/// dropped before that, it removes its temporary file.
///
/// Use: [`AtomicOutput::create`], then [`AtomicOutput::begin`] once with the format, key type
/// and number of keys (or [`AtomicOutput::begin_array`] with a shape),
/// [`AtomicOutput::write_keys`] as often as needed, and
/// [`AtomicOutput::commit`], which checks that as many keys were written as announced.
///
/// # Examples
///
/// ```
/// use gpusort::files::{AtomicOutput, FileFormat};
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
    /// Whether `target` existed when the output was created.
    replaces: bool,
    /// Keys the header announced, and keys written since.
    expected: u64,
    written: u64,
    /// Reused between chunks.
    bytes: Vec<u8>,
}

/// Where the keys go until the commit.
#[derive(Debug)]
enum Temp {
    /// An `O_TMPFILE`: no name until it is linked into place, so that nothing is left behind
    /// whatever ends the process.
    Unnamed(File),
    /// A named temporary file, registered for removal on a signal (where `O_TMPFILE` is not
    /// supported).
    Named { file: NamedTempFile, id: u64 },
}

impl Temp {
    fn file(&mut self) -> &mut File {
        match self {
            Temp::Unnamed(file) => file,
            Temp::Named { file, .. } => file.as_file_mut(),
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Temp::Named { id, .. } = self {
            // The NamedTempFile removes the file as it drops, after this.
            cleanup::unregister(*id);
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
    /// Temporary files of this output's own pattern (`.NAME.XXXXXX.tmp`) that no running
    /// gpusort holds are removed: they are what a killed run left.
    ///
    /// # Errors
    /// [`FileError::NoOutputDir`], [`FileError::OutputDirNotDir`], [`FileError::OutputIsDir`],
    /// [`FileError::OutputNotRegular`], [`FileError::OutputDanglingLink`],
    /// [`FileError::OutputKeepOwner`] or [`FileError::Write`] (e.g. a read-only directory).
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort::files::{AtomicOutput, FileError};
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
        remove_stale_temporaries(&dir, &name);
        let mut temp = match open_unnamed(&dir) {
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
                let id = cleanup::register(file.path());
                Temp::Named { file, id }
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
            replaces: existing.is_some(),
            expected: 0,
            written: 0,
            bytes: Vec::new(),
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
    /// let out = gpusort::files::AtomicOutput::create(&link)?;
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
    /// let out = gpusort::files::AtomicOutput::create(&path)?;
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
    /// use gpusort::files::{AtomicOutput, FileFormat, KeyFile};
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
    /// use gpusort::files::{AtomicOutput, FileFormat, KeyFile};
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
        self.expected = shape.iter().fold(1, |len: u64, &d| len.saturating_mul(d));
        if format == FileFormat::Npy {
            let mut header = Vec::new();
            npy::write_header(&mut header, dtype, shape).map_err(|e| self.write_err(e))?;
            self.temp
                .file()
                .write_all(&header)
                .map_err(|e| self.write_err(e))?;
        }
        Ok(())
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
    /// use gpusort::files::{AtomicOutput, FileFormat};
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
        let mut bytes = std::mem::take(&mut self.bytes);
        for chunk in keys.chunks(CHUNK_BYTES / K::SIZE) {
            // In memory the keys are their little-endian bytes on a little-endian target:
            // written as they are, without a copy.
            let out = if cfg!(target_endian = "little") {
                bytes_of(chunk)
            } else {
                encode_into(chunk, &mut bytes);
                &bytes[..]
            };
            if let Err(e) = self.temp.file().write_all(out) {
                return Err(self.write_err(e));
            }
            self.written += chunk.len() as u64;
            progress(out.len() as u64);
        }
        self.bytes = bytes;
        Ok(())
    }

    /// Flushes the file to disk and renames it to its final path, replacing what was there.
    ///
    /// # Errors
    /// [`FileError::WrongCount`] if the keys written are not the number [`AtomicOutput::begin`]
    /// announced, [`FileError::Write`] or [`FileError::Persist`]; the temporary file is removed.
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort::files::{AtomicOutput, FileError, FileFormat};
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
    pub fn commit(mut self) -> Result<(), FileError> {
        if self.written != self.expected {
            return Err(FileError::WrongCount {
                path: self.path.clone(),
                expected: self.expected,
                written: self.written,
            });
        }
        // On disk before it gets its name, so that a crash cannot leave a named but partial
        // file.
        if let Err(e) = self.temp.file().sync_all() {
            return Err(self.write_err(e));
        }
        let persist_err = |source| FileError::Persist {
            path: self.path.clone(),
            source,
        };
        // Under the signal lock: a signal now is acted on once the output is in place, so that
        // no temporary name is left and the exit code is the signal's.
        cleanup::hold_signals(|temps| match &mut self.temp {
            Temp::Unnamed(file) => {
                if !self.replaces {
                    match link_unnamed(file, &self.target) {
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        other => return other,
                    }
                }
                // Replacing a file takes a name for the new one first: linking cannot replace.
                let name = self.target.file_name().unwrap_or_default();
                let temp_path = loop {
                    let candidate = self.dir.join(format!(
                        "{}{}{TEMP_SUFFIX}",
                        temp_prefix(name).to_string_lossy(),
                        random_chars()
                    ));
                    match link_unnamed(file, &candidate) {
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                        Err(e) => return Err(e),
                        Ok(()) => break candidate,
                    }
                };
                let id = temps.add(&temp_path);
                let renamed = fs::rename(&temp_path, &self.target);
                if renamed.is_err() {
                    let _ = fs::remove_file(&temp_path);
                }
                temps.remove(id);
                renamed
            }
            Temp::Named { file, id } => {
                let renamed = fs::rename(file.path(), &self.target);
                if renamed.is_ok() {
                    temps.remove(*id);
                }
                renamed
            }
        })
        .map_err(persist_err)?;
        // The rename itself on disk.
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(persist_err)?;
        Ok(())
    }

    fn write_err(&self, source: io::Error) -> FileError {
        FileError::Write {
            path: self.path.clone(),
            dir: self.dir.clone(),
            source,
        }
    }
}
