//! Top-k on the GPU ([`kernels_gpu::topk`]): the rounds of a selection, each one launch of
//! `topk_round_*` (streaming) or, where a block holds a whole segment ([`selects_in_registers`]),
//! `topk_rows_*` (a radix select in registers); candidates go back and forth between two halves
//! of a scratch buffer, the last round writing the caller's output. A whole array that
//! [`by_digits`] picks goes instead by the steps of `topk_digits_*` (digit passes over all
//! its keys, then a gather of at most 4096 candidates) and one round in registers over those.
//! k above [`MAX_K`] is a stable sort's first k.

use super::launch::{On, Shape};
use super::{GpuAlgo, GpuSorter, Options, check_len};
use crate::error::{CudaContext, Error, Result};
use crate::keys::{Order, SortKey};
use crate::topk::{TopK, check_top_k};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use kernels_gpu::kernels::{
    Kernel, topk_digits_u32, topk_digits_u64, topk_round_u32, topk_round_u64, topk_rows_u32,
    topk_rows_u64,
};
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::topk::digits::{
    BLOCKS_PER_MULTIPROCESSOR, Grid, LAST_ROUND, StepArgs, by_digits, grid, passes,
    shared_layout as digits_shared_layout, workspace,
};
use kernels_gpu::topk::{
    MAX_K, Plan, Round, RoundArgs, THREADS, blocks_per_multiprocessor, candidate_capacity, plan,
    rows_shared_layout, selects_in_registers, shared_bytes,
};

pub use kernels_gpu::topk::MAX_K as TOP_K_MAX_K;

/// The kernel of a round for keys of `key_bytes`: the radix select in registers, or streaming.
fn kernel(key_bytes: usize, in_registers: bool) -> Kernel<RoundArgs> {
    match (key_bytes > 4, in_registers) {
        (false, false) => topk_round_u32,
        (true, false) => topk_round_u64,
        (false, true) => topk_rows_u32,
        (true, true) => topk_rows_u64,
    }
}

/// Dynamic shared memory of a round's kernel for `k` keys of `key_bytes`.
fn round_shared_bytes(key_bytes: usize, in_registers: bool, k: u32) -> u32 {
    if in_registers {
        rows_shared_layout(key_bytes as u32, k)[5]
    } else {
        shared_bytes(key_bytes as u32, k)
    }
}

/// Lets every kernel use the shared memory of the largest k.
pub(super) fn configure(module: &Module, limits: &super::DeviceLimits) -> Result<()> {
    for key_bytes in [4, 8] {
        for in_registers in [false, true] {
            let bytes = round_shared_bytes(key_bytes, in_registers, MAX_K);
            let name = kernel(key_bytes, in_registers).name();
            super::modules::set_shared_attributes(module, limits, name, bytes)?;
        }
    }
    Ok(())
}

/// The steps of a top-k by digits of keys of `key_bytes`.
fn digits_kernel(key_bytes: usize) -> Kernel<StepArgs> {
    if key_bytes > 4 {
        topk_digits_u64
    } else {
        topk_digits_u32
    }
}

/// A round's input or output: keys and their indices (device addresses; no indices: the keys'
/// positions).
type Candidates = (u64, u64);

impl GpuSorter {
    /// The blocks of a top-k by digits of `len` keys on this device: as many as it runs at once.
    fn digits_grid(&self, len: usize) -> Grid {
        let blocks = u64::from(self.limits.multiprocessors) * u64::from(BLOCKS_PER_MULTIPROCESSOR);
        grid(len as u64, blocks)
    }

    /// The rounds of a top-k of `k` per row of `rows` rows of `row_len` keys of `key_bytes` on
    /// this device.
    fn top_k_plan(&self, rows: usize, row_len: usize, k: usize, key_bytes: usize) -> Plan {
        let per_multiprocessor = blocks_per_multiprocessor(key_bytes as u32);
        let blocks = u64::from(self.limits.multiprocessors) * u64::from(per_multiprocessor);
        plan(
            rows as u64,
            row_len as u64,
            k as u32,
            key_bytes as u32,
            blocks.max(1),
        )
    }

