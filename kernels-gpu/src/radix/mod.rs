//! Pure index math of the least-significant-digit radix sort (Onesweep: Adinets and Merrill,
//! "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022): digits, tiles, the
//! look-back's status words and the scratch layout. Also compiled and tested on the host, with
//! [`sort_by_passes`], the CPU reference of the passes' order.
//!
//! The sort runs one launch that counts every digit of every pass (the histogram), then one
//! launch per digit, least significant first. In a digit pass each block takes the next tile
//! from a counter, ranks its keys by digit (stably: by position within the tile), publishes
//! its per-digit counts, adds the counts of the tiles before it by *decoupled look-back* over
//! their status words, and scatters its keys to their final places for this digit. Every key
//! moves once per pass, reading and writing it once: the passes run at the memory's pace.

pub mod block;
#[cfg(target_arch = "nvptx64")]
mod kernels;

use crate::args::Addr;
use crate::keys::KeyBits;

/// Bits per digit.
pub const RADIX_BITS: u32 = 8;
/// Digits per pass (2^[`RADIX_BITS`]). The histogram's blocks have this many threads, and the
/// first this many threads of a digit pass's block ([`pass_threads`]) speak for one digit
/// each in the per-digit scans and the look-back.
pub const RADIX: u32 = 1 << RADIX_BITS;

/// Digit passes of keys of `key_bytes` bytes.
///
/// ```
/// assert_eq!(kernels_gpu::radix::passes(4), 4);
/// assert_eq!(kernels_gpu::radix::passes(8), 8);
/// ```
pub const fn passes(key_bytes: u32) -> u32 {
    key_bytes * 8 / RADIX_BITS
}

/// Keys a thread of a digit pass ranks for keys of `key_bytes` with values of `value_bytes`
/// ([`crate::tuning::radix_pass_items`]).
///
/// ```
/// use kernels_gpu::radix::{items_per_thread, pass_shared_bytes};
/// assert_eq!(items_per_thread(4, 0), 32);
/// assert_eq!(items_per_thread(8, 8), 14);
/// assert!(pass_shared_bytes(8, 8) <= 64 * 1024);
/// assert!(pass_shared_bytes(8, 16) <= 64 * 1024);
/// ```
pub const fn items_per_thread(key_bytes: u32, value_bytes: u32) -> u32 {
    crate::tuning::radix_pass_items(key_bytes, value_bytes)
}

/// Threads per block of a digit pass for keys of `key_bytes` with values of `value_bytes`
/// ([`crate::tuning::radix_pass_threads`]): at least [`RADIX`], a whole number of warps.
///
/// ```
/// use kernels_gpu::radix::{RADIX, pass_threads};
/// assert_eq!(pass_threads(4, 4), RADIX);
/// assert_eq!(pass_threads(8, 0), RADIX);
/// assert_eq!(pass_threads(8, 8), 384);
/// ```
pub const fn pass_threads(key_bytes: u32, value_bytes: u32) -> u32 {
    let threads = crate::tuning::radix_pass_threads(key_bytes, value_bytes);
    assert!(threads >= RADIX && threads % 32 == 0);
    threads
}

/// Warps per block of a digit pass.
pub const fn pass_warps(key_bytes: u32, value_bytes: u32) -> u32 {
    pass_threads(key_bytes, value_bytes) / 32
}

/// Keys per tile of a digit pass.
pub const fn tile_keys(key_bytes: u32, value_bytes: u32) -> u32 {
    pass_threads(key_bytes, value_bytes) * items_per_thread(key_bytes, value_bytes)
}

