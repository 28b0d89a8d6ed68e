//! Validation of `query::distance` (Euclidean distance and closest points
//! of two frames) against two independent oracles, on the pair families of
//! `support::Set`, static, both argument orders:
//!
//! * **brute force**: the distance between two convex polytopes is reached
//!   by a vertex of one and a face of the other (either way) or, in 3D, by
//!   two edges; this oracle takes the minimum over every such feature pair,
//!   from the frames' vertices (public API only), by projection onto each
//!   face's plane and Ericson's segment–segment distance;
//! * **parry**: GJK distance on the vertex sets (`support::Oracle`).
//!
//! Checked on every pair: the two orders give the same distance and swapped
//! witnesses bit for bit; `0` exactly when `fmbgrid::overlaps` says the
//! interiors meet (outside the touching band); otherwise the distance
//! agrees with the brute force within `1e-9 · scale`, each witness lies in
//! its frame and the witnesses are that distance apart. Disagreements with
//! parry beyond `1e-6 · scale` are counted (its GJK stops at a tolerance).
//!
//! Default run: `cargo test --release --test suite narrow::distance::` (200,000 pairs per
//! dimension). Long run: `-- --ignored` (2,000,000 per dimension).

use crate::support;

use fmbgrid::query::distance;
use fmbgrid::{Frame, FrameKind, overlaps};
use support::{Oracle, Parry2, Parry3, Set, add, band, cross, dot, gen_pair, mul, norm, pair_scale, rng, sub};

const EXACT_TOL: f64 = 1e-9;
const PARRY_TOL: f64 = 1e-6;
const OVERLAP_TOL: f64 = 1e-9;
const DEBUG_PAIRS: u64 = 3_000;

/// The frame's vertices, in `Frame::vertices` numbering.
fn vertices<const D: usize>(f: &Frame<D>) -> Vec<[f64; D]> {
    f.vertices().collect()
}

/// Edges as vertex index pairs.
fn edges<const D: usize>(f: &Frame<D>) -> Vec<(usize, usize)> {
    match f.kind() {
        FrameKind::Tetrahedron => (0..=D).flat_map(|i| (i + 1..=D).map(move |j| (i, j))).collect(),
        FrameKind::Cuboid => (0..1usize << D)
            .flat_map(|m| (0..D).filter(move |i| m & (1 << i) == 0).map(move |i| (m, m | 1 << i)))
            .collect(),
    }
}

/// 3D faces as vertex index lists in boundary order.
fn faces(f: &Frame<3>) -> Vec<Vec<usize>> {
    match f.kind() {
        FrameKind::Tetrahedron => vec![vec![0, 1, 2], vec![0, 1, 3], vec![0, 2, 3], vec![1, 2, 3]],
        FrameKind::Cuboid => {
            let mut out = Vec::new();
            for i in 0..3 {
                let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                for side in [0, 1 << i] {
                    out.push(vec![side, side | 1 << j, side | 1 << j | 1 << k, side | 1 << k]);
                }
            }
            out
        }
    }
}

fn point_segment<const D: usize>(p: [f64; D], a: [f64; D], b: [f64; D]) -> f64 {
    let ab = sub(b, a);
    let t = (dot(sub(p, a), ab) / dot(ab, ab)).clamp(0.0, 1.0);
    norm(sub(p, add(a, mul(ab, t))))
}

/// Ericson's `ClosestPtSegmentSegment`, returning the distance.
fn segment_segment(p1: [f64; 3], q1: [f64; 3], p2: [f64; 3], q2: [f64; 3]) -> f64 {
    let (d1, d2, r) = (sub(q1, p1), sub(q2, p2), sub(p1, p2));
    let (a, e, f) = (dot(d1, d1), dot(d2, d2), dot(d2, r));
    let (c, b) = (dot(d1, r), dot(d1, d2));
    let denom = a * e - b * b;
    let mut s = if denom > 1e-30 * a * e { ((b * f - c * e) / denom).clamp(0.0, 1.0) } else { 0.0 };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    norm(sub(add(p1, mul(d1, s)), add(p2, mul(d2, t))))
}

