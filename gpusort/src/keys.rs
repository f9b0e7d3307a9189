//! Key types the GPU and CPU sorts accept ([`SortKey`]), their names ([`DType`]), and the sort
//! order ([`Order`]).
//!
//! Every sort in the crate, on the GPU and on the CPU, orders keys by their
//! [ordered bits](SortKey::ordered_bits): an unsigned integer per key whose order is the key
//! order, floats as `total_cmp`. The GPU kernels apply the same map while they load keys.
//!
//! ```
//! use gpusort::{Order, SortKey};
//!
//! let mut keys = [1.0f32, f32::NAN, -f32::NAN, -0.0, 0.0, f32::NEG_INFINITY];
//! keys.sort_unstable_by_key(|k| k.ordered_bits(Order::Ascending));
//! let mut by_total_cmp = keys;
//! by_total_cmp.sort_by(f32::total_cmp);
//! assert_eq!(keys.map(f32::to_bits), by_total_cmp.map(f32::to_bits));
//! assert!(keys[0].is_nan() && keys[0].is_sign_negative());
//! ```

use cust::memory::DeviceCopy;
use kernels_gpu::keys::{KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, KeyBits, key_map};
use std::fmt;

/// Ascending or descending: the order every sort of the crate takes.
///
/// [`Order::Descending`] is the exact reverse of [`Order::Ascending`] (for floats: NaN, +∞, …,
/// +0.0, −0.0, …, −∞, −NaN), not the ascending order with NaNs kept last. On the command line
/// the values are `asc` and `desc`.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, cpu::CpuAlgo};
///
/// let mut keys = [2i64, -9, 7];
/// CpuAlgo::Std.sort(&mut keys, Order::Descending);
/// assert_eq!(keys, [7, 2, -9]);
/// assert_eq!(Order::default(), Order::Ascending);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Order {
    /// Smallest first.
    #[default]
    #[cfg_attr(feature = "clap", value(name = "asc"))]
    Ascending,
    /// Largest first.
    #[cfg_attr(feature = "clap", value(name = "desc"))]
    Descending,
}

/// Names of the key types, for command lines, files and reports: the run-time counterpart of
/// [`SortKey`] (see [`SortKey::DTYPE`] and [`with_key_type!`](crate::with_key_type)).
///
/// Its `Display` is the Rust type's name, as is its command-line value (`u32`, …, `f64`).
///
/// # Examples
///
/// ```
/// use gpusort::{DType, SortKey};
///
/// assert_eq!(f32::DTYPE, DType::F32);
/// assert_eq!(DType::I64.to_string(), "i64");
/// assert_eq!(gpusort::with_key_type!(DType::I64, K => size_of::<K>()), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum DType {
    /// `u32`
    U32,
    /// `i32`
    I32,
    /// `f32`, in `f32::total_cmp` order.
    F32,
    /// `u64`
    U64,
    /// `i64`
    I64,
    /// `f64`, in `f64::total_cmp` order.
    F64,
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::U32 => "u32",
            DType::I32 => "i32",
            DType::F32 => "f32",
            DType::U64 => "u64",
            DType::I64 => "i64",
            DType::F64 => "f64",
        })
    }
}

/// Runs `$body` with the type alias `$k` set to the key type `$dtype` names: from a
/// [`DType`] known at run time to generic code over [`SortKey`].
///
/// `$body` is an expression, instantiated once per key type; every instance must have the
/// same type.
///
/// # Examples
///
/// ```
/// use gpusort::{DType, Order, SortKey, with_key_type};
///
/// fn smallest<K: SortKey>(n: u64) -> String {
///     let mut keys: Vec<K> = (0..n).map(|i| K::from_random(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
///     gpusort::cpu::CpuAlgo::Std.sort(&mut keys, Order::Ascending);
///     format!("{:?}", keys[0])
/// }
///
/// let dtype = DType::F64; // e.g. from a file's header or `--dtype`
/// let bytes = with_key_type!(dtype, K => size_of::<K>());
/// assert_eq!(bytes, 8);
/// println!("{}", with_key_type!(dtype, K => smallest::<K>(100)));
/// ```
#[macro_export]
macro_rules! with_key_type {
    ($dtype:expr, $k:ident => $body:expr) => {
        match $dtype {
            $crate::DType::U32 => {
                type $k = u32;
                $body
            }
            $crate::DType::I32 => {
                type $k = i32;
                $body
            }
            $crate::DType::F32 => {
                type $k = f32;
                $body
            }
            $crate::DType::U64 => {
                type $k = u64;
                $body
            }
            $crate::DType::I64 => {
                type $k = i64;
                $body
            }
            $crate::DType::F64 => {
                type $k = f64;
                $body
            }
        }
    };
}

mod sealed {
    pub trait Sealed {}
}

