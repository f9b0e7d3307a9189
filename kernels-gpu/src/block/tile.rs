//! A block's work on one tile of [`TILE_KEYS`] keys in shared memory.
//!
//! Thread `t` keeps the tile's run `t·RUN .. (t+1)·RUN` in registers. Steps whose distance is
//! below [`TILE_RUN`] compare keys of one run, so they run in registers with no barrier; longer
//! steps go through shared memory, one barrier each. Shared memory holds one padding word per 32
//! keys ([`padded`]), so the run-wise accesses of a warp hit distinct banks.

use crate::bitonic::{comparator_lo, half_cleaners, partner, sort_network};
use crate::gpu::{sync_threads, thread_idx_x};
use crate::keys::KeyBits;
use crate::tuning::{TILE_KEYS, TILE_RUN, TILE_RUN_LOG2, TILE_THREADS};

const RUN: usize = TILE_RUN as usize;

/// Shared-memory slot of tile position `i`.
#[inline(always)]
fn padded(i: u32) -> usize {
    (i + i / 32) as usize
}

/// One block's view of its tile: global keys `base .. base + len` and the shared memory.
pub struct Tile<K> {
    keys: *mut K,
    shared: *mut K,
    base: u64,
    len: u32,
    run: [K; RUN],
}

impl<K: KeyBits> Tile<K> {
    /// The tile starting at `base`; `len` = keys in it (≤ [`TILE_KEYS`]).
    ///
    /// # Safety
    /// `keys[base .. base + len]` valid and owned by this block; `shared` holds
    /// `tile_shared_words(TILE_KEYS)` keys.
    #[inline(always)]
    pub unsafe fn new(keys: *mut K, shared: *mut K, base: u64, len: u32) -> Self {
        Tile {
            keys,
            shared,
            base,
            len,
            run: [K::INFINITY; RUN],
        }
    }

    /// Global → shared, coalesced, through `map`; +∞ past the end. Ends with a barrier.
    #[inline(always)]
    pub fn load(&mut self, map: u32) {
        let t = thread_idx_x();
        for r in 0..TILE_RUN {
            let i = r * TILE_THREADS + t;
            let key = if i < self.len {
                // SAFETY: i < len keys owned by this block.
                unsafe { (*self.keys.add((self.base + u64::from(i)) as usize)).encode(map) }
            } else {
                K::INFINITY
            };
            // SAFETY: padded(i) < tile_shared_words(TILE_KEYS).
            unsafe { *self.shared.add(padded(i)) = key };
        }
        sync_threads();
    }

    /// Shared → global, coalesced, through the inverse of `map`; only positions < len.
    #[inline(always)]
    pub fn store(&self, map: u32) {
        let t = thread_idx_x();
        for r in 0..TILE_RUN {
            let i = r * TILE_THREADS + t;
            if i < self.len {
                // SAFETY: as in `load`.
                unsafe {
                    let key = *self.shared.add(padded(i));
                    *self.keys.add((self.base + u64::from(i)) as usize) = key.decode(map);
                }
            }
        }
    }

    /// Shared → this thread's registers.
    #[inline(always)]
    fn read_run(&mut self) {
        let first = thread_idx_x() * TILE_RUN;
        for r in 0..RUN {
            // SAFETY: inside the tile's shared memory.
            self.run[r] = unsafe { *self.shared.add(padded(first + r as u32)) };
        }
    }

    /// This thread's registers → shared. Ends with a barrier.
    #[inline(always)]
    fn write_run(&mut self) {
        let first = thread_idx_x() * TILE_RUN;
        for r in 0..RUN {
            // SAFETY: inside the tile's shared memory.
            unsafe { *self.shared.add(padded(first + r as u32)) = self.run[r] };
        }
        sync_threads();
    }

    /// One step of distance 2^s ≥ RUN over the whole tile in shared memory, then a barrier.
    #[inline(always)]
    fn shared_step(&mut self, s: u32, mirror: bool) {
        let t = thread_idx_x();
        for q in 0..TILE_KEYS / 2 / TILE_THREADS {
            let lo = comparator_lo(u64::from(q * TILE_THREADS + t), s) as u32;
            let hi = partner(u64::from(lo), s, mirror) as u32;
            // SAFETY: lo < hi < TILE_KEYS; each slot belongs to one comparator of this step.
            unsafe {
                let (a, b) = (self.shared.add(padded(lo)), self.shared.add(padded(hi)));
                let (x, y) = (*a, *b);
                if y < x {
                    *a = y;
                    *b = x;
                }
            }
        }
        sync_threads();
    }

    /// Steps of distance 2^top down to 1 of one stage, the first mirrored if `mirror`.
    /// Before: the tile is in shared memory. After: this thread's run is in registers.
    #[inline(always)]
    fn finish_stage(&mut self, top: u32, mirror: bool) {
        let mut s = top;
        while s >= TILE_RUN_LOG2 {
            self.shared_step(s, mirror && s == top);
            s -= 1;
        }
        self.read_run();
        half_cleaners(&mut self.run, RUN);
    }

    /// Sorts the tile ascending (stages 1 ..= log2 TILE_KEYS). Before and after: in shared memory.
    #[inline(always)]
    pub fn sort(&mut self) {
        self.read_run();
        sort_network(&mut self.run);
        let mut stage = TILE_RUN_LOG2 + 1;
        while stage <= TILE_KEYS.trailing_zeros() {
            self.write_run();
            self.finish_stage(stage - 1, true);
            stage += 1;
        }
        self.write_run();
    }

    /// Finishes a stage larger than the tile: its steps of distance below the tile size.
    /// Before and after: in shared memory.
    #[inline(always)]
    pub fn merge(&mut self) {
        self.finish_stage(TILE_KEYS.trailing_zeros() - 1, false);
        self.write_run();
    }
}
