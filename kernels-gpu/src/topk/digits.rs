//! Index math of a top-k of one whole array by the digits of its keys: a radix select over all
//! the keys, for arrays where the rounds of [`super::plan`] would spend their time on the
//! blocks' candidate sorts (large k; [`by_digits`]).
//!
//! The selection runs in *steps*, one launch each, every block over its own *chunk* of the keys
//! ([`Grid`], tiles of [`TILE`] keys), keys encoded as for the rounds:
//! - **digit passes** `0 .. passes(key_bytes)`: pass `p` counts, in a global histogram of
//!   [`BINS`] bins, digit `p` ([`digit`], [`BITS`] bits from the top) of every key whose
//!   higher bits equal the *prefix* found so far;
//! - **count** (`passes`): each block counts its keys below the prefix and equal to it, in all
//!   and per tile;
//! - **gather** (`passes + 1`): each block writes, in position order, its keys below the prefix
//!   and those equal to it that are among the first [`State::quota`] of them in the whole
//!   array, with their indices, at the slots the blocks before it leave, loading only the
//!   tiles whose counts say they hold candidates: at most
//!   [`CANDIDATES`] candidates in position order, padded with "no key" slots. One round in
//!   registers ([`super::selects_in_registers`]) then selects the k best of them, sorted.
//!
//! Each step starts by reading the [`State`] the last step left (the prefix, its keys below
//! and in it) and narrowing it by the histogram of the last pass ([`State::narrow`]): the bin in
//! which the keys below reach k. The passes stop narrowing once the keys below and in the
//! prefix fit the candidates ([`State::done`]); a pass after that returns at once. After the
//! last digit the prefix is the k-th key itself, and its equals beyond the candidates' room
//! are dropped in position order, so ties still go to the lower index.
//!
//! Uniform 4-byte keys of 2^24 take two passes: the first digit leaves about 2^13 keys in the
//! k-th key's bin, the second 4; f32 in [0, 1) keep their top bits (sign and exponent) in
//! common, so the first leaves 2^22 and the second about 2^11.
//!
//! ```
//! use kernels_gpu::topk::digits::{BINS, CANDIDATES, State, digit, passes};
//! assert_eq!((passes(4), passes(8)), (3, 6));
//! assert_eq!((digit(4, 0), digit(4, 2), digit(8, 5)), ((21, 11), (0, 10), (0, 9)));
//! // 2^24 keys, k = 1000: a first digit whose bins hold 2^13 keys each.
//! let start = State::start(1 << 24, 4);
//! let hist = vec![1u32 << 13; BINS as usize];
//! let first = start.narrow(0, 4, 1000, |bin| hist[bin as usize]);
//! assert_eq!((first.prefix, first.less, first.count), (0, 0, 1 << 13));
//! assert!(!first.done() && first.less + first.count > CANDIDATES);
//! ```

use super::{ROW_MAX_KEYS, Round, THREADS, WARPS};
use crate::args::Addr;
use crate::tuning::{TOPK_DIGITS_BYTES_PER_K, TOPK_DIGITS_MAX_REGISTERS, TOPK_DIGITS_MIN_K};

/// The round in registers that selects the k best of the gathered candidates, sorted: one
/// part of [`CANDIDATES`] keys (the slots past the candidates hold "no key").
///
/// ```
/// use kernels_gpu::topk::{digits::LAST_ROUND, selects_in_registers};
/// assert!(selects_in_registers(&LAST_ROUND) && LAST_ROUND.blocks() == 1);
/// ```
pub const LAST_ROUND: Round = Round {
    segments: 1,
    len: CANDIDATES,
    parts: 1,
    chunk: CANDIDATES,
};

/// Bits of one digit.
pub const BITS: u32 = 11;

/// Bins of a digit's histogram.
pub const BINS: u32 = 1 << BITS;

/// Bins of the histogram each thread scans when a step narrows the state.
pub const BINS_PER_THREAD: u32 = BINS / THREADS;

const _: () = assert!(BINS.is_multiple_of(THREADS));

/// The most candidates the gather writes: a part that one block selects from in registers.
pub const CANDIDATES: u64 = ROW_MAX_KEYS;

/// Keys a block loads per tile: 16 per thread, as a round in registers loads its part.
pub const TILE: u32 = ROW_MAX_KEYS as u32;

/// Digit passes of keys of `key_bytes` bytes.
pub const fn passes(key_bytes: u32) -> u32 {
    (8 * key_bytes).div_ceil(BITS)
}

/// The most digit passes: those of 8-byte keys.
pub const MAX_PASSES: u32 = passes(8);

