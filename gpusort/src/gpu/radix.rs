//! Launches of the radix sort ([`kernels_gpu::radix`]): the histogram, then one digit pass per
//! digit, keys (and values) going from the caller's buffers to the scratch and back, so that
//! an even number of passes (4 for 32-bit keys, 8 for 64-bit ones) ends in the caller's.

use super::launch::On;
use super::launch::Shape;
use super::modules::allow_dynamic_shared;
use super::overlap::{Chunked, ChunkedSort};
use crate::error::Result;
use cust::module::Module;
use kernels_gpu::kernels::{
    Kernel, radix_gather_pass_u32, radix_gather_pass_u64, radix_histogram_u32, radix_histogram_u64,
    radix_pass_u32, radix_pass_u32_u32, radix_pass_u32_u64, radix_pass_u32_u128, radix_pass_u64,
    radix_pass_u64_u32, radix_pass_u64_u64, radix_pass_u64_u128,
};
use kernels_gpu::keys::IDENTITY;
use kernels_gpu::radix::{
    GatherPassArgs, HISTOGRAM_MAX_BLOCKS, HistogramArgs, PassArgs, RADIX, RADIX_BITS, Scratch,
    epoch, histogram_shared_bytes, histogram_tile, pass_shared_bytes, pass_threads, passes,
    tile_keys, tiles,
};
use std::ops::Range;

/// The histogram of keys of 4 and 8 bytes.
fn histogram_kernel(key_bytes: u32) -> Kernel<HistogramArgs> {
    match key_bytes {
        4 => radix_histogram_u32,
        _ => radix_histogram_u64,
    }
}

/// The digit pass of keys of `key_bytes` (4 or 8) with values of `value_bytes` (0, 4, 8 or 16).
fn pass_kernel(key_bytes: u32, value_bytes: u32) -> Kernel<PassArgs> {
    match (key_bytes, value_bytes) {
        (4, 0) => radix_pass_u32,
        (4, 4) => radix_pass_u32_u32,
        (4, 8) => radix_pass_u32_u64,
        (4, _) => radix_pass_u32_u128,
        (_, 0) => radix_pass_u64,
        (_, 4) => radix_pass_u64_u32,
        (_, 8) => radix_pass_u64_u64,
        (_, _) => radix_pass_u64_u128,
    }
}

/// The digit pass of an argsort that moves only indices, for keys of `key_bytes`: the shape of a
/// pass of those keys with `u32` values.
fn gather_pass_kernel(key_bytes: u32) -> Kernel<GatherPassArgs> {
    match key_bytes {
        4 => radix_gather_pass_u32,
        _ => radix_gather_pass_u64,
    }
}

/// Every (key bytes, value bytes) a digit pass takes.
const WIDTHS: [(u32, u32); 8] = [
    (4, 0),
    (4, 4),
    (4, 8),
    (4, 16),
    (8, 0),
    (8, 4),
    (8, 8),
    (8, 16),
];

/// The digit passes as every device launches them: (name, threads, dynamic shared bytes).
pub(crate) fn launches() -> impl Iterator<Item = (&'static str, u32, u32)> {
    let shape = |name, kb: u32, vb: u32| (name, pass_threads(kb, vb), pass_shared_bytes(kb, vb));
    let passes = WIDTHS
        .into_iter()
        .map(move |(kb, vb)| shape(pass_kernel(kb, vb).name(), kb, vb));
    let gathered = [4, 8]
        .into_iter()
        .map(move |kb| shape(gather_pass_kernel(kb).name(), kb, 4));
    passes.chain(gathered)
}

/// Lets each digit pass use its tile's shared memory: up to 64 KiB, above the 48 KiB a block
/// gets without asking, which every device from sm_70 gives a block that asks. The carve-out
/// stays the driver's, which leaves the rest as L1: asking for the largest one made the sort
/// slower (docs/decisions.md, "The shared-memory carve-out of the digit passes: the driver's").
pub(super) fn configure(module: &Module, limits: &super::DeviceLimits) -> Result<()> {
    for (name, _, shared) in launches() {
        allow_dynamic_shared(module, limits, name, shared)?;
    }
    Ok(())
}

/// Bytes of scratch a radix sort of `n` keys of `key_bytes` with values of `value_bytes`
/// needs: a second buffer for the keys and for the values, the histograms and tile counters,
/// and a status word per digit per tile (8 bytes per 32 keys of 4-byte keys alone).
pub(crate) fn scratch_bytes(n: u64, key_bytes: usize, value_bytes: usize) -> u64 {
    if n <= 1 {
        return 0;
    }
    Scratch::new(n, key_bytes as u32, value_bytes as u32).bytes
}

/// Bytes of scratch an argsort of `n` keys of `key_bytes` on the device
/// ([`Queue::argsort`](crate::Queue::argsort)) needs: a second buffer of `u32` indices, the
/// histograms and tile counters, and the status words (about 4.3 bytes per key in all); no copy
/// of the keys.
pub(crate) fn gathered_scratch_bytes(n: u64, key_bytes: usize) -> u64 {
    if n <= 1 {
        return 0;
    }
    Scratch::gathered(n, key_bytes as u32).bytes
}

