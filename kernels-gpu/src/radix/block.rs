//! What one block of the radix sort does ([`crate::radix`]): count digits, and in a digit pass
//! rank a tile's keys, look back over the tiles before it and scatter. Blocks of at least
//! [`RADIX`] threads, so that thread `d` speaks for digit `d` in the per-digit steps.
//!
//! Its ranking rests on warp matches and shuffles and its look-back on other blocks running at
//! the same time, so it is written thread by thread, as CUDA is, against [`crate::block::simt`]:
//! on the GPU `crate::gpu`'s primitives, on the CPU an emulated launch
//! ([`crate::block::simt::launch`]) whose shared memory panics on a race. The tests run whole
//! sorts on the CPU against std's sort; [`crate::radix::sort_by_passes`] is the reference of
//! the order the passes produce.

use crate::block::simt::{
    atomic_add, block_idx_x, grid_dim_x, lanemask_lt, load, load_relaxed, match_bits, reduce_add,
    shared_atomic_add, shared_reduce_add, shared_window, shared_window_reduce_add, shfl_idx,
    shfl_up, store, store_relaxed, sync_threads, thread_idx_x,
};
use crate::keys::IDENTITY;
use crate::merge::block::unrolled;
use crate::radix::{
    Digits, GatherPassArgs, PassArgs, PassLayout, RADIX, RADIX_BITS, Status, digit, pass_layout,
    passes, tile_keys,
};

/// Counts the digits of every pass of the `n` keys (encoded with `encode`) into `histograms`
/// (`passes × RADIX` words, zeroed before the launch), each block a share of the tiles of
/// `RADIX × ITEMS` keys ([`crate::radix::histogram_tile`]), in `u32` counters of its shared
/// memory.
///
/// # Safety
/// `keys` holds `n` device keys; `histograms` the words above; `shared` is the block's
/// `histogram_shared_bytes` of dynamic shared memory; [`RADIX`] threads per block.
#[inline(always)]
pub unsafe fn histogram<K: Digits, const ITEMS: usize>(
    keys: *const K,
    n: u64,
    encode: u32,
    histograms: *mut u64,
    shared: *mut u32,
) {
    let t = thread_idx_x();
    let digit_passes = passes(size_of::<K>() as u32);
    let words = digit_passes * RADIX;
    // SAFETY: the shared counters hold `words`; the device ranges are the caller's.
    unsafe {
        let mut i = t;
        while i < words {
            store(shared.add(i as usize), 0);
            i += RADIX;
        }
        sync_threads();
        let window = shared_window(shared);
        let count = |key: K, pass: u32| {
            let word = pass * RADIX + digit(key, pass * RADIX_BITS);
            shared_window_reduce_add(window + 4 * word, 1);
        };
        let tile = RADIX as u64 * ITEMS as u64;
        let mut base = u64::from(block_idx_x()) * tile;
        while base < n {
            if n - base >= tile {
                // A whole tile: every load issued before the first count, then the counts pass
                // by pass.
                let src = keys.add((base + u64::from(t)) as usize);
                let mut tile_keys = [K::INFINITY; ITEMS];
                unrolled::<ITEMS>(|k| {
                    tile_keys[k] = (*src.add(k * RADIX as usize)).encode(encode);
                });
                unrolled::<8>(|pass| {
                    if (pass as u32) < digit_passes {
                        unrolled::<ITEMS>(|k| count(tile_keys[k], pass as u32));
                    }
                });
            } else {
                for k in 0..ITEMS as u64 {
                    let i = base + k * u64::from(RADIX) + u64::from(t);
                    if i < n {
                        let key = (*keys.add(i as usize)).encode(encode);
                        for pass in 0..digit_passes {
                            count(key, pass);
                        }
                    }
                }
            }
            base += u64::from(grid_dim_x()) * tile;
        }
        sync_threads();
        let mut i = t;
        while i < words {
            let count = load(shared.add(i as usize));
            if count != 0 {
                reduce_add(histograms.add(i as usize), u64::from(count));
            }
            i += RADIX;
        }
    }
}

/// The buffers and parameters of one digit pass.
#[derive(Clone, Copy)]
pub struct Pass<K, V> {
    /// The keys to place (encoded unless this is the first pass); in a gathered pass, the
    /// caller's keys, which stay where they are.
    pub src_keys: *const K,
    /// Where they go (unused in a gathered pass).
    pub dst_keys: *mut K,
    /// Their values (unused for keys alone); in a gathered pass, the `u32` indices of the
    /// keys in their order before the pass, or null in the first pass (the keys' own order).
    pub src_values: *const V,
    /// Where those go.
    pub dst_values: *mut V,
    /// Keys in all.
    pub n: u64,
    /// This pass's digit counts over all keys (`RADIX` words).
    pub histogram: *const u64,
    /// The status words: `RADIX` per tile.
    pub status: *mut u64,
    /// This pass's tile counter, zero at the launch.
    pub counter: *mut u32,
    /// The digit's lowest bit.
    pub shift: u32,
    /// Key map applied as keys are loaded (the first pass) or `IDENTITY`.
    pub encode: u32,
    /// Key map undone as keys are stored (the last pass) or `IDENTITY`.
    pub decode: u32,
    /// This pass's epoch ([`crate::radix::epoch`]).
    pub epoch: u32,
}

impl<K, V> Pass<K, V> {
    /// The pass a kernel's argument describes.
    pub fn new(args: PassArgs) -> Self {
        Pass {
            src_keys: args.src_keys as *const K,
            dst_keys: args.dst_keys as *mut K,
            src_values: args.src_values as *const V,
            dst_values: args.dst_values as *mut V,
            n: args.n,
            histogram: args.histogram as *const u64,
            status: args.status as *mut u64,
            counter: args.counter as *mut u32,
            shift: args.shift,
            encode: args.encode,
            decode: args.decode,
            epoch: args.epoch,
        }
    }

    /// The gathered pass a kernel's argument describes: the keys stay in place, indices move.
    pub fn gathered(args: GatherPassArgs) -> Self {
        Pass {
            src_keys: args.keys as *const K,
            dst_keys: core::ptr::null_mut(),
            src_values: args.src_indices as *const V,
            dst_values: args.dst_indices as *mut V,
            n: args.n,
            histogram: args.histogram as *const u64,
            status: args.status as *mut u64,
            counter: args.counter as *mut u32,
            shift: args.shift,
            encode: args.encode,
            decode: IDENTITY,
            epoch: args.epoch,
        }
    }
}

