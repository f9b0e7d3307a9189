//! The multi-GPU sort against std's: on two or more GPUs when present (skipped with a message
//! otherwise; `REQUIRE_GPUS=N` makes fewer than N devices a failure), and everywhere a GPU is,
//! its single-GPU path (G = 1) and its multi-part path with every part on the one device, each
//! part in a CUDA context of its own, so that a handle used from the wrong part fails there too.
//! Lengths around tiles and powers of two, uneven and empty parts, every key type, both orders,
//! many duplicates, already sorted and reversed input, host-staged exchange, and the on-GPU
//! generation and check.

use gpusort::multi::{Exchange, Link};
use gpusort::{Error, MultiGpuSorter, Order, SortKey};
use gpusort_suite::{gpu_or_skip, gpus_or_skip, multi_gpu, sprinkle_specials, test_seed};
use kernels_gpu::tuning::MERGE_TILE;
use rand::{Rng, SeedableRng, rngs::StdRng};

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];

/// std's sort of the keys' bits in `order`.
fn reference<K: SortKey>(keys: &[K], order: Order) -> Vec<K::Bits> {
    let mut sorted: Vec<K> = keys.to_vec();
    sorted.sort_by_key(|k| k.ordered_bits(order));
    sorted.iter().map(|k| k.to_bits()).collect()
}

fn assert_sorts<K: SortKey>(multi: &MultiGpuSorter, keys: &[K], order: Order, what: &str) {
    let mut got = keys.to_vec();
    let stats = multi
        .sort(&mut got, order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let got: Vec<K::Bits> = got.iter().map(|k| k.to_bits()).collect();
    let want = reference(keys, order);
    if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
        panic!(
            "{what}, {} keys, {order:?}, {} GPUs: at {i} got {:?}, expected {:?} ({stats})",
            keys.len(),
            multi.gpus().len(),
            got[i],
            want[i]
        );
    }
    assert_eq!(got.len(), want.len(), "{what}");
}

fn random<K: SortKey>(n: usize, rng: &mut StdRng) -> Vec<K> {
    (0..n).map(|_| K::from_random(rng.random())).collect()
}

/// Lengths that make parts of one key, parts around the merge tile, and uneven parts.
fn lengths(g: usize) -> Vec<usize> {
    let t = MERGE_TILE as usize;
    let mut v = vec![
        0,
        1,
        2,
        g - 1,
        g,
        g + 1,
        1000,
        t * g - 1,
        t * g + 3,
        3 * t * g + 777,
    ];
    v.extend([(1 << 20) + 12345, 1 << 21]);
    v
}

fn sort_everything(multi: &MultiGpuSorter, seed: u64, what: &str) {
    let g = multi.gpus().len();
    let mut rng = StdRng::seed_from_u64(seed);
    for n in lengths(g) {
        for order in ORDERS {
            assert_sorts::<u32>(multi, &random(n, &mut rng), order, what);
            assert_sorts::<u64>(multi, &random(n, &mut rng), order, what);
        }
    }
    for order in ORDERS {
        let n = 100_003;
        assert_sorts::<i32>(multi, &random(n, &mut rng), order, what);
        assert_sorts::<i64>(multi, &random(n, &mut rng), order, what);
        assert_sorts::<f64>(multi, &random(n, &mut rng), order, what);
        let mut floats: Vec<f32> = random(n, &mut rng);
        sprinkle_specials(&mut floats, 7);
        assert_sorts(multi, &floats, order, what);
        // Few distinct keys: long runs of equals straddle every cut.
        let few: Vec<u32> = (0..n).map(|_| rng.random_range(0..3)).collect();
        assert_sorts(multi, &few, order, what);
        let equal = vec![42u64; n];
        assert_sorts(multi, &equal, order, what);
        let sorted: Vec<u32> = (0..n as u32).collect();
        assert_sorts(multi, &sorted, order, what);
        let reversed: Vec<u32> = (0..n as u32).rev().collect();
        assert_sorts(multi, &reversed, order, what);
    }
}

#[test]
fn one_gpu_path_sorts_like_std() {
    let Some(_gpu) = gpu_or_skip("the multi-GPU sort's one-GPU path") else {
        return;
    };
    let multi = multi_gpu(&[0], Exchange::Auto).expect("device 0");
    sort_everything(&multi, test_seed(61), "one GPU");
}

#[test]
fn parts_sharing_one_gpu_sort_like_std() {
    let Some(_gpu) = gpu_or_skip("the multi-part sort on one GPU") else {
        return;
    };
    for g in [2, 3, 4] {
        let multi = multi_gpu(&vec![0; g], Exchange::Auto).expect("device 0");
        // Each part works in a context of its own: peer copies between the contexts.
        assert_eq!(multi.link(0, 1), Link::Peer);
        assert_eq!(multi.link(1, 1), Link::Local);
        sort_everything(
            &multi,
            test_seed(62 + g as u64),
            &format!("{g} parts on one GPU"),
        );
    }
}

