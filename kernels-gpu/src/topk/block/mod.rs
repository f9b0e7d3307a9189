//! What one block of a top-k round does ([`crate::topk`]): stream its part of a segment once,
//! keeping the k smallest items (key, position) seen in shared memory, and write them out.
//!
//! The block keeps, in shared memory, its running top-k (sorted, [`padded_k`] slots) and a
//! candidate buffer ([`candidate_slots`]). Tile by tile, each thread loads its keys (four
//! 16-byte vectors, all in flight at once; predicated loads key by key for a part's last tile
//! or a part off a 16-byte boundary) and keeps those not above the *bound*: the running k-th
//! smallest item, or less. The test is first on the key alone (one compare per key); only keys
//! at or below the bound's key build their item. A thread holds one bit per kept key, not the
//! keys (the networks below need the registers): it loads the kept ones again and appends them
//! to the candidate buffer at slots from a shared counter, one atomic add for all of them (the
//! order of the buffer does not matter). A tile that keeps nothing costs its loads, a compare
//! per key and one barrier. When the buffer fills, it is sorted and merged into the running
//! top-k: `min(top[i], candidates[kp − 1 − i])` is a bitonic sequence of the kp smallest of
//! both (Batcher's merge), which half-cleaners sort. The bound then tightens to the new k-th
//! item. Keys that find the buffer full stay pending and are offered again, against the new
//! bound, after the merge, so any input is selected correctly; sorted input that keeps every
//! key costs a sort per buffer.
//!
//! The sorts and half-cleaners are bitonic networks over items held in registers, `len /
//! THREADS` per thread (at least one, [`network_per_thread`]): steps within a thread compare its
//! registers, steps within a warp exchange registers between lanes (shuffles), and only the
//! steps across warps go through shared memory, a barrier each. A buffer of 2048 items takes 10
//! barriers instead of its network's 66 steps.
//!
//! The first tile of a part bounds itself: each thread gives the minima of
//! [`samples_per_thread`] groups of its keys, the block sorts these samples (as many as the
//! buffer's slots) and takes the k-th smallest as the bound, since k items of the part do not
//! exceed it. On uniform keys the tile then keeps k or a few more for k ≤ 64, about 340 of its
//! 4096 keys for k = 256 and 1200 for k = 1024; a short row (one tile) is left with one sort of
//! its candidates and one merge.
//!
//! The block code is generic over [`Counting`] and [`Lanes`] (a [`Block`] with shared-memory
//! atomic adds and warp shuffles), so the tests run it on the CPU with
//! [`CpuBlock`](crate::block::CpuBlock) (the counter is then a plain add, and a shuffle reads
//! the other units' registers as they were: its units run one at a time).

pub mod digits;
pub mod rows;

use crate::block::{Block, L2_LINE_BYTES, Regs};
use crate::merge::block::unrolled;
use crate::topk::{
    Lane, NETWORK_REGISTERS, NO_INDEX, Round, THREADS, TopKey, VECTOR_BYTES, candidate_slots,
    network_per_thread, padded_k, samples_per_thread, shared_layout, tile_position,
};

/// A [`Block`] whose threads can add to a shared-memory counter atomically.
pub trait Counting: Block {
    /// Adds `value` to the counter at `at` (shared memory) atomically among the block's
    /// threads; returns its value before.
    ///
    /// # Safety
    /// `at` is a valid, aligned `u32` of the block's shared memory.
    unsafe fn fetch_add(&self, at: *mut u32, value: u32) -> u32;

    /// Adds `value` to the counter at `at` in device memory, atomically among every block.
    ///
    /// # Safety
    /// `at` is a valid, aligned `u32` of device memory.
    unsafe fn add_global(&self, at: *mut u32, value: u32);

