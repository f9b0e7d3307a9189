//! A block's work in the stable merge sort (moderngpu's names: `nt` threads, `vt` keys per
//! thread, `nv = nt · vt` keys per tile), generic over the [`Block`] so that the CPU tests run
//! this very code.
//!
//! The shape of CUB's and moderngpu's merge sort: every merge is a *serial merge into
//! registers*. A thread finds where its `vt` outputs start with a merge-path search in shared
//! memory, then takes them one at a time from the two sorted lists (ties to the first list, so
//! every merge is stable) into a fully unrolled array of `vt` registers. Keys move between
//! registers and shared memory only in whole tiles: coalesced (thread `u` at slots `r·nt + u`)
//! to and from device memory, thread-ordered (slots `u·vt + k`) to and from registers; with `vt`
//! odd both orders hit 32 different banks per warp.
//!
//! Values never take part in the merges. A merge records, for each output, the tile slot its
//! key came from (a `u32`), and only the tile's last store reads each value by that slot: from
//! device memory in a merge pass (values never enter shared memory), from the tile's values in
//! shared memory in the tile sort.
//!
//! - [`sort_tile`]: load a tile (keys encoded, +∞ past the end), each thread sorts its `vt` keys
//!   in registers with odd-even transposition (stable: swaps only on strict `>`), then
//!   `log2 nt` rounds of merges of pairs of sorted runs.
//! - [`partition_unit`]: one merge-path split per output tile of a merge pass, in global memory,
//!   found by one thread (a pass) or one warp (a merge of two runs), [`crate::merge::Search`].
//! - [`merge_tile`]: load the tile's slices of the two runs, each thread merges `vt` outputs.
//!
//! Stores to device memory, and the tile sort's loads, are 16-byte vectors of consecutive keys
//! (or values) when the device address is 16-byte aligned, as it is for buffers from the
//! allocator; otherwise one element per access (a block-uniform choice). The merge passes load
//! their two slices one key per thread and load: the slices start anywhere.
//!
//! Every loop over a thread's `vt` keys is straight-line code ([`unrolled`]), so that its arrays
//! stay in registers (`host`'s test `merge_kernels_keep_their_arrays_in_registers` checks the
//! PTX).

use crate::block::{Block, Regs};
use crate::keys::{IDENTITY, KeyBits};
use crate::merge::{Pairing, Search, TileRanges, merge_path_32, partition, partition_pass};
use crate::tuning::{MERGE_KEY_PAD, merge_key_buffer_bytes};

/// Values carried with the keys: `()` for keys-only sorts, `u32`, `u64` or `u128`. The kernels
/// only move them (loads, stores, register moves), never look at them: the host passes any
/// payload of up to 16 bytes in slots of one of these widths.
pub trait Payload: Copy + Default {
    /// What a merge records per output so that the value can be found later: the tile slot
    /// (`u32`), or nothing for keys only.
    type Slot: Slot;
}
impl Payload for () {
    type Slot = ();
}
impl Payload for u32 {
    type Slot = u32;
}
impl Payload for u64 {
    type Slot = u32;
}
impl Payload for u128 {
    type Slot = u32;
}

/// A recorded tile slot, or nothing (keys-only sorts, where it costs no register).
pub trait Slot: Copy + Default {
    /// Records slot `i`.
    fn new(i: u32) -> Self;
    /// The slot recorded.
    fn get(self) -> u32;
}
impl Slot for () {
    #[inline(always)]
    fn new(_: u32) -> Self {}
    #[inline(always)]
    fn get(self) -> u32 {
        0
    }
}
impl Slot for u32 {
    #[inline(always)]
    fn new(i: u32) -> Self {
        i
    }
    #[inline(always)]
    fn get(self) -> u32 {
        self
    }
}

/// The alignment the kernels declare their dynamic shared memory with, so that 16-byte shared
/// accesses compile to vector instructions.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Align16([u32; 4]);

#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct Align8([u32; 2]);

/// Reads `G` consecutive elements at `p`: one vector load when they are 8 or 16 bytes.
///
/// # Safety
/// `p` is valid for `G` reads and aligned to `G · size_of::<T>()` bytes when that is 8 or 16.
#[inline(always)]
unsafe fn read_group<T: Copy, const G: usize>(p: *const T) -> [T; G] {
    // SAFETY (all arms): the caller's contract; the sizes match in the arm that runs.
    unsafe {
        match G * size_of::<T>() {
            // A whole aligned vector first, then reinterpreted: a direct `transmute_copy` from
            // `p` would read with `T`'s alignment, one element at a time.
            16 => {
                let v: Align16 = *(p as *const Align16);
                core::mem::transmute_copy(&v)
            }
            8 => {
                let v: Align8 = *(p as *const Align8);
                core::mem::transmute_copy(&v)
            }
            _ => core::array::from_fn(|j| *p.add(j)),
        }
    }
}

/// Writes `G` consecutive elements at `p`: one vector store when they are 8 or 16 bytes.
///
/// # Safety
/// As [`read_group`], for writes.
#[inline(always)]
unsafe fn write_group<T: Copy, const G: usize>(p: *mut T, v: [T; G]) {
    // SAFETY (all arms): the caller's contract; the sizes match in the arm that runs.
    unsafe {
        match G * size_of::<T>() {
            16 => *(p as *mut Align16) = core::mem::transmute_copy(&v),
            8 => *(p as *mut Align8) = core::mem::transmute_copy(&v),
            _ => {
                for (j, x) in v.into_iter().enumerate() {
                    *p.add(j) = x;
                }
            }
        }
    }
}

/// Whether `p` is aligned for [`read_group`]/[`write_group`] of `G` elements.
#[inline(always)]
fn group_aligned<T, const G: usize>(p: *const T) -> bool {
    let bytes = G * size_of::<T>();
    !(bytes == 8 || bytes == 16) || (p as usize).is_multiple_of(bytes)
}

/// The global buffers of one launch: keys and values are read from `src_*` and written to
/// `dst_*` (the same buffers for an in-place tile sort).
#[derive(Clone, Copy)]
pub struct Buffers<K, V> {
    /// Keys read.
    pub src_keys: *const K,
    /// Keys written.
    pub dst_keys: *mut K,
    /// Values read (dangling for `V = ()`).
    pub src_values: *const V,
    /// Values written (dangling for `V = ()`).
    pub dst_values: *mut V,
    /// Where the launch records the first and last key of each output tile of `MERGE_TILE`
    /// keys, for the next pass's partition ([`crate::merge::partition_pass`]): keys `2t` and
    /// `2t + 1` for tile `t` of the launch's keys; null for none.
    pub edges: *mut K,
}

/// A thread's registers in a merge: its `vt` keys and the slots they came from.
type Run<K, V, const VT: usize> = ([K; VT], [<V as Payload>::Slot; VT]);

/// A block's shared memory: `nv + MERGE_KEY_PAD` keys, then (with values) `nv` slots, then (tile
/// sort with values) `nv` values; each buffer 16-byte aligned
/// ([`crate::tuning::merge_sort_shared_bytes`]).
struct Shared<'b, K, V, B, const VT: usize> {
    keys: *mut K,
    slots: *mut u32,
    values: *mut V,
    nt: u32,
    block: &'b B,
}

