//! The kernels' PTX ([`KERNELS_PTX`]) as CUDA modules, one per [`Family`] of kernels (as the
//! kernel list, `kernels_gpu::kernels`, declares each kernel's), each loaded
//! (JIT-compiled for the device by the driver) the first time a sort needs one of its kernels.
//! The driver compiles a module whole, and the window kernels alone are most of the PTX: a
//! sorter's first sort of a few thousand keys, or its first merge sort, waits only for the
//! kernels it runs (docs/decisions.md, "A module per family"). The driver caches what it
//! compiled (its compute cache), so later processes on the machine wait for none of it.

use super::{DeviceLimits, KERNELS_PTX};
use crate::error::{CudaContext, Error, Result};
use cust::function::Function;
use cust::module::Module;
use cust::sys as cuda;
use std::sync::{Mutex, OnceLock, PoisonError};

pub(crate) use kernels_gpu::kernels::Family;

/// The PTX of `family`'s module, cut from `ptx` (rustc's output: a preamble with the version,
/// the target and the declarations of functions and dynamic shared memory, then each kernel's
/// `.entry` and, last, the functions they call): the preamble, the entries of the family's
/// kernels, and the functions.
pub(crate) fn family_ptx(ptx: &str, family: Family) -> String {
    let mut out = String::with_capacity(ptx.len() / 2);
    // The preamble is kept; then each top-level block, an entry or a function from its first
    // line to a `}` in column 0, if it belongs (the lines between blocks are comments).
    let mut keep = true;
    for line in ptx.lines() {
        if let Some(name) = line.strip_prefix(".visible .entry ") {
            keep = Family::of(name.trim_end_matches('(')) == Some(family);
        } else if line.starts_with(".func ") {
            keep = true;
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
        if line == "}" {
            keep = false;
        }
    }
    out
}

/// What configuring a family's module on a device finds: for the families of memory-bound passes
/// how many blocks ahead of its own each of their blocks prefetches (4-byte, 8-byte keys), and
/// for the one-launch sorts how many blocks of the small sort the device holds at once (its
/// cooperative launches may have no more).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Settings {
    pub(crate) ahead: [u64; 2],
    pub(crate) resident: [u64; 2],
}

/// Configures a family's freshly loaded module for a device (shared-memory limits, prefetch
/// distances): the sorter's business, handed to [`Modules::new`], so that this cache of modules
/// depends on no sort.
pub(crate) type Configure = fn(Family, &Module, &DeviceLimits) -> Result<Settings>;

/// What loading a family's module gives: the module and its [`Settings`].
pub(crate) struct Loaded {
    pub(crate) module: Module,
    pub(crate) settings: Settings,
}

/// A sorter's modules, one slot per [`Family`], each loaded on first use.
pub(crate) struct Modules {
    slots: [OnceLock<Loaded>; Family::ALL.len()],
    /// Held while a module loads, so that two threads do not compile the same one.
    loading: Mutex<()>,
    /// The device's limits, which choose the kernels configured.
    limits: DeviceLimits,
    configure: Configure,
}

impl Modules {
    /// No module loaded yet, for a context on a device of `limits`; each module is set up by
    /// `configure` as it loads.
    pub(crate) fn new(limits: DeviceLimits, configure: Configure) -> Self {
        Modules {
            slots: Default::default(),
            loading: Mutex::new(()),
            limits,
            configure,
        }
    }

    /// `family`'s module, loaded and configured (shared-memory limits, prefetch distances) if
    /// this is its first use. The sorter's context must be current, since a module belongs to
    /// the context it is loaded in: reach it through `GpuSorter::module` or
    /// `GpuSorter::function`, which make it so.
    pub(crate) fn get(&self, family: Family) -> Result<&Loaded> {
        let slot = &self.slots[family as usize];
        if let Some(loaded) = slot.get() {
            return Ok(loaded);
        }
        let _guard = self.loading.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(loaded) = slot.get() {
            return Ok(loaded);
        }
        let ptx = family_ptx(KERNELS_PTX, family);
        let what = format!("loading the PTX of the {family:?} kernels");
        let module = Module::from_ptx(ptx, &[]).context(&what)?;
        let settings = (self.configure)(family, &module, &self.limits)?;
        Ok(slot.get_or_init(|| Loaded { module, settings }))
    }

    /// Kernel `name` of `family`, from the family's module (loaded if need be; as for
    /// [`Modules::get`], the sorter's context must be current).
    pub(crate) fn function(&self, family: Family, name: &str) -> Result<Function<'_>> {
        function(&self.get(family)?.module, name)
    }
}

