//! Radix sort kernels ([`crate::radix`]): keys of 32 or 64 bits, alone or with values of 4, 8
//! or 16 bytes (`u32`, `u64`, `u128`: the kernels only move values). The host launches, per
//! sort, the histogram and then one digit pass per digit, least significant first, keys and
//! values going back and forth between the caller's buffers and the scratch.

use crate::block::merge::Align16;
use crate::block::radix::{Pass, digit_pass, histogram};
use crate::gpu::dynamic_shared;
use crate::keys::IDENTITY;
use crate::radix::{histogram_items, items_per_thread, pass_threads};

macro_rules! radix_histogram {
    ($histogram:ident, $key:ty) => {
        /// Counts every digit of every pass of `n` keys, encoded with the key map `encode`,
        /// into `histograms` (`passes × RADIX` words, zero at the launch).
        ///
        /// Launch: at most `HISTOGRAM_MAX_BLOCKS` blocks of `RADIX` threads,
        /// `histogram_shared_bytes(size_of::<key>())` bytes of dynamic shared memory.
        ///
        /// # Safety
        /// `keys` holds `n` device keys; `histograms` the words above.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $histogram(
            keys: *const $key,
            n: u64,
            encode: u32,
            histograms: *mut u64,
        ) {
            const ITEMS: usize = histogram_items(size_of::<$key>() as u32) as usize;
            // SAFETY: the launch contract.
            unsafe {
                histogram::<$key, ITEMS>(keys, n, encode, histograms, dynamic_shared::<u32>())
            }
        }
    };
}

macro_rules! radix_pass {
    ($pass:ident, $key:ty, $value:ty) => {
        /// One digit pass: the `RADIX_BITS` bits at `shift` of each key (encoded with
        /// `encode` as it is loaded) place it, stably, from `src_*` into `dst_*` (keys
        /// decoded with `decode` as they are stored). `histogram` holds this pass's digit
        /// counts; `status` the status words (`RADIX` per tile, zeroed once per sort);
        /// `counter` this pass's tile counter (zero at the launch); `epoch` the pass's.
        ///
        /// Launch: `tiles(n, tile_keys(key, value))` blocks of `pass_threads(key, value)` threads,
        /// `pass_shared_bytes(key, value)` bytes of dynamic shared memory.
        ///
        /// # Safety
        /// The buffers hold `n` keys (and values; value pointers unused for `()`),
        /// sources and destinations apart; the other pointers as above.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $pass(
            src_keys: *const $key,
            dst_keys: *mut $key,
            src_values: *const $value,
            dst_values: *mut $value,
            n: u64,
            histogram: *const u64,
            status: *mut u64,
            counter: *mut u32,
            shift: u32,
            encode: u32,
            decode: u32,
            epoch: u32,
        ) {
            const ITEMS: usize =
                items_per_thread(size_of::<$key>() as u32, size_of::<$value>() as u32) as usize;
            const THREADS: u32 = pass_threads(size_of::<$key>() as u32, size_of::<$value>() as u32);
            let pass = Pass {
                src_keys,
                dst_keys,
                src_values,
                dst_values,
                n,
                histogram,
                status,
                counter,
                shift,
                encode,
                decode,
                epoch,
            };
            // SAFETY: the launch contract.
            unsafe {
                digit_pass::<$key, $value, ITEMS, THREADS, false>(
                    pass,
                    dynamic_shared::<Align16>() as *mut u8,
                )
            }
        }
    };
}

macro_rules! radix_gather_pass {
    ($pass:ident, $key:ty) => {
        /// One digit pass of an argsort that moves only indices: the `RADIX_BITS` bits at
        /// `shift` of each key, read from `keys` through its index in `src_indices` (null in
        /// the first pass: the keys' own order) and encoded with `encode`, place its index,
        /// stably, in `dst_indices`. The keys are neither copied nor written. `histogram`,
        /// `status`, `counter` and `epoch` as in the passes with values.
        ///
        /// Launch: `tiles(n, tile_keys(key, 4))` blocks of `pass_threads(key, 4)` threads,
        /// `pass_shared_bytes(key, 4)` bytes of dynamic shared memory.
        ///
        /// # Safety
        /// `keys` holds `n` keys; the index buffers `n` indices below `n` (each once), apart;
        /// the other pointers as above.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $pass(
            keys: *const $key,
            src_indices: *const u32,
            dst_indices: *mut u32,
            n: u64,
            histogram: *const u64,
            status: *mut u64,
            counter: *mut u32,
            shift: u32,
            encode: u32,
            epoch: u32,
        ) {
            const ITEMS: usize = items_per_thread(size_of::<$key>() as u32, 4) as usize;
            const THREADS: u32 = pass_threads(size_of::<$key>() as u32, 4);
            let pass = Pass {
                src_keys: keys,
                dst_keys: core::ptr::null_mut(),
                src_values: src_indices,
                dst_values: dst_indices,
                n,
                histogram,
                status,
                counter,
                shift,
                encode,
                decode: IDENTITY,
                epoch,
            };
            // SAFETY: the launch contract.
            unsafe {
                digit_pass::<$key, u32, ITEMS, THREADS, true>(
                    pass,
                    dynamic_shared::<Align16>() as *mut u8,
                )
            }
        }
    };
}

kernel_list!(radix, define);
