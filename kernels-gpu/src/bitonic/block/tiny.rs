//! The tiny sort: one block sorts up to 2^[`TINY_MAX_LOG2`] keys with the bitonic network,
//! each thread holding [`TINY_RUN`] consecutive keys in registers, every step written out.
//!
//! Why a kernel of its own: below 2^13 keys a sort is one multiprocessor's work, bound first by
//! how many instructions its four schedulers issue and then by the latency of each step
//! (docs/decisions.md, "Tiny sort"). The one-launch small sort ([`super::small`]) keeps 16 keys per
//! thread, so 1024 keys are two warps with long dependent chains. Here the same keys are
//! eight warps, and the network costs about three instructions per key and step:
//! - the network is unrolled for each size (`network::<LOG2>`), so every step's kind, partner
//!   and register pairs are constants;
//! - every comparator is ascending: each stage starts with the *flip* (index i against
//!   `i ^ (2^stage − 1)`), then half-cleaners (i against `i ^ 2^bit`), so no key needs a
//!   direction, only "am I the lower partner", one bit of the thread index per step.
//!
//! Thread t holds keys `RUN·t .. RUN·t + RUN`: the low [`TINY_RUN_LOG2`] bits of an index are
//! registers, the next five lanes, the rest warps. A step on a register bit is a min and a max
//! per pair, on a lane bit a warp shuffle, on a warp bit an exchange through shared memory
//! with one barrier (`exchange` below).

use crate::bitonic::compare_exchange;
use crate::block::{SharedMem, Team};
use crate::keys::KeyBits;
use crate::tuning::{TINY_MAX_LOG2, TINY_MIN_LOG2, TINY_RUN, TINY_RUN_LOG2, network_log2};

const RUN: usize = TINY_RUN as usize;

/// One thread's keys.
pub type TinyRun<K> = [K; RUN];

/// Runs `f(t, run, theirs)` for every thread `t` of the block's `threads`, where `theirs` holds
/// the keys of thread `t ^ mask` as they were before this call: a warp shuffle for `mask < 32`,
/// else a trip through shared memory with one barrier. Every thread of the block calls it.
///
/// Shared memory holds two buffers of the block's keys (register r of thread t at
/// `r·threads + t`: a warp's accesses on consecutive banks), which take turns (`buffer` says
/// which one is next): a thread writes one only after the barrier of the exchange that read the
/// other, which every thread reached after its reads of this one, so one barrier per exchange
/// suffices (the CPU tests' race check confirms it).
#[inline(always)]
fn exchange<K: KeyBits, T: Team<K, RUN>>(
    team: &mut T,
    buffer: &mut u32,
    mask: u32,
    threads: u32,
    mut f: impl FnMut(u32, &mut TinyRun<K>, &TinyRun<K>),
) {
    if mask < 32 {
        team.exchange(mask, f);
        return;
    }
    let base = *buffer * threads * TINY_RUN;
    *buffer ^= 1;
    team.each(|t, run, shared| {
        for (r, key) in run.iter().enumerate() {
            // SAFETY: below 2·threads·TINY_RUN, the shared memory of the sort's contract.
            unsafe { shared.write(t, base + r as u32 * threads + t, *key) };
        }
    });
    team.sync();
    team.each(|t, run, shared| {
        let partner = t ^ mask;
        // SAFETY: as above; written by the partner before the barrier.
        let theirs: TinyRun<K> = core::array::from_fn(|r| unsafe {
            shared.read(t, base + r as u32 * threads + partner)
        });
        f(t, run, &theirs);
    });
}

/// Threads of the tiny sort's block for `n` keys: 2^[`network_log2`] / [`TINY_RUN`].
pub const fn tiny_threads(n: u32) -> u32 {
    (1 << network_log2(n)) / TINY_RUN
}