    /// Bytes of scratch a top-k of `k` per row of `row_len` keys among `len` keys of type `K`
    /// takes on this device: the candidates of the rounds before the last, keys and `u64`
    /// indices, twice (none when a round of one block per row does it; at most `2 × 16 × k`
    /// bytes per block the device runs at once); for a whole array selected by digits, their
    /// workspace (about 120 KiB, and 8 bytes per 4096 keys).
    ///
    /// # Errors
    /// As [`check_top_k`], or [`Error::KOutOfRange`] for k above [`TOP_K_MAX_K`].
    pub(crate) fn top_k_scratch_bytes<K: SortKey>(
        &self,
        len: usize,
        row_len: usize,
        k: usize,
    ) -> Result<u64> {
        let rows = check_top_k(len, row_len, k)?;
        check_selected(row_len, k)?;
        let key_bytes = size_of::<K>();
        Ok(
            if by_digits(rows as u64, row_len as u64, k as u32, key_bytes as u32) {
                workspace(key_bytes as u32, self.digits_grid(len)).bytes
            } else {
                let plan = self.top_k_plan(rows, row_len, k, key_bytes);
                let candidates = candidate_capacity(plan);
                scratch_layout(candidates, key_bytes).1
            },
        )
    }

    /// The `k` best keys of each row of `row_len` keys of `keys` in `order` (ascending: the k
    /// smallest, smallest first; descending: the k largest, largest first; floats as
    /// `total_cmp`) and their indices within the row, ties broken by the lower index:
    /// `rows × k` of each, row after row. `row_len = keys.len()` selects from the whole array;
    /// a smaller `row_len` treats `keys` as a row-major matrix of `keys.len() / row_len` rows.
    /// `keys` is not changed.
    ///
    /// # Current implementation
    ///
    /// For k up to [`TOP_K_MAX_K`] (1024): a selection that reads the keys once. Blocks stream
    /// their parts of the keys (one block per row, long rows cut into parts), keep their k best
    /// in shared memory and drop at the load every key not better than their current k-th; a
    /// second round selects among the blocks' k best; a round over at most 4096 keys per block
    /// (a short row, say) is a radix select of them held in registers (docs/design.md). Device
    /// memory: the keys, and k keys and indices per block the GPU runs at once, twice.
    ///
    /// Where k is large for a whole array (k from 64, at most k × 512 KiB of keys: 2^24 `f32`
    /// keys from k = 128, 2^27 at k = 1024), a radix select over all the keys instead: passes
    /// that count 11-bit digits until the k-th key's bin holds few keys, then a gather of at
    /// most 4096 candidates in position order, selected in registers. Device memory: the keys,
    /// about 120 KiB and 8 bytes per 4096 keys.
    ///
    /// Larger k: the indices stably sorted by key with the radix sort
    /// ([`GpuSorter::argsort`] with [`GpuAlgo::Radix`]), then each row's first k, on the CPU.
    ///
    /// Keys already on the device: [`Queue::top_k`](super::Queue::top_k), for k up to
    /// [`TOP_K_MAX_K`].
    ///
    /// # Errors
    /// [`Error::RowLength`] for a row length of 0 or one that does not divide the keys;
    /// [`Error::KOutOfRange`] for k = 0 or k past the row; [`Error::TooLong`],
    /// [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let scores = [0.5f32, 2.0, -1.0, 2.0, f32::NAN];
    /// let best = gpu.top_k(&scores, scores.len(), 3, Order::Descending)?;
    /// assert!(best.keys[0].is_nan());
    /// assert_eq!(best.indices, [4, 1, 3]); // 2.0 twice: the lower index first
    ///
    /// let matrix = [3u32, 1, 2, /* next row */ 9, 9, 4];
    /// let top = gpu.top_k(&matrix, 3, 2, Order::Ascending)?;
    /// assert_eq!(top.keys, [1, 2, 4, 9]);
    /// assert_eq!(top.indices, [1, 2, 2, 0]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn top_k<K: SortKey>(
        &self,
        keys: &[K],
        row_len: usize,
        k: usize,
        order: Order,
    ) -> Result<TopK<K>> {
        check_len(keys.len())?;
        let rows = check_top_k(keys.len(), row_len, k)?;
        if k > MAX_K as usize {
            return self.top_k_by_sorting(keys, row_len, k, order);
        }
        let device = self.upload(keys)?;
        let mut out_keys: DeviceBuffer<K> = self.alloc(rows * k, "the top-k's keys")?;
        let mut out_indices: DeviceBuffer<u64> = self.alloc(rows * k, "the top-k's indices")?;
        let mut queue = self.own_queue();
        queue.top_k(&device, row_len, k, order, &mut out_keys, &mut out_indices)?;
        queue.synchronize()?;
        let mut top = TopK {
            keys: vec![K::from_bits(Default::default()); rows * k],
            indices: vec![0; rows * k],
        };
        out_keys
            .copy_to(&mut top.keys[..])
            .context("copying the top-k's keys to the host")?;
        out_indices
            .copy_to(&mut top.indices[..])
            .context("copying the top-k's indices to the host")?;
        Ok(top)
    }

    /// A top-k for k above [`MAX_K`]: the stable argsort of all the keys (radix sort), then
    /// each row's first k in it.
    fn top_k_by_sorting<K: SortKey>(
        &self,
        keys: &[K],
        row_len: usize,
        k: usize,
        order: Order,
    ) -> Result<TopK<K>> {
        let rows = keys.len() / row_len;
        let radix = Options {
            algo: Some(GpuAlgo::Radix),
            order,
        };
        let permutation: Vec<u64> = self.argsort(keys, radix)?;
        let mut top = TopK {
            keys: vec![K::from_bits(Default::default()); rows * k],
            indices: vec![0; rows * k],
        };
        let mut taken = vec![0usize; rows];
        for &i in &permutation {
            let (row, within) = (i as usize / row_len, i % row_len as u64);
            if taken[row] < k {
                let slot = row * k + taken[row];
                top.keys[slot] = keys[i as usize];
                top.indices[slot] = within;
                taken[row] += 1;
            }
        }
        Ok(top)
    }
}