/// The block's shared memory in a digit pass, as `pass_shared_bytes` lays it out.
struct Shared<K, V> {
    /// The tile's keys in their sorted order.
    keys: *mut K,
    /// The same bytes, for the tile's values once its keys have gone out.
    values: *mut V,
    /// With [`slots_in_shared`]: per key in load order, its slot in the tile's sorted order.
    slot_of: *mut u16,
    /// With [`slots_in_shared`], once the keys are ranked (the warp counters' bytes): per slot,
    /// its digit.
    digit_of: *mut u8,
    /// Per warp and digit: the warp's count, then the slot of its next key of the digit in the
    /// tile's sorted order.
    warp_counts: *mut u32,
    /// The tile's number, from the pass's counter.
    tile_number: *mut u32,
    /// The pass's digit shift, as the ranking reads it (see [`place_tile`]).
    shift: *mut u32,
    /// Per digit: the global position of the tile's sorted slot 0 for keys of the digit.
    bases: *mut u64,
    /// The block scans' warp sums, two per warp.
    warp_sums: *mut u64,
}

/// Whether a pass of these types keeps its keys' slots and digits in shared memory rather than
/// in registers ([`crate::tuning::radix_pass_slots_in_shared`]).
const fn slots_in_shared<K, V>() -> bool {
    crate::tuning::radix_pass_slots_in_shared(size_of::<K>() as u32, size_of::<V>() as u32)
}

impl<K, V> Shared<K, V> {
    /// # Safety
    /// `shared` is 16-byte aligned and holds `layout`'s bytes, the layout of a pass of `K`
    /// keys with `V` values.
    #[inline(always)]
    unsafe fn new(shared: *mut u8, layout: PassLayout) -> Self {
        // SAFETY: the offsets stay inside the layout; each part is aligned for its type.
        unsafe {
            let at = |offset: u32| shared.add(offset as usize);
            let tile_number = at(layout.tile_number) as *mut u32;
            Shared {
                keys: shared as *mut K,
                values: shared as *mut V,
                slot_of: at(layout.slots) as *mut u16,
                digit_of: at(layout.counts),
                warp_counts: at(layout.counts) as *mut u32,
                tile_number,
                shift: tile_number.add(1),
                bases: at(layout.bases) as *mut u64,
                warp_sums: at(layout.sums) as *mut u64,
            }
        }
    }
}

/// The exclusive prefix sums of `a` and of `b` over the block's threads in order. Every thread
/// of the block calls it.
///
/// # Safety
/// `warp_sums` holds two words per warp of the block (`warps` of them) of shared memory that
/// nothing else uses meanwhile.
#[inline(always)]
unsafe fn block_exclusive_scans(a: u64, b: u64, warps: u32, warp_sums: *mut u64) -> (u64, u64) {
    let (lane, warp) = (thread_idx_x() % 32, thread_idx_x() / 32);
    let (mut sum_a, mut sum_b) = (a, b);
    let mut delta = 1;
    while delta < 32 {
        let (below_a, below_b) = (shfl_up(sum_a, delta), shfl_up(sum_b, delta));
        if lane >= delta {
            sum_a += below_a;
            sum_b += below_b;
        }
        delta *= 2;
    }
    // SAFETY: the caller's contract; the barriers order the writes and reads.
    unsafe {
        if lane == 31 {
            store(warp_sums.add(warp as usize), sum_a);
            store(warp_sums.add((warps + warp) as usize), sum_b);
        }
        sync_threads();
        for w in 0..warp {
            sum_a += load(warp_sums.add(w as usize));
            sum_b += load(warp_sums.add((warps + w) as usize));
        }
        sync_threads();
    }
    (sum_a - a, sum_b - b)
}

/// One tile of a digit pass: the next tile in launch order (from the pass's counter, so that
/// every earlier tile is being or has been worked on by a running block, and the look-back
/// only ever waits on blocks that run), its `ITEMS × THREADS` keys ranked by digit, stably, and
/// stored at their places for this digit.
///
/// # Safety
/// The buffers of `pass` are as its fields say, the destination buffers other than the
/// sources; `shared` is the block's `pass_shared_bytes` of dynamic shared memory (16-byte
/// aligned); `THREADS` threads per block (a multiple of 32, at least [`RADIX`]) and at least
/// `tiles(n, THREADS × ITEMS)` blocks.
///
/// `GATHER`: a pass of an argsort that moves only indices (`V` is `u32`): each key is read
/// from the caller's keys through its index, every pass (encoded with `encode` every pass),
/// and only the indices are stored, so that the sort needs no copy of the keys.
#[inline(always)]
pub unsafe fn digit_pass<
    K: Digits,
    V: Copy + Default,
    const ITEMS: usize,
    const THREADS: u32,
    const GATHER: bool,
>(
    pass: Pass<K, V>,
    shared: *mut u8,
) {
    // The shared memory is laid out for the tile that these types' tuning gives.
    const {
        let (key_bytes, value_bytes) = (size_of::<K>() as u32, size_of::<V>() as u32);
        assert!(THREADS * ITEMS as u32 == tile_keys(key_bytes, value_bytes));
    };
    let (key_bytes, value_bytes) = (size_of::<K>() as u32, size_of::<V>() as u32);
    let t = thread_idx_x();
    let tile_len = THREADS * ITEMS as u32;
    // SAFETY: the layout is the caller's; the counters are the layout's warp counters.
    unsafe {
        let sh = Shared::<K, V>::new(shared, pass_layout(key_bytes, value_bytes));
        if t == 0 {
            store(sh.tile_number, atomic_add(pass.counter, 1));
            store(sh.shift, pass.shift);
        }
        let mut i = t;
        while i < THREADS / 32 * RADIX {
            store(sh.warp_counts.add(i as usize), 0);
            i += THREADS;
        }
        sync_threads();
        let tile = u64::from(load(sh.tile_number));
        sync_threads();
        let len = (pass.n - tile * u64::from(tile_len)).min(u64::from(tile_len)) as u32;
        // Every tile but the last is full: it goes without a bound check per key.
        if len == tile_len {
            place_tile::<K, V, ITEMS, THREADS, true, GATHER>(pass, &sh, tile, len);
        } else {
            place_tile::<K, V, ITEMS, THREADS, false, GATHER>(pass, &sh, tile, len);
        }
    }
}

