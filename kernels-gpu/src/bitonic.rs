//! Index math of the bitonic sorting network, shared by the kernels, the host's grid math and
//! the CPU tests.
//!
//! The network is used in the form in which every comparator points the same way (the C++ AMP
//! seed): stage k (k = 1 ..= log2 V, V = n rounded up to a power of two) leaves every block of
//! 2^k keys sorted ascending. Its first step compares each key of a block's lower half with its
//! mirror image in the upper half (`lo ^ (2^k − 1)`); the steps after it compare keys at
//! distance 2^(k−2), …, 1. The lower index always receives the smaller key.
//!
//! Any n works without padding: positions ≥ n behave as +∞. A comparator whose upper index is
//! ≥ n would keep +∞ where it is, so it is skipped; positions ≥ n are never read or written.
//! (Kernels may instead stand [`KeyBits::INFINITY`] in for them in registers or shared memory:
//! a comparator never moves the maximum value down, so the keys below n end up the same.)

use crate::keys::KeyBits;

/// Inserts `count` zero bits into `x` at bit position `at`: how a comparator or unit index
/// becomes a key index.
///
/// ```
/// use kernels_gpu::bitonic::insert_zero_bits;
/// assert_eq!(insert_zero_bits(0b1011, 2, 1), 0b10011);
/// ```
#[inline(always)]
pub const fn insert_zero_bits(x: u64, at: u32, count: u32) -> u64 {
    ((x >> at) << (at + count)) | (x & ((1 << at) - 1))
}

/// How many `x` satisfy `insert_zero_bits(x, at, count) < n` (the map is increasing, so they
/// are exactly `0..units_below(..)`).
///
/// ```
/// use kernels_gpu::bitonic::{insert_zero_bits, units_below};
///
/// let below = (0..100).filter(|&x| insert_zero_bits(x, 2, 1) < 10).count() as u64;
/// assert_eq!(units_below(10, 2, 1), below);
/// ```
pub const fn units_below(n: u64, at: u32, count: u32) -> u64 {
    let period = at + count;
    let rest = n & ((1 << period) - 1);
    let run = 1 << at;
    ((n >> period) << at) + if rest < run { rest } else { run }
}

/// Lower index of comparator `c` of a step whose partners lie 2^s apart (bit `s` of it is 0).
///
/// ```
/// use kernels_gpu::bitonic::comparator_lo;
/// // Distance 2: comparators 0, 1, 2, 3 start at keys 0, 1, 4, 5.
/// assert_eq!([0, 1, 2, 3].map(|c| comparator_lo(c, 1)), [0, 1, 4, 5]);
/// ```
#[inline(always)]
pub const fn comparator_lo(c: u64, s: u32) -> u64 {
    insert_zero_bits(c, s, 1)
}

/// Upper partner of `lo` in a step of distance 2^s: its mirror image within the block of
/// 2^(s+1) keys in the first step of a stage, `lo + 2^s` in the later ones.
///
/// ```
/// use kernels_gpu::bitonic::partner;
/// assert_eq!(partner(1, 2, true), 6); // mirrored in the block 0..8
/// assert_eq!(partner(1, 2, false), 5);
/// ```
#[inline(always)]
pub const fn partner(lo: u64, s: u32, mirror: bool) -> u64 {
    if mirror {
        lo ^ ((2 << s) - 1)
    } else {
        lo + (1 << s)
    }
}

/// Smallest `l` with `2^l ≥ n` (0 for n ≤ 1): the number of stages that sort n keys.
///
/// ```
/// use kernels_gpu::bitonic::ceil_log2;
/// assert_eq!([0, 1, 2, 3, 4, 5].map(ceil_log2), [0, 0, 1, 2, 2, 3]);
/// ```
pub const fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        u64::BITS - (n - 1).leading_zeros()
    }
}

/// Puts the smaller of `r[i]`, `r[j]` at `i` (with `i < j`).
///
/// # Panics
/// If `i` or `j` is out of bounds.
///
/// # Examples
///
/// ```
/// use kernels_gpu::bitonic::compare_exchange;
/// let mut r = [9u32, 4];
/// compare_exchange(&mut r, 0, 1);
/// assert_eq!(r, [4, 9]);
/// ```
#[inline(always)]
pub fn compare_exchange<K: KeyBits>(r: &mut [K], i: usize, j: usize) {
    let (a, b) = (r[i], r[j]);
    if b < a {
        r[i] = b;
        r[j] = a;
    }
}