/// The lowest bit of pass `pass`'s digit and its width: [`BITS`] bits below the last pass's,
/// fewer for the last.
pub const fn digit(key_bytes: u32, pass: u32) -> (u32, u32) {
    let top = 8 * key_bytes - pass * BITS;
    let shift = top.saturating_sub(BITS);
    (shift, top - shift)
}

/// Whether a top-k of `k` per segment of `segments` segments of `len` keys of `key_bytes`
/// bytes goes by digits rather than by the rounds of [`super::plan`]: one whole array, longer
/// than the candidates, k of at least [`TOPK_DIGITS_MIN_K`], and at most
/// [`TOPK_DIGITS_BYTES_PER_K`] bytes of keys per unit of k (the passes read the keys several
/// times where the rounds read them once, but the rounds' candidate sorts grow with k).
///
/// ```
/// use kernels_gpu::topk::digits::by_digits;
/// // 2^24 f32 (64 MiB): from k = 128; 2^27: only k = 1024; 2^28: never.
/// assert!(by_digits(1, 1 << 24, 128, 4) && !by_digits(1, 1 << 24, 127, 4));
/// assert!(by_digits(1, 1 << 27, 1024, 4) && !by_digits(1, 1 << 28, 1024, 4));
/// // 8-byte keys take half as many; rows and small k never.
/// assert!(by_digits(1, 1 << 23, 128, 8) && !by_digits(1, 1 << 24, 128, 8));
/// assert!(!by_digits(2, 1 << 20, 1024, 4) && !by_digits(1, 1 << 20, 63, 4));
/// ```
pub const fn by_digits(segments: u64, len: u64, k: u32, key_bytes: u32) -> bool {
    segments == 1
        && len > CANDIDATES
        && k >= TOPK_DIGITS_MIN_K
        && len * key_bytes as u64 <= k as u64 * TOPK_DIGITS_BYTES_PER_K
}

/// Where the search stands: the keys' bits at and above bit `shift` that the k-th smallest key
/// has (`prefix`, in place), the keys below that prefix (`less`, fewer than k) and with it
/// (`count`, together at least k). Kept in device memory as four `u64`, in field order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct State {
    /// The bits found, in place (those below `shift` are zero).
    pub prefix: u64,
    /// The lowest bit found.
    pub shift: u64,
    /// Keys whose bits above `shift` are below the prefix.
    pub less: u64,
    /// Keys whose bits above `shift` equal the prefix.
    pub count: u64,
}

impl State {
    /// Before the first pass: no bits found, every one of `len` keys in the (empty) prefix.
    pub const fn start(len: u64, key_bytes: u32) -> State {
        State {
            prefix: 0,
            shift: 8 * key_bytes as u64,
            less: 0,
            count: len,
        }
    }

    /// Whether the search is over: the keys below and in the prefix fit the candidates, or
    /// every bit is found.
    pub const fn done(&self) -> bool {
        self.shift == 0 || self.less + self.count <= CANDIDATES
    }

    /// The mask of the bits found.
    pub const fn known(&self) -> u64 {
        match u64::MAX.checked_shl(self.shift as u32) {
            Some(mask) => mask,
            None => 0,
        }
    }

    /// Keys equal to the prefix that the gather writes: all of them, or (after the last digit,
    /// when the k-th key's equals outnumber the room) the first in position order that fill
    /// the candidates.
    pub const fn quota(&self) -> u64 {
        let room = CANDIDATES - self.less;
        if self.count < room { self.count } else { room }
    }

    /// Candidates the gather writes, at least k.
    pub const fn selected(&self) -> u64 {
        self.less + self.quota()
    }

    /// The state after pass `pass` over keys of `key_bytes` bytes whose histogram `hist` gives
    /// (bins of the digit of the keys with the prefix): the first bin in which the keys below
    /// it reach the k-th. Unchanged when already done.
    pub fn narrow(&self, pass: u32, key_bytes: u32, k: u32, hist: impl Fn(u32) -> u32) -> State {
        if self.done() {
            return *self;
        }
        let need = u64::from(k) - self.less;
        let (shift, _) = digit(key_bytes, pass);
        let mut below = 0u64;
        for bin in 0..BINS {
            let count = u64::from(hist(bin));
            if below + count >= need {
                return self.chosen(shift, bin, below, count);
            }
            below += count;
        }
        unreachable!("a histogram of the prefix's keys holds the k-th")
    }

    /// The state after choosing `bin` of the digit at `shift`, with `below` keys of the prefix
    /// in the bins below it and `count` in it.
    pub const fn chosen(&self, shift: u32, bin: u32, below: u64, count: u64) -> State {
        State {
            prefix: self.prefix | ((bin as u64) << shift),
            shift: shift as u64,
            less: self.less + below,
            count,
        }
    }
}

