//! Launches of the bitonic sort: the pass schedule of [`kernels_gpu::bitonic::schedule`] turned
//! into kernel launches with their grid math.

use super::GpuSorter;
use crate::error::{CudaContext, Error, Result};
use cust::function::Function;
use cust::launch;
use cust::module::Module;
use cust::sys as cuda;
use kernels_gpu::bitonic::{Pass, schedule};
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::tuning::{
    GLOBAL_MAX_FUSED_STEPS, GLOBAL_MAX_MIRROR_STEPS, GLOBAL_THREADS, TILE_KEYS, TILE_LOG2,
    TILE_THREADS, tile_shared_bytes,
};

/// The kernels for keys of one width.
struct Kernels {
    sort_tiles: &'static str,
    merge_tiles: &'static str,
    /// Global passes of 1, 2, … steps.
    global: [&'static str; GLOBAL_MAX_FUSED_STEPS as usize],
    /// A stage's first, mirrored global pass of 1, 2, … steps.
    global_mirror: [&'static str; GLOBAL_MAX_MIRROR_STEPS as usize],
    shared_bytes: u32,
}

const KERNELS_32: Kernels = Kernels {
    sort_tiles: "bitonic_sort_tiles_u32",
    merge_tiles: "bitonic_merge_tiles_u32",
    global: [
        "bitonic_global_1_u32",
        "bitonic_global_2_u32",
        "bitonic_global_3_u32",
        "bitonic_global_4_u32",
    ],
    global_mirror: [
        "bitonic_global_mirror_1_u32",
        "bitonic_global_mirror_2_u32",
        "bitonic_global_mirror_3_u32",
    ],
    shared_bytes: tile_shared_bytes(4),
};

const KERNELS_64: Kernels = Kernels {
    sort_tiles: "bitonic_sort_tiles_u64",
    merge_tiles: "bitonic_merge_tiles_u64",
    global: [
        "bitonic_global_1_u64",
        "bitonic_global_2_u64",
        "bitonic_global_3_u64",
        "bitonic_global_4_u64",
    ],
    global_mirror: [
        "bitonic_global_mirror_1_u64",
        "bitonic_global_mirror_2_u64",
        "bitonic_global_mirror_3_u64",
    ],
    shared_bytes: tile_shared_bytes(8),
};

fn kernels(key_bytes: usize) -> &'static Kernels {
    if key_bytes == 8 {
        &KERNELS_64
    } else {
        &KERNELS_32
    }
}

/// Lets the tile kernels use more than the default 48 KB of dynamic shared memory, and asks for
/// the largest shared-memory carve-out (left to itself the driver picked 64 KB for a 34 KB tile,
/// room for one block per multiprocessor where registers allow more: docs/perf.md).
pub(super) fn configure(module: &Module) -> Result<()> {
    for k in [&KERNELS_32, &KERNELS_64] {
        for name in [k.sort_tiles, k.merge_tiles] {
            set_shared_attributes(module, name, k.shared_bytes)?;
        }
    }
    Ok(())
}

/// Lets kernel `name` use `bytes` of dynamic shared memory (above the default 48 KB if need
/// be) and asks for the largest shared-memory carve-out.
pub(super) fn set_shared_attributes(module: &Module, name: &str, bytes: u32) -> Result<()> {
    use cuda::CUfunction_attribute as A;
    let f = function(module, name)?;
    let settings = [
        (
            A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as i32,
        ),
        (A::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100),
    ];
    for (attribute, value) in settings {
        // SAFETY: a valid function handle and a documented attribute.
        let status = unsafe { cuda::cuFuncSetAttribute(f.to_raw(), attribute, value) };
        if status != cuda::CUresult::CUDA_SUCCESS {
            return Err(Error::DriverCall {
                context: format!("setting {attribute:?} of {name} to {value}"),
                call: "cuFuncSetAttribute",
                status: format!("{status:?}"),
            });
        }
    }
    Ok(())
}

pub(crate) fn function<'m>(module: &'m Module, name: &str) -> Result<Function<'m>> {
    module
        .get_function(name)
        .context(&format!("finding kernel {name}"))
}

/// Queues the whole sort of `n` keys of `key_bytes` (4 or 8) bytes at device address `keys` on
/// the sorter's stream. `map` encodes keys in the first pass and decodes them in the last.
pub(super) fn enqueue(
    sorter: &GpuSorter,
    keys: u64,
    n: u64,
    key_bytes: usize,
    map: u32,
) -> Result<()> {
    let k = kernels(key_bytes);
    let shared = k.shared_bytes;
    let module = &sorter.module;
    let stream = &sorter.stream;
    let tiles = n.div_ceil(u64::from(TILE_KEYS)) as u32;
    let mut passes = schedule(
        n,
        TILE_LOG2,
        GLOBAL_MAX_MIRROR_STEPS,
        GLOBAL_MAX_FUSED_STEPS,
    )
    .peekable();
    while let Some(pass) = passes.next() {
        let decode = if passes.peek().is_none() {
            map
        } else {
            IDENTITY
        };
        // SAFETY (all launches): `keys` holds n keys on this context's device, and the launch
        // shapes are those the kernels document.
        let launched = match pass {
            Pass::SortTiles => {
                let f = function(module, k.sort_tiles)?;
                unsafe { launch!(f<<<tiles, TILE_THREADS, shared, stream>>>(keys, n, map, decode)) }
            }
            Pass::MergeTiles { .. } => {
                let f = function(module, k.merge_tiles)?;
                unsafe { launch!(f<<<tiles, TILE_THREADS, shared, stream>>>(keys, n, decode)) }
            }
            Pass::Global(p) => {
                let names = if p.mirror {
                    &k.global_mirror[..]
                } else {
                    &k.global[..]
                };
                let f = function(module, names[p.steps as usize - 1])?;
                let blocks = p.units(n).div_ceil(u64::from(GLOBAL_THREADS)) as u32;
                let top = p.top;
                unsafe { launch!(f<<<blocks, GLOBAL_THREADS, 0, stream>>>(keys, n, top)) }
            }
        };
        launched.context(&format!("launching {pass:?} for {n} keys"))?;
    }
    Ok(())
}