/// The body of [`digit_pass`] for tile `tile` of `len` keys (`FULL`: all `ITEMS × THREADS`).
///
/// Keys are loaded warp-striped: warp `w` holds the tile's keys `w·32·ITEMS ..`, item `k` of
/// lane `l` being key `w·32·ITEMS + 32k + l`. First each warp counts its keys per digit (a
/// shared-memory add per key), so that the tile's count of each digit is published before any
/// key is ranked and later tiles' look-backs find it early; the counts' scans give each warp,
/// per digit, the first slot of its keys in the tile's sorted order. Then each warp ranks item
/// by item with one match per item (the lanes holding the same digit, found by a ballot per
/// digit bit): the lowest of them adds
/// their number to the warp's slot counter of the digit by an atomic add, whose old value is
/// their first slot, and every key goes to its slot in shared memory at once. Ranking item by
/// item, lanes in order, keeps the order stable. The look-back runs while the keys are in
/// shared memory, then the tile goes out digit run by digit run. Values, as in CUB's
/// Onesweep, follow the keys: loaded after the ranking, put at their keys' slots in the same
/// shared memory once the keys have gone out, and stored to their keys' places, so that a
/// tile with values is as large as one of keys alone of the wider type. Each key's slot and
/// each slot's digit wait in registers, or in shared memory where the values leave no room
/// ([`slots_in_shared`]).
///
/// # Safety
/// As [`digit_pass`]'s, the warp counters zeroed; `len` is the tile's length.
#[inline(always)]
unsafe fn place_tile<
    K: Digits,
    V: Copy + Default,
    const ITEMS: usize,
    const THREADS: u32,
    const FULL: bool,
    const GATHER: bool,
>(
    pass: Pass<K, V>,
    sh: &Shared<K, V>,
    tile: u64,
    len: u32,
) {
    // Slots fit 16 bits; with values, a digit per slot fits the warp counters' bytes.
    const {
        assert!(ITEMS <= 64 && THREADS * ITEMS as u32 <= 1 << 16);
        assert!(!slots_in_shared::<K, V>() || ITEMS <= RADIX as usize / 8);
        assert!(!GATHER || size_of::<V>() == 4);
    };
    let t = thread_idx_x();
    let (lane, warp) = (t % 32, t / 32);
    let warps = THREADS / 32;
    let has_values = size_of::<V>() > 0;
    let slots_in_shared = slots_in_shared::<K, V>();
    let base = tile * u64::from(THREADS * ITEMS as u32);
    let present = |i: u32| FULL || i < len;
    // SAFETY: every index below stays inside its part of the caller's layout, and the device
    // ranges are the pass's.
    unsafe {
        let src_keys = if GATHER {
            pass.src_keys
        } else {
            pass.src_keys.add(base as usize)
        };
        let src_values = pass.src_values.wrapping_add(base as usize);
        // A gathered pass's index of tile key i: the pass before's, or its own place.
        let own_places = GATHER && pass.src_values.is_null();
        let index_of = |i: u32| -> u32 {
            if own_places {
                (base + u64::from(i)) as u32
            } else {
                *(src_values as *const u32).add(i as usize)
            }
        };
        let first = warp * 32 * ITEMS as u32 + lane;
        let mut keys = [K::INFINITY; ITEMS];
        unrolled::<ITEMS>(|k| {
            let i = first + 32 * (k as u32);
            if present(i) {
                let at = if GATHER {
                    index_of(i) as usize
                } else {
                    i as usize
                };
                keys[k] = (*src_keys.add(at)).encode(pass.encode);
            }
        });

        // The warp's count of each digit.
        let counts = sh.warp_counts.add((warp * RADIX) as usize);
        unrolled::<ITEMS>(|k| {
            if present(first + 32 * (k as u32)) {
                shared_reduce_add(counts.add(digit(keys[k], pass.shift) as usize), 1);
            }
        });
        sync_threads();

        // Thread d < RADIX: the tile's count of digit d, published; each warp's first slot for
        // it. The threads past the digits scan zeros after them.
        let d = t;
        let speaks = d < RADIX;
        // (Past the digits, a word never read or written.)
        let word = pass
            .status
            .wrapping_add((tile * u64::from(RADIX) + u64::from(d)) as usize);
        let (mut mine, mut total) = (0, 0);
        if speaks {
            let mut count = 0;
            for w in 0..warps {
                let c = sh.warp_counts.add((w * RADIX + d) as usize);
                let warp_count = load(c);
                store(c, count);
                count += warp_count;
            }
            mine = u64::from(count);
            if tile == 0 {
                store_relaxed(word, Status::Inclusive(mine).encode(pass.epoch));
            } else {
                store_relaxed(word, Status::Aggregate(mine).encode(pass.epoch));
            }
            total = *pass.histogram.add(d as usize);
        }
        let (tile_start, digit_start) = block_exclusive_scans(mine, total, warps, sh.warp_sums);
        if speaks {
            for w in 0..warps {
                let start = tile_start as u32;
                let c = sh.warp_counts.add((w * RADIX + d) as usize);
                store(c, load(c) + start);
            }
        }
        sync_threads();

        // Rank within the warp, item by item, each key straight to its slot.
        let below = lanemask_lt();
        // The shift as shared memory holds it, which the compiler cannot prove equal to the
        // counting's: it recomputes each key's digit from the key here instead of keeping every
        // key's counter address of the counting live through the ranking, 32 registers that
        // under a cap of 80 spill.
        let rank_shift = load(sh.shift);
        let mut slots = Packed::<16>::new();
        unrolled::<ITEMS>(|k| {
            let valid = present(first + 32 * (k as u32));
            // RADIX matches no digit (a ninth bit tells it apart): the lanes past the end rank
            // among themselves, unused. Full tiles have none, and match on the digit's bits.
            let d = if valid {
                digit(keys[k], rank_shift)
            } else {
                RADIX
            };
            let peers = if FULL {
                match_bits::<RADIX_BITS>(d)
            } else {
                match_bits::<{ RADIX_BITS + 1 }>(d)
            };
            let leader = peers.trailing_zeros();
            let mut first_slot = 0;
            if lane == leader && valid {
                first_slot = shared_atomic_add(counts.add(d as usize), peers.count_ones());
            }
            let slot = shfl_idx(first_slot, leader) + (peers & below).count_ones();
            if slots_in_shared {
                let slot = slot as u16;
                store(sh.slot_of.add((first + 32 * k as u32) as usize), slot);
            } else {
                slots.set(k, slot);
            }
            if valid {
                store(sh.keys.add(slot as usize), keys[k]);
            }
        });

        // The values are loaded only now, so that they take no registers while the keys are
        // ranked, and their loads are in flight during the look-back.
        let mut values = [V::default(); ITEMS];
        if has_values {
            unrolled::<ITEMS>(|k| {
                let i = first + 32 * (k as u32);
                if present(i) {
                    values[k] = if own_places {
                        core::mem::transmute_copy::<u32, V>(&index_of(i))
                    } else {
                        *src_values.add(i as usize)
                    };
                }
            });
        }

        // Look back: the digit's keys in the tiles before this one.
        let mut before = 0u64;
        if speaks && tile > 0 {
            let mut j = tile;
            loop {
                j -= 1;
                let other = pass
                    .status
                    .add((j * u64::from(RADIX) + u64::from(d)) as usize);
                let status = loop {
                    let status = Status::decode(load_relaxed(other), pass.epoch);
                    if status != Status::NotReady {
                        break status;
                    }
                };
                match status {
                    Status::Inclusive(c) => {
                        before += c;
                        break;
                    }
                    Status::Aggregate(c) => before += c,
                    Status::NotReady => {}
                }
            }
            store_relaxed(word, Status::Inclusive(before + mine).encode(pass.epoch));
        }
        // Slot s of the tile's sorted order, of digit d, goes to bases[d] + s.
        if speaks {
            let base = (digit_start + before).wrapping_sub(tile_start);
            store(sh.bases.add(d as usize), base);
        }
        sync_threads();

        // Out, digit run by digit run: the keys, then the values through the same shared
        // memory, each to the place of the key that held its slot.
        let mut digits = Packed::<8>::new();
        unrolled::<ITEMS>(|k| {
            let s = t + THREADS * k as u32;
            if present(s) {
                let key = load(sh.keys.add(s as usize));
                let d = digit(key, pass.shift);
                if slots_in_shared {
                    store(sh.digit_of.add(s as usize), d as u8);
                } else {
                    digits.set(k, d);
                }
                if !GATHER {
                    let at = load(sh.bases.add(d as usize)).wrapping_add(u64::from(s));
                    *pass.dst_keys.add(at as usize) = key.decode(pass.decode);
                }
            }
        });
        if has_values {
            sync_threads();
            unrolled::<ITEMS>(|k| {
                if present(first + 32 * (k as u32)) {
                    let slot = if slots_in_shared {
                        u32::from(load(sh.slot_of.add((first + 32 * k as u32) as usize)))
                    } else {
                        slots.get(k)
                    };
                    store(sh.values.add(slot as usize), values[k]);
                }
            });
            sync_threads();
            unrolled::<ITEMS>(|k| {
                let s = t + THREADS * k as u32;
                if present(s) {
                    let d = if slots_in_shared {
                        u32::from(load(sh.digit_of.add(s as usize)))
                    } else {
                        digits.get(k)
                    };
                    let at = load(sh.bases.add(d as usize)).wrapping_add(u64::from(s));
                    *pass.dst_values.add(at as usize) = load(sh.values.add(s as usize));
                }
            });
        }
    }
}

