//! How much memory this process can really have, read before the library allocates in
//! proportion to the data (the scratch buffer of [`cpu::radix_sort`](crate::cpu::radix_sort),
//! the threads of [`cpu::start_threads`](crate::cpu::start_threads)); and the mark a program's
//! allocator needs to let the failures that the library handles through ([`fallible`]).
//!
//! The room is the least of what the system says is available (`MemAvailable`), what the
//! process's cgroup still allows (`memory.max` less `memory.current`, on every level up to the
//! root; cgroup v1's `memory.limit_in_bytes` less `memory.usage_in_bytes`), and what its own
//! limits leave (`RLIMIT_AS` less the address space in use, `RLIMIT_DATA` less the data
//! segment in use), all read from `/proc` and `/sys/fs/cgroup` (Linux). A limit that cannot be
//! read is not applied.
//!
//! Setting the environment variable `GPUSORT_NO_MEMORY_CHECK=1` makes [`check`] pass every
//! size (for a machine whose limits are known to be misreported).
//!
//! ```
//! use gpusort::memory;
//!
//! let room = memory::room();
//! println!("{} bytes available ({})", room.bytes, room.bound);
//! assert!(memory::check(1).is_ok());
//! assert!(memory::check(u64::MAX).is_err());
//! ```

use std::cell::Cell;
use std::fmt;

/// What may be allocated now, and the limit that says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// Bytes.
    pub bytes: u64,
    /// The limit that is the least.
    pub bound: Bound,
}

/// A limit on the memory of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// No limit could be read.
    Unknown,
    /// `MemAvailable` of `/proc/meminfo`.
    MemAvailable,
    /// The cgroup's memory limit less its usage.
    Cgroup,
    /// `RLIMIT_AS` (`ulimit -v`) less the address space in use.
    AddressSpace,
    /// `RLIMIT_DATA` (`ulimit -d`) less the data segment in use.
    Data,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::Unknown => "no limit known",
            Bound::MemAvailable => "MemAvailable of /proc/meminfo",
            Bound::Cgroup => "the cgroup's memory limit less its usage",
            Bound::AddressSpace => "RLIMIT_AS (ulimit -v) less the address space in use",
            Bound::Data => "RLIMIT_DATA (ulimit -d) less the data in use",
        })
    }
}

/// The memory this process may still allocate: the least of the limits in the module's
/// description.
///
/// ```
/// let room = gpusort::memory::room();
/// assert!(room.bytes > 0);
/// ```
pub fn room() -> Room {
    let (limits, status) = (read("/proc/self/limits"), read("/proc/self/status"));
    least([
        (mem_available(), Bound::MemAvailable),
        (cgroup_room(), Bound::Cgroup),
        (address_space_left(&limits, &status), Bound::AddressSpace),
        (
            limit_left(&limits, "Max data size", &status, "VmData:"),
            Bound::Data,
        ),
    ])
}

/// Whether `need` bytes fit in [`room`]; where they do not, the room there is. Every size fits
/// with `GPUSORT_NO_MEMORY_CHECK=1`.
///
/// # Errors
/// The [`Room`] that is too small.
///
/// ```
/// let room = gpusort::memory::check(u64::MAX).unwrap_err();
/// assert!(room.bytes < u64::MAX);
/// ```
pub fn check(need: u64) -> Result<(), Room> {
    if disabled() {
        return Ok(());
    }
    let room = room();
    if need > room.bytes {
        return Err(room);
    }
    Ok(())
}

/// The address space this process may still map under `RLIMIT_AS` (`ulimit -v`), or None
/// without that limit: what threads' stacks take, whatever memory they touch.
pub(crate) fn address_space_room() -> Option<u64> {
    address_space_left(&read("/proc/self/limits"), &read("/proc/self/status"))
}

/// The text of a `/proc` file, or nothing where it cannot be read.
fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The least of the known limits among `candidates`, or an unknown room of `u64::MAX` bytes.
fn least(candidates: [(Option<u64>, Bound); 4]) -> Room {
    candidates
        .into_iter()
        .filter_map(|(bytes, bound)| {
            Some(Room {
                bytes: bytes?,
                bound,
            })
        })
        .min_by_key(|r| r.bytes)
        .unwrap_or(Room {
            bytes: u64::MAX,
            bound: Bound::Unknown,
        })
}

/// Whether the checks are turned off (`GPUSORT_NO_MEMORY_CHECK=1`).
fn disabled() -> bool {
    std::env::var_os("GPUSORT_NO_MEMORY_CHECK").is_some_and(|v| v == "1")
}

fn mem_available() -> Option<u64> {
    status_kib(&read("/proc/meminfo"), "MemAvailable:")
}

/// A `Key:   123 kB` line of a `/proc` file, in bytes.
fn status_kib(text: &str, key: &str) -> Option<u64> {
    Some(number_after(text, key)? * 1024)
}

