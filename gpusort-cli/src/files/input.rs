//! Opening a key file read-only, checking it, and reading its keys in chunks.

use super::error::FileError;
use super::le::{LeKey, bytes_of_mut, from_le_in_place, zeroed_keys};
use super::{FileFormat, npy};
use crate::keys::DType;
use crate::with_key_type;
use rayon::prelude::*;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A key file opened read-only and checked: its format, key type, shape and length are known,
/// and its size matches them. Nothing is read past the header until [`KeyFile::read_keys`].
///
/// The file is never written to. It stays open until the `KeyFile` is dropped.
///
/// # Examples
///
/// ```
/// use gpusort_cli::files::{FileFormat, KeyFile};
/// use gpusort::{DType, with_key_type};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("keys.bin"); // raw little-endian i64 keys
/// std::fs::write(&path, [5i64, -2, 9].map(i64::to_le_bytes).concat())?;
///
/// let mut file = KeyFile::open(&path, FileFormat::Raw, Some(DType::I64))?;
/// assert_eq!((file.len(), file.data_bytes()), (3, 24));
/// // Generic code over the key type, picked at run time:
/// let shown = with_key_type!(file.dtype(), K => {
///     let keys: Vec<K> = file.read_keys(&mut |_| {})?;
///     format!("{keys:?}")
/// });
/// assert_eq!(shown, "[5, -2, 9]");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct KeyFile {
    path: PathBuf,
    file: File,
    format: FileFormat,
    dtype: DType,
    /// A `.npy`'s shape; `[len]` for a raw file.
    shape: Vec<u64>,
    len: u64,
    data_offset: u64,
}

