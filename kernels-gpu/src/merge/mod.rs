//! Pure index math of the stable merge sort (host and GPU): the merge-path search and the
//! partition of a merge pass into output tiles.
//!
//! Merge path (Odeh, Green, Mwassi, Shmueli and Birk, "Merge Path - Parallel Merging Made
//! Simple", 2012): the first `diag` outputs of merging sorted lists A and B take some `i` keys of
//! A and `diag − i` of B; a binary search along that cross diagonal of the A × B grid finds `i`.
//! Ties go to A (the earlier run), which makes every merge, and so the sort, stable.
//!
//! A sort of `n` keys: one tile sort (tiles of `tile` keys, each sorted in a block), then merge
//! passes with run widths `w = tile, 2·tile, 4·tile, …` while `w < n`. A pass merges runs
//! `[2jw, 2jw + w)` and `[2jw + w, 2jw + 2w)` (clipped to `n`) and cuts the output into tiles of
//! `nv` keys, the merge kernel's tile, which divides `tile` (the tile sort's blocks may be
//! larger than the merge's); since `2w` is then a multiple of `nv`, each output tile lies in
//! one pair of runs.

pub mod block;
#[cfg(target_arch = "nvptx64")]
mod kernels;
pub mod network;

use crate::args::Addr;

/// `merge_path` for one index width, so that tiles use 32-bit math and passes 64-bit math.
macro_rules! merge_path_fn {
    ($(#[$doc:meta])* $name:ident, $ix:ty) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name<K: PartialOrd>(
            diag: $ix,
            a_len: $ix,
            b_len: $ix,
            a: impl Fn($ix) -> K,
            b: impl Fn($ix) -> K,
        ) -> $ix {
            let mut lo = diag.saturating_sub(b_len);
            let mut hi = if diag < a_len { diag } else { a_len };
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                // a[mid] goes before b[diag − 1 − mid] unless b's key is strictly smaller.
                if b(diag - 1 - mid) < a(mid) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            lo
        }
    };
}

merge_path_fn!(
    /// How many of the first `diag` outputs of the stable merge of sorted `a` (the earlier run)
    /// and `b` come from `a` (`a(i)` and `b(j)` read the lists; `diag <= a_len + b_len`).
    ///
    /// The result `i` satisfies `a[i−1] <= b[diag−i]` and `b[diag−i−1] < a[i]` wherever both
    /// sides exist: on ties A's keys come first.
    merge_path,
    u64
);

merge_path_fn!(
    /// [`merge_path`] with 32-bit indices, for lists inside a tile.
    merge_path_32,
    u32
);

/// Lanes of the warp-cooperative search ([`first_true`]): one warp.
pub const SEARCH_LANES: u32 = 32;

/// A warp's vote: every lane evaluates a predicate, and every lane gets the mask of the lanes
/// for which it held (`__ballot_sync`). On the GPU one lane evaluates its own; on the CPU
/// ([`AllLanes`]) one caller evaluates all [`SEARCH_LANES`].
pub trait Vote {
    /// Bit `j` of the result: `pred(j)` held on lane `j`.
    fn vote(&self, pred: impl Fn(u32) -> bool) -> u32;
}

/// [`Vote`] on the CPU: all lanes evaluated in turn.
pub struct AllLanes;

impl Vote for AllLanes {
    #[inline(always)]
    fn vote(&self, pred: impl Fn(u32) -> bool) -> u32 {
        (0..SEARCH_LANES).fold(0, |mask, j| mask | (u32::from(pred(j)) << j))
    }
}

/// Point `j` (< `probes`) of one round of a `(probes + 1)`-ary search over `lo .. hi`
/// (`lo < hi`): the points split the range into `probes + 1` nearly equal parts; they lie in
/// `lo .. hi` and do not decrease with `j`.
///
/// ```
/// use kernels_gpu::merge::probe_point;
/// assert_eq!((probe_point(0, 33, 0, 32), probe_point(0, 33, 31, 32)), (1, 32));
/// assert_eq!(probe_point(5, 6, 31, 32), 5); // a range of one point
/// assert_eq!(probe_point(3, 40, 0, 1), 21); // a binary search's midpoint
/// ```
#[inline(always)]
pub const fn probe_point(lo: u64, hi: u64, j: u32, probes: u32) -> u64 {
    lo + (hi - lo) * (j as u64 + 1) / (probes as u64 + 1)
}