/// The number after `key` on the line of `text` that starts with it; None where there is no
/// such line or the word there is no number (`unlimited`).
fn number_after(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// `RLIMIT_AS` less `VmSize`, from the texts of `/proc/self/limits` and `/proc/self/status`.
fn address_space_left(limits: &str, status: &str) -> Option<u64> {
    limit_left(limits, "Max address space", status, "VmSize:")
}

/// The soft limit `limit` of `/proc/self/limits` (a line such as `Max address space
/// unlimited unlimited bytes`) less the usage `used` of `/proc/self/status`, or None where the
/// limit is unlimited or unknown.
fn limit_left(limits: &str, limit: &str, status: &str, used: &str) -> Option<u64> {
    let soft = number_after(limits, limit)?;
    Some(soft.saturating_sub(status_kib(status, used).unwrap_or(0)))
}

/// What the cgroups of this process still allow: the least, over the process's cgroup and
/// those above it, of the limit less the usage.
fn cgroup_room() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut least: Option<u64> = None;
    let mut consider = |limit: Option<u64>, usage: Option<u64>| {
        if let Some(limit) = limit {
            let left = limit.saturating_sub(usage.unwrap_or(0));
            least = Some(least.map_or(left, |l| l.min(left)));
        }
    };
    let read =
        |path: &str| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            // cgroup v2: every level from the process's group up to the root.
            let mut dir =
                std::path::PathBuf::from("/sys/fs/cgroup").join(path.trim_start_matches('/'));
            loop {
                let at = |file: &str| read(&dir.join(file).to_string_lossy());
                consider(at("memory.max"), at("memory.current"));
                if dir == std::path::Path::new("/sys/fs/cgroup") || !dir.pop() {
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = format!("/sys/fs/cgroup/memory{path}");
            // An unlimited v1 group reports a huge multiple of the page size: harmless here.
            consider(
                read(&format!("{dir}/memory.limit_in_bytes")),
                read(&format!("{dir}/memory.usage_in_bytes")),
            );
        }
    }
    least
}

thread_local! {
    /// Nesting depth of [`fallible`] on this thread.
    static FALLIBLE: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f`, marking the allocations in it as ones whose failure the caller handles
/// (`try_reserve` and the like): a program's global allocator that ends the process on a
/// failed allocation lets a failure through where [`in_fallible`] says so. The library runs
/// its own fallible allocations (the radix sort's scratch buffer) in it.
///
/// ```
/// let mut v: Vec<u8> = Vec::new();
/// let result = gpusort::memory::fallible(|| v.try_reserve_exact(usize::MAX / 2));
/// assert!(result.is_err());
/// ```
pub fn fallible<T>(f: impl FnOnce() -> T) -> T {
    struct Depth;
    impl Drop for Depth {
        fn drop(&mut self) {
            FALLIBLE.with(|d| d.set(d.get() - 1));
        }
    }
    FALLIBLE.with(|d| d.set(d.get() + 1));
    let _depth = Depth;
    f()
}

/// Whether this thread is inside [`fallible`]: for a global allocator, whether a failed
/// allocation goes back to its caller.
///
/// ```
/// use gpusort::memory::{fallible, in_fallible};
///
/// assert!(!in_fallible());
/// assert!(fallible(in_fallible));
/// ```
pub fn in_fallible() -> bool {
    FALLIBLE.with(Cell::get) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kib_lines() {
        let text = "VmPeak:\t  1000 kB\nVmSize:\t   512 kB\n";
        assert_eq!(status_kib(text, "VmSize:"), Some(512 * 1024));
        assert_eq!(status_kib(text, "VmData:"), None);
    }

    #[test]
    fn reads_soft_limits_less_their_usage() {
        let limits = "\
Limit                     Soft Limit           Hard Limit           Units
Max data size             unlimited            unlimited            bytes
Max stack size            8388608              unlimited            bytes
Max address space         4294967296           unlimited            bytes
";
        let status = "VmSize:\t 1048576 kB\nVmData:\t  2048 kB\n";
        assert_eq!(address_space_left(limits, status), Some(3 << 30));
        assert_eq!(limit_left(limits, "Max data size", status, "VmData:"), None);
        assert_eq!(address_space_left(limits, ""), Some(4 << 30));
        assert_eq!(address_space_left("", status), None);
        let tight = limits.replace("4294967296", "1024");
        assert_eq!(address_space_left(&tight, status), Some(0));
    }

    #[test]
    fn room_is_the_least_limit() {
        let least_of_four = least([
            (Some(8 << 30), Bound::MemAvailable),
            (None, Bound::Cgroup),
            (Some(3 << 30), Bound::AddressSpace),
            (Some(5 << 30), Bound::Data),
        ]);
        let found = (least_of_four.bytes, least_of_four.bound);
        assert_eq!(found, (3 << 30, Bound::AddressSpace));
        let unknown = least([
            (None, Bound::MemAvailable),
            (None, Bound::Cgroup),
            (None, Bound::AddressSpace),
            (None, Bound::Data),
        ]);
        assert_eq!((unknown.bytes, unknown.bound), (u64::MAX, Bound::Unknown));
        // This machine's: the limits are read apart in time (other tests allocate meanwhile),
        // so only that one of them was found.
        let live = room();
        assert!(live.bytes > 0);
        if mem_available().is_some() {
            assert_ne!(live.bound, Bound::Unknown);
        }
        assert!(check(u64::MAX).is_err() || disabled());
    }

    #[test]
    fn fallible_nests() {
        assert!(!in_fallible());
        fallible(|| {
            fallible(|| assert!(in_fallible()));
            assert!(in_fallible());
        });
        assert!(!in_fallible());
    }
}
