//! A block's work on one tile of [`TILE_KEYS`] keys in shared memory.
//!
//! Thread `t` keeps the tile's run `t·RUN .. (t+1)·RUN` in registers. Steps whose distance is
//! below [`TILE_RUN`] compare keys of one run, so they run in registers; steps of distance RUN up
//! to a warp's span (32·RUN) pair runs of two lanes of one warp, so they run through warp
//! shuffles; neither needs a barrier. Only longer steps go through shared memory, one barrier
//! each. Shared memory holds one padding word per 32 keys ([`padded`]), so the run-wise accesses
//! of a warp hit distinct banks.

use crate::bitonic::{half_cleaners, sort_network};
use crate::gpu::{WarpShuffle, sync_threads, thread_idx_x};
use crate::keys::KeyBits;
use crate::tuning::{TILE_KEYS, TILE_RUN, TILE_RUN_LOG2, TILE_THREADS};

const RUN: usize = TILE_RUN as usize;
/// log2 of the keys a warp's runs span: shorter steps stay inside a warp.
const WARP_SPAN_LOG2: u32 = TILE_RUN_LOG2 + 5;

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

impl<K: KeyBits + WarpShuffle> Tile<K> {
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

    /// One step of distance 2^s ≥ 32·RUN over the whole tile in shared memory, then a barrier.
    #[inline(always)]
    fn shared_step(&mut self, s: u32, mirror: bool) {
        let t = thread_idx_x();
        for q in 0..TILE_KEYS / 2 / TILE_THREADS {
            // Comparator c's lower key: insert a 0 at bit s; its partner: mirror image in the block
            // of 2^(s+1), or 2^s above.
            let c = q * TILE_THREADS + t;
            let lo = ((c >> s) << (s + 1)) | (c & ((1 << s) - 1));
            let hi = if mirror {
                lo ^ ((2 << s) - 1)
            } else {
                lo + (1 << s)
            };
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

    /// One step of distance 2^s, RUN ≤ 2^s < 32·RUN, on the runs in registers: key i of this
    /// thread's run meets key i of lane `t ^ 2^(s−log2 RUN)` (mirrored: key RUN−1−i of lane
    /// `t ^ (2^(s+1−log2 RUN) − 1)`); the lane holding the lower positions keeps the minimum.
    #[inline(always)]
    fn warp_step(&mut self, s: u32, mirror: bool) {
        let lane_bit = 1 << (s - TILE_RUN_LOG2);
        let lower = thread_idx_x() & lane_bit == 0;
        let keep = |mine: K, other: K| {
            let (lo, hi) = if other < mine {
                (other, mine)
            } else {
                (mine, other)
            };
            if lower { lo } else { hi }
        };
        if mirror {
            // Keys i and RUN−1−i travel together, so no copy of the run is needed.
            let lane_mask = 2 * lane_bit - 1;
            for i in 0..RUN / 2 {
                let j = RUN - 1 - i;
                let (mine_i, mine_j) = (self.run[i], self.run[j]);
                let (other_i, other_j) = (mine_j.shfl_xor(lane_mask), mine_i.shfl_xor(lane_mask));
                self.run[i] = keep(mine_i, other_i);
                self.run[j] = keep(mine_j, other_j);
            }
        } else {
            for key in self.run.iter_mut() {
                *key = keep(*key, key.shfl_xor(lane_bit));
            }
        }
    }

    /// Steps of distance 2^top down to 1 of one stage, the first mirrored if `mirror`
    /// (top ≥ log2 RUN). Before: the tile in shared memory if `top ≥ WARP_SPAN_LOG2`, else this
    /// thread's run in registers. After: this thread's run in registers.
    #[inline(always)]
    fn finish_stage(&mut self, top: u32, mirror: bool) {
        let mut s = top;
        if top >= WARP_SPAN_LOG2 {
            while s >= WARP_SPAN_LOG2 {
                self.shared_step(s, mirror && s == top);
                s -= 1;
            }
            self.read_run();
        }
        while s >= TILE_RUN_LOG2 {
            self.warp_step(s, mirror && s == top);
            s -= 1;
        }
        half_cleaners(&mut self.run, RUN);
    }

    /// Sorts the tile ascending (stages 1 ..= log2 TILE_KEYS). Before and after: in shared memory.
    #[inline(always)]
    pub fn sort(&mut self) {
        self.read_run();
        sort_network(&mut self.run);
        let mut stage = TILE_RUN_LOG2 + 1;
        while stage <= TILE_KEYS.trailing_zeros() {
            if stage - 1 >= WARP_SPAN_LOG2 {
                self.write_run();
            }
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
