//! Property tests of the narrow phase (proptest), in 2D and 3D, on static and
//! moving pairs drawn from the paper's uniform ±100 frames and from every
//! family of `support::Set` (boxes, slivers, far offsets, near touching):
//!
//! * symmetry: `intersect(a, b) == intersect(b, a)` bit for bit, and the
//!   same for `overlaps` and `intersect(..).is_some()`;
//! * `overlap_interval(a, b) == overlap_interval(b, a) ==
//!   intersect(a, b).map(|h| h.time)`, bit for bit, and `is_some()` is
//!   `overlaps(a, b)`: on the same pairs, and on pairs made to share a
//!   velocity or to have one frame at rest;
//! * scale invariance (×1e-3 and ×1e6 on every coordinate, component and
//!   velocity) and translation invariance (±1e6 on every axis): the same
//!   verdict, the same contact interval and the scaled/translated box;
//! * `time[0]` and `time[1]` agree with parry's time of impact (of the motion
//!   and of the reversed motion) and with the exact reference;
//! * the box contains sampled points of `A(t) ∩ B(t)` and equals the box of
//!   the exact reference (vertex enumeration, `support::reference`).
//!
//! Pairs within the "don't care" band (`|support::margin| <= 1e-9 · scale`,
//! see `parry_validation.rs`) are exempt from every check but symmetry.
//! Outside it, the invariance, time and box properties first check the
//! verdict against the oracle's margin (no false negative or positive), and
//! each must check at least `HITS` of its cases with a hit: a property that
//! passes on a miss would pass a narrow phase that never finds anything.
//!
//! Runs are reproducible: the proptest seed is fixed (override with
//! `PROPTEST_RNG_SEED=<u64>`), and cases are kept modest so the file runs in
//! seconds.

use crate::support;

use fmbgrid::{Frame, FrameKind, Intersection, intersect, overlap_interval, overlaps};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use support::{Oracle, Parry2, Parry3, Set};

/// Agreement required between contact times of equivalent pairs, and with
/// parry's time of impact.
const TIME_TOL: f64 = 1e-6;
/// Agreement required between FMB's contact times and the exact reference
/// (whose own times, from near-singular vertex systems of slivers, were seen
/// off by up to 2e-9).
const REF_TIME_TOL: f64 = 1e-8;
/// Agreement required between boxes, relative to the pair's scale.
const BOX_TOL: f64 = 1e-9;

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x00F4_B6A1);
    Config { cases, rng_seed: RngSeed::Fixed(seed), failure_persistence: None, ..Config::default() }
}