impl<'b, K: KeyBits, V: Payload, B: Block, const VT: usize> Shared<'b, K, V, B, VT> {
    /// # Safety
    /// `shared` is 16-byte aligned and holds `merge_shared_bytes(nt · VT, …)` bytes (merge
    /// pass) or `merge_sort_shared_bytes(nt · VT, …)` (tile sort) used by this block alone.
    #[inline(always)]
    unsafe fn new(shared: *mut u8, nt: u32, block: &'b B) -> Self {
        const { assert!(VT as u32 <= MERGE_KEY_PAD && VT > 0) };
        let nv = nt * VT as u32;
        let key_bytes = merge_key_buffer_bytes(nv, size_of::<K>() as u32);
        let slot_bytes = if size_of::<V>() > 0 {
            (nv * 4).next_multiple_of(16)
        } else {
            0
        };
        // SAFETY: inside the shared memory (the caller's contract).
        let slots = unsafe { shared.add(key_bytes as usize) };
        Shared {
            keys: shared as *mut K,
            slots: slots as *mut u32,
            // SAFETY: as above.
            values: unsafe { slots.add(slot_bytes as usize) } as *mut V,
            nt,
            block,
        }
    }

    /// Runs `f(u)` for every unit `u < nt` this thread owns (one on the GPU, all on the CPU).
    #[inline(always)]
    fn for_each_unit(&self, f: impl FnMut(u32)) {
        self.block.units(self.nt, f);
    }

    /// Records the edges of the `len` keys the block holds in output order (thread-ordered
    /// slots), output tile `first_tile` onwards, in tiles of `tile` keys (a divisor of the
    /// block's tile): one thread per tile (`edges` null: nothing).
    ///
    /// # Safety
    /// `edges` has room for the tiles' edges; the block's keys are in shared memory (a barrier
    /// after the `put`).
    #[inline(always)]
    unsafe fn record_edges(&self, edges: *mut K, len: u32, first_tile: u64, tile: u32) {
        if edges.is_null() {
            return;
        }
        self.for_each_unit(|u| {
            if u * tile < len {
                let (first, last) = (u * tile, ((u + 1) * tile).min(len) - 1);
                let at = 2 * (first_tile + u64::from(u)) as usize;
                // SAFETY: the caller's contract; first ≤ last < len.
                unsafe {
                    *edges.add(at) = self.key(first);
                    *edges.add(at + 1) = self.key(last);
                }
            }
        });
    }

    #[inline(always)]
    fn key(&self, i: u32) -> K {
        // SAFETY: i < nv + MERGE_KEY_PAD (every caller).
        unsafe { *self.keys.add(i as usize) }
    }

    #[inline(always)]
    fn slot(&self, i: u32) -> u32 {
        // SAFETY: i < nv (every caller).
        unsafe { *self.slots.add(i as usize) }
    }

    #[inline(always)]
    fn value(&self, i: u32) -> V {
        // SAFETY: i < nv (every caller).
        unsafe { *self.values.add(i as usize) }
    }

    /// Fills shared `dst[0 .. nv]` with `f(src[i])` for `i < len` and `fill` past it, coalesced:
    /// groups of `G` consecutive elements, one vector load and store per group when `src` is
    /// aligned for it, else one element per access; every load of the thread in flight before
    /// its first shared store.
    ///
    /// # Safety
    /// `src` holds `len <= nv` elements; `dst` is a shared buffer of `nv` elements, 16-byte
    /// aligned.
    // Straight-line [`unrolled`] calls, not iterators: an array iterator
    // (`into_iter().enumerate().take(..)`) kept a run-time position, and the arrays of the tile
    // sort went to local memory.
    #[inline(always)]
    unsafe fn load_tile<T: Copy, const G: usize>(
        &self,
        len: u32,
        src: *const T,
        dst: *mut T,
        fill: T,
        f: impl Fn(T) -> T,
    ) {
        let nv = self.nt * VT as u32;
        if G > 1 && group_aligned::<T, G>(src) && nv.is_multiple_of(G as u32) {
            let groups = nv / G as u32;
            self.for_each_unit(|u| {
                let mut got = [[fill; G]; VT];
                let rounds = VT.div_ceil(G);
                unrolled::<VT>(|r| {
                    let i = (r as u32 * self.nt + u) * G as u32;
                    if r >= rounds {
                    } else if i + G as u32 <= len {
                        // SAFETY: i + G <= len; src + i is aligned (src is, and i is a
                        // multiple of G).
                        got[r] = unsafe { read_group::<T, G>(src.add(i as usize)) };
                    } else {
                        unrolled::<G>(|j| {
                            if i + (j as u32) < len {
                                // SAFETY: inside the `len` elements.
                                got[r][j] = unsafe { *src.add(i as usize + j) };
                            }
                        });
                    }
                });
                unrolled::<VT>(|r| {
                    let g = r as u32 * self.nt + u;
                    let i = g * G as u32;
                    if r < rounds && g < groups {
                        let mut out = got[r];
                        unrolled::<G>(|j| {
                            out[j] = if i + (j as u32) < len {
                                f(out[j])
                            } else {
                                fill
                            };
                        });
                        // SAFETY: i + G <= nv; aligned (the buffer is, i is a multiple of G).
                        unsafe { write_group::<T, G>(dst.add(i as usize), out) };
                    }
                });
            });
        } else {
            self.for_each_unit(|u| {
                let mut got = [fill; VT];
                unrolled::<VT>(|r| {
                    let i = r as u32 * self.nt + u;
                    if i < len {
                        // SAFETY: i < len.
                        got[r] = unsafe { *src.add(i as usize) };
                    }
                });
                unrolled::<VT>(|r| {
                    let i = r as u32 * self.nt + u;
                    let x = if i < len { f(got[r]) } else { fill };
                    // SAFETY: i < nv.
                    unsafe { *dst.add(i as usize) = x };
                });
            });
        }
    }

    /// Writes outputs `0 .. len` of the tile to `dst[0 .. len]`, coalesced: groups of `G`
    /// consecutive outputs, `group(i)` giving outputs `i .. i + G` (`i + G <= len`) for one
    /// vector store when `dst` is aligned for it, `one(i)` giving output `i` otherwise.
    ///
    /// # Safety
    /// `dst` has room for `len <= nv` elements; `group` and `one` are safe to call with those
    /// arguments.
    #[inline(always)]
    unsafe fn store<T: Copy, const G: usize>(
        &self,
        len: u32,
        dst: *mut T,
        group: impl Fn(u32) -> [T; G],
        one: impl Fn(u32) -> T,
    ) {
        let nv = self.nt * VT as u32;
        if G > 1 && group_aligned::<T, G>(dst) && nv.is_multiple_of(G as u32) {
            self.for_each_unit(|u| {
                for r in 0..VT.div_ceil(G) {
                    let i = (r as u32 * self.nt + u) * G as u32;
                    if i + G as u32 <= len {
                        // SAFETY: i + G <= len; aligned as `dst` is.
                        unsafe { write_group::<T, G>(dst.add(i as usize), group(i)) };
                    } else {
                        for j in 0..G as u32 {
                            if i + j < len {
                                // SAFETY: i + j < len.
                                unsafe { *dst.add((i + j) as usize) = one(i + j) };
                            }
                        }
                    }
                }
            });
        } else {
            self.for_each_unit(|u| {
                for r in 0..VT as u32 {
                    let i = r * self.nt + u;
                    if i < len {
                        // SAFETY: i < len.
                        unsafe { *dst.add(i as usize) = one(i) };
                    }
                }
            });
        }
    }

    /// Keys of shared slots `i .. i + G` (`i` a multiple of `G`, `i + G <= nv`), through `f`.
    #[inline(always)]
    fn key_group<const G: usize>(&self, i: u32, f: impl Fn(K) -> K) -> [K; G] {
        // SAFETY: inside the key buffer, aligned (16-byte aligned buffer, i a multiple of G).
        unsafe { read_group::<K, G>(self.keys.add(i as usize)) }.map(f)
    }

