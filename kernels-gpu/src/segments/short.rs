//! The segmented sort's register sort of short segments ([`crate::segments`], [`is_short`]):
//! every thread holds 32 consecutive positions of its block's tile in registers, 2^(5 − p) whole
//! padded rows of 2^p positions (or half a row of 64), and runs stages 1 ..= p of the mirrored
//! bitonic network on them. Every step below bit 5 is a compare-exchange of two registers named
//! by constants; rows of 64 take their flip and their step on bit 5 by a shuffle with the
//! neighbouring lane. Shared memory only stages the loads and stores, so that a warp reads and
//! writes whole rows at a time; there is no barrier inside the network.
//!
//! The elements are those of the block sort ([`Element`]): keys alone, or keys with their
//! positions, from which indices are written and values gathered. Values move as 4-byte words,
//! one word of every value per pass, so that one kernel per element serves values of every width.
//!
//! [`is_short`]: crate::segments::is_short

use crate::block::{SharedMem, Team};
use crate::keys::KeyBits;
use crate::segments::block::{Element, Segments, keep, order};
use crate::segments::short_slot;
use crate::tuning::{SHORT_SEGMENTS_MAX_ROW_LOG2, SHORT_SEGMENTS_RUN_LOG2};

/// Positions a thread holds in registers.
pub const RUN: usize = 1 << SHORT_SEGMENTS_RUN_LOG2;

/// Calls `f(r)` for every register `r < RUN`, written out, so that registers are addressed by
/// constants (a register array indexed in a loop moves to local memory).
#[inline(always)]
fn each_register(mut f: impl FnMut(usize)) {
    macro_rules! calls {
        ($($r:literal)*) => { $( f($r); )* };
    }
    calls!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

const _: () = assert!(RUN == 32, "each_register calls 32 registers");

/// Reverses `run` if `reverse`.
#[inline(always)]
fn reverse_if<E: Copy>(run: &mut [E; RUN], reverse: bool) {
    // Swaps under a branch: selects between two registers of wide elements become loads from
    // a selected address, which would move the run to local memory.
    if reverse {
        each_register(|r| {
            if r < RUN / 2 {
                run.swap(r, RUN - 1 - r);
            }
        });
    }
}

/// Stages 1 ..= `p` (`p ≤ 6`) of the mirrored bitonic network over each thread's run of 32
/// consecutive positions: after stage `p` every aligned 2^`p` positions are sorted ascending. A
/// plain function of the runs, so that tests run it on the CPU as the GPU does.
#[inline(always)]
pub fn network<E: PartialOrd + Copy, T: Team<E, RUN>>(team: &mut T, p: u32) {
    macro_rules! stages {
        ($($k:literal)*) => {$(
            if $k <= p {
                stage::<E, T, $k>(team);
            }
        )*};
    }
    const _: () = assert!(SHORT_SEGMENTS_MAX_ROW_LOG2 == 6, "stages 1 ..= 6 below");
    stages!(1 2 3 4 5 6);
}

/// Stage `K`: its flip (position i with i ^ (2^K − 1)), then steps on bits K − 2 ..= 0.
#[inline(always)]
fn stage<E: PartialOrd + Copy, T: Team<E, RUN>, const K: u32>(team: &mut T) {
    if K <= SHORT_SEGMENTS_RUN_LOG2 {
        team.each(|_, run, _| {
            let d = (1usize << K) - 1;
            each_register(|r| {
                if r < r ^ d {
                    order(run, r, r ^ d);
                }
            });
            register_steps::<E, K>(run);
        });
    } else {
        // Rows of 64: position 32t + r meets 32(t ^ 1) + 31 − r in the flip, 32(t ^ 1) + r on
        // bit 5; the even lane holds the lower positions and keeps the smaller keys. The odd
        // lane holds its run reversed for the flip, so that both lanes compare register r with
        // register r: each comparison then needs only the shuffle before it, not all 32.
        team.each(|t, run, _| reverse_if(run, t & 1 == 1));
        team.exchange(1, |t, run, theirs| {
            each_register(|r| keep(&mut run[r], theirs[r], t & 1 == 0));
        });
        team.each(|t, run, _| reverse_if(run, t & 1 == 1));
        team.exchange(1, |t, run, theirs| {
            each_register(|r| keep(&mut run[r], theirs[r], t & 1 == 0));
        });
        team.each(|_, run, _| register_steps::<E, K>(run));
    }
}

/// The steps of stage `K` on register bits `min(K − 2, 4) ..= 0`, highest first.
#[inline(always)]
fn register_steps<E: PartialOrd + Copy, const K: u32>(run: &mut [E; RUN]) {
    macro_rules! steps {
        ($($b:literal)*) => {$(
            if $b + 1 < K {
                let d = 1usize << $b;
                each_register(|r| {
                    if r & d == 0 {
                        order(run, r, r | d);
                    }
                });
            }
        )*};
    }
    const _: () = assert!(SHORT_SEGMENTS_RUN_LOG2 == 5, "register bits 4 ..= 0 below");
    steps!(4 3 2 1 0);
}

/// Where iteration `i` of a thread's loads and stores lies: tile position s = i·threads + t is
/// entry `entry + i·step` of the launch (`step = threads >> p`, `entry = first + (t >> p)`),
/// position `j = t & (2^p − 1)` in it, because `threads` is a multiple of 2^p. `LISTED`: the
/// segments are given by offsets (and a list), else they are rows, whose keys are found by
/// arithmetic alone.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Places<const LISTED: bool> {
    entry: u64,
    step: u64,
    j: u64,
    /// Rows: the first key of entry `entry`'s row, and the keys between the rows of two
    /// iterations.
    begin: u64,
    stride: u64,
}