/// The `(probes + 1)`-ary search that [`first_true`] (a warp, a probe per lane) and
/// [`Probes`] (one thread) run: the first `m` in `lo .. hi` for which a predicate holds (`hi`
/// if none), for one that is false then true along the range. Each round, `held(lo, hi)` gives
/// the mask of the probes ([`probe_point`]`(lo, hi, j, probes)`, bit `j`) at which it holds,
/// and the range shrinks to the part between the last probe where it fails and the first
/// where it holds.
#[inline(always)]
fn search_rounds(lo: u64, hi: u64, probes: u32, held: impl Fn(u64, u64) -> u32) -> u64 {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        // Clear for a prefix of the probes, set for the rest.
        let first = held(lo, hi).trailing_zeros().min(probes);
        let new_lo = if first > 0 {
            probe_point(lo, hi, first - 1, probes) + 1
        } else {
            lo
        };
        if first < probes {
            hi = probe_point(lo, hi, first, probes);
        }
        lo = new_lo;
    }
    lo
}

/// The first `m` in `lo .. hi` for which `pred(m)` holds (`hi` if none), for a `pred` that is
/// false then true along the range: a warp-cooperative `33`-ary search. In each step lane `j`
/// evaluates `pred` at [`probe_point`] `j` (all lanes' loads in flight together), a vote tells
/// every lane where the change lies, and all keep the same part of the range: a range of `w`
/// points takes `log_33 w` steps instead of `log2 w` dependent round trips to memory. Every
/// lane returns the same result.
#[inline(always)]
pub fn first_true(lo: u64, hi: u64, pred: impl Fn(u64) -> bool, warp: &impl Vote) -> u64 {
    search_rounds(lo, hi, SEARCH_LANES, |lo, hi| {
        warp.vote(|j| pred(probe_point(lo, hi, j, SEARCH_LANES)))
    })
}

/// How a partition finds where a predicate turns true along a range: a warp together (any
/// [`Vote`]: [`first_true`], few round trips to memory, 32 probes each) or one thread alone
/// ([`Probes`]: a few probes per round trip).
pub trait Search {
    /// The first `m` in `lo .. hi` for which `pred(m)` holds (`hi` if none), for a `pred` that
    /// is false then true along the range.
    fn first_true(&self, lo: u64, hi: u64, pred: impl Fn(u64) -> bool) -> u64;
}

impl<V: Vote> Search for V {
    #[inline(always)]
    fn first_true(&self, lo: u64, hi: u64, pred: impl Fn(u64) -> bool) -> u64 {
        first_true(lo, hi, pred, self)
    }
}

/// [`Search`] by one thread that probes `PROBES` points per round: a `(PROBES + 1)`-ary
/// search whose probes' loads are in flight together, so a range of `w` points costs
/// `log_(PROBES+1) w` round trips to memory. `Probes<1>` is a binary search.
///
/// ```
/// use kernels_gpu::merge::{Probes, Search};
/// for m in 3..=40 {
///     assert_eq!(Probes::<1>.first_true(3, 40, |x| x >= m), m);
///     assert_eq!(Probes::<7>.first_true(3, 40, |x| x >= m), m);
/// }
/// ```
pub struct Probes<const PROBES: u32>;

impl<const PROBES: u32> Search for Probes<PROBES> {
    #[inline(always)]
    fn first_true(&self, lo: u64, hi: u64, pred: impl Fn(u64) -> bool) -> u64 {
        const { assert!(PROBES >= 1 && PROBES <= 32, "1 to 32 probes per round") };
        search_rounds(lo, hi, PROBES, |lo, hi| {
            (0..PROBES).fold(0, |mask, j| {
                mask | u32::from(pred(probe_point(lo, hi, j, PROBES))) << j
            })
        })
    }
}

/// [`merge_path`] by `search` over the points `lo .. hi` of the diagonal (which must contain
/// the split). Same result as [`merge_path`] with the full range.
#[inline(always)]
pub fn merge_path_search<K: PartialOrd>(
    diag: u64,
    (lo, hi): (u64, u64),
    a: impl Fn(u64) -> K,
    b: impl Fn(u64) -> K,
    search: &impl Search,
) -> u64 {
    // True where the split lies at or before m: B's key there is strictly smaller than A's.
    search.first_true(lo, hi, |m| b(diag - 1 - m) < a(m))
}

/// The points of diagonal `diag` of the merge of lists of `a_len` and `b_len` keys: the
/// split lies in `lo ..= hi`.
#[inline(always)]
pub const fn diagonal_range(diag: u64, a_len: u64, b_len: u64) -> (u64, u64) {
    (
        diag.saturating_sub(b_len),
        if diag < a_len { diag } else { a_len },
    )
}

/// Merge passes that follow the tile sort of `n` keys in tiles of `tile` keys (the tile
/// sort's): `ceil(log2(ceil(n / tile)))`.
pub fn merge_passes(n: u64, tile: u64) -> u32 {
    let tiles = n.div_ceil(tile).max(1);
    tiles.next_power_of_two().trailing_zeros()
}

