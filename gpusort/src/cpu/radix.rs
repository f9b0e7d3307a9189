//! A stable radix sort on the CPU, on all cores: the fallback without a GPU, and the CPU
//! argsort.
//!
//! The keys are sorted by their [ordered bits](crate::SortKey::ordered_bits), so the result is
//! `total_cmp`'s order in both directions, the same bit for bit as std's sort.
//!
//! One most-significant-digit pass, on all cores, scatters the items by the 11 highest bits
//! that differ between the smallest and the largest key into 2048 buckets of consecutive
//! ranges; each bucket, on its own, is then sorted by the bits below with least-significant-
//! digit passes that stay in the core's cache (buckets too large for that are split again the
//! same way first). Every pass keeps the input order of equal digits, so the sort is stable,
//! and passes over digits that all keys of a bucket share are skipped.
//!
//! On 2 cores it sorts 2^26 `u32` keys about three times as fast as rayon's
//! `par_sort_unstable`: the numbers are in `docs/benchmarks.md` and `docs/decisions.md`.

use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Bits of the digit of a most-significant-digit pass: 2048 buckets, whose counters and write
/// positions stay in the first-level cache.
const MSD_BITS: u32 = 11;

/// Largest digit of a least-significant-digit pass within a bucket.
const LSD_BITS: u32 = 11;

/// Buckets of up to this many bytes are sorted by least-significant-digit passes (they and
/// their scratch fit in a core's second-level cache); larger ones are split again first.
const LOCAL_BYTES: usize = 1 << 20;

/// Buckets of up to this many items are sorted by insertion.
const INSERTION_MAX: usize = 32;

/// Fewest items per parallel piece of a most-significant-digit pass.
const MIN_PIECE: usize = 1 << 16;

/// Below this many items the sorts of this module call std's instead.
pub(crate) const RADIX_MIN: usize = 1 << 10;

/// A pointer to the output of a scatter, shared by the threads that write disjoint parts of it.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);

impl<T> Out<T> {
    /// The address of item `i`. A method, so that closures capture the whole `Out` (which is
    /// `Send`), not its pointer field.
    fn at(self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

// SAFETY: the threads that share an `Out` write disjoint items of it (see `msd_scatter`).
unsafe impl<T: Send> Send for Out<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Out<T> {}

/// An empty vector with room for `n` items, if [`crate::memory::check`] says the process can
/// have them and the allocation succeeds; `None` otherwise.
pub(crate) fn scratch<T>(n: usize) -> Option<Vec<T>> {
    let bytes = (n as u64).checked_mul(size_of::<T>() as u64)?;
    crate::memory::check(bytes).ok()?;
    let mut v = Vec::new();
    crate::memory::fallible(|| v.try_reserve_exact(n)).ok()?;
    Some(v)
}

/// The bit above the highest bit in which the keys of `items` differ: 0 if all are equal.
pub(crate) fn varying_bits<T: Sync>(items: &[T], key: &(impl Fn(&T) -> u64 + Sync)) -> u32 {
    // A bit differs between keys where some have it and some do not: set in the keys' OR and
    // clear in their AND.
    let (or, and) = items
        .par_chunks(MIN_PIECE)
        .map(|chunk| {
            chunk
                .iter()
                .fold((0, u64::MAX), |(or, and), t| (or | key(t), and & key(t)))
        })
        .reduce(|| (0, u64::MAX), |a, b| (a.0 | b.0, a.1 & b.1));
    u64::BITS - (or & !and).leading_zeros()
}

/// Writes the items of `src`, converted by `convert(item, index)`, to `dst` (as long as `src`)
/// ordered by their digit `(key >> shift) & (2^bits - 1)`, stably; returns each digit's count.
/// Pieces of `src` are scattered on rayon's threads, each into its own ranges of every bucket.
///
/// # Safety
/// `dst` must be valid for writes of `src.len()` items, and not be read or written by anyone
/// else until this returns. Every item of it is written exactly once.
unsafe fn msd_scatter<S: Sync, T: Copy + Send + Sync>(
    src: &[S],
    dst: Out<T>,
    convert: &(impl Fn(&S, usize) -> T + Sync),
    key: &(impl Fn(&T) -> u64 + Sync),
    shift: u32,
    bits: u32,
) -> Vec<usize> {
    let n = src.len();
    let buckets = 1usize << bits;
    let mask = buckets as u64 - 1;
    let pieces = (rayon::current_num_threads() * 4)
        .min(n.div_ceil(MIN_PIECE))
        .max(1);
    let piece = n.div_ceil(pieces).max(1);
    let digit = |t: &T| ((key(t) >> shift) & mask) as usize;
    let mut offsets: Vec<Vec<usize>> = src
        .par_chunks(piece)
        .enumerate()
        .map(|(p, items)| {
            let mut counts = vec![0usize; buckets];
            for (i, s) in items.iter().enumerate() {
                counts[digit(&convert(s, p * piece + i))] += 1;
            }
            counts
        })
        .collect();
    // Bucket by bucket, the pieces' ranges follow each other in input order: stable.
    let mut counts = vec![0usize; buckets];
    let mut start = 0;
    for (d, count) in counts.iter_mut().enumerate() {
        for piece_offsets in &mut offsets {
            let c = piece_offsets[d];
            piece_offsets[d] = start;
            start += c;
            *count += c;
        }
    }
    src.par_chunks(piece)
        .zip(offsets.par_iter_mut())
        .enumerate()
        .for_each(|(p, (items, next))| {
            for (i, s) in items.iter().enumerate() {
                let t = convert(s, p * piece + i);
                let slot = &mut next[digit(&t)];
                // SAFETY: `*slot` runs through this piece's range of the bucket, which no other
                // piece writes, and stays below `n` (the counts add up to `n`).
                unsafe { dst.at(*slot).write(t) };
                *slot += 1;
            }
        });
    counts
}

/// Splits `items` into consecutive slices of the lengths `counts`.
pub(crate) fn split_mut<'a, T>(mut items: &'a mut [T], counts: &[usize]) -> Vec<&'a mut [T]> {
    counts
        .iter()
        .map(|&c| {
            let (head, tail) = std::mem::take(&mut items).split_at_mut(c);
            items = tail;
            head
        })
        .collect()
}

