//! Where the file commands (`sort`, `topk`) write: files, put in place together by
//! [`commit_all`](crate::files::commit_all), or standard output; and the one rule for the
//! format of every file they read or write.

use crate::files::{AtomicOutput, FileError, FileFormat, LeKey, StreamOutput};
use crate::keys::DType;
use anyhow::{Result, bail};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// What an output argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dest {
    /// A file, replaced atomically.
    File(PathBuf),
    /// Standard output (`-`, `/dev/stdout` and their kin), streamed.
    Stdout,
}

impl Dest {
    /// Whether it is standard output.
    pub(crate) fn is_stream(&self) -> bool {
        *self == Dest::Stdout
    }

    /// Its name in messages and reports.
    pub(crate) fn name(&self) -> String {
        match self {
            Dest::File(path) => path.display().to_string(),
            Dest::Stdout => "standard output".into(),
        }
    }
}

/// The descriptor a path names when it is one of `/dev/stdin`, `/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N`, `/proc/self/fd/N` or `/proc/PID/fd/N` (this process's), or a symbolic link that
/// leads to one.
fn descriptor(path: &Path) -> Option<u32> {
    let mut p = path.to_path_buf();
    for _ in 0..16 {
        if let Some(fd) = descriptor_name(&p) {
            return Some(fd);
        }
        let link = std::fs::read_link(&p).ok()?;
        p = if link.is_absolute() {
            link
        } else {
            p.parent().unwrap_or(Path::new("/")).join(link)
        };
    }
    None
}