/// Several consecutive steps of one stage, all of whose distances are at least the tile size,
/// done by one global pass: steps of distance 2^top, 2^(top−1), …, 2^(top−steps+1); the first is
/// the stage's mirrored step if `mirror`.
///
/// Thread mapping: a *unit* owns a group of 2^steps keys spaced 2^spacing_log2 apart, which
/// those steps compare only among themselves; in a mirrored pass it also owns the mirror-image
/// group, since the mirrored step pairs the two. A unit loads its keys into registers once,
/// runs the steps there, and writes them once.
///
/// # Examples
///
/// ```
/// use kernels_gpu::bitonic::FusedPass;
///
/// // Stage 6 (blocks of 64 keys), its steps of distance 32 and 16, the first mirrored:
/// let pass = FusedPass { top: 5, steps: 2, mirror: true };
/// assert_eq!(pass.spacing_log2(), 4);
/// // Unit 0 owns the group 0, 16, 32, 48 and its mirror image 15, 31, 47, 63 (63 − key):
/// assert_eq!((pass.group_base(0), pass.mirror_base(0)), (0, 15));
/// // 8 units of 8 keys cover 64 keys.
/// assert_eq!(pass.units(64), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedPass {
    /// log2 of the first step's distance (a mirrored step pairs keys up to 2^(top+1) − 1 apart).
    pub top: u32,
    /// Number of steps fused, 1 ..= `GLOBAL_MAX_FUSED_STEPS`.
    pub steps: u32,
    /// Whether the first step is the stage's mirrored step.
    pub mirror: bool,
}

impl FusedPass {
    /// log2 of the distance between a group's keys (its last step's distance).
    ///
    /// ```
    /// use kernels_gpu::bitonic::FusedPass;
    /// assert_eq!(FusedPass { top: 20, steps: 4, mirror: false }.spacing_log2(), 17);
    /// ```
    #[inline(always)]
    pub const fn spacing_log2(&self) -> u32 {
        self.top + 1 - self.steps
    }

    /// Bit position at which a unit index is widened into its group's first key index.
    #[inline(always)]
    const fn split(&self) -> u32 {
        self.spacing_log2() - self.mirror as u32
    }

    /// Index of the first key of unit `u`'s group (its lowest key index).
    ///
    /// ```
    /// use kernels_gpu::bitonic::FusedPass;
    /// let pass = FusedPass { top: 3, steps: 2, mirror: false };
    /// // Groups of 4 keys 4 apart in blocks of 16: units start at 0, 1, 2, 3, 16, …
    /// assert_eq!([0, 1, 2, 3, 4].map(|u| pass.group_base(u)), [0, 1, 2, 3, 16]);
    /// ```
    #[inline(always)]
    pub const fn group_base(&self, u: u64) -> u64 {
        insert_zero_bits(u, self.split(), self.top + 1 - self.split())
    }

    /// First key of the mirror-image group paired with the group at `base` (mirrored passes).
    ///
    /// ```
    /// use kernels_gpu::bitonic::FusedPass;
    /// let pass = FusedPass { top: 3, steps: 2, mirror: true };
    /// // The group 0, 4, 8, 12 pairs with 3, 7, 11, 15.
    /// assert_eq!(pass.mirror_base(0), 3);
    /// ```
    #[inline(always)]
    pub const fn mirror_base(&self, base: u64) -> u64 {
        base ^ ((1 << self.spacing_log2()) - 1)
    }

    /// Units whose group starts below `n`; units past them would touch no key below `n`. The
    /// global kernels launch this many threads.
    ///
    /// ```
    /// use kernels_gpu::bitonic::FusedPass;
    /// let pass = FusedPass { top: 3, steps: 2, mirror: false };
    /// assert_eq!(pass.units(16), 4); // 16 keys, 4 per unit
    /// assert_eq!(pass.units(3), 3); // unit 3's group 3, 7, 11, 15 is all past the end
    /// ```
    pub const fn units(&self, n: u64) -> u64 {
        units_below(n, self.split(), self.top + 1 - self.split())
    }
}

