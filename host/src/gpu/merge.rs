//! Launches of the stable merge sort: the schedule of [`kernels_gpu::merge::schedule`] turned
//! into kernel launches, the scratch buffer's layout, and the kernels' shared-memory settings.

use super::GpuSorter;
use super::bitonic::{function, set_shared_attributes};
use crate::error::{CudaContext, Result};
use cust::launch;
use cust::module::Module;
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::merge::{Pass, merge_passes, schedule};
use kernels_gpu::tuning::{
    MERGE_SORT_THREADS, MERGE_SORT_TILE, MERGE_THREADS, MERGE_TILE, PARTITION_THREADS,
    merge_shared_bytes, merge_sort_shared_bytes,
};

/// Kernel names per (key bytes, value bytes): tile sort and merge pass.
const KERNELS: [((usize, usize), &str, &str); 6] = [
    ((4, 0), "merge_sort_tiles_u32", "merge_pass_u32"),
    ((4, 4), "merge_sort_tiles_u32_u32", "merge_pass_u32_u32"),
    ((4, 8), "merge_sort_tiles_u32_u64", "merge_pass_u32_u64"),
    ((8, 0), "merge_sort_tiles_u64", "merge_pass_u64"),
    ((8, 4), "merge_sort_tiles_u64_u32", "merge_pass_u64_u32"),
    ((8, 8), "merge_sort_tiles_u64_u64", "merge_pass_u64_u64"),
];

fn kernels(key_bytes: usize, value_bytes: usize) -> (&'static str, &'static str) {
    let (_, sort, merge) = KERNELS
        .iter()
        .find(|(widths, ..)| *widths == (key_bytes, value_bytes))
        .expect("keys of 4 or 8 bytes, values of 0, 4 or 8 bytes");
    (sort, merge)
}

/// Dynamic shared memory of a merge-pass block.
fn shared_bytes(key_bytes: usize, value_bytes: usize) -> u32 {
    merge_shared_bytes(MERGE_TILE, key_bytes as u32, value_bytes as u32)
}

/// Dynamic shared memory of a tile-sort block (the merge pass's, plus the tile's values).
fn sort_shared_bytes(key_bytes: usize, value_bytes: usize) -> u32 {
    merge_sort_shared_bytes(MERGE_SORT_TILE, key_bytes as u32, value_bytes as u32)
}

/// Lets each tile-sort and merge kernel use its shared memory (up to 86 KB for the tile sort
/// of 8-byte keys with 8-byte values, above the default 48 KB).
pub(super) fn configure(module: &Module) -> Result<()> {
    for ((kb, vb), sort, merge) in KERNELS {
        set_shared_attributes(module, sort, sort_shared_bytes(kb, vb))?;
        set_shared_attributes(module, merge, shared_bytes(kb, vb))?;
    }
    Ok(())
}

/// Bytes of device scratch the stable sort of `n` keys of `key_bytes` with values of
/// `value_bytes` (0 for keys only) needs: a second buffer of `n` keys and `n` values for the
/// ping-pong, and one `u64` merge-path split per merge tile of `MERGE_TILE` keys. Zero when
/// the keys fit in one tile of the tile sort (`MERGE_SORT_TILE` keys; it works in place).
pub fn scratch_bytes(n: u64, key_bytes: usize, value_bytes: usize) -> u64 {
    let layout = Layout::new(n, key_bytes, value_bytes);
    layout.total
}

/// Where the parts of the scratch buffer start (byte offsets, each 8-aligned).
struct Layout {
    values: u64,
    splits: u64,
    total: u64,
}

impl Layout {
    fn new(n: u64, key_bytes: usize, value_bytes: usize) -> Layout {
        if merge_passes(n, u64::from(MERGE_SORT_TILE)) == 0 {
            return Layout {
                values: 0,
                splits: 0,
                total: 0,
            };
        }
        let values = (n * key_bytes as u64).next_multiple_of(8);
        let splits = values + (n * value_bytes as u64).next_multiple_of(8);
        let total = splits + n.div_ceil(u64::from(MERGE_TILE)) * 8;
        Layout {
            values,
            splits,
            total,
        }
    }
}

/// Device addresses of one sort.
pub(super) struct Launch {
    /// `n` keys, sorted in place.
    pub keys: u64,
    /// `n` values (0 for keys only), permuted with the keys.
    pub values: u64,
    /// At least [`scratch_bytes`] bytes, 8-aligned.
    pub scratch: u64,
    pub n: u64,
    pub key_bytes: usize,
    pub value_bytes: usize,
    /// Key map: keys are encoded in the tile sort and decoded in the last pass.
    pub map: u32,
}