fn descriptor_name(path: &Path) -> Option<u32> {
    let path = path.to_str()?;
    match path {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let own = format!("/proc/{}/fd/", std::process::id());
    ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", &own]
        .iter()
        .find_map(|prefix| path.strip_prefix(prefix)?.parse().ok())
}

/// What the output argument `what` (`OUTPUT`, `--argsort`, `--indices`) names: `-`, and the
/// names of standard output (`/dev/stdout`, `/dev/fd/1`, a link to them), are standard output,
/// refused when it is a terminal; standard input and error and other descriptors are refused;
/// anything else is a file.
///
/// # Errors
/// As said, naming the argument.
pub(crate) fn destination(path: &Path, what: &str) -> Result<Dest> {
    let shown = path.display();
    let fd = if path == Path::new("-") {
        Some(1)
    } else {
        descriptor(path)
    };
    match fd {
        None => Ok(Dest::File(path.to_owned())),
        Some(1) => {
            if std::io::stdout().is_terminal() {
                bail!(
                    "{what} {shown}: standard output is a terminal, and gpusort writes binary keys \
                     there; redirect it to a file (> sorted.npy) or a pipe, or name a file"
                );
            }
            Ok(Dest::Stdout)
        }
        Some(0) => bail!(
            "{what} {shown} is standard input, which gpusort cannot write to: name a file, or - \
             for standard output"
        ),
        Some(2) => bail!(
            "{what} {shown} is standard error, where gpusort writes its messages: name a file, or \
             - for standard output"
        ),
        Some(fd) => bail!(
            "{what} {shown} is the open file descriptor {fd}; gpusort writes named files or \
             standard output (-)"
        ),
    }
}

/// The extension of a name that looks like a NumPy file but is not `.npy`: `.npz`, `.np`,
/// `.numpy`, `.npy.gz` and the like (lowercase), or None.
fn numpy_like(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let ext = Path::new(&name).extension()?.to_str()?.to_owned();
    if ext == "npy" {
        return None;
    }
    if ext.starts_with("np") || ext == "numpy" {
        return Some(ext);
    }
    name.contains(".npy.").then(|| format!("npy.{ext}"))
}

/// The format of a key file argument `what` at `path` (INPUT, OUTPUT, `--argsort`,
/// `--indices`): `--format` (`given`) if given; a stream (standard input or output) `.npy`;
/// else `.npy` for names ending in `.npy`, raw for others, where a name that looks like a NumPy
/// file but does not end in `.npy` (`.npz`, `.np`, `.npy.gz`) is refused rather than taken for
/// raw keys.
///
/// # Errors
/// A NumPy-looking name without `--format`.
pub(crate) fn format_of(
    path: &Path,
    stream: bool,
    given: Option<FileFormat>,
    what: &str,
) -> Result<FileFormat> {
    if let Some(format) = given {
        return Ok(format);
    }
    if stream {
        return Ok(FileFormat::Npy);
    }
    if let Some(ext) = numpy_like(path) {
        let (verb, raw) = if what == "INPUT" {
            ("read", "--format raw --dtype TYPE if it holds raw keys")
        } else {
            ("written", "--format raw to write raw keys under this name")
        };
        let npz = if ext == "npz" {
            " (.npz is NumPy's zip of arrays, which gpusort does not read or write)"
        } else {
            ""
        };
        bail!(
            "{what} {}: a .{ext} name looks like a NumPy file but would be {verb} as raw keys{npz}; \
             name it .npy, or pass {raw}",
            path.display()
        );
    }
    Ok(FileFormat::from_path(path))
}

/// An output being written: a file (put in place by [`finish`]) or standard output.
pub(crate) enum Out {
    File(AtomicOutput),
    Stream(StreamOutput),
}

impl Out {
    /// Opens `dest`; a file is checked and its temporary file made (see
    /// [`AtomicOutput::create`]), and a symbolic link is said on stderr.
    pub(crate) fn open(dest: &Dest) -> Result<Out> {
        Ok(match dest {
            Dest::File(path) => {
                let out = AtomicOutput::create(path)?;
                if out.target() != out.path() {
                    eprintln!(
                        "gpusort: {} is a symbolic link: replacing the file it points to, {}",
                        out.path().display(),
                        out.target().display()
                    );
                }
                Out::File(out)
            }
            Dest::Stdout => Out::Stream(StreamOutput::stdout()?),
        })
    }

    /// See [`AtomicOutput::begin_array`].
    pub(crate) fn begin_array(
        &mut self,
        format: FileFormat,
        dtype: DType,
        shape: &[u64],
    ) -> Result<(), FileError> {
        match self {
            Out::File(out) => out.begin_array(format, dtype, shape),
            Out::Stream(out) => out.begin_array(format, dtype, shape),
        }
    }

    /// See [`AtomicOutput::write_keys`].
    pub(crate) fn write_keys<K: LeKey>(
        &mut self,
        keys: &[K],
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), FileError> {
        match self {
            Out::File(out) => out.write_keys(keys, progress),
            Out::Stream(out) => out.write_keys(keys, progress),
        }
    }
}

/// Finishes a run's outputs: standard output flushed first (a failure there changes no file),
/// then every file put in place together ([`commit_all`](crate::files::commit_all)).
///
/// # Errors
/// The first failure; see [`StreamOutput::finish`] and
/// [`commit_all`](crate::files::commit_all).
pub(crate) fn finish(outs: Vec<Out>) -> Result<()> {
    let mut files = Vec::new();
    for out in outs {
        match out {
            Out::File(file) => files.push(file),
            Out::Stream(stream) => stream.finish()?,
        }
    }
    crate::files::commit_all(files)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_looking_names_are_told_apart() {
        for (name, ext) in [
            ("a.npz", Some("npz")),
            ("A.NPZ", Some("npz")),
            ("a.np", Some("np")),
            ("a.numpy", Some("numpy")),
            ("a.npy.gz", Some("npy.gz")),
            ("a.npy", None),
            ("a.bin", None),
            ("a.raw", None),
            ("a", None),
            ("npy", None),
        ] {
            assert_eq!(numpy_like(Path::new(name)).as_deref(), ext, "{name}");
        }
    }

    #[test]
    fn descriptors_are_recognised_through_links() {
        assert_eq!(descriptor_name(Path::new("/dev/stdout")), Some(1));
        assert_eq!(descriptor_name(Path::new("/dev/fd/3")), Some(3));
        assert_eq!(descriptor_name(Path::new("/proc/self/fd/2")), Some(2));
        assert_eq!(descriptor_name(Path::new("/dev/null")), None);
        assert_eq!(descriptor(Path::new("/dev/null")), None);
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("out.npy");
        std::os::unix::fs::symlink("/dev/stdout", &link).unwrap();
        assert_eq!(descriptor(&link), Some(1));
    }
}
