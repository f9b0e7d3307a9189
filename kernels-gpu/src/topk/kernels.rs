//! Top-k kernels ([`crate::topk`]): one round of a selection, for 32- and 64-bit keys, by
//! streaming (`topk_round_*`) or, for rounds that [`selects_in_registers`], by a radix select
//! in registers (`topk_rows_*`); and the steps of a top-k by digits (`topk_digits_*`,
//! [`crate::topk::digits`]). The host launches the rounds of [`crate::topk::plan`] one
//! after another, candidates going back and forth between two scratch buffers and the last
//! round writing the result.
//!
//! [`selects_in_registers`]: crate::topk::selects_in_registers

use crate::gpu::{CudaBlock, block_idx_x, dynamic_shared, grid_dim_x, thread_idx_x};
use crate::kernels::{define, kernel_list};
use crate::merge::block::Align16;
use crate::topk::block::digits::{DigitArgs, digit_step};
use crate::topk::block::rows::select_rows;
use crate::topk::block::{Args as SelectArgs, select_parts};
use crate::topk::digits::{Grid, StepArgs, step_entry};
use crate::topk::{Round, RoundArgs, THREADS, items_per_thread, round_entry};

/// The block code of a round: `streaming` ([`select_parts`]) or `registers` ([`select_rows`]).
macro_rules! select_round {
    (streaming, $key:ty, $($arg:expr),*) => {
        select_parts::<$key, _, { items_per_thread(size_of::<$key>() as u32) as usize }>($($arg),*)
    };
    (registers, $key:ty, $($arg:expr),*) => {
        select_rows::<$key, _>($($arg),*)
    };
}

macro_rules! topk_round {
    ($name:ident($args:path), $key:ty, $how:ident) => {
        round_entry!(
            /// One round of a top-k selection ([`RoundArgs`]): each part of `chunk` keys of
            /// each of `segments` segments of `len` keys (`keys`, encoded with `encode` as they
            /// are loaded; their indices in `indices`, or null for their positions in their
            /// segment) gives its `k` smallest keys (through the inverse of `decode`) and their
            /// indices, smallest first, to `out_keys` and `out_indices` (`k` per part, part
            /// after part). Block `b` runs parts `b, b + gridDim.x, …` of the
            /// `segments × parts`.
            ///
            /// Launch: up to `segments × parts` blocks of `THREADS` threads; dynamic shared
            /// memory of `shared_bytes(size_of::<key>(), k)` bytes (streaming) or
            /// `rows_shared_layout(size_of::<key>(), k)[5]` (in registers, for rounds that
            /// `selects_in_registers`).
            ///
            /// # Safety
            /// `keys` (and `indices` unless null) hold `segments × len` device words; the
            /// outputs `segments × parts × k`; `1 ≤ k ≤ MAX_K`; `parts` and `chunk` as
            /// `crate::topk::plan` makes them.
            $name,
            $args,
            |args| {
                let RoundArgs {
                    keys,
                    indices,
                    out_keys,
                    out_indices,
                    segments,
                    len,
                    parts,
                    chunk,
                    k,
                    encode,
                    decode,
                } = args;
                let args = SelectArgs {
                    keys: keys as *const $key,
                    indices: indices as *const u64,
                    out_keys: out_keys as *mut $key,
                    out_indices: out_indices as *mut u64,
                    round: Round {
                        segments,
                        len,
                        parts,
                        chunk,
                    },
                    k,
                    encode,
                    decode,
                };
                // SAFETY: the launch contract, which also gives the block THREADS threads: said
                // so that the optimizer knows every thread runs every unit loop of the block
                // code once (else it keeps the registers of a network alive from one tile to
                // the next, for the threads that would skip them).
                unsafe {
                    core::hint::assert_unchecked(thread_idx_x() < THREADS);
                    select_round!(
                        $how,
                        $key,
                        &CudaBlock::<THREADS>,
                        dynamic_shared::<Align16>() as *mut u8,
                        &args,
                        u64::from(block_idx_x()),
                        u64::from(grid_dim_x())
                    )
                }
            },
        );
    };
}

macro_rules! topk_digits {
    ($name:ident($args:path), $key:ty) => {
        step_entry!(
            /// One step of a top-k of the `len` keys of `keys` (encoded with `encode` as they
            /// are loaded) by their digits (`crate::topk::digits`, [`StepArgs`]): a digit pass
            /// for `step` below the key's passes, then the count, then the gather of the
            /// candidates into `work`. Block `b` runs the keys `b × chunk ..` of a chunk.
            ///
            /// Launch: `blocks` blocks (`crate::topk::digits::grid`) of `THREADS` threads;
            /// dynamic shared memory of `shared_layout()[4]` bytes; the steps in order on one
            /// stream, the workspace's `zeroed` bytes zeroed before the first.
            ///
            /// # Safety
            /// `keys` holds `len` device keys, `len` below 2^32; `work` the device workspace of
            /// `workspace(size_of::<key>(), grid)` bytes; `1 ≤ k ≤ min(len, MAX_K)`.
            $name,
            $args,
            |args| {
                let StepArgs {
                    keys,
                    len,
                    chunk,
                    blocks,
                    k,
                    encode,
                    step,
                    work,
                } = args;
                let args = DigitArgs {
                    keys: keys as *const $key,
                    grid: Grid { len, chunk, blocks },
                    k,
                    encode,
                    step,
                    work: work as *mut u8,
                };
                // SAFETY: the launch contract.
                unsafe {
                    core::hint::assert_unchecked(thread_idx_x() < THREADS);
                    digit_step::<$key, _>(
                        &CudaBlock::<THREADS>,
                        dynamic_shared::<Align16>() as *mut u8,
                        &args,
                        u64::from(block_idx_x()),
                    )
                }
            },
        );
    };
}

kernel_list!(topk, define);
