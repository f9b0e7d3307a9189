//! Key files: `.npy` arrays and raw little-endian keys, read in chunks and written atomically
//! (an unnamed file, then a rename), one output or several together.
//!
//! - [`KeyFile`] opens a file read-only and checks it (format, key type, shape, length, size)
//!   before any key is read; [`KeyFile::read_keys`] reads them. [`KeyFile::open`] takes 1-D
//!   arrays; [`KeyFile::open_array`] also those of more dimensions, whose rows (the last axis)
//!   [`KeyFile::shape`] and [`KeyFile::row_len`] describe.
//! - [`AtomicOutput`] writes a file beside its final path and renames it there on
//!   [`AtomicOutput::commit`]: a failure leaves no new file and an existing one untouched.
//!   [`commit_all`] puts several in place together (all old or all new, a journal finishing
//!   a commit that a crash cut in two); [`StreamOutput`] writes the same bytes to standard
//!   output.
//! - [`FileError`] says what is wrong, naming the file.
//!
//! Supported: the six key types ([`DType`](crate::keys::DType)), little-endian, C order (a 1-D
//! array in either order); [`AtomicOutput::begin_array`] writes any shape.
//!
//! ```
//! use gpusort_cli::files::{AtomicOutput, FileFormat, KeyFile};
//! use gpusort::{DType, Order, cpu::CpuAlgo};
//!
//! let dir = tempfile::tempdir()?;
//! let (input, sorted) = (dir.path().join("keys.npy"), dir.path().join("sorted.npy"));
//!
//! // A .npy to sort (numpy: np.save("keys.npy", np.array([...], dtype=np.float32))).
//! let mut out = AtomicOutput::create(&input)?;
//! out.begin(FileFormat::Npy, DType::F32, 4)?;
//! out.write_keys(&[2.5f32, -1.0, f32::NAN, 0.0], &mut |_| {})?;
//! out.commit()?;
//!
//! // Read it, sort it, write the result atomically.
//! let mut file = KeyFile::open(&input, FileFormat::from_path(&input), None)?;
//! assert_eq!((file.dtype(), file.len()), (DType::F32, 4));
//! let mut keys: Vec<f32> = file.read_keys(&mut |_| {})?;
//! CpuAlgo::Rayon.sort(&mut keys, Order::Ascending); // or GpuSorter::sort_unstable
//! let mut out = AtomicOutput::create(&sorted)?;
//! out.begin(FileFormat::Npy, file.dtype(), file.len())?;
//! out.write_keys(&keys, &mut |_| {})?;
//! out.commit()?;
//!
//! let back: Vec<f32> = KeyFile::open(&sorted, FileFormat::Npy, Some(DType::F32))?
//!     .read_keys(&mut |_| {})?;
//! assert_eq!(back[..3], [-1.0, 0.0, 2.5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod input;
mod le;
mod npy;
mod output;
mod pyliteral;

pub use error::FileError;
pub use input::{KeyFile, key_bytes};
pub use le::LeKey;
pub use output::{AtomicOutput, StreamOutput, commit_all};

use std::path::Path;

/// Bytes written at a time (64 MiB): big enough that the per-call cost vanishes, small enough
/// that a buffer of it is nothing beside the keys of a multi-GB file. A multiple of every key
/// size. (Keys are read straight into their vector, 16 MiB a thread at a time.)
///
/// ```
/// assert_eq!(gpusort_cli::files::CHUNK_BYTES % 8, 0);
/// ```
pub const CHUNK_BYTES: usize = 64 << 20;

/// How a file stores its keys. On the command line (`--format`): `npy` or `raw`.
///
/// # Examples
///
/// ```
/// use gpusort_cli::files::FileFormat;
/// use std::path::Path;
///
/// assert_eq!(FileFormat::from_path(Path::new("keys.npy")), FileFormat::Npy);
/// assert_eq!(FileFormat::from_path(Path::new("keys.f32")), FileFormat::Raw);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum FileFormat {
    /// NumPy's `.npy`: a header naming dtype and shape, then the data.
    Npy,
    /// Nothing but the keys, little-endian; the key type is given separately.
    Raw,
}

impl FileFormat {
    /// The format a file's name suggests: `.npy` (any case) for [`FileFormat::Npy`], anything
    /// else raw. Only the name is looked at.
    ///
    /// ```
    /// use gpusort_cli::files::FileFormat;
    /// use std::path::Path;
    ///
    /// assert_eq!(FileFormat::from_path(Path::new("DATA.NPY")), FileFormat::Npy);
    /// assert_eq!(FileFormat::from_path(Path::new("npy")), FileFormat::Raw);
    /// ```
    pub fn from_path(path: &Path) -> FileFormat {
        match path.extension() {
            Some(ext) if ext.eq_ignore_ascii_case("npy") => FileFormat::Npy,
            _ => FileFormat::Raw,
        }
    }
}

/// Whether `a` and `b` name the same file, through symbolic links and `..`. A path that does not
/// exist yet is resolved through its directory; one that cannot be resolved matches nothing.
///
/// Used to refuse writing the output over the input by mistake. Hard links to one file count as
/// different files.
///
/// # Examples
///
/// ```
/// use gpusort_cli::files::same_file;
///
/// let dir = tempfile::tempdir()?;
/// let keys = dir.path().join("keys.npy");
/// std::fs::write(&keys, b"")?;
/// assert!(same_file(&keys, &dir.path().join(".").join("keys.npy")));
/// assert!(!same_file(&keys, &dir.path().join("sorted.npy")));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn same_file(a: &Path, b: &Path) -> bool {
    matches!((resolve(a), resolve(b)), (Some(a), Some(b)) if a == b)
}

/// `path` canonicalized, or, if it does not exist, its canonical directory joined with its name.
fn resolve(path: &Path) -> Option<std::path::PathBuf> {
    if let Ok(path) = path.canonicalize() {
        return Some(path);
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    Some(dir.canonicalize().ok()?.join(path.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_follows_the_extension() {
        assert_eq!(FileFormat::from_path(Path::new("a/b.npy")), FileFormat::Npy);
        assert_eq!(FileFormat::from_path(Path::new("B.NPY")), FileFormat::Npy);
        assert_eq!(FileFormat::from_path(Path::new("b.bin")), FileFormat::Raw);
        assert_eq!(FileFormat::from_path(Path::new("npy")), FileFormat::Raw);
    }

    #[test]
    fn same_file_sees_through_dot_dot_and_missing_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.npy");
        std::fs::write(&a, b"x").unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(same_file(&a, &sub.join("../a.npy")));
        assert!(!same_file(&a, &dir.path().join("b.npy")));
        let new = dir.path().join("new.npy");
        assert!(same_file(&new, &sub.join("../new.npy")));
        assert!(!same_file(&new, &a));
        assert!(!same_file(
            &dir.path().join("no/such/dir"),
            &dir.path().join("no/such/dir")
        ));
    }
}
