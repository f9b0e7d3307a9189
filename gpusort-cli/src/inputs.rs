//! Seeded test and benchmark inputs: [`generate`] keys of a [`Dist`].
//!
//! ```
//! use gpusort_cli::inputs::{Dist, generate};
//!
//! let keys: Vec<u32> = generate(1000, Dist::Few, 42);
//! assert_eq!(keys, generate::<u32>(1000, Dist::Few, 42)); // the same seed, the same keys
//! ```

use crate::keys::SortKey;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Input distributions, after std's sort tests (ascending, descending, all equal, few
/// distinct, organ pipe, saw) plus uniform keys and small integers with many repeats (`blog`).
///
/// On the command line (`--dist`) the names are kebab-case: `uniform`, `blog`, `sorted`,
/// `reverse`, `equal`, `few`, `organ-pipe`, `saw`.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, SortKey};
/// use gpusort_cli::inputs::{Dist, generate};
///
/// let sorted: Vec<i64> = generate(500, Dist::Sorted, 7);
/// assert!(sorted.is_sorted());
/// let equal: Vec<f32> = generate(500, Dist::Equal, 7);
/// assert!(equal.iter().all(|k| k.to_bits() == equal[0].to_bits()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Dist {
    /// Independent random keys over the whole type (finite values for floats).
    Uniform,
    /// Random integers 0 ..= 10000, the input of the classic GPU bitonic-sort blog examples:
    /// about n / 10^4 copies of each key.
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
    ///
    /// ```
    /// use gpusort_cli::inputs::{Dist, generate};
    /// for dist in Dist::ALL {
    ///     assert_eq!(generate::<u64>(33, dist, 1).len(), 33);
    /// }
    /// ```
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

/// `n` keys of distribution `dist`, the same for the same `seed` (and the same on any number
/// of threads).
///
/// # Current implementation
///
/// ChaCha8 streams, one per chunk of 65536 keys seeded with `seed + chunk index`, filled on
/// rayon's threads; [`Dist::Sorted`] and [`Dist::Reverse`] are then sorted with rayon. Keys
/// come from [`SortKey::from_random`] and [`SortKey::from_small`].
///
/// # Examples
///
/// ```
/// use gpusort_cli::inputs::{Dist, generate};
///
/// let blog: Vec<u32> = generate(10_000, Dist::Blog, 42);
/// assert!(blog.iter().all(|&k| k <= 10_000));
/// let saw: Vec<u32> = generate(2500, Dist::Saw, 0);
/// assert_eq!((saw[999], saw[1000]), (999, 0));
/// ```
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