/// Whether the tile sort writes to the scratch buffer rather than in place: the passes
/// alternate between the two buffers, and the last one must land in the caller's buffer, so
/// the tile sort goes to scratch exactly when an odd number of merge passes follows it.
pub fn tile_sort_to_scratch(n: u64, tile: u64) -> bool {
    merge_passes(n, tile) % 2 == 1
}

crate::args::kernel_args! { $
    /// The argument of the stable tile sorts (`merge_sort_tiles_*`, and the compact ones,
    /// `merge_sort_tiles_compact_*`): each tile sorted stably, keys and values, from the
    /// sources into the same positions of the destinations, with its edges recorded for the
    /// first merge pass's partition.
    pub struct SortTilesArgs, entry sort_tiles_entry {
        /// The `n` keys, read.
        pub src_keys: Addr,
        /// Where the sorted tiles' keys go, at their tiles' positions (may be `src_keys`).
        pub dst_keys: Addr,
        /// The keys' values, read; 0 for keys alone.
        pub src_values: Addr,
        /// Where the values go with their keys (may be `src_values`); 0 for keys alone.
        pub dst_values: Addr,
        /// Room for two keys per `MERGE_TILE` keys, written: the first and last (encoded) key
        /// of each (keys `2t`, `2t + 1` for piece `t`).
        pub edges: Addr,
        /// Keys in all.
        pub n: u64,
        /// The key map applied to each key as it is loaded.
        pub encode: u32,
        /// The key map undone on each key as it is stored (`IDENTITY` unless this is the only
        /// step).
        pub decode: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the stable merge passes (`merge_pass_*`): output tiles
    /// `first_tile + blockIdx.x` of the pass over runs of `width` keys, each merged from its
    /// slices of two runs (from `splits`) into the destinations, its edges recorded for the
    /// next pass's partition.
    pub struct MergePassArgs, entry merge_pass_entry {
        /// The `n` keys, in sorted runs of `width`, read.
        pub src_keys: Addr,
        /// Where the merged keys go, apart from `src_keys`.
        pub dst_keys: Addr,
        /// The keys' values, read; 0 for keys alone.
        pub src_values: Addr,
        /// Where the values go with their keys, apart from `src_values`; 0 for keys alone.
        pub dst_values: Addr,
        /// Room for two keys per output tile, written: the first and last (encoded) key of
        /// tile `t` as keys `2t`, `2t + 1`.
        pub edges: Addr,
        /// The pass's `u64` merge-path splits, one per output tile, from its partition.
        pub splits: Addr,
        /// Keys in all.
        pub n: u64,
        /// Keys per run merged (a multiple of the tile sort's tile).
        pub width: u64,
        /// The output tile of block 0: a pass is one launch from tile 0, or several over
        /// consecutive ranges of tiles.
        pub first_tile: u64,
        /// The key map undone on each key as it is stored (`IDENTITY` before the last pass).
        pub decode: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the merge passes' partitions (`merge_partition_*`): the merge-path
    /// split of every output tile of a pass over runs of `width` keys ([`partition_pass`]),
    /// one thread each.
    pub struct PartitionArgs, entry partition_entry {
        /// The `n` keys, in sorted runs of `width`, read.
        pub keys: Addr,
        /// The first and last key of each tile of `tile` keys, as the step that wrote the keys
        /// recorded them, read.
        pub edges: Addr,
        /// Room for one `u64` split per output tile, written.
        pub splits: Addr,
        /// Keys in all.
        pub n: u64,
        /// Keys per run merged.
        pub width: u64,
        /// Keys per output tile (`MERGE_TILE`, or `NETWORK_MERGE_TILE` for the keys-only
        /// passes).
        pub tile: u64,
    }
}

crate::args::kernel_args! { $
    /// The argument of the keys-only merge passes (`merge_pass_network_*`): as
    /// [`MergePassArgs`] without values, output tiles of `NETWORK_MERGE_TILE` keys merged by a
    /// bitonic network, each block first having the L2 cache fetch a later tile's slices.
    pub struct NetworkMergeArgs, entry network_merge_entry {
        /// As in [`MergePassArgs`].
        pub src_keys: Addr,
        /// As in [`MergePassArgs`].
        pub dst_keys: Addr,
        /// As in [`MergePassArgs`].
        pub edges: Addr,
        /// As in [`MergePassArgs`].
        pub splits: Addr,
        /// Keys in all.
        pub n: u64,
        /// Keys per run merged (a multiple of `NETWORK_MERGE_TILE`).
        pub width: u64,
        /// As in [`MergePassArgs`].
        pub first_tile: u64,
        /// How many tiles ahead of its own each block has the L2 cache fetch the slices (those
        /// of tile `tile + ahead`, which a later block merges); 0: none.
        pub ahead: u64,
        /// As in [`MergePassArgs`].
        pub decode: u32,
    }
}

crate::args::kernel_args! { $
    /// The argument of the partitions of a merge of two runs (`merge_two_partition_*`): the
    /// merge-path split of every output tile of `MERGE_TILE` keys, a warp each.
    pub struct TwoPartitionArgs, entry two_partition_entry {
        /// The two sorted runs, A = `keys[..a_len]` and B = `keys[a_len..n]`, read.
        pub keys: Addr,
        /// Room for one `u64` split per output tile, written: the first key of A it takes.
        pub splits: Addr,
        /// Keys in all.
        pub n: u64,
        /// Keys of A (at most `n`).
        pub a_len: u64,
    }
}

crate::args::kernel_args! { $
    /// The argument of the stable merges of two runs (`merge_two_*`): A = `src[..a_len]` and
    /// B = `src[a_len..n]` merged into `dst[..n]`, a block per output tile of `MERGE_TILE`
    /// keys.
    pub struct MergeTwoArgs, entry merge_two_entry {
        /// The two sorted runs, read.
        pub src: Addr,
        /// Where the merged keys go, apart from `src`.
        pub dst: Addr,
        /// The splits of the partition of the same runs ([`TwoPartitionArgs`]), read.
        pub splits: Addr,
        /// Keys in all.
        pub n: u64,
        /// Keys of A (at most `n`; `n` copies A).
        pub a_len: u64,
        /// The key map undone on each key as it is stored.
        pub decode: u32,
    }
}

/// One launch of the sort, with the buffers it reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// What the launch does.
    pub pass: Pass,
    /// Reads the scratch buffer (else the caller's keys).
    pub from_scratch: bool,
    /// Writes the scratch buffer (else the caller's keys).
    pub to_scratch: bool,
    /// The last launch: it decodes the keys.
    pub last: bool,
}

/// What a launch of the sort does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Sort each tile (and encode the keys).
    SortTiles,
    /// Merge pairs of sorted runs of `width` keys (partition, then merge).
    Merge {
        /// Run width, a multiple of the tile sort's tile (and so of the merge's).
        width: u64,
    },
}