/// Sorts `keys[..n]` (2 ≤ n ≤ 2^[`TINY_MAX_LOG2`]) in place: through the key map `encode` as
/// they are loaded, ascending, through the inverse of `decode` as they are stored. The network
/// has 2^`network_log2(n)` positions; those past `n` hold +∞ and are never stored.
///
/// # Safety
/// `keys` holds `n` keys; the team has `tiny_threads(n)` threads and a shared memory of
/// `2 · 2^network_log2(n)` keys ([`tiny_shared_bytes`](crate::tuning::tiny_shared_bytes)).
#[inline(always)]
pub unsafe fn sort<K: KeyBits, T: Team<K, RUN>>(
    team: &mut T,
    keys: *mut K,
    n: u32,
    (encode, decode): (u32, u32),
) {
    debug_assert!(n <= 1 << TINY_MAX_LOG2);
    // Every load first, so that they are in flight together.
    team.each(|t, run, _| {
        for (r, key) in run.iter_mut().enumerate() {
            let i = TINY_RUN * t + r as u32;
            // SAFETY: i < n.
            *key = if i < n {
                unsafe { *keys.add(i as usize) }.encode(encode)
            } else {
                K::INFINITY
            };
        }
    });
    match network_log2(n) {
        7 => network::<K, T, 7>(team),
        8 => network::<K, T, 8>(team),
        9 => network::<K, T, 9>(team),
        10 => network::<K, T, 10>(team),
        11 => network::<K, T, 11>(team),
        _ => network::<K, T, 12>(team),
    }
    team.each(|t, run, _| {
        for (r, key) in run.iter().enumerate() {
            let i = TINY_RUN * t + r as u32;
            if i < n {
                // SAFETY: i < n; each position is this thread's alone.
                unsafe { *keys.add(i as usize) = key.decode(decode) };
            }
        }
    });
}

const _: () = assert!(TINY_MIN_LOG2 >= 7 && TINY_MAX_LOG2 == 12, "network's sizes");

/// The network of 2^LOG2 positions, stage after stage, every step a call with constant
/// arguments.
#[inline(always)]
fn network<K: KeyBits, T: Team<K, RUN>, const LOG2: u32>(team: &mut T) {
    // The shared-memory buffer of the next exchange between warps.
    let mut buffer = 0;
    macro_rules! stages {
        ($($stage:literal: [$($bit:literal)*])*) => {
            $(if $stage <= LOG2 {
                $(step::<K, T, LOG2, $stage, $bit>(team, &mut buffer);)*
            })*
        };
    }
    stages! {
        1: [0]
        2: [1 0]
        3: [2 1 0]
        4: [3 2 1 0]
        5: [4 3 2 1 0]
        6: [5 4 3 2 1 0]
        7: [6 5 4 3 2 1 0]
        8: [7 6 5 4 3 2 1 0]
        9: [8 7 6 5 4 3 2 1 0]
        10: [9 8 7 6 5 4 3 2 1 0]
        11: [10 9 8 7 6 5 4 3 2 1 0]
        12: [11 10 9 8 7 6 5 4 3 2 1 0]
    }
}

