//! What one block of the radix sort does ([`crate::radix`]): count digits, and in a digit pass
//! rank a tile's keys, look back over the tiles before it and scatter. Blocks of at least
//! [`RADIX`] threads, so that thread `d` speaks for digit `d` in the per-digit steps.
//!
//! Unlike the other block code this is written for the GPU alone: its ranking rests on warp
//! matches and shuffles and its look-back on other blocks running at the same time. The GPU
//! tests check it against std's sort; [`crate::radix::sort_by_passes`] is the reference of the
//! order it produces.

use crate::gpu::{
    atomic_add, block_idx_x, grid_dim_x, lanemask_lt, load_relaxed, match_bits, reduce_add,
    shared_atomic_add, shared_reduce_add, shared_window, shared_window_reduce_add, shfl_idx,
    shfl_up, store_relaxed, sync_threads, thread_idx_x,
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
            *shared.add(i as usize) = 0;
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
            let count = *shared.add(i as usize);
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
            *warp_sums.add(warp as usize) = sum_a;
            *warp_sums.add((warps + warp) as usize) = sum_b;
        }
        sync_threads();
        for w in 0..warp {
            sum_a += *warp_sums.add(w as usize);
            sum_b += *warp_sums.add((warps + w) as usize);
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
            *sh.tile_number = atomic_add(pass.counter, 1);
            *sh.shift = pass.shift;
        }
        let mut i = t;
        while i < THREADS / 32 * RADIX {
            *sh.warp_counts.add(i as usize) = 0;
            i += THREADS;
        }
        sync_threads();
        let tile = u64::from(*sh.tile_number);
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
                let warp_count = *c;
                *c = count;
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
                *sh.warp_counts.add((w * RADIX + d) as usize) += tile_start as u32;
            }
        }
        sync_threads();

        // Rank within the warp, item by item, each key straight to its slot.
        let below = lanemask_lt();
        // The shift as shared memory holds it, which the compiler cannot prove equal to the
        // counting's: it recomputes each key's digit from the key here instead of keeping every
        // key's counter address of the counting live through the ranking, 32 registers that
        // under a cap of 80 spill.
        let rank_shift = *sh.shift;
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
                *sh.slot_of.add((first + 32 * k as u32) as usize) = slot as u16;
            } else {
                slots.set(k, slot);
            }
            if valid {
                *sh.keys.add(slot as usize) = keys[k];
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
            *sh.bases.add(d as usize) = (digit_start + before).wrapping_sub(tile_start);
        }
        sync_threads();

        // Out, digit run by digit run: the keys, then the values through the same shared
        // memory, each to the place of the key that held its slot.
        let mut digits = Packed::<8>::new();
        unrolled::<ITEMS>(|k| {
            let s = t + THREADS * k as u32;
            if present(s) {
                let key = *sh.keys.add(s as usize);
                let d = digit(key, pass.shift);
                if slots_in_shared {
                    *sh.digit_of.add(s as usize) = d as u8;
                } else {
                    digits.set(k, d);
                }
                if !GATHER {
                    let at = (*sh.bases.add(d as usize)).wrapping_add(u64::from(s));
                    *pass.dst_keys.add(at as usize) = key.decode(pass.decode);
                }
            }
        });
        if has_values {
            sync_threads();
            unrolled::<ITEMS>(|k| {
                if present(first + 32 * (k as u32)) {
                    let slot = if slots_in_shared {
                        u32::from(*sh.slot_of.add((first + 32 * k as u32) as usize))
                    } else {
                        slots.get(k)
                    };
                    *sh.values.add(slot as usize) = values[k];
                }
            });
            sync_threads();
            unrolled::<ITEMS>(|k| {
                let s = t + THREADS * k as u32;
                if present(s) {
                    let d = if slots_in_shared {
                        u32::from(*sh.digit_of.add(s as usize))
                    } else {
                        digits.get(k)
                    };
                    let at = (*sh.bases.add(d as usize)).wrapping_add(u64::from(s));
                    *pass.dst_values.add(at as usize) = *sh.values.add(s as usize);
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
    use super::Packed;

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