    /// Slots recorded for outputs `i .. i + G` (as [`Shared::key_group`]).
    #[inline(always)]
    fn slot_group<const G: usize>(&self, i: u32) -> [u32; G] {
        // SAFETY: inside the slot buffer, aligned as in `key_group`.
        unsafe { read_group::<u32, G>(self.slots.add(i as usize)) }
    }

    /// Stores the tile's keys from shared slots `0 .. len` to `dst`, decoded: 16-byte groups.
    /// Every pass but the last has `decode = IDENTITY`, and skips the decoding altogether.
    ///
    /// # Safety
    /// `dst` has room for `len <= nv` keys.
    #[inline(always)]
    unsafe fn store_keys(&self, len: u32, dst: *mut K, decode: u32) {
        // SAFETY (all): the caller's contract.
        unsafe {
            if decode == IDENTITY {
                self.store_keys_with(len, dst, |k| k);
            } else {
                self.store_keys_with(len, dst, |k: K| k.decode(decode));
            }
        }
    }

    /// [`Shared::store_keys`] through `f`.
    ///
    /// # Safety
    /// As [`Shared::store_keys`].
    #[inline(always)]
    unsafe fn store_keys_with(&self, len: u32, dst: *mut K, f: impl Fn(K) -> K + Copy) {
        let one = |i| f(self.key(i));
        // SAFETY (both): the caller's contract.
        if size_of::<K>() == 4 {
            unsafe { self.store::<K, 4>(len, dst, |i| self.key_group(i, f), one) }
        } else {
            unsafe { self.store::<K, 2>(len, dst, |i| self.key_group(i, f), one) }
        }
    }

    /// Stores the values of outputs `0 .. len` to `dst`: output `i`'s value is `value(slot)`
    /// for the slot recorded for it. Groups of 16 bytes of values.
    ///
    /// # Safety
    /// `dst` has room for `len <= nv` values; `value` is safe to call with every recorded slot
    /// of an output `< len`.
    #[inline(always)]
    unsafe fn store_values(&self, len: u32, dst: *mut V, value: impl Fn(u32) -> V) {
        let one = |i| value(self.slot(i));
        // SAFETY (all): the caller's contract.
        match size_of::<V>() {
            0 => {}
            4 => unsafe {
                self.store::<V, 4>(len, dst, |i| self.slot_group::<4>(i).map(&value), one)
            },
            _ => unsafe {
                self.store::<V, 2>(len, dst, |i| self.slot_group::<2>(i).map(&value), one)
            },
        }
    }

    /// Each unit writes its run of keys (and slots) to shared slots `u·VT .. (u+1)·VT`, the
    /// thread-ordered layout the merges read.
    #[inline(always)]
    fn put(&self, regs: &mut B::Regs<Run<K, V, VT>>) {
        self.for_each_unit(|u| {
            let (keys, slots) = regs.unit(u);
            let first = (u * VT as u32) as usize;
            unrolled::<VT>(|k| {
                // SAFETY: u·VT + k < nv; the units write disjoint slots.
                unsafe {
                    *self.keys.add(first + k) = keys[k];
                    if size_of::<V>() > 0 {
                        *self.slots.add(first + k) = slots[k].get();
                    }
                }
            });
        });
    }

    /// One thread's part of the stable merge of sorted lists A = `key[a0 .. a1]` and
    /// B = `key[b0 .. b1]` (ties to A): outputs `diag .. diag + VT` into `keys`, with the shared
    /// slot each came from into `slots`. Outputs past `(a1 − a0) + (b1 − b0)` are garbage; the
    /// reads stay below `max(a1, b1) + VT`.
    ///
    /// The merge-path search finds the start; then each step takes the smaller head (A's on
    /// ties), with selects rather than branches, and reads the next key of the list it took
    /// from: one shared load per output.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn merge(
        &self,
        a0: u32,
        a1: u32,
        b0: u32,
        b1: u32,
        diag: u32,
        keys: &mut [K; VT],
        slots: &mut [V::Slot; VT],
    ) {
        let split = merge_path_32(
            diag,
            a1 - a0,
            b1 - b0,
            |i| self.key(a0 + i),
            |j| self.key(b0 + j),
        );
        let (mut a, mut b) = (a0 + split, b0 + diag - split);
        let (mut ka, mut kb) = (self.key(a), self.key(b));
        unrolled::<VT>(|k| {
            // Not short-circuiting: no branches.
            let take_a = (b >= b1) | ((a < a1) & (ka <= kb));
            let at = if take_a { a } else { b };
            keys[k] = if take_a { ka } else { kb };
            slots[k] = V::Slot::new(at);
            if k + 1 < VT {
                let next = self.key(at + 1);
                if take_a {
                    (ka, a) = (next, at + 1);
                } else {
                    (kb, b) = (next, at + 1);
                }
            }
        });
    }
}

/// Calls `f(0), f(1), …, f(N − 1)` (`N <= 64`) as straight-line code, not a loop: every call
/// gets a constant argument however large the body, so arrays indexed by it stay in registers.
/// (LLVM unrolls a loop fully only below a size threshold; the 17-key register sort as nested
/// loops stayed a loop, whose loop-carried arrays cost a register move per key and round.)
#[inline(always)]
pub fn unrolled<const N: usize>(mut f: impl FnMut(usize)) {
    const { assert!(N <= 64) };
    macro_rules! calls {
        ($($i:literal)*) => {
            $(
                if $i < N {
                    f($i);
                }
            )*
        };
    }
    calls!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61
        62 63
    );
}

/// Sorts `VT` keys and their slots stably: odd-even transposition, `VT` rounds of
/// compare-exchanges that swap only on a strict `>` (for keys alone, a min and a max), all
/// unrolled ([`unrolled`]).
#[inline(always)]
pub fn odd_even_transposition<K: KeyBits, S: Copy, const VT: usize>(
    keys: &mut [K; VT],
    slots: &mut [S; VT],
) {
    unrolled::<VT>(|round| {
        unrolled::<VT>(|i| {
            if i % 2 == round % 2 && i + 1 < VT && keys[i] > keys[i + 1] {
                keys.swap(i, i + 1);
                slots.swap(i, i + 1);
            }
        })
    });
}

