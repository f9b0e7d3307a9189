//! Keys to and from little-endian bytes, the byte order of every file gpusort reads and writes.

use crate::keys::SortKey;

/// A key type with a little-endian byte form: the six [`SortKey`] types. The bound of
/// [`KeyFile::read_keys`](super::KeyFile::read_keys) and
/// [`AtomicOutput::write_keys`](super::AtomicOutput::write_keys).
///
/// # Examples
///
/// ```
/// use gpusort_cli::files::LeKey;
///
/// let mut bytes = [0u8; 4];
/// (-2.0f32).write_le(&mut bytes);
/// assert_eq!(bytes, (-2.0f32).to_le_bytes());
/// assert_eq!(f32::from_le(&bytes), -2.0);
/// assert_eq!(<u64 as LeKey>::SIZE, 8);
/// ```
pub trait LeKey: SortKey {
    /// Bytes per key.
    const SIZE: usize;
    /// The key whose little-endian bytes are `bytes` (exactly [`LeKey::SIZE`] of them).
    ///
    /// # Panics
    /// If `bytes` is not [`LeKey::SIZE`] bytes long.
    fn from_le(bytes: &[u8]) -> Self;
    /// Writes the key's little-endian bytes to `out` (exactly [`LeKey::SIZE`] of them).
    ///
    /// # Panics
    /// If `out` is not [`LeKey::SIZE`] bytes long.
    fn write_le(self, out: &mut [u8]);
}

macro_rules! impl_le_key {
    ($($t:ty),*) => {$(
        impl LeKey for $t {
            const SIZE: usize = size_of::<$t>();
            #[inline]
            fn from_le(bytes: &[u8]) -> Self {
                let mut array = [0; size_of::<$t>()];
                array.copy_from_slice(bytes);
                <$t>::from_le_bytes(array)
            }
            #[inline]
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

impl_le_key!(u32, i32, f32, u64, i64, f64);

/// The bytes of `keys` as they lie in memory: their little-endian bytes on a little-endian
/// target, so that files are read into and written from the keys themselves, without a copy.
pub(crate) fn bytes_of<K: LeKey>(keys: &[K]) -> &[u8] {
    // SAFETY: the six key types are plain numbers without padding; the view covers exactly
    // the slice, which it borrows.
    unsafe { std::slice::from_raw_parts(keys.as_ptr().cast::<u8>(), size_of_val(keys)) }
}

/// [`bytes_of`], to write into: any bytes make valid keys.
pub(crate) fn bytes_of_mut<K: LeKey>(keys: &mut [K]) -> &mut [u8] {
    // SAFETY: as in `bytes_of`; every bit pattern is a valid key of the six types.
    unsafe { std::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<u8>(), size_of_val(keys)) }
}

/// Turns keys whose memory holds their little-endian bytes into the keys: nothing to do on a
/// little-endian target.
pub(crate) fn from_le_in_place<K: LeKey>(keys: &mut [K]) {
    if cfg!(target_endian = "big") {
        for key in keys {
            *key = K::from_le(bytes_of(std::slice::from_ref(key)));
        }
    }
}

/// `len` zeroed keys, or `None` if the allocation fails: zeroed memory comes from the system
/// as untouched pages, so that reading into it writes each byte once.
pub(crate) fn zeroed_keys<K: LeKey>(len: usize) -> Option<Vec<K>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<K>(len).ok()?;
    // SAFETY: the layout is not zero-sized.
    let ptr = crate::memory::fallible(|| unsafe { std::alloc::alloc_zeroed(layout) });
    if ptr.is_null() {
        return None;
    }
    // SAFETY: allocated by the global allocator with the layout of `len` keys, which zero
    // bytes make valid.
    Some(unsafe { Vec::from_raw_parts(ptr.cast::<K>(), len, len) })
}

/// Appends the keys in `bytes` (a whole number of keys) to `keys`.
#[cfg(test)]
fn decode_into<K: LeKey>(bytes: &[u8], keys: &mut Vec<K>) {
    keys.extend(bytes.chunks_exact(K::SIZE).map(K::from_le));
}

/// Replaces the contents of `bytes` with the little-endian bytes of `keys`.
pub(crate) fn encode_into<K: LeKey>(keys: &[K], bytes: &mut Vec<u8>) {
    bytes.clear();
    bytes.resize(keys.len() * K::SIZE, 0);
    for (out, &key) in bytes.chunks_exact_mut(K::SIZE).zip(keys) {
        key.write_le(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_key_type() {
        fn round_trip<K: LeKey>(keys: &[K]) {
            let mut bytes = Vec::new();
            encode_into(keys, &mut bytes);
            assert_eq!(bytes.len(), keys.len() * K::SIZE);
            let mut back: Vec<K> = Vec::new();
            decode_into(&bytes, &mut back);
            assert_eq!(back.len(), keys.len());
            assert!(
                back.iter()
                    .zip(keys)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
        }
        round_trip(&[0u32, 1, u32::MAX]);
        round_trip(&[i32::MIN, -1, 7]);
        round_trip(&[f32::NAN, -0.0, 1.5]);
        round_trip(&[u64::MAX, 3]);
        round_trip(&[i64::MIN, -2]);
        round_trip(&[f64::NEG_INFINITY, -0.0, f64::NAN]);
    }

    #[test]
    fn keys_read_in_place_are_the_keys() {
        let keys = [0x0102_0304u32, u32::MAX, 7];
        let mut bytes = Vec::new();
        encode_into(&keys, &mut bytes);
        let mut read: Vec<u32> = zeroed_keys(3).unwrap();
        assert_eq!(read, [0, 0, 0]);
        bytes_of_mut(&mut read).copy_from_slice(&bytes);
        from_le_in_place(&mut read);
        assert_eq!(read, keys);
        let floats = [-0.0f64, f64::NAN];
        let mut bytes = Vec::new();
        encode_into(&floats, &mut bytes);
        let mut in_memory = floats;
        from_le_in_place(&mut in_memory);
        if cfg!(target_endian = "little") {
            assert_eq!(bytes_of(&in_memory), &bytes[..]);
        }
        assert!(zeroed_keys::<u64>(0).unwrap().is_empty());
    }

    #[test]
    fn bytes_are_little_endian() {
        let mut bytes = Vec::new();
        encode_into(&[0x0102_0304u32], &mut bytes);
        assert_eq!(bytes, [4, 3, 2, 1]);
    }
}
