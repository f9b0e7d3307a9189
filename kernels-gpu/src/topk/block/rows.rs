//! What one block of a round that selects in registers does ([`selects_in_registers`]: parts
//! of up to [`ROW_MAX_KEYS`](crate::topk::ROW_MAX_KEYS) keys, rows of a matrix or the
//! candidates of an earlier round): a radix select of its part.
//!
//! The block loads the part once, [`ROW_ITEMS`] keys per thread (as [`super::load_tile`]
//! loads a tile), encoded. It then finds the k-th smallest key a digit of [`DIGIT_BITS`] at a
//! time, from the top: each round counts, in a shared histogram (in [`DIGIT_COPIES`] copies, so
//! that the lanes of a warp rarely add to one word at once), the digit of every key that
//! agrees with the digits found so far, and one block-wide scan of the histogram's bins (one
//! per thread) finds the bin in which the count of smaller keys reaches the keys still wanted.
//! The keys of the bins below it are selected; the search goes on inside it. It stops at the
//! first bin that holds exactly the keys still wanted (all of them are selected), or after the
//! last digit, where the bin's keys all equal the k-th key and the lowest positions among them
//! are taken (a scan of them in position order). In the last round the k selected items (key,
//! position) are then sorted by [`super::network`] in registers and written out, best first; a
//! round over candidates writes them in position order instead (the next round reads ties by
//! position), without the sort.
//!
//! Rows of 4096 keys thus cost their loads, a shared-memory add per key in the first round
//! and few in the later ones, and three barriers per digit (four digits of 4-byte keys, eight
//! of 8-byte ones), where streaming them sorts a buffer of at least 512 samples and another
//! of candidates.

use super::{Args, Counting, Lanes, Part, load_tile, network};
use crate::block::{Block, Regs};
use crate::merge::block::unrolled;
use crate::topk::{
    DIGIT_BINS, DIGIT_BITS, DIGIT_COPIES, DIGIT_COPY_STRIDE, NO_INDEX, ROW_ITEMS,
    ROW_NETWORK_REGISTERS, THREADS, TopKey, VECTOR_BYTES, WARPS, network_per_thread, padded_k,
    rows_shared_layout, selects_in_registers, tile_position,
};

const ITEMS: usize = ROW_ITEMS as usize;

/// The block's shared memory, as [`rows_shared_layout`] lays it out.
struct Shared<I> {
    hist: *mut u32,
    sums: *mut u32,
    chosen: *mut u32,
    counter: *mut u32,
    items: *mut I,
}

/// Runs the parts `first, first + step, …` of a round that [`selects_in_registers`] (`step` =
/// the launch's blocks), each as [`select_row`] does.
///
/// # Safety
/// The buffers of `args` hold what their fields say and its round selects in registers;
/// `shared` is 16-byte aligned and holds `rows_shared_layout(size_of::<K>(), args.k)[5]` bytes
/// used by this block alone; the block has [`THREADS`] threads.
#[inline(always)]
pub unsafe fn select_rows<K: TopKey, B: Counting + Lanes>(
    block: &B,
    shared: *mut u8,
    args: &Args<K>,
    first: u64,
    step: u64,
) {
    debug_assert!(selects_in_registers(&args.round));
    let mut b = first;
    while b < args.round.blocks() {
        if b != first {
            // The last part's write-out read the items its network left in shared memory.
            block.sync();
        }
        // SAFETY: the caller's contract; block b's part lies inside the round and holds at
        // most ROW_MAX_KEYS keys.
        unsafe {
            let part = Part::of(args, b);
            let sorted = args.round.parts == 1;
            select_row(
                block,
                shared,
                &part,
                (args.k, sorted),
                args.encode,
                args.decode,
            );
        }
        b += step;
    }
}

/// The bits of a key above bit `shift` (none for `shift` of 64).
#[inline(always)]
fn above(shift: u32) -> u64 {
    u64::MAX.checked_shl(shift).unwrap_or(0)
}

