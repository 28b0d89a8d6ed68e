//! Randomised checks of [`overlaps`] and [`intersect`] against the
//! independent brute-force oracle (`tests/support/brute.rs`).
//!
//! There are four cases: 2D/3D × static/moving. Each draws seeded random
//! pairs from three generators in turn:
//! * the paper's: origin and components uniform in [−100, 100], cuboid or
//!   tetrahedron 50/50, frames the constructor refuses skipped;
//! * a "near" one: B's centroid is placed near A's, at a random instant when
//!   they move, so most pairs intersect;
//! * an "aligned" one: B is nearly A (components and origin within 1e-2 to
//!   1e-7 relative), so facets are nearly coincident and the box is
//!   ill-conditioned.
//!
//! A quarter of the pairs are then rescaled by 10^k (k ∈ −3..=3) and shifted
//! far from the origin. Moving pairs mix independent velocities, one frame at
//! rest, equal velocities, and nearly equal velocities.
//!
//! For every pair, in both argument orders:
//! * (a) `overlaps` agrees with the oracle's interior test (the sign of its
//!   depth). Pairs within 1e-9 × scale of touching are skipped and counted;
//!   they must be rare;
//! * (b) when the interior is non-empty, `intersect(a, b).aabb` equals the
//!   oracle's box to 1e-9 × scale, and `.time` equals the oracle's
//!   `[t_min, t_max]` to 1e-9 (or the time a relative speed needs to cover
//!   1e-9 × scale, if longer). Aligned pairs are ill-conditioned: no f64
//!   method can be held to 1e-9 there. For them, and as an extra check for
//!   all pairs, the box and interval must lie, to 1e-9 × scale, between
//!   the oracle's boxes of the intersection with every facet pushed in and
//!   out by 1e-11 × scale (`brute::bracket`);
//! * (c) `intersect(a, b) == intersect(b, a)` exactly, and
//!   `overlaps(a, b) == overlaps(b, a) == intersect(a, b).is_some()`;
//! * (d) points of A ∩ B lie in the box and their times in `.time`. These
//!   are rejection samples in the frames' common box, kept when
//!   `Frame::contains_point` accepts them for both frames, plus (not for
//!   aligned pairs) random convex combinations of the oracle's vertices.
//!   Tightness: each face of the box is reached by an oracle vertex within
//!   1e-9 × scale (not for aligned pairs, whose bracket check bounds the
//!   faces from inside instead).
//!
//! Touching frames (exactly shared facets, edges, corners; contact at a
//! single instant) get their own exact integer tests at the end.
//!
//! The default run is a few thousand pairs per case. The long run (100 000
//! pairs per case, `#[ignore]`d) is
//! `cargo test --release --test suite narrow::exact_box:: -- --ignored`.

use std::time::Instant;

use crate::support::brute::{self, Brute, REL_TOL};
use fmbgrid::{Frame, FrameKind, intersect, overlaps};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Coordinates are drawn from [−RANGE, RANGE], as in the paper.
const RANGE: f64 = 100.0;
/// Pairs per case in the default run (fewer in unoptimised builds).
const PAIRS: usize = if cfg!(debug_assertions) { 300 } else { 4000 };
/// Pairs per case in the long run.
const LONG_PAIRS: usize = 100_000;
/// Rejection samples per intersecting pair.
const SAMPLES: usize = 24;
/// Convex combinations of oracle vertices per intersecting pair.
const COMBINATIONS: usize = 8;
/// Largest share of pairs allowed in the touching band.
const MAX_TOUCHING_SHARE: f64 = 0.01;
/// Perturbation of the data, relative to the scale, allowed by the bracket
/// check: about 5e4 ulps, a backward error any sound f64 method meets.
const BRACKET: f64 = 1e-11;
/// Failures quoted in full in the panic message.
const QUOTED: usize = 5;

#[derive(Default, Debug)]
struct Stats {
    pairs: usize,
    refused: usize,
    intersecting: usize,
    disjoint: usize,
    touching: usize,
    samples_inside: usize,
    combinations: usize,
    /// Largest box error of a strict pair, relative to its scale.
    max_box_error: f64,
    /// Largest time error of a strict pair.
    max_time_error: f64,
}