crate::args::kernel_args! { $
    /// The argument of the histogram kernels (`radix_histogram_*`).
    pub struct HistogramArgs, entry histogram_entry {
        /// The `n` keys.
        pub keys: Addr,
        /// The counts: [`passes`] × [`RADIX`] `u64` words, zero at the launch.
        pub histograms: Addr,
        /// Keys in all.
        pub n: u64,
        /// The key map applied to each key before its digits are counted.
        pub encode: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the digit passes (`radix_pass_*`): one digit of every key places it,
    /// stably, from the source buffers into the destinations.
    pub struct PassArgs, entry pass_entry {
        /// The `n` keys to place.
        pub src_keys: Addr,
        /// Where they go, apart from `src_keys`.
        pub dst_keys: Addr,
        /// Their values (unused for keys alone).
        pub src_values: Addr,
        /// Where those go.
        pub dst_values: Addr,
        /// Keys in all.
        pub n: u64,
        /// This pass's digit counts over all keys ([`RADIX`] `u64` words).
        pub histogram: Addr,
        /// The status words: [`RADIX`] `u64` per tile, zeroed once per sort.
        pub status: Addr,
        /// This pass's tile counter (a `u32`), zero at the launch.
        pub counter: Addr,
        /// The digit's lowest bit.
        pub shift: u32,
        /// Key map applied as keys are loaded (the first pass) or `IDENTITY`.
        pub encode: u32,
        /// Key map undone as keys are stored (the last pass) or `IDENTITY`.
        pub decode: u32,
        /// This pass's [`epoch`].
        pub epoch: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the digit passes of an argsort that moves only indices
    /// (`radix_gather_pass_*`): each key, read in place through its index, places its index.
    pub struct GatherPassArgs, entry gather_pass_entry {
        /// The `n` keys, read and never written.
        pub keys: Addr,
        /// The `u32` indices of the keys in their order before the pass, or 0 in the first pass
        /// (the keys' own order).
        pub src_indices: Addr,
        /// Where the indices go, apart from `src_indices`.
        pub dst_indices: Addr,
        /// Keys in all.
        pub n: u64,
        /// As in [`PassArgs`].
        pub histogram: Addr,
        /// As in [`PassArgs`].
        pub status: Addr,
        /// As in [`PassArgs`].
        pub counter: Addr,
        /// The digit's lowest bit.
        pub shift: u32,
        /// Key map applied as keys are loaded.
        pub encode: u32,
        /// This pass's [`epoch`].
        pub epoch: u32,
    }
}

/// Byte offsets of the parts of a digit-pass block's shared memory. The tile's keys, in their
/// sorted order, start at 0; once they have gone out, the same bytes hold its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassLayout {
    /// A `u16` slot per key, in load order, where the pass keeps its slots in shared memory
    /// ([`crate::tuning::radix_pass_slots_in_shared`]); no bytes otherwise.
    pub slots: u32,
    /// Per warp, a `u32` counter per digit; where the slots are in shared memory, the same
    /// bytes hold a digit per slot (a byte each) once the keys are ranked.
    pub counts: u32,
    /// The tile's number and the pass's shift (`u32`s, in 16 bytes, which keep what follows
    /// aligned).
    pub tile_number: u32,
    /// Per digit, the global position of its first key (`u64`).
    pub bases: u32,
    /// The block scans' two sums per warp (`u64`).
    pub sums: u32,
    /// All of it.
    pub bytes: u32,
}

/// The shared memory of a digit-pass block for keys of `key_bytes` with values of
/// `value_bytes`.
///
/// ```
/// use kernels_gpu::radix::pass_layout;
/// let l = pass_layout(4, 4);
/// assert_eq!((l.slots, l.counts, l.tile_number), (32768, 49152, 57344));
/// assert_eq!((l.bases, l.sums, l.bytes), (57360, 59408, 59536));
/// assert_eq!(pass_layout(4, 0).counts, pass_layout(4, 0).slots);
/// ```
pub const fn pass_layout(key_bytes: u32, value_bytes: u32) -> PassLayout {
    let tile = tile_keys(key_bytes, value_bytes);
    let warps = pass_warps(key_bytes, value_bytes);
    let widest = crate::tuning::radix_item_bytes(key_bytes, value_bytes);
    let slots = (tile * widest).next_multiple_of(16);
    let counts = slots
        + if crate::tuning::radix_pass_slots_in_shared(key_bytes, value_bytes) {
            (tile * 2).next_multiple_of(16)
        } else {
            0
        };
    let tile_number = counts + warps * RADIX * 4;
    let bases = tile_number + 16;
    let sums = bases + RADIX * 8;
    PassLayout {
        slots,
        counts,
        tile_number,
        bases,
        sums,
        bytes: sums + 2 * warps * 8,
    }
}

/// Dynamic shared memory of a digit-pass block, in bytes ([`pass_layout`]).
///
/// ```
/// use kernels_gpu::radix::pass_shared_bytes;
/// assert_eq!(pass_shared_bytes(4, 0), 8192 * 4 + 8 * 256 * 4 + 16 + 256 * 8 + 2 * 8 * 8);
/// assert_eq!(pass_shared_bytes(4, 4), 8192 * 4 + 8192 * 2 + 8 * 256 * 4 + 16 + 256 * 8 + 2 * 8 * 8);
/// ```
pub const fn pass_shared_bytes(key_bytes: u32, value_bytes: u32) -> u32 {
    pass_layout(key_bytes, value_bytes).bytes
}

/// Dynamic shared memory of a histogram block: a `u32` counter per digit of every pass.
pub const fn histogram_shared_bytes(key_bytes: u32) -> u32 {
    passes(key_bytes) * RADIX * 4
}

/// Keys of `key_bytes` bytes a histogram thread loads per round of its grid-stride loop, all
/// before it counts any, so that they are in flight together: 64 bytes, 16 registers, which
/// leave the histogram at [`crate::tuning::RADIX_HISTOGRAM_MAX_REGISTERS`].
///
/// ```
/// use kernels_gpu::radix::histogram_items;
/// assert_eq!((histogram_items(4), histogram_items(8)), (16, 8));
/// ```
pub const fn histogram_items(key_bytes: u32) -> u32 {
    64 / key_bytes
}

/// Keys a histogram block counts per round of its grid-stride loop.
pub const fn histogram_tile(key_bytes: u32) -> u32 {
    RADIX * histogram_items(key_bytes)
}

/// Most blocks of the histogram launch: enough to fill any device (eight blocks of [`RADIX`]
/// threads fill a multiprocessor), and few enough that a block counts at most
/// 2^39 / 1024 = 2^29 keys, which its `u32` counters hold.
pub const HISTOGRAM_MAX_BLOCKS: u32 = 1024;

/// Digit `shift / RADIX_BITS` of (encoded) key bits.
///
/// ```
/// use kernels_gpu::radix::digit;
/// assert_eq!(digit(0x1234_5678u32, 8), 0x56);
/// assert_eq!(digit(0xab00_0000_0000_0000u64, 56), 0xab);
/// ```
#[inline(always)]
pub fn digit<K: Digits>(key: K, shift: u32) -> u32 {
    key.digit(shift)
}

/// Key bits whose digits a pass sorts by.
pub trait Digits: KeyBits {
    /// The [`RADIX_BITS`] bits at `shift`.
    fn digit(self, shift: u32) -> u32;
}

impl Digits for u32 {
    #[inline(always)]
    fn digit(self, shift: u32) -> u32 {
        (self >> shift) & (RADIX - 1)
    }
}

impl Digits for u64 {
    #[inline(always)]
    fn digit(self, shift: u32) -> u32 {
        ((self >> shift) as u32) & (RADIX - 1)
    }
}

/// A tile's status word for one digit, as the look-back reads it: the pass's epoch (so that a
/// word left by an earlier pass reads as not ready, and the words need zeroing once per sort,
/// not per pass), whether the count is the tile's own (*aggregate*) or includes every tile
/// before it (*inclusive*), and the count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Nothing published in this pass yet.
    NotReady,
    /// The tile's own count of the digit.
    Aggregate(u64),
    /// The count of the digit in this tile and all before it.
    Inclusive(u64),
}