impl KeyFile {
    /// Opens `path` as `format`, a 1-D array. A `.npy` file names its key type: `dtype`, if
    /// given, must agree. A raw file is nothing but little-endian keys, so `dtype` is required.
    /// [`KeyFile::open_array`] also takes arrays of more dimensions.
    ///
    /// # Errors
    /// [`FileError`] naming the file and the problem: missing or unreadable, not a `.npy`, a bad
    /// header, an unsupported dtype, not 1-D, Fortran order, truncated, trailing bytes, a raw
    /// size that is not a whole number of keys, no `dtype` for a raw file, or a `dtype` that
    /// is not the file's.
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::files::{FileError, FileFormat, KeyFile};
    /// use gpusort::DType;
    /// use std::path::Path;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let raw = dir.path().join("keys.bin");
    /// std::fs::write(&raw, [0u8; 12])?;
    /// let file = KeyFile::open(&raw, FileFormat::Raw, Some(DType::U32))?;
    /// assert_eq!(file.len(), 3);
    ///
    /// assert!(matches!(
    ///     KeyFile::open(&raw, FileFormat::Raw, Some(DType::F64)),
    ///     Err(FileError::RawSize { size: 12, key_bytes: 8, .. })
    /// ));
    /// assert!(matches!(
    ///     KeyFile::open(&raw, FileFormat::Npy, None),
    ///     Err(FileError::NotNpy { .. })
    /// ));
    /// assert!(matches!(
    ///     KeyFile::open(Path::new("no/such.npy"), FileFormat::Npy, None),
    ///     Err(FileError::Missing { .. })
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: &Path, format: FileFormat, dtype: Option<DType>) -> Result<Self, FileError> {
        Self::open_with(path, format, dtype, false)
    }

    /// Opens `path` as [`KeyFile::open`] does, also taking a `.npy` array of two or more
    /// dimensions in C order: its keys are its rows (along the last axis) one after another,
    /// [`KeyFile::shape`] gives its shape and [`KeyFile::row_len`] the length of its rows. A
    /// raw file has no shape: it is read as a 1-D array.
    ///
    /// # Errors
    /// As [`KeyFile::open`], where only a 0-D array is refused for its shape
    /// ([`FileError::ZeroDimensional`]); an array of two or more dimensions in Fortran order
    /// is [`FileError::FortranOrder`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::files::{AtomicOutput, FileFormat, KeyFile};
    /// use gpusort::DType;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("matrix.npy"); // numpy: np.save(path, a) of a 2 x 3 array
    /// let mut out = AtomicOutput::create(&path)?;
    /// out.begin_array(FileFormat::Npy, DType::I32, &[2, 3])?;
    /// out.write_keys(&[3i32, 1, 2, /* next row */ 0, -5, 7], &mut |_| {})?;
    /// out.commit()?;
    ///
    /// let mut file = KeyFile::open_array(&path, FileFormat::Npy, None)?;
    /// assert_eq!((file.shape(), file.row_len(), file.len()), (&[2, 3][..], Some(3), 6));
    /// let keys: Vec<i32> = file.read_keys(&mut |_| {})?; // row after row
    /// assert_eq!(keys, [3, 1, 2, 0, -5, 7]);
    /// assert!(KeyFile::open(&path, FileFormat::Npy, None).is_err()); // not 1-D
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_array(
        path: &Path,
        format: FileFormat,
        dtype: Option<DType>,
    ) -> Result<Self, FileError> {
        Self::open_with(path, format, dtype, true)
    }

    /// [`KeyFile::open`] (`any_rank` false) or [`KeyFile::open_array`] (true).
    fn open_with(
        path: &Path,
        format: FileFormat,
        dtype: Option<DType>,
        any_rank: bool,
    ) -> Result<Self, FileError> {
        let (path, file) = open_source(path)?;
        let path = path.as_path();
        let read_err = |source| FileError::Read {
            path: path.to_owned(),
            source,
        };
        let meta = file.metadata().map_err(read_err)?;
        let size = meta.len();
        let (file_dtype, shape, len, data_offset) = match format {
            FileFormat::Npy => {
                let header = npy::read_header(path, &file)?;
                match header.shape.len() {
                    1 => {}
                    0 if any_rank => {
                        return Err(FileError::ZeroDimensional { path: path.into() });
                    }
                    _ if any_rank => {}
                    _ => {
                        return Err(FileError::NotOneDimensional {
                            path: path.into(),
                            shape: header.shape,
                        });
                    }
                }
                (header.dtype, header.shape, header.len, header.data_offset)
            }
            FileFormat::Raw => {
                let dtype = dtype.ok_or_else(|| FileError::RawNeedsDtype {
                    path: path.into(),
                    why: if FileFormat::from_path(path) == FileFormat::Npy || path == stdin_name() {
                        "--format raw"
                    } else {
                        "its name does not end in .npy"
                    },
                })?;
                let key_bytes = key_bytes(dtype);
                if size % key_bytes as u64 != 0 {
                    return Err(FileError::RawSize {
                        path: path.into(),
                        size,
                        dtype,
                        key_bytes,
                    });
                }
                let len = size / key_bytes as u64;
                (dtype, vec![len], len, 0)
            }
        };
        if let Some(asked) = dtype.filter(|&d| d != file_dtype) {
            return Err(FileError::DtypeMismatch {
                path: path.into(),
                found: file_dtype,
                asked,
            });
        }
        let found = size.saturating_sub(data_offset);
        let expected = len
            .checked_mul(key_bytes(file_dtype) as u64)
            .ok_or_else(|| FileError::ShapeOverflow {
                path: path.into(),
                shape: shape.clone(),
                dtype: file_dtype,
            })?;
        if found < expected {
            return Err(FileError::Truncated {
                path: path.into(),
                len,
                expected,
                found,
            });
        }
        if found > expected {
            return Err(FileError::TrailingData {
                path: path.into(),
                len,
                extra: found - expected,
            });
        }
        Ok(KeyFile {
            path: path.into(),
            file,
            format,
            dtype: file_dtype,
            shape,
            len,
            data_offset,
        })
    }

    /// The file's path, as given to [`KeyFile::open`].
    ///
    /// ```
    /// # use gpusort_cli::files::{FileFormat, KeyFile};
    /// # fn demo() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    /// #     let dir = tempfile::tempdir()?;
    /// #     let path = dir.path().join("keys.npy");
    /// #     let mut out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// #     out.begin(gpusort_cli::files::FileFormat::Npy, gpusort::DType::U32, 3)?;
    /// #     out.write_keys(&[3u32, 1, 2], &mut |_| {})?;
    /// #     out.commit()?;
    /// #     Ok((dir, path))
    /// # }
    /// let (_dir, path) = demo()?;
    /// let file = KeyFile::open(&path, FileFormat::Npy, None)?;
    /// assert_eq!(file.path(), path);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `.npy` or raw, as given to [`KeyFile::open`].
    ///
    /// ```
    /// # use gpusort_cli::files::{FileFormat, KeyFile};
    /// # fn demo() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    /// #     let dir = tempfile::tempdir()?;
    /// #     let path = dir.path().join("keys.npy");
    /// #     let mut out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// #     out.begin(gpusort_cli::files::FileFormat::Npy, gpusort::DType::U32, 3)?;
    /// #     out.write_keys(&[3u32, 1, 2], &mut |_| {})?;
    /// #     out.commit()?;
    /// #     Ok((dir, path))
    /// # }
    /// let (_dir, path) = demo()?;
    /// let file = KeyFile::open(&path, FileFormat::Npy, None)?;
    /// assert_eq!(file.format(), FileFormat::Npy);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// The key type: from the header of a `.npy`, as given for a raw file.
    ///
    /// ```
    /// # use gpusort_cli::files::{FileFormat, KeyFile};
    /// # fn demo() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    /// #     let dir = tempfile::tempdir()?;
    /// #     let path = dir.path().join("keys.npy");
    /// #     let mut out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// #     out.begin(gpusort_cli::files::FileFormat::Npy, gpusort::DType::U32, 3)?;
    /// #     out.write_keys(&[3u32, 1, 2], &mut |_| {})?;
    /// #     out.commit()?;
    /// #     Ok((dir, path))
    /// # }
    /// let (_dir, path) = demo()?;
    /// let file = KeyFile::open(&path, FileFormat::Npy, None)?;
    /// assert_eq!(file.dtype(), gpusort::DType::U32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The array's shape: a `.npy`'s, as its header gives it; `[len]` for a raw file. The keys
    /// are in C order: the last axis varies fastest.
    ///
    /// ```
    /// use gpusort_cli::files::{FileFormat, KeyFile};
    /// use gpusort::DType;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("keys.bin");
    /// std::fs::write(&path, [0u8; 24])?;
    /// let file = KeyFile::open_array(&path, FileFormat::Raw, Some(DType::F32))?;
    /// assert_eq!(file.shape(), [6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The length of the rows of an array of two or more dimensions: its last axis, along
    /// which NumPy's `np.sort(a)` sorts. `None` for a 1-D array or a raw file.
    ///
    /// ```
    /// use gpusort_cli::files::{AtomicOutput, FileFormat, KeyFile};
    /// use gpusort::DType;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("empty_rows.npy");
    /// let mut out = AtomicOutput::create(&path)?;
    /// out.begin_array(FileFormat::Npy, DType::U64, &[4, 0])?; // four empty rows
    /// out.commit()?;
    /// let file = KeyFile::open_array(&path, FileFormat::Npy, None)?;
    /// assert_eq!((file.row_len(), file.len()), (Some(0), 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn row_len(&self) -> Option<u64> {
        match self.shape[..] {
            [_, .., last] => Some(last),
            _ => None,
        }
    }

    /// Number of keys.
    ///
    /// ```
    /// # use gpusort_cli::files::{FileFormat, KeyFile};
    /// # fn demo() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    /// #     let dir = tempfile::tempdir()?;
    /// #     let path = dir.path().join("keys.npy");
    /// #     let mut out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// #     out.begin(gpusort_cli::files::FileFormat::Npy, gpusort::DType::U32, 3)?;
    /// #     out.write_keys(&[3u32, 1, 2], &mut |_| {})?;
    /// #     out.commit()?;
    /// #     Ok((dir, path))
    /// # }
    /// let (_dir, path) = demo()?;
    /// let file = KeyFile::open(&path, FileFormat::Npy, None)?;
    /// assert_eq!(file.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file holds no key.
    ///
    /// ```
    /// # use gpusort_cli::files::{FileFormat, KeyFile};
    /// # fn demo() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    /// #     let dir = tempfile::tempdir()?;
    /// #     let path = dir.path().join("keys.npy");
    /// #     let mut out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// #     out.begin(gpusort_cli::files::FileFormat::Npy, gpusort::DType::U32, 3)?;
    /// #     out.write_keys(&[3u32, 1, 2], &mut |_| {})?;
    /// #     out.commit()?;
    /// #     Ok((dir, path))
    /// # }
    /// let (_dir, path) = demo()?;
    /// let file = KeyFile::open(&path, FileFormat::Npy, None)?;
    /// assert!(!file.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of key data: [`KeyFile::len`] × the key size, without the `.npy` header.
    ///
    /// ```
    /// # use gpusort_cli::files::{FileFormat, KeyFile};
    /// # fn demo() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    /// #     let dir = tempfile::tempdir()?;
    /// #     let path = dir.path().join("keys.npy");
    /// #     let mut out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// #     out.begin(gpusort_cli::files::FileFormat::Npy, gpusort::DType::U32, 3)?;
    /// #     out.write_keys(&[3u32, 1, 2], &mut |_| {})?;
    /// #     out.commit()?;
    /// #     Ok((dir, path))
    /// # }
    /// let (_dir, path) = demo()?;
    /// let file = KeyFile::open(&path, FileFormat::Npy, None)?;
    /// assert_eq!(file.data_bytes(), 12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn data_bytes(&self) -> u64 {
        self.len * key_bytes(self.dtype) as u64
    }

    /// Reads every key, straight into the vector, in rounds of 16 MiB per rayon thread read in
    /// parallel; `progress` is told the bytes of each round. `K` must be the file's key type
    /// ([`with_key_type!`] picks it from [`KeyFile::dtype`]).
    ///
    /// Memory: the keys, allocated once and fallibly (so a file too big for memory is an
    /// error, not an abort), and nothing else.
    ///
    /// # Errors
    /// [`FileError::DtypeMismatch`] if `K` is not the file's key type,
    /// [`FileError::OutOfMemory`], [`FileError::Truncated`] if the file shrank since it was
    /// opened, or [`FileError::Read`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use gpusort_cli::files::{FileError, FileFormat, KeyFile};
    /// # fn demo() -> Result<(tempfile::TempDir, std::path::PathBuf), Box<dyn std::error::Error>> {
    /// #     let dir = tempfile::tempdir()?;
    /// #     let path = dir.path().join("keys.npy");
    /// #     let mut out = gpusort_cli::files::AtomicOutput::create(&path)?;
    /// #     out.begin(gpusort_cli::files::FileFormat::Npy, gpusort::DType::U32, 3)?;
    /// #     out.write_keys(&[3u32, 1, 2], &mut |_| {})?;
    /// #     out.commit()?;
    /// #     Ok((dir, path))
    /// # }
    /// let (_dir, path) = demo()?;
    /// let mut file = KeyFile::open(&path, FileFormat::Npy, None)?;
    /// let mut bytes = 0;
    /// let keys: Vec<u32> = file.read_keys(&mut |n| bytes += n)?;
    /// assert_eq!((keys, bytes), (vec![3, 1, 2], 12));
    /// assert!(matches!(file.read_keys::<i32>(&mut |_| {}), Err(FileError::DtypeMismatch { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_keys<K: LeKey>(
        &mut self,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<K>, FileError> {
        if K::DTYPE != self.dtype {
            return Err(FileError::DtypeMismatch {
                path: self.path.clone(),
                found: self.dtype,
                asked: K::DTYPE,
            });
        }
        let total = self.data_bytes();
        let out_of_memory = || FileError::OutOfMemory {
            path: self.path.clone(),
            bytes: total,
        };
        let len = usize::try_from(self.len).map_err(|_| out_of_memory())?;
        // Read straight into the keys' memory: no copy beside the kernel's.
        let mut keys: Vec<K> = zeroed_keys(len).ok_or_else(out_of_memory)?;

        // Pieces of a round are read on rayon's threads at their offsets: the page faults of
        // the new memory and the kernel's copies proceed on all cores.
        let piece = READ_PIECE;
        let round = piece * rayon::current_num_threads();
        let mut done = 0;
        for bytes in bytes_of_mut(&mut keys).chunks_mut(round) {
            let start = self.data_offset + done as u64;
            bytes
                .par_chunks_mut(piece)
                .enumerate()
                .try_for_each(|(i, bytes)| {
                    self.file
                        .read_exact_at(bytes, start + (i * piece) as u64)
                        .map_err(|e| match e.kind() {
                            io::ErrorKind::UnexpectedEof => FileError::Truncated {
                                path: self.path.clone(),
                                len: self.len,
                                expected: total,
                                // The data the file holds now: pieces fail in any order.
                                found: self
                                    .file
                                    .metadata()
                                    .map_or((done + i * piece) as u64, |m| {
                                        m.len().saturating_sub(self.data_offset).min(total)
                                    }),
                            },
                            _ => FileError::Read {
                                path: self.path.clone(),
                                source: e,
                            },
                        })
                })?;
            done += bytes.len();
            progress(bytes.len() as u64);
        }
        from_le_in_place(&mut keys);
        Ok(keys)
    }
}