/// Up to 64 fields of `BITS` bits (8 or 16), packed `32 / BITS` to a word. Indexed by constants
/// (the unrolled items), the words stay in registers and those never set are never allocated:
/// a thread holds its keys' slots (below 2^16) and digits beside its values in a half and a
/// quarter of the registers they would take one to a word.
#[derive(Clone, Copy)]
pub(crate) struct Packed<const BITS: u32>([u32; 32]);

impl<const BITS: u32> Packed<BITS> {
    const PER_WORD: usize = (32 / BITS) as usize;

    #[inline(always)]
    pub(crate) fn new() -> Self {
        const { assert!(BITS == 8 || BITS == 16) };
        Packed([0; 32])
    }

    /// Sets field `k`, unset so far, to `value` (below 2^`BITS`).
    #[inline(always)]
    pub(crate) fn set(&mut self, k: usize, value: u32) {
        self.0[k / Self::PER_WORD] |= value << (BITS * (k % Self::PER_WORD) as u32);
    }

    #[inline(always)]
    pub(crate) fn get(&self, k: usize) -> u32 {
        (self.0[k / Self::PER_WORD] >> (BITS * (k % Self::PER_WORD) as u32)) & ((1 << BITS) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::simt::{Grid, launch, races};
    use crate::block::{check_key_maps, xorshift};
    use crate::keys::{KIND_FLOAT, KIND_SIGNED, KeyBits, key_map};
    use crate::radix::{
        HISTOGRAM_MAX_BLOCKS, epoch, histogram_items, histogram_shared_bytes, histogram_tile,
        items_per_thread, pass_shared_bytes, pass_threads, sort_by_passes, tiles,
    };

    /// Keys of the histogram kernels, as `radix_histogram_*` instantiates their block code.
    trait Key: Digits + Ord + core::fmt::Debug {
        fn from_bits(bits: u64) -> Self;
        /// # Safety
        /// As [`histogram`]'s.
        unsafe fn histogram(
            keys: *const Self,
            n: u64,
            encode: u32,
            out: *mut u64,
            shared: *mut u32,
        );
    }

    macro_rules! key {
        ($key:ty) => {
            impl Key for $key {
                fn from_bits(bits: u64) -> Self {
                    bits as $key
                }
                unsafe fn histogram(
                    keys: *const Self,
                    n: u64,
                    encode: u32,
                    out: *mut u64,
                    shared: *mut u32,
                ) {
                    const ITEMS: usize = histogram_items(size_of::<$key>() as u32) as usize;
                    // SAFETY: the caller's contract.
                    unsafe { histogram::<$key, ITEMS>(keys, n, encode, out, shared) }
                }
            }
        };
    }
    key!(u32);
    key!(u64);

    /// The digit pass of keys `Self` with values `V` (`GATHER`: the gathered pass, `V` its
    /// `u32` indices), as `radix_pass_*` or `radix_gather_pass_*` instantiates it.
    trait Kernel<V, const GATHER: bool>: Key {
        /// # Safety
        /// As [`digit_pass`]'s.
        unsafe fn pass(pass: Pass<Self, V>, shared: *mut u8);
    }

    macro_rules! kernel {
        ($key:ty, $value:ty, $gather:literal) => {
            impl Kernel<$value, $gather> for $key {
                unsafe fn pass(pass: Pass<Self, $value>, shared: *mut u8) {
                    const KEY: u32 = size_of::<$key>() as u32;
                    const VALUE: u32 = size_of::<$value>() as u32;
                    const ITEMS: usize = items_per_thread(KEY, VALUE) as usize;
                    const THREADS: u32 = pass_threads(KEY, VALUE);
                    // SAFETY: the caller's contract.
                    unsafe { digit_pass::<$key, $value, ITEMS, THREADS, $gather>(pass, shared) }
                }
            }
        };
    }
    kernel!(u32, (), false);
    kernel!(u32, u32, false);
    kernel!(u32, u64, false);
    kernel!(u32, u128, false);
    kernel!(u64, (), false);
    kernel!(u64, u32, false);
    kernel!(u64, u64, false);
    kernel!(u64, u128, false);
    kernel!(u32, u32, true);
    kernel!(u64, u32, true);

    /// Values that travel with the keys: each key's original position, spread over every
    /// byte of the value, so that the order of equal keys (stability) shows.
    trait Value: Copy + Default + PartialEq + core::fmt::Debug {
        fn at(i: usize) -> Self;
    }
    impl Value for () {
        fn at(_: usize) -> Self {}
    }
    impl Value for u32 {
        fn at(i: usize) -> Self {
            i as u32
        }
    }
    impl Value for u64 {
        fn at(i: usize) -> Self {
            i as u64 * 0x1_0000_0001
        }
    }
    impl Value for u128 {
        fn at(i: usize) -> Self {
            i as u128 * (1 << 96 | 1 << 64 | 1 << 32 | 1)
        }
    }

    /// How the keys of a test spread over the digits.
    #[derive(Clone, Copy, Debug)]
    enum Spread {
        /// Every bit random.
        Random,
        /// Three values apart in every digit.
        Few,
        /// One value.
        Equal,
        /// Random bits shifted right by a random amount: the high digits mostly zero, so that
        /// a pass finds most keys in one digit.
        Skewed,
    }

    fn keys<K: Key>(n: usize, spread: Spread, seed: u64) -> Vec<K> {
        let mut next = xorshift(seed);
        let few = [
            0x0123_4567_89ab_cdef,
            0xfedc_ba98_7654_3210,
            0x8000_0000_8000_0001,
        ];
        (0..n)
            .map(|_| {
                K::from_bits(match spread {
                    Spread::Random => next(),
                    Spread::Few => few[(next() % 3) as usize],
                    Spread::Equal => 0x5a5a_5a5a_5a5a_5a5a,
                    Spread::Skewed => next() >> (next() % 64),
                })
            })
            .collect()
    }

    /// The histogram's blocks in the host's launch for `n` keys of `key_bytes`.
    fn histogram_blocks(n: usize, key_bytes: u32) -> u32 {
        (n as u64)
            .div_ceil(u64::from(histogram_tile(key_bytes)))
            .min(u64::from(HISTOGRAM_MAX_BLOCKS)) as u32
    }

    /// The histogram launch of `keys` on `blocks` blocks, all running at once.
    fn histograms<K: Key>(keys: &[K], encode: u32, blocks: u32) -> Vec<u64> {
        let kb = size_of::<K>() as u32;
        let mut out = vec![0u64; (passes(kb) * RADIX) as usize];
        let grid = Grid {
            blocks,
            threads: RADIX,
            shared_bytes: histogram_shared_bytes(kb),
            together: blocks,
        };
        let (at, n) = (out.as_mut_ptr(), keys.len() as u64);
        // SAFETY: the keys are only read; the counts only added to, atomically.
        unsafe {
            launch(grid, |th| {
                K::histogram(keys.as_ptr(), n, encode, at, th.shared() as *mut u32)
            })
        };
        out
    }

    /// The grid of a digit pass over `n` keys, its blocks `together` at a time (all: 0).
    fn pass_grid<K, V>(n: u64, together: u32) -> Grid {
        let (kb, vb) = (size_of::<K>() as u32, size_of::<V>() as u32);
        let blocks = tiles(n, tile_keys(kb, vb)) as u32;
        Grid {
            blocks,
            threads: pass_threads(kb, vb),
            shared_bytes: pass_shared_bytes(kb, vb),
            together: if together == 0 { blocks } else { together },
        }
    }

    /// Launches the digit pass of `args` as the host does, its blocks `together` at a time
    /// (all: 0).
    ///
    /// # Safety
    /// The addresses of `args` hold what [`PassArgs`] says.
    unsafe fn launch_pass<K: Kernel<V, false>, V: Value>(args: PassArgs, together: u32) {
        let pass = Pass::<K, V>::new(args);
        // SAFETY: the pass's buffers hold n keys and values each, sources and destinations
        // apart, each place of a destination written once; the counter and the status words
        // are touched only through atomics.
        unsafe {
            launch(pass_grid::<K, V>(args.n, together), |th| {
                K::pass(pass, th.shared())
            })
        };
    }

    /// The launches of the host's radix sort of `keys` and `values` (more than one), key map
    /// `map`: the histogram, then a digit pass per digit back and forth between two buffers,
    /// the status words zeroed once, the passes' blocks `together` at a time (all: 0).
    fn radix_sort<K: Kernel<V, false>, V: Value>(
        keys: &[K],
        values: &[V],
        map: u32,
        together: u32,
    ) -> (Vec<K>, Vec<V>) {
        let (kb, vb) = (size_of::<K>() as u32, size_of::<V>() as u32);
        let n = keys.len();
        let digits = passes(kb);
        let histograms = histograms(keys, map, histogram_blocks(n, kb));
        let blocks = tiles(n as u64, tile_keys(kb, vb)) as u32;
        let mut status = vec![0u64; (blocks * RADIX) as usize];
        let mut counters = vec![0u32; digits as usize];
        let mut key_buffers = [keys.to_vec(), vec![K::INFINITY; n]];
        let mut value_buffers = [values.to_vec(), vec![V::default(); n]];
        for pass in 0..digits {
            let (src, dst) = (pass as usize % 2, (pass as usize + 1) % 2);
            let args = PassArgs {
                src_keys: key_buffers[src].as_ptr() as u64,
                dst_keys: key_buffers[dst].as_mut_ptr() as u64,
                src_values: value_buffers[src].as_ptr() as u64,
                dst_values: value_buffers[dst].as_mut_ptr() as u64,
                n: n as u64,
                histogram: histograms[(pass * RADIX) as usize..].as_ptr() as u64,
                status: status.as_mut_ptr() as u64,
                counter: &mut counters[pass as usize] as *mut u32 as u64,
                shift: pass * RADIX_BITS,
                encode: if pass == 0 { map } else { IDENTITY },
                decode: if pass + 1 == digits { map } else { IDENTITY },
                epoch: epoch(pass),
            };
            // SAFETY: the buffers of the arguments hold n keys and values each.
            unsafe { launch_pass::<K, V>(args, together) };
        }
        assert!(counters.iter().all(|&c| c == blocks), "a tile per block");
        // An even number of passes: the sorted keys and values are back in the first buffers.
        let [keys, _] = key_buffers;
        let [values, _] = value_buffers;
        (keys, values)
    }

    /// The launches of the host's argsort of `keys` that moves only indices (the gathered
    /// passes), key map `map`, the blocks all at once.
    fn radix_argsort<K: Kernel<u32, true>>(keys: &[K], map: u32) -> Vec<u32> {
        let kb = size_of::<K>() as u32;
        let n = keys.len();
        let digits = passes(kb);
        let histograms = histograms(keys, map, histogram_blocks(n, kb));
        let blocks = tiles(n as u64, tile_keys(kb, 4)) as u32;
        let mut status = vec![0u64; (blocks * RADIX) as usize];
        let mut counters = vec![0u32; digits as usize];
        let mut buffers = [vec![u32::MAX; n], vec![u32::MAX; n]];
        let grid = pass_grid::<K, u32>(n as u64, 0);
        for pass in 0..digits {
            let (src, dst) = (pass as usize % 2, (pass as usize + 1) % 2);
            let args = GatherPassArgs {
                keys: keys.as_ptr() as u64,
                src_indices: if pass == 0 {
                    0
                } else {
                    buffers[src].as_ptr() as u64
                },
                dst_indices: buffers[dst].as_mut_ptr() as u64,
                n: n as u64,
                histogram: histograms[(pass * RADIX) as usize..].as_ptr() as u64,
                status: status.as_mut_ptr() as u64,
                counter: &mut counters[pass as usize] as *mut u32 as u64,
                shift: pass * RADIX_BITS,
                encode: map,
                epoch: epoch(pass),
            };
            let pass = Pass::<K, u32>::gathered(args);
            // SAFETY: as in `radix_sort`; the keys are only read.
            unsafe { launch(grid, |th| K::pass(pass, th.shared())) };
        }
        let [indices, _] = buffers;
        indices
    }

    /// Sorts `keys` with their positions as values of type `V` and checks both against std's
    /// stable sort.
    fn check_sort<K: Kernel<V, false>, V: Value>(keys: &[K], together: u32) {
        let n = keys.len();
        let values: Vec<V> = (0..n).map(V::at).collect();
        let (sorted, moved) = radix_sort(keys, &values, IDENTITY, together);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| keys[i]);
        let what = || {
            format!(
                "{n} keys of {} bytes, values of {}",
                size_of::<K>(),
                size_of::<V>()
            )
        };
        assert!(
            sorted.iter().zip(&order).all(|(&k, &i)| k == keys[i]),
            "keys, {}",
            what()
        );
        assert!(
            moved.iter().zip(&order).all(|(&v, &i)| v == V::at(i)),
            "values, {}",
            what()
        );
    }

    #[test]
    fn the_histogram_counts_every_digit_of_every_pass() {
        fn check<K: Key>(n: usize, map: u32, blocks: u32) {
            let keys: Vec<K> = keys(n, Spread::Random, n as u64 + 1);
            let counts = histograms(&keys, map, blocks);
            let kb = size_of::<K>() as u32;
            let mut want = vec![0u64; (passes(kb) * RADIX) as usize];
            for &key in &keys {
                for pass in 0..passes(kb) {
                    want[(pass * RADIX + digit(key.encode(map), pass * RADIX_BITS)) as usize] += 1;
                }
            }
            assert_eq!(counts, want, "{n} keys of {kb} bytes, {blocks} blocks");
        }
        let float_descending = key_map(KIND_FLOAT, true);
        for n in [2, 33, 3 * histogram_tile(4) as usize + 5] {
            check::<u32>(n, IDENTITY, histogram_blocks(n, 4));
            check::<u64>(n, key_map(KIND_SIGNED, false), histogram_blocks(n, 8));
        }
        // Fewer blocks than rounds of keys: each block strides over several.
        check::<u32>(5 * histogram_tile(4) as usize + 7, float_descending, 2);
    }

    #[test]
    fn key_maps_apply_on_the_first_load_and_undo_on_the_last_store() {
        let mut next = xorshift(11);
        check_key_maps(
            3000,
            &mut next,
            |keys, map| {
                let (sorted, _) = radix_sort::<u32, ()>(keys, &vec![(); keys.len()], map, 1);
                keys.copy_from_slice(&sorted);
            },
            |keys, map| {
                let (sorted, _) = radix_sort::<u64, ()>(keys, &vec![(); keys.len()], map, 1);
                keys.copy_from_slice(&sorted);
            },
        );
    }

    #[test]
    fn every_width_sorts_alone_and_with_values() {
        // Two thirds of a tile: the sorts of several tiles are below, and every width's full
        // tiles in `a_pass_places_keys_stably_at_every_length_around_the_tiles`.
        fn check<K: Kernel<V, false>, V: Value>() {
            let n = tile_keys(size_of::<K>() as u32, size_of::<V>() as u32) as usize * 2 / 3;
            check_sort::<K, V>(&keys(n, Spread::Random, n as u64), 1);
        }
        check::<u32, ()>();
        check::<u32, u32>();
        check::<u32, u64>();
        check::<u32, u128>();
        check::<u64, ()>();
        check::<u64, u32>();
        check::<u64, u64>();
        check::<u64, u128>();
    }

    /// One pass at `shift` of `n` keys of `K` with their positions as values of `V`, against
    /// a stable counting sort by the digit.
    fn check_pass<K: Kernel<V, false>, V: Value>(n: usize, shift: u32) {
        let keys: Vec<K> = keys(n, Spread::Random, n as u64 + u64::from(shift));
        let values: Vec<V> = (0..n).map(V::at).collect();
        let mut histogram = [0u64; RADIX as usize];
        for &key in &keys {
            histogram[digit(key, shift) as usize] += 1;
        }
        let mut status = vec![0u64; (pass_grid::<K, V>(n as u64, 1).blocks * RADIX) as usize];
        let (mut counter, mut dst_keys) = (0u32, vec![K::INFINITY; n]);
        let mut dst_values = vec![V::default(); n];
        let args = PassArgs {
            src_keys: keys.as_ptr() as u64,
            dst_keys: dst_keys.as_mut_ptr() as u64,
            src_values: values.as_ptr() as u64,
            dst_values: dst_values.as_mut_ptr() as u64,
            n: n as u64,
            histogram: histogram.as_ptr() as u64,
            status: status.as_mut_ptr() as u64,
            counter: &mut counter as *mut u32 as u64,
            shift,
            encode: IDENTITY,
            decode: IDENTITY,
            epoch: epoch(shift / RADIX_BITS),
        };
        // SAFETY: the buffers hold n keys and values, the status words every tile's.
        unsafe { launch_pass::<K, V>(args, 1) };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| digit(keys[i], shift));
        let what = || {
            format!(
                "{n} keys of {} bytes, values of {}",
                size_of::<K>(),
                size_of::<V>()
            )
        };
        let placed = order.iter().map(|&i| keys[i]).collect::<Vec<_>>();
        assert!(dst_keys == placed, "keys, {}", what());
        let moved = order.iter().map(|&i| V::at(i)).collect::<Vec<_>>();
        assert!(dst_values == moved, "values, {}", what());
    }

