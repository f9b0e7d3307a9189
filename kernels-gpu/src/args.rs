//! The contract between the host and the kernels: each kernel's one argument is a `#[repr(C)]`
//! struct ([`KernelArgs`]) that `kernel_args!` defines once, beside its family's index math, for
//! the host (which fills it) and the kernels (whose entry points take its fields as parameters).
//! It imports nothing of the crate, so every family's index math can build on it.

/// A device address, as kernel arguments carry it: a `u64` on the host and in the struct, a
/// pointer parameter of the kernel's entry point (which the compiler then knows to be in global
/// memory, and so loads and stores through it as global).
pub type Addr = u64;

/// The most fields a kernel's argument struct has.
pub const MAX_FIELDS: usize = 16;

/// The one argument of a kernel: a `#[repr(C)]` struct of plain data (device addresses, counts,
/// key maps) that `kernel_args!` defines, whose fields are the kernel's parameters in order.
///
/// # Safety
/// Implemented by `kernel_args!` alone: each field is a parameter of the kernels declared with the
/// type, of the size [`KernelArgs::PARAM_BYTES`] gives, in order.
pub unsafe trait KernelArgs: Copy + 'static {
    /// Each parameter's bytes, in order.
    const PARAM_BYTES: &'static [u32];

    /// The address of each field, in order: what `cuLaunchKernel` reads the parameters from.
    fn params(&self) -> ([*const core::ffi::c_void; MAX_FIELDS], usize);
}

/// The type of a parameter of a kernel's entry point that carries a field of type `$t`.
#[cfg(target_arch = "nvptx64")]
macro_rules! param_type {
    (Addr) => { *mut u8 };
    ($t:ty) => { $t };
}
#[cfg(target_arch = "nvptx64")]
pub(crate) use param_type;

/// The field of type `$t` that a parameter `$x` of an entry point carries.
#[cfg(target_arch = "nvptx64")]
macro_rules! from_param {
    (Addr, $x:expr) => {
        $x as u64
    };
    ($t:ty, $x:expr) => {
        $x
    };
}
#[cfg(target_arch = "nvptx64")]
pub(crate) use from_param;

/// Defines a family's kernel argument ([`KernelArgs`]), the one definition that the host fills
/// and the kernels read:
///
/// ```text
/// kernel_args! { $
///     /// What the kernels do with it.
///     pub struct PassArgs, entry pass_entry {
///         /// Each field documented.
///         pub keys: Addr,
///         pub n: u64,
///     }
/// }
/// ```
///
/// gives the `#[repr(C)]` struct, its [`KernelArgs`] implementation, and (nvptx64 only) the macro
/// `pass_entry!(/// docs name, Args, |args| body)`, which defines the kernel `name` with one
/// parameter per field (addresses as pointers) and runs `body` with `args: Args` built from
/// them. `Args` is the type the kernel list gives the kernel: one with other fields than the
/// struct's does not compile. (The leading `$` lets the definition write the entry macro's own
/// metavariables.)
macro_rules! kernel_args {
    (
        $d:tt
        $(#[$meta:meta])*
        pub struct $name:ident, entry $entry:ident {
            $( $(#[$field_meta:meta])* pub $field:ident: $ty:ident ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty ),*
        }

        // SAFETY: the fields are the parameters of the entry points `$entry!` defines, in order.
        unsafe impl $crate::args::KernelArgs for $name {
            const PARAM_BYTES: &'static [u32] = &[$( size_of::<$ty>() as u32 ),*];

            fn params(
                &self,
            ) -> ([*const core::ffi::c_void; $crate::args::MAX_FIELDS], usize) {
                let fields = [$( &self.$field as *const $ty as *const core::ffi::c_void ),*];
                let mut params = [core::ptr::null(); $crate::args::MAX_FIELDS];
                params[..fields.len()].copy_from_slice(&fields);
                (params, fields.len())
            }
        }

        #[cfg(target_arch = "nvptx64")]
        macro_rules! $entry {
            (
                $d(#[$d attr:meta])*
                $d kernel:ident, $d args_type:path, |$d args:ident| $d body:block $d(,)?
            ) => {
                $d(#[$d attr])*
                #[unsafe(no_mangle)]
                pub unsafe extern "gpu-kernel" fn $d kernel(
                    $( $field: $crate::args::param_type!($ty) ),*
                ) {
                    type Args = $d args_type;
                    let $d args = Args {
                        $( $field: $crate::args::from_param!($ty, $field) ),*
                    };
                    $d body
                }
            };
        }
        #[cfg(target_arch = "nvptx64")]
        pub(crate) use $entry;
    };
}
pub(crate) use kernel_args;