impl<const LISTED: bool> Places<LISTED> {
    #[inline(always)]
    fn new(threads: u32, block: u64, p: u32, t: u32, row_len: u64) -> Self {
        let step = threads >> p;
        let entry = block * u64::from(step << SHORT_SEGMENTS_RUN_LOG2) + u64::from(t >> p);
        Places {
            entry,
            step: u64::from(step),
            j: u64::from(t & ((1 << p) - 1)),
            begin: entry * row_len,
            stride: u64::from(step) * row_len,
        }
    }

    /// `(first key of the segment, index of the key)` of iteration `i`; `None` past the
    /// segment's end or the launch's entries.
    ///
    /// # Safety
    /// As [`Segments::segment`].
    #[inline(always)]
    unsafe fn at<K, V>(&self, seg: &Segments<K, V>, i: usize) -> Option<(u64, usize)> {
        let e = self.entry + i as u64 * self.step;
        if LISTED {
            // SAFETY: the caller's contract.
            unsafe { seg.position(e, self.j) }
        } else {
            let begin = self.begin + i as u64 * self.stride;
            (e < seg.count && self.j < seg.row_len).then_some((begin, (begin + self.j) as usize))
        }
    }
}

/// Sorts block `block`'s segments of `seg` (entries `block·short_rows_per_block(p) ..`,
/// `p = seg.row_log2 ≤ 6`): loads them through shared memory (thread t takes tile positions
/// i·`threads` + t), sorts each thread's run of 32 positions in registers, and stores them back
/// the way they came, with the segments' positions (`seg.indices`) and their values
/// (`seg.values`: `value_words` 4-byte words per value, none if 0) permuted alongside. `held`
/// keeps each thread's words of values across a barrier: one run on the GPU (the calling
/// thread's), one per thread on the CPU.
///
/// # Safety
/// The team has `threads` threads, a multiple of 32 and of 2^`seg.row_log2`, and
/// `short_shared_bytes(size_of::<E>())` bytes of shared memory; every entry's segment has at
/// most 2^`seg.row_log2` ≤ 2^6 keys, lies in `keys` (and `values`, `indices` where not null) and
/// no other block's entries overlap it; rows (`seg.offsets` null) have no list.
#[inline(always)]
pub unsafe fn sort<E, T>(
    team: &mut T,
    seg: &Segments<E::Key, u32>,
    threads: u32,
    block: u64,
    value_words: u32,
    held: &mut [[u32; RUN]],
) where
    E: Element,
    T: Team<E, RUN>,
{
    // The keys of rows are found by arithmetic alone, those of other segments through the
    // offsets: two copies of the loads and of the stores (not of the network), so that neither
    // tests which at every key.
    let rows = seg.offsets.is_null();
    if rows {
        // SAFETY: the caller's contract.
        unsafe { load::<E, T, false>(team, seg, threads, block) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { load::<E, T, true>(team, seg, threads, block) }
    }
    team.sync();
    team.each(|t, run, shared| {
        each_register(|r| {
            // SAFETY: positions below the tile.
            run[r] = unsafe { shared.read(t, short_slot(t * RUN as u32 + r as u32)) };
        })
    });
    network(team, seg.row_log2);
    // Each thread writes back the slots it read, so one barrier before the stores suffices.
    team.each(|t, run, shared| {
        each_register(|r| {
            // SAFETY: as above.
            unsafe { shared.write(t, short_slot(t * RUN as u32 + r as u32), run[r]) };
        })
    });
    team.sync();
    if rows {
        // SAFETY: the caller's contract.
        unsafe { store::<E, T, false>(team, seg, threads, block, value_words, held) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { store::<E, T, true>(team, seg, threads, block, value_words, held) }
    }
}

/// Global memory to shared memory: tile position i·`threads` + t of thread t, encoded, with its
/// position in its segment; +∞ past a segment's end.
///
/// # Safety
/// As [`sort`].
#[inline(always)]
unsafe fn load<E, T, const LISTED: bool>(
    team: &mut T,
    seg: &Segments<E::Key, u32>,
    threads: u32,
    block: u64,
) where
    E: Element,
    T: Team<E, RUN>,
{
    let p = seg.row_log2;
    // Positions past a segment's end hold the key that the map encodes to +∞.
    let padding = <E::Key as KeyBits>::INFINITY.decode(seg.map);
    team.each(|t, run, shared| {
        let at = Places::<LISTED>::new(threads, block, p, t, seg.row_len);
        let j = at.j as u32;
        // Every load is issued before any key is used, so that all are in flight together.
        each_register(|i| {
            // SAFETY: the contract: the entry's segment lies in `keys`.
            let key = match unsafe { at.at(seg, i) } {
                Some((_, k)) => unsafe { *seg.keys.add(k) },
                None => padding,
            };
            run[i] = E::new(key, j);
        });
        each_register(|i| {
            let element = E::new(run[i].key().encode(seg.map), j);
            // SAFETY: positions below the tile.
            unsafe { shared.write(t, short_slot(i as u32 * threads + t), element) };
        });
    });
}

/// Shared memory to global memory, the way [`load`] came: keys decoded, positions in
/// `seg.indices`, values gathered by position in passes of one word each. The places are
/// computed afresh (`opaque`): kept from the loads, they would hold registers through the
/// network.
///
/// # Safety
/// As [`sort`].
#[inline(always)]
unsafe fn store<E, T, const LISTED: bool>(
    team: &mut T,
    seg: &Segments<E::Key, u32>,
    threads: u32,
    block: u64,
    value_words: u32,
    held: &mut [[u32; RUN]],
) where
    E: Element,
    T: Team<E, RUN>,
{
    let places = |t: u32| Places::<LISTED>::new(threads, block, seg.row_log2, t, seg.row_len);
    let slot = |i: usize, t: u32| short_slot(i as u32 * threads + t);
    let gather = E::INDEXED && !seg.values.is_null() && value_words > 0;
    let words = value_words as usize;
    let slots = held.len();
    team.each(|t, run, shared| {
        let mine = &mut held[t as usize % slots];
        let fresh = T::opaque(t);
        let at = places(fresh);
        each_register(|i| {
            // SAFETY: positions below the tile.
            run[i] = unsafe { shared.read(t, slot(i, fresh)) };
        });
        each_register(|i| {
            // SAFETY: the contract, as for the loads.
            unsafe {
                if let Some((begin, k)) = at.at(seg, i) {
                    let element = run[i];
                    *seg.keys.add(k) = element.key().decode(seg.map);
                    if E::INDEXED && !seg.indices.is_null() {
                        *seg.indices.add(k) = element.index();
                    }
                    if gather {
                        let from = begin as usize + element.index() as usize;
                        mine[i] = *seg.values.add(from * words);
                    }
                }
            }
        })
    });
    if !gather {
        return;
    }
    // One word of every value per pass: all of the block's reads of word w before any write of
    // it (a barrier), so values sort in place; a pass writes only word w, which later passes do
    // not read.
    for w in 0..words {
        if w > 0 {
            team.each(|t, _, shared| {
                let mine = &mut held[t as usize % slots];
                let fresh = T::opaque(t);
                let at = places(fresh);
                each_register(|i| {
                    // SAFETY: as above.
                    unsafe {
                        if let Some((begin, _)) = at.at(seg, i) {
                            let index = shared.read(t, slot(i, fresh)).index();
                            let from = begin as usize + index as usize;
                            mine[i] = *seg.values.add(from * words + w);
                        }
                    }
                })
            });
        }
        team.sync();
        team.each(|t, _, _| {
            let mine = &held[t as usize % slots];
            let at = places(T::opaque(t));
            each_register(|i| {
                // SAFETY: as above.
                unsafe {
                    if let Some((_, k)) = at.at(seg, i) {
                        *seg.values.add(k * words + w) = mine[i];
                    }
                }
            })
        });
    }
}

/// Runs the launch `seg` block by block on the CPU, as the kernels would (a [`CpuTeam`] of
/// [`SHORT_SEGMENTS_THREADS`] threads per block, which panics on a shared-memory race).
///
/// # Safety
/// As [`sort`], for every block of the launch.
///
/// [`CpuTeam`]: crate::block::CpuTeam
/// [`SHORT_SEGMENTS_THREADS`]: crate::tuning::SHORT_SEGMENTS_THREADS
#[cfg(not(target_arch = "nvptx64"))]
pub unsafe fn sort_like_the_gpu<E: Element>(seg: &Segments<E::Key, u32>, value_words: u32) {
    use crate::block::CpuTeam;
    use crate::segments::{short_blocks, short_shared_bytes};
    use crate::tuning::SHORT_SEGMENTS_THREADS as THREADS;
    let bytes = size_of::<E>() as u32;
    for block in 0..short_blocks(seg.count, seg.row_log2) {
        let mut team = CpuTeam::<E, RUN>::new(THREADS, short_shared_bytes(bytes) / bytes);
        let mut held = vec![[0u32; RUN]; THREADS as usize];
        // SAFETY: the caller's contract.
        unsafe { sort(&mut team, seg, THREADS, block, value_words, &mut held) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{CpuTeam, xorshift};
    use crate::keys::{KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, key_map};
    use crate::segments::block::{Indexed32, Indexed64};
    use crate::segments::{is_short, row_log2, short_rows_per_block};
    use crate::tuning::SHORT_SEGMENTS_THREADS as THREADS;
    use core::cmp::Ordering;
    use core::fmt::Debug;
    use core::ptr::{null, null_mut};

    #[test]
    fn the_network_sorts_every_aligned_row_of_the_runs() {
        let mut next = xorshift(17);
        for p in 0..=SHORT_SEGMENTS_MAX_ROW_LOG2 {
            for distinct in [3, 1 << 20] {
                let mut team = CpuTeam::<u64, RUN>::new(THREADS, 0);
                let mut before = Vec::new();
                team.each(|_, run, _| {
                    run.iter_mut().for_each(|k| *k = next() % distinct);
                    before.extend_from_slice(run);
                });
                network(&mut team, p);
                let mut after = Vec::new();
                team.each(|_, run, _| after.extend_from_slice(run));
                for (got, input) in after.chunks(1 << p).zip(before.chunks(1 << p)) {
                    let mut want = input.to_vec();
                    want.sort_unstable();
                    assert_eq!(got, want, "p {p}");
                }
                // Rows of 64 take two shuffles with the neighbouring lane, shorter rows none.
                let shuffles = if p == 6 { vec![1, 1] } else { vec![] };
                assert_eq!(team.shuffles, shuffles, "p {p}");
            }
        }
    }

    #[test]
    fn places_are_the_tile_positions_of_the_iterations() {
        for p in 0..=SHORT_SEGMENTS_MAX_ROW_LOG2 {
            for block in [0u64, 1, 5] {
                let first = block * short_rows_per_block(p);
                for t in 0..THREADS {
                    let at = Places::<false>::new(THREADS, block, p, t, 7);
                    for i in 0..RUN as u32 {
                        let s = i * THREADS + t;
                        let e = at.entry + u64::from(i) * at.step;
                        assert_eq!(e, first + u64::from(s >> p), "p {p}, t {t}, i {i}");
                        assert_eq!(at.j, u64::from(s & ((1 << p) - 1)));
                        assert_eq!(at.begin + u64::from(i) * at.stride, e * 7);
                    }
                }
            }
        }
    }

    /// A launch of the register sort, as the host would make it: rows of `row_len` (`offsets`
    /// empty), or the segments of `offsets` listed in `list`, all padded to 2^`p`.
    struct Launch<'a> {
        offsets: &'a [u64],
        row_len: u64,
        list: &'a [u32],
        p: u32,
        map: u32,
    }

    impl Launch<'_> {
        /// `(first key, end)` of each entry.
        fn entries(&self, n: usize) -> Vec<(usize, usize)> {
            if self.offsets.is_empty() {
                let len = self.row_len as usize;
                (0..n / len).map(|r| (r * len, (r + 1) * len)).collect()
            } else {
                let o = |i: u32| self.offsets[i as usize] as usize;
                self.list.iter().map(|&id| (o(id), o(id + 1))).collect()
            }
        }
    }

    /// Sorts `keys` as the launch says on the CPU like the GPU, with indices and values of
    /// `words` words when `E` carries positions, and checks every listed segment against std's
    /// stable sort by `cmp` (the keys' own order, which the launch's map must give), every other
    /// key, index and value unchanged.
    fn check<E: Element>(
        keys: &[E::Key],
        launch: &Launch<'_>,
        words: u32,
        cmp: impl Fn(&E::Key, &E::Key) -> Ordering,
    ) where
        E::Key: Debug + PartialEq,
    {
        let n = keys.len();
        let w = words as usize;
        let entries = launch.entries(n);
        let original_values: Vec<u32> = (0..(n * w) as u32).map(|i| i.wrapping_mul(7)).collect();
        let (mut got, mut values, mut indices) =
            (keys.to_vec(), original_values.clone(), vec![u32::MAX; n]);
        let seg = Segments::<E::Key, u32> {
            keys: got.as_mut_ptr(),
            values: if words > 0 {
                values.as_mut_ptr()
            } else {
                null_mut()
            },
            indices: if E::INDEXED {
                indices.as_mut_ptr()
            } else {
                null_mut()
            },
            count: entries.len() as u64,
            row_len: launch.row_len,
            offsets: if launch.offsets.is_empty() {
                null()
            } else {
                launch.offsets.as_ptr()
            },
            list: if launch.offsets.is_empty() {
                null()
            } else {
                launch.list.as_ptr()
            },
            row_log2: launch.p,
            map: launch.map,
        };
        unsafe { sort_like_the_gpu::<E>(&seg, words) };
        let (mut want, mut want_values, mut want_indices) =
            (keys.to_vec(), original_values.clone(), vec![u32::MAX; n]);
        for &(a, b) in &entries {
            assert!(b - a <= 1 << launch.p);
            let mut perm: Vec<usize> = (0..b - a).collect();
            perm.sort_by(|&x, &y| cmp(&keys[a + x], &keys[a + y]));
            for (j, &from) in perm.iter().enumerate() {
                want[a + j] = keys[a + from];
                want_indices[a + j] = from as u32;
                for k in 0..w {
                    want_values[(a + j) * w + k] = original_values[(a + from) * w + k];
                }
            }
        }
        let what = format!(
            "{} segments of up to 2^{} keys, map {}, {words} words",
            entries.len(),
            launch.p,
            launch.map
        );
        assert_eq!(got, want, "{what}: keys");
        if E::INDEXED {
            assert_eq!(indices, want_indices, "{what}: indices");
            assert_eq!(values, want_values, "{what}: values");
        }
    }

    /// The six key types as the bits of 4- and 8-byte keys: each map with the order it must
    /// give (`total_cmp` for floats, descending reversed).
    type Order<K> = fn(&K, &K) -> Ordering;

    fn orders32() -> [(u32, Order<u32>); 6] {
        [
            (key_map(KIND_UNSIGNED, false), |a, b| a.cmp(b)),
            (key_map(KIND_UNSIGNED, true), |a, b| b.cmp(a)),
            (key_map(KIND_SIGNED, false), |a, b| {
                (*a as i32).cmp(&(*b as i32))
            }),
            (key_map(KIND_SIGNED, true), |a, b| {
                (*b as i32).cmp(&(*a as i32))
            }),
            (key_map(KIND_FLOAT, false), |a, b| {
                f32::from_bits(*a).total_cmp(&f32::from_bits(*b))
            }),
            (key_map(KIND_FLOAT, true), |a, b| {
                f32::from_bits(*b).total_cmp(&f32::from_bits(*a))
            }),
        ]
    }

    fn orders64() -> [(u32, Order<u64>); 6] {
        [
            (key_map(KIND_UNSIGNED, false), |a, b| a.cmp(b)),
            (key_map(KIND_UNSIGNED, true), |a, b| b.cmp(a)),
            (key_map(KIND_SIGNED, false), |a, b| {
                (*a as i64).cmp(&(*b as i64))
            }),
            (key_map(KIND_SIGNED, true), |a, b| {
                (*b as i64).cmp(&(*a as i64))
            }),
            (key_map(KIND_FLOAT, false), |a, b| {
                f64::from_bits(*a).total_cmp(&f64::from_bits(*b))
            }),
            (key_map(KIND_FLOAT, true), |a, b| {
                f64::from_bits(*b).total_cmp(&f64::from_bits(*a))
            }),
        ]
    }

    /// `n` keys of 4 and 8 bytes with many ties, both zeros, NaNs of both signs and infinities
    /// among them (as floats), and the extremes of every integer type.
    fn keys(n: usize, next: &mut impl FnMut() -> u64) -> (Vec<u32>, Vec<u64>) {
        let specials32 = [
            f32::NAN.to_bits(),
            (-f32::NAN).to_bits(),
            0.0f32.to_bits(),
            (-0.0f32).to_bits(),
            f32::INFINITY.to_bits(),
            f32::NEG_INFINITY.to_bits(),
            u32::MAX,
            0,
            i32::MIN as u32,
            i32::MAX as u32,
        ];
        let specials64 = [
            f64::NAN.to_bits(),
            (-f64::NAN).to_bits(),
            0.0f64.to_bits(),
            (-0.0f64).to_bits(),
            f64::INFINITY.to_bits(),
            f64::NEG_INFINITY.to_bits(),
            u64::MAX,
            0,
            i64::MIN as u64,
            i64::MAX as u64,
        ];
        (0..n)
            .map(|_| {
                let x = next();
                match x % 4 {
                    0 => (
                        specials32[(x >> 8) as usize % 10],
                        specials64[(x >> 8) as usize % 10],
                    ),
                    1 => ((x >> 32) as u32 % 5, (x >> 32) % 5),
                    _ => ((x >> 32) as u32, x.rotate_left(17)),
                }
            })
            .unzip()
    }

    #[test]
    fn rows_of_every_short_length_sort_like_std() {
        let mut next = xorshift(29);
        for len in 1u64..=64 {
            let p = row_log2(len);
            assert!(is_short(p));
            // One partial block, or two full blocks and a partial one.
            let rows = if len % 2 == 0 {
                3
            } else {
                2 * short_rows_per_block(p) + len
            };
            let (k32, k64) = keys((rows * len) as usize, &mut next);
            let i = len as usize % 6;
            let (map, cmp) = orders32()[i];
            let launch = Launch {
                offsets: &[],
                row_len: len,
                list: &[],
                p,
                map,
            };
            check::<u32>(&k32, &launch, 0, cmp);
            check::<Indexed32>(&k32, &launch, [0, 1, 2, 4][i % 4], cmp);
            let (map, cmp) = orders64()[(i + 1) % 6];
            let launch = Launch { map, ..launch };
            check::<u64>(&k64, &launch, 0, cmp);
            check::<Indexed64>(&k64, &launch, [1, 2, 4, 0][i % 4], cmp);
        }
    }

    #[test]
    fn every_key_type_and_order_in_rows_of_32_and_64() {
        let mut next = xorshift(31);
        for len in [5u64, 32, 33, 64] {
            let p = row_log2(len);
            let (k32, k64) = keys((len * 150) as usize, &mut next);
            for i in 0..6 {
                let (map, cmp) = orders32()[i];
                let launch = Launch {
                    offsets: &[],
                    row_len: len,
                    list: &[],
                    p,
                    map,
                };
                check::<u32>(&k32, &launch, 0, cmp);
                check::<Indexed32>(&k32, &launch, 1, cmp);
                let (map, cmp) = orders64()[i];
                let launch = Launch { map, ..launch };
                check::<u64>(&k64, &launch, 0, cmp);
                check::<Indexed64>(&k64, &launch, 2, cmp);
            }
        }
    }

    #[test]
    fn listed_segments_of_every_padded_length_sort_and_the_rest_stays() {
        let mut next = xorshift(37);
        // Every length from 0 to past the short path, in a random order, with keys between
        // segments (the offsets skip some).
        let mut lens: Vec<u64> = (0..=70).chain(0..=70).collect();
        for i in (1..lens.len()).rev() {
            lens.swap(i, next() as usize % (i + 1));
        }
        let mut offsets = vec![3u64];
        for &l in &lens {
            let end = offsets.last().unwrap() + l;
            offsets.push(end);
        }
        let n = *offsets.last().unwrap() as usize + 5;
        let (k32, k64) = keys(n, &mut next);
        for p in 0..=SHORT_SEGMENTS_MAX_ROW_LOG2 {
            // The segments of this padded length (those of one key too: an argsort launches
            // them to write their index).
            let list: Vec<u32> = (0..lens.len() as u32)
                .filter(|&i| lens[i as usize] > 0 && row_log2(lens[i as usize]) == p)
                .collect();
            let i = p as usize % 6;
            let (map, cmp) = orders32()[i];
            let launch = Launch {
                offsets: &offsets,
                row_len: 0,
                list: &list,
                p,
                map,
            };
            check::<u32>(&k32, &launch, 0, cmp);
            check::<Indexed32>(&k32, &launch, 4, cmp);
            let (map, cmp) = orders64()[5 - i];
            let launch = Launch { map, ..launch };
            check::<u64>(&k64, &launch, 0, cmp);
            check::<Indexed64>(&k64, &launch, 1, cmp);
        }
    }

    #[test]
    fn many_segments_of_one_key_write_their_index() {
        let keys: Vec<u32> = (0..1000).collect();
        let launch = Launch {
            offsets: &[],
            row_len: 1,
            list: &[],
            p: 0,
            map: key_map(KIND_UNSIGNED, true),
        };
        check::<Indexed32>(&keys, &launch, 1, |a: &u32, b: &u32| b.cmp(a));
    }
}
