//! Order-preserving key maps. Every kernel sorts unsigned integers ascending; a *key map*
//! turns `i32`/`f32` bit patterns (and descending order) into unsigned keys whose unsigned
//! order is the wanted order, and back. Maps are applied while a tile is loaded or stored, so
//! they cost no extra pass over memory.
//!
//! A map is a `u32`: the low bits name the key type, [`DESCENDING`] flips the order.
//! [`IDENTITY`] (`u32`, ascending) is the map of passes that neither encode nor decode.
//!
//! ```
//! use kernels_gpu::keys::{KIND_FLOAT, KeyBits, key_map};
//!
//! let map = key_map(KIND_FLOAT, false);
//! let mut keys = [1.5f32, -0.0, f32::NEG_INFINITY, 0.0, -2.0];
//! let mut encoded = keys.map(|k| k.to_bits().encode(map));
//! encoded.sort_unstable(); // what the kernels do: an unsigned sort
//! let sorted = encoded.map(|b| f32::from_bits(b.decode(map)));
//! keys.sort_by(f32::total_cmp);
//! assert_eq!(sorted.map(f32::to_bits), keys.map(f32::to_bits));
//! ```

/// Keys are `u32` (or `u64`): the bits already sort in unsigned order.
pub const KIND_UNSIGNED: u32 = 0;
/// Keys are two's-complement signed integers.
pub const KIND_SIGNED: u32 = 1;
/// Keys are IEEE floats, ordered like `f32::total_cmp` / `f64::total_cmp`:
/// −NaN < −∞ < … < −0.0 < +0.0 < … < +∞ < +NaN.
pub const KIND_FLOAT: u32 = 2;
/// Mask of the key-kind bits of a map.
pub const KIND_MASK: u32 = 0b11;
/// Flag: sort in descending order.
pub const DESCENDING: u32 = 1 << 2;
/// The map that changes nothing.
pub const IDENTITY: u32 = KIND_UNSIGNED;

/// Builds a key map from a key kind ([`KIND_UNSIGNED`], [`KIND_SIGNED`], [`KIND_FLOAT`]) and an
/// order.
///
/// ```
/// use kernels_gpu::keys::{DESCENDING, IDENTITY, KIND_SIGNED, KIND_UNSIGNED, key_map};
///
/// assert_eq!(key_map(KIND_UNSIGNED, false), IDENTITY);
/// assert_eq!(key_map(KIND_SIGNED, true), KIND_SIGNED | DESCENDING);
/// ```
pub const fn key_map(kind: u32, descending: bool) -> u32 {
    (kind & KIND_MASK) | if descending { DESCENDING } else { 0 }
}

/// Bit patterns the kernels can sort: `u32` and `u64`.
///
/// The maps are branchless: two xor masks per launch, chosen by the map, applied to every key.
///
/// # Examples
///
/// ```
/// use kernels_gpu::keys::{KIND_SIGNED, KeyBits, key_map};
///
/// let descending = key_map(KIND_SIGNED, true);
/// let (a, b) = ((-5i64) as u64, 3i64 as u64);
/// assert!(b.encode(descending) < a.encode(descending)); // 3 sorts before -5
/// assert_eq!(a.encode(descending).decode(descending), a);
/// assert_eq!(<u32 as KeyBits>::INFINITY, u32::MAX);
/// ```
pub trait KeyBits: Copy + PartialOrd {
    /// Sorts after every other key; stands for the missing keys past the end.
    const INFINITY: Self;
    /// Maps raw key bits to bits whose unsigned order is the order `map` asks for.
    fn encode(self, map: u32) -> Self;
    /// Inverse of [`KeyBits::encode`].
    fn decode(self, map: u32) -> Self;
    /// Every bit flipped if `flip`, else unchanged: flipped keys sort in the reverse order, so an
    /// ascending comparator on them is a descending one on the keys.
    ///
    /// ```
    /// use kernels_gpu::keys::KeyBits;
    /// assert_eq!(5u32.complement(true), !5);
    /// assert_eq!(5u64.complement(false), 5);
    /// ```
    fn complement(self, flip: bool) -> Self;
}