/// One unit of a [`FusedPass`]: loads its `G` (= 2^steps) keys, or `2G` in a mirrored pass,
/// runs the steps in registers and stores them. Keys at positions ≥ `n` are neither read nor
/// written ([`KeyBits::INFINITY`] stands in for them).
///
/// The same code runs on the GPU (one thread per unit) and in the CPU tests (units in a loop).
///
/// # Safety
/// `keys` must be valid for reads and writes of `n` keys; no other thread may touch this unit's
/// keys meanwhile; `G == 1 << pass.steps`; the pass must fit in `n`'s network
/// (`pass.top < ceil_log2(n)`).
///
/// # Examples
///
/// Stage 3 of 8 keys whose halves are sorted: its mirrored step (distance 4) and the step of
/// distance 2 in one pass of one unit, then the last step:
///
/// ```
/// use kernels_gpu::bitonic::{FusedPass, fused_pass_unit, half_cleaners};
///
/// let mut keys = [1u32, 3, 5, 7, 0, 2, 4, 6];
/// let pass = FusedPass { top: 2, steps: 2, mirror: true };
/// for unit in 0..pass.units(8) {
///     // SAFETY: `keys` holds 8 keys, units run one at a time, G = 2^steps and top < 3.
///     unsafe { fused_pass_unit::<u32, 4>(keys.as_mut_ptr(), 8, pass, unit) };
/// }
/// assert_eq!(keys, [1, 0, 2, 3, 4, 5, 7, 6]);
/// half_cleaners(&mut keys, 2);
/// assert_eq!(keys, [0, 1, 2, 3, 4, 5, 6, 7]);
/// ```
#[inline(always)]
pub unsafe fn fused_pass_unit<K: KeyBits, const G: usize>(
    keys: *mut K,
    n: u64,
    pass: FusedPass,
    unit: u64,
) {
    let base = pass.group_base(unit);
    let spacing = 1u64 << pass.spacing_log2();
    let load = |at: u64| -> K {
        if at < n {
            // SAFETY: at < n, and the caller vouches for n keys.
            unsafe { *keys.add(at as usize) }
        } else {
            K::INFINITY
        }
    };
    let store = |at: u64, key: K| {
        if at < n {
            // SAFETY: as in `load`.
            unsafe { *keys.add(at as usize) = key }
        }
    };
    let mut a = [K::INFINITY; G];
    for (t, slot) in a.iter_mut().enumerate() {
        *slot = load(base + t as u64 * spacing);
    }
    if pass.mirror {
        let mirror = pass.mirror_base(base);
        let mut b = [K::INFINITY; G];
        for (t, slot) in b.iter_mut().enumerate() {
            *slot = load(mirror + t as u64 * spacing);
        }
        // The mirrored step pairs a[t] with b[G−1−t]; the lower index is a's for t < G/2.
        for t in 0..G {
            let (x, y) = (a[t], b[G - 1 - t]);
            let (lo, hi) = if y < x { (y, x) } else { (x, y) };
            if t < G / 2 {
                (a[t], b[G - 1 - t]) = (lo, hi);
            } else {
                (b[G - 1 - t], a[t]) = (lo, hi);
            }
        }
        half_cleaners(&mut b, G / 2);
        for (t, &key) in b.iter().enumerate() {
            store(mirror + t as u64 * spacing, key);
        }
        half_cleaners(&mut a, G / 2);
    } else {
        half_cleaners(&mut a, G);
    }
    for (t, &key) in a.iter().enumerate() {
        store(base + t as u64 * spacing, key);
    }
}

/// Steps of distance `width/2, width/4, …, 1` on `r` (a bitonic merge of blocks of `width`):
/// the steps of a stage after its mirrored one. `r.len()` must be a multiple of `width`, a
/// power of two.
///
/// ```
/// use kernels_gpu::bitonic::half_cleaners;
/// let mut r = [3u32, 4, 1, 2];
/// half_cleaners(&mut r, 4);
/// assert_eq!(r, [1, 2, 3, 4]);
/// ```
#[inline(always)]
pub fn half_cleaners<K: KeyBits>(r: &mut [K], width: usize) {
    let mut j = width / 2;
    while j > 0 {
        for i in 0..r.len() {
            if i & j == 0 {
                compare_exchange(r, i, i + j);
            }
        }
        j /= 2;
    }
}

/// A full bitonic sort of `r` (length a power of two), in registers: what each tile-kernel
/// thread does to its run of [`TILE_RUN`](crate::tuning::TILE_RUN) keys first.
///
/// ```
/// use kernels_gpu::bitonic::sort_network;
/// let mut r = [5u32, 1, 4, 2, 8, 7, 3, 6];
/// sort_network(&mut r);
/// assert_eq!(r, [1, 2, 3, 4, 5, 6, 7, 8]);
/// ```
#[inline(always)]
pub fn sort_network<K: KeyBits>(r: &mut [K]) {
    let mut block = 2;
    while block <= r.len() {
        // Mirrored first step of the stage, then the half-cleaners.
        for i in 0..r.len() {
            let lo_half = i & (block / 2) == 0;
            if lo_half {
                compare_exchange(r, i, i ^ (block - 1));
            }
        }
        half_cleaners(r, block / 2);
        block *= 2;
    }
}

