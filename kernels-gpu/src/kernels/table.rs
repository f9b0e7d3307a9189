//! The kernel list as data, for the host: a description of every kernel ([`KernelInfo`]) and a
//! typed handle for each ([`Kernel`]); the nvptx64 build has the entry points instead.

use crate::args::KernelArgs;
use core::marker::PhantomData;

use crate::bitonic::window::{PROGRAMS, WindowProgramArgs};
use crate::tuning::{
    COMPACT_MERGE_SORT_MAX_REGISTERS, RADIX_HISTOGRAM_MAX_REGISTERS, SEGMENTS_MAX_REGISTERS,
    SEGMENTS_RADIX_MAX_REGISTERS, SMALL_MAX_REGISTERS, TINY_MAX_REGISTERS,
    TOPK_DIGITS_MAX_REGISTERS, TOPK_MAX_REGISTERS_32, TOPK_MAX_REGISTERS_64,
    TOPK_ROWS_MAX_REGISTERS_32, TOPK_ROWS_MAX_REGISTERS_64, WINDOW_MAX_REGISTERS_32,
    WINDOW_MAX_REGISTERS_64, WINDOW_PROGRAM_MAX_REGISTERS_32, WINDOW_TILES_MAX_REGISTERS_32,
    merge_sort_registers, radix_pass_max_registers,
};

/// A module's part of `kernel_list!` as [`KernelInfo`]s.
macro_rules! table {
    ($(
        $name:ident: $family:ident $(($args:path))? $(, registers $registers:expr)?
            $(, program $program:literal)? => $maker:ident!($key:ty $(, $arg:tt)*);
    )*) => {
        &[$(KernelInfo {
            name: stringify!($name),
            family: Family::$family,
            key_bytes: size_of::<$key>() as u32,
            params: optional!($(<$args as KernelArgs>::PARAM_BYTES)?),
            max_registers: optional!($($registers)?),
            program: optional!($($program)?),
        }),*]
    };
}

/// A module's part of `kernel_list!` as typed handles: a [`Kernel`] constant per kernel, named as
/// the kernel.
macro_rules! handles {
    ($(
        $name:ident: $family:ident $(($args:path))? $(, registers $registers:expr)?
            $(, program $program:literal)? => $maker:ident!($key:ty $(, $arg:tt)*);
    )*) => {
        $( handle!($name, $family $(, $args)?); )*
    };
}

/// One typed handle of [`handles!`].
macro_rules! handle {
    ($name:ident, $family:ident) => {};
    ($name:ident, $family:ident, $args:path) => {
        #[doc = concat!("The kernel `", stringify!($name), "`.")]
        #[allow(non_upper_case_globals)]
        pub const $name: Kernel<$args> = Kernel::new(stringify!($name), Family::$family);
    };
}

kernel_list!(bitonic, handles);
kernel_list!(merge, handles);
kernel_list!(multi, handles);
kernel_list!(radix, handles);
kernel_list!(segments, handles);
kernel_list!(topk, handles);

/// `Some(x)` for `x`, `None` for nothing.
macro_rules! optional {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

/// A family of kernels, which the host loads as one CUDA module the first time a sort needs
/// one of them: the driver compiles a module whole, so a sort waits only for the kernels of the
/// families it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The bitonic sort's one-launch sorts of short inputs (`bitonic_tiny_*`, `bitonic_small_*`).
    Small,
    /// The tile sorts of the bitonic windows and of the keys-only merge sort
    /// (`bitonic_window_tiles_*`).
    Tiles,
    /// The bitonic window passes with a constant program (`bitonic_window_u32_p*`, `_u64_p*`).
    Windows,
    /// The bitonic window passes that read their program from their arguments: windows wider
    /// than 2^32 positions, devices whose blocks cannot hold 2^13 8-byte keys, and A/B runs.
    GenericWindows,
    /// The merge sort's tile sorts, partitions and merges (`merge_*`).
    Merge,
    /// The multi-GPU sort's sampling, ranking, filling and checking (`multi_*`).
    Multi,
    /// The radix sort's histogram and digit passes (`radix_*`).
    Radix,
    /// The segmented sort's block sorts of rows and segments (`segments_*`).
    Segments,
    /// The segmented sort's register sorts of short rows and segments (`segments_short_*`) and
    /// its grouping of segments by padded length (`segments_group`): a module of their own, so
    /// that a sort of short segments alone does not wait for the block sorts to compile.
    ShortSegments,
    /// The rounds of top-k selection (`topk_*`).
    TopK,
}

impl Family {
    /// Every family, in the order of their discriminants.
    pub const ALL: [Family; 10] = [
        Family::Small,
        Family::Tiles,
        Family::Windows,
        Family::GenericWindows,
        Family::Merge,
        Family::Multi,
        Family::Radix,
        Family::Segments,
        Family::ShortSegments,
        Family::TopK,
    ];

    /// The family of kernel `name`; `None` for a name that is no kernel.
    pub fn of(name: &str) -> Option<Family> {
        kernel(name).map(|k| k.family)
    }
}

/// A kernel the host can launch with an argument of type `A` and no other: the only way host code
/// names a kernel. Each kernel's handle is a constant of this module named as the kernel (for
/// example [`radix_pass_u32`]), typed by the kernel list, so a launch with another family's
/// arguments does not compile.
pub struct Kernel<A> {
    name: &'static str,
    family: Family,
    args: PhantomData<fn(A)>,
}

impl<A: KernelArgs> Kernel<A> {
    const fn new(name: &'static str, family: Family) -> Self {
        Kernel {
            name,
            family,
            args: PhantomData,
        }
    }