/// Device addresses of one radix sort.
pub(super) struct Launch {
    /// `n` keys, sorted in place.
    pub keys: u64,
    /// `n` values (0 for keys only), permuted with the keys.
    pub values: u64,
    /// At least [`scratch_bytes`] bytes, 256-aligned.
    pub scratch: u64,
    pub n: u64,
    pub key_bytes: usize,
    pub value_bytes: usize,
    /// Key map applied as the keys are first read, undone as they are last written.
    pub map: u32,
}

/// Queues the whole radix sort on the sorter's stream.
pub(super) fn enqueue(on: &On<'_>, l: &Launch) -> Result<()> {
    enqueue_digits(on, l, passes(l.key_bytes as u32))
}

/// Queues the radix sort by the `digits` lowest digits of the keys only (1 ..= every digit),
/// for keys known to be below 2^(8·`digits`). After an even number of passes the keys and
/// values are in the caller's buffers, after an odd number (of more than one key) in the
/// scratch's ([`Scratch::keys`] and [`Scratch::values`] of `Scratch::new(n, key_bytes,
/// value_bytes)`), decoded with `map` either way.
pub(super) fn enqueue_digits(on: &On<'_>, l: &Launch, digits: u32) -> Result<()> {
    debug_assert!((1..=passes(l.key_bytes as u32)).contains(&digits));
    if l.n <= 1 {
        return Ok(());
    }
    let (kb, vb) = (l.key_bytes as u32, l.value_bytes as u32);
    let layout = Scratch::new(l.n, kb, vb);
    let at = |offset: u64| l.scratch + offset;
    zero_counters(
        on,
        at(layout.histograms),
        layout.bytes - layout.histograms,
        l.n,
    )?;
    let histogram = HistogramArgs {
        keys: l.keys,
        histograms: at(layout.histograms),
        n: l.n,
        encode: l.map,
    };
    // SAFETY: the keys are the caller's, the histograms the scratch's.
    unsafe { on.launch(histogram_kernel(kb), histogram_shape(l.n, kb), histogram)? };

    let shape = pass_shape(l.n, kb, vb);
    let buffers = [(l.keys, l.values), (at(layout.keys), at(layout.values))];
    for pass in 0..digits {
        let (src, dst) = (buffers[pass as usize % 2], buffers[(pass as usize + 1) % 2]);
        let args = PassArgs {
            src_keys: src.0,
            dst_keys: dst.0,
            src_values: src.1,
            dst_values: dst.1,
            n: l.n,
            histogram: at(layout.histograms) + u64::from(pass * RADIX) * 8,
            status: at(layout.status),
            counter: at(layout.counters) + u64::from(pass) * 4,
            shift: pass * RADIX_BITS,
            encode: if pass == 0 { l.map } else { IDENTITY },
            decode: if pass + 1 == digits { l.map } else { IDENTITY },
            epoch: epoch(pass),
        };
        // SAFETY: sources and destinations are the caller's buffers and the scratch's, apart,
        // each of n keys and values; the counters are the scratch's.
        unsafe { on.launch(pass_kernel(kb, vb), shape, args)? };
    }
    Ok(())
}

/// Zeroes the `bytes` of histograms, tile counters and status words at `counters`: the status
/// words' epochs make every later pass see the words of the one before as not ready.
fn zero_counters(on: &On<'_>, counters: u64, bytes: u64, n: u64) -> Result<()> {
    on.zero(
        counters,
        bytes,
        &format!("the radix sort's counters for {n} keys"),
    )
}

/// The histogram's grid for `n` keys of `key_bytes`.
fn histogram_shape(n: u64, key_bytes: u32) -> Shape {
    let blocks = n
        .div_ceil(u64::from(histogram_tile(key_bytes)))
        .min(u64::from(HISTOGRAM_MAX_BLOCKS)) as u32;
    Shape::new(blocks, RADIX, histogram_shared_bytes(key_bytes))
}

/// A digit pass's grid for `n` keys of `key_bytes` with values of `value_bytes`: a block a tile.
fn pass_shape(n: u64, key_bytes: u32, value_bytes: u32) -> Shape {
    let blocks = tiles(n, tile_keys(key_bytes, value_bytes));
    let blocks = u32::try_from(blocks).expect("MAX_KEYS keeps the tiles below 2^31");
    let threads = pass_threads(key_bytes, value_bytes);
    Shape::new(blocks, threads, pass_shared_bytes(key_bytes, value_bytes))
}