impl Pass {
    /// Length of the sorted runs the launch starts from: 1 for the tile sort (every key is a
    /// run of one), `width` for a merge pass, which doubles it.
    ///
    /// ```
    /// use kernels_gpu::merge::Pass;
    /// assert_eq!(Pass::SortTiles.runs_in(), 1);
    /// assert_eq!(Pass::Merge { width: 4096 }.runs_in(), 4096);
    /// ```
    pub fn runs_in(&self) -> u64 {
        match *self {
            Pass::SortTiles => 1,
            Pass::Merge { width } => width,
        }
    }
}

/// The launches that finish sorting `n > 0` keys with tiles of `tile` keys when each aligned
/// run of `sorted` keys is sorted already (`sorted = 1`: none is; otherwise a power of two
/// multiple of `tile`): the steps of the whole sort whose input runs are at least that long.
///
/// The whole sort (`sorted = 1`) is the tile sort, then merge passes that alternate between
/// the caller's buffer and the scratch buffer, starting where [`tile_sort_to_scratch`] says so
/// that the last pass lands in the caller's buffer (no copy). The buffers of every step are
/// those of the whole sort, so runs sorted beforehand must lie where the whole sort would have
/// left them: in the scratch buffer exactly when the first of these steps reads from it
/// ([`chunk_schedule`] puts them there).
///
/// ```
/// use kernels_gpu::merge::{Pass, schedule};
///
/// // 5 tiles of 4 keys: the tile sort, then merge passes over runs of 4, 8 and 16.
/// let all: Vec<_> = schedule(20, 4, 1).map(|s| s.pass).collect();
/// assert_eq!(all[0], Pass::SortTiles);
/// assert_eq!(all[3], Pass::Merge { width: 16 });
/// // Runs of 8 sorted already: the last two passes, from the caller's buffer to the scratch
/// // and back.
/// let rest: Vec<_> = schedule(20, 4, 8).collect();
/// assert_eq!(rest.len(), 2);
/// assert_eq!(rest[0].pass, Pass::Merge { width: 8 });
/// assert!(!rest[0].from_scratch && rest[0].to_scratch);
/// assert!(rest[1].from_scratch && !rest[1].to_scratch && rest[1].last);
/// ```
pub fn schedule(n: u64, tile: u64, sorted: u64) -> impl Iterator<Item = Step> {
    debug_assert!(
        sorted <= 1 || (sorted.is_multiple_of(tile) && (sorted / tile).is_power_of_two()),
        "runs of {sorted} keys with tiles of {tile}"
    );
    let passes = merge_passes(n, tile);
    let first_to_scratch = tile_sort_to_scratch(n, tile);
    (0..=passes)
        .map(move |p| {
            // After pass p the data is in scratch iff (first_to_scratch xor p odd).
            let to_scratch = first_to_scratch ^ (p % 2 == 1);
            Step {
                pass: if p == 0 {
                    Pass::SortTiles
                } else {
                    Pass::Merge {
                        width: tile << (p - 1),
                    }
                },
                from_scratch: p > 0 && !to_scratch,
                to_scratch,
                last: p == passes,
            }
        })
        .skip_while(move |step| step.pass.runs_in() < sorted)
}