/// Selects the `k` smallest items of one part held in registers and writes their keys
/// (through the inverse of `decode`) and indices, smallest first if `sorted` (the last round),
/// else in position order (as candidates, whose order the next round reads ties by); slots
/// past the part's keys get [`NO_INDEX`].
///
/// # Safety
/// As [`select_rows`], for the part (`part.len ≤ ROW_MAX_KEYS`).
#[inline(always)]
unsafe fn select_row<K: TopKey, B: Counting + Lanes>(
    block: &B,
    shared: *mut u8,
    part: &Part<K>,
    (k, sorted): (u32, bool),
    encode: u32,
    decode: u32,
) {
    let nt = THREADS;
    let none = K::NONE;
    let key_bytes = size_of::<K>() as u32;
    let [hist, sums, chosen, counter, items, _] = rows_shared_layout(key_bytes, k);
    // SAFETY: the regions of the caller's shared memory.
    let sh = unsafe {
        Shared {
            hist: shared.add(hist as usize) as *mut u32,
            sums: shared.add(sums as usize) as *mut u32,
            chosen: shared.add(chosen as usize) as *mut u32,
            counter: shared.add(counter as usize) as *mut u32,
            items: shared.add(items as usize) as *mut K::Item,
        }
    };
    let bins = DIGIT_BINS as usize;
    let (copies, stride) = (DIGIT_COPIES as usize, DIGIT_COPY_STRIDE as usize);
    let kp = padded_k(k);
    // SAFETY (every block below): indices stay inside their shared regions (histograms below
    // 2 × copies × stride, sums below 2 × WARPS, chosen below 8, items below kp), and loads
    // inside the part.
    block.units(2 * DIGIT_COPIES * DIGIT_COPY_STRIDE, |b| unsafe {
        *sh.hist.add(b as usize) = 0
    });
    block.units(kp, |i| unsafe { *sh.items.add(i as usize) = none });
    block.units(1, |_| unsafe { *sh.counter = 0 });
    let aligned = (part.keys as usize).is_multiple_of(VECTOR_BYTES as usize);
    let mut held = block.regs(nt, ([K::INFINITY; ITEMS], 0u32));
    block.units(nt, |u| {
        let u = block.opaque(u);
        let (keys, present) = held.unit(u);
        *present = unsafe { load_tile::<K, B, ITEMS>(block, part, u, 0, aligned, keys) };
        unrolled::<ITEMS>(|q| keys[q] = keys[q].encode(encode));
    });
    block.sync();

    // Block-uniform: every thread computes them alike from shared memory read after a barrier.
    let mut prefix = 0u64; // the digits found so far, in place
    let mut shift = 8 * key_bytes; // the lowest bit of the last digit found
    let mut need = k; // keys still wanted among those that agree with `prefix`
    let mut whole = false; // the last digit's bin is selected whole
    let mut scans = 0usize; // block-wide scans so far: their warp sums alternate halves
    let mut scan = block.regs(nt, [0u64; 1]);
    let mut in_bin = block.regs(nt, 0u32);
    while shift > 0 {
        let digit = shift - DIGIT_BITS;
        let known = above(shift);
        let h = unsafe { sh.hist.add((scans % 2) * copies * stride) };
        let next = unsafe { sh.hist.add(((scans + 1) % 2) * copies * stride) };
        block.units(nt, |u| {
            let u = block.opaque(u);
            let copy = unsafe { h.add(u as usize % copies * stride) };
            let (keys, present) = held.unit(u);
            unrolled::<ITEMS>(|q| {
                let w = keys[q].wide();
                if *present & (1 << q) != 0 && (w ^ prefix) & known == 0 {
                    let bin = (w >> digit) as usize & (bins - 1);
                    unsafe { block.add(copy.add(bin), 1) };
                }
            });
        });
        block.sync();
        block.units(nt, |u| {
            let mut count = 0;
            unrolled::<{ DIGIT_COPIES as usize }>(|c| unsafe {
                count += *h.add(c * stride + u as usize);
                // The other histogram was last read before the barrier that ended the last
                // round.
                *next.add(c * stride + u as usize) = 0;
            });
            *in_bin.unit(u) = count;
            scan.unit(u)[0] = u64::from(count);
        });
        let total =
            unsafe { inclusive_scan(block, &mut scan, sh.sums.add((scans % 2) * WARPS as usize)) };
        if scans == 0 {
            need = need.min(total);
        }
        if need == 0 {
            break;
        }
        let chosen = unsafe { sh.chosen.add((scans % 2) * 4) };
        block.units(nt, |u| {
            let count = *in_bin.unit(u);
            let upto = scan.unit(u)[0] as u32;
            if upto - count < need && need <= upto {
                unsafe {
                    *chosen = u;
                    *chosen.add(1) = upto - count;
                    *chosen.add(2) = count;
                }
            }
        });
        block.sync();
        let (bin, below, count) = unsafe { (*chosen, *chosen.add(1), *chosen.add(2)) };
        prefix |= u64::from(bin) << digit;
        need -= below;
        shift = digit;
        scans += 1;
        if count == need {
            whole = true;
            break;
        }
    }

    // Selected: the keys below the prefix found, and those equal to it where its bin goes
    // whole; otherwise (the k-th key's equals outnumber the keys still wanted) the first
    // `need` of its equals in position order.
    let known = above(shift);
    let mut taken = block.regs(nt, 0u32);
    block.units(nt, |u| {
        let (keys, present) = held.unit(u);
        let mut bits = 0;
        unrolled::<ITEMS>(|q| {
            let w = keys[q].wide() & known;
            if *present & (1 << q) != 0 && (w < prefix || (whole && w == prefix)) {
                bits |= 1 << q;
            }
        });
        *taken.unit(u) = bits;
    });
    let sums = sh.sums;
    let mut ranked = Ranked {
        scan: &mut scan,
        sums,
        scans,
        per_vector: (VECTOR_BYTES / key_bytes) as usize,
    };
    if !whole && need > 0 {
        let mut equal = block.regs(nt, 0u32);
        block.units(nt, |u| {
            let (keys, present) = held.unit(u);
            let mut bits = 0u32;
            unrolled::<ITEMS>(|q| {
                if *present & (1 << q) != 0 && keys[q].wide() == prefix {
                    bits |= 1 << q;
                }
            });
            *equal.unit(u) = bits;
        });
        unsafe {
            ranked.each(block, &mut equal, |u, q, rank| {
                if rank < need {
                    *taken.unit(u) |= 1 << q;
                }
            })
        };
    }
    if !sorted {
        // A round over candidates: the next round wants them in position order, not sorted.
        let written = unsafe {
            ranked.each(block, &mut taken, |u, q, rank| {
                let (keys, _) = held.unit(u);
                let pos = tile_position(key_bytes, u, q as u32);
                write(part, rank, keys[q].decode(decode), pos);
            })
        };
        let k = block.opaque(k);
        block.units(k.saturating_sub(written), |i| unsafe {
            *part.out_keys.add((written + i) as usize) = K::INFINITY;
            *part.out_indices.add((written + i) as usize) = NO_INDEX;
        });
        return;
    }

    // The selected items into shared memory, in any order (they are sorted next).
    block.units(nt, |u| {
        let u = block.opaque(u);
        let bits = *taken.unit(u);
        if bits != 0 {
            let mut slot = unsafe { block.fetch_add(sh.counter, bits.count_ones()) };
            let (keys, _) = held.unit(u);
            unrolled::<ITEMS>(|q| {
                if bits & (1 << q) != 0 && slot < kp {
                    let item = keys[q].pack(tile_position(key_bytes, u, q as u32));
                    unsafe { *sh.items.add(slot as usize) = item };
                    slot += 1;
                }
            });
        }
    });
    block.sync();
    let kp = block.opaque(kp);
    let v = network_per_thread(kp);
    let mut net = block.regs(nt, [none; ROW_NETWORK_REGISTERS]);
    block.units(nt, |t| {
        let t = block.opaque(t);
        let mine: &mut [K::Item; ROW_NETWORK_REGISTERS] = net.unit(t);
        unrolled::<ROW_NETWORK_REGISTERS>(|r| {
            let i = t * v + r as u32;
            if (r as u32) < v && i < kp {
                mine[r] = unsafe { *sh.items.add(i as usize) };
            }
        });
    });
    unsafe { network(block, &mut net, sh.items, kp, 2, none) };
    let k = block.opaque(k);
    block.units(nt, |t| {
        let t = block.opaque(t);
        let mine = net.unit(t);
        unrolled::<ROW_NETWORK_REGISTERS>(|r| {
            let i = t * v + r as u32;
            if (r as u32) < v && i < k {
                let item = mine[r];
                unsafe {
                    if item == none {
                        *part.out_keys.add(i as usize) = K::INFINITY;
                        *part.out_indices.add(i as usize) = NO_INDEX;
                    } else {
                        let (key, pos) = K::unpack(item);
                        write(part, i, key.decode(decode), pos);
                    }
                }
            }
        });
    });
}