/// A key type the sorts accept: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`.
///
/// Floats are ordered like [`f32::total_cmp`] / [`f64::total_cmp`]: −NaN < −∞ < … < −0.0 < +0.0 < … < +∞ < +NaN.
/// Every sort works on the key's *ordered bits* ([`SortKey::ordered_bits`]), an unsigned
/// integer whose order is that order.
///
/// The trait is sealed: the GPU kernels exist for these six types only. Its items beside
/// [`SortKey::DTYPE`] and [`SortKey::ordered_bits`] serve the crate's kernels, test inputs
/// and CPU sorts.
///
/// # Examples
///
/// ```
/// use gpusort::{DType, Order, SortKey};
///
/// fn is_sorted<K: SortKey>(keys: &[K], order: Order) -> bool {
///     keys.is_sorted_by_key(|k| k.ordered_bits(order))
/// }
/// assert!(is_sorted(&[-1i32, 0, 5], Order::Ascending));
/// assert!(is_sorted(&[0.0f64, -0.0], Order::Descending));
/// assert!(!is_sorted(&[-0.0f64, 0.0], Order::Descending));
/// assert_eq!(<u64 as SortKey>::DTYPE, DType::U64);
/// ```
pub trait SortKey:
    DeviceCopy + Copy + Send + Sync + PartialEq + fmt::Debug + 'static + sealed::Sealed
{
    /// The key type's name.
    ///
    /// ```
    /// use gpusort::{DType, SortKey};
    /// assert_eq!(i32::DTYPE, DType::I32);
    /// ```
    const DTYPE: DType;
    /// Raw bit pattern type, sorted by the kernels after an order-preserving map: `u32` for
    /// the 4-byte keys, `u64` for the 8-byte ones.
    type Bits: KeyBits + DeviceCopy + Ord + Default + Send + Sync + fmt::Debug + Into<u64>;
    /// Key kind for [`kernels_gpu::keys::key_map`]: one of
    /// [`kernels_gpu::keys::KIND_UNSIGNED`], [`kernels_gpu::keys::KIND_SIGNED`] and
    /// [`kernels_gpu::keys::KIND_FLOAT`].
    const KIND: u32;
    /// The key's raw bits (two's complement for signed integers, IEEE 754 for floats).
    ///
    /// ```
    /// use gpusort::SortKey;
    /// assert_eq!(SortKey::to_bits(-1i32), u32::MAX);
    /// assert_eq!(SortKey::to_bits(1.0f32), 0x3f80_0000);
    /// ```
    fn to_bits(self) -> Self::Bits;
    /// The key with these raw bits; the inverse of [`SortKey::to_bits`].
    ///
    /// ```
    /// use gpusort::SortKey;
    /// assert_eq!(<i64 as SortKey>::from_bits(u64::MAX), -1);
    /// ```
    fn from_bits(bits: Self::Bits) -> Self;
    /// A key made from 64 random bits, for test inputs of uniformly random keys:
    /// any value for integers (the low bits for 32-bit ones); for floats a finite value of
    /// either sign and magnitude below about 4.6e5, with a random mantissa.
    ///
    /// ```
    /// use gpusort::SortKey;
    /// assert_eq!(<u32 as SortKey>::from_random(0x1_0000_0007), 7);
    /// assert!(<f64 as SortKey>::from_random(u64::MAX / 3).is_finite());
    /// ```
    fn from_random(bits: u64) -> Self;
    /// A key made from a small integer, for test inputs with repeated or patterned keys: `i`
    /// for unsigned keys, `i − 5000` for signed ones, `i / 2 − 2500` for floats. Increasing in
    /// `i` for `i` below 2^24 (floats) and 2^31 (signed keys).
    ///
    /// ```
    /// use gpusort::SortKey;
    /// assert_eq!(<i32 as SortKey>::from_small(0), -5000);
    /// assert_eq!(<f32 as SortKey>::from_small(5001), 0.5);
    /// ```
    fn from_small(i: u32) -> Self;

    /// The map the kernels apply for this key type and `order`
    /// ([`kernels_gpu::keys::key_map`] of [`SortKey::KIND`]).
    ///
    /// ```
    /// use gpusort::{Order, SortKey};
    /// use kernels_gpu::keys::{DESCENDING, KIND_FLOAT, key_map};
    /// assert_eq!(f32::key_map(Order::Descending), key_map(KIND_FLOAT, true));
    /// assert_ne!(f32::key_map(Order::Descending) & DESCENDING, 0);
    /// ```
    fn key_map(order: Order) -> u32 {
        key_map(Self::KIND, order == Order::Descending)
    }
    /// Bits whose unsigned order is the key order `order` (ascending: the total order). Keys
    /// with equal ordered bits are identical.
    ///
    /// ```
    /// use gpusort::{Order, SortKey};
    /// assert!((-1i32).ordered_bits(Order::Ascending) < 0i32.ordered_bits(Order::Ascending));
    /// assert!((-0.0f32).ordered_bits(Order::Ascending) < 0.0f32.ordered_bits(Order::Ascending));
    /// assert!(f32::NAN.ordered_bits(Order::Descending) < 1.0f32.ordered_bits(Order::Descending));
    /// ```
    fn ordered_bits(self, order: Order) -> Self::Bits {
        self.to_bits().encode(Self::key_map(order))
    }
}