impl On<'_> {
    /// Queues the top-`k` of each row of `row_len` of the `len` keys of type `K` at `keys`
    /// (`row_len = len`: of the whole array): `k` keys per row, best first, ties by the lower
    /// index, into `out` (keys, and `u64` indices within the row, `rows × k` of each), with the
    /// scratch `(address, bytes)` of [`GpuSorter::top_k_scratch_bytes`]. `keys` is only read.
    ///
    /// # Panics
    /// If the scratch is too small.
    pub(crate) fn enqueue_top_k<K: SortKey>(
        &self,
        (keys, len): (u64, usize),
        (row_len, k): (usize, usize),
        order: Order,
        out: Candidates,
        scratch: (u64, u64),
    ) -> Result<()> {
        check_len(len)?;
        let rows = check_top_k(len, row_len, k)?;
        check_selected(row_len, k)?;
        let key_bytes = size_of::<K>();
        let map = K::key_map(order);
        if by_digits(rows as u64, row_len as u64, k as u32, key_bytes as u32) {
            return self.top_k_by_digits::<K>((keys, len), k, map, out, scratch);
        }
        let rounds: Vec<_> = self.top_k_plan(rows, row_len, k, key_bytes).collect();
        let half = candidate_capacity(self.top_k_plan(rows, row_len, k, key_bytes));
        let (keys_bytes, needed) = scratch_layout(half, key_bytes);
        assert!(
            scratch.1 >= needed,
            "scratch of {} bytes for a top-k that needs {needed}",
            scratch.1
        );
        let base = scratch.0;
        let second = base + needed / 2;
        let halves = [(base, base + keys_bytes), (second, second + keys_bytes)];
        let mut src = (keys, 0u64);
        for (i, round) in rounds.iter().enumerate() {
            let last = i + 1 == rounds.len();
            let dst = if last { out } else { halves[i % 2] };
            let encode = if i == 0 { map } else { IDENTITY };
            let decode = if last { map } else { IDENTITY };
            self.launch_top_k_round(key_bytes, round, k as u32, (src, dst), (encode, decode))?;
            src = dst;
        }
        Ok(())
    }

    /// Launches one round of a top-k of `k` from `src` to `dst`, keys encoded with `encode`
    /// as they are loaded and decoded with `decode` as they are written.
    fn launch_top_k_round(
        &self,
        key_bytes: usize,
        round: &Round,
        k: u32,
        (src, dst): (Candidates, Candidates),
        (encode, decode): (u32, u32),
    ) -> Result<()> {
        let grid = round.blocks().min(i32::MAX as u64) as u32;
        let in_registers = selects_in_registers(round);
        let shared = round_shared_bytes(key_bytes, in_registers, k);
        let args = RoundArgs {
            keys: src.0,
            indices: src.1,
            out_keys: dst.0,
            out_indices: dst.1,
            segments: round.segments,
            len: round.len,
            parts: round.parts,
            chunk: round.chunk,
            k,
            encode,
            decode,
        };
        let shape = Shape::new(grid, THREADS, shared);
        // SAFETY: the caller's input holds segments × len keys (and indices unless null), its
        // outputs segments × parts × k; the launch shape is the kernel's.
        unsafe { self.launch(kernel(key_bytes, in_registers), shape, args) }
    }

    /// Queues the top-`k` of the whole of `keys` by digits ([`by_digits`]) into `out` (keys
    /// decoded with `map`, and indices): zeroes the workspace's counters, launches every step
    /// of `topk_digits_*`, then one round in registers over the gathered candidates.
    fn top_k_by_digits<K: SortKey>(
        &self,
        (keys, len): (u64, usize),
        k: usize,
        map: u32,
        out: Candidates,
        (work, bytes): (u64, u64),
    ) -> Result<()> {
        let key_bytes = size_of::<K>();
        let g = self.digits_grid(len);
        let layout = workspace(key_bytes as u32, g);
        assert!(
            bytes >= layout.bytes,
            "scratch of {bytes} bytes for a top-k by digits that needs {}",
            layout.bytes
        );
        // The histograms and tiles' counts lie at the start of the scratch.
        let what = format!("the counters of a top-k of {len} keys");
        self.zero(work, layout.zeroed, &what)?;
        let shape = Shape::new(g.blocks as u32, THREADS, digits_shared_layout()[4]);
        for step in 0..=passes(key_bytes as u32) + 1 {
            let args = StepArgs {
                keys,
                len: g.len,
                chunk: g.chunk,
                blocks: g.blocks,
                k: k as u32,
                encode: map,
                step,
                work,
            };
            // SAFETY: the keys hold `g.len` (below 2^32, as `by_digits` allows) and the scratch
            // the workspace of `g`; the steps run in order on the stream.
            unsafe { self.launch(digits_kernel(key_bytes), shape, args)? };
        }
        let candidates = (work + layout.keys, work + layout.indices);
        self.launch_top_k_round(
            key_bytes,
            &LAST_ROUND,
            k as u32,
            (candidates, out),
            (IDENTITY, map),
        )
    }
}