/// One launch of the bitonic sort, as [`schedule`] lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Sort every tile in shared memory (stages 1 ..= tile_log2). Always the first pass.
    SortTiles,
    /// Some of a stage's steps whose distances are at least the tile size.
    Global(FusedPass),
    /// The rest of stage `stage` (> tile_log2): all steps of distance below the tile size, done
    /// inside each tile in shared memory.
    MergeTiles {
        /// The stage (log2 of its block size).
        stage: u32,
    },
}

impl Pass {
    /// Whether the pass compares keys only within each aligned block of `2^block_log2` keys,
    /// for blocks of at least a tile. Consecutive passes that all do may run block by block:
    /// each block is done with them before the next starts, and no other block notices.
    ///
    /// ```
    /// use kernels_gpu::bitonic::{FusedPass, Pass};
    ///
    /// // Distances 2^21 .. 2^18 pair keys within blocks of 2^22, not within blocks of 2^21.
    /// let pass = Pass::Global(FusedPass { top: 21, steps: 4, mirror: false });
    /// assert!(pass.stays_within(22) && !pass.stays_within(21));
    /// assert!(Pass::MergeTiles { stage: 25 }.stays_within(22));
    /// ```
    pub fn stays_within(&self, block_log2: u32) -> bool {
        match self {
            Pass::Global(p) => p.top < block_log2,
            Pass::SortTiles | Pass::MergeTiles { .. } => true,
        }
    }
}

/// How many passes at the end of `passes` stay within aligned blocks of `2^block_log2` keys
/// ([`Pass::stays_within`]): those may run block by block, so that each block's keys are final
/// as soon as its own launches are done. The host-slice pipeline runs the end of the last stage
/// that way, chunk by chunk, and copies each chunk back while the next one is merged.
///
/// ```
/// use kernels_gpu::bitonic::{block_tail, schedule};
///
/// // 2^25 keys in tiles of 2^13, blocks of 2^22: stage 25's mirrored pass (distances 2^24 ..
/// // 2^22) spans blocks; its three later global passes (2^21 .. 2^13) and its tile merge do not.
/// let passes: Vec<_> = schedule(1 << 25, 22, 13, 3, 4).collect();
/// assert_eq!(block_tail(&passes, 22), 4);
/// ```
pub fn block_tail(passes: &[Pass], block_log2: u32) -> usize {
    passes
        .iter()
        .rev()
        .take_while(|p| p.stays_within(block_log2))
        .count()
}

/// The passes that finish sorting `n` keys whose aligned blocks of `2^sorted_log2` keys are
/// each sorted ascending already (`sorted_log2 = 0`: none is), in launch order, for tiles of
/// `2^tile_log2` keys: each stage's global steps go to a first, mirrored pass of at most
/// `max_mirror_steps` steps and then passes of at most `max_steps`. Empty for n ≤ 1 and for
/// n ≤ 2^sorted_log2.
///
/// From scratch (`sorted_log2 = 0`): one [`Pass::SortTiles`], then for each stage above the
/// tile its [`Pass::Global`] passes and one [`Pass::MergeTiles`]. Since every comparator points
/// the same way, the stages up to k leave each aligned block of 2^k keys sorted ascending and
/// nothing else: blocks sorted by any means are where stage k + 1 starts. So with
/// `sorted_log2 ≥ tile_log2` the list starts with stage `sorted_log2 + 1`, and has no tile
/// sort (the keys must then be encoded already, since the tile sort is what encodes them); a
/// `sorted_log2` below the tile counts as none (the tile sort sorts the tiles from any state).
///
/// ```
/// use kernels_gpu::bitonic::{FusedPass, Pass, schedule};
///
/// let passes: Vec<Pass> = schedule(17, 0, 4, 2, 2).collect(); // tiles of 16 keys
/// assert_eq!(passes, [
///     Pass::SortTiles,
///     Pass::Global(FusedPass { top: 4, steps: 1, mirror: true }),
///     Pass::MergeTiles { stage: 5 },
/// ]);
/// assert_eq!(schedule(1, 0, 4, 2, 2).count(), 0);
/// // Blocks of 16 sorted already: the same, less the tile sort.
/// assert_eq!(schedule(17, 4, 4, 2, 2).collect::<Vec<_>>(), passes[1..]);
/// // Blocks of 32 sorted: nothing left for 17 keys.
/// assert_eq!(schedule(17, 5, 4, 2, 2).count(), 0);
/// ```
pub fn schedule(
    n: u64,
    sorted_log2: u32,
    tile_log2: u32,
    max_mirror_steps: u32,
    max_steps: u32,
) -> impl Iterator<Item = Pass> {
    let stages = ceil_log2(n);
    let first = (n > 1 && sorted_log2 < tile_log2).then_some(Pass::SortTiles);
    let later = (tile_log2.max(sorted_log2) + 1..=stages).flat_map(move |stage| {
        // Steps of distance 2^(stage−1) down to 2^tile_log2 go to global passes.
        let global_steps = stage - tile_log2;
        let mut done = 0;
        core::iter::from_fn(move || {
            let mirror = done == 0;
            let most = if mirror { max_mirror_steps } else { max_steps };
            let steps = most.min(global_steps.checked_sub(done).filter(|&left| left > 0)?);
            let pass = FusedPass {
                top: stage - 1 - done,
                steps,
                mirror,
            };
            done += steps;
            Some(Pass::Global(pass))
        })
        .chain(core::iter::once(Pass::MergeTiles { stage }))
    });
    first.into_iter().chain(later)
}

