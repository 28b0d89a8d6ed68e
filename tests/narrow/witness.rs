//! The witnesses that stand for the elimination. Moving pairs: a vertex of
//! one frame inside the other at the step's start and one at its end prove
//! the interval `[0, 1]`. Pairs at rest: a vertex of one frame inside the
//! other proves the contact (one of `A`'s tried before the system's rows).
//! Each must give the elimination's answer bit for bit: on every family of
//! `support::Set`, 2D and 3D, with the relative velocity scaled from 1e-9
//! to 1e6 of itself or zero, in both argument orders, through
//! `overlap_interval`, `intersect` and `overlaps`. The witness's margin
//! grows with the magnitudes of the pair's local terms, velocity included:
//! with a fixed 1e-9, near-touching pairs at 1e6 of their speed had
//! `overlaps` accept a vertex the elimination counted as touching.

use crate::support::{self, Set};

use fmbgrid::narrow::overlap_interval_eliminated;
use fmbgrid::{Frame, intersect, overlap_interval, overlaps};
use rand::Rng;

/// Velocity scales: frames barely moving relative to each other (the
/// witness's common case) to frames crossing each other many times over.
const SPEEDS: [f64; 7] = [1e-9, 1e-3, 0.1, 1.0, 1e3, 1e6, 1e9];

fn bits(t: Option<[f64; 2]>) -> Option<[u64; 2]> {
    t.map(|t| t.map(f64::to_bits))
}

/// `b` re-centred on a random point of `a` (at `t = 0`), so that many pairs
/// overlap deeply and the witness applies.
fn centred_on<const D: usize>(a: &Frame<D>, b: &Frame<D>, rng: &mut support::TestRng) -> Option<Frame<D>> {
    let comps = a.components();
    let mut p = a.origin();
    for c in &comps {
        let w: f64 = rng.random_range(0.2..0.4);
        p = support::add(p, support::mul(*c, w));
    }
    let bc = b.components();
    let half = bc.iter().fold([0.0; D], |s, c| support::add(s, support::mul(*c, 0.5)));
    support::rebuild(b, support::sub(p, half), bc, b.velocity()).ok()
}

/// Checks `n` pairs of every speed; returns how many of them the
/// elimination found in contact over the whole step.
fn check<const D: usize>(n: u64, seed: u64) -> usize {
    let mut rng = support::rng(seed);
    let mut whole = 0;
    for i in 0..n {
        let (a, b) = support::gen_pair::<D>(Set::for_index(i), true, &mut rng);
        let b = if i % 2 == 0 { centred_on(&a, &b, &mut rng).unwrap_or(b) } else { b };
        for s in SPEEDS {
            let v = support::mul(b.velocity(), s);
            let Ok(b) = b.with_velocity(v) else { continue };
            let expect = bits(overlap_interval_eliminated(&a, &b));
            assert_eq!(expect, bits(overlap_interval_eliminated(&b, &a)), "reference asymmetric: {a:?} {b:?}");
            for (x, y) in [(&a, &b), (&b, &a)] {
                assert_eq!(bits(overlap_interval(x, y)), expect, "overlap_interval, speed {s}: {x:?} {y:?}");
                assert_eq!(bits(intersect(x, y).map(|h| h.time)), expect, "intersect, speed {s}: {x:?} {y:?}");
                assert_eq!(overlaps(x, y), expect.is_some(), "overlaps, speed {s}: {x:?} {y:?}");
            }
            let moving = a.velocity() != b.velocity();
            whole += usize::from(moving && expect == bits(Some([0.0, 1.0])));
        }
    }
    whole
}

#[test]
fn the_whole_step_witness_gives_the_elimination_s_interval_2d() {
    let whole = check::<2>(6_000, 21);
    // The witness's path must be taken for the test to mean anything.
    assert!(whole > 2_000, "only {whole} pairs in contact over the whole step");
}

#[test]
fn the_whole_step_witness_gives_the_elimination_s_interval_3d() {
    let whole = check::<3>(6_000, 31);
    assert!(whole > 2_000, "only {whole} pairs in contact over the whole step");
}

/// Checks `n` pairs at rest relative to each other (both still, or both
/// moving alike); returns how many of them intersect.
fn check_at_rest<const D: usize>(n: u64, seed: u64) -> usize {
    let mut rng = support::rng(seed);
    let mut hits = 0;
    for i in 0..n {
        let (a, b) = support::gen_pair::<D>(Set::for_index(i), false, &mut rng);
        let b = if i % 2 == 0 { centred_on(&a, &b, &mut rng).unwrap_or(b) } else { b };
        let v: [f64; D] = std::array::from_fn(|_| rng.random_range(-3.0..3.0));
        for (a, b) in [(a, b), (a.with_velocity(v).unwrap_or(a), b.with_velocity(v).unwrap_or(b))] {
            let expect = bits(overlap_interval_eliminated(&a, &b));
            for (x, y) in [(&a, &b), (&b, &a)] {
                assert_eq!(bits(overlap_interval(x, y)), expect, "overlap_interval at rest: {x:?} {y:?}");
                assert_eq!(bits(intersect(x, y).map(|h| h.time)), expect, "intersect at rest: {x:?} {y:?}");
                assert_eq!(overlaps(x, y), expect.is_some(), "overlaps at rest: {x:?} {y:?}");
            }
            hits += usize::from(expect.is_some());
        }
    }
    hits
}

#[test]
fn the_witness_at_rest_gives_the_elimination_s_decision_2d() {
    let hits = check_at_rest::<2>(6_000, 22);
    assert!(hits > 3_000, "only {hits} pairs intersect");
}

#[test]
fn the_witness_at_rest_gives_the_elimination_s_decision_3d() {
    let hits = check_at_rest::<3>(6_000, 32);
    assert!(hits > 3_000, "only {hits} pairs intersect");
}