    #[test]
    fn a_pass_places_keys_stably_at_every_length_around_the_tiles() {
        fn full_tile_and_one<K: Kernel<V, false>, V: Value>(shift: u32) {
            let tile = tile_keys(size_of::<K>() as u32, size_of::<V>() as u32) as usize;
            check_pass::<K, V>(tile + 1, shift);
        }
        full_tile_and_one::<u32, ()>(0);
        full_tile_and_one::<u32, u32>(8);
        full_tile_and_one::<u32, u64>(16);
        full_tile_and_one::<u32, u128>(24);
        full_tile_and_one::<u64, ()>(32);
        full_tile_and_one::<u64, u32>(40);
        full_tile_and_one::<u64, u64>(48);
        full_tile_and_one::<u64, u128>(56);
        // Partial warps and tiles, in the blocks of 256 threads of 32 keys and of 384 of 14.
        for n in [
            2,
            31,
            32,
            33,
            tile_keys(4, 0) as usize - 1,
            tile_keys(4, 0) as usize,
        ] {
            check_pass::<u32, ()>(n, 8);
        }
        for n in [
            2,
            31,
            32,
            33,
            tile_keys(8, 8) as usize - 1,
            tile_keys(8, 8) as usize,
        ] {
            check_pass::<u64, u64>(n, 40);
        }
    }