/// Sorts the items of `a` stably by the bits of their keys below `top` (those above are the
/// same for all of them), with `b`, as long as `a`, as scratch; the result ends in `a` if
/// `into_a`, else in `b`.
pub(crate) fn sort_bits<T, F>(a: &mut [T], b: &mut [T], key: &F, top: u32, into_a: bool)
where
    T: Copy + Send + Sync,
    F: Fn(&T) -> u64 + Sync,
{
    let m = a.len();
    if size_of_val(a) > LOCAL_BYTES {
        // A bucket may hold few distinct keys: start at the highest bit in which they differ.
        let top = varying_bits(a, key);
        if top > 0 {
            let bits = top.min(MSD_BITS);
            let shift = top - bits;
            // SAFETY: `b` is as long as `a`, and borrowed mutably here.
            let counts =
                unsafe { msd_scatter(a, Out(b.as_mut_ptr()), &|t, _| *t, key, shift, bits) };
            split_mut(b, &counts)
                .into_par_iter()
                .zip(split_mut(a, &counts))
                .for_each(|(b, a)| sort_bits(b, a, key, shift, !into_a));
            return;
        }
    } else if m > INSERTION_MAX && top > 0 {
        return lsd(a, b, key, top, into_a);
    } else if top > 0 {
        insertion_sort(a, key);
    }
    if !into_a {
        b.copy_from_slice(a);
    }
}

/// Stable insertion sort by `key`, for a handful of items.
fn insertion_sort<T: Copy>(items: &mut [T], key: &impl Fn(&T) -> u64) {
    for i in 1..items.len() {
        let item = items[i];
        let k = key(&item);
        let mut j = i;
        while j > 0 && key(&items[j - 1]) > k {
            items[j] = items[j - 1];
            j -= 1;
        }
        items[j] = item;
    }
}

/// [`sort_bits`] by least-significant-digit passes, for a bucket that fits in the cache: one
/// read counts every digit, passes over digits all items share are skipped, and the others
/// alternate between `a` and `b`.
fn lsd<T: Copy>(a: &mut [T], b: &mut [T], key: &impl Fn(&T) -> u64, top: u32, into_a: bool) {
    let m = a.len();
    let passes = top.div_ceil(LSD_BITS);
    let width = top.div_ceil(passes);
    let buckets = 1usize << width;
    let mask = buckets as u64 - 1;
    let mut counts = vec![0u32; passes as usize * buckets];
    let digit = |k: u64, p: u32| ((k >> (p * width)) & mask) as usize;
    if passes == 2 {
        // The common case of 4-byte keys, unrolled.
        let (low, high) = counts.split_at_mut(buckets);
        for t in a.iter() {
            let k = key(t);
            low[digit(k, 0)] += 1;
            high[digit(k, 1)] += 1;
        }
    } else {
        for t in a.iter() {
            let k = key(t);
            for (p, c) in counts.chunks_exact_mut(buckets).enumerate() {
                c[digit(k, p as u32)] += 1;
            }
        }
    }
    let mut in_a = true;
    let mut next = vec![0usize; buckets];
    for (p, c) in counts.chunks_exact(buckets).enumerate() {
        if c.iter().any(|&c| c as usize == m) {
            continue;
        }
        let mut start = 0;
        for (slot, &c) in next.iter_mut().zip(c) {
            *slot = start;
            start += c as usize;
        }
        let (from, to) = if in_a { (&*a, &mut *b) } else { (&*b, &mut *a) };
        let shift = p as u32 * width;
        for t in from {
            let slot = &mut next[((key(t) >> shift) & mask) as usize];
            to[*slot] = *t;
            *slot += 1;
        }
        in_a = !in_a;
    }
    match (in_a, into_a) {
        (true, false) => b.copy_from_slice(a),
        (false, true) => a.copy_from_slice(b),
        _ => {}
    }
}