/// Bits of a status word's count: enough for any length the sorts take (2^39 keys).
pub const STATUS_COUNT_BITS: u32 = 54;
const FLAG_AGGREGATE: u64 = 1 << 62;
const FLAG_INCLUSIVE: u64 = 2 << 62;
const EPOCH_MASK: u64 = 0xff << STATUS_COUNT_BITS;
const COUNT_MASK: u64 = (1 << STATUS_COUNT_BITS) - 1;

/// The epoch of digit pass `pass` (1, 2, ...; 0 is the zeroed word).
pub const fn epoch(pass: u32) -> u32 {
    pass + 1
}

impl Status {
    /// The word that publishes `self` in the pass of `epoch`.
    ///
    /// ```
    /// use kernels_gpu::radix::Status;
    /// let word = Status::Inclusive(12345).encode(3);
    /// assert_eq!(Status::decode(word, 3), Status::Inclusive(12345));
    /// assert_eq!(Status::decode(word, 4), Status::NotReady);
    /// assert_eq!(Status::decode(0, 1), Status::NotReady);
    /// ```
    #[inline(always)]
    pub fn encode(self, epoch: u32) -> u64 {
        let stamp = u64::from(epoch) << STATUS_COUNT_BITS;
        match self {
            Status::NotReady => 0,
            Status::Aggregate(count) => FLAG_AGGREGATE | stamp | (count & COUNT_MASK),
            Status::Inclusive(count) => FLAG_INCLUSIVE | stamp | (count & COUNT_MASK),
        }
    }

