//! What can go wrong reading or writing a key file; every message names the file.

use crate::keys::DType;
use std::io;
use std::path::PathBuf;

/// A problem with a key file, its name in the message.
///
/// Messages are written for the `gpusort sort` command line: some suggest its flags
/// (`--dtype`, `--format raw`) or numpy calls that fix the file.
///
/// # Examples
///
/// ```
/// use gpusort_cli::files::{FileError, FileFormat, KeyFile};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("keys.bin");
/// std::fs::write(&path, [0u8; 6])?;
/// let err = KeyFile::open(&path, FileFormat::Raw, None).unwrap_err();
/// assert!(matches!(err, FileError::RawNeedsDtype { .. }));
/// assert!(err.to_string().contains("keys.bin"));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The input file is not there.
    #[error("input file {} does not exist", .path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// Opening or reading failed.
    #[error("cannot read {}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The file does not start with the `.npy` magic string.
    #[error(
        "{} is not a .npy file (it does not start with \"\\x93NUMPY\"); to read it as raw \
         little-endian keys pass --format raw --dtype TYPE",
        .path.display()
    )]
    NotNpy {
        /// The file.
        path: PathBuf,
    },
    /// The `.npy` header cannot be parsed.
    #[error("{} has a bad .npy header: {reason}", .path.display())]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// A dtype the sorts do not take.
    #[error(
        "{} has dtype '{descr}' ({why}), which gpusort cannot sort; supported: little-endian \
         u32, i32, f32, u64, i64, f64 ('<u4' '<i4' '<f4' '<u8' '<i8' '<f8')",
        .path.display()
    )]
    UnsupportedDtype {
        /// The file.
        path: PathBuf,
        /// The dtype as the header writes it.
        descr: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// Not a 1-D array, opened by [`KeyFile::open`](super::KeyFile::open), which reads only
    /// those.
    #[error(
        "{} holds a {}-D array of shape {}; only 1-D arrays are read here (flatten it first, \
         e.g. numpy's a.ravel())",
        .path.display(), .shape.len(), py_tuple(.shape)
    )]
    NotOneDimensional {
        /// The file.
        path: PathBuf,
        /// The array's shape.
        shape: Vec<u64>,
    },
    /// A 0-D array (a single value), which has no axis to sort along.
    #[error(
        "{} holds a 0-D array of shape () (a single value), which has no axis to sort along \
         (save it as a 1-D array, e.g. numpy's np.atleast_1d(a))",
        .path.display()
    )]
    ZeroDimensional {
        /// The file.
        path: PathBuf,
    },
    /// Stored in Fortran order.
    #[error(
        "{} is stored in Fortran order (fortran_order: True); only C order is supported (save \
         it with numpy's np.ascontiguousarray)",
        .path.display()
    )]
    FortranOrder {
        /// The file.
        path: PathBuf,
    },
    /// The file ends inside the `.npy` header.
    #[error("{} is truncated: it ends inside the .npy header", .path.display())]
    TruncatedHeader {
        /// The file.
        path: PathBuf,
    },
    /// Fewer data bytes than the header (or header size) promises.
    #[error(
        "{} is truncated: it should hold {expected} bytes of data ({len} keys) but holds {found}",
        .path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Keys the header promises.
        len: u64,
        /// Data bytes those keys need.
        expected: u64,
        /// Data bytes present.
        found: u64,
    },
    /// Bytes after the array's data: not a plain `.npy` array, and sorting without them would
    /// lose them.
    #[error(
        "{} has {extra} bytes after the array's data ({len} keys); refusing to drop them",
        .path.display()
    )]
    TrailingData {
        /// The file.
        path: PathBuf,
        /// Keys the header promises.
        len: u64,
        /// Bytes past them.
        extra: u64,
    },
    /// A raw file whose size is not a whole number of keys.
    #[error(
        "raw file {} has {size} bytes, not a multiple of the {dtype} key size ({key_bytes} \
         bytes)",
        .path.display()
    )]
    RawSize {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The key type asked for.
        dtype: DType,
        /// Bytes per key.
        key_bytes: usize,
    },
    /// A raw file, whose key type must be given.
    #[error(
        "{} is read as a raw file ({why}), which carries no key type: pass --dtype \
         u32|i32|f32|u64|i64|f64",
        .path.display()
    )]
    RawNeedsDtype {
        /// The file.
        path: PathBuf,
        /// Why it is read as raw: its name, or `--format raw`.
        why: &'static str,
    },
    /// The input is not a regular file or a stream that can be read as one.
    #[error("{} is a {kind}, not a file of keys; gpusort reads regular files, pipes and FIFOs", .path.display())]
    InputNotRegular {
        /// The file.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// A `.npy` shape whose data would need more bytes than a file can have.
    #[error(
        "{} has a bad .npy header: shape {} of {dtype} keys needs more than 2^64 bytes",
        .path.display(), py_tuple(.shape)
    )]
    ShapeOverflow {
        /// The file.
        path: PathBuf,
        /// The shape the header gives.
        shape: Vec<u64>,
        /// The keys' type.
        dtype: DType,
    },
    /// The key type asked for is not the file's.
    #[error("{} holds {found} keys, not {asked}", .path.display())]
    DtypeMismatch {
        /// The file.
        path: PathBuf,
        /// The file's key type.
        found: DType,
        /// The key type asked for.
        asked: DType,
    },
    /// The keys do not fit in host memory.
    #[error("not enough memory to read {} ({bytes} bytes of keys)", .path.display())]
    OutOfMemory {
        /// The file.
        path: PathBuf,
        /// Bytes needed.
        bytes: u64,
    },
    /// The output's directory is missing.
    #[error("cannot write {}: directory {} does not exist", .path.display(), .dir.display())]
    NoOutputDir {
        /// The output file.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// The output's "directory" is something else.
    #[error("cannot write {}: {} is not a directory", .path.display(), .dir.display())]
    OutputDirNotDir {
        /// The output file.
        path: PathBuf,
        /// What stands where its directory should be.
        dir: PathBuf,
    },
    /// The output path ends in `/` but is not a directory.
    #[error("cannot write {}: a name ending in '/' names a directory", .path.display())]
    OutputTrailingSlash {
        /// The output path.
        path: PathBuf,
    },
    /// The output path is a device, FIFO, socket or other file that is not a regular file.
    #[error(
        "cannot write {}: it is a {kind}, not a regular file; gpusort writes only regular files",
        .path.display()
    )]
    OutputNotRegular {
        /// The output path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The output path is a symbolic link to nothing.
    #[error(
        "cannot write {}: it is a symbolic link to a file that does not exist (remove the link \
         or create its target)",
        .path.display()
    )]
    OutputDanglingLink {
        /// The output path.
        path: PathBuf,
    },
    /// The output exists and its owner or mode cannot be given to the new file.
    #[error(
        "cannot replace {}: the new file cannot keep the old one's owner (uid {uid}, gid {gid}) \
         and mode; remove it first or write another file",
        .path.display()
    )]
    OutputKeepOwner {
        /// The output path.
        path: PathBuf,
        /// The owner.
        uid: u32,
        /// The group.
        gid: u32,
        /// The system's error.
        source: io::Error,
    },
    /// The output path names a directory.
    #[error("cannot write {}: it is a directory", .path.display())]
    OutputIsDir {
        /// The output path.
        path: PathBuf,
    },
    /// Creating or writing the temporary file beside the output failed.
    #[error("cannot write {} (through a temporary file in {})", .path.display(), .dir.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// Its directory, where the temporary file is.
        dir: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// Renaming the finished temporary file onto the output failed.
    #[error("cannot rename the finished temporary file to {}", .path.display())]
    Persist {
        /// The output file.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// A commit of several outputs renamed some of them into place, then failed to rename
    /// the next: its journal is left for the next run in that directory to finish.
    #[error(
        "cannot rename the finished file onto {}, after {} had been replaced; the journal {} \
         lets the next gpusort run that writes in that directory finish the commit",
        .path.display(), list(.done), .journal.display()
    )]
    PartlyCommitted {
        /// The output whose rename failed.
        path: PathBuf,
        /// The outputs already replaced.
        done: Vec<PathBuf>,
        /// The journal left behind.
        journal: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// Writing keys to a stream (standard output) failed.
    #[error("cannot write the keys to {}", .name.display())]
    StreamWrite {
        /// The stream's name.
        name: PathBuf,
        /// The system's error (for example a broken pipe: its reader is gone).
        source: io::Error,
    },
    /// Committed with a different number of keys than announced: a bug in the caller.
    #[error("{} was announced with {expected} keys but {written} were written", .path.display())]
    WrongCount {
        /// The output file.
        path: PathBuf,
        /// Keys the header announced.
        expected: u64,
        /// Keys written.
        written: u64,
    },
}

/// Paths as a list in a sentence: `a`, `a and b`, `a, b and c`.
fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A shape as Python and numpy write it: `()`, `(5,)`, `(2, 3)`.
fn py_tuple(shape: &[u64]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_read_like_numpy() {
        assert_eq!(py_tuple(&[]), "()");
        assert_eq!(py_tuple(&[5]), "(5,)");
        assert_eq!(py_tuple(&[2, 3]), "(2, 3)");
    }
}