/// Step `BIT` of stage `STAGE` of the network of 2^LOG2 positions (making sorted runs of
/// 2^STAGE from pairs of sorted halves): the flip when `BIT == STAGE − 1`, then half-cleaners;
/// the lower index of each pair keeps the smaller key.
#[inline(always)]
fn step<K: KeyBits, T: Team<K, RUN>, const LOG2: u32, const STAGE: u32, const BIT: u32>(
    team: &mut T,
    buffer: &mut u32,
) {
    let flip = BIT + 1 == STAGE;
    // The partner's index differs in these bits.
    let partner: u32 = if flip { (1 << STAGE) - 1 } else { 1 << BIT };
    if BIT < TINY_RUN_LOG2 {
        team.each(|_, run, _| {
            for lower in 0..RUN {
                if lower & 1 << BIT == 0 {
                    compare_exchange(run, lower, lower ^ partner as usize);
                }
            }
        });
    } else {
        let thread_bit = BIT - TINY_RUN_LOG2;
        let threads = 1 << (LOG2 - TINY_RUN_LOG2);
        exchange(
            team,
            buffer,
            partner >> TINY_RUN_LOG2,
            threads,
            |t, run, theirs| {
                let lower = t >> thread_bit & 1 == 0;
                for (r, key) in run.iter_mut().enumerate() {
                    // A flip pairs register r with the partner's mirror register.
                    let other = theirs[if flip { RUN - 1 - r } else { r }];
                    let (small, large) = if other < *key {
                        (other, *key)
                    } else {
                        (*key, other)
                    };
                    *key = if lower { small } else { large };
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{CpuTeam, check_key_maps, xorshift};
    use crate::keys::IDENTITY;
    use crate::tuning::tiny_shared_bytes;

    fn sort_on_cpu<K: KeyBits>(keys: &mut [K], map: u32) -> CpuTeam<K, RUN> {
        let n = keys.len() as u32;
        let slots = tiny_shared_bytes(n, size_of::<K>() as u32) / size_of::<K>() as u32;
        let mut team = CpuTeam::new(tiny_threads(n), slots);
        // SAFETY: `keys` holds n keys; the team has tiny_threads(n) threads and the sort's
        // shared memory.
        unsafe { sort(&mut team, keys.as_mut_ptr(), n, (map, map)) };
        team
    }

    #[test]
    fn sorts_every_length_class() {
        let mut next = xorshift(11);
        let lengths = (2..=130).chain([255, 256, 257, 1000, 1023, 1024, 1025, 2049, 4095, 4096]);
        for n in lengths {
            for range in [3, 1 << 20, u64::MAX] {
                let keys: Vec<u32> = (0..n).map(|_| (next() % range) as u32).collect();
                let mut sorted = keys.clone();
                sort_on_cpu(&mut sorted, IDENTITY);
                let mut expected = keys.clone();
                expected.sort_unstable();
                assert_eq!(sorted, expected, "n = {n}, range {range}");
                let wide: Vec<u64> = (0..n).map(|_| next() % range).collect();
                let mut sorted = wide.clone();
                sort_on_cpu(&mut sorted, IDENTITY);
                let mut expected = wide;
                expected.sort_unstable();
                assert_eq!(sorted, expected, "u64, n = {n}");
            }
        }
    }

    /// The 0-1 principle: a comparator network sorts every input if it sorts every input of
    /// zeros and ones. The smallest network's 2^128 such inputs are too many; these are those
    /// with a single 1, a single 0 or a single step, at every position, and random ones.
    #[test]
    fn sorts_zero_one_inputs() {
        let n = 1 << TINY_MIN_LOG2;
        let mut next = xorshift(5);
        for case in 0..4 * n {
            let keys: Vec<u32> = match case / n {
                0 => (0..n).map(|i| u32::from(i == case % n)).collect(),
                1 => (0..n).map(|i| u32::from(i != case % n)).collect(),
                2 => (0..n).map(|i| u32::from(i >= case % n)).collect(),
                _ => (0..n).map(|_| (next() & 1) as u32).collect(),
            };
            let mut sorted = keys.clone();
            sort_on_cpu(&mut sorted, IDENTITY);
            let ones = keys.iter().sum::<u32>() as usize;
            assert!(sorted[..n - ones].iter().all(|&k| k == 0), "case {case}");
            assert!(sorted[n - ones..].iter().all(|&k| k == 1), "case {case}");
        }
    }

    #[test]
    fn sorts_patterns_and_key_maps() {
        for n in [100, 1000, 4096] {
            let ascending: Vec<u32> = (0..n).collect();
            for keys in [ascending.clone(), ascending.iter().rev().copied().collect()] {
                let mut sorted = keys.clone();
                sort_on_cpu(&mut sorted, IDENTITY);
                assert_eq!(sorted, ascending);
            }
            let mut next = xorshift(u64::from(n));
            check_key_maps(
                n as usize,
                &mut next,
                |k, m| drop(sort_on_cpu(k, m)),
                |k, m| drop(sort_on_cpu(k, m)),
            );
        }
    }

    /// Each stage's steps on thread bits are exchanges: the flip's partner mirrors every bit
    /// below the stage, a half-cleaner's differs in one; shuffles (masks below 32) for lane
    /// bits, one barrier each through shared memory above.
    #[test]
    fn exchanges_are_the_network_thread_steps() {
        let mut keys = vec![0u32; 4096];
        let team = sort_on_cpu(&mut keys, IDENTITY);
        let mut expected: Vec<u32> = Vec::new();
        for stage in 1..=12u32 {
            for bit in (TINY_RUN_LOG2..stage).rev() {
                let partner = if bit + 1 == stage {
                    (1 << stage) - 1
                } else {
                    1 << bit
                };
                expected.push(partner >> TINY_RUN_LOG2);
            }
        }
        let (shuffles, through_shared): (Vec<u32>, Vec<u32>) =
            expected.into_iter().partition(|&mask| mask < 32);
        assert_eq!(team.shuffles, shuffles);
        assert_eq!(team.barriers as usize, through_shared.len());
    }

    #[test]
    fn the_block_is_a_whole_number_of_warps() {
        for n in [2, 127, 128, 129, 1 << TINY_MAX_LOG2] {
            let threads = tiny_threads(n);
            assert!(
                threads.is_multiple_of(32) && threads <= 1024,
                "n = {n}: {threads}"
            );
            assert!(threads * TINY_RUN >= n);
        }
    }
}