/// A frame of the paper's validation data (uniform ±100).
fn paper_frame<const D: usize>(moving: bool) -> impl Strategy<Value = Frame<D>> {
    (any::<bool>(), proptest::collection::vec(-100.0..=100.0f64, D + D * D + D)).prop_filter_map(
        "degenerate frame",
        move |(cuboid, x)| {
            let kind = if cuboid { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
            let origin = std::array::from_fn(|k| x[k]);
            let comps = std::array::from_fn(|i| std::array::from_fn(|k| x[D + D * i + k]));
            let v = if moving { std::array::from_fn(|k| x[D + D * D + k]) } else { [0.0; D] };
            Frame::new(kind, origin, comps).ok()?.with_velocity(v).ok()
        },
    )
}

/// A pair: paper-like (shrinkable numbers) or from a `support` family (by
/// seed), static or moving.
fn pair<const D: usize>() -> impl Strategy<Value = (Frame<D>, Frame<D>)> {
    prop_oneof![
        1 => (paper_frame::<D>(false), paper_frame::<D>(false)),
        1 => (paper_frame::<D>(true), paper_frame::<D>(true)),
        4 => (0..Set::ALL.len(), any::<bool>(), any::<u64>()).prop_map(|(k, moving, seed)| {
            support::gen_pair::<D>(Set::ALL[k], moving, &mut support::rng(seed))
        }),
    ]
}

/// True when the pair is far enough from touching for its verdict to matter.
fn decided<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> bool {
    support::margin::<D, O>(a, b).abs() > support::band(a, b)
}

fn symmetry<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Result<(), TestCaseError> {
    let (ab, ba) = (intersect(a, b), intersect(b, a));
    prop_assert_eq!(support::hit_bits(&ab), support::hit_bits(&ba), "intersect is not symmetric: {:?} / {:?}", ab, ba);
    prop_assert_eq!(overlaps(a, b), overlaps(b, a));
    prop_assert_eq!(ab.is_some(), overlaps(a, b));
    Ok(())
}

/// A pair of `pair`, or made relatively static (`b` takes `a`'s velocity) or
/// half static (`a` or `b` at rest), a quarter of the time each.
fn interval_pair<const D: usize>() -> impl Strategy<Value = (Frame<D>, Frame<D>)> {
    (pair::<D>(), 0..4u8).prop_map(|((a, b), how)| {
        let changed = match how {
            1 => b.with_velocity(a.velocity()).ok().map(|b| (a, b)),
            2 => a.with_velocity([0.0; D]).ok().map(|a| (a, b)),
            3 => b.with_velocity([0.0; D]).ok().map(|b| (a, b)),
            _ => None,
        };
        changed.unwrap_or((a, b))
    })
}

fn interval_bits(t: Option<[f64; 2]>) -> Option<[u64; 2]> {
    t.map(|t| t.map(f64::to_bits))
}

/// `overlap_interval` is symmetric, and `intersect`'s interval, bit for bit.
fn interval_is_intersect_time<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Result<(), TestCaseError> {
    let (ab, ba) = (overlap_interval(a, b), overlap_interval(b, a));
    prop_assert_eq!(interval_bits(ab), interval_bits(ba), "overlap_interval is not symmetric: {:?} / {:?}", ab, ba);
    let time = intersect(a, b).map(|hit| hit.time);
    prop_assert_eq!(interval_bits(ab), interval_bits(time), "overlap_interval {:?}, intersect's time {:?}", ab, time);
    prop_assert_eq!(ab.is_some(), overlaps(a, b));
    Ok(())
}

/// `intersect` on the transformed pair equals `map` of the original result,
/// times within `TIME_TOL`, boxes within `BOX_TOL · scale` of the
/// transformed pair. True when the pair was checked with a hit (not exempt).
fn equivalent<const D: usize, O: Oracle<D>>(
    a: &Frame<D>,
    b: &Frame<D>,
    ta: &Frame<D>,
    tb: &Frame<D>,
    map: impl Fn([f64; D]) -> [f64; D],
) -> Result<bool, TestCaseError> {
    if !decided::<D, O>(a, b) || !decided::<D, O>(ta, tb) {
        return Ok(false);
    }
    let (r, tr) = (verdict::<D, O>(a, b)?, intersect(ta, tb));
    prop_assert_eq!(r.is_some(), tr.is_some(), "verdict changed: {:?} then {:?}", r, tr);
    if let (Some(r), Some(tr)) = (r, tr) {
        for i in 0..2 {
            prop_assert!((r.time[i] - tr.time[i]).abs() <= TIME_TOL, "times {:?} then {:?}", r.time, tr.time);
        }
        let tol = BOX_TOL * support::pair_scale(ta, tb);
        let (lo, hi) = (map(r.aabb.min), map(r.aabb.max));
        for k in 0..D {
            prop_assert!(
                (lo[k] - tr.aabb.min[k]).abs() <= tol && (hi[k] - tr.aabb.max[k]).abs() <= tol,
                "box {:?} maps to [{:?}, {:?}], but the transformed pair gives {:?} (tolerance {:e})",
                r.aabb,
                lo,
                hi,
                tr.aabb,
                tol
            );
        }
    }
    Ok(r.is_some())
}

fn scale_invariance<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> Result<bool, TestCaseError> {
    let mut hit = true;
    for s in [1e-3, 1e6] {
        let sa = support::scaled(a, s).expect("a scaled frame is valid");
        let sb = support::scaled(b, s).expect("a scaled frame is valid");
        hit &= equivalent::<D, O>(a, b, &sa, &sb, |p| support::mul(p, s))?;
    }
    Ok(hit)
}

fn translation_invariance<const D: usize, O: Oracle<D>>(
    a: &Frame<D>,
    b: &Frame<D>,
    signs: [bool; D],
) -> Result<bool, TestCaseError> {
    let off: [f64; D] = std::array::from_fn(|k| if signs[k] { 1e6 } else { -1e6 });
    let ta = support::translated(a, off).expect("a translated frame is valid");
    let tb = support::translated(b, off).expect("a translated frame is valid");
    equivalent::<D, O>(a, b, &ta, &tb, |p| support::add(p, off))
}

/// `intersect(a, b)` of a pair far from touching, whose verdict must be the
/// oracle's (`margin` negative: they meet): no false negative or positive.
fn verdict<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> Result<Option<Intersection<D>>, TestCaseError> {
    let (hit, margin) = (intersect(a, b), support::margin::<D, O>(a, b));
    prop_assert_eq!(hit.is_some(), margin < 0.0, "intersect {:?}, but the oracle's margin is {:e}", hit, margin);
    Ok(hit)
}

/// Contact times against parry and the exact reference. True when the
/// pair was checked with a hit.
fn times<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> Result<bool, TestCaseError> {
    if a.velocity() == b.velocity() || !decided::<D, O>(a, b) {
        return Ok(false);
    }
    let Some(hit) = verdict::<D, O>(a, b)? else { return Ok(false) };
    let entry = support::parry_toi::<D, O>(a, b);
    let exit = support::parry_exit::<D, O>(a, b);
    if let Err(msg) = support::exact(a, b).check_time(hit.time, REF_TIME_TOL) {
        return Err(TestCaseError::fail(msg));
    }
    prop_assert!(entry.is_some() && exit.is_some(), "parry finds no contact, FMB {:?}", hit.time);
    prop_assert!((hit.time[0] - entry.unwrap()).abs() <= TIME_TOL, "t_enter {}, parry {:?}", hit.time[0], entry);
    prop_assert!((hit.time[1] - exit.unwrap()).abs() <= TIME_TOL, "t_exit {}, parry {:?}", hit.time[1], exit);
    Ok(true)
}

/// The box contains sampled points of `A(t) ∩ B(t)` and equals the exact
/// reference box. True when the pair was checked with a hit.
fn box_is_exact<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>, seed: u64) -> Result<bool, TestCaseError> {
    if !decided::<D, O>(a, b) {
        return Ok(false);
    }
    let Some(hit) = verdict::<D, O>(a, b)? else { return Ok(false) };
    let scale = support::pair_scale(a, b);
    let tol = BOX_TOL * scale;
    let mut rng = support::rng(seed);
    for _ in 0..400 {
        let t = hit.time[0] + (hit.time[1] - hit.time[0]) * rand::Rng::random::<f64>(&mut rng);
        let p = support::random_point(a, t, &mut rng);
        if support::strictly_inside(b, p, t, 0.0) {
            for k in 0..D {
                prop_assert!(
                    hit.aabb.min[k] - tol <= p[k] && p[k] <= hit.aabb.max[k] + tol,
                    "point {:?} of A ∩ B at t = {} outside the box {:?}",
                    p,
                    t,
                    hit.aabb
                );
            }
        }
    }
    if let Err(msg) = support::exact(a, b).check_box(&hit.aabb, tol) {
        return Err(TestCaseError::fail(msg));
    }
    Ok(true)
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn symmetric_2d((a, b) in pair::<2>()) {
        symmetry(&a, &b)?;
    }

    #[test]
    fn symmetric_3d((a, b) in pair::<3>()) {
        symmetry(&a, &b)?;
    }

    #[test]
    fn overlap_interval_is_intersect_time_2d((a, b) in interval_pair::<2>()) {
        interval_is_intersect_time(&a, &b)?;
    }

    #[test]
    fn overlap_interval_is_intersect_time_3d((a, b) in interval_pair::<3>()) {
        interval_is_intersect_time(&a, &b)?;
    }
}