/// A fresh sorter for each length, so that every kernel family is loaded for the first time
/// inside the sort: with parts in separate contexts, a module loaded (or a kernel launched)
/// while another part's context is current fails with "invalid resource handle", as it does on
/// two real GPUs. Small lengths matter most: their parts sort without the merge kernels, so
/// those load first in the merge of the received runs.
#[test]
fn parts_load_and_launch_kernels_in_their_own_contexts() {
    let Some(_gpu) = gpu_or_skip("the multi-part sort in separate contexts") else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(test_seed(69));
    for n in [0, 1, 2, 3, 500, 1000, 100_000] {
        for ordinals in [vec![0, 0], vec![0, 0, 0]] {
            let what = format!("{} parts on one GPU, fresh sorter", ordinals.len());
            let multi = multi_gpu(&ordinals, Exchange::Auto).expect("device 0");
            assert_sorts::<u32>(&multi, &random(n, &mut rng), Order::Ascending, &what);
            let multi = multi_gpu(&ordinals, Exchange::Auto).expect("device 0");
            assert_sorts::<f64>(&multi, &random(n, &mut rng), Order::Descending, &what);
            let multi = multi_gpu(&ordinals, Exchange::Host).expect("device 0");
            assert_sorts::<u64>(&multi, &random(n, &mut rng), Order::Ascending, &what);
        }
    }
}

#[test]
fn every_gpu_sorts_like_std() {
    let count = gpus_or_skip("the multi-GPU sort", 2);
    if count < 2 {
        return;
    }
    for g in 2..=count {
        let multi = multi_gpu(&(0..g as u32).collect::<Vec<_>>(), Exchange::Auto).expect("GPUs");
        println!("{g} GPUs, link 0→1: {:?}", multi.link(0, 1));
        sort_everything(&multi, test_seed(70 + g as u64), &format!("{g} GPUs"));
    }
}

#[test]
fn host_staged_exchange_sorts_like_std() {
    let count = gpus_or_skip("the host-staged multi-GPU exchange", 2);
    if count < 2 {
        return;
    }
    let ordinals: Vec<u32> = (0..count as u32).collect();
    let multi = multi_gpu(&ordinals, Exchange::Host).expect("GPUs");
    assert_eq!(multi.link(0, 1), Link::Host);
    let mut rng = StdRng::seed_from_u64(test_seed(80));
    for n in [1000, (1 << 21) + 7] {
        let mut keys: Vec<u32> = random(n, &mut rng);
        let stats = multi.sort(&mut keys, Order::Ascending).expect("sort");
        assert!(keys.is_sorted(), "{n} keys");
        assert!(stats.links.contains(&Link::Host), "{stats}");
    }
}

#[test]
fn keys_made_on_the_gpus_are_sorted_and_checked_there() {
    let Some(_gpu) = gpu_or_skip("the on-GPU generation and check") else {
        return;
    };
    let count = gpus_or_skip("the on-GPU generation and check on several GPUs", 1).max(1);
    let mut setups = vec![vec![0u32, 0, 0]];
    setups.push((0..count as u32).collect());
    for ordinals in setups {
        let multi = multi_gpu(&ordinals, Exchange::Auto).expect("GPUs");
        for order in ORDERS {
            let n = (1 << 22) + 99;
            let mut parts = multi.alloc_parts::<u64>(n).expect("parts");
            multi.fill_random(&mut parts, 5).expect("fill");
            let before = multi.check(&parts, order).expect("check");
            assert_eq!(before.n, n);
            assert!(!before.sorted(), "random keys are not sorted");
            multi.sort_device(&mut parts, order).expect("sort");
            let after = multi.check(&parts, order).expect("check");
            assert!(after.sorted(), "{ordinals:?} {order:?}: {after:?}");
            assert_eq!(after.checksum, before.checksum, "the multiset changed");
            // The check sees a broken boundary and a changed key.
            let mut host: Vec<u64> = vec![0; parts[0].len()];
            use cust::memory::CopyDestination;
            multi.gpus()[0].bind().expect("bind");
            parts[0].copy_to(&mut host[..]).expect("copy");
            let mut key = host[0];
            key = key.wrapping_add(1);
            let last = host.len() - 1;
            host[last] = if order == Order::Ascending {
                u64::MAX
            } else {
                0
            };
            host[0] = key;
            parts[0].copy_from(&host[..]).expect("copy");
            let broken = multi.check(&parts, order).expect("check");
            assert_ne!(broken.checksum, before.checksum);
            if ordinals.len() > 1 {
                assert!(broken.bad_boundaries > 0, "{broken:?}");
            }
        }
    }
}

#[test]
fn a_part_per_gpu_is_required() {
    let Some(_gpu) = gpu_or_skip("the multi-GPU part count check") else {
        return;
    };
    let multi = multi_gpu(&[0, 0], Exchange::Auto).expect("device 0");
    let mut parts = multi.alloc_parts::<u32>(10).expect("parts");
    parts.pop();
    let err = multi.sort_device(&mut parts, Order::Ascending).unwrap_err();
    assert!(
        matches!(err, Error::PartCount { parts: 1, gpus: 2 }),
        "{err}"
    );
}
