//! Key files: 1-D `.npy` arrays and raw little-endian keys, read in chunks and written
//! atomically (temporary file, then rename).
//!
//! ```no_run
//! use gpusort::files::{AtomicOutput, FileFormat, KeyFile};
//! use gpusort::Order;
//! use std::path::Path;
//!
//! let mut input = KeyFile::open(Path::new("keys.npy"), FileFormat::Npy, None)?;
//! let mut keys: Vec<f32> = input.read_keys(&mut |_| {})?;
//! keys.sort_unstable_by(f32::total_cmp);
//! let mut output = AtomicOutput::create(Path::new("sorted.npy"))?;
//! output.begin(FileFormat::Npy, input.dtype(), input.len())?;
//! output.write_keys(&keys, &mut |_| {})?;
//! output.commit()?;
//! # Ok::<(), gpusort::files::FileError>(())
//! ```

mod error;
mod input;
mod le;
mod npy;
mod output;

pub use error::FileError;
pub use input::{KeyFile, key_bytes};
pub use le::LeKey;
pub use output::AtomicOutput;

use std::path::Path;

/// Bytes read or written at a time: big enough that the per-call cost vanishes, small enough
/// that the buffer is nothing beside the keys of a multi-GB file. A multiple of every key size.
pub const CHUNK_BYTES: usize = 64 << 20;

/// How a file stores its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum FileFormat {
    /// NumPy's `.npy`: a header naming dtype and shape, then the data.
    Npy,
    /// Nothing but the keys, little-endian; the key type is given separately.
    Raw,
}

impl FileFormat {
    /// The format a file's name suggests: `.npy` (any case) for [`FileFormat::Npy`], anything
    /// else raw.
    pub fn from_path(path: &Path) -> FileFormat {
        match path.extension() {
            Some(ext) if ext.eq_ignore_ascii_case("npy") => FileFormat::Npy,
            _ => FileFormat::Raw,
        }
    }
}

/// Whether `a` and `b` name the same file, through symbolic links and `..`. A path that does not
/// exist yet is resolved through its directory; one that cannot be resolved matches nothing.
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
