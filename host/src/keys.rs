//! Key types the GPU and CPU sorts accept, and the sort order.

use cust::memory::DeviceCopy;
use kernels_gpu::keys::{KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, KeyBits, key_map};
use std::fmt;

/// Ascending or descending.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Order {
    /// Smallest first.
    #[default]
    #[value(name = "asc")]
    Ascending,
    /// Largest first.
    #[value(name = "desc")]
    Descending,
}

/// Names of the key types, for command lines and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
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

/// Runs `$body` with the type alias `$k` set to the key type `$dtype` names.
///
/// ```
/// use gpusort::{DType, SortKey, with_key_type};
/// let bytes = with_key_type!(DType::F64, K => size_of::<K>());
/// assert_eq!(bytes, 8);
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
/// Every sort works on the key's *ordered bits*, an unsigned integer whose order is that order.
pub trait SortKey:
    DeviceCopy + Copy + Send + Sync + PartialEq + fmt::Debug + 'static + sealed::Sealed
{
    /// The key type's name.
    const DTYPE: DType;
    /// Raw bit pattern type, sorted by the kernels after an order-preserving map.
    type Bits: KeyBits + DeviceCopy + Ord + Send + Sync + fmt::Debug;
    /// Key kind for [`kernels_gpu::keys::key_map`].
    const KIND: u32;
    /// The key's raw bits.
    fn to_bits(self) -> Self::Bits;
    /// The key with these raw bits.
    fn from_bits(bits: Self::Bits) -> Self;
    /// A key made from 64 random bits: any value for integers, a finite float for floats.
    fn from_random(bits: u64) -> Self;
    /// A key made from a small integer, in the same order as the integer.
    fn from_small(i: u32) -> Self;

    /// The map the kernels apply for this key type and `order`.
    fn key_map(order: Order) -> u32 {
        key_map(Self::KIND, order == Order::Descending)
    }
    /// Bits whose unsigned order is the key order `order` (ascending: the total order).
    fn ordered_bits(self, order: Order) -> Self::Bits {
        self.to_bits().encode(Self::key_map(order))
    }
}

/// A value type [`crate::GpuSorter::sort_pairs`] carries along with the keys: `u32` or `u64`.
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
        // Finite, both signs, many magnitudes: ±(0 .. 4.5e8) with a random mantissa.
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