/// Writes `key`, from position `pos` of the part, to output slot `slot` with its index.
///
/// # Safety
/// `slot` is below the part's k outputs; `pos` inside the part.
#[inline(always)]
unsafe fn write<K: TopKey>(part: &Part<K>, slot: u32, key: K, pos: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        let index = if part.indices.is_null() {
            part.first_index + u64::from(pos)
        } else {
            *part.indices.add(pos as usize)
        };
        *part.out_keys.add(slot as usize) = key;
        *part.out_indices.add(slot as usize) = index;
    }
}

/// Ranks keys in position order: the block-wide scans of [`Ranked::each`] and where their warp
/// sums go (two halves, used in turn, continuing the digit rounds' count).
pub(super) struct Ranked<'a, B: Block> {
    scan: &'a mut B::Regs<[u64; 1]>,
    sums: *mut u32,
    scans: usize,
    per_vector: usize,
}

impl<'a, B: Lanes> Ranked<'a, B> {
    /// Ranks whose scans start with the first half of `sums` ([`WARPS`] `u32` twice), for keys
    /// in vectors of `per_vector`.
    #[inline(always)]
    pub(super) fn new(scan: &'a mut B::Regs<[u64; 1]>, sums: *mut u32, per_vector: usize) -> Self {
        Ranked {
            scan,
            sums,
            scans: 0,
            per_vector,
        }
    }

