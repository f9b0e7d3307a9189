//! What moves where once the cuts are known: the copies of the exchange, and the merge passes
//! that turn each GPU's received runs into one sorted run.

use super::select::Cuts;

/// One copy of the exchange: keys `src..src + len` of GPU `from`'s part go to positions
/// `dst..dst + len` of GPU `to`'s receive buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Copy {
    pub from: usize,
    pub to: usize,
    pub src: u64,
    pub dst: u64,
    pub len: u64,
}

/// The copies that give GPU `to` its runs: from every part in part order (so equal keys keep
/// the parts' order), empty ones left out.
pub(crate) fn copies_to(cuts: &Cuts, to: usize) -> Vec<Copy> {
    let mut dst = 0;
    (0..cuts[to].len())
        .filter_map(|from| {
            let (src, end) = (cuts[to][from], cuts[to + 1][from]);
            let copy = Copy {
                from,
                to,
                src,
                dst,
                len: end - src,
            };
            dst += copy.len;
            (copy.len > 0).then_some(copy)
        })
        .collect()
}

/// One merge launch: the runs `offset..offset + a_len` and `offset + a_len..offset + len` of
/// the source buffer merged into the same positions of the destination (`a_len = len` moves a
/// run across unchanged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Merge {
    pub offset: u64,
    pub a_len: u64,
    pub len: u64,
}

/// The merge passes over runs of `lens` (in order, laid end to end in the receive buffer): each
/// pass merges neighbouring pairs (a last odd run is moved across) and goes to the other
/// buffer; the last also decodes the keys. With `odd`, there is an odd number of them, so that
/// passes alternating receive buffer → part → receive buffer … end in the part: with one run
/// (or none) a single pass that moves it, with an even number of merge passes one more that
/// moves the merged run across. Without, just the merges (none for one run).
pub(crate) fn merge_passes(lens: &[u64], odd: bool) -> Vec<Vec<Merge>> {
    let mut runs: Vec<u64> = lens.iter().copied().filter(|&l| l > 0).collect();
    let mut passes = Vec::new();
    while runs.len() > 1 || (odd && passes.len() % 2 == 0) {
        let mut offset = 0;
        let mut pass = Vec::new();
        let merged: Vec<u64> = runs
            .chunks(2)
            .map(|pair| {
                let len = pair.iter().sum();
                pass.push(Merge {
                    offset,
                    a_len: pair[0],
                    len,
                });
                offset += len;
                len
            })
            .collect();
        passes.push(pass);
        runs = merged;
        if runs.is_empty() {
            break;
        }
    }
    passes
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn copies_follow_the_cuts_in_part_order() {
        let cuts = vec![vec![0, 0, 0], vec![2, 1, 0], vec![4, 1, 3]];
        assert_eq!(
            copies_to(&cuts, 0),
            [
                Copy {
                    from: 0,
                    to: 0,
                    src: 0,
                    dst: 0,
                    len: 2
                },
                Copy {
                    from: 1,
                    to: 0,
                    src: 0,
                    dst: 2,
                    len: 1
                },
            ]
        );
        assert_eq!(
            copies_to(&cuts, 1),
            [
                Copy {
                    from: 0,
                    to: 1,
                    src: 2,
                    dst: 0,
                    len: 2
                },
                Copy {
                    from: 2,
                    to: 1,
                    src: 0,
                    dst: 2,
                    len: 3
                },
            ]
        );
    }

    /// Runs the passes on (key, origin) vectors with a stable reference merge.
    fn run_passes(runs: &[Vec<(u8, u32)>]) -> Vec<(u8, u32)> {
        let lens: Vec<u64> = runs.iter().map(|r| r.len() as u64).collect();
        let mut src: Vec<(u8, u32)> = runs.concat();
        let mut dst = src.clone();
        let passes = merge_passes(&lens, true);
        assert_eq!(passes.len() % 2, 1, "an odd number of passes: {passes:?}");
        for pass in &passes {
            let covered: u64 = pass.iter().map(|m| m.len).sum();
            assert_eq!(covered, src.len() as u64);
            for m in pass {
                let (o, a, l) = (m.offset as usize, m.a_len as usize, m.len as usize);
                let mut merged = src[o..o + a].to_vec();
                merged.extend_from_slice(&src[o + a..o + l]);
                merged.sort_by_key(|p| p.0); // stable: A's equal keys stay first
                dst[o..o + l].copy_from_slice(&merged);
            }
            std::mem::swap(&mut src, &mut dst);
        }
        src
    }

    proptest! {
        #[test]
        fn passes_merge_any_runs_stably(
            runs in prop::collection::vec(prop::collection::vec(0u8..6, 0..20), 0..9),
        ) {
            let mut origin = 0u32;
            let runs: Vec<Vec<(u8, u32)>> = runs
                .into_iter()
                .map(|mut r| {
                    r.sort();
                    r.into_iter().map(|k| { origin += 1; (k, origin) }).collect()
                })
                .collect();
            let mut expected = runs.concat();
            expected.sort_by_key(|p| p.0);
            prop_assert_eq!(run_passes(&runs), expected);
        }
    }

    #[test]
    fn pass_counts() {
        assert_eq!(merge_passes(&[], true).len(), 1);
        assert_eq!(merge_passes(&[5], true).len(), 1);
        assert_eq!(merge_passes(&[5, 0, 0], true).len(), 1);
        assert_eq!(merge_passes(&[5, 3], true).len(), 1);
        assert_eq!(merge_passes(&[5, 3, 2], true).len(), 3);
        assert_eq!(merge_passes(&[5, 3, 2, 1], true).len(), 3);
        assert_eq!(merge_passes(&[1; 8], true).len(), 3);
        assert_eq!(merge_passes(&[5], false).len(), 0);
        assert_eq!(merge_passes(&[5, 3, 2, 1], false).len(), 2);
        assert_eq!(merge_passes(&[1; 8], false).len(), 3);
    }
}