/// Tile `tile` of the tile sort: keys `tile·nv .. min((tile+1)·nv, n)` of `buf.src_*` sorted
/// stably (keys through `encode` on the way in, through the inverse of `decode` on the way out)
/// into the same positions of `buf.dst_*`.
///
/// `STAGED`: the tile's values are loaded into shared memory with the keys, and the store reads
/// each output's value there by its slot (`merge_sort_shared_bytes`). Otherwise (the compact
/// tile sort, `merge_sort_shared_bytes` less the values: `merge_shared_bytes`) the store first
/// reads each output's value from `buf.src_values` by its slot into registers, and writes them
/// after a barrier, so that `src` may still equal `dst`.
///
/// Registers across phases: each thread's `vt` keys (and slots). Phases: load (coalesced, keys
/// +∞ past the end, values to shared memory); read the thread's `vt` consecutive keys and sort
/// them; then per round (groups of `coop = 2, 4, …, nt` threads merge two runs of
/// `coop/2 · vt` keys) write the runs to shared memory, merge; finally write and store. Rounds
/// of groups within one warp synchronise the warp only.
///
/// # Safety
/// The buffers hold `n` keys and values, and no other block touches this tile's positions
/// (`src` may equal `dst`: every read of device memory happens before a barrier that every
/// write follows); `shared` holds `merge_sort_shared_bytes(nt · VT, …)` bytes (`STAGED`) or
/// `merge_shared_bytes(nt · VT, …)`, 16-byte aligned; `nt` a power of two, the same for every
/// thread of the block.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sort_tile<K: KeyBits, V: Payload, B: Block, const VT: usize, const STAGED: bool>(
    block: &B,
    nt: u32,
    shared: *mut u8,
    buf: Buffers<K, V>,
    n: u64,
    tile: u64,
    encode: u32,
    decode: u32,
    edge_tile: u32,
) {
    // SAFETY: the caller's contract.
    let sh = unsafe { Shared::<K, V, B, VT>::new(shared, nt, block) };
    let nv = nt * VT as u32;
    debug_assert!(nv.is_multiple_of(edge_tile));
    let base = tile * u64::from(nv);
    let len = (n - base).min(u64::from(nv)) as u32;
    // SAFETY: positions base .. base + len hold keys and values; the shared buffers hold nv.
    unsafe {
        let src = buf.src_keys.add(base as usize);
        let encoded = |k: K| k.encode(encode);
        if size_of::<K>() == 4 {
            sh.load_tile::<K, 4>(len, src, sh.keys, K::INFINITY, encoded);
        } else {
            sh.load_tile::<K, 2>(len, src, sh.keys, K::INFINITY, encoded);
        }
        let src = buf.src_values.add(base as usize);
        match size_of::<V>() {
            0 => {}
            _ if !STAGED => {}
            4 => sh.load_tile::<V, 4>(len, src, sh.values, V::default(), |v| v),
            _ => sh.load_tile::<V, 2>(len, src, sh.values, V::default(), |v| v),
        }
    }
    block.sync();
    let mut regs = block.regs(nt, ([K::INFINITY; VT], [V::Slot::default(); VT]));
    sh.for_each_unit(|u| {
        let (keys, slots) = regs.unit(u);
        unrolled::<VT>(|k| {
            let i = u * VT as u32 + k as u32;
            keys[k] = sh.key(i);
            slots[k] = V::Slot::new(i);
        });
        odd_even_transposition(keys, slots);
    });
    // Round `coop`: groups of `coop` threads merge two runs of `coop/2 · VT` keys. Slots past
    // `len` hold +∞ and come after every real key, +∞ included (a stable sort keeps them last).
    let mut coop = 2;
    while coop <= nt {
        // Block barriers in every round: with warp barriers (`bar.warp.sync`) for the rounds
        // whose groups fit in a warp, compute-sanitizer's racecheck reported hazards between
        // `put` and the next merge's reads (docs/decisions.md, "Block barriers in the tile sort's
        // rounds"); the sort is the same either way.
        block.sync(); // the previous round's reads are done
        sh.put(&mut regs);
        block.sync();
        let run = coop / 2 * VT as u32;
        sh.for_each_unit(|u| {
            let (keys, slots) = regs.unit(u);
            let first = (u & !(coop - 1)) * VT as u32;
            let diag = u * VT as u32 - first;
            sh.merge(
                first,
                first + run,
                first + run,
                first + 2 * run,
                diag,
                keys,
                slots,
            );
            if size_of::<V>() > 0 {
                // From this round's shared slots to the tile's original positions.
                for slot in slots.iter_mut() {
                    *slot = V::Slot::new(sh.slot(slot.get()));
                }
            }
        });
        coop *= 2;
    }
    block.sync();
    sh.put(&mut regs);
    block.sync();
    // SAFETY: positions base .. base + len; slots recorded are original positions < nv, whose
    // values the load put in shared memory (`STAGED`); the edges of this tile's
    // `nv / edge_tile` output tiles.
    unsafe {
        sh.record_edges(buf.edges, len, base / u64::from(edge_tile), edge_tile);
        sh.store_keys(len, buf.dst_keys.add(base as usize), decode);
        let dst = buf.dst_values.add(base as usize);
        if STAGED {
            sh.store_values(len, dst, |s| sh.value(s));
        } else if size_of::<V>() > 0 {
            let src = buf.src_values.add(base as usize);
            gather_values::<K, V, B, VT>(&sh, len, src, dst);
        }
    }
}

/// The compact tile sort's store of values: each unit reads the values of its outputs
/// `r·nt + u` (`< len`) from `src` at the slots recorded for them, into registers; after a
/// barrier (every read of `src` done, so `dst` may be `src`), it writes them to `dst`,
/// coalesced, one value per access.
///
/// # Safety
/// `src` and `dst` hold `len` values; the recorded slots of outputs `< len` are `< len`.
#[inline(always)]
unsafe fn gather_values<K: KeyBits, V: Payload, B: Block, const VT: usize>(
    sh: &Shared<'_, K, V, B, VT>,
    len: u32,
    src: *const V,
    dst: *mut V,
) {
    let nt = sh.nt;
    let mut regs = sh.block.regs(nt, [V::default(); VT]);
    sh.for_each_unit(|u| {
        let values = regs.unit(u);
        unrolled::<VT>(|r| {
            let i = r as u32 * nt + u;
            if i < len {
                // SAFETY: the slot of output i < len is < len (the caller's contract).
                values[r] = unsafe { *src.add(sh.slot(i) as usize) };
            }
        });
    });
    sh.block.sync();
    sh.for_each_unit(|u| {
        let values = regs.unit(u);
        unrolled::<VT>(|r| {
            let i = r as u32 * nt + u;
            if i < len {
                // SAFETY: i < len.
                unsafe { *dst.add(i as usize) = values[r] };
            }
        });
    });
}

/// Unit `k` of the partition kernel of a merge launch paired by `pairing` (a warp or a thread,
/// whichever the searches need: `over_edges` searches the edges, `over_keys` the keys): writes the
/// merge-path split at the start of output tile `k` (tiles of `nv` keys) to `splits[k]`; units
/// past the last tile do nothing. A pass of the sort whose previous step recorded `edges` (non
/// null) searches with their help ([`partition_pass`]).
///
/// # Safety
/// `keys` holds `n` keys; `splits` has room for `ceil(n / nv)` indices; `edges`, unless null,
/// holds the edges of the `ceil(n / nv)` tiles of the keys, as the step that wrote them
/// recorded them.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn partition_unit<K: KeyBits>(
    keys: *const K,
    splits: *mut u64,
    n: u64,
    pairing: Pairing,
    nv: u64,
    k: u64,
    edges: *const K,
    (over_edges, over_keys): (&impl Search, &impl Search),
) {
    if k < n.div_ceil(nv) {
        // SAFETY (all reads): the search reads keys < n, and the edges of tiles < ceil(n / nv).
        let key = |i: u64| unsafe { *keys.add(i as usize) };
        let split = match pairing {
            Pairing::Pass { width } if !edges.is_null() => {
                let first = |t: u64| unsafe { *edges.add(2 * t as usize) };
                let last = |t: u64| unsafe { *edges.add(2 * t as usize + 1) };
                partition_pass(k, n, width, nv, key, first, last, (over_edges, over_keys))
            }
            _ => partition(k, n, pairing, nv, key, over_keys),
        };
        // SAFETY: k < ceil(n / nv).
        unsafe { *splits.add(k as usize) = split };
    }
}

