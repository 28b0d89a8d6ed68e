//! The batched narrow phase (`narrow/batch.rs`) against the scalar one:
//! `overlap_intervals` must give `overlap_interval`'s answer for every
//! pair, bit for bit (including the sign of zero), whichever pairs share a
//! batch. Pairs from every family of the test generators (the paper's
//! uniform frames, oriented boxes, slivers, far offsets, near-touching
//! placements), in 3D, moving and static, with parallelepipeds made common
//! so most pairs take the batched kernel.
//!
//! The long run: `cargo test --release --test batch_narrow -- --ignored`.

mod support;

use fmbgrid::{Frame3, FrameKind, overlap_interval, overlap_intervals};
use rand::Rng;
use support::{Set, TestRng, gen_pair, rng};

/// `f` as a parallelepiped (most pairs of a step are box pairs).
fn as_cuboid(f: &Frame3) -> Option<Frame3> {
    Frame3::cuboid(f.origin(), f.components()).ok()?.with_velocity(f.velocity()).ok()
}

fn pairs(rng: &mut TestRng, n: usize) -> Vec<(Frame3, Frame3)> {
    let sets = [Set::Paper, Set::Obb, Set::Sliver, Set::Far, Set::NearTouch];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let set = sets[rng.random_range(0..sets.len())];
        let moving = rng.random_bool(0.9);
        let (a, b) = gen_pair::<3>(set, moving, rng);
        let boxes = rng.random_bool(0.8);
        let pair = if boxes { as_cuboid(&a).zip(as_cuboid(&b)) } else { Some((a, b)) };
        if let Some(p) = pair {
            out.push(p);
        }
    }
    out
}

fn same(x: Option<[f64; 2]>, y: Option<[f64; 2]>) -> bool {
    x.map(|t| t.map(f64::to_bits)) == y.map(|t| t.map(f64::to_bits))
}

fn check(seed: u64, n: usize) {
    let mut rng = rng(seed);
    let pairs = pairs(&mut rng, n);
    let mut got = Vec::new();
    overlap_intervals(&pairs, &mut got);
    let (mut boxes, mut hits) = (0, 0);
    for (i, ((a, b), g)) in pairs.iter().zip(&got).enumerate() {
        let want = overlap_interval(a, b);
        assert!(same(*g, want), "pair {i}: batched {g:?}, scalar {want:?}\n{a:?}\n{b:?}");
        let batched = a.kind() == FrameKind::Cuboid && b.kind() == FrameKind::Cuboid && a.velocity() != b.velocity();
        boxes += usize::from(batched);
        hits += usize::from(batched && want.is_some());
    }
    // The batched kernel must see many pairs, hits and misses alike.
    assert!(boxes > n / 2 && hits > n / 20 && hits < boxes, "{boxes} box pairs, {hits} hits");
}

#[test]
fn batched_intervals_equal_the_scalar_ones() {
    check(1, 40_000);
}

#[test]
fn batched_intervals_in_any_batch_order() {
    // The same pairs in another order form other batches.
    let mut rng = rng(2);
    let mut p = pairs(&mut rng, 5_000);
    let mut first = Vec::new();
    overlap_intervals(&p, &mut first);
    p.reverse();
    let mut second = Vec::new();
    overlap_intervals(&p, &mut second);
    second.reverse();
    assert!(first.iter().zip(&second).all(|(x, y)| same(*x, *y)));
}

#[test]
#[ignore = "long: two million pairs"]
fn batched_intervals_long_run() {
    for seed in 10..20 {
        check(seed, 200_000);
    }
}