/// Where a selection by digits keeps its data in its workspace (byte offsets, each 16-byte
/// aligned): [`MAX_PASSES`] histograms of [`BINS`] `u32` and two `u32` per tile of the keys
/// (its keys below and equal to the prefix), the `zeroed` bytes at the start that the host
/// zeroes before the first step; a [`State`] per step; two `u32` per block (its keys below and
/// equal to the prefix); the candidates' keys and `u64` indices; `bytes` in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workspace {
    /// The histograms, pass after pass.
    pub hist: u64,
    /// The tiles' counts.
    pub tile_counts: u64,
    /// Bytes from the start zeroed before the first step: the histograms and the tiles' counts.
    pub zeroed: u64,
    /// The states, step after step.
    pub states: u64,
    /// The blocks' counts.
    pub counts: u64,
    /// The candidates' keys.
    pub keys: u64,
    /// The candidates' indices.
    pub indices: u64,
    /// Size.
    pub bytes: u64,
}

/// Bytes of the histograms.
pub const HIST_BYTES: u64 = (MAX_PASSES * BINS * 4) as u64;

/// The workspace of a selection of keys of `key_bytes` bytes over `grid`.
///
/// ```
/// use kernels_gpu::topk::digits::{CANDIDATES, HIST_BYTES, grid, workspace};
/// let w = workspace(4, grid(1 << 24, 512));
/// assert_eq!((w.hist, w.tile_counts), (0, HIST_BYTES));
/// assert_eq!(w.zeroed, HIST_BYTES + 8 * 4096);  // 4096 tiles of 4096 keys
/// assert_eq!(w.indices - w.keys, 4 * CANDIDATES);
/// assert_eq!(w.bytes, w.indices + 8 * CANDIDATES);
/// ```
pub const fn workspace(key_bytes: u32, grid: Grid) -> Workspace {
    let tile_counts = HIST_BYTES;
    let states = (tile_counts + 8 * grid.len.div_ceil(TILE as u64)).next_multiple_of(16);
    let counts = states + (MAX_PASSES as u64 + 2) * size_of::<State>() as u64;
    let keys = (counts + 8 * grid.blocks).next_multiple_of(16);
    let indices = (keys + key_bytes as u64 * CANDIDATES).next_multiple_of(16);
    Workspace {
        hist: 0,
        tile_counts,
        zeroed: states,
        states,
        counts,
        keys,
        indices,
        bytes: indices + 8 * CANDIDATES,
    }
}

/// Blocks of a selection by digits that one multiprocessor runs at once, by their register cap
/// ([`TOPK_DIGITS_MAX_REGISTERS`]): the grid holds as many, so that every block's loads are in
/// flight in one wave.
///
/// ```
/// assert_eq!(kernels_gpu::topk::digits::BLOCKS_PER_MULTIPROCESSOR, 3);
/// ```
pub const BLOCKS_PER_MULTIPROCESSOR: u32 = 65536 / (TOPK_DIGITS_MAX_REGISTERS * THREADS);

/// The blocks of a selection by digits and their chunks of the keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Keys.
    pub len: u64,
    /// Keys per block, a multiple of the tile.
    pub chunk: u64,
    /// Blocks, the last one's chunk possibly shorter.
    pub blocks: u64,
}

crate::args::kernel_args! { $
    /// The argument of a step of a selection by digits (`topk_digits_*`): a digit pass, the
    /// count or the gather over the keys, every block over its chunk of them.
    pub struct StepArgs, entry step_entry {
        /// The keys, as stored, read: `len` of them (encoded with `encode` as they are
        /// loaded).
        pub keys: Addr,
        /// Keys, below 2^32 ([`Grid::len`]).
        pub len: u64,
        /// Keys per block ([`Grid::chunk`]).
        pub chunk: u64,
        /// Blocks of the launch ([`Grid::blocks`]).
        pub blocks: u64,
        /// Keys selected, `1 ..= MAX_K`, at most `len`.
        pub k: u32,
        /// Key map applied as the keys are loaded.
        pub encode: u32,
        /// The step: a digit pass below [`passes`]`(key bytes)`, then the count, then the
        /// gather.
        pub step: u32,
        /// The workspace, read and written by every step, as [`workspace`] lays it out for
        /// the grid; its `zeroed` bytes zeroed before the first step.
        pub work: Addr,
    }
}