/// Distance from `p` to a planar convex polygon.
fn point_polygon(p: [f64; 3], poly: &[[f64; 3]]) -> f64 {
    let n = cross(sub(poly[1], poly[0]), sub(poly[2], poly[0]));
    let h = dot(sub(p, poly[0]), n) / dot(n, n);
    let q = sub(p, mul(n, h));
    let inside = (0..poly.len()).all(|i| {
        let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
        dot(cross(sub(b, a), sub(q, a)), n) >= 0.0
    }) || (0..poly.len()).all(|i| {
        let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
        dot(cross(sub(b, a), sub(q, a)), n) <= 0.0
    });
    if inside {
        return norm(sub(p, q));
    }
    (0..poly.len()).map(|i| point_segment(p, poly[i], poly[(i + 1) % poly.len()])).fold(f64::INFINITY, f64::min)
}

fn brute_3d(a: &Frame<3>, b: &Frame<3>) -> f64 {
    let mut best = f64::INFINITY;
    for (x, y) in [(a, b), (b, a)] {
        let (vx, vy) = (vertices(x), vertices(y));
        for face in faces(y) {
            let poly: Vec<[f64; 3]> = face.iter().map(|&k| vy[k]).collect();
            for &p in &vx {
                best = best.min(point_polygon(p, &poly));
            }
        }
    }
    let (va, vb) = (vertices(a), vertices(b));
    for (i, j) in edges(a) {
        for (k, l) in edges(b) {
            best = best.min(segment_segment(va[i], va[j], vb[k], vb[l]));
        }
    }
    best
}

/// Distance from `p` to frame `f` (3D).
fn point_frame_3d(p: &[f64; 3], f: &Frame<3>) -> f64 {
    if inside(f, p, 0.0) {
        return 0.0;
    }
    let v = vertices(f);
    faces(f)
        .iter()
        .map(|face| point_polygon(*p, &face.iter().map(|&k| v[k]).collect::<Vec<_>>()))
        .fold(f64::INFINITY, f64::min)
}

/// Distance from `p` to frame `f` (2D).
fn point_frame_2d(p: &[f64; 2], f: &Frame<2>) -> f64 {
    if inside(f, p, 0.0) {
        return 0.0;
    }
    let v = vertices(f);
    edges(f).iter().map(|&(k, l)| point_segment(*p, v[k], v[l])).fold(f64::INFINITY, f64::min)
}

fn brute_2d(a: &Frame<2>, b: &Frame<2>) -> f64 {
    let mut best = f64::INFINITY;
    for (x, y) in [(a, b), (b, a)] {
        let (vx, vy) = (vertices(x), vertices(y));
        for (k, l) in edges(y) {
            for &p in &vx {
                best = best.min(point_segment(p, vy[k], vy[l]));
            }
        }
    }
    best
}

/// True when `p` lies in `f` within `tol` in local coordinates.
fn inside<const D: usize>(f: &Frame<D>, p: &[f64; D], tol: f64) -> bool {
    let x = f.local_coordinates(p);
    let low = x.iter().all(|&v| v >= -tol);
    match f.kind() {
        FrameKind::Cuboid => low && x.iter().all(|&v| v <= 1.0 + tol),
        FrameKind::Tetrahedron => low && x.iter().sum::<f64>() <= 1.0 + tol,
    }
}

#[derive(Debug, Default)]
struct Tally {
    pairs: u64,
    apart: u64,
    band: u64,
    parry_off: u64,
    /// The largest distance between the two witnesses of an overlapping
    /// pair, relative to the pair's scale.
    overlap_gap: f64,
}