/// How a pair is drawn.
#[derive(Clone, Copy, Debug)]
enum Generator {
    Paper,
    Near,
    Aligned,
}

fn random_vec<const D: usize>(rng: &mut ChaCha8Rng, range: f64) -> [f64; D] {
    std::array::from_fn(|_| rng.random_range(-range..=range))
}

fn random_kind(rng: &mut ChaCha8Rng) -> FrameKind {
    if rng.random_bool(0.5) { FrameKind::Cuboid } else { FrameKind::Tetrahedron }
}

/// Centroid of a frame's vertices minus its origin.
fn centroid_offset<const D: usize>(kind: FrameKind, comps: &[[f64; D]; D]) -> [f64; D] {
    let w = match kind {
        FrameKind::Cuboid => 0.5,
        FrameKind::Tetrahedron => 1.0 / (D as f64 + 1.0),
    };
    std::array::from_fn(|k| w * comps.iter().map(|c| c[k]).sum::<f64>())
}

/// Velocities of a moving pair.
fn velocities<const D: usize>(rng: &mut ChaCha8Rng) -> ([f64; D], [f64; D]) {
    let va = random_vec(rng, RANGE);
    match rng.random_range(0..10) {
        0 => ([0.0; D], va),
        1 => (va, va),
        2 => {
            let dv: [f64; D] = random_vec(rng, RANGE * 1e-3);
            (va, std::array::from_fn(|k| va[k] + dv[k]))
        }
        _ => (va, random_vec(rng, RANGE)),
    }
}

/// A random pair, or `None` when the constructor refuses a frame.
fn random_pair<const D: usize>(
    rng: &mut ChaCha8Rng,
    generator: Generator,
    moving: bool,
) -> Option<(Frame<D>, Frame<D>)> {
    let (ka, kb) = (random_kind(rng), random_kind(rng));
    let ca: [[f64; D]; D] = std::array::from_fn(|_| random_vec(rng, RANGE));
    let mut cb: [[f64; D]; D] = std::array::from_fn(|_| random_vec(rng, RANGE));
    if matches!(generator, Generator::Aligned) {
        let eps = 10f64.powi(-rng.random_range(2..=7));
        cb = ca.map(|c| {
            let n: [f64; D] = random_vec(rng, eps * RANGE);
            std::array::from_fn(|k| c[k] + n[k])
        });
    }
    let oa: [f64; D] = random_vec(rng, RANGE);
    let (va, vb) = if moving { velocities(rng) } else { ([0.0; D], [0.0; D]) };
    let ob: [f64; D] = match generator {
        Generator::Paper => random_vec(rng, RANGE),
        Generator::Aligned => {
            // Nearly the same frame: near-coplanar facets, thin slivers.
            let eps = 10f64.powi(-rng.random_range(2..=7));
            let noise: [f64; D] = random_vec(rng, eps * RANGE);
            std::array::from_fn(|k| oa[k] + noise[k])
        }
        Generator::Near => {
            // B's centroid near A's at instant tc.
            let tc = if moving { rng.random_range(0.0..=1.0) } else { 0.0 };
            let (ga, gb) = (centroid_offset(ka, &ca), centroid_offset(kb, &cb));
            let noise: [f64; D] = random_vec(rng, 0.3 * RANGE);
            std::array::from_fn(|k| oa[k] + ga[k] + tc * va[k] - gb[k] - tc * vb[k] + noise[k])
        }
    };
    // A quarter of the pairs: another scale, far from the origin.
    let (s, shift): (f64, [f64; D]) = if rng.random_bool(0.25) {
        let s = 10f64.powi(rng.random_range(-3..=3));
        (s, random_vec(rng, 10.0 * RANGE * s))
    } else {
        (1.0, [0.0; D])
    };
    let make = |kind, o: [f64; D], c: [[f64; D]; D], v: [f64; D]| {
        let o = std::array::from_fn(|k| o[k] * s + shift[k]);
        Frame::new(kind, o, c.map(|ci| ci.map(|x| x * s)))?.with_velocity(v.map(|x| x * s))
    };
    Some((make(ka, oa, ca, va).ok()?, make(kb, ob, cb, vb).ok()?))
}