    #[test]
    fn few_equal_and_skewed_keys_sort_stably() {
        // The tiles of 16-byte values, the smallest: a full one and a partial one.
        let n = tile_keys(4, 16) as usize * 4 / 3;
        for spread in [Spread::Few, Spread::Equal, Spread::Skewed] {
            check_sort::<u32, u128>(&keys(n, spread, 3), 1);
        }
        let n = tile_keys(8, 16) as usize - 100;
        check_sort::<u64, u128>(&keys(n, Spread::Skewed, 5), 1);
    }

    #[test]
    fn blocks_running_at_once_sort() {
        // A tile's look-back may find the tile before it with its own count only (an
        // aggregate) and go on to the one before that, or wait for it. (Blocks run one after
        // another in the other tests, where every count a look-back finds is inclusive.)
        let n = 3 * tile_keys(4, 16) as usize - 5;
        check_sort::<u32, u128>(&keys(n, Spread::Random, 9), 0);
    }

    #[test]
    fn the_look_back_adds_aggregates_until_an_inclusive_count() {
        // Three tiles, of which only the last is placed: tile 0 published its count (an
        // inclusive one), tile 1 its own for the even digits (aggregates) and the sum of both
        // for the odd ones.
        let tile = tile_keys(4, 0) as usize;
        let n = 2 * tile + 1000;
        let keys: Vec<u32> = keys(n, Spread::Random, 13);
        let shift = 16;
        let counts = |range: core::ops::Range<usize>| {
            let mut counts = [0u64; RADIX as usize];
            for &key in &keys[range] {
                counts[digit(key, shift) as usize] += 1;
            }
            counts
        };
        let (histogram, tile0, tile1) = (counts(0..n), counts(0..tile), counts(tile..2 * tile));
        let e = epoch(2);
        let mut status = vec![0u64; 3 * RADIX as usize];
        for d in 0..RADIX as usize {
            status[d] = Status::Inclusive(tile0[d]).encode(e);
            status[RADIX as usize + d] = if d % 2 == 0 {
                Status::Aggregate(tile1[d])
            } else {
                Status::Inclusive(tile0[d] + tile1[d])
            }
            .encode(e);
        }
        let (mut counter, mut dst) = (2u32, vec![u32::MAX; n]);
        let args = PassArgs {
            src_keys: keys.as_ptr() as u64,
            dst_keys: dst.as_mut_ptr() as u64,
            src_values: 0,
            dst_values: 0,
            n: n as u64,
            histogram: histogram.as_ptr() as u64,
            status: status.as_mut_ptr() as u64,
            counter: &mut counter as *mut u32 as u64,
            shift,
            encode: IDENTITY,
            decode: IDENTITY,
            epoch: e,
        };
        let pass = Pass::<u32, ()>::new(args);
        let grid = Grid {
            blocks: 1,
            ..pass_grid::<u32, ()>(n as u64, 1)
        };
        // SAFETY: the buffers hold n keys; the block places the last tile's.
        unsafe {
            launch(grid, |th| {
                <u32 as Kernel<(), false>>::pass(pass, th.shared())
            })
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| digit(keys[i], shift));
        for (place, &i) in order.iter().enumerate() {
            if i >= 2 * tile {
                assert_eq!(dst[place], keys[i], "key {i} at {place}");
            }
        }
        for d in 0..RADIX as usize {
            let word = status[2 * RADIX as usize + d];
            let inclusive = tile0[d] + tile1[d] + counts(2 * tile..n)[d];
            assert_eq!(Status::decode(word, e), Status::Inclusive(inclusive));
        }
    }