/// Queues the whole stable sort on the sorter's stream. The tile sort writes to the scratch
/// buffer or in place, chosen by the parity of the number of merge passes, so that the last
/// pass lands in the caller's buffer with no copy ([`kernels_gpu::merge::schedule`]).
pub(super) fn enqueue(sorter: &GpuSorter, l: &Launch) -> Result<()> {
    if l.n == 0 {
        return Ok(());
    }
    let (sort_name, merge_name) = kernels(l.key_bytes, l.value_bytes);
    let partition_name = if l.key_bytes == 8 {
        "merge_partition_u64"
    } else {
        "merge_partition_u32"
    };
    let shared = shared_bytes(l.key_bytes, l.value_bytes);
    let layout = Layout::new(l.n, l.key_bytes, l.value_bytes);
    let (scratch_keys, scratch_values, splits) = (
        l.scratch,
        if l.value_bytes == 0 {
            0
        } else {
            l.scratch + layout.values
        },
        l.scratch + layout.splits,
    );
    let (module, stream, n) = (&sorter.module, &sorter.stream, l.n);
    let tiles = n.div_ceil(u64::from(MERGE_TILE));
    let grid = tiles as u32;
    let sort_grid = n.div_ceil(u64::from(MERGE_SORT_TILE)) as u32;
    let partition_blocks = tiles.div_ceil(u64::from(PARTITION_THREADS)) as u32;
    for step in schedule(n, u64::from(MERGE_SORT_TILE)) {
        let pick = |scratch: bool| {
            if scratch {
                (scratch_keys, scratch_values)
            } else {
                (l.keys, l.values)
            }
        };
        let ((src_k, src_v), (dst_k, dst_v)) = (pick(step.from_scratch), pick(step.to_scratch));
        let decode = if step.last { l.map } else { IDENTITY };
        // SAFETY (all launches): the buffers hold n keys and values (and the scratch its
        // layout) on this context's device; the launch shapes are those the kernels document.
        let launched = match step.pass {
            Pass::SortTiles => {
                let f = function(module, sort_name)?;
                let map = l.map;
                let shared = sort_shared_bytes(l.key_bytes, l.value_bytes);
                unsafe {
                    launch!(f<<<sort_grid, MERGE_SORT_THREADS, shared, stream>>>(
                        src_k, dst_k, src_v, dst_v, n, map, decode
                    ))
                }
            }
            Pass::Merge { width } => {
                let f = function(module, partition_name)?;
                unsafe {
                    launch!(f<<<partition_blocks, PARTITION_THREADS, 0, stream>>>(
                        src_k, splits, n, width
                    ))
                }
                .context(&format!("launching the merge partition for {n} keys"))?;
                let f = function(module, merge_name)?;
                unsafe {
                    launch!(f<<<grid, MERGE_THREADS, shared, stream>>>(
                        src_k, dst_k, src_v, dst_v, splits, n, width, decode
                    ))
                }
            }
        };
        launched.context(&format!("launching {:?} for {n} keys", step.pass))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_is_a_second_buffer_plus_splits_or_nothing() {
        let (s, t) = (u64::from(MERGE_SORT_TILE), u64::from(MERGE_TILE));
        let splits = |n: u64| n.div_ceil(t) * 8;
        assert_eq!(scratch_bytes(0, 4, 0), 0);
        assert_eq!(scratch_bytes(s, 8, 8), 0);
        assert_eq!(
            scratch_bytes(s + 1, 4, 0),
            (4 * (s + 1)).next_multiple_of(8) + splits(s + 1)
        );
        assert_eq!(
            scratch_bytes(3 * s, 8, 4),
            8 * 3 * s + 4 * 3 * s + splits(3 * s)
        );
    }

    /// The body of kernel `name` in the embedded PTX.
    fn entry_body<'p>(ptx: &'p str, name: &str) -> &'p str {
        let start = ptx
            .find(&format!(".entry {name}("))
            .unwrap_or_else(|| panic!("no kernel {name} in the PTX"));
        let body = &ptx[start..];
        &body[..body
            .find("\n}\n")
            .expect("an entry ends with a closing brace")]
    }

    /// The serial merges and register sorts index their arrays with constants only, in fully
    /// unrolled loops: if LLVM stops unrolling one (a larger `MERGE_VT`, an iterator where an
    /// index loop was), the arrays move to local memory, and the kernels slow down severalfold.
    #[test]
    fn merge_kernels_keep_their_arrays_in_registers() {
        let others = [
            "merge_partition_u32",
            "merge_partition_u64",
            "merge_two_u32",
            "merge_two_u64",
            "merge_two_partition_u32",
            "merge_two_partition_u64",
        ];
        let names = KERNELS
            .iter()
            .flat_map(|&(_, sort, merge)| [sort, merge])
            .chain(others);
        for name in names {
            let body = entry_body(super::super::KERNELS_PTX, name);
            assert!(
                !body.contains(".local"),
                "{name} keeps arrays in local memory (see docs/perf.md, Merge sort v2 plan)"
            );
        }
    }

    #[test]
    fn every_width_pair_has_kernels() {
        for kb in [4, 8] {
            for vb in [0, 4, 8] {
                let (sort, merge) = kernels(kb, vb);
                assert!(sort.starts_with("merge_sort_tiles_") && merge.starts_with("merge_pass_"));
            }
        }
    }
}