/// The first pass of a sort of `src` into `out`: clears `out` and fills it with the items of
/// `src`, converted by `convert(item, index)`, in buckets of their key bits `shift..top`, where
/// `shift = top.saturating_sub(11)`, stably. Returns the buckets' lengths and `shift`: sorting
/// each bucket by the bits below `shift` ([`sort_bits`]) finishes the sort.
///
/// # Panics
/// If `out` has no room for `src.len()` items.
pub(crate) fn scatter_into<S, T, F>(
    src: &[S],
    out: &mut Vec<T>,
    convert: impl Fn(&S, usize) -> T + Sync,
    key: &F,
    top: u32,
) -> (Vec<usize>, u32)
where
    S: Sync,
    T: Copy + Send + Sync,
    F: Fn(&T) -> u64 + Sync,
{
    let n = src.len();
    out.clear();
    assert!(out.capacity() >= n, "the output has room for the items");
    let bits = top.min(MSD_BITS);
    let shift = top - bits;
    let spare: &mut [MaybeUninit<T>] = out.spare_capacity_mut();
    // SAFETY: `spare` has room for `n` items and is borrowed mutably here.
    let counts = unsafe {
        msd_scatter(
            src,
            Out(spare.as_mut_ptr().cast()),
            &convert,
            key,
            shift,
            bits,
        )
    };
    // SAFETY: the scatter wrote all `n` items.
    unsafe { out.set_len(n) };
    (counts, shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted_by_bits(items: &[(u64, u32)], top: u32) -> Vec<(u64, u32)> {
        let mut a = items.to_vec();
        let mut b = vec![(0, 0); a.len()];
        let key = |t: &(u64, u32)| t.0;
        sort_bits(&mut a, &mut b, &key, top, true);
        a
    }

    proptest! {
        #[test]
        fn sorts_stably_into_either_buffer(
            keys in proptest::collection::vec(any::<u64>(), 0..3000),
            narrow in 0u32..64,
            into_a: bool,
        ) {
            // Keys of `narrow` bits, so that digits repeat and some passes are skipped.
            let mask = if narrow == 0 { 0 } else { u64::MAX >> (64 - narrow) };
            let items: Vec<(u64, u32)> = keys.iter().map(|k| k & mask).zip(0..).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|t| t.0);
            let (mut a, mut b) = (items.clone(), vec![(0, 0); items.len()]);
            sort_bits(&mut a, &mut b, &|t: &(u64, u32)| t.0, 64, into_a);
            prop_assert_eq!(if into_a { a } else { b }, expected);
        }
    }

    #[test]
    fn large_buckets_are_split_again() {
        // 2^17 16-byte items exceed LOCAL_BYTES: a most-significant-digit pass, then buckets
        // of about 64 items; keys of few values, so that equal keys span buckets' passes.
        let items: Vec<(u64, u32)> = (0..1u32 << 17)
            .map(|i| (u64::from(i.wrapping_mul(2_654_435_761) % 5000) << 20, i))
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|t| t.0);
        assert_eq!(sorted_by_bits(&items, 64), expected);
    }

    #[test]
    fn no_scratch_where_memory_is_short() {
        // More than any process can have: the check refuses, and the caller sorts in place.
        if std::env::var_os("GPUSORT_NO_MEMORY_CHECK").is_none() {
            assert!(scratch::<u64>(usize::MAX / 16).is_none());
        }
        assert!(scratch::<u64>(1000).is_some_and(|v| v.capacity() >= 1000));
    }

    #[test]
    fn varying_bits_of_equal_and_differing_keys() {
        let key = |t: &u64| *t;
        assert_eq!(varying_bits(&[7u64, 7, 7], &key), 0);
        assert_eq!(varying_bits::<u64>(&[], &key), 0);
        assert_eq!(varying_bits(&[4u64, 5], &key), 1);
        assert_eq!(varying_bits(&[1u64 << 40, 3], &key), 41);
    }

    #[test]
    fn scatter_into_converts_and_finishes_in_buckets() {
        let src: Vec<u32> = (0..5000u32)
            .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
            .collect();
        let key = |t: &(u32, u32)| u64::from(t.0);
        let mut out = Vec::with_capacity(src.len());
        let (counts, shift) = scatter_into(&src, &mut out, |&k, i| (k, i as u32), &key, 12);
        assert_eq!((counts.len(), shift), (2048, 1));
        split_mut(&mut out, &counts).into_iter().for_each(|bucket| {
            let mut scratch = bucket.to_vec();
            sort_bits(bucket, &mut scratch, &key, shift, true);
        });
        let mut expected: Vec<(u32, u32)> = src.iter().copied().zip(0..).collect();
        expected.sort_by_key(|t| t.0);
        assert_eq!(out, expected);
    }
}
