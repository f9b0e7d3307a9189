//! Seeded test and benchmark inputs.

use crate::keys::SortKey;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Input distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Dist {
    /// Independent random keys over the whole type (finite values for floats).
    Uniform,
    /// Random integers 0 ..= 10000, as in the blog seed.
    Blog,
    /// Random keys, already ascending.
    Sorted,
    /// Random keys, descending.
    Reverse,
    /// One key repeated.
    Equal,
    /// Eight distinct keys.
    Few,
    /// Ascending then descending ("organ pipe").
    OrganPipe,
    /// Repeated ascending runs of 1000 ("saw").
    Saw,
}

impl Dist {
    /// Every distribution.
    pub const ALL: [Dist; 8] = [
        Dist::Uniform,
        Dist::Blog,
        Dist::Sorted,
        Dist::Reverse,
        Dist::Equal,
        Dist::Few,
        Dist::OrganPipe,
        Dist::Saw,
    ];
}

/// Keys generated per independently seeded chunk (so generation runs on all cores and the
/// result does not depend on the thread count).
const CHUNK: usize = 1 << 16;

/// `n` keys of distribution `dist`, the same for the same `seed`.
pub fn generate<K: SortKey>(n: usize, dist: Dist, seed: u64) -> Vec<K> {
    let mut keys = vec![K::from_small(0); n];
    let few: Vec<K> = {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        (0..8).map(|_| K::from_random(rng.random())).collect()
    };
    keys.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(c as u64));
            let first = c * CHUNK;
            for (i, key) in chunk.iter_mut().enumerate() {
                let at = first + i;
                *key = match dist {
                    Dist::Uniform | Dist::Sorted | Dist::Reverse => K::from_random(rng.random()),
                    Dist::Blog => K::from_small(rng.random_range(0..=10_000)),
                    Dist::Equal => few[0],
                    Dist::Few => few[rng.random_range(0..few.len())],
                    Dist::OrganPipe => K::from_small(at.min(n - 1 - at) as u32),
                    Dist::Saw => K::from_small((at % 1000) as u32),
                };
            }
        });
    match dist {
        Dist::Sorted => keys.par_sort_unstable_by_key(|k| k.ordered_bits(crate::Order::Ascending)),
        Dist::Reverse => {
            keys.par_sort_unstable_by_key(|k| k.ordered_bits(crate::Order::Descending))
        }
        _ => {}
    }
    keys
}
