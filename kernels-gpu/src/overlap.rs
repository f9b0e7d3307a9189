//! Index math of host-slice sorts that overlap their copies with the sort.
//!
//! The host uploads the keys in chunks of [`OVERLAP_CHUNK`](crate::tuning::OVERLAP_CHUNK) keys
//! and sorts each chunk as soon as it has landed, while the next one is in flight: the bitonic
//! sort runs its stages up to the chunk ([`window::windows`](crate::bitonic::window::windows) per
//! chunk), the merge sort its tile sort and merge passes up to runs of a chunk
//! ([`merge::chunk_schedule`](crate::merge::chunk_schedule)). The passes over the whole array
//! that remain ([`window::windows_from`](crate::bitonic::window::windows_from) and
//! [`merge::schedule`](crate::merge::schedule) from the chunk on) end with launches that can
//! be cut by output range, so that the copy of each range back to the host starts as soon as
//! that range is written: the merge sort's last pass writes its output tile by tile, and is
//! launched in a few ranges of tiles ([`tile_parts`]); the bitonic sort's last windows, those
//! that compare keys within chunks only
//! ([`WindowPass::stays_within`](crate::bitonic::window::WindowPass::stays_within)), run chunk by chunk
//! ([`WindowPass::restricted`](crate::bitonic::window::WindowPass::restricted)).

use core::ops::Range;

/// The chunks of `n` keys, `chunk > 0` keys each but the last, which holds the rest.
///
/// ```
/// use kernels_gpu::overlap::chunk_ranges;
///
/// assert!(chunk_ranges(10, 4).eq([0..4, 4..8, 8..10]));
/// assert!(chunk_ranges(8, 4).eq([0..4, 4..8]));
/// assert_eq!(chunk_ranges(0, 4).count(), 0);
/// ```
pub fn chunk_ranges(n: u64, chunk: u64) -> impl Iterator<Item = Range<u64>> {
    (0..n.div_ceil(chunk)).map(move |i| i * chunk..((i + 1) * chunk).min(n))
}

/// `tiles` tiles cut into `parts` consecutive ranges (fewer when there are fewer tiles, at least
/// one), as equal as can be: the launches of a last pass split so that each range's copy can
/// start when its launch is done. Every range holds at least one tile when `tiles > 0`.
///
/// ```
/// use kernels_gpu::overlap::tile_parts;
///
/// assert!(tile_parts(10, 4).eq([0..2, 2..5, 5..7, 7..10]));
/// assert!(tile_parts(3, 4).eq([0..1, 1..2, 2..3]));
/// assert!(tile_parts(5, 1).eq([0..5]));
/// ```
pub fn tile_parts(tiles: u64, parts: u64) -> impl Iterator<Item = Range<u64>> {
    let parts = parts.clamp(1, tiles.max(1));
    (0..parts).map(move |i| i * tiles / parts..(i + 1) * tiles / parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_keys_in_order() {
        for chunk in [1u64, 2, 3, 8, 1 << 22] {
            for n in [
                0u64,
                1,
                2,
                7,
                8,
                9,
                100,
                (1 << 22) - 1,
                1 << 22,
                (1 << 22) + 1,
            ] {
                let ranges: Vec<Range<u64>> = chunk_ranges(n, chunk).collect();
                assert_eq!(
                    ranges.len() as u64,
                    n.div_ceil(chunk),
                    "n = {n}, chunk = {chunk}"
                );
                let mut at = 0;
                for (i, r) in ranges.iter().enumerate() {
                    assert_eq!(r.start, at);
                    assert!(!r.is_empty());
                    if i + 1 < ranges.len() {
                        assert_eq!(r.end - r.start, chunk, "only the last chunk is short");
                    }
                    at = r.end;
                }
                assert_eq!(at, n);
            }
        }
        let c = 1u64 << 22;
        let last = chunk_ranges(3 * c + 12345, c).last();
        assert_eq!(last, Some(3 * c..3 * c + 12345));
    }

    #[test]
    fn tile_parts_cover_the_tiles_in_order() {
        for tiles in [0u64, 1, 2, 3, 4, 5, 17, 2048, 16384, 16391] {
            for parts in [0u64, 1, 2, 3, 4, 8, 100] {
                let ranges: Vec<Range<u64>> = tile_parts(tiles, parts).collect();
                assert_eq!(ranges.len() as u64, parts.clamp(1, tiles.max(1)));
                let mut at = 0;
                for r in &ranges {
                    assert_eq!(r.start, at);
                    assert!(tiles == 0 || !r.is_empty(), "{tiles} tiles, {parts} parts");
                    let (len, even) = (r.end - r.start, tiles / ranges.len() as u64);
                    assert!(len == even || len == even + 1);
                    at = r.end;
                }
                assert_eq!(at, tiles);
            }
        }
    }
}