/// Bytes of a file read by one thread at a time.
const READ_PIECE: usize = 16 << 20;

/// The name standard input goes by in messages, given as `-`.
fn stdin_name() -> &'static Path {
    Path::new("standard input")
}

/// Opens `path` for reading: a regular file as it is; `-` (standard input), a pipe or a FIFO
/// copied to an unnamed temporary file first, since the keys are read after the header is
/// checked and a stream cannot be read twice. Devices, sockets and directories are refused.
/// Returns the name to use in messages and the file.
fn open_source(path: &Path) -> Result<(PathBuf, File), FileError> {
    use std::os::unix::fs::FileTypeExt;
    let read_err = |path: &Path, source| FileError::Read {
        path: path.to_owned(),
        source,
    };
    if path == Path::new("-") {
        let name = stdin_name();
        let stdin = io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| read_err(name, e))?;
        let file = File::from(stdin);
        let kind = file.metadata().map_err(|e| read_err(name, e))?.file_type();
        if kind.is_file() {
            return Ok((name.into(), file));
        }
        if kind.is_char_device() || kind.is_block_device() || kind.is_dir() {
            return Err(FileError::InputNotRegular {
                path: name.into(),
                kind: super::output::file_kind(&kind),
            });
        }
        return Ok((name.into(), spool(name, file)?));
    }
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => FileError::Missing { path: path.into() },
        _ => read_err(path, e),
    })?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(read_err(
            path,
            io::Error::new(io::ErrorKind::IsADirectory, "it is a directory"),
        ));
    }
    if kind.is_char_device() || kind.is_block_device() || kind.is_socket() {
        return Err(FileError::InputNotRegular {
            path: path.into(),
            kind: super::output::file_kind(&kind),
        });
    }
    if kind.is_fifo() {
        // Opening a FIFO waits for a writer: said on stderr when it takes more than a moment.
        let (opened, wait) = std::sync::mpsc::channel::<()>();
        let shown = path.to_owned();
        std::thread::spawn(move || {
            if wait.recv_timeout(std::time::Duration::from_secs(1))
                == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            {
                eprintln!(
                    "gpusort: waiting for a writer to open the FIFO {} (interrupt to stop)",
                    shown.display()
                );
            }
        });
        let file = File::open(path).map_err(|e| read_err(path, e));
        let _ = opened.send(());
        return Ok((path.into(), spool(path, file?)?));
    }
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => FileError::Missing { path: path.into() },
        _ => read_err(path, e),
    })?;
    Ok((path.into(), file))
}