/// The grid that spreads `len` keys over about `blocks` blocks (those the GPU runs at once).
///
/// ```
/// use kernels_gpu::topk::digits::grid;
/// let g = grid(1 << 24, 528);
/// assert_eq!((g.chunk, g.blocks), (32768, 512));
/// assert_eq!(grid(5000, 528).blocks, 2);
/// ```
pub const fn grid(len: u64, blocks: u64) -> Grid {
    let blocks = if blocks == 0 { 1 } else { blocks };
    let chunk = len.div_ceil(blocks).next_multiple_of(TILE as u64);
    Grid {
        len,
        chunk,
        blocks: len.div_ceil(chunk),
    }
}

/// Byte offsets of a block's shared memory in every step, and its size: the histogram
/// ([`BINS`] `u32`), two sets of [`WARPS`] warp sums, the chosen bin (4 `u32`: bin, keys
/// below it, keys in it, spare) and a pair of `u32` counters (16 bytes).
///
/// ```
/// use kernels_gpu::topk::digits::shared_layout;
/// assert_eq!(shared_layout(), [0, 8192, 8256, 8272, 8288]);
/// ```
pub const fn shared_layout() -> [u32; 5] {
    let hist = 0;
    let sums = hist + BINS * 4;
    let chosen = sums + 2 * WARPS * 4;
    let counters = chosen + 16;
    [hist, sums, chosen, counters, counters + 16]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn digits_cover_every_bit_once_from_the_top() {
        for key_bytes in [4, 8] {
            let mut top = 8 * key_bytes;
            for pass in 0..passes(key_bytes) {
                let (shift, width) = digit(key_bytes, pass);
                assert!((1..=BITS).contains(&width));
                assert_eq!(shift + width, top);
                top = shift;
            }
            assert_eq!(top, 0);
        }
    }

    /// The state after every pass over `keys` (encoded), by counting as the passes do.
    fn search(keys: &[u64], key_bytes: u32, k: u32) -> State {
        let mut state = State::start(keys.len() as u64, key_bytes);
        for pass in 0..passes(key_bytes) {
            let (shift, _) = digit(key_bytes, pass);
            let mut hist = vec![0u32; BINS as usize];
            for &w in keys {
                if w & state.known() == state.prefix {
                    hist[((w >> shift) & u64::from(BINS - 1)) as usize] += 1;
                }
            }
            state = state.narrow(pass, key_bytes, k, |b| hist[b as usize]);
        }
        state
    }

    proptest! {
        #[test]
        fn the_search_brackets_the_kth_key(
            keys in prop::collection::vec(0u64..1 << 40, 1..3000),
            few in 1u64..20,
            k in 1u32..=1024,
            narrow: bool,
        ) {
            let k = k.min(keys.len() as u32);
            // Many equal keys, or a wide range.
            let keys: Vec<u64> = keys.iter().map(|&x| if narrow { x % few } else { x }).collect();
            let state = search(&keys, 8, k);
            prop_assert!(state.done());
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            let kth = sorted[k as usize - 1];
            prop_assert_eq!(kth & state.known(), state.prefix);
            let below = keys.iter().filter(|&&w| w & state.known() < state.prefix).count();
            let equal = keys.iter().filter(|&&w| w & state.known() == state.prefix).count();
            prop_assert_eq!((state.less, state.count), (below as u64, equal as u64));
            prop_assert!(state.less < u64::from(k) && u64::from(k) <= state.selected());
            prop_assert!(state.selected() <= CANDIDATES);
        }
    }

    #[test]
    fn ties_beyond_the_room_are_cut_to_the_candidates() {
        // 10000 equal keys: every digit found, the first 4096 of them written.
        let state = search(&[7; 10_000], 4, 1000);
        assert_eq!((state.shift, state.prefix, state.count), (0, 7, 10_000));
        assert_eq!((state.quota(), state.selected()), (CANDIDATES, CANDIDATES));
    }

    #[test]
    fn the_workspace_regions_are_aligned_and_apart() {
        for key_bytes in [4, 8] {
            for (len, blocks) in [(4097, 1), (100_000, 7), (1 << 24, 528), (1 << 26, 4096)] {
                let g = grid(len, blocks);
                let w = workspace(key_bytes, g);
                for at in [w.tile_counts, w.states, w.counts, w.keys, w.indices] {
                    assert_eq!(at % 16, 0);
                }
                assert!(w.tile_counts >= w.hist + HIST_BYTES);
                // The last key's tile (chunks are whole tiles) has its counts, zeroed.
                let last_tile = (g.len - 1) / u64::from(TILE);
                assert!(w.zeroed >= w.tile_counts + 8 * (last_tile + 1));
                assert!(w.states >= w.zeroed);
                assert!(w.keys >= w.counts + 8 * g.blocks);
                assert!(w.indices >= w.keys + u64::from(key_bytes) * CANDIDATES);
            }
        }
        assert!(shared_layout()[4] <= crate::tuning::MIN_SHARED_BYTES);
    }
}