    /// [`Counting::fetch_add`] whose old value is not needed.
    ///
    /// # Safety
    /// As [`Counting::fetch_add`].
    #[inline(always)]
    unsafe fn add(&self, at: *mut u32, value: u32) {
        // SAFETY: the caller's contract.
        unsafe { self.fetch_add(at, value) };
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl Counting for crate::block::CpuBlock {
    unsafe fn fetch_add(&self, at: *mut u32, value: u32) -> u32 {
        // SAFETY: the caller's contract; units run one after another.
        unsafe {
            let old = *at;
            *at = old.wrapping_add(value);
            old
        }
    }

    unsafe fn add_global(&self, at: *mut u32, value: u32) {
        // SAFETY: the caller's contract; blocks run one after another.
        unsafe { self.fetch_add(at, value) };
    }
}

#[cfg(target_arch = "nvptx64")]
impl<const T: u32> Counting for crate::gpu::CudaBlock<T> {
    #[inline(always)]
    unsafe fn fetch_add(&self, at: *mut u32, value: u32) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { crate::gpu::shared_atomic_add(at, value) }
    }

    #[inline(always)]
    unsafe fn add_global(&self, at: *mut u32, value: u32) {
        // SAFETY: the caller's contract.
        unsafe { crate::gpu::atomic_add(at, value) };
    }

    #[inline(always)]
    unsafe fn add(&self, at: *mut u32, value: u32) {
        // SAFETY: the caller's contract.
        unsafe { crate::gpu::shared_reduce_add(at, value) }
    }
}

/// A [`Block`] of [`THREADS`] units whose threads exchange registers with the other lanes of
/// their warp.
pub trait Lanes: Block {
    /// Runs `f(u, mine, theirs)` for every unit `u` of the block: `mine` is item `r` of unit
    /// `u`'s value in `regs`, `theirs` item `r` of unit `u ^ lane_mask`'s (`lane_mask < 32`: the
    /// same warp) as it was before the call. Every thread of the block calls it (no
    /// divergence).
    fn exchange<I: Lane, const V: usize>(
        &self,
        regs: &mut Self::Regs<[I; V]>,
        r: usize,
        lane_mask: u32,
        f: impl FnMut(u32, &mut I, I),
    );
}

#[cfg(not(target_arch = "nvptx64"))]
impl Lanes for crate::block::CpuBlock {
    fn exchange<I: Lane, const V: usize>(
        &self,
        regs: &mut Vec<[I; V]>,
        r: usize,
        lane_mask: u32,
        mut f: impl FnMut(u32, &mut I, I),
    ) {
        assert!(
            lane_mask < 32 && regs.len() == THREADS as usize,
            "exchanges stay in the warps of a whole block"
        );
        let before: Vec<I> = regs.iter().map(|mine| mine[r]).collect();
        for (u, mine) in regs.iter_mut().enumerate() {
            f(u as u32, &mut mine[r], before[u ^ lane_mask as usize]);
        }
    }
}

#[cfg(target_arch = "nvptx64")]
impl Lanes for crate::gpu::CudaBlock<THREADS> {
    #[inline(always)]
    fn exchange<I: Lane, const V: usize>(
        &self,
        regs: &mut crate::block::One<[I; V]>,
        r: usize,
        lane_mask: u32,
        mut f: impl FnMut(u32, &mut I, I),
    ) {
        let theirs = regs.0[r].shfl_xor(lane_mask);
        f(crate::gpu::thread_idx_x(), &mut regs.0[r], theirs)
    }
}

/// The buffers and shape of one round ([`crate::topk::Round`]), as its kernel takes them.
#[derive(Clone, Copy)]
pub struct Args<K> {
    /// The round's input: `segments × len` keys, segment after segment.
    pub keys: *const K,
    /// Their indices within their segment ([`NO_INDEX`]: no key, whose key is then
    /// `K::INFINITY`), or null: a key's index is its position in its segment (the first round).
    pub indices: *const u64,
    /// Where the candidates go: `segments × parts × k` keys, part after part.
    pub out_keys: *mut K,
    /// Their indices within their segment ([`NO_INDEX`] where a part had fewer than k keys).
    pub out_indices: *mut u64,
    /// The round's shape.
    pub round: Round,
    /// Keys selected per part, `1 ..= MAX_K`.
    pub k: u32,
    /// Key map applied as the keys are loaded (the first round) or `IDENTITY`.
    pub encode: u32,
    /// Key map undone as the keys are stored (the last round) or `IDENTITY`.
    pub decode: u32,
}

/// The block's shared memory, as [`shared_layout`] lays it out.
struct Shared<I> {
    top: *mut I,
    candidates: *mut I,
    bound: *mut I,
    counters: *mut u32,
}

/// One part's input and output.
struct Part<K> {
    keys: *const K,
    indices: *const u64,
    len: u32,
    first_index: u64,
    out_keys: *mut K,
    out_indices: *mut u64,
}

/// A thread's items of a bitonic network ([`network`]).
type Net<I> = [I; NETWORK_REGISTERS];

/// Runs the parts `first, first + step, …` of a round (`step` = the launch's blocks), each as
/// [`select`] does.
///
/// # Safety
/// The buffers of `args` hold what their fields say; `shared` is 16-byte aligned and holds
/// `shared_bytes(size_of::<K>(), args.k)` bytes used by this block alone; the block has
/// [`THREADS`] threads; `ITEMS` is `items_per_thread(size_of::<K>())`.
#[inline(always)]
pub unsafe fn select_parts<K: TopKey, B: Counting + Lanes, const ITEMS: usize>(
    block: &B,
    shared: *mut u8,
    args: &Args<K>,
    first: u64,
    step: u64,
) {
    let mut b = first;
    while b < args.round.blocks() {
        if b != first {
            // The last part's write-out read the running top-k.
            block.sync();
        }
        // SAFETY: the caller's contract; block b's part lies inside the round.
        unsafe {
            let part = Part::of(args, b);
            select::<K, B, ITEMS>(block, shared, &part, args.k, args.encode, args.decode);
        }
        b += step;
    }
}

impl<K> Part<K> {
    /// Part `b` of the round of `args` (segment `b / parts`, its part `b % parts`).
    ///
    /// # Safety
    /// The buffers of `args` hold what their fields say; `b` is below the round's blocks.
    #[inline(always)]
    unsafe fn of(args: &Args<K>, b: u64) -> Part<K> {
        let r = args.round;
        // At least 1 (the plan's), said so that the division has no check.
        let parts = r.parts.max(1);
        let (segment, p) = (b / parts, b % parts);
        let (start, end) = r.part(p);
        let input = segment * r.len + start;
        let output = b * u64::from(args.k);
        // SAFETY: the caller's contract; the part lies inside its segment, and its k outputs
        // inside the round's output.
        unsafe {
            Part {
                keys: args.keys.add(input as usize),
                indices: if args.indices.is_null() {
                    args.indices
                } else {
                    args.indices.add(input as usize)
                },
                len: (end - start) as u32,
                first_index: start,
                out_keys: args.out_keys.add(output as usize),
                out_indices: args.out_indices.add(output as usize),
            }
        }
    }
}

/// Selects the `k` smallest items of one part and writes their keys (through the inverse of
/// `decode`) and indices, smallest first; slots past the part's keys get [`NO_INDEX`].
///
/// # Safety
/// As [`select_parts`], for the part.
#[inline(always)]
unsafe fn select<K: TopKey, B: Counting + Lanes, const ITEMS: usize>(
    block: &B,
    shared: *mut u8,
    part: &Part<K>,
    k: u32,
    encode: u32,
    decode: u32,
) {
    let none = K::NONE;
    let nt = THREADS;
    let key_bytes = size_of::<K>() as u32;
    let (kp, slots) = (padded_k(k), candidate_slots(k));
    let [top, candidates, bound_at, counters] = shared_layout(key_bytes, k);
    // SAFETY: the regions of the caller's shared memory.
    let sh = unsafe {
        Shared {
            top: shared.add(top as usize) as *mut K::Item,
            candidates: shared.add(candidates as usize) as *mut K::Item,
            bound: shared.add(bound_at as usize) as *mut K::Item,
            counters: shared.add(counters as usize) as *mut u32,
        }
    };
    // SAFETY (every block below): indices stay inside their shared regions (top < kp,
    // candidates < slots, counters < 3), and inside the part (< len); a vector load reads a
    // whole tile's 16-byte aligned vector.
    block.units(kp, |u| unsafe { *sh.top.add(u as usize) = none });
    block.units(slots, |u| unsafe { *sh.candidates.add(u as usize) = none });
    block.units(3, |u| unsafe { *sh.counters.add(u as usize) = 0 });
    block.sync();

    // Block-uniform: every thread computes them alike from shared memory read after a barrier.
    let mut count = 0u32; // keys in the candidate buffer (more when it overflowed)
    let mut bound = none; // no item above it is among the part's k smallest
    let mut round = 0u32; // appends so far: its counter is `round % 3`
    // A thread's keys of the tile still to go into the candidate buffer, one bit per key. The
    // keys themselves are not held across barriers (the networks need the registers): the
    // few kept ones are read again.
    let mut pending = block.regs(nt, 0u32);
    let mut net = block.regs(nt, [none; NETWORK_REGISTERS]);
    let tile = nt * ITEMS as u32;
    let aligned = (part.keys as usize).is_multiple_of(VECTOR_BYTES as usize);
    let position = |u: u32, q: usize| tile_position(key_bytes, u, q as u32);
    let mut base = 0u32;
    while base < part.len {
        // Computed afresh from k in each tile rather than held in registers throughout.
        let k = block.opaque(k);
        let (kp, slots) = (padded_k(k), candidate_slots(k));
        if base == 0 {
            // The part's first tile: the k-th smallest of the threads' samples bounds it.
            let m = samples_per_thread(k) as usize;
            block.units(nt, |u| {
                let u = block.opaque(u);
                let mut keys = [K::INFINITY; ITEMS];
                // SAFETY: the tile's keys inside the part.
                let present =
                    unsafe { load_tile::<K, B, ITEMS>(block, part, u, base, aligned, &mut keys) };
                let mut level = [none; ITEMS];
                unrolled::<ITEMS>(|q| {
                    if present & (1 << q) != 0 {
                        level[q] = keys[q].encode(encode).pack(position(u, q));
                    }
                });
                // Minima of pairs, of fours, …, until m groups are left.
                let mut width = ITEMS;
                while width > m {
                    unrolled::<ITEMS>(|q| {
                        if 2 * q + 1 < ITEMS && 2 * q + 1 < width {
                            level[q] = level[2 * q].min(level[2 * q + 1]);
                        }
                    });
                    width /= 2;
                }
                let samples = net.unit(u);
                unrolled::<NETWORK_REGISTERS>(|r| {
                    samples[r] = if r < m && r < ITEMS { level[r] } else { none };
                });
            });
            unsafe { network(block, &mut net, sh.candidates, slots, 2, none) };
            block.units(nt, |u| {
                let u = block.opaque(u);
                let samples = net.unit(u);
                unrolled::<NETWORK_REGISTERS>(|r| {
                    if r < m {
                        let i = u * m as u32 + r as u32;
                        if i == k - 1 {
                            unsafe { *sh.bound = samples[r] };
                        }
                        // The network's steps across warps left samples here.
                        unsafe { *sh.candidates.add(i as usize) = none };
                    }
                });
            });
            block.sync();
            bound = unsafe { *sh.bound };
        }
        let bound_key = K::unpack(bound).0;
        block.units(nt, |u| {
            let u = block.opaque(u);
            // The next tile is asked into the L2 cache while this one loads: a line per thread.
            let per_line = (L2_LINE_BYTES / size_of::<K>()) as u32;
            let ahead = base.saturating_add(tile).saturating_add(u * per_line);
            if u < tile / per_line && ahead < part.len {
                block.prefetch(unsafe { part.keys.add(ahead as usize) });
            }
            let mut keys = [K::INFINITY; ITEMS];
            // SAFETY: the tile's keys inside the part.
            let present =
                unsafe { load_tile::<K, B, ITEMS>(block, part, u, base, aligned, &mut keys) };
            let mut maybe = 0u32;
            unrolled::<ITEMS>(|q| {
                keys[q] = keys[q].encode(encode);
                if keys[q] <= bound_key {
                    maybe |= 1 << q;
                }
            });
            maybe &= present;
            let mut kept = 0;
            if maybe != 0 {
                let u = block.opaque(u);
                unrolled::<ITEMS>(|q| {
                    if maybe & (1 << q) != 0 && keys[q].pack(base + position(u, q)) <= bound {
                        kept |= 1 << q;
                    }
                });
            }
            *pending.unit(u) = kept;
        });
        loop {
            let counter = unsafe { sh.counters.add((round % 3) as usize) };
            // Zeroed now, used by the next append: the one before read it before the barrier
            // that ended the last append.
            let next = unsafe { sh.counters.add(((round + 1) % 3) as usize) };
            block.units(nt, |u| {
                let u = block.opaque(u);
                if u == 0 {
                    unsafe { *next = 0 };
                }
                let p = pending.unit(u);
                if *p != 0 {
                    let keys = unsafe { load_pending::<K, ITEMS>(part, u, base, *p) };
                    let mut slot = count + unsafe { block.fetch_add(counter, p.count_ones()) };
                    unrolled::<ITEMS>(|q| {
                        if *p & (1 << q) != 0 && slot < slots {
                            let item = keys[q].encode(encode).pack(base + position(u, q));
                            unsafe { *sh.candidates.add(slot as usize) = item };
                            *p &= !(1 << q);
                            slot += 1;
                        }
                    });
                }
            });
            block.sync();
            count += unsafe { *counter };
            round += 1;
            if count < slots {
                break;
            }
            // Full: merge, tighten the bound, offer the keys that found no slot again.
            unsafe { merge_candidates(block, &sh, &mut net, (slots, kp), none) };
            count = 0;
            bound = bound.min(unsafe { *sh.top.add(k as usize - 1) });
            block.units(nt, |u| {
                let u = block.opaque(u);
                let p = pending.unit(u);
                if *p != 0 {
                    let keys = unsafe { load_pending::<K, ITEMS>(part, u, base, *p) };
                    unrolled::<ITEMS>(|q| {
                        if keys[q].encode(encode).pack(base + position(u, q)) > bound {
                            *p &= !(1 << q);
                        }
                    });
                }
            });
        }
        base = base.saturating_add(tile);
    }
    let k = block.opaque(k);
    if count > 0 {
        unsafe { merge_candidates(block, &sh, &mut net, (count, padded_k(k)), none) };
    }
    block.units(k, |i| unsafe {
        let item = *sh.top.add(i as usize);
        let (key, index) = if item == none {
            (K::INFINITY, NO_INDEX)
        } else {
            let (key, pos) = K::unpack(item);
            let index = if part.indices.is_null() {
                part.first_index + u64::from(pos)
            } else {
                *part.indices.add(pos as usize)
            };
            (key.decode(decode), index)
        };
        *part.out_keys.add(i as usize) = key;
        *part.out_indices.add(i as usize) = index;
    });
}

/// Loads thread `u`'s keys of the tile at `base` of the part into `keys` (as stored, not
/// encoded); returns which of them are keys: past the part's end, and slots that an earlier
/// round's part left without a key, are not. A whole tile of a 16-byte aligned part loads as
/// four vectors; other tiles key by key, each load predicated on its position rather than
/// behind a branch, so that they all go out before the first arrives.
///
/// # Safety
/// `base` lies inside the part.
#[inline(always)]
unsafe fn load_tile<K: TopKey, B: Block, const ITEMS: usize>(
    block: &B,
    part: &Part<K>,
    u: u32,
    base: u32,
    aligned: bool,
    keys: &mut [K; ITEMS],
) -> u32 {
    let key_bytes = size_of::<K>() as u32;
    let per_vector = (VECTOR_BYTES / key_bytes) as usize;
    let tile = THREADS * ITEMS as u32;
    let mut present = u32::MAX >> (32 - ITEMS);
    // Each path and each later use computes its positions from a fresh thread index, so that
    // no position is held in a register from the loads to the last use.
    if aligned && part.len - base >= tile {
        let u = block.opaque(u);
        unrolled::<ITEMS>(|r| {
            if r * per_vector < ITEMS {
                let at = base + tile_position(key_bytes, u, (r * per_vector) as u32);
                // SAFETY: a 16-byte aligned vector of the tile, inside the part.
                let vector = unsafe { load_vector(part.keys.add(at as usize) as *const u8) };
                let lanes = vector.as_ptr() as *const K;
                unrolled::<4>(|j| {
                    if j < per_vector && r * per_vector + j < ITEMS {
                        // SAFETY: inside the vector (whose words need not be aligned for K).
                        keys[r * per_vector + j] = unsafe { lanes.add(j).read_unaligned() };
                    }
                });
            }
        });
    } else {
        let u = block.opaque(u);
        unrolled::<ITEMS>(|q| {
            let i = base + tile_position(key_bytes, u, q as u32);
            let valid = i < part.len;
            // SAFETY: read only inside the part.
            keys[q] = unsafe { K::load_if(part.keys.wrapping_add(i as usize), valid) };
            if !valid {
                present &= !(1 << q);
            }
        });
    }
    if !part.indices.is_null() {
        // A slot of a part that had fewer than k keys: its key is K::INFINITY, which real
        // keys may also be, so only those read their index.
        let u = block.opaque(u);
        unrolled::<ITEMS>(|q| {
            if present & (1 << q) != 0 && keys[q] == K::INFINITY {
                let i = base + tile_position(key_bytes, u, q as u32);
                // SAFETY: inside the part.
                if unsafe { *part.indices.add(i as usize) } == NO_INDEX {
                    present &= !(1 << q);
                }
            }
        });
    }
    present
}

/// Thread `u`'s keys of the tile at `base` whose bits are set in `pending` (as stored, not
/// encoded; the others `K::INFINITY`), loaded again: all the loads go out before the first
/// arrives.
///
/// # Safety
/// The pending keys lie inside the part.
#[inline(always)]
unsafe fn load_pending<K: TopKey, const ITEMS: usize>(
    part: &Part<K>,
    u: u32,
    base: u32,
    pending: u32,
) -> [K; ITEMS] {
    let key_bytes = size_of::<K>() as u32;
    let mut keys = [K::INFINITY; ITEMS];
    unrolled::<ITEMS>(|q| {
        let i = base + tile_position(key_bytes, u, q as u32);
        // SAFETY: read only where pending, inside the part.
        keys[q] =
            unsafe { K::load_if(part.keys.wrapping_add(i as usize), pending & (1 << q) != 0) };
    });
    keys
}

/// The 16 bytes at `at` in one load.
///
/// # Safety
/// `at` is 16-byte aligned, valid for 16 bytes, and not written during the round.
#[inline(always)]
unsafe fn load_vector(at: *const u8) -> [u32; 4] {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract; the round's input is not written during it.
    let words = unsafe { crate::gpu::load_global_16(at) };
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract.
    let words = unsafe { (at as *const [u32; 4]).read() };
    words
}

/// Merges the candidate buffer, whose first `filled` slots hold items and the rest `none`
/// ([`TopKey::NONE`]), into the running top-k (`kp` slots), and empties the buffer. Every
/// thread calls it; it starts after a barrier and ends with one.
///
/// # Safety
/// `sh`'s regions as [`select`] lays them out; `filled` at most the buffer's slots.
#[inline(always)]
unsafe fn merge_candidates<I: Copy + Ord + Lane, B: Lanes>(
    block: &B,
    sh: &Shared<I>,
    net: &mut B::Regs<Net<I>>,
    (filled, kp): (u32, u32),
    none: I,
) {
    let nt = THREADS;
    let (filled, kp) = (block.opaque(filled), block.opaque(kp));
    let len = filled.max(kp).next_power_of_two();
    let v = network_per_thread(len);
    // SAFETY (every block below): slots below `len` (at most the buffer's) and `kp`; each
    // thread reads and writes the slots of its own registers, except where a barrier comes
    // between.
    block.units(nt, |t| {
        let t = block.opaque(t);
        let mine = net.unit(t);
        unrolled::<NETWORK_REGISTERS>(|r| {
            let i = t * v + r as u32;
            mine[r] = none;
            if (r as u32) < v && i < len {
                mine[r] = unsafe { *sh.candidates.add(i as usize) };
            }
        });
    });
    unsafe { network(block, net, sh.candidates, len, 2, none) };
    unsafe { store(block, net, sh.candidates, len) };
    block.sync();
    // The kp smallest of both, as a bitonic sequence: ascending top against descending
    // candidates; each candidate read is emptied by its reader, the rest by anyone.
    let kp = block.opaque(kp);
    let vk = network_per_thread(kp);
    block.units(nt, |t| {
        let t = block.opaque(t);
        let mine = net.unit(t);
        unrolled::<NETWORK_REGISTERS>(|r| {
            let i = t * vk + r as u32;
            mine[r] = none;
            if (r as u32) < vk && i < kp {
                unsafe {
                    let theirs = sh.candidates.add((kp - 1 - i) as usize);
                    mine[r] = (*sh.top.add(i as usize)).min(*theirs);
                    *theirs = none;
                }
            }
        });
    });
    block.units(len - kp, |u| unsafe {
        *sh.candidates.add((kp + u) as usize) = none
    });
    unsafe { network(block, net, sh.top, kp, kp, none) };
    unsafe { store(block, net, sh.top, kp) };
    block.sync();
}

/// Writes the `len` items of a network's registers to `a` (thread `t`'s register `r` to
/// `t·v + r`).
///
/// # Safety
/// `a` holds `len` items of the block's shared memory; no other thread reads or writes this
/// thread's slots until the next barrier.
#[inline(always)]
unsafe fn store<I: Copy, B: Block, const R: usize>(
    block: &B,
    net: &mut B::Regs<[I; R]>,
    a: *mut I,
    len: u32,
) {
    let len = block.opaque(len);
    let v = network_per_thread(len);
    block.units(THREADS, |t| {
        let t = block.opaque(t);
        let mine = net.unit(t);
        unrolled::<R>(|r| {
            let i = t * v + r as u32;
            if (r as u32) < v && i < len {
                // SAFETY: the caller's contract.
                unsafe { *a.add(i as usize) = mine[r] };
            }
        });
    });
}

/// Runs the stages of sizes `from, 2·from, …, len` of Batcher's bitonic sorter on the `len`
/// items (a power of two, at most `THREADS · R`) that the threads hold in `R` registers of
/// `net`: thread `t`'s register `r` holds item `t·v + r`, `v` = [`network_per_thread`]`(len)`;
/// threads at or past `len / v` hold `none`. `from = 2` sorts any sequence ascending; `from =
/// len` sorts a bitonic one (the half-cleaners). The items end in the registers; `a` (`len`
/// items of shared memory) carries the steps across warps.
///
/// Every thread calls it. It writes `a` only in slots of its own registers before its first
/// barrier.
///
/// # Safety
/// `a` holds `len` items of the block's shared memory that no other thread reads until the
/// barrier after the call; `len ≤ THREADS · R`.
#[inline(always)]
unsafe fn network<I: Copy + Ord + Lane, B: Lanes, const R: usize>(
    block: &B,
    net: &mut B::Regs<[I; R]>,
    a: *mut I,
    len: u32,
    from: u32,
    none: I,
) {
    let nt = THREADS;
    let (len, from) = (block.opaque(len), block.opaque(from));
    let v = network_per_thread(len);
    // Strides from here up join items of different warps.
    let across = 32 * v;
    let mut size = from;
    while size <= len {
        let mut stride = size / 2;
        if stride >= across {
            unsafe { store(block, net, a, len) };
            block.sync();
            while stride >= across {
                block.units(len / 2, |p| {
                    let p = block.opaque(p);
                    let i = 2 * p - (p & (stride - 1));
                    // SAFETY: i + stride < len.
                    unsafe { compare_exchange(a, i, i + stride, i & size == 0) };
                });
                block.sync();
                stride /= 2;
            }
            block.units(nt, |t| {
                let t = block.opaque(t);
                let mine = net.unit(t);
                unrolled::<R>(|r| {
                    let i = t * v + r as u32;
                    mine[r] = none;
                    if (r as u32) < v && i < len {
                        // SAFETY: inside `a`, after the barrier of the last step.
                        mine[r] = unsafe { *a.add(i as usize) };
                    }
                });
            });
        }
        while stride >= v {
            // Lanes `stride / v` apart; the lower lane keeps the smaller item where the
            // stage's run ascends (item t·v + r has bit `size` of t·v, since size > stride ≥ v).
            let lane_mask = stride / v;
            unrolled::<R>(|r| {
                if (r as u32) < v {
                    block.exchange(net, r, lane_mask, |t, mine, theirs| {
                        let t = block.opaque(t);
                        let ascending = (t * v) & size == 0;
                        *mine = if (t & lane_mask == 0) == ascending {
                            (*mine).min(theirs)
                        } else {
                            (*mine).max(theirs)
                        };
                    });
                }
            });
            stride /= 2;
        }
        while stride > 0 {
            block.units(nt, |t| {
                let t = block.opaque(t);
                let mine = net.unit(t);
                match stride {
                    1 => within::<I, 1, R>(mine, t, v, size),
                    2 => within::<I, 2, R>(mine, t, v, size),
                    _ => within::<I, 4, R>(mine, t, v, size),
                }
            });
            stride /= 2;
        }
        size *= 2;
    }
}

/// One step of stride `S` (below `v`) of stage `size` between a thread's own registers.
#[inline(always)]
fn within<I: Copy + Ord, const S: usize, const R: usize>(
    mine: &mut [I; R],
    t: u32,
    v: u32,
    size: u32,
) {
    unrolled::<R>(|r| {
        if r & S == 0 && r + S < R && ((r + S) as u32) < v {
            let ascending = (t * v + r as u32) & size == 0;
            let (x, y) = (mine[r], mine[r + S]);
            if (x > y) == ascending {
                mine[r] = y;
                mine[r + S] = x;
            }
        }
    });
}

/// Puts the smaller of `a[i]` and `a[j]` (`i < j`) at `i` if `ascending`, else at `j`.
///
/// # Safety
/// Both slots are valid.
#[inline(always)]
unsafe fn compare_exchange<I: Copy + Ord>(a: *mut I, i: u32, j: u32, ascending: bool) {
    // SAFETY: the caller's contract.
    unsafe {
        let (x, y) = (*a.add(i as usize), *a.add(j as usize));
        if (x > y) == ascending {
            *a.add(i as usize) = y;
            *a.add(j as usize) = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{CpuBlock, xorshift};
    use crate::keys::{IDENTITY, KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, key_map};
    use crate::topk::{
        MAX_K, items_per_thread, plan, rows_shared_layout, selects_in_registers, shared_bytes,
    };

    /// The k smallest (encoded key, position) of each segment, by sorting: the reference.
    fn reference<K: TopKey + Ord>(
        keys: &[K],
        len: usize,
        k: usize,
        map: u32,
    ) -> (Vec<K>, Vec<u64>) {
        let (mut out_keys, mut out_indices) = (Vec::new(), Vec::new());
        for segment in keys.chunks(len) {
            let mut items: Vec<(K, usize)> = segment
                .iter()
                .enumerate()
                .map(|(i, &key)| (key.encode(map), i))
                .collect();
            items.sort_unstable();
            for &(key, i) in &items[..k] {
                out_keys.push(key.decode(map));
                out_indices.push(i as u64);
            }
        }
        (out_keys, out_indices)
    }

    /// Keys in memory aligned to 16 bytes, starting `skew` keys past the alignment: the tiles
    /// of a part load as vectors where the part starts aligned, key by key elsewhere.
    struct Skewed<K> {
        store: Vec<u128>,
        skew: usize,
        len: usize,
        keys: core::marker::PhantomData<K>,
    }

    impl<K: Copy> Skewed<K> {
        fn new(keys: &[K], skew: usize) -> Self {
            let bytes = (keys.len() + skew) * size_of::<K>();
            let mut s = Skewed {
                store: vec![0; bytes.div_ceil(16) + 1],
                skew,
                len: keys.len(),
                keys: core::marker::PhantomData,
            };
            // SAFETY: the store holds skew + len keys.
            unsafe { core::ptr::copy_nonoverlapping(keys.as_ptr(), s.as_mut_ptr(), keys.len()) };
            s
        }

        fn as_ptr(&self) -> *const K {
            // SAFETY: inside the store.
            unsafe { (self.store.as_ptr() as *const K).add(self.skew) }
        }

        fn as_mut_ptr(&mut self) -> *mut K {
            // SAFETY: inside the store.
            unsafe { (self.store.as_mut_ptr() as *mut K).add(self.skew) }
        }

        fn to_vec(&self) -> Vec<K> {
            // SAFETY: the store holds len keys from the pointer.
            unsafe { core::slice::from_raw_parts(self.as_ptr(), self.len) }.to_vec()
        }
    }

    /// Runs every round of the selection with the block code on the CPU, as the host does on
    /// the GPU (`blocks`: the blocks a GPU would run at once), each round's keys `skew` keys
    /// past a 16-byte boundary.
    fn run<K: TopKey, const ITEMS: usize>(
        keys: &[K],
        len: usize,
        k: u32,
        map: u32,
        (blocks, skew): (u64, usize),
    ) -> (Vec<K>, Vec<u64>) {
        assert_eq!(ITEMS as u32, items_per_thread(size_of::<K>() as u32));
        let segments = (keys.len() / len) as u64;
        let rounds: Vec<Round> =
            plan(segments, len as u64, k, size_of::<K>() as u32, blocks).collect();
        let bytes = shared_bytes(size_of::<K>() as u32, k)
            .max(rows_shared_layout(size_of::<K>() as u32, k)[5]);
        let mut shared = vec![0u128; bytes.div_ceil(16) as usize];
        let (mut in_keys, mut in_indices) = (Skewed::new(keys, skew), Vec::<u64>::new());
        for (i, &round) in rounds.iter().enumerate() {
            let out_len = (round.blocks() * u64::from(k)) as usize;
            let mut out_keys = Skewed::new(&vec![K::INFINITY; out_len], skew);
            let mut out_indices = vec![0u64; out_len];
            let args = Args {
                keys: in_keys.as_ptr(),
                indices: if i == 0 {
                    core::ptr::null()
                } else {
                    in_indices.as_ptr()
                },
                out_keys: out_keys.as_mut_ptr(),
                out_indices: out_indices.as_mut_ptr(),
                round,
                k,
                encode: if i == 0 { map } else { IDENTITY },
                decode: if i + 1 == rounds.len() { map } else { IDENTITY },
            };
            // A launch of two blocks, each running every other part, with the kernel that
            // the host picks for the round.
            for first in 0..2 {
                let (block, at) = (&CpuBlock::default(), shared.as_mut_ptr() as *mut u8);
                // SAFETY: the buffers hold what `args` says; the shared memory its bytes.
                unsafe {
                    if selects_in_registers(&round) {
                        rows::select_rows::<K, _>(block, at, &args, first, 2);
                    } else {
                        select_parts::<K, _, ITEMS>(block, at, &args, first, 2);
                    }
                }
            }
            (in_keys, in_indices) = (out_keys, out_indices);
        }
        (in_keys.to_vec(), in_indices)
    }

    /// Checks the selection against the reference with the keys aligned (vector loads) and
    /// one key past it (loads key by key).
    fn check<K: TopKey + Ord + core::fmt::Debug, const ITEMS: usize>(
        keys: &[K],
        len: usize,
        k: u32,
        map: u32,
        blocks: u64,
    ) {
        let expected = reference(keys, len, k as usize, map);
        for skew in [0, 1] {
            let got = run::<K, ITEMS>(keys, len, k, map, (blocks, skew));
            assert!(
                got == expected,
                "{} {}-byte keys in rows of {len}, k = {k}, map {map}, {blocks} blocks, skew {skew}",
                keys.len(),
                size_of::<K>()
            );
        }
    }

    fn check32(keys: &[u32], len: usize, k: u32, map: u32, blocks: u64) {
        check::<u32, 16>(keys, len, k, map, blocks);
    }

    fn check64(keys: &[u64], len: usize, k: u32, map: u32, blocks: u64) {
        check::<u64, 8>(keys, len, k, map, blocks);
    }

    /// Runs a top-k of the whole of `keys` by digits with the block code on the CPU, as the
    /// host does on the GPU: every step on `blocks` blocks' worth of chunks, then the round in
    /// registers over the candidates; the keys `skew` keys past a 16-byte boundary.
    fn run_digits<K: TopKey>(
        keys: &[K],
        k: u32,
        map: u32,
        (blocks, skew): (u64, usize),
    ) -> (Vec<K>, Vec<u64>) {
        use crate::topk::digits::{LAST_ROUND, grid, passes, shared_layout, workspace};
        let g = grid(keys.len() as u64, blocks);
        let layout = workspace(size_of::<K>() as u32, g);
        // Poisoned, but for the histograms and tiles' counts, which the host zeroes.
        let mut work = vec![u128::MAX; layout.bytes.div_ceil(16) as usize];
        work[..(layout.zeroed / 16) as usize].fill(0);
        let work = work.as_mut_ptr() as *mut u8;
        let input = Skewed::new(keys, skew);
        let mut shared = vec![0u128; shared_layout()[4].div_ceil(16) as usize];
        for step in 0..=passes(size_of::<K>() as u32) + 1 {
            let args = digits::DigitArgs {
                keys: input.as_ptr(),
                grid: g,
                k,
                encode: map,
                step,
                work,
            };
            for b in 0..g.blocks {
                let (block, at) = (&CpuBlock::default(), shared.as_mut_ptr() as *mut u8);
                // SAFETY: the keys and workspace hold what `args` says.
                unsafe { digits::digit_step::<K, _>(block, at, &args, b) };
            }
        }
        let mut out_keys = vec![K::INFINITY; k as usize];
        let mut out_indices = vec![0u64; k as usize];
        // SAFETY: inside the workspace.
        let (cand_keys, cand_indices) = unsafe {
            (
                work.add(layout.keys as usize) as *const K,
                work.add(layout.indices as usize) as *const u64,
            )
        };
        let args = Args {
            keys: cand_keys,
            indices: cand_indices,
            out_keys: out_keys.as_mut_ptr(),
            out_indices: out_indices.as_mut_ptr(),
            round: LAST_ROUND,
            k,
            encode: IDENTITY,
            decode: map,
        };
        let bytes = rows_shared_layout(size_of::<K>() as u32, k)[5];
        let mut shared = vec![0u128; bytes.div_ceil(16) as usize];
        // SAFETY: the candidates hold CANDIDATES keys and indices; the outputs k.
        unsafe {
            rows::select_rows::<K, _>(
                &CpuBlock::default(),
                shared.as_mut_ptr() as *mut u8,
                &args,
                0,
                1,
            )
        };
        (out_keys, out_indices)
    }

    /// Checks a top-k by digits against the reference, keys aligned and one key past it.
    fn check_digits<K: TopKey + Ord + core::fmt::Debug>(keys: &[K], k: u32, map: u32, blocks: u64) {
        let expected = reference(keys, keys.len(), k as usize, map);
        for skew in [0, 1] {
            let got = run_digits(keys, k, map, (blocks, skew));
            assert!(
                got == expected,
                "by digits: {} {}-byte keys, k = {k}, map {map}, {blocks} blocks, skew {skew}",
                keys.len(),
                size_of::<K>()
            );
        }
    }

    #[test]
    fn digits_select_the_k_smallest_of_any_keys() {
        let mut next = xorshift(31);
        for (n, blocks) in [
            (100usize, 4u64),
            (4097, 1),
            (20_000, 3),
            (70_001, 7),
            (300_000, 40),
        ] {
            for range in [3u64, 1000, 1 << 20, u64::MAX] {
                let keys: Vec<u64> = (0..n).map(|_| next() % range).collect();
                let narrow: Vec<u32> = keys.iter().map(|&x| x as u32).collect();
                for k in [1u32, 2, 255, 256, 1000, 1024] {
                    let k = k.min(n as u32);
                    let desc = k % 2 == 0;
                    check_digits(&narrow, k, key_map(KIND_UNSIGNED, desc), blocks);
                    check_digits(&narrow, k, key_map(KIND_SIGNED, !desc), blocks);
                    check_digits(&keys, k, key_map(KIND_UNSIGNED, !desc), blocks);
                }
            }
        }
    }

    #[test]
    fn digits_take_every_pass_and_ties_by_position() {
        let mut next = xorshift(33);
        // Keys that agree in all but their lowest bits: every digit pass narrows.
        let n = 50_000;
        let low: Vec<u64> = (0..n).map(|_| (1 << 63) | (next() % 5000)).collect();
        check_digits(&low, 1024, IDENTITY, 9);
        let low32: Vec<u32> = low.iter().map(|&x| (x as u32) | 0xABC0_0000).collect();
        check_digits(&low32, 700, key_map(KIND_UNSIGNED, true), 9);
        // All equal: the first k positions, in order.
        let (keys, indices) = run_digits(&vec![5u32; n], 1000, IDENTITY, (6, 0));
        assert_eq!(indices, (0..1000).collect::<Vec<u64>>());
        assert_eq!(keys, vec![5; 1000]);
        let (_, indices) = run_digits(&vec![u64::MAX; n], 300, IDENTITY, (6, 1));
        assert_eq!(indices, (0..300).collect::<Vec<u64>>());
        // Sorted either way.
        let ascending: Vec<u32> = (0..n as u32).collect();
        check_digits(&ascending, 1024, IDENTITY, 5);
        check_digits(&ascending, 1024, key_map(KIND_UNSIGNED, true), 5);
    }

    #[test]
    fn digits_order_floats_like_total_cmp() {
        let floats = floats_with_specials(60_000, 40, 35, |x| (x % 1_000_000) as f32 / 1e6);
        let bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
        let wide: Vec<u64> = floats.iter().map(|&f| f64::from(f).to_bits()).collect();
        for descending in [false, true] {
            let map = key_map(KIND_FLOAT, descending);
            check_digits(&bits, 1024, map, 8);
            check_digits(&wide, 257, map, 8);
        }
    }

    /// Runs [`network`] from stage `from` over `items` (a power of two of them, as a block's
    /// threads hold them) on the CPU; returns them in order.
    fn run_network<I: Copy + Ord + Lane>(items: &[I], from: u32, none: I) -> Vec<I> {
        let len = items.len() as u32;
        let v = network_per_thread(len);
        let block = CpuBlock::default();
        let mut net = block.regs(THREADS, [none; NETWORK_REGISTERS]);
        for (i, &item) in items.iter().enumerate() {
            net[i / v as usize][i % v as usize] = item;
        }
        let mut area = vec![none; items.len()];
        // SAFETY: `area` holds the len items; len is at most a full buffer.
        unsafe { network(&block, &mut net, area.as_mut_ptr(), len, from, none) };
        (0..items.len())
            .map(|i| net[i / v as usize][i % v as usize])
            .collect()
    }

    #[test]
    fn networks_sort_in_registers_across_lanes_and_across_warps() {
        let mut next = xorshift(17);
        let mut len = 1usize;
        while len <= 2048 {
            // Repeated items too: the network must not rely on distinct ones.
            let items: Vec<u64> = (0..len).map(|_| next() % (len as u64 + 3)).collect();
            let mut sorted = items.clone();
            sorted.sort_unstable();
            assert_eq!(run_network(&items, 2, u64::MAX), sorted, "a sort of {len}");
            // A bitonic sequence (every other item ascending, then the others descending)
            // takes the last stage alone.
            let mut bitonic: Vec<u64> = sorted.iter().step_by(2).copied().collect();
            bitonic.extend(sorted.iter().skip(1).step_by(2).rev());
            assert_eq!(
                run_network(&bitonic, len as u32, u64::MAX),
                sorted,
                "a merge of {len}"
            );
            let wide: Vec<u128> = items
                .iter()
                .map(|&x| (u128::from(x) << 64) | u128::from(next() % 2))
                .collect();
            let mut sorted = wide.clone();
            sorted.sort_unstable();
            assert_eq!(
                run_network(&wide, 2, u128::MAX),
                sorted,
                "a wide sort of {len}"
            );
            len *= 2;
        }
    }

    #[test]
    fn slots_that_short_parts_leave_are_no_keys() {
        // Every key encodes to the largest, which is also the key of a slot that a part
        // shorter than k leaves: parts of 16384 keys and a last one of 5, then a round over
        // their candidates.
        for (n, k) in [(3 * 16384 + 5, 64u32), (4 * 16384 + 5, 1024)] {
            let first = plan(1, n as u64, k, 4, 64).next().unwrap();
            let (start, end) = first.part(first.parts - 1);
            assert_eq!((first.chunk, end - start), (16384, 5));
            check32(&vec![u32::MAX; n], n, k, IDENTITY, 64);
            check32(&vec![0; n], n, k, key_map(KIND_UNSIGNED, true), 64);
            check64(&vec![u64::MAX; n], n, k, IDENTITY, 64);
        }
        check32(&vec![u32::MAX; 5 * 20_000], 20_000, 100, IDENTITY, 16);
    }

    #[test]
    fn one_block_selects_the_k_smallest_of_any_length() {
        let mut next = xorshift(7);
        for n in [1usize, 2, 31, 255, 256, 257, 4095, 4096, 4097, 9000] {
            let keys: Vec<u32> = (0..n).map(|_| next() as u32).collect();
            for k in [1u32, 2, 31, 32, 33, 255, 256, 257, 1023, 1024] {
                if k as usize <= n {
                    check32(&keys, n, k, key_map(KIND_UNSIGNED, k % 2 == 0), 1);
                }
            }
        }
    }

    #[test]
    fn rounds_of_many_parts_select_like_one() {
        let mut next = xorshift(11);
        let n = 200_000;
        let keys: Vec<u32> = (0..n).map(|_| next() as u32).collect();
        for (k, blocks) in [(1, 64), (8, 32), (100, 16), (1024, 40)] {
            let rounds = plan(1, n as u64, k, 4, blocks).count();
            assert!(rounds >= 2, "k = {k}");
            check32(&keys, n, k, key_map(KIND_SIGNED, false), blocks);
        }
        let keys: Vec<u64> = (0..n).map(|_| next()).collect();
        check64(&keys, n, 64, key_map(KIND_UNSIGNED, true), 64);
    }

    #[test]
    fn ties_go_to_the_lowest_index() {
        let mut next = xorshift(3);
        // Few distinct keys: every selected key has hundreds of equals.
        let keys: Vec<u32> = (0..100_000).map(|_| (next() % 5) as u32).collect();
        for k in [1, 33, 512, 1024] {
            check32(&keys, keys.len(), k, IDENTITY, 24);
            check32(&keys, keys.len(), k, key_map(KIND_UNSIGNED, true), 24);
        }
        let equal = vec![42u64; 50_000];
        check64(&equal, equal.len(), 300, IDENTITY, 8);
        let (_, indices) = run::<u64, 8>(&equal, equal.len(), 300, IDENTITY, (8, 0));
        assert_eq!(indices, (0..300).collect::<Vec<u64>>());
    }

    #[test]
    fn sorted_input_that_keeps_every_key_is_still_right() {
        // Each key is smaller than every key before it: all pass the bound, every buffer
        // overflows.
        let n = 70_000u32;
        let descending: Vec<u32> = (0..n).rev().collect();
        let ascending: Vec<u32> = (0..n).collect();
        for k in [1, 32, 1000] {
            check32(&descending, n as usize, k, IDENTITY, 4);
            check32(&ascending, n as usize, k, key_map(KIND_UNSIGNED, true), 4);
            check32(&ascending, n as usize, k, IDENTITY, 4);
        }
        let organ: Vec<u64> = (0..n as u64).map(|i| i.min(u64::from(n) - i)).collect();
        check64(&organ, n as usize, 777, key_map(KIND_SIGNED, true), 6);
    }

    #[test]
    fn rows_select_within_each_row() {
        let mut next = xorshift(5);
        for (rows, len, k) in [
            (50, 4096, 8),
            (7, 5000, 256),
            (300, 33, 33),
            (3, 20_000, 1),
            (64, 100, 64),
        ] {
            let keys: Vec<u32> = (0..rows * len).map(|_| (next() % 1000) as u32).collect();
            check32(&keys, len, k, key_map(KIND_UNSIGNED, true), 16);
            let keys: Vec<u64> = keys.iter().map(|&k| u64::from(k) << 20).collect();
            check64(&keys, len, k, IDENTITY, 16);
        }
    }

    #[test]
    fn rows_in_registers_take_every_digit_and_break_ties_by_position() {
        let mut next = xorshift(21);
        for (rows, len) in [(3, 4096), (5, 4095), (4, 3000), (9, 257), (20, 33), (40, 1)] {
            let round = plan(rows as u64, len as u64, 1, 8, 528).next().unwrap();
            assert!(selects_in_registers(&round), "rows of {len}");
            for distinct in [1u64, 2, 7, 1 << 40] {
                // Keys agreeing in all but their lowest bits, or in all but their highest
                // digit, or all equal: every digit's round and the ties after the last.
                let keys: Vec<u64> = (0..rows * len)
                    .map(|_| {
                        (next() % distinct)
                            .wrapping_mul(0x0101_0101_0101)
                            .wrapping_add(1 << 63)
                    })
                    .collect();
                for k in [1, 2, 3, 64, 255, 256, 1000, 1024] {
                    if k as usize > len {
                        continue;
                    }
                    let desc = k % 2 == 1;
                    check64(&keys, len, k, key_map(KIND_UNSIGNED, desc), 4);
                    let narrow: Vec<u32> = keys.iter().map(|&x| (x >> 24) as u32).collect();
                    check32(&narrow, len, k, key_map(KIND_SIGNED, !desc), 4);
                }
            }
        }
        // All keys equal: the first k positions, in order.
        let (_, indices) = run::<u32, 16>(&[9; 4096], 4096, 700, IDENTITY, (1, 0));
        assert_eq!(indices, (0..700).collect::<Vec<u64>>());
        let (_, indices) = run::<u64, 8>(&[9; 4096], 4096, 700, IDENTITY, (1, 1));
        assert_eq!(indices, (0..700).collect::<Vec<u64>>());
    }

    /// `n` floats of `value` of random words (seeded by `seed`), every `every`-th one NaN,
    /// −NaN, −0.0, +0.0, +∞ or −∞ in turn.
    fn floats_with_specials(n: usize, every: usize, seed: u64, value: fn(u64) -> f32) -> Vec<f32> {
        let mut next = xorshift(seed);
        let specials = [
            f32::NAN,
            -f32::NAN,
            -0.0,
            0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        (0..n)
            .map(|i| {
                if i % every == 0 {
                    specials[i / every % specials.len()]
                } else {
                    value(next())
                }
            })
            .collect()
    }

    #[test]
    fn floats_order_like_total_cmp_with_nan_and_signed_zeros() {
        let floats = floats_with_specials(30_000, 50, 9, |x| (x as i32) as f32 / 1e6);
        let bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
        for descending in [false, true] {
            let map = key_map(KIND_FLOAT, descending);
            check32(&bits, bits.len(), 700, map, 8);
            let (keys, _) = run::<u32, 16>(&bits, bits.len(), 700, map, (8, 0));
            let mut expected = floats.clone();
            if descending {
                expected.sort_by(|a, b| b.total_cmp(a));
            } else {
                expected.sort_by(f32::total_cmp);
            }
            let expected: Vec<u32> = expected[..700].iter().map(|f| f.to_bits()).collect();
            assert_eq!(keys, expected);
        }
        let wide: Vec<u64> = floats.iter().map(|&f| f64::from(f).to_bits()).collect();
        check64(&wide, wide.len(), 129, key_map(KIND_FLOAT, true), 8);
    }

    #[test]
    fn random_lengths_and_k() {
        let mut next = xorshift(13);
        for _ in 0..40 {
            let n = 1 + (next() % 60_000) as usize;
            let k = 1 + (next() % u64::from(MAX_K.min(n as u32))) as u32;
            let blocks = 1 + next() % 64;
            let range = 1 + next() % 1_000_000;
            let keys: Vec<u32> = (0..n).map(|_| (next() % range) as u32).collect();
            check32(&keys, n, k, key_map(KIND_SIGNED, next() % 2 == 0), blocks);
        }
    }
}