/// Lets kernel `name` use `bytes` of dynamic shared memory (above the default 48 KB if need
/// be) and asks for the largest shared-memory carve-out. Kernels that a device of `limits`
/// cannot give `bytes` are left as they are (the policy never launches them there; a launch
/// would fail), so that a sorter under a test profile fails as the smaller device would.
pub(crate) fn set_shared_attributes(
    module: &Module,
    limits: &DeviceLimits,
    name: &str,
    bytes: u32,
) -> Result<()> {
    use cuda::CUfunction_attribute as A;
    set_attributes(
        module,
        limits,
        name,
        bytes,
        &[
            (
                A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            ),
            (A::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100),
        ],
    )
}

/// As [`set_shared_attributes`], but leaves the carve-out to the driver, which then keeps
/// more of the multiprocessor's memory as L1 cache for kernels that want it.
pub(crate) fn allow_dynamic_shared(
    module: &Module,
    limits: &DeviceLimits,
    name: &str,
    bytes: u32,
) -> Result<()> {
    use cuda::CUfunction_attribute as A;
    let max = (
        A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        bytes as i32,
    );
    set_attributes(module, limits, name, bytes, &[max])
}

fn set_attributes(
    module: &Module,
    limits: &DeviceLimits,
    name: &str,
    bytes: u32,
    settings: &[(cuda::CUfunction_attribute, i32)],
) -> Result<()> {
    if !limits.fits(bytes) {
        return Ok(());
    }
    let f = function(module, name)?;
    for &(attribute, value) in settings {
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

/// Kernel `name` of `module`.
pub(crate) fn function<'m>(module: &'m Module, name: &str) -> Result<Function<'m>> {
    module
        .get_function(name)
        .context(&format!("finding kernel {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::kernels;

    fn entries(ptx: &str) -> Vec<String> {
        ptx.lines()
            .filter_map(|l| l.strip_prefix(".visible .entry "))
            .map(|name| name.trim_end_matches('(').to_string())
            .collect()
    }

    #[test]
    fn every_kernel_is_declared_and_in_exactly_one_family_module() {
        // The PTX's entries are the declared kernels, each once, with their register caps.
        let mut all = entries(KERNELS_PTX);
        all.sort_unstable();
        let mut declared: Vec<String> = kernels::all().map(|k| k.name.to_string()).collect();
        declared.sort_unstable();
        assert_eq!(all, declared);
        for k in kernels::all() {
            let caps: Vec<&str> = super::super::kernel_ptx(k.name)
                .lines()
                .filter(|l| l.starts_with(".maxnreg"))
                .collect();
            let expected = k.max_registers.map(|cap| format!(".maxnreg {cap}"));
            assert_eq!(caps, Vec::from_iter(expected.as_deref()), "{}", k.name);
        }
        // Each family's module holds the entries of its declared kernels and no other; a
        // kernel has one family, so it is in exactly one module.
        for family in Family::ALL {
            let ptx = family_ptx(KERNELS_PTX, family);
            let mut mine = entries(&ptx);
            let mut expected: Vec<String> = kernels::all()
                .filter(|k| k.family == family)
                .map(|k| k.name.to_string())
                .collect();
            mine.sort_unstable();
            expected.sort_unstable();
            assert!(!mine.is_empty(), "{family:?}");
            assert_eq!(mine, expected, "{family:?}");
            for name in &mine {
                // Each entry whole: its body's braces balance.
                let body = super::super::kernel_ptx(name);
                assert!(ptx.contains(body), "{name}");
            }
            // The preamble and the called functions come along.
            assert!(ptx.starts_with(&KERNELS_PTX[..KERNELS_PTX.find(".visible").unwrap()]));
            assert!(ptx.contains(".target sm_"));
        }
    }

    /// Each kernel's parameters in the PTX are its argument struct's fields, of the same sizes
    /// in the same order, so the bytes a launch passes are the ones the kernel reads.
    #[test]
    fn every_kernel_takes_the_fields_of_its_argument_struct() {
        for k in kernels::all() {
            let Some(fields) = k.params else { continue };
            let body = super::super::kernel_ptx(k.name);
            let signature = &body[..body.find(')').expect("a parameter list")];
            let params: Vec<u32> = signature
                .lines()
                .filter_map(|l| l.trim().strip_prefix(".param ."))
                .map(|l| match &l[..3] {
                    "u64" | "b64" => 8,
                    "u32" | "b32" => 4,
                    other => panic!("{}: a parameter of type {other}", k.name),
                })
                .collect();
            assert_eq!(params, fields, "{}", k.name);
        }
    }

    #[test]
    fn a_family_module_is_a_fraction_of_the_ptx() {
        // What a first sort waits for: the program windows (plus tiles) for a large bitonic
        // sort, the small sorts for a short one (about a quarter and a fifth of the PTX).
        let size = |family| family_ptx(KERNELS_PTX, family).len();
        for family in Family::ALL {
            assert!(size(family) * 5 < KERNELS_PTX.len() * 3, "{family:?}");
        }
        assert!(size(Family::Small) * 4 < KERNELS_PTX.len());
    }
}