/// Copies the stream `from` (named `name`) to an unnamed temporary file, returned at its
/// start.
fn spool(name: &Path, mut from: File) -> Result<File, FileError> {
    let read_err = |source| FileError::Read {
        path: name.to_owned(),
        source,
    };
    let mut spool = tempfile::tempfile().map_err(read_err)?;
    io::copy(&mut from, &mut spool).map_err(read_err)?;
    spool.seek(SeekFrom::Start(0)).map_err(read_err)?;
    Ok(spool)
}

/// Bytes per key of `dtype`: 4 or 8.
///
/// ```
/// use gpusort::DType;
/// use gpusort_cli::files::key_bytes;
///
/// assert_eq!(key_bytes(DType::F32), 4);
/// assert_eq!(key_bytes(DType::U64), 8);
/// ```
pub fn key_bytes(dtype: DType) -> usize {
    with_key_type!(dtype, K => size_of::<K>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_piece_in_place() {
        // Several pieces a round and several rounds: keys that tell their position.
        let len = 2 * READ_PIECE / 4 * rayon::current_num_threads() + 12_345;
        let keys: Vec<u32> = (0..len as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.bin");
        fs::write(&path, super::super::le::bytes_of(&keys)).unwrap();
        let mut file = KeyFile::open(&path, FileFormat::Raw, Some(DType::U32)).unwrap();
        let mut told = 0;
        let read: Vec<u32> = file.read_keys(&mut |n| told += n).unwrap();
        assert_eq!(told, (len * 4) as u64);
        assert!(read == keys);
    }

    #[test]
    fn a_file_that_shrank_since_it_was_opened_is_truncated() {
        let len = READ_PIECE / 8 * 3;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.bin");
        fs::write(&path, vec![7u8; len * 8]).unwrap();
        let mut file = KeyFile::open(&path, FileFormat::Raw, Some(DType::F64)).unwrap();
        let kept = READ_PIECE as u64 + 24;
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(kept)
            .unwrap();
        match file.read_keys::<f64>(&mut |_| {}) {
            Err(FileError::Truncated {
                len: l,
                expected,
                found,
                ..
            }) => assert_eq!((l, expected, found), (len as u64, len as u64 * 8, kept)),
            other => panic!("expected a truncated file, got {other:?}"),
        }
    }
}