/// The passes that sort one chunk of `len ≥ 1` keys on its own, before the passes over the
/// whole array (`schedule(n, log2(chunk), ..)`) finish the sort: `schedule(len, 0, ..)`, except
/// that a chunk of one key still gets the tile sort, which encodes it as the later passes
/// expect.
///
/// ```
/// use kernels_gpu::bitonic::{Pass, chunk_schedule, schedule};
///
/// assert_eq!(chunk_schedule(1, 4, 2, 2).collect::<Vec<_>>(), [Pass::SortTiles]);
/// assert!(chunk_schedule(100, 4, 2, 2).eq(schedule(100, 0, 4, 2, 2)));
/// ```
pub fn chunk_schedule(
    len: u64,
    tile_log2: u32,
    max_mirror_steps: u32,
    max_steps: u32,
) -> impl Iterator<Item = Pass> {
    let lone = (len == 1).then_some(Pass::SortTiles);
    lone.into_iter()
        .chain(schedule(len, 0, tile_log2, max_mirror_steps, max_steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The network straight from its definition, one comparator at a time, skipping partners ≥ n.
    fn reference_network(keys: &mut [u32]) {
        let n = keys.len() as u64;
        for stage in 1..=ceil_log2(n) {
            for s in (0..stage).rev() {
                for c in 0..n {
                    let lo = comparator_lo(c, s);
                    let hi = partner(lo, s, s == stage - 1);
                    if hi < n && keys[hi as usize] < keys[lo as usize] {
                        keys.swap(lo as usize, hi as usize);
                    }
                }
            }
        }
    }

    /// Runs the GPU schedule on the CPU: tile passes with a plain sort / the tile's steps, the
    /// global passes through the very unit code the kernels run.
    fn emulate_schedule(keys: &mut [u32], tile_log2: u32, max_mirror: u32, max_fused: u32) {
        let n = keys.len() as u64;
        emulate_passes(
            keys,
            schedule(n, 0, tile_log2, max_mirror, max_fused),
            tile_log2,
        );
    }

    /// Runs `passes` on `keys` as the kernels would, launched on exactly this slice.
    fn emulate_passes(keys: &mut [u32], passes: impl Iterator<Item = Pass>, tile_log2: u32) {
        for pass in passes {
            emulate_pass(keys, pass, tile_log2);
        }
    }

    fn emulate_pass(keys: &mut [u32], pass: Pass, tile_log2: u32) {
        let n = keys.len() as u64;
        let tile = 1usize << tile_log2;
        match pass {
            Pass::SortTiles => keys.chunks_mut(tile).for_each(|t| t.sort_unstable()),
            Pass::MergeTiles { .. } => {
                for chunk in keys.chunks_mut(tile) {
                    let mut padded = chunk.to_vec();
                    padded.resize(tile, u32::MAX);
                    half_cleaners(&mut padded, tile);
                    let len = chunk.len();
                    chunk.copy_from_slice(&padded[..len]);
                }
            }
            Pass::Global(p) => {
                for u in 0..p.units(n) {
                    // SAFETY: keys holds n keys; units run one after another.
                    unsafe {
                        match p.steps {
                            1 => fused_pass_unit::<u32, 2>(keys.as_mut_ptr(), n, p, u),
                            2 => fused_pass_unit::<u32, 4>(keys.as_mut_ptr(), n, p, u),
                            3 => fused_pass_unit::<u32, 8>(keys.as_mut_ptr(), n, p, u),
                            _ => fused_pass_unit::<u32, 16>(keys.as_mut_ptr(), n, p, u),
                        }
                    }
                }
            }
        }
    }

    /// The host-slice pipeline's launches on the CPU: each chunk of 2^chunk_log2 keys sorted
    /// on its own (`chunk_schedule`, launched on the chunk), then the passes over the whole
    /// array from stage chunk_log2 + 1, those at the end that stay within chunks
    /// (`block_tail`) launched chunk by chunk.
    fn emulate_chunked(
        keys: &mut [u32],
        chunk_log2: u32,
        (tile_log2, max_mirror, max_fused): (u32, u32, u32),
    ) {
        let n = keys.len() as u64;
        for chunk in keys.chunks_mut(1 << chunk_log2) {
            let len = chunk.len() as u64;
            emulate_passes(
                chunk,
                chunk_schedule(len, tile_log2, max_mirror, max_fused),
                tile_log2,
            );
        }
        let rest: Vec<Pass> = schedule(n, chunk_log2, tile_log2, max_mirror, max_fused).collect();
        let tail = block_tail(&rest, chunk_log2);
        assert_eq!(tail == 0, rest.is_empty(), "a tile merge ends every stage");
        let (head, tail) = rest.split_at(rest.len() - tail);
        emulate_passes(keys, head.iter().copied(), tile_log2);
        for chunk in keys.chunks_mut(1 << chunk_log2) {
            emulate_passes(chunk, tail.iter().copied(), tile_log2);
        }
    }

    fn interesting_len() -> impl Strategy<Value = usize> {
        prop_oneof![
            0usize..70,
            (1u32..11).prop_flat_map(|k| ((1usize << k) - 1)..=((1usize << k) + 1)),
            70usize..3000,
        ]
    }

    #[test]
    fn insert_zero_bits_examples() {
        assert_eq!(insert_zero_bits(0b1011, 2, 1), 0b10011);
        assert_eq!(insert_zero_bits(0b1011, 0, 2), 0b101100);
        assert_eq!(insert_zero_bits(0b1011, 4, 3), 0b1011);
    }

    #[test]
    fn ceil_log2_examples() {
        let cases = [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (1 << 40, 40),
        ];
        for (n, l) in cases {
            assert_eq!(ceil_log2(n), l, "n = {n}");
        }
        assert_eq!(ceil_log2((1 << 40) + 1), 41);
    }

    #[test]
    fn schedule_for_small_and_large_n() {
        assert_eq!(schedule(0, 0, 4, 2, 2).count(), 0);
        assert_eq!(schedule(1, 0, 4, 2, 2).count(), 0);
        assert_eq!(
            schedule(16, 0, 4, 2, 2).collect::<Vec<_>>(),
            [Pass::SortTiles]
        );
        let p: Vec<_> = schedule(17, 0, 4, 2, 2).collect();
        let g = FusedPass {
            top: 4,
            steps: 1,
            mirror: true,
        };
        assert_eq!(
            p,
            [
                Pass::SortTiles,
                Pass::Global(g),
                Pass::MergeTiles { stage: 5 }
            ]
        );
        // Stage 8 over tiles of 16: 4 global steps (distances 128..16) in two passes of 2.
        let p: Vec<_> = schedule(256, 0, 4, 2, 2).collect();
        let tail = [
            Pass::Global(FusedPass {
                top: 7,
                steps: 2,
                mirror: true,
            }),
            Pass::Global(FusedPass {
                top: 5,
                steps: 2,
                mirror: false,
            }),
            Pass::MergeTiles { stage: 8 },
        ];
        assert_eq!(p[p.len() - 3..], tail);
        // Mirrored passes of 1 step, later ones of up to 3: 4 global steps as 1 + 3.
        let p: Vec<_> = schedule(256, 0, 4, 1, 3).collect();
        let tail = [
            Pass::Global(FusedPass {
                top: 7,
                steps: 1,
                mirror: true,
            }),
            Pass::Global(FusedPass {
                top: 6,
                steps: 3,
                mirror: false,
            }),
            Pass::MergeTiles { stage: 8 },
        ];
        assert_eq!(p[p.len() - 3..], tail);
    }

    #[test]
    fn schedule_from_sorted_blocks_is_the_rest_of_the_full_schedule() {
        for (tile_log2, max_mirror, max_fused) in [(4, 2, 2), (4, 1, 3), (13, 3, 4), (2, 1, 1)] {
            let tuning = (tile_log2, max_mirror, max_fused);
            for n in [
                0u64,
                1,
                2,
                15,
                16,
                17,
                100,
                255,
                256,
                257,
                5000,
                1 << 20,
                (1 << 25) + 3,
            ] {
                let full: Vec<Pass> = schedule(n, 0, tile_log2, max_mirror, max_fused).collect();
                // Below the tile: the same as nothing sorted.
                for s in 0..tile_log2 {
                    let p: Vec<Pass> = schedule(n, s, tile_log2, max_mirror, max_fused).collect();
                    assert_eq!(p, full, "n = {n}, sorted_log2 = {s}, {tuning:?}");
                }
                // From the tile up: the full schedule is the sort of one block of 2^s keys
                // followed by these passes.
                for s in tile_log2..tile_log2 + 8 {
                    let first = schedule(n.min(1 << s), 0, tile_log2, max_mirror, max_fused);
                    let rest = schedule(n, s, tile_log2, max_mirror, max_fused);
                    let joined: Vec<Pass> = first.chain(rest).collect();
                    assert_eq!(joined, full, "n = {n}, sorted_log2 = {s}, {tuning:?}");
                    let rest: Vec<Pass> =
                        schedule(n, s, tile_log2, max_mirror, max_fused).collect();
                    assert!(!rest.contains(&Pass::SortTiles));
                    assert_eq!(rest.is_empty(), n <= 1 << s, "n = {n}, sorted_log2 = {s}");
                    if let Some(last) = rest.last() {
                        assert_eq!(
                            *last,
                            Pass::MergeTiles {
                                stage: ceil_log2(n)
                            }
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn chunk_schedule_always_sorts_the_tiles_first() {
        for len in [1u64, 2, 3, 16, 17, 1000] {
            let p: Vec<Pass> = chunk_schedule(len, 4, 2, 2).collect();
            assert_eq!(p[0], Pass::SortTiles, "len = {len}");
            assert_eq!(p.iter().filter(|&&q| q == Pass::SortTiles).count(), 1);
            if len > 1 {
                assert!(p.iter().copied().eq(schedule(len, 0, 4, 2, 2)));
            }
        }
    }

    #[test]
    fn block_tails_are_the_end_of_the_last_stage_within_blocks() {
        for (tile_log2, max_mirror, max_fused) in [(13, 3, 4), (4, 2, 2), (2, 1, 3)] {
            for block_log2 in tile_log2..tile_log2 + 6 {
                for n in [
                    (1u64 << (block_log2 + 1)) + 1,
                    1 << (block_log2 + 3),
                    12345 << 7,
                ] {
                    let rest: Vec<Pass> =
                        schedule(n, block_log2, tile_log2, max_mirror, max_fused).collect();
                    let tail = block_tail(&rest, block_log2);
                    let what = format!("n = {n}, blocks of 2^{block_log2}, tiles of 2^{tile_log2}");
                    if rest.is_empty() {
                        assert_eq!(tail, 0, "{what}");
                        continue;
                    }
                    // Only the last stage: its mirrored pass spans blocks, its tile merge not.
                    let last_stage = ceil_log2(n);
                    assert!(tail >= 1 && tail < rest.len(), "{what}");
                    assert_eq!(rest[rest.len() - 1], Pass::MergeTiles { stage: last_stage });
                    let first = rest[rest.len() - tail - 1];
                    assert!(!first.stays_within(block_log2), "{what}: {first:?}");
                    for p in &rest[rest.len() - tail..] {
                        assert!(p.stays_within(block_log2), "{what}: {p:?}");
                        if let Pass::Global(g) = p {
                            assert!(!g.mirror && g.top < block_log2, "{what}: {g:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn chunked_launches_sort_ragged_and_exact_lengths() {
        // Tiles of 4, chunks of 16: lengths with one chunk, several, a last chunk of 1 key,
        // ragged last chunks and ragged tiles.
        let tuning = (2, 1, 2);
        for n in [
            2usize, 15, 16, 17, 31, 32, 33, 48, 49, 63, 64, 65, 100, 129, 1000, 4097,
        ] {
            for salt in [1, 2, 3] {
                let mut x = n as u64 * 7919 + salt;
                let input: Vec<u32> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % 50) as u32
                    })
                    .collect();
                let mut expected = input.clone();
                expected.sort_unstable();
                let mut v = input.clone();
                emulate_chunked(&mut v, 4, tuning);
                assert_eq!(v, expected, "n = {n}, salt {salt}");
            }
        }
    }

    proptest! {
        #[test]
        fn units_below_counts_the_increasing_map(n in 0u64..5000, at in 0u32..6, count in 1u32..4) {
            let brute = (0..n).take_while(|&x| insert_zero_bits(x, at, count) < n).count() as u64;
            prop_assert_eq!(units_below(n, at, count), brute);
        }

        #[test]
        fn every_step_pairs_each_index_once(stage in 1u32..10) {
            // In each step of a stage, the 2^(stage−1) comparators of a block of 2^stage keys
            // pair every index of the block with exactly one other, lower index first.
            for s in (0..stage).rev() {
                let mut seen = vec![false; 1 << stage];
                for c in 0..(1u64 << (stage - 1)) {
                    let lo = comparator_lo(c, s);
                    let hi = partner(lo, s, s == stage - 1);
                    prop_assert!(lo < hi && hi < 1 << stage);
                    prop_assert!(!seen[lo as usize] && !seen[hi as usize]);
                    seen[lo as usize] = true;
                    seen[hi as usize] = true;
                }
                prop_assert!(seen.iter().all(|&x| x));
            }
        }

        #[test]
        fn fused_units_cover_each_key_once(top in 3u32..9, steps in 1u32..4, mirror: bool, n in 1u64..1200) {
            prop_assume!(steps <= top);
            let pass = FusedPass { top, steps, mirror };
            let mut owner = vec![None; n as usize];
            let block = 1u64 << (top + 1);
            let units_per_block = block >> (steps + mirror as u32);
            for u in 0..pass.units(n) {
                let base = pass.group_base(u);
                let mut groups = vec![base];
                if mirror { groups.push(pass.mirror_base(base)); }
                for g in groups {
                    for t in 0..1u64 << steps {
                        let at = g + (t << pass.spacing_log2());
                        prop_assert_eq!(at / block, base / block, "unit leaves its block");
                        if at < n {
                            prop_assert!(owner[at as usize].is_none());
                            owner[at as usize] = Some(u);
                        }
                    }
                }
            }
            // Every key of a block that holds a key below n belongs to some unit.
            prop_assert!(owner.iter().all(Option::is_some));
            prop_assert!(units_per_block > 0);
        }

        #[test]
        fn reference_network_sorts(mut v in proptest::collection::vec(any::<u32>(), 0..300)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            reference_network(&mut v);
            prop_assert_eq!(v, expected);
        }

        #[test]
        fn gpu_schedule_sorts_any_length(
            len in interesting_len(),
            tile_log2 in 1u32..6,
            max_fused in 1u32..5,
            max_mirror_seed: u32,
            seed: u64,
            few in any::<bool>(),
        ) {
            let mut x = seed | 1;
            let mut v: Vec<u32> = (0..len).map(|_| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                if few { (x % 4) as u32 * (u32::MAX / 3) } else { x as u32 }
            }).collect();
            let mut expected = v.clone();
            expected.sort_unstable();
            let mut by_network = v.clone();
            reference_network(&mut by_network);
            let max_mirror = 1 + max_mirror_seed % max_fused;
            emulate_schedule(&mut v, tile_log2, max_mirror, max_fused);
            prop_assert_eq!(&v, &expected);
            prop_assert_eq!(by_network, expected);
        }

        #[test]
        fn chunked_launches_sort_any_length(
            len in interesting_len(),
            tile_log2 in 1u32..5,
            chunk_extra in 0u32..4,
            max_fused in 1u32..5,
            max_mirror_seed: u32,
            seed: u64,
        ) {
            prop_assume!(len > 1);
            let mut x = seed | 1;
            let mut v: Vec<u32> = (0..len).map(|_| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                x as u32
            }).collect();
            let mut expected = v.clone();
            expected.sort_unstable();
            let max_mirror = 1 + max_mirror_seed % max_fused;
            emulate_chunked(&mut v, tile_log2 + chunk_extra, (tile_log2, max_mirror, max_fused));
            prop_assert_eq!(v, expected);
        }

        #[test]
        fn register_networks_sort(mut v in proptest::collection::vec(any::<u32>(), 16)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            sort_network(&mut v);
            prop_assert_eq!(v, expected);
        }
    }
}