fn run<const D: usize, O: Oracle<D>>(
    pairs: u64,
    seed: u64,
    brute: impl Fn(&Frame<D>, &Frame<D>) -> f64,
    to_frame: impl Fn(&[f64; D], &Frame<D>) -> f64,
) -> Tally {
    let pairs = if cfg!(debug_assertions) { pairs.min(DEBUG_PAIRS) } else { pairs };
    let mut r = rng(seed);
    let mut t = Tally::default();
    for i in 0..pairs {
        let (a, b) = gen_pair::<D>(Set::for_index(i), false, &mut r);
        t.pairs += 1;
        let (d, e) = (distance(&a, &b), distance(&b, &a));
        assert_eq!((d.distance, d.on_a, d.on_b), (e.distance, e.on_b, e.on_a), "pair {i}: orders\n{a:?}\n{b:?}");
        let scale = pair_scale(&a, &b);
        let want = if overlaps(&a, &b) { 0.0 } else { brute(&a, &b) };
        if (d.distance == 0.0) != (want == 0.0) {
            assert!((d.distance - want).abs() <= band(&a, &b), "pair {i}: {d:?} against {want}\n{a:?}\n{b:?}");
            t.band += 1;
            continue;
        }
        // Each witness in its frame, the two `distance` apart.
        let tol = EXACT_TOL * scale;
        assert!(to_frame(&d.on_a, &a) <= tol, "pair {i}: {d:?} not on a\n{a:?}\n{b:?}");
        assert!(to_frame(&d.on_b, &b) <= tol, "pair {i}: {d:?} not on b\n{a:?}\n{b:?}");
        let gap = norm(sub(d.on_a, d.on_b));
        if want == 0.0 {
            // Overlapping: each witness is its own frame's combination of
            // GJK's simplex; they agree within round-off (at most 2e-11 of
            // the scale in the long run).
            t.overlap_gap = t.overlap_gap.max(gap / scale);
            assert!(gap <= OVERLAP_TOL * scale, "pair {i}: {d:?}");
            continue;
        }
        assert!((gap - d.distance).abs() <= tol, "pair {i}: {d:?}");
        t.apart += 1;
        assert!((d.distance - want).abs() <= tol, "pair {i}: {} against brute force {want}\n{a:?}\n{b:?}", d.distance);
        let c = a.origin();
        let theirs = O::distance(&support::vertices_rel(&a, c, 0.0), &support::vertices_rel(&b, c, 0.0));
        if (theirs - d.distance).abs() > PARRY_TOL * scale {
            t.parry_off += 1;
        }
    }
    println!("{D}D: {t:?}");
    assert!(t.apart * 3 > t.pairs, "{t:?}");
    assert!(t.parry_off * 100 < t.apart, "{t:?}");
    t
}

#[test]
fn distance_3d_against_brute_force_and_parry() {
    run::<3, Parry3>(200_000, 41, brute_3d, point_frame_3d);
}

#[test]
fn distance_2d_against_brute_force_and_parry() {
    run::<2, Parry2>(200_000, 42, brute_2d, point_frame_2d);
}

#[test]
#[ignore = "long run: 2,000,000 pairs per dimension"]
fn distance_long_run() {
    run::<3, Parry3>(2_000_000, 43, brute_3d, point_frame_3d);
    run::<2, Parry2>(2_000_000, 44, brute_2d, point_frame_2d);
}

#[test]
fn distance_is_invariant_under_translation_and_scale() {
    let mut r = rng(45);
    let mut apart = 0;
    for i in 0..20_000 {
        let (a, b) = gen_pair::<3>(Set::Obb, false, &mut r);
        let d = distance(&a, &b);
        let off = [1e3, -2e3, 5e2];
        let (ta, tb) = (support::translated(&a, off).unwrap(), support::translated(&b, off).unwrap());
        let t = distance(&ta, &tb);
        let scale = pair_scale(&ta, &tb);
        assert!((t.distance - d.distance).abs() <= 1e-9 * scale, "pair {i}: {t:?} against {d:?}");
        assert!((norm(sub(t.on_a, t.on_b)) - t.distance).abs() <= 1e-9 * scale, "pair {i}: {t:?}");
        let (sa, sb) = (support::scaled(&a, 8.0).unwrap(), support::scaled(&b, 8.0).unwrap());
        let s = distance(&sa, &sb);
        assert!(
            (s.distance - 8.0 * d.distance).abs() <= 1e-9 * pair_scale(&sa, &sb),
            "pair {i}: {s:?} against 8 × {d:?}"
        );
        apart += usize::from(d.distance > 0.0);
    }
    assert!(apart > 1000, "{apart}");
}