/// Queues the stable argsort of the `n` keys of `key_bytes` at `keys` (read, never written:
/// each pass reads every key through its index) into the `u32` indices at `indices`, with
/// `scratch` holding [`gathered_scratch_bytes`] (256-aligned). Only indices move, so the sort
/// takes about 4.3 bytes per key beside the keys and indices, where a sort of the keys with
/// their indices takes a copy of the keys and a second buffer of both; the passes after the
/// first read the keys in the order of the pass before, scattered.
pub(super) fn enqueue_gathered(
    on: &On<'_>,
    (keys, indices, scratch): (u64, u64, u64),
    n: u64,
    key_bytes: usize,
    map: u32,
) -> Result<()> {
    debug_assert!(n <= 1 << 32, "u32 indices");
    if n == 0 {
        return Ok(());
    }
    if n == 1 {
        return on.zero(indices, 4, "the index of one key");
    }
    let kb = key_bytes as u32;
    let layout = Scratch::gathered(n, kb);
    let at = |offset: u64| scratch + offset;
    zero_counters(
        on,
        at(layout.histograms),
        layout.bytes - layout.histograms,
        n,
    )?;
    let histogram = HistogramArgs {
        keys,
        histograms: at(layout.histograms),
        n,
        encode: map,
    };
    // SAFETY: the keys are the caller's, the histograms the scratch's.
    unsafe { on.launch(histogram_kernel(kb), histogram_shape(n, kb), histogram)? };

    let shape = pass_shape(n, kb, 4);
    // The first pass writes the scratch's indices; an even number of passes ends in the
    // caller's.
    let buffers = [indices, at(layout.values)];
    for pass in 0..passes(kb) {
        let args = GatherPassArgs {
            keys,
            src_indices: if pass == 0 {
                0
            } else {
                buffers[pass as usize % 2]
            },
            dst_indices: buffers[(pass as usize + 1) % 2],
            n,
            histogram: at(layout.histograms) + u64::from(pass * RADIX) * 8,
            status: at(layout.status),
            counter: at(layout.counters) + u64::from(pass) * 4,
            shift: pass * RADIX_BITS,
            encode: map,
            epoch: epoch(pass),
        };
        // SAFETY: the keys are the caller's, read only; the index buffers are the caller's and
        // the scratch's, apart, of n indices each.
        unsafe { on.launch(gather_pass_kernel(kb), shape, args)? };
    }
    Ok(())
}

/// A radix sort as one chunk of the host-slice pipeline: the keys must all be on the device
/// before its first pass, so the copies do not overlap it.
impl ChunkedSort for Chunked<'_, Launch> {
    fn chunk(&self) -> u64 {
        self.launch.n.max(1)
    }

    fn sort_chunk(&mut self, _range: Range<u64>) -> Result<()> {
        enqueue(&self.on, &self.launch)
    }

    fn finish(&mut self, written: &mut dyn FnMut(Range<u64>) -> Result<()>) -> Result<()> {
        written(0..self.launch.n)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn scratch_is_about_the_keys_and_less_for_an_argsort() {
        assert_eq!(super::scratch_bytes(0, 4, 0), 0);
        assert!(super::scratch_bytes(1 << 20, 4, 0) > 4 << 20);
        assert_eq!(super::gathered_scratch_bytes(1, 8), 0);
        let pairs = super::scratch_bytes(1 << 20, 8, 4);
        assert!(super::gathered_scratch_bytes(1 << 20, 8) < pairs - (8 << 20) + 4096);
        assert!(super::gathered_scratch_bytes(1 << 20, 4) < 5 << 20);
    }

    use super::*;

    #[test]
    fn every_width_has_its_kernels() {
        for (kb, vb) in WIDTHS {
            let bits = kb * 8;
            assert_eq!(
                histogram_kernel(kb).name(),
                format!("radix_histogram_u{bits}")
            );
            let expected = match vb {
                0 => format!("radix_pass_u{bits}"),
                _ => format!("radix_pass_u{bits}_u{}", vb * 8),
            };
            assert_eq!(pass_kernel(kb, vb).name(), expected);
        }
        for kb in [4, 8] {
            let name = gather_pass_kernel(kb).name();
            assert_eq!(name, format!("radix_gather_pass_u{}", kb * 8));
        }
    }

    /// The histogram never reads a counter's old value: its counts are `red.shared`, not
    /// `atom.shared` (which returns the old value, a round trip the count has no use for).
    #[test]
    fn the_histogram_counts_with_reductions() {
        for kernel in [radix_histogram_u32, radix_histogram_u64] {
            let name = kernel.name();
            let body = super::super::kernel_ptx(name);
            assert!(body.contains("red.shared.add.u32"), "{name}");
            assert!(!body.contains("atom.shared"), "{name}");
        }
    }

    #[test]
    fn scratch_grows_with_the_keys_and_values() {
        assert_eq!(scratch_bytes(1, 8, 16), 0);
        let small = scratch_bytes(1000, 4, 0);
        assert!(small >= 4000);
        assert!(scratch_bytes(1000, 4, 8) >= small + 8000);
        assert!(scratch_bytes(1 << 24, 8, 0) >= 8 << 24);
    }
}