/// A value type [`crate::Queue::sort_by_key`] carries along with keys on the device, and an
/// index type of [`crate::GpuSorter::argsort`]: `u32`, `u64` or `u128`, the widths the kernels
/// move. Host slices carry any payload of up to 16 bytes ([`crate::GpuSorter::sort_by_key`]).
///
/// ```
/// use gpusort::SortValue;
/// assert_eq!(u128::from_index(7).to_index(), 7);
/// assert_eq!(<u32 as SortValue>::from_index(5), 5u32);
/// ```
pub trait SortValue:
    DeviceCopy + Copy + Default + Send + Sync + PartialEq + fmt::Debug + 'static + sealed::Sealed
{
    /// Converts an index (`< 2^32` for `u32`) to a value, for argsort.
    fn from_index(i: u64) -> Self;
    /// The value as an index.
    fn to_index(self) -> u64;
}

impl SortValue for u32 {
    fn from_index(i: u64) -> Self {
        i as u32
    }
    fn to_index(self) -> u64 {
        u64::from(self)
    }
}

impl SortValue for u64 {
    fn from_index(i: u64) -> Self {
        i
    }
    fn to_index(self) -> u64 {
        self
    }
}

impl SortValue for u128 {
    fn from_index(i: u64) -> Self {
        u128::from(i)
    }
    fn to_index(self) -> u64 {
        self as u64
    }
}

impl sealed::Sealed for u128 {}

impl sealed::Sealed for u32 {}
impl SortKey for u32 {
    const DTYPE: DType = DType::U32;
    type Bits = u32;
    const KIND: u32 = KIND_UNSIGNED;
    fn to_bits(self) -> u32 {
        self
    }
    fn from_bits(bits: u32) -> Self {
        bits
    }
    fn from_random(bits: u64) -> Self {
        bits as u32
    }
    fn from_small(i: u32) -> Self {
        i
    }
}

impl sealed::Sealed for i32 {}
impl SortKey for i32 {
    const DTYPE: DType = DType::I32;
    type Bits = u32;
    const KIND: u32 = KIND_SIGNED;
    fn to_bits(self) -> u32 {
        self as u32
    }
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
    fn from_random(bits: u64) -> Self {
        bits as i32
    }
    fn from_small(i: u32) -> Self {
        i as i32 - 5000
    }
}

impl sealed::Sealed for f32 {}
impl SortKey for f32 {
    const DTYPE: DType = DType::F32;
    type Bits = u32;
    const KIND: u32 = KIND_FLOAT;
    fn to_bits(self) -> u32 {
        self.to_bits()
    }
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
    fn from_random(bits: u64) -> Self {
        // Finite, both signs, many magnitudes: ±(0 .. 4.5e5) with a random mantissa.
        ((bits as i64 >> 11) as f64 * 1e-10) as f32
    }
    fn from_small(i: u32) -> Self {
        i as f32 * 0.5 - 2500.0
    }
}

impl sealed::Sealed for u64 {}
impl SortKey for u64 {
    const DTYPE: DType = DType::U64;
    type Bits = u64;
    const KIND: u32 = KIND_UNSIGNED;
    fn to_bits(self) -> u64 {
        self
    }
    fn from_bits(bits: u64) -> Self {
        bits
    }
    fn from_random(bits: u64) -> Self {
        bits
    }
    fn from_small(i: u32) -> Self {
        u64::from(i)
    }
}

impl sealed::Sealed for i64 {}
impl SortKey for i64 {
    const DTYPE: DType = DType::I64;
    type Bits = u64;
    const KIND: u32 = KIND_SIGNED;
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as i64
    }
    fn from_random(bits: u64) -> Self {
        bits as i64
    }
    fn from_small(i: u32) -> Self {
        i64::from(i) - 5000
    }
}

impl sealed::Sealed for f64 {}
impl SortKey for f64 {
    const DTYPE: DType = DType::F64;
    type Bits = u64;
    const KIND: u32 = KIND_FLOAT;
    fn to_bits(self) -> u64 {
        self.to_bits()
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    fn from_random(bits: u64) -> Self {
        (bits as i64 >> 11) as f64 * 1e-10
    }
    fn from_small(i: u32) -> Self {
        f64::from(i) * 0.5 - 2500.0
    }
}