    /// What `word` says in the pass of `epoch`.
    #[inline(always)]
    pub fn decode(word: u64, epoch: u32) -> Status {
        if (word & EPOCH_MASK) >> STATUS_COUNT_BITS != u64::from(epoch) {
            return Status::NotReady;
        }
        let count = word & COUNT_MASK;
        match word >> 62 {
            1 => Status::Aggregate(count),
            2 => Status::Inclusive(count),
            _ => Status::NotReady,
        }
    }
}

/// Tiles of a digit pass over `n` keys.
pub const fn tiles(n: u64, tile: u32) -> u64 {
    n.div_ceil(tile as u64)
}

/// Where a radix sort of `n` keys of `key_bytes` with values of `value_bytes` keeps its
/// scratch, as byte offsets into one device allocation: the second key buffer, the second
/// value buffer, the histograms (`u64` per digit per pass), the tile counters (`u32` per
/// pass), and the status words (`u64` per digit per tile). Everything from `histograms` on is
/// zeroed once per sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scratch {
    /// The keys' second buffer.
    pub keys: u64,
    /// The values' second buffer.
    pub values: u64,
    /// `passes × RADIX` counts.
    pub histograms: u64,
    /// `passes` tile counters.
    pub counters: u64,
    /// `tiles × RADIX` status words.
    pub status: u64,
    /// Bytes in all.
    pub bytes: u64,
}

impl Scratch {
    /// The layout for `n` keys (offsets aligned to 256 bytes).
    ///
    /// ```
    /// use kernels_gpu::radix::Scratch;
    /// let s = Scratch::new(4096, 4, 0);
    /// assert_eq!((s.keys, s.values, s.histograms), (0, 16384, 16384));
    /// assert_eq!(s.bytes - s.status, 256 * 8); // one tile of status words
    /// ```
    pub const fn new(n: u64, key_bytes: u32, value_bytes: u32) -> Scratch {
        Scratch::laid_out(n, key_bytes, n * key_bytes as u64, value_bytes)
    }

    /// The layout of an argsort that moves only its `u32` indices (the gathered passes): no
    /// second buffer of keys (`keys` and `values` both at 0), tiles as for keys with `u32`
    /// values.
    ///
    /// ```
    /// use kernels_gpu::radix::{Scratch, tile_keys, tiles};
    /// let s = Scratch::gathered(1 << 20, 8);
    /// assert_eq!((s.keys, s.values, s.histograms), (0, 0, 4 << 20));
    /// assert_eq!(s.bytes - s.status, tiles(1 << 20, tile_keys(8, 4)) * 256 * 8);
    /// ```
    pub const fn gathered(n: u64, key_bytes: u32) -> Scratch {
        Scratch::laid_out(n, key_bytes, 0, 4)
    }

    /// The layout for `n` keys of `key_bytes` with values of `value_bytes`, the keys' second
    /// buffer `key_buffer` bytes.
    const fn laid_out(n: u64, key_bytes: u32, key_buffer: u64, value_bytes: u32) -> Scratch {
        const fn align(x: u64) -> u64 {
            x.next_multiple_of(256)
        }
        let keys = 0;
        let values = align(keys + key_buffer);
        let histograms = align(values + n * value_bytes as u64);
        let counters = histograms + (passes(key_bytes) * RADIX) as u64 * 8;
        let status = align(counters + passes(key_bytes) as u64 * 4);
        let tiles = tiles(n, tile_keys(key_bytes, value_bytes));
        let bytes = status + tiles * RADIX as u64 * 8;
        Scratch {
            keys,
            values,
            histograms,
            counters,
            status,
            bytes,
        }
    }
}