macro_rules! impl_key_bits {
    ($t:ty, $signed:ty) => {
        impl KeyBits for $t {
            const INFINITY: Self = <$t>::MAX;

            #[inline(always)]
            fn encode(self, map: u32) -> Self {
                let (flip, sign_dependent) = masks::<$t>(map);
                // Floats: negative ones get every bit flipped (larger magnitude sorts lower),
                // positive ones just the sign bit (above all negatives).
                let sext = (self as $signed >> (<$t>::BITS - 1)) as $t;
                self ^ flip ^ (sext & sign_dependent)
            }

            #[inline(always)]
            fn decode(self, map: u32) -> Self {
                let (flip, sign_dependent) = masks::<$t>(map);
                let descending = if map & DESCENDING != 0 { <$t>::MAX } else { 0 };
                let ordered = self ^ descending;
                let sext = (ordered as $signed >> (<$t>::BITS - 1)) as $t;
                ordered ^ (flip ^ descending) ^ (!sext & sign_dependent)
            }

            #[inline(always)]
            fn complement(self, flip: bool) -> Self {
                self ^ <$t>::from(flip).wrapping_neg()
            }
        }

        impl Masks for $t {
            const SIGN: Self = 1 << (<$t>::BITS - 1);
            const ALL: Self = <$t>::MAX;
        }
    };
}

/// Constants of the branchless maps.
trait Masks: Copy + core::ops::Not<Output = Self> {
    const SIGN: Self;
    const ALL: Self;
}

/// `encode(x) = x ^ flip ^ (sign_extend(x) & sign_dependent)`: the xor masks of `map`, the same
/// for every key of a launch, so the maps have no branches.
#[inline(always)]
fn masks<T: Masks + Default + core::ops::BitXor<Output = T>>(map: u32) -> (T, T) {
    // Selects rather than a `match`, so that a loop over keys has no branches to unswitch and
    // unrolls (its arrays then stay in registers).
    let kind = map & KIND_MASK;
    let flip = if kind == KIND_SIGNED || kind == KIND_FLOAT {
        T::SIGN
    } else {
        T::default()
    };
    let sign_dependent = if kind == KIND_FLOAT {
        !T::SIGN
    } else {
        T::default()
    };
    let descending = if map & DESCENDING != 0 {
        T::ALL
    } else {
        T::default()
    };
    (flip ^ descending, sign_dependent)
}

impl_key_bits!(u32, i32);
impl_key_bits!(u64, i64);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn specials() -> Vec<f32> {
        vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            1.5,
            -1.5,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
        ]
    }

    #[test]
    fn float_map_orders_like_total_cmp_on_special_values() {
        let v = specials();
        for &a in &v {
            for &b in &v {
                let (ea, eb) = (
                    a.to_bits().encode(key_map(KIND_FLOAT, false)),
                    b.to_bits().encode(key_map(KIND_FLOAT, false)),
                );
                assert_eq!(ea.cmp(&eb), a.total_cmp(&b), "{a:?} vs {b:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn maps_round_trip(x: u64, kind in 0u32..3, desc: bool) {
            let map = key_map(kind, desc);
            prop_assert_eq!(x.encode(map).decode(map), x);
            let y = x as u32;
            prop_assert_eq!(y.encode(map).decode(map), y);
        }

        #[test]
        fn signed_map_preserves_order(a: i32, b: i32, desc: bool) {
            let m = key_map(KIND_SIGNED, desc);
            let expected = if desc { b.cmp(&a) } else { a.cmp(&b) };
            prop_assert_eq!((a as u32).encode(m).cmp(&(b as u32).encode(m)), expected);
            let (a64, b64) = (i64::from(a) * 7919, i64::from(b) * 7919);
            let expected = if desc { b64.cmp(&a64) } else { a64.cmp(&b64) };
            prop_assert_eq!((a64 as u64).encode(m).cmp(&(b64 as u64).encode(m)), expected);
        }

        #[test]
        fn float_map_preserves_total_order(a: u32, b: u32, desc: bool) {
            let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
            let m = key_map(KIND_FLOAT, desc);
            let expected = if desc { fb.total_cmp(&fa) } else { fa.total_cmp(&fb) };
            prop_assert_eq!(a.encode(m).cmp(&b.encode(m)), expected);
            let (da, db) = (f64::from(fa) * 3.0, f64::from(fb) * 3.0);
            let expected = if desc { db.total_cmp(&da) } else { da.total_cmp(&db) };
            prop_assert_eq!(da.to_bits().encode(m).cmp(&db.to_bits().encode(m)), expected);
        }
    }
}