    /// The kernel's entry point in the PTX.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The module it is loaded in.
    pub const fn family(&self) -> Family {
        self.family
    }

    /// Its description in the list.
    pub fn info(&self) -> &'static KernelInfo {
        kernel(self.name).expect("every handle is in the list")
    }
}

impl<A> Clone for Kernel<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Kernel<A> {}

impl<A> core::fmt::Debug for Kernel<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

/// A kernel of the PTX, as `kernel_list!` declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// Its entry point's name.
    pub name: &'static str,
    /// The module the host loads it in.
    pub family: Family,
    /// Bytes per key.
    pub key_bytes: u32,
    /// The bytes of each of its parameters, the fields of its [`KernelArgs`] struct.
    pub params: Option<&'static [u32]>,
    /// The most registers a thread may use (`.maxnreg`, which `cargo xtask ptx` writes into the
    /// PTX as `__launch_bounds__` would in CUDA C++), where capped.
    pub max_registers: Option<u32>,
    /// For a window pass with a constant program, its index into [`PROGRAMS`].
    pub program: Option<usize>,
}

/// Every kernel, by the module that defines it.
const MODULES: [&[KernelInfo]; 6] = [
    kernel_list!(bitonic, table),
    kernel_list!(merge, table),
    kernel_list!(multi, table),
    kernel_list!(radix, table),
    kernel_list!(segments, table),
    kernel_list!(topk, table),
];

/// Every kernel of the PTX.
///
/// ```
/// use kernels_gpu::kernels::{Family, all};
/// let small = all().filter(|k| k.family == Family::Small);
/// assert_eq!(small.count(), 4);
/// ```
pub fn all() -> impl Iterator<Item = &'static KernelInfo> {
    MODULES.into_iter().flatten()
}

/// Kernel `name`, if there is one.
pub fn kernel(name: &str) -> Option<&'static KernelInfo> {
    all().find(|k| k.name == name)
}

/// The window passes with a constant program for keys of `key_bytes`, by index into
/// [`PROGRAMS`] (none for other widths).
///
/// ```
/// use kernels_gpu::kernels::{bitonic_window_u32_p3, window_programs};
/// assert_eq!(window_programs(4)[3].name(), bitonic_window_u32_p3.name());
/// assert_eq!(window_programs(8).len(), 17);
/// assert!(window_programs(2).is_empty());
/// ```
pub const fn window_programs(key_bytes: u32) -> &'static [Kernel<WindowProgramArgs>] {
    match key_bytes {
        4 => &WINDOW_PROGRAMS_32,
        8 => &WINDOW_PROGRAMS_64,
        _ => &[],
    }
}

const WINDOW_PROGRAMS_32: [Kernel<WindowProgramArgs>; PROGRAMS.len()] = programs(4);
const WINDOW_PROGRAMS_64: [Kernel<WindowProgramArgs>; PROGRAMS.len()] = programs(8);

/// A module's part of `kernel_list!` as the handles of its window passes with a constant
/// program, each with its keys' bytes and its program: `(key bytes, program, handle)`.
macro_rules! program_handles {
    ($(
        $name:ident: $family:ident $(($args:path))? $(, registers $registers:expr)?
            $(, program $program:literal)? => $maker:ident!($key:ty $(, $arg:tt)*);
    )*) => {
        &[$($( (size_of::<$key>() as u32, $program, $name), )?)*]
    };
}

/// Every window pass with a constant program: `(key bytes, program, handle)`.
const PROGRAM_KERNELS: &[(u32, usize, Kernel<WindowProgramArgs>)] =
    kernel_list!(bitonic, program_handles);

/// The handles of [`window_programs`], found in the list; every program must have one.
const fn programs(key_bytes: u32) -> [Kernel<WindowProgramArgs>; PROGRAMS.len()] {
    let mut found: [Option<Kernel<WindowProgramArgs>>; PROGRAMS.len()] = [None; PROGRAMS.len()];
    let mut k = 0;
    while k < PROGRAM_KERNELS.len() {
        let (bytes, i, kernel) = PROGRAM_KERNELS[k];
        if bytes == key_bytes {
            assert!(found[i].is_none(), "two kernels for one program");
            found[i] = Some(kernel);
        }
        k += 1;
    }
    let mut handles = [PROGRAM_KERNELS[0].2; PROGRAMS.len()];
    let mut i = 0;
    while i < handles.len() {
        handles[i] = found[i].expect("a kernel for every program");
        i += 1;
    }
    handles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = all().map(|k| k.name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn window_programs_are_the_windows_family() {
        for k in all() {
            assert_eq!(
                k.program.is_some(),
                k.family == Family::Windows,
                "{}",
                k.name
            );
        }
        for (bytes, bits) in [(4, 32), (8, 64)] {
            for (i, handle) in window_programs(bytes).iter().enumerate() {
                assert_eq!(handle.name(), format!("bitonic_window_u{bits}_p{i}"));
                assert_eq!(handle.info().key_bytes, bytes);
                assert_eq!(handle.info().program, Some(i));
            }
        }
        // Every kernel with a program is in the tables.
        let programs = all().filter(|k| k.program.is_some()).count();
        assert_eq!(programs, 2 * PROGRAMS.len());
    }

    #[test]
    fn every_family_has_kernels() {
        for family in Family::ALL {
            assert!(all().any(|k| k.family == family), "{family:?}");
        }
        for (i, family) in Family::ALL.into_iter().enumerate() {
            assert_eq!(family as usize, i);
        }
        assert_eq!(Family::of("merge_two_u64"), Some(Family::Merge));
        assert_eq!(
            Family::of("bitonic_window_u64"),
            Some(Family::GenericWindows)
        );
        assert_eq!(Family::of("nothing"), None);
    }
}