/// The first steps of the sort of `n > 0` keys, those that sort each aligned chunk of `chunk`
/// keys (a power of two multiple of `tile`) as one run: the tile sort and the merge passes
/// over runs shorter than `chunk`. Launched on one chunk at a time (its part of the keys,
/// values, scratch and splits, with the chunk's length as `n`), they do to it exactly what the
/// whole sort's passes do, in the same buffers; `schedule(n, tile, chunk)` then finishes the
/// sort. Every chunk gets the same steps: a short last chunk is merely copied from one buffer
/// to the other by the passes whose runs are at least as long as it, so that it ends where the others
/// do.
///
/// ```
/// use kernels_gpu::merge::{chunk_schedule, schedule};
///
/// let (n, tile, chunk) = (100, 4, 16);
/// let steps: Vec<_> = chunk_schedule(n, tile, chunk).chain(schedule(n, tile, chunk)).collect();
/// assert!(steps.into_iter().eq(schedule(n, tile, 1)));
/// assert_eq!(chunk_schedule(n, tile, chunk).count(), 3); // tile sort, runs of 4 and 8
/// ```
pub fn chunk_schedule(n: u64, tile: u64, chunk: u64) -> impl Iterator<Item = Step> {
    schedule(n, tile, 1).take_while(move |step| step.pass.runs_in() < chunk)
}

/// How a merge launch pairs sorted runs: a pass of the sort, or one merge of two runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// A pass of the sort: runs `[2jw, 2jw + w)` and `[2jw + w, 2jw + 2w)`, clipped to `n`
    /// (`w`, the width, a multiple of the output tile).
    Pass {
        /// Run width.
        width: u64,
    },
    /// Two runs of any lengths: A = `[0, a_len)`, B = `[a_len, n)`.
    Two {
        /// Length of A.
        a_len: u64,
    },
}

impl Pairing {
    /// The pair of runs whose merge covers output position `pos < n`.
    #[inline(always)]
    pub fn runs_at(self, pos: u64, n: u64) -> Runs {
        match self {
            Pairing::Pass { width } => Runs::at(pos, n, width),
            Pairing::Two { a_len } => Runs {
                a: 0,
                b: a_len,
                end: n,
            },
        }
    }
}

/// The pair of runs of a merge pass that output position `pos` lies in: A = `a .. b`,
/// B = `b .. end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runs {
    /// First key of A (and first output position of the pair).
    pub a: u64,
    /// First key of B, one past A's last.
    pub b: u64,
    /// One past B's last key.
    pub end: u64,
}

impl Runs {
    /// The runs of width `width` whose merge covers output position `pos < n`.
    #[inline(always)]
    pub fn at(pos: u64, n: u64, width: u64) -> Runs {
        // Widths are powers of two but for the stable sort's tiles of 8704 keys: a mask
        // instead of a 64-bit division (a few dozen instructions per thread on the GPU).
        let pair = 2 * width;
        let a = if pair.is_power_of_two() {
            pos & !(pair - 1)
        } else {
            pos / pair * pair
        };
        let b = (a + width).min(n);
        let end = (b + width).min(n);
        Runs { a, b, end }
    }
}

/// The merge-path split at the start of output tile `k` of a merge launch: the global index of
/// the first key of A that the tile takes (B's follows from it, see [`TileRanges::new`]).
/// `key(i)` reads key `i` of the whole array; `search` runs the search ([`merge_path_search`]).
///
/// `k * tile < n`; a pass's width is a multiple of `tile`.
#[inline(always)]
pub fn partition<K: PartialOrd>(
    k: u64,
    n: u64,
    pairing: Pairing,
    tile: u64,
    key: impl Fn(u64) -> K,
    search: &impl Search,
) -> u64 {
    let pos = k * tile;
    let runs = pairing.runs_at(pos, n);
    let diag = pos - runs.a;
    let split = merge_path_search(
        diag,
        diagonal_range(diag, runs.b - runs.a, runs.end - runs.b),
        |i| key(runs.a + i),
        |j| key(runs.b + j),
        search,
    );
    runs.a + split
}

