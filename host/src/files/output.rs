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

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts a `format` file of `len` keys of type `dtype`: the `.npy` header, nothing for raw.
    ///
    /// # Errors
    /// [`FileError::Write`].
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

    /// Appends `keys`, in chunks of 64 MiB; `progress` is told the bytes of each chunk.
    ///
    /// # Errors
    /// [`FileError::Write`].
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