/// The scratch of `half` candidates per half: two halves of keys, then indices, each 16-byte
/// aligned (the rounds load aligned parts of candidates as 16-byte vectors). Returns the bytes
/// of a half's keys and of the whole.
fn scratch_layout(half: u64, key_bytes: usize) -> (u64, u64) {
    let keys_bytes = (half * key_bytes as u64).next_multiple_of(16);
    (
        keys_bytes,
        2 * (keys_bytes + (half * 8).next_multiple_of(16)),
    )
}

/// k within what the kernels select.
fn check_selected(row_len: usize, k: usize) -> Result<()> {
    if k > MAX_K as usize {
        return Err(Error::KOutOfRange {
            k: k as u64,
            max: (MAX_K as u64).min(row_len as u64),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_is_in_the_ptx() {
        for (kb, in_registers) in [(4, false), (8, false), (4, true), (8, true)] {
            let name = kernel(kb, in_registers).name();
            assert!(super::super::KERNELS_PTX.contains(&format!(".entry {name}(")));
            assert_eq!(
                kernels_gpu::kernels::Family::of(name),
                Some(kernels_gpu::kernels::Family::TopK)
            );
        }
        for kb in [4, 8] {
            let name = digits_kernel(kb).name();
            assert!(super::super::KERNELS_PTX.contains(&format!(".entry {name}(")));
            assert_eq!(
                kernels_gpu::kernels::Family::of(name),
                Some(kernels_gpu::kernels::Family::TopK)
            );
        }
    }

    #[test]
    fn every_width_has_its_kernels() {
        for (kb, bits) in [(4, 32), (8, 64)] {
            assert_eq!(kernel(kb, false).name(), format!("topk_round_u{bits}"));
            assert_eq!(kernel(kb, true).name(), format!("topk_rows_u{bits}"));
            assert_eq!(digits_kernel(kb).name(), format!("topk_digits_u{bits}"));
        }
    }

    #[test]
    fn scratch_halves_are_aligned_and_apart() {
        for half in [0, 1, 3, 1000, 1001] {
            for key_bytes in [4, 8] {
                let (keys_bytes, total) = scratch_layout(half, key_bytes);
                assert!(keys_bytes % 16 == 0 && keys_bytes >= half * key_bytes as u64);
                // The second half starts 16-byte aligned, after the first's keys and indices.
                assert_eq!(total % 32, 0);
                assert!(total / 2 >= keys_bytes + half * 8);
            }
        }
    }

    #[test]
    fn scratch_is_a_few_candidates_per_block() {
        // 2^28 keys, k = 1024, on an H100's 132 multiprocessors: two halves of
        // keys and indices, a few MB, not a copy of the keys.
        let rounds = plan(1, 1 << 28, 1024, 4, 132 * 4);
        let half = candidate_capacity(rounds);
        assert!(half <= 132 * 4 * 1024, "{half}");
        assert!(2 * half * 12 < 16 << 20);
    }
}