/// Rust source that rebuilds `f` exactly (`{:?}` of `f64` round-trips).
fn source<const D: usize>(f: &Frame<D>) -> String {
    format!(
        "Frame::<{D}>::new(FrameKind::{:?}, {:?}, {:?})?.with_velocity({:?})?",
        f.kind(),
        f.origin(),
        f.components(),
        f.velocity()
    )
}

/// World box of a frame swept over the step, from its own vertices.
fn swept_box<const D: usize>(f: &Frame<D>) -> ([f64; D], [f64; D]) {
    let v = f.velocity();
    let mut lo = [f64::INFINITY; D];
    let mut hi = [f64::NEG_INFINITY; D];
    for p in brute::vertices(f) {
        for k in 0..D {
            for x in [p[k], p[k] + v[k]] {
                lo[k] = lo[k].min(x);
                hi[k] = hi[k].max(x);
            }
        }
    }
    (lo, hi)
}

/// Checks one pair; `Err` describes the first violation.
///
/// `strict` pairs (generic ones) must match the oracle to 1e-9; the others
/// (nearly coincident frames, whose box is ill-conditioned) must lie within
/// the oracle's bracket.
fn check_pair<const D: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    strict: bool,
    rng: &mut ChaCha8Rng,
    st: &mut Stats,
) -> Result<(), String> {
    let oracle = brute::brute(a, b);
    let fail = |what: String| -> Result<(), String> {
        Err(format!(
            "{what}\n    oracle: depth {:e}, scale {:e}, box {:?}-{:?}, time {:?}\n    a = {}\n    b = {}\n    a = {a:?}\n    b = {b:?}",
            oracle.depth,
            oracle.scale,
            oracle.min,
            oracle.max,
            oracle.time,
            source(a),
            source(b)
        ))
    };
    let (ov_ab, ov_ba) = (overlaps(a, b), overlaps(b, a));
    let (hit_ab, hit_ba) = (intersect(a, b), intersect(b, a));
    // (c) symmetry and consistency.
    if ov_ab != ov_ba {
        return fail(format!("overlaps(a, b) = {ov_ab} but overlaps(b, a) = {ov_ba}"));
    }
    if crate::support::hit_bits(&hit_ab) != crate::support::hit_bits(&hit_ba) {
        return fail(format!("intersect is not symmetric: {hit_ab:?} vs {hit_ba:?}"));
    }
    if hit_ab.is_some() != ov_ab {
        return fail(format!("overlaps = {ov_ab} but intersect = {hit_ab:?}"));
    }
    // (a) the predicate.
    match oracle.interior() {
        None => {
            st.touching += 1;
            return Ok(());
        }
        Some(interior) if interior != ov_ab => {
            return fail(format!("overlaps = {ov_ab}, oracle interior = {interior}"));
        }
        Some(false) => {
            st.disjoint += 1;
            return Ok(());
        }
        Some(true) => st.intersecting += 1,
    }
    let Some(hit) = hit_ab else { unreachable!("overlaps agreed with the oracle") };
    let tol = oracle.tol();
    let time_tol = time_tolerance(a, b, &oracle);
    // (b) every pair: box and interval between the oracle's inner and outer
    // bounds (what data perturbed by BRACKET × scale allows), to 1e-9.
    let (inner, outer) = brute::bracket(a, b, BRACKET);
    let within = |x: f64, lo: f64, hi: f64, tol: f64| lo - tol <= x && x <= hi + tol;
    for k in 0..D {
        let (lo, hi) = (hit.aabb.min[k], hit.aabb.max[k]);
        if !within(lo, outer.min[k], inner.min[k], tol) || !within(hi, inner.max[k], outer.max[k], tol) {
            return fail(format!(
                "box {:?}-{:?} is outside the oracle's bracket on axis {k}: min in [{}, {}], max in [{}, {}]",
                hit.aabb.min, hit.aabb.max, outer.min[k], inner.min[k], inner.max[k], outer.max[k]
            ));
        }
    }
    if !within(hit.time[0], outer.time[0], inner.time[0], time_tol)
        || !within(hit.time[1], inner.time[1], outer.time[1], time_tol)
    {
        return fail(format!(
            "time {:?} is outside the oracle's bracket: start in [{}, {}], end in [{}, {}]",
            hit.time, outer.time[0], inner.time[0], inner.time[1], outer.time[1]
        ));
    }
    if strict {
        // (b) generic pairs: equal to the oracle's box and interval.
        for k in 0..D {
            let err = (hit.aabb.min[k] - oracle.min[k]).abs().max((hit.aabb.max[k] - oracle.max[k]).abs());
            st.max_box_error = st.max_box_error.max(err / oracle.scale);
            if err > tol {
                let window = 1e-6 * oracle.scale;
                let cond = oracle.face_cond(k, false, window).max(oracle.face_cond(k, true, window));
                return fail(format!(
                    "box {:?}-{:?} differs from the oracle's on axis {k} by {:e} × scale (vertex condition {cond:e})",
                    hit.aabb.min,
                    hit.aabb.max,
                    err / oracle.scale
                ));
            }
        }
        let err = (hit.time[0] - oracle.time[0]).abs().max((hit.time[1] - oracle.time[1]).abs());
        st.max_time_error = st.max_time_error.max(err);
        if err > time_tol {
            return fail(format!("time {:?} differs from the oracle's (tolerance {time_tol:e})", hit.time));
        }
        // (d) tightness: each face of the box is reached by a vertex of A ∩ B.
        for k in 0..D {
            for face in [hit.aabb.min[k], hit.aabb.max[k]] {
                if !oracle.vertices.iter().any(|v| (v.x[k] - face).abs() <= tol) {
                    return fail(format!("box face {face} on axis {k} is reached by no vertex of the intersection"));
                }
            }
        }
    }
    // (d) containment: points of A ∩ B lie in the box, at times in `.time`.
    let inside = |x: &[f64; D], t: f64| {
        (0..D).all(|k| hit.aabb.min[k] - tol <= x[k] && x[k] <= hit.aabb.max[k] + tol)
            && hit.time[0] - time_tol <= t
            && t <= hit.time[1] + time_tol
    };
    let moving = oracle.moving;
    let ((la, ha), (lb, hb)) = (swept_box(a), swept_box(b));
    let (lo, hi): ([f64; D], [f64; D]) =
        (std::array::from_fn(|k| la[k].max(lb[k])), std::array::from_fn(|k| ha[k].min(hb[k])));
    for _ in 0..SAMPLES {
        let x: [f64; D] = std::array::from_fn(|k| if lo[k] < hi[k] { rng.random_range(lo[k]..=hi[k]) } else { lo[k] });
        let t = if moving { rng.random_range(0.0..=1.0) } else { 0.0 };
        // Membership by the oracle's own half-spaces, not the crate's inverses.
        if brute::contains(a, &x, t, 0.0) && brute::contains(b, &x, t, 0.0) {
            st.samples_inside += 1;
            if !inside(&x, t) {
                return fail(format!("point {x:?} at t = {t} of A ∩ B is outside {hit:?}"));
            }
        }
    }
    // Convex combinations of vertices: only where the vertices are accurate.
    for _ in 0..if strict { COMBINATIONS } else { 0 } {
        let w: Vec<f64> = oracle.vertices.iter().map(|_| rng.random::<f64>()).collect();
        let total: f64 = w.iter().sum();
        let x: [f64; D] =
            std::array::from_fn(|k| oracle.vertices.iter().zip(&w).map(|(v, w)| v.x[k] * w).sum::<f64>() / total);
        let t = oracle.vertices.iter().zip(&w).map(|(v, w)| v.t * w).sum::<f64>() / total;
        st.combinations += 1;
        if !inside(&x, t) {
            return fail(format!("point {x:?} at t = {t} (a convex combination of vertices) is outside {hit:?}"));
        }
    }
    Ok(())
}

