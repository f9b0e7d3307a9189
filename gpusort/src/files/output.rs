//! Writing a key file atomically: into a temporary file beside it, renamed onto it only when
//! complete, so that a failure leaves no new file and an existing one untouched.

use super::error::FileError;
use super::le::{LeKey, encode_into};
use super::{CHUNK_BYTES, FileFormat, npy};
use crate::keys::DType;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// An output file being written. Nothing appears at its path until [`AtomicOutput::commit`];
/// dropped before that, it removes its temporary file.
///
/// Use: [`AtomicOutput::create`], then [`AtomicOutput::begin`] once with the format, key type
/// and number of keys, [`AtomicOutput::write_keys`] as often as needed, and
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
    dir: PathBuf,
    temp: NamedTempFile,
    /// Keys the header announced, and keys written since.
    expected: u64,
    written: u64,
    /// Reused between chunks.
    bytes: Vec<u8>,
}

impl AtomicOutput {
    /// Creates the temporary file for `path`, in `path`'s directory (so that the final rename
    /// stays on one file system). An existing file at `path` lends its permissions.
    ///
    /// # Errors
    /// [`FileError::NoOutputDir`], [`FileError::OutputDirNotDir`], [`FileError::OutputIsDir`],
    /// or [`FileError::Write`] (e.g. a read-only directory).
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
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn create(path: &Path) -> Result<Self, FileError> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        match fs::metadata(&dir) {
            Ok(meta) if !meta.is_dir() => {
                return Err(FileError::OutputDirNotDir {
                    path: path.into(),
                    dir,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(FileError::NoOutputDir {
                    path: path.into(),
                    dir,
                });
            }
            // ENOTDIR: a parent further up is a file.
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                return Err(FileError::OutputDirNotDir {
                    path: path.into(),
                    dir,
                });
            }
            _ => {}
        }
        let existing = fs::metadata(path).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(FileError::OutputIsDir { path: path.into() });
        }
        let write_err = |source| FileError::Write {
            path: path.into(),
            dir: dir.clone(),
            source,
        };
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // The temporary file's own mode, 0600, would make the output private: give it the mode
        // `File::create` gives, read-write for all less the umask.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let temp = builder.tempfile_in(&dir).map_err(write_err)?;
        if let Some(meta) = existing {
            fs::set_permissions(temp.path(), meta.permissions()).map_err(write_err)?;
        }
        Ok(AtomicOutput {
            path: path.into(),
            dir,
            temp,
            expected: 0,
            written: 0,
            bytes: Vec::new(),
        })
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

    /// Starts a `format` file of `len` keys of type `dtype`: the `.npy` header, nothing for raw.
    /// Call it once, before [`AtomicOutput::write_keys`].
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
        self.expected = len;
        if format == FileFormat::Npy {
            let mut header = Vec::new();
            npy::write_header(&mut header, dtype, len).map_err(|e| self.write_err(e))?;
            self.temp
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
            encode_into(chunk, &mut bytes);
            self.temp.write_all(&bytes).map_err(|e| self.write_err(e))?;
            self.written += chunk.len() as u64;
            progress(bytes.len() as u64);
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
    pub fn commit(self) -> Result<(), FileError> {
        if self.written != self.expected {
            return Err(FileError::WrongCount {
                path: self.path,
                expected: self.expected,
                written: self.written,
            });
        }
        // On disk before the rename, so that a crash cannot leave a renamed but partial file.
        self.temp
            .as_file()
            .sync_all()
            .map_err(|e| self.write_err(e))?;
        self.temp
            .persist(&self.path)
            .map_err(|e| FileError::Persist {
                path: self.path.clone(),
                source: e.error,
            })?;
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
