//! Radix sort kernels ([`crate::radix`]): keys of 32 or 64 bits, alone or with values of 4, 8
//! or 16 bytes (`u32`, `u64`, `u128`: the kernels only move values). The host launches, per
//! sort, the histogram and then one digit pass per digit, least significant first, keys and
//! values going back and forth between the caller's buffers and the scratch.

use crate::gpu::dynamic_shared;
use crate::kernels::{define, kernel_list};
use crate::merge::block::Align16;
use crate::radix::block::{Pass, digit_pass, histogram};
use crate::radix::{
    HistogramArgs, gather_pass_entry, histogram_entry, histogram_items, items_per_thread,
    pass_entry, pass_threads,
};

macro_rules! radix_histogram {
    ($histogram:ident($args:path), $key:ty) => {
        histogram_entry!(
            /// Counts every digit of every pass of the keys, encoded with the key map, into
            /// the histograms ([`HistogramArgs`]).
            ///
            /// Launch: at most `HISTOGRAM_MAX_BLOCKS` blocks of `RADIX` threads,
            /// `histogram_shared_bytes(size_of::<key>())` bytes of dynamic shared memory.
            ///
            /// # Safety
            /// The addresses hold what [`HistogramArgs`] says.
            $histogram,
            $args,
            |args| {
                const ITEMS: usize = histogram_items(size_of::<$key>() as u32) as usize;
                let HistogramArgs {
                    keys,
                    histograms,
                    n,
                    encode,
                } = args;
                // SAFETY: the launch contract.
                unsafe {
                    histogram::<$key, ITEMS>(
                        keys as *const $key,
                        n,
                        encode,
                        histograms as *mut u64,
                        dynamic_shared::<u32>(),
                    )
                }
            },
        );
    };
}

macro_rules! radix_pass {
    ($pass:ident($args:path), $key:ty, $value:ty) => {
        pass_entry!(
            /// One digit pass ([`crate::radix::PassArgs`]): the `RADIX_BITS` bits at `shift`
            /// of each key (encoded with `encode` as it is loaded) place it, stably, from the
            /// sources into the destinations (keys decoded with `decode` as they are stored).
            ///
            /// Launch: `tiles(n, tile_keys(key, value))` blocks of `pass_threads(key, value)`
            /// threads, `pass_shared_bytes(key, value)` bytes of dynamic shared memory.
            ///
            /// # Safety
            /// The buffers hold `n` keys (and values; value addresses unused for `()`),
            /// sources and destinations apart; the other addresses as the arguments say.
            $pass,
            $args,
            |args| {
                const KEY: u32 = size_of::<$key>() as u32;
                const VALUE: u32 = size_of::<$value>() as u32;
                const ITEMS: usize = items_per_thread(KEY, VALUE) as usize;
                const THREADS: u32 = pass_threads(KEY, VALUE);
                // SAFETY: the launch contract.
                unsafe {
                    digit_pass::<$key, $value, ITEMS, THREADS, false>(
                        Pass::new(args),
                        dynamic_shared::<Align16>() as *mut u8,
                    )
                }
            },
        );
    };
}

macro_rules! radix_gather_pass {
    ($pass:ident($args:path), $key:ty) => {
        gather_pass_entry!(
            /// One digit pass of an argsort that moves only indices
            /// ([`crate::radix::GatherPassArgs`]): the `RADIX_BITS` bits at `shift` of each
            /// key, read in place through its index and encoded with `encode`, place its
            /// index, stably. The keys are neither copied nor written.
            ///
            /// Launch: `tiles(n, tile_keys(key, 4))` blocks of `pass_threads(key, 4)` threads,
            /// `pass_shared_bytes(key, 4)` bytes of dynamic shared memory.
            ///
            /// # Safety
            /// `keys` holds `n` keys; the index buffers `n` indices below `n` (each once),
            /// apart; the other addresses as the arguments say.
            $pass,
            $args,
            |args| {
                const KEY: u32 = size_of::<$key>() as u32;
                const ITEMS: usize = items_per_thread(KEY, 4) as usize;
                const THREADS: u32 = pass_threads(KEY, 4);
                // SAFETY: the launch contract.
                unsafe {
                    digit_pass::<$key, u32, ITEMS, THREADS, true>(
                        Pass::gathered(args),
                        dynamic_shared::<Align16>() as *mut u8,
                    )
                }
            },
        );
    };
}

kernel_list!(radix, define);