    /// Calls `f(u, q, rank)` for every key `q` of every unit `u` marked in `marks` (a bit per
    /// key), `rank` its rank among the marked keys in position order; returns how many are
    /// marked. A thread's keys are vectors of `per_vector` consecutive positions, each row of
    /// vectors one thread after another ([`tile_position`]): a scan per row of vectors, rows
    /// in turn, one barrier each. Every thread calls it.
    ///
    /// # Safety
    /// As [`inclusive_scan`], for both halves of the sums.
    #[inline(always)]
    pub(super) unsafe fn each(
        &mut self,
        block: &B,
        marks: &mut B::Regs<u32>,
        mut f: impl FnMut(u32, usize, u32),
    ) -> u32 {
        let per_vector = self.per_vector;
        let mut before = 0u32;
        let mut row = 0;
        while row < ITEMS / per_vector {
            let in_row = ((1u32 << per_vector) - 1) << (row * per_vector);
            block.units(THREADS, |u| {
                self.scan.unit(u)[0] = u64::from((*marks.unit(u) & in_row).count_ones());
            });
            let sums = unsafe { self.sums.add((self.scans % 2) * WARPS as usize) };
            let total = unsafe { inclusive_scan(block, self.scan, sums) };
            self.scans += 1;
            block.units(THREADS, |u| {
                let bits = *marks.unit(u) & in_row;
                let mut rank = before + self.scan.unit(u)[0] as u32 - bits.count_ones();
                unrolled::<ITEMS>(|q| {
                    if bits & (1 << q) != 0 {
                        f(u, q, rank);
                        rank += 1;
                    }
                });
            });
            before += total;
            row += 1;
        }
        before
    }
}

/// Turns each unit's value in `scan` (one unit per thread) into the inclusive sum of the
/// values of the units up to it, in unit order, and returns the sum of all: a scan within each
/// warp by exchanges of (sum so far, sum of the lanes' group) between lanes, then the warps'
/// sums through `sums`. Every thread calls it; it has one barrier, after which `sums` is read.
///
/// # Safety
/// `sums` holds [`WARPS`] `u32` of the block's shared memory that no thread reads or writes
/// between the barrier before the call and the one after.
#[inline(always)]
pub(super) unsafe fn inclusive_scan<B: Lanes>(
    block: &B,
    scan: &mut B::Regs<[u64; 1]>,
    sums: *mut u32,
) -> u32 {
    // Low half: the lane's inclusive sum within its group of lanes; high half: the group's.
    block.units(THREADS, |u| {
        let value = scan.unit(u)[0];
        scan.unit(u)[0] = value | (value << 32);
    });
    let mut width = 1;
    while width < 32 {
        block.exchange(scan, 0, width, |u, mine, theirs| {
            let theirs = theirs >> 32;
            let (mut upto, group) = (*mine & 0xffff_ffff, (*mine >> 32) + theirs);
            if u & width != 0 {
                upto += theirs;
            }
            *mine = upto | (group << 32);
        });
        width *= 2;
    }
    block.units(THREADS, |u| {
        if u % 32 == 31 {
            // SAFETY: the caller's contract; a warp's own slot.
            unsafe { *sums.add((u / 32) as usize) = (scan.unit(u)[0] >> 32) as u32 };
        }
    });
    block.sync();
    let mut total = 0;
    unrolled::<{ WARPS as usize }>(|w| total += unsafe { *sums.add(w) });
    block.units(THREADS, |u| {
        let mut before = 0u64;
        unrolled::<{ WARPS as usize }>(|w| {
            if (w as u32) < u / 32 {
                before += u64::from(unsafe { *sums.add(w) });
            }
        });
        let mine = scan.unit(u);
        mine[0] = (mine[0] & 0xffff_ffff) + before;
    });
    total
}