/// Output tile `tile` of a merge launch paired by `pairing`: merges its slices of the two runs
/// (from the splits of [`partition_unit`]) from `buf.src_*` into `buf.dst_*`, keys through the
/// inverse of `decode`.
///
/// Phases: load the slices' keys (coalesced) into shared memory, A's then B's; each thread
/// searches its start and merges `vt` keys into registers, recording slots; the threads write
/// their keys (and slots) thread-ordered to shared memory; the block stores the keys coalesced
/// and, with values, each output's value read from device memory at its slot's position.
///
/// # Safety
/// The buffers hold `n` keys and values and do not overlap; `splits` holds the pass's splits;
/// `shared` holds `merge_shared_bytes(nt · VT, …)` bytes, 16-byte aligned.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn merge_tile<K: KeyBits, V: Payload, B: Block, const VT: usize>(
    block: &B,
    nt: u32,
    shared: *mut u8,
    buf: Buffers<K, V>,
    splits: *const u64,
    n: u64,
    pairing: Pairing,
    tile: u64,
    decode: u32,
) {
    // SAFETY: the caller's contract.
    let sh = unsafe { Shared::<K, V, B, VT>::new(shared, nt, block) };
    let nv = u64::from(nt) * VT as u64;
    // SAFETY: the caller's contract: one split per tile; `next` is read only for a tile k + 1
    // that exists.
    let r = unsafe {
        TileRanges::new(tile, n, pairing, nv, *splits.add(tile as usize), || {
            *splits.add(tile as usize + 1)
        })
    };
    let a_len = (r.a_end - r.a_begin) as u32;
    let total = r.len() as u32;
    // Tile slot i < a_len holds A's key a_begin + i, slot i >= a_len B's key
    // b_begin + (i − a_len): element i of one of two base pointers.
    let from_a = |p: *const K| p.wrapping_add(r.a_begin as usize);
    let from_b = |p: *const K| {
        p.wrapping_add(r.b_begin as usize)
            .wrapping_sub(a_len as usize)
    };
    sh.for_each_unit(|u| {
        // Load k reads slot k·nt + u: one base per list for this thread, the k·nt as the
        // load's constant offset, so that a load costs two compares, a select and itself.
        let (a, b) = (
            from_a(buf.src_keys).wrapping_add(u as usize),
            from_b(buf.src_keys).wrapping_add(u as usize),
        );
        let mut keys = [K::INFINITY; VT];
        unrolled::<VT>(|k| {
            let i = k as u32 * nt + u;
            if i < total {
                let p = if i < a_len { a } else { b };
                // SAFETY: slot i < total maps inside A's or B's slice.
                keys[k] = unsafe { *p.add(k * nt as usize) };
            }
        });
        unrolled::<VT>(|k| {
            // SAFETY: k·nt + u < nv.
            unsafe { *sh.keys.add(k * nt as usize + u as usize) = keys[k] };
        });
    });
    block.sync();
    let mut regs = block.regs(nt, ([K::INFINITY; VT], [V::Slot::default(); VT]));
    sh.for_each_unit(|u| {
        let (keys, slots) = regs.unit(u);
        let diag = (u * VT as u32).min(total);
        sh.merge(0, a_len, a_len, total, diag, keys, slots);
    });
    block.sync();
    sh.put(&mut regs);
    block.sync();
    let base = (tile * nv) as usize;
    // SAFETY: outputs base .. base + total lie inside the n positions; every slot recorded for
    // an output < total is < total and maps inside A's or B's slice; the edges of tile `tile`.
    unsafe {
        sh.record_edges(buf.edges, total, tile, nv as u32);
        sh.store_keys(total, buf.dst_keys.add(base), decode);
        let (a, b) = (
            buf.src_values.wrapping_add(r.a_begin as usize),
            buf.src_values
                .wrapping_add(r.b_begin as usize)
                .wrapping_sub(a_len as usize),
        );
        sh.store_values(total, buf.dst_values.add(base), |s| {
            *if s < a_len { a } else { b }.add(s as usize)
        });
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::CpuBlock;
    use crate::keys::{KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, key_map};
    use crate::merge::{AllLanes, Pass, Probes, Step, chunk_schedule, schedule};
    use crate::overlap::{chunk_ranges, tile_parts};
    use crate::tuning::{
        PARTITION_EDGE_PROBES, PARTITION_KEY_PROBES, merge_shared_bytes, merge_sort_shared_bytes,
    };
    use proptest::prelude::*;

    /// The pass partition kernel's searches (`merge_partition_*`).
    const PASS_SEARCH: (
        &Probes<PARTITION_EDGE_PROBES>,
        &Probes<PARTITION_KEY_PROBES>,
    ) = (&Probes, &Probes);

    /// Device memory stand-in: `len` elements starting `offset` elements past a 16-byte
    /// boundary (offset 0: the vector paths; 1: the one-element paths).
    struct DeviceBuf<T> {
        _store: Vec<Align16>,
        ptr: *mut T,
        len: usize,
    }

    impl<T: Copy> DeviceBuf<T> {
        fn new(data: &[T], offset: usize) -> Self {
            let bytes = (data.len() + offset) * size_of::<T>();
            let mut store = vec![Align16([0; 4]); bytes.div_ceil(16) + 1];
            // SAFETY: inside `store`, aligned for T (16-byte base, offset whole elements).
            let ptr = unsafe { (store.as_mut_ptr() as *mut T).add(offset) };
            // SAFETY: room for data.len() elements at ptr.
            unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), ptr, data.len()) };
            DeviceBuf {
                _store: store,
                ptr,
                len: data.len(),
            }
        }

        fn to_vec(&self) -> Vec<T> {
            // SAFETY: len initialised elements at ptr.
            unsafe { core::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
        }
    }

    /// Shared memory stand-in: the tile sort's size (the larger), 16-byte aligned.
    fn shared_for<K, V>(nv: u64) -> Vec<Align16> {
        let bytes =
            merge_sort_shared_bytes(nv as u32, size_of::<K>() as u32, size_of::<V>() as u32);
        vec![Align16([0; 4]); (bytes as usize).div_ceil(16)]
    }

    /// The GPU schedule on the CPU through the kernels' own block code: the same launches, the
    /// same ping-pong between `keys` and a scratch buffer, blocks run one after another; tile
    /// sort blocks of `nts.0` threads, merge blocks of `nts.1`; buffers `offset` elements past a
    /// 16-byte boundary.
    fn emulate<K: KeyBits + Default, V: Payload, const VT: usize>(
        keys: &mut [K],
        values: &mut [V],
        nts: (u32, u32),
        map: u32,
        offset: usize,
    ) {
        emulate_chunked::<K, V, VT>(keys, values, nts, map, offset, None, true);
    }

    /// As [`emulate`] with the compact tile sort (values not staged in shared memory; the
    /// shared memory exactly `merge_shared_bytes` of the tile), whose tiles are the merge
    /// tiles (`nts.0 = nts.1`).
    fn emulate_compact<K: KeyBits + Default, V: Payload, const VT: usize>(
        keys: &mut [K],
        values: &mut [V],
        nt: u32,
        map: u32,
        offset: usize,
    ) {
        emulate_chunked::<K, V, VT>(keys, values, (nt, nt), map, offset, None, false);
    }

    /// As [`emulate`], or with `Some((chunk, parts))` as the host-slice pipeline launches the
    /// sort: the steps of `chunk_schedule` on one chunk of `chunk` keys at a time (each launch
    /// given the chunk's part of every buffer and the chunk's length), then those of
    /// `schedule(n, sort tile, chunk)` on the whole array, the last one's merge launched in
    /// `parts` ranges of tiles. `staged`: the tile sort stages the values in shared memory (else
    /// the compact tile sort).
    fn emulate_chunked<K: KeyBits + Default, V: Payload, const VT: usize>(
        keys: &mut [K],
        values: &mut [V],
        nts: (u32, u32),
        map: u32,
        offset: usize,
        chunked: Option<(u64, u64)>,
        staged: bool,
    ) {
        use crate::keys::IDENTITY;
        let n = keys.len() as u64;
        if n == 0 {
            return;
        }
        let (sort_nt, nt) = nts;
        let sort_nv = u64::from(sort_nt) * VT as u64;
        let nv = u64::from(nt) * VT as u64;
        let (keys0, values0) = (DeviceBuf::new(keys, offset), DeviceBuf::new(values, offset));
        let scratch_keys = DeviceBuf::new(&vec![K::default(); keys.len()], offset);
        let scratch_values = DeviceBuf::new(&vec![V::default(); values.len()], offset);
        let mut splits = vec![u64::MAX; n.div_ceil(nv) as usize];
        // Poisoned: a partition that read an edge no step wrote would go wrong.
        let mut edges = vec![K::INFINITY; 2 * n.div_ceil(nv) as usize];
        let edges = edges.as_mut_ptr();
        let mut shared = if staged {
            shared_for::<K, V>(sort_nv)
        } else {
            let bytes =
                merge_shared_bytes(sort_nv as u32, size_of::<K>() as u32, size_of::<V>() as u32);
            vec![Align16([0; 4]); (bytes as usize).div_ceil(16)]
        };
        let shared = shared.as_mut_ptr() as *mut u8;
        let (k0, v0) = (keys0.ptr, values0.ptr);
        let (k1, v1) = (scratch_keys.ptr, scratch_values.ptr);
        let splits = splits.as_mut_ptr();
        // One step launched on keys `at .. at + len` (a chunk, or all of them), its merge in
        // `parts` launches.
        let launch = |step: Step, at: u64, len: u64, parts: u64| {
            let at = at as usize;
            // SAFETY: `at + len <= n`: every pointer stays inside its buffer.
            let (k0, v0, k1, v1) = unsafe { (k0.add(at), v0.add(at), k1.add(at), v1.add(at)) };
            // SAFETY: chunks start at multiples of the merge tile.
            let splits = unsafe { splits.add(at / nv as usize) };
            // SAFETY: as above, two edges per tile.
            let edges = unsafe { edges.add(2 * (at / nv as usize)) };
            let pick = |scratch: bool| if scratch { (k1, v1) } else { (k0, v0) };
            let ((sk, sv), (dk, dv)) = (pick(step.from_scratch), pick(step.to_scratch));
            let buf = Buffers {
                src_keys: sk,
                dst_keys: dk,
                src_values: sv,
                dst_values: dv,
                edges,
            };
            let decode = if step.last { map } else { IDENTITY };
            // SAFETY: buffers of len keys and values; shared memory of the right size.
            unsafe {
                match step.pass {
                    Pass::SortTiles => {
                        for tile in 0..len.div_ceil(sort_nv) {
                            let block = &CpuBlock::default();
                            let (edge_tile, t) = (nv as u32, (map, decode));
                            if staged {
                                sort_tile::<K, V, _, VT, true>(
                                    block, sort_nt, shared, buf, len, tile, t.0, t.1, edge_tile,
                                );
                            } else {
                                sort_tile::<K, V, _, VT, false>(
                                    block, sort_nt, shared, buf, len, tile, t.0, t.1, edge_tile,
                                );
                            }
                        }
                    }
                    Pass::Merge { width } => {
                        let pairing = Pairing::Pass { width };
                        let tiles = len.div_ceil(nv);
                        for k in 0..tiles {
                            partition_unit(sk, splits, len, pairing, nv, k, edges, PASS_SEARCH);
                        }
                        for part in tile_parts(tiles, parts) {
                            // The kernel's tile is its first tile plus its block index.
                            for tile in part {
                                merge_tile::<K, V, _, VT>(
                                    &CpuBlock::default(),
                                    nt,
                                    shared,
                                    buf,
                                    splits,
                                    len,
                                    pairing,
                                    tile,
                                    decode,
                                );
                            }
                        }
                    }
                }
            }
        };
        match chunked {
            None => schedule(n, sort_nv, 1).for_each(|step| launch(step, 0, n, 1)),
            Some((chunk, parts)) => {
                for range in chunk_ranges(n, chunk) {
                    for step in chunk_schedule(n, sort_nv, chunk) {
                        launch(step, range.start, range.end - range.start, 1);
                    }
                }
                let rest: Vec<Step> = schedule(n, sort_nv, chunk).collect();
                for (i, &step) in rest.iter().enumerate() {
                    let last = i + 1 == rest.len();
                    launch(step, 0, n, if last { parts } else { 1 });
                }
            }
        }
        keys.copy_from_slice(&keys0.to_vec());
        values.copy_from_slice(&values0.to_vec());
    }

    /// Checks the emulated sort of `input` (tagged with indices as values) against std's
    /// stable sort of the encoded keys.
    fn check<K: KeyBits + Default + Ord + core::fmt::Debug, const VT: usize>(
        input: &[K],
        nt: u32,
        map: u32,
    ) {
        for sort_nt in [nt, 2 * nt] {
            check_with::<K, VT>(input, (sort_nt, nt), map);
        }
    }

    /// [`check`] with tile-sort blocks of `nts.0` threads and merge blocks of `nts.1`.
    fn check_with<K: KeyBits + Default + Ord + core::fmt::Debug, const VT: usize>(
        input: &[K],
        nts: (u32, u32),
        map: u32,
    ) {
        let mut expected: Vec<(K, u32)> = input.iter().copied().zip(0..).collect();
        expected.sort_by_key(|&(k, _)| k.encode(map));
        for offset in [0, 1] {
            let mut keys = input.to_vec();
            let mut values: Vec<u32> = (0..input.len() as u32).collect();
            emulate::<K, u32, VT>(&mut keys, &mut values, nts, map, offset);
            let got: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
            assert_eq!(
                got,
                expected,
                "n = {}, nt = {nts:?}, vt = {VT}, map = {map}, offset = {offset}",
                input.len()
            );
            // Keys only: the same keys.
            let mut keys_only = input.to_vec();
            emulate::<K, (), VT>(&mut keys_only, &mut vec![(); input.len()], nts, map, offset);
            let expected_keys: Vec<K> = expected.iter().map(|&(k, _)| k).collect();
            assert_eq!(keys_only, expected_keys, "keys only, offset = {offset}");
        }
    }

    fn lengths() -> Vec<usize> {
        let mut v = vec![0, 1, 2, 3];
        for k in 2..12 {
            v.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
        }
        v.extend([1000, 1234, 3001]);
        v
    }

    fn maps() -> Vec<u32> {
        let mut m = Vec::new();
        for kind in [KIND_UNSIGNED, KIND_SIGNED, KIND_FLOAT] {
            for desc in [false, true] {
                m.push(key_map(kind, desc));
            }
        }
        m
    }

    /// Keys with few distinct values (so that stability matters), raw bits of every kind.
    fn few_distinct_u32(n: usize, seed: u64) -> Vec<u32> {
        let pool = [
            0u32,
            1,
            7,
            0x8000_0000,
            0xFFFF_FFFF,
            0x7F80_0000,
            0xFF80_0000,
            42,
        ];
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                pool[(x >> 60) as usize % pool.len()]
            })
            .collect()
    }

    #[test]
    fn gpu_schedule_sorts_stably_every_length_and_map() {
        for n in lengths() {
            let input = few_distinct_u32(n, n as u64);
            for map in maps() {
                check::<u32, 2>(&input, 4, map);
                check::<u32, 3>(&input, 8, map);
                let wide: Vec<u64> = input
                    .iter()
                    .map(|&k| u64::from(k) << 32 | u64::from(k % 3))
                    .collect();
                check::<u64, 4>(&wide, 2, map);
            }
        }
    }

    #[test]
    fn gpu_schedule_with_the_real_tuning() {
        use crate::tuning::{MERGE_SORT_THREADS, MERGE_SORT_TILE, MERGE_THREADS, MERGE_VT};
        const VT: usize = MERGE_VT as usize;
        let nts = (MERGE_SORT_THREADS, MERGE_THREADS);
        let t = MERGE_SORT_TILE as usize;
        for n in [1000, t - 1, t, t + 1, 2 * t + 5, 3 * t + 17, 5 * t - 3] {
            let input = few_distinct_u32(n, 99);
            check_with::<u32, VT>(&input, nts, key_map(KIND_FLOAT, true));
            let random: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect();
            check_with::<u64, VT>(&random, nts, key_map(KIND_SIGNED, false));
        }
    }

    /// The `merge_two_*` kernels' work on the CPU: partition, then merge tile by tile, of
    /// A = `a` and B = `b` (each sorted), keys only, decoded with `map`.
    fn merge_two<K: KeyBits + Default, const VT: usize>(
        a: &[K],
        b: &[K],
        nt: u32,
        map: u32,
        offset: usize,
    ) -> Vec<K> {
        let input: Vec<K> = a.iter().chain(b).copied().collect();
        let n = input.len() as u64;
        let nv = u64::from(nt) * VT as u64;
        let (src, dst) = (
            DeviceBuf::new(&input, offset),
            DeviceBuf::new(&vec![K::default(); input.len()], offset),
        );
        let tiles = n.div_ceil(nv);
        let mut splits = vec![u64::MAX; tiles as usize];
        let pairing = Pairing::Two {
            a_len: a.len() as u64,
        };
        let mut shared = shared_for::<K, ()>(nv);
        let none = core::ptr::NonNull::<()>::dangling().as_ptr();
        let buf = Buffers {
            src_keys: src.ptr,
            dst_keys: dst.ptr,
            src_values: none,
            dst_values: none,
            edges: core::ptr::null_mut(),
        };
        let no_edges = core::ptr::null();
        for k in 0..tiles {
            // SAFETY: n keys at src; room for the splits.
            unsafe {
                partition_unit(
                    src.ptr,
                    splits.as_mut_ptr(),
                    n,
                    pairing,
                    nv,
                    k,
                    no_edges,
                    (&AllLanes, &AllLanes),
                )
            };
        }
        for tile in 0..tiles {
            // SAFETY: buffers of n keys; the splits of this merge; shared memory of the size.
            unsafe {
                merge_tile::<K, (), _, VT>(
                    &CpuBlock::default(),
                    nt,
                    shared.as_mut_ptr() as *mut u8,
                    buf,
                    splits.as_ptr(),
                    n,
                    pairing,
                    tile,
                    map,
                )
            };
        }
        dst.to_vec()
    }

    #[test]
    fn two_runs_of_any_lengths_merge_stably() {
        let map = key_map(KIND_SIGNED, false);
        for (a_len, b_len) in [
            (0, 5),
            (5, 0),
            (1, 1),
            (7, 30),
            (30, 7),
            (24, 24),
            (100, 37),
        ] {
            // Keys equal across the runs, told apart by their low bits once decoded: A's
            // copies of a key must all come before B's.
            let encoded = |run: usize, i: usize| ((i as u32 / 3) << 8) | run as u32;
            let mut a: Vec<u32> = (0..a_len).map(|i| encoded(0, i)).collect();
            let mut b: Vec<u32> = (0..b_len).map(|i| encoded(1, i)).collect();
            a.sort_by_key(|k| k >> 8);
            b.sort_by_key(|k| k >> 8);
            let mut expected: Vec<u32> = a.iter().chain(&b).copied().collect();
            expected.sort_by_key(|k| k >> 8); // stable: A's before B's on ties
            let expected: Vec<u32> = expected.into_iter().map(|k| k.decode(map)).collect();
            for offset in [0, 1] {
                assert_eq!(
                    merge_two::<u32, 3>(&a, &b, 4, map, offset),
                    expected,
                    "{a_len} + {b_len}, offset {offset}"
                );
                let wide =
                    |v: &[u32]| -> Vec<u64> { v.iter().map(|&k| u64::from(k) << 20).collect() };
                let expected_wide: Vec<u64> = a
                    .iter()
                    .chain(&b)
                    .map(|&k| u64::from(k) << 20)
                    .collect::<Vec<_>>();
                let mut expected_wide = expected_wide;
                expected_wide.sort_by_key(|k| k >> 28);
                let expected_wide: Vec<u64> =
                    expected_wide.into_iter().map(|k| k.decode(map)).collect();
                assert_eq!(
                    merge_two::<u64, 5>(&wide(&a), &wide(&b), 8, map, offset),
                    expected_wide
                );
            }
        }
    }

    #[test]
    fn pairs_with_u64_values() {
        let input = few_distinct_u32(777, 5);
        let values: Vec<u64> = (0..777u64).map(|i| i << 40 | i).collect();
        let (mut keys, mut got_values) = (input.clone(), values.clone());
        emulate::<u32, u64, 3>(&mut keys, &mut got_values, (8, 4), IDENTITY, 0);
        let mut expected: Vec<(u32, u64)> = input.iter().copied().zip(values.clone()).collect();
        expected.sort_by_key(|p| p.0);
        let got: Vec<(u32, u64)> = keys.into_iter().zip(got_values).collect();
        assert_eq!(got, expected);

        let wide: Vec<u64> = input.iter().map(|&k| u64::from(k) << 31).collect();
        let map = key_map(KIND_SIGNED, true);
        let (mut keys, mut got_values) = (wide.clone(), values.clone());
        emulate::<u64, u64, 2>(&mut keys, &mut got_values, (8, 8), map, 0);
        let mut expected: Vec<(u64, u64)> = wide.iter().copied().zip(values).collect();
        expected.sort_by_key(|p| p.0.encode(map));
        let got: Vec<(u64, u64)> = keys.into_iter().zip(got_values).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn pairs_with_u128_values() {
        // 16-byte values (the slots of payloads of 9 to 16 bytes): every bit must travel.
        for (n, nt) in [(777usize, 4u32), (2049, 8), (5000, 16)] {
            let input = few_distinct_u32(n, n as u64);
            let values: Vec<u128> = (0..n as u128)
                .map(|i| i << 96 | (!i & 0xFFFF) << 64 | i.wrapping_mul(0x9E37_79B9) << 16 | i)
                .collect();
            let wide: Vec<u64> = input.iter().map(|&k| u64::from(k) << 29 | 3).collect();
            let map = key_map(KIND_FLOAT, true);
            let (mut keys, mut got_values) = (wide.clone(), values.clone());
            emulate::<u64, u128, 3>(&mut keys, &mut got_values, (nt, nt), map, 0);
            let mut expected: Vec<(u64, u128)> = wide.iter().copied().zip(values.clone()).collect();
            expected.sort_by_key(|p| p.0.encode(map));
            let got: Vec<(u64, u128)> = keys.into_iter().zip(got_values).collect();
            assert_eq!(got, expected, "u64 keys, n = {n}");

            let (mut keys, mut got_values) = (input.clone(), values.clone());
            emulate::<u32, u128, 2>(&mut keys, &mut got_values, (2 * nt, nt), IDENTITY, 0);
            let mut expected: Vec<(u32, u128)> = input.iter().copied().zip(values).collect();
            expected.sort_by_key(|p| p.0);
            let got: Vec<(u32, u128)> = keys.into_iter().zip(got_values).collect();
            assert_eq!(got, expected, "u32 keys, n = {n}");
        }
    }

    #[test]
    fn chunked_launches_sort_stably_like_the_whole_sort() {
        // Tiles of 8 keys (nt = 4, vt = 2), chunks of 8 to 64: one chunk, several, ragged last
        // chunks down to one key, last passes in several parts.
        for n in [1usize, 7, 8, 9, 63, 64, 65, 100, 129, 200, 257, 1000, 1025] {
            let input = few_distinct_u32(n, n as u64 + 3);
            let values: Vec<u32> = (0..n as u32).collect();
            for map in [IDENTITY, key_map(KIND_FLOAT, true)] {
                let (mut want_keys, mut want_values) = (input.clone(), values.clone());
                emulate::<u32, u32, 2>(&mut want_keys, &mut want_values, (4, 4), map, 0);
                // Tile sorts of 4 and of 8 threads (tiles of 8 and 16 keys), merges of 4.
                for (nts, chunks) in [((4, 4), [8u64, 16, 64]), ((8, 4), [16, 32, 64])] {
                    for chunk in chunks {
                        for parts in [1u64, 3, 4] {
                            let chunked = Some((chunk, parts));
                            let what = format!(
                                "n = {n}, map = {map}, threads {nts:?}, chunk = {chunk}, {parts} parts"
                            );
                            let (mut keys, mut got_values) = (input.clone(), values.clone());
                            emulate_chunked::<u32, u32, 2>(
                                &mut keys,
                                &mut got_values,
                                nts,
                                map,
                                0,
                                chunked,
                                true,
                            );
                            assert_eq!(keys, want_keys, "{what}");
                            assert_eq!(got_values, want_values, "{what}");
                            let mut keys_only = input.clone();
                            let mut none = vec![(); n];
                            emulate_chunked::<u32, (), 2>(
                                &mut keys_only,
                                &mut none,
                                nts,
                                map,
                                0,
                                chunked,
                                true,
                            );
                            assert_eq!(keys_only, want_keys, "{what}, keys only");
                        }
                    }
                }
            }
        }
        // The real tiles with chunks of 4 tiles, and 64-bit keys with 16-byte values.
        use crate::tuning::{MERGE_THREADS, MERGE_VT};
        const VT: usize = MERGE_VT as usize;
        let tile = u64::from(MERGE_THREADS) * VT as u64;
        for n in [
            4 * tile as usize - 1,
            4 * tile as usize + 1,
            3 * 4 * tile as usize + 1234,
        ] {
            let wide: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 3)
                .collect();
            let values: Vec<u128> = (0..n as u128).map(|i| i << 64 | !i).collect();
            let map = key_map(KIND_SIGNED, true);
            let (mut want_keys, mut want_values) = (wide.clone(), values.clone());
            let nts = (MERGE_THREADS, MERGE_THREADS);
            emulate::<u64, u128, VT>(&mut want_keys, &mut want_values, nts, map, 0);
            let (mut keys, mut got_values) = (wide.clone(), values.clone());
            let chunked = Some((4 * tile, 4));
            emulate_chunked::<u64, u128, VT>(
                &mut keys,
                &mut got_values,
                nts,
                map,
                0,
                chunked,
                true,
            );
            assert_eq!(keys, want_keys, "n = {n}");
            assert_eq!(got_values, want_values, "n = {n}");
        }
    }

    /// The compact tile sort (values read from device memory by slot) sorts as the staged one,
    /// in place (an even number of merge passes after it, none included) and not: keys alone
    /// and values of every width, buffers aligned or not.
    #[test]
    fn the_compact_tile_sort_sorts_like_the_staged_one() {
        fn pairs<
            K: KeyBits + Default + Ord + core::fmt::Debug,
            V: Payload + PartialEq + core::fmt::Debug,
        >(
            keys: &[K],
            values: &[V],
            nt: u32,
            map: u32,
        ) {
            for offset in [0, 1] {
                let (mut want_k, mut want_v) = (keys.to_vec(), values.to_vec());
                emulate::<K, V, 3>(&mut want_k, &mut want_v, (nt, nt), map, offset);
                let (mut got_k, mut got_v) = (keys.to_vec(), values.to_vec());
                emulate_compact::<K, V, 3>(&mut got_k, &mut got_v, nt, map, offset);
                assert_eq!(got_k, want_k, "n = {}, offset {offset}", keys.len());
                assert_eq!(got_v, want_v, "n = {}, offset {offset}", keys.len());
                let mut sorted: Vec<K> = keys.iter().map(|k| k.encode(map)).collect();
                sorted.sort();
                let decoded: Vec<K> = sorted.into_iter().map(|k| k.decode(map)).collect();
                assert_eq!(got_k, decoded);
            }
        }
        let map = key_map(KIND_SIGNED, true);
        // Tiles of 24 keys (nt = 8, vt = 3): 0, 1, 2, 3 and 5 merge passes.
        for n in [
            0usize, 1, 5, 23, 24, 25, 47, 48, 49, 95, 96, 100, 200, 383, 700,
        ] {
            let k32 = few_distinct_u32(n, n as u64 + 11);
            let k64: Vec<u64> = k32
                .iter()
                .map(|&k| u64::from(k) << 32 | u64::from(k % 5))
                .collect();
            let index = |i: usize| i as u64 * 0x9E37_79B9 + 1;
            let v32: Vec<u32> = (0..n).map(|i| index(i) as u32).collect();
            let v64: Vec<u64> = (0..n).map(index).collect();
            let v128: Vec<u128> = (0..n)
                .map(|i| u128::from(index(i)) << 64 | i as u128)
                .collect();
            pairs::<u32, u32>(&k32, &v32, 8, map);
            pairs::<u32, u64>(&k32, &v64, 8, map);
            pairs::<u32, u128>(&k32, &v128, 8, map);
            pairs::<u64, ()>(&k64, &vec![(); n], 8, map);
            pairs::<u64, u32>(&k64, &v32, 8, map);
            pairs::<u64, u64>(&k64, &v64, 8, map);
            pairs::<u64, u128>(&k64, &v128, 8, map);
        }
    }

    #[test]
    fn the_compact_tile_sort_with_the_real_tuning() {
        use crate::tuning::{MERGE_THREADS, MERGE_TILE, MERGE_VT};
        const VT: usize = MERGE_VT as usize;
        let t = MERGE_TILE as usize;
        for n in [1000, t, t + 1, 2 * t + 5, 4 * t + 17] {
            let keys: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 1000)
                .collect();
            let values: Vec<u128> = (0..n as u128).map(|i| i << 64 | !i).collect();
            let map = key_map(KIND_FLOAT, false);
            let (mut got_k, mut got_v) = (keys.clone(), values.clone());
            emulate_compact::<u64, u128, VT>(&mut got_k, &mut got_v, MERGE_THREADS, map, 0);
            let mut want: Vec<(u64, u128)> = keys.iter().copied().zip(values).collect();
            want.sort_by_key(|p| p.0.encode(map));
            let got: Vec<(u64, u128)> = got_k.into_iter().zip(got_v).collect();
            assert_eq!(got, want, "n = {n}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn random_lengths_and_keys(
            input in prop::collection::vec(any::<u32>(), 0..3000),
            map_index in 0usize..6,
            small_range in any::<bool>(),
        ) {
            let input: Vec<u32> = if small_range { input.iter().map(|k| k % 5).collect() } else { input };
            check::<u32, 2>(&input, 8, maps()[map_index]);
        }
    }
}