    #[test]
    fn the_gathered_passes_argsort_keys_read_in_place() {
        // A full tile and a partial one of 4-byte keys as f32 descending.
        let n = tile_keys(4, 4) as usize * 4 / 3;
        let keys32: Vec<u32> = keys(n, Spread::Skewed, 15);
        let map = key_map(KIND_FLOAT, true);
        let encoded: Vec<u32> = keys32.iter().map(|k| k.encode(map)).collect();
        let order: Vec<u32> = sort_by_passes(&encoded).iter().map(|&i| i as u32).collect();
        assert_eq!(radix_argsort(&keys32, map), order, "{n} u32 keys");
        // A partial tile of 8-byte keys as i64.
        let n = tile_keys(8, 4) as usize - 7;
        let keys64: Vec<u64> = keys(n, Spread::Random, 17);
        let map = key_map(KIND_SIGNED, false);
        let encoded: Vec<u64> = keys64.iter().map(|k| k.encode(map)).collect();
        let order: Vec<u32> = sort_by_passes(&encoded).iter().map(|&i| i as u32).collect();
        assert_eq!(radix_argsort(&keys64, map), order, "{n} u64 keys");
    }

    #[test]
    fn the_race_check_catches_each_missing_barrier_that_orders_shared_memory() {
        // The first pass over one partial tile of 4-byte keys with 4-byte values, whose slots
        // and digits wait in shared memory, with one of its barriers dropped at a time.
        let n = 3000;
        let keys: Vec<u32> = keys(n, Spread::Random, 19);
        let values: Vec<u32> = (0..n as u32).collect();
        let histogram = histograms(&keys, IDENTITY, 1);
        let caught: Vec<bool> = (0..9)
            .map(|barrier| {
                let mut status = vec![0u64; RADIX as usize];
                let (mut counter, mut dst_keys, mut dst_values) = (0u32, vec![0; n], vec![0; n]);
                let args = PassArgs {
                    src_keys: keys.as_ptr() as u64,
                    dst_keys: dst_keys.as_mut_ptr() as u64,
                    src_values: values.as_ptr() as u64,
                    dst_values: dst_values.as_mut_ptr() as u64,
                    n: n as u64,
                    histogram: histogram.as_ptr() as u64,
                    status: status.as_mut_ptr() as u64,
                    counter: &mut counter as *mut u32 as u64,
                    shift: 0,
                    encode: IDENTITY,
                    decode: IDENTITY,
                    epoch: epoch(0),
                };
                let pass = Pass::<u32, u32>::new(args);
                races(|| {
                    // SAFETY: as in `launch_pass`.
                    unsafe {
                        launch(pass_grid::<u32, u32>(n as u64, 1), |th| {
                            th.drop_barriers(barrier, u32::MAX);
                            <u32 as Kernel<u32, false>>::pass(pass, th.shared())
                        })
                    }
                })
            })
            .collect();
        // The second barrier (after the tile's number is read) and the scans' second (after
        // the warps' sums are read, in a pass that scans once) order no shared memory here.
        let needed = [true, false, true, true, false, true, true, true, true];
        assert_eq!(caught, needed, "barriers whose loss is caught");

        let caught: Vec<bool> = (0..2)
            .map(|barrier| {
                races(|| {
                    let kb = 4;
                    let mut out = vec![0u64; (passes(kb) * RADIX) as usize];
                    let grid = Grid {
                        blocks: 1,
                        threads: RADIX,
                        shared_bytes: histogram_shared_bytes(kb),
                        together: 1,
                    };
                    let (at, keys) = (out.as_mut_ptr(), keys.as_ptr());
                    // SAFETY: as in `histograms`.
                    unsafe {
                        launch(grid, |th| {
                            th.drop_barriers(barrier, u32::MAX);
                            let shared = th.shared() as *mut u32;
                            u32::histogram(keys, n as u64, IDENTITY, at, shared)
                        })
                    }
                })
            })
            .collect();
        assert_eq!(caught, [true, true], "the histogram's barriers");
    }

    #[test]
    fn packed_fields_keep_every_value_apart() {
        let mut slots = Packed::<16>::new();
        let mut digits = Packed::<8>::new();
        for k in 0..64 {
            slots.set(k, (k as u32 * 1021 + 7) & 0xffff);
            digits.set(k, (k as u32 * 37 + 255) & 0xff);
        }
        for k in 0..64 {
            assert_eq!(slots.get(k), (k as u32 * 1021 + 7) & 0xffff, "slot {k}");
            assert_eq!(digits.get(k), (k as u32 * 37 + 255) & 0xff, "digit {k}");
        }
        let mut edges = Packed::<16>::new();
        edges.set(0, 0xffff);
        edges.set(1, 0);
        edges.set(2, 1);
        assert_eq!((edges.get(0), edges.get(1), edges.get(2)), (0xffff, 0, 1));
    }
}