/// The CPU reference of what the passes do: a stable counting sort by each digit in turn,
/// least significant first, as each pass's tiles, ranks and look-back place the keys. Returns
/// the permutation (the input position of each output).
///
/// ```
/// use kernels_gpu::radix::sort_by_passes;
/// let keys = [0x0201u32, 0x0102, 0x0201, 0x0001];
/// assert_eq!(sort_by_passes(&keys), [3, 1, 0, 2]);
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn sort_by_passes<K: Digits>(keys: &[K]) -> Vec<usize> {
    let bits = (size_of::<K>() * 8) as u32;
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let mut shift = 0;
    while shift < bits {
        let mut start = [0usize; RADIX as usize + 1];
        for &i in &order {
            start[digit(keys[i], shift) as usize + 1] += 1;
        }
        for d in 1..=RADIX as usize {
            start[d] += start[d - 1];
        }
        let mut next = vec![0; keys.len()];
        for &i in &order {
            let d = digit(keys[i], shift) as usize;
            next[start[d]] = i;
            start[d] += 1;
        }
        order = next;
        shift += RADIX_BITS;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_round_trip_and_ignore_other_passes() {
        for pass in 0..8 {
            let e = epoch(pass);
            for count in [0, 1, 4096, (1 << 39) + 17, COUNT_MASK] {
                for status in [Status::Aggregate(count), Status::Inclusive(count)] {
                    let word = status.encode(e);
                    assert_eq!(Status::decode(word, e), status);
                    assert_eq!(Status::decode(word, e + 1), Status::NotReady);
                }
            }
            assert_eq!(Status::decode(0, e), Status::NotReady);
        }
    }

    #[test]
    fn the_reference_is_a_stable_sort_for_every_width() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let keys: Vec<u64> = (0..5000).map(|_| next() % 3000).collect();
        let order = sort_by_passes(&keys);
        let mut want: Vec<usize> = (0..keys.len()).collect();
        want.sort_by_key(|&i| keys[i]);
        assert_eq!(order, want);
        let keys32: Vec<u32> = keys
            .iter()
            .map(|&k| (k as u32).wrapping_mul(2654435761))
            .collect();
        let order = sort_by_passes(&keys32);
        let mut want: Vec<usize> = (0..keys32.len()).collect();
        want.sort_by_key(|&i| keys32[i]);
        assert_eq!(order, want);
    }

    #[test]
    fn scratch_holds_every_part_in_order() {
        for (kb, vb) in [(4, 0), (4, 4), (8, 8), (8, 16), (4, 16)] {
            for n in [0u64, 1, 4095, 4096, 4097, 1 << 20, (1 << 20) + 3] {
                let s = Scratch::new(n, kb, vb);
                assert!(s.values >= s.keys + n * u64::from(kb));
                assert!(s.histograms >= s.values + n * u64::from(vb));
                assert_eq!(s.counters - s.histograms, u64::from(passes(kb) * RADIX) * 8);
                assert!(s.status >= s.counters + u64::from(passes(kb)) * 4);
                let t = tiles(n, tile_keys(kb, vb));
                assert_eq!(s.bytes, s.status + t * u64::from(RADIX) * 8);
                assert_eq!(s.status % 8, 0);
            }
        }
    }

    #[test]
    fn a_tile_fits_the_64_kib_every_device_gives() {
        for (kb, vb) in [
            (4, 0),
            (4, 4),
            (4, 8),
            (4, 16),
            (8, 0),
            (8, 4),
            (8, 8),
            (8, 16),
        ] {
            let bytes = pass_shared_bytes(kb, vb);
            assert!(bytes <= 64 * 1024, "{kb} {vb}: {bytes}");
            // The tiles grow with the items' registers: no item takes fewer than 8 per thread.
            assert!(items_per_thread(kb, vb) >= 8, "{kb} {vb}");
        }
    }
}