/// Runs `check` on `cases` values of `strategy` (shrinking a failure as
/// `proptest!` does), and requires at least `min` of them to have been
/// checked with a hit: a property that returns early on a miss would
/// otherwise pass with a narrow phase that never finds anything.
fn counted<S: Strategy>(cases: u32, min: usize, strategy: S, check: impl Fn(S::Value) -> Result<bool, TestCaseError>) {
    let hits = std::sync::atomic::AtomicUsize::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(config(cases));
    let outcome = runner.run(&strategy, |v| {
        if check(v)? {
            hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let hits = hits.into_inner();
    assert!(hits >= min, "only {hits} of {cases} cases checked with a hit (at least {min} wanted)");
}

/// Cases of the slower properties (parry and the exact reference each).
const CASES: u32 = 1000;

/// Cases each of them must check with a hit: 137 (times, 3D) to 344 (box,
/// 2D) of the 1,000 do with the fixed seed.
const HITS: usize = 100;

#[test]
fn scale_invariant_2d() {
    counted(CASES, HITS, pair::<2>(), |(a, b)| scale_invariance::<2, Parry2>(&a, &b));
}

#[test]
fn scale_invariant_3d() {
    counted(CASES, HITS, pair::<3>(), |(a, b)| scale_invariance::<3, Parry3>(&a, &b));
}

#[test]
fn translation_invariant_2d() {
    let s = (pair::<2>(), any::<[bool; 2]>());
    counted(CASES, HITS, s, |((a, b), signs)| translation_invariance::<2, Parry2>(&a, &b, signs));
}

#[test]
fn translation_invariant_3d() {
    let s = (pair::<3>(), any::<[bool; 3]>());
    counted(CASES, HITS, s, |((a, b), signs)| translation_invariance::<3, Parry3>(&a, &b, signs));
}

#[test]
fn times_agree_with_parry_2d() {
    counted(CASES, HITS, pair::<2>(), |(a, b)| times::<2, Parry2>(&a, &b));
}

#[test]
fn times_agree_with_parry_3d() {
    counted(CASES, HITS, pair::<3>(), |(a, b)| times::<3, Parry3>(&a, &b));
}

#[test]
fn box_is_exact_2d() {
    counted(CASES, HITS, (pair::<2>(), any::<u64>()), |((a, b), seed)| box_is_exact::<2, Parry2>(&a, &b, seed));
}

#[test]
fn box_is_exact_3d() {
    counted(CASES, HITS, (pair::<3>(), any::<u64>()), |((a, b), seed)| box_is_exact::<3, Parry3>(&a, &b, seed));
}