/// Tolerance on contact times: 1e-9, or a length error of 1e-9 × scale
/// converted to time at the relative speed, whichever is larger.
fn time_tolerance<const D: usize>(a: &Frame<D>, b: &Frame<D>, oracle: &Brute<D>) -> f64 {
    let (va, vb) = (a.velocity(), b.velocity());
    let speed = (0..D).map(|k| (va[k] - vb[k]).powi(2)).sum::<f64>().sqrt();
    if speed == 0.0 { REL_TOL } else { REL_TOL * (oracle.scale / speed).max(1.0) }
}

/// Runs `pairs` random pairs, alternating the generators; panics with the
/// first failures.
fn run<const D: usize>(moving: bool, pairs: usize, seed: u64) {
    let label = format!("{D}D {}", if moving { "moving" } else { "static" });
    let start = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut st = Stats::default();
    let mut failures = Vec::new();
    while st.pairs < pairs {
        let generator = match st.pairs % 3 {
            0 => Generator::Paper,
            1 => Generator::Near,
            _ => Generator::Aligned,
        };
        let Some((a, b)) = random_pair::<D>(&mut rng, generator, moving) else {
            st.refused += 1;
            continue;
        };
        st.pairs += 1;
        let strict = !matches!(generator, Generator::Aligned);
        if let Err(e) = check_pair(&a, &b, strict, &mut rng, &mut st) {
            failures.push(format!("pair #{} ({generator:?}): {e}", st.pairs));
        }
    }
    println!("{label}: {st:?} in {:.2?}", start.elapsed());
    assert!(
        failures.is_empty(),
        "{label}: {} of {} pairs failed; the first ones:\n{}",
        failures.len(),
        st.pairs,
        failures.iter().take(QUOTED).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(
        (st.touching as f64) <= MAX_TOUCHING_SHARE * st.pairs as f64,
        "{label}: {} of {} pairs within 1e-9 of touching",
        st.touching,
        st.pairs
    );
    assert!(st.intersecting > st.pairs / 4, "{label}: too few intersecting pairs: {st:?}");
}

#[test]
fn static_2d_matches_the_oracle() {
    run::<2>(false, PAIRS, 0x2d_0001);
}

#[test]
fn static_3d_matches_the_oracle() {
    run::<3>(false, PAIRS, 0x3d_0001);
}

#[test]
fn moving_2d_matches_the_oracle() {
    run::<2>(true, PAIRS, 0x2d_0002);
}

#[test]
fn moving_3d_matches_the_oracle() {
    run::<3>(true, PAIRS, 0x3d_0002);
}

// The long variants: `cargo test --release --test suite narrow::exact_box:: -- --ignored`.

#[test]
#[ignore = "long: 100k pairs; cargo test --release --test suite narrow::exact_box:: -- --ignored"]
fn long_static_2d_matches_the_oracle() {
    run::<2>(false, LONG_PAIRS, 0x2d_1001);
}

#[test]
#[ignore = "long: 100k pairs; cargo test --release --test suite narrow::exact_box:: -- --ignored"]
fn long_static_3d_matches_the_oracle() {
    run::<3>(false, LONG_PAIRS, 0x3d_1001);
}

#[test]
#[ignore = "long: 100k pairs; cargo test --release --test suite narrow::exact_box:: -- --ignored"]
fn long_moving_2d_matches_the_oracle() {
    run::<2>(true, LONG_PAIRS, 0x2d_1002);
}

#[test]
#[ignore = "long: 100k pairs; cargo test --release --test suite narrow::exact_box:: -- --ignored"]
fn long_moving_3d_matches_the_oracle() {
    run::<3>(true, LONG_PAIRS, 0x3d_1002);
}

/// Integer frames that exactly touch: sharing a facet, an edge or a corner,
/// or meeting only at `t = 0` or `t = 1`. These are never collisions. The
/// same frames pushed slightly into each other are collisions.
fn touching_cases<const D: usize>(seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut checked = 0;
    while checked < PAIRS / 4 {
        let o: [f64; D] = std::array::from_fn(|_| f64::from(rng.random_range(-20i32..=20)));
        let c: [[f64; D]; D] =
            std::array::from_fn(|_| std::array::from_fn(|_| f64::from(rng.random_range(-20i32..=20))));
        let Ok(a) = Frame::cuboid(o, c) else { continue };
        // Shift by a non-empty sum of components: a facet, edge or corner.
        let mask = rng.random_range(1..1usize << D);
        let d: [f64; D] = std::array::from_fn(|k| (0..D).filter(|i| mask & (1 << i) != 0).map(|i| c[i][k]).sum());
        let shifted = |s: f64| Frame::cuboid(std::array::from_fn(|k| o[k] + s * d[k]), c).expect("same components");
        let v = d.map(|x| -x);
        let cases = [
            ("touching", shifted(1.0), false, None),
            ("overlapping by 1/1024", shifted(1.0 - 1.0 / 1024.0), true, Some([0.0, 1.0])),
            ("receding from contact at t = 0", shifted(1.0).with_velocity(d).unwrap(), false, None),
            ("reaching contact at t = 1", shifted(2.0).with_velocity(v).unwrap(), false, None),
            ("sliding in from contact at t = 0", shifted(1.0).with_velocity(v).unwrap(), true, Some([0.0, 1.0])),
            ("passing through", shifted(1.5).with_velocity(v.map(|x| 2.0 * x)).unwrap(), true, Some([0.25, 1.0])),
        ];
        for (what, b, collide, time) in cases {
            let oracle = brute::brute(&a, &b);
            let expected_interior = if collide { Some(true) } else { None };
            assert_eq!(
                oracle.interior(),
                expected_interior,
                "oracle, {what}:\n  a = {}\n  b = {}",
                source(&a),
                source(&b)
            );
            for (x, y) in [(&a, &b), (&b, &a)] {
                assert_eq!(overlaps(x, y), collide, "{what}:\n  a = {}\n  b = {}", source(x), source(y));
                let got = intersect(x, y).map(|h| h.time);
                let close = match (got, time) {
                    (Some(g), Some(e)) => (g[0] - e[0]).abs() <= 1e-12 && (g[1] - e[1]).abs() <= 1e-12,
                    (g, e) => g.is_none() && e.is_none(),
                };
                assert!(close, "{what}: time {got:?}, expected {time:?}\n  a = {}\n  b = {}", source(x), source(y));
            }
        }
        checked += 1;
    }
}

#[test]
fn touching_2d_is_never_a_collision() {
    touching_cases::<2>(0x2d_0003);
}

#[test]
fn touching_3d_is_never_a_collision() {
    touching_cases::<3>(0x3d_0003);
}

/// A vertex of `A` meets a vertex of `B` at t = 2/3: `B`'s vertex (2, -1)
/// is in the swept intersection (sampling finds the box min (-0.5, -1.0),
/// max (2.0, 0.786)). The shipped `intersect` (per-side simplex) includes
/// it.
fn vertex_meets_vertex() -> (fmbgrid::Frame2, fmbgrid::Frame2) {
    let a = fmbgrid::Frame2::cuboid([-0.5, 0.0], [[1.5, -1.0], [0.0, 1.0]]).unwrap().with_velocity([1.5, 0.0]).unwrap();
    let b = fmbgrid::Frame2::tetrahedron([-0.5, -0.5], [[2.5, -0.5], [-1.0, 2.0]]).unwrap();
    (a, b)
}

#[test]
fn box_reaches_a_vertex_met_by_a_vertex() {
    let (a, b) = vertex_meets_vertex();
    let hit = fmbgrid::intersect(&a, &b).unwrap();
    assert!(hit.aabb.max[0] >= 2.0 - 1e-9 && hit.aabb.min[1] <= -1.0 + 1e-9, "{:?}", hit.aabb);
    assert_eq!(fmbgrid::intersect(&b, &a), Some(hit));
}
