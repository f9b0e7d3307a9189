//! Kernels of the multi-GPU sort: the regular sample and the probe ranks with which the host
//! finds the exact splitters, and the generation and verification of data on the GPUs.

use crate::gpu::{
    block_dim_x, block_idx_x, dynamic_shared, global_thread_x, grid_dim_x, sync_threads,
    thread_idx_x,
};
use crate::kernels::{define, kernel_list};
use crate::keys::KeyBits;
use crate::multi::{
    CheckArgs, FillArgs, RanksArgs, SampleArgs, check_entry, checksum_term, fill_entry, random_key,
    rank, ranks_entry, sample_count, sample_entry, sample_position,
};
use crate::tuning::MULTI_THREADS;

/// Threads in the whole grid (one-dimensional).
#[inline(always)]
fn grid_threads() -> u64 {
    u64::from(block_dim_x()) * u64::from(grid_dim_x())
}

macro_rules! multi_sample {
    ($sample:ident($args:path), $key:ty) => {
        sample_entry!(
            /// Copies the regular sample of the sorted `keys` (every `stride`-th key and the
            /// last, [`crate::multi::sample_position`]) to `out` ([`SampleArgs`]).
            ///
            /// Launch: at least `sample_count(n, stride)` threads, any block size.
            ///
            /// # Safety
            /// `keys` holds `n > 0` device keys; `out` has room for `sample_count(n, stride)`.
            $sample,
            $args,
            |args| {
                let SampleArgs {
                    keys,
                    n,
                    stride,
                    out,
                } = args;
                let (keys, out) = (keys as *const $key, out as *mut $key);
                let m = global_thread_x();
                if m < sample_count(n, stride) {
                    // SAFETY: the position is below n and m below the sample count.
                    unsafe {
                        *out.add(m as usize) = *keys.add(sample_position(m, n, stride) as usize)
                    };
                }
            },
        );
    };
}

macro_rules! multi_ranks {
    ($ranks:ident($args:path), $key:ty) => {
        ranks_entry!(
            /// For each of `count` probes, the keys of the sorted `keys` below it (`below`) and
            /// not above it (`not_above`) ([`RanksArgs`]).
            ///
            /// Launch: at least `count` threads, any block size.
            ///
            /// # Safety
            /// `keys` holds `n` device keys; `probes`, `below` and `not_above` hold `count`.
            $ranks,
            $args,
            |args| {
                let RanksArgs {
                    keys,
                    n,
                    probes,
                    count,
                    below,
                    not_above,
                } = args;
                let (keys, probes) = (keys as *const $key, probes as *const $key);
                let (below, not_above) = (below as *mut u64, not_above as *mut u64);
                let t = global_thread_x();
                if t < count {
                    // SAFETY: t < count; the searches read indices < n.
                    unsafe {
                        let probe = *probes.add(t as usize);
                        let key = |i: u64| *keys.add(i as usize);
                        *below.add(t as usize) = rank(probe, n, true, key);
                        *not_above.add(t as usize) = rank(probe, n, false, key);
                    }
                }
            },
        );
    };
}

macro_rules! multi_fill {
    ($fill:ident($args:path), $key:ty) => {
        fill_entry!(
            /// Fills `keys[i]` with random key `first + i` of the stream `seed`
            /// ([`crate::multi::random_key`], truncated to the key's width; [`FillArgs`]).
            ///
            /// Launch: any one-dimensional grid (grid-stride loop).
            ///
            /// # Safety
            /// `keys` holds `n` device keys.
            $fill,
            $args,
            |args| {
                let FillArgs {
                    keys,
                    n,
                    seed,
                    first,
                } = args;
                let keys = keys as *mut $key;
                let mut i = global_thread_x();
                while i < n {
                    // SAFETY: i < n.
                    unsafe { *keys.add(i as usize) = random_key(seed, first + i) as $key };
                    i += grid_threads();
                }
            },
        );
    };
}

macro_rules! multi_check {
    ($check:ident($args:path), $key:ty) => {
        check_entry!(
            /// Per block: how many neighbours `keys[i] > keys[i + 1]` are out of the order of
            /// `map`, and the multiset checksum of the block's keys
            /// ([`crate::multi::checksum_term`] of the raw bits), written to
            /// `partials[2 · block]` and `partials[2 · block + 1]`; the host adds the blocks up
            /// ([`CheckArgs`]).
            ///
            /// Launch: `MULTI_THREADS` threads per block, `2 · MULTI_THREADS · 8` bytes of
            /// dynamic shared memory, any number of blocks (grid-stride loop).
            ///
            /// # Safety
            /// `keys` holds `n` device keys; `partials` has room for two `u64` per block.
            $check,
            $args,
            |args| {
                let CheckArgs {
                    keys,
                    n,
                    map,
                    partials,
                } = args;
                let (keys, partials) = (keys as *const $key, partials as *mut u64);
                let (mut descents, mut sum) = (0u64, 0u64);
                let mut i = global_thread_x();
                while i < n {
                    // SAFETY: i < n, and i + 1 < n where it is read.
                    let key = unsafe { *keys.add(i as usize) };
                    if i + 1 < n {
                        let next = unsafe { *keys.add(i as usize + 1) };
                        descents += u64::from(key.encode(map) > next.encode(map));
                    }
                    sum = sum.wrapping_add(checksum_term(u64::from(key)));
                    i += grid_threads();
                }
                let shared = dynamic_shared::<u64>();
                let t = thread_idx_x();
                // SAFETY: 2 · MULTI_THREADS words of shared memory; slots t and
                // MULTI_THREADS + t are this thread's until the tree below reads them after a
                // barrier.
                unsafe {
                    *shared.add(t as usize) = descents;
                    *shared.add((MULTI_THREADS + t) as usize) = sum;
                }
                let mut half = MULTI_THREADS / 2;
                while half > 0 {
                    sync_threads();
                    if t < half {
                        // SAFETY: t + half < MULTI_THREADS; slot t is written by thread t alone.
                        unsafe {
                            let (d, s) = (t as usize, (MULTI_THREADS + t) as usize);
                            *shared.add(d) += *shared.add(d + half as usize);
                            *shared.add(s) =
                                (*shared.add(s)).wrapping_add(*shared.add(s + half as usize));
                        }
                    }
                    half /= 2;
                }
                if t == 0 {
                    let b = block_idx_x() as usize;
                    // SAFETY: two partials per block; the tree's result is in slots 0 and
                    // MULTI_THREADS, last written by this thread.
                    unsafe {
                        *partials.add(2 * b) = *shared;
                        *partials.add(2 * b + 1) = *shared.add(MULTI_THREADS as usize);
                    }
                }
            },
        );
    };
}

kernel_list!(multi, define);