/// [`partition`] for a pass of the sort (`Pairing::Pass { width }`), helped by the *edges* of
/// the step before it: the tile sort and every merge pass record the first and the last key of
/// each output tile of `tile` keys (`first(t)`, `last(t)`: keys `t·tile` and
/// `min((t + 1)·tile, n) − 1`).
///
/// The split of a tile's diagonal (a multiple of `tile`, as the runs start at multiples of
/// `tile`) is found in two searches: over the points `j·tile` first, whose two keys are edges
/// (A's key `j·tile` starts a tile of A, B's key `diag − 1 − j·tile` ends a whole tile of B), a
/// few KB that the previous step just wrote and the L2 cache still holds; then among the at
/// most `tile` points between two of those, in device memory. A run of 2^24 keys costs three
/// rounds of reads from device memory instead of five, about a quarter of their sectors, the
/// last two rounds nearly coalesced (docs/decisions.md, "Merge partition").
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn partition_pass<K: PartialOrd>(
    k: u64,
    n: u64,
    width: u64,
    tile: u64,
    key: impl Fn(u64) -> K,
    first: impl Fn(u64) -> K,
    last: impl Fn(u64) -> K,
    (over_edges, over_keys): (&impl Search, &impl Search),
) -> u64 {
    let pos = k * tile;
    let runs = Runs::at(pos, n, width);
    let diag = pos - runs.a;
    let (lo, hi) = diagonal_range(diag, runs.b - runs.a, runs.end - runs.b);
    let (a_tile, b_tile, q) = (runs.a / tile, runs.b / tile, diag / tile);
    // Points j·tile in lo .. hi: j in j_lo .. j_hi. For those, j < q and B's tile q − j − 1 is
    // whole (its end, (q − j)·tile, is at most B's length since j·tile ≥ lo).
    let (j_lo, j_hi) = (lo.div_ceil(tile), hi.div_ceil(tile));
    let j = over_edges.first_true(j_lo, j_hi, |j| last(b_tile + q - j - 1) < first(a_tile + j));
    // The split lies after the last point where the predicate fails and at or before the first
    // where it holds.
    let fine_lo = if j > j_lo { (j - 1) * tile + 1 } else { lo };
    let fine_hi = if j < j_hi { j * tile } else { hi };
    let split = merge_path_search(
        diag,
        (fine_lo, fine_hi),
        |i| key(runs.a + i),
        |j| key(runs.b + j),
        over_keys,
    );
    runs.a + split
}

/// The slices of A and B that output tile `k` of a merge pass merges; its output starts at
/// `k * tile` and holds `(a_end − a_begin) + (b_end − b_begin)` keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileRanges {
    /// First key of A the tile takes.
    pub a_begin: u64,
    /// One past A's last.
    pub a_end: u64,
    /// First key of B the tile takes.
    pub b_begin: u64,
    /// One past B's last.
    pub b_end: u64,
}

impl TileRanges {
    /// Tile `k` of the launch, from the splits [`partition`] gave for tiles `k` (`start`) and
    /// `k + 1` (`next`; read only when tile `k` ends inside its pair of runs, i.e. when tile
    /// `k + 1` exists and lies in the same pair).
    #[inline(always)]
    pub fn new(
        k: u64,
        n: u64,
        pairing: Pairing,
        tile: u64,
        start: u64,
        next: impl Fn() -> u64,
    ) -> Self {
        let out_begin = k * tile;
        let out_end = (out_begin + tile).min(n);
        let runs = pairing.runs_at(out_begin, n);
        let (a_end, b_end) = if out_end == runs.end {
            (runs.b, runs.end)
        } else {
            let a_end = next();
            (a_end, runs.b + (out_end - runs.a) - (a_end - runs.a))
        };
        TileRanges {
            a_begin: start,
            a_end,
            b_begin: runs.b + (out_begin - runs.a) - (start - runs.a),
            b_end,
        }
    }

    /// Keys in the tile.
    #[inline(always)]
    pub fn len(&self) -> u64 {
        (self.a_end - self.a_begin) + (self.b_end - self.b_begin)
    }

    /// Whether the tile is empty (never, for a tile of a pass).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted(mut v: Vec<u8>) -> Vec<u8> {
        v.sort();
        v
    }

    /// Stable merge by the textbook loop, of (key, origin) pairs.
    fn reference_merge(a: &[(u8, u32)], b: &[(u8, u32)]) -> Vec<(u8, u32)> {
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < a.len() || j < b.len() {
            if j == b.len() || (i < a.len() && a[i].0 <= b[j].0) {
                out.push(a[i]);
                i += 1;
            } else {
                out.push(b[j]);
                j += 1;
            }
        }
        out
    }

    proptest! {
        #[test]
        fn the_warp_search_finds_the_split_in_long_runs(
            a in prop::collection::vec(0u16..40, 0..3000).prop_map(|mut v| { v.sort(); v }),
            b in prop::collection::vec(0u16..40, 0..3000).prop_map(|mut v| { v.sort(); v }),
            d in 0usize..6001,
        ) {
            // Ranges of thousands of points: several vote rounds, many ties.
            let diag = d.min(a.len() + b.len()) as u64;
            let (al, bl) = (a.len() as u64, b.len() as u64);
            let binary = merge_path(diag, al, bl, |i| a[i as usize], |j| b[j as usize]);
            let warp = merge_path_search(diag, diagonal_range(diag, al, bl), |i| a[i as usize],
                |j| b[j as usize], &AllLanes);
            prop_assert_eq!(warp, binary);
        }
    }

    proptest! {
        #[test]
        fn split_is_a_valid_point_on_its_diagonal(
            a in prop::collection::vec(0u8..6, 0..40).prop_map(sorted),
            b in prop::collection::vec(0u8..6, 0..40).prop_map(sorted),
            d in 0usize..81,
        ) {
            let diag = d.min(a.len() + b.len());
            let i = merge_path(diag as u64, a.len() as u64, b.len() as u64,
                |i| a[i as usize], |j| b[j as usize]) as usize;
            let i32 = merge_path_32(diag as u32, a.len() as u32, b.len() as u32,
                |i| a[i as usize], |j| b[j as usize]) as usize;
            prop_assert_eq!(i, i32);
            let range = diagonal_range(diag as u64, a.len() as u64, b.len() as u64);
            let warp = merge_path_search(diag as u64, range, |i| a[i as usize], |j| b[j as usize],
                &AllLanes) as usize;
            prop_assert_eq!(warp, i);
            prop_assert!(i <= a.len() && diag - i <= b.len());
            let j = diag - i;
            if i > 0 && j < b.len() {
                prop_assert!(a[i - 1] <= b[j], "A's last taken must not exceed B's next");
            }
            if j > 0 && i < a.len() {
                prop_assert!(b[j - 1] < a[i], "B's last taken must be below A's next");
            }
        }

        #[test]
        fn tiles_cover_the_output_once_and_merge_stably(
            keys in prop::collection::vec(0u8..5, 1..300),
            tile_log2 in 0u32..4,
            width_factor_log2 in 0u32..4,
        ) {
            let tile = 1u64 << tile_log2;
            let width = tile << width_factor_log2;
            let n = keys.len() as u64;
            // Runs of `width` sorted stably, tagged with their index.
            let mut data: Vec<(u8, u32)> =
                keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
            for run in data.chunks_mut(width as usize) {
                run.sort_by_key(|p| p.0);
            }
            let tiles = n.div_ceil(tile);
            let pairing = Pairing::Pass { width };
            let parts: Vec<u64> =
                (0..tiles).map(|k| partition(k, n, pairing, tile, |i| data[i as usize].0, &AllLanes)).collect();
            let mut out = Vec::new();
            let mut covered = vec![0u32; n as usize];
            for k in 0..tiles {
                let r = TileRanges::new(k, n, pairing, tile, parts[k as usize],
                    || parts[k as usize + 1]);
                prop_assert_eq!(r.len(), tile.min(n - k * tile));
                for i in (r.a_begin..r.a_end).chain(r.b_begin..r.b_end) {
                    covered[i as usize] += 1;
                }
                out.extend(reference_merge(
                    &data[r.a_begin as usize..r.a_end as usize],
                    &data[r.b_begin as usize..r.b_end as usize],
                ));
            }
            prop_assert!(covered.iter().all(|&c| c == 1), "every input key read once");
            let mut expected = Vec::new();
            for pair in data.chunks(2 * width as usize) {
                let (a, b) = pair.split_at(pair.len().min(width as usize));
                expected.extend(reference_merge(a, b));
            }
            prop_assert_eq!(out, expected);
        }
    }

    proptest! {
        #[test]
        fn edge_guided_splits_equal_the_plain_search(
            keys in prop::collection::vec(0u16..300, 1..4000),
            distinct in 1u16..300,
            tile_log2 in 0u32..7,
            width_factor_log2 in 0u32..6,
        ) {
            // Runs of `width` keys sorted; the edges of tiles of `tile` keys as the previous
            // step records them; every split of the pass, both ways, the guided one by a warp
            // and by one thread (several probes per round over the edges, one over the keys).
            let tile = 1u64 << tile_log2;
            let width = tile << width_factor_log2;
            let n = keys.len() as u64;
            let mut data: Vec<u16> = keys.iter().map(|&k| k % distinct).collect();
            for run in data.chunks_mut(width as usize) {
                run.sort();
            }
            let first = |t: u64| data[(t * tile) as usize];
            let last = |t: u64| data[(((t + 1) * tile).min(n) - 1) as usize];
            let key = |i: u64| data[i as usize];
            for k in 0..n.div_ceil(tile) {
                let plain = partition(k, n, Pairing::Pass { width }, tile, key, &AllLanes);
                let warp = (&AllLanes, &AllLanes);
                let guided = partition_pass(k, n, width, tile, key, first, last, warp);
                prop_assert_eq!(guided, plain, "tile {}", k);
                let alone = (&Probes::<7>, &Probes::<1>);
                let guided = partition_pass(k, n, width, tile, key, first, last, alone);
                prop_assert_eq!(guided, plain, "tile {} by one thread", k);
            }
        }
    }

    proptest! {
        #[test]
        fn two_runs_of_any_lengths_merge_stably_tile_by_tile(
            a in prop::collection::vec(0u8..5, 0..200).prop_map(sorted),
            b in prop::collection::vec(0u8..5, 0..200).prop_map(sorted),
            tile_log2 in 0u32..6,
        ) {
            let tile = 1u64 << tile_log2;
            let tag = |run: &[u8], base: u32| -> Vec<(u8, u32)> {
                run.iter().enumerate().map(|(i, &k)| (k, base + i as u32)).collect()
            };
            let data: Vec<(u8, u32)> = tag(&a, 0).into_iter().chain(tag(&b, 1000)).collect();
            let n = data.len() as u64;
            let pairing = Pairing::Two { a_len: a.len() as u64 };
            let tiles = n.div_ceil(tile);
            let parts: Vec<u64> =
                (0..tiles).map(|k| partition(k, n, pairing, tile, |i| data[i as usize].0, &AllLanes)).collect();
            let mut out = Vec::new();
            for k in 0..tiles {
                let r = TileRanges::new(k, n, pairing, tile, parts[k as usize],
                    || parts[k as usize + 1]);
                prop_assert_eq!(r.len(), tile.min(n - k * tile));
                prop_assert!(r.a_end <= a.len() as u64 && r.b_begin >= a.len() as u64);
                out.extend(reference_merge(
                    &data[r.a_begin as usize..r.a_end as usize],
                    &data[r.b_begin as usize..r.b_end as usize],
                ));
            }
            let (da, db) = data.split_at(a.len());
            prop_assert_eq!(out, reference_merge(da, db));
        }
    }

    #[test]
    fn chunk_steps_then_the_rest_are_the_whole_schedule() {
        for tile in [2u64, 4, 2048] {
            for n in [
                1u64,
                2,
                3,
                4,
                5,
                17,
                100,
                1000,
                4096,
                4097,
                1 << 22,
                (3 << 22) + 12345,
            ] {
                let whole: Vec<Step> = schedule(n, tile, 1).collect();
                assert!(schedule(n, tile, 0).eq(whole.iter().copied()));
                for chunk_log2 in 0..8 {
                    let chunk = tile << chunk_log2;
                    let first: Vec<Step> = chunk_schedule(n, tile, chunk).collect();
                    let rest: Vec<Step> = schedule(n, tile, chunk).collect();
                    let what = format!("n = {n}, tile = {tile}, chunk = {chunk}");
                    assert_eq!([&first[..], &rest[..]].concat(), whole, "{what}");
                    // The same steps for every chunk: the tile sort and one pass per doubling.
                    assert_eq!(first.len() as u32, (chunk_log2 + 1).min(whole.len() as u32));
                    assert_eq!(first[0].pass, Pass::SortTiles, "{what}");
                    assert!(rest.iter().all(|s| s.pass.runs_in() >= chunk), "{what}");
                    // Passes over the whole array remain exactly when it is more than a chunk.
                    assert_eq!(rest.is_empty(), n <= chunk, "{what}");
                    // Where the chunks' steps leave the runs is where the rest reads them.
                    if let (Some(a), Some(b)) = (first.last(), rest.first()) {
                        assert_eq!(a.to_scratch, b.from_scratch, "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn pass_counts_and_first_destination() {
        assert_eq!(merge_passes(0, 4), 0);
        assert_eq!(merge_passes(4, 4), 0);
        assert_eq!(merge_passes(5, 4), 1);
        assert_eq!(merge_passes(16, 4), 2);
        assert_eq!(merge_passes(17, 4), 3);
        assert!(tile_sort_to_scratch(5, 4));
        assert!(!tile_sort_to_scratch(16, 4));
        for n in 1..100 {
            let steps: Vec<Step> = schedule(n, 4, 1).collect();
            assert_eq!(steps.len() as u32, merge_passes(n, 4) + 1);
            assert_eq!(steps[0].pass, Pass::SortTiles);
            assert!(!steps[0].from_scratch);
            let last = steps.last().unwrap();
            assert!(last.last && !last.to_scratch, "n = {n}: {steps:?}");
            for w in steps.windows(2) {
                assert_eq!(w[1].from_scratch, w[0].to_scratch);
                assert_ne!(w[1].from_scratch, w[1].to_scratch);
            }
        }
    }
}
