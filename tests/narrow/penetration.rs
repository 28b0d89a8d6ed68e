//! Validation of `query::penetration` (depth and normal of two overlapping
//! frames) against two independent oracles, on the pair families of
//! `support::Set` (the paper's ±100 frames, oriented boxes, slivers, ±1e6
//! offsets, near-touching pairs), static, both argument orders:
//!
//! * **exact**: minus `support::margin_at`, a separating-axis value over
//!   every facet normal of the Minkowski difference built from the frames'
//!   vertices and edge directions (public API only), which is the exact
//!   depth of an overlapping pair. The depth must agree within `1e-9 ·
//!   scale`, and the frames' projections on the normal must overlap by the
//!   depth (the normal attains it);
//! * **parry**: GJK/EPA contact (`contact_support_map_support_map` on the
//!   vertex sets), whose depth is iterative. Where parry's depth or normal
//!   differs, the exact oracle decides: if parry's normal gives a smaller
//!   overlap than our depth, ours is not minimal and the test fails;
//!   otherwise parry's error (or a tie: two facets at the same depth) is
//!   counted and reported.
//!
//! `Some` exactly when `fmbgrid::overlaps` says the interiors meet, except
//! within the touching band (`support::band`).
//!
//! Default run: `cargo test --release --test suite narrow::penetration::` (400,000 pairs per
//! dimension, about 90,000 of them overlapping, each kind pair represented;
//! about 1 s). Long run: `cargo test --release --test suite narrow::penetration:: --
//! --ignored` (2,000,000 per dimension).

use crate::support;

use fmbgrid::query::penetration;
use fmbgrid::{Frame, FrameKind, overlaps};
use support::{Oracle, Parry2, Parry3, Set, band, dot, gen_pair, margin_at, pair_scale, rng, vertices_rel};

/// Agreement with the exact oracle, relative to the pair's scale.
const EXACT_TOL: f64 = 1e-9;

/// Agreement with parry's iterative depth, relative to the pair's scale;
/// normals agree when their dot product is above `1 - NORMAL_TOL`.
const PARRY_TOL: f64 = 1e-6;
const NORMAL_TOL: f64 = 1e-6;

/// Pairs per dimension in an unoptimised build.
const DEBUG_PAIRS: u64 = 3_000;

#[derive(Debug, Default)]
struct Tally {
    pairs: u64,
    deep: u64,
    band: u64,
    parry_depth_off: u64,
    parry_normal_ties: u64,
    parry_normal_off: u64,
    /// Overlapping pairs by kinds: two cuboids, mixed, two simplices.
    by_kinds: [u64; 3],
}

/// Overlap of the projections of `p` and `q` on `n`, pushing `q` along
/// `+n`: `max(p · n) - min(q · n)`.
fn overlap_along<const D: usize>(p: &[[f64; D]], q: &[[f64; D]], n: [f64; D]) -> f64 {
    let hi = p.iter().map(|x| dot(*x, n)).fold(f64::NEG_INFINITY, f64::max);
    let lo = q.iter().map(|x| dot(*x, n)).fold(f64::INFINITY, f64::min);
    hi - lo
}

fn check_pair<const D: usize, O: Oracle<D>>(i: u64, a: &Frame<D>, b: &Frame<D>, t: &mut Tally) {
    t.pairs += 1;
    let (p, q) = (penetration(a, b), penetration(b, a));
    assert_eq!(
        p.map(|p| (p.depth, p.normal.map(|x| -x))),
        q.map(|q| (q.depth, q.normal)),
        "pair {i}: the two orders do not mirror\n{a:?}\n{b:?}"
    );
    let (scale, m) = (pair_scale(a, b), margin_at::<D, O>(a, b, 0.0));
    if p.is_some() != overlaps(a, b) || p.is_some() != (m < 0.0) {
        assert!(m.abs() <= band(a, b), "pair {i}: {p:?}, overlaps {}, margin {m}\n{a:?}\n{b:?}", overlaps(a, b));
        t.band += 1;
        return;
    }
    let Some(p) = p else { return };
    t.deep += 1;
    t.by_kinds[usize::from(a.kind() == FrameKind::Tetrahedron) + usize::from(b.kind() == FrameKind::Tetrahedron)] += 1;
    assert!((p.depth + m).abs() <= EXACT_TOL * scale, "pair {i}: depth {} against {}\n{a:?}\n{b:?}", p.depth, -m);
    let c = a.origin();
    let (va, vb) = (vertices_rel(a, c, 0.0), vertices_rel(b, c, 0.0));
    let along = overlap_along(&va, &vb, p.normal);
    assert!((along - p.depth).abs() <= EXACT_TOL * scale, "pair {i}: {p:?}, overlap {along} along the normal");
    let Some((normal, dist)) = O::contact(&va, &vb) else {
        t.parry_depth_off += 1;
        return;
    };
    if (p.depth + dist).abs() > PARRY_TOL * scale {
        t.parry_depth_off += 1;
    }
    if dot(normal, p.normal) < 1.0 - NORMAL_TOL {
        // parry's direction must not separate sooner than ours.
        let theirs = overlap_along(&va, &vb, normal);
        assert!(theirs >= p.depth - EXACT_TOL * scale, "pair {i}: parry's normal {normal:?} needs {theirs} < {p:?}");
        if theirs <= p.depth + PARRY_TOL * scale {
            t.parry_normal_ties += 1;
        } else {
            t.parry_normal_off += 1;
        }
    }
}

fn run<const D: usize, O: Oracle<D>>(pairs: u64, seed: u64) -> Tally {
    let pairs = if cfg!(debug_assertions) { pairs.min(DEBUG_PAIRS) } else { pairs };
    let mut r = rng(seed);
    let mut t = Tally::default();
    for i in 0..pairs {
        let (a, b) = gen_pair::<D>(Set::for_index(i), false, &mut r);
        check_pair::<D, O>(i, &a, &b, &mut t);
    }
    println!("{D}D: {t:?}");
    // Enough overlapping pairs to mean something, and parry mostly agreeing
    // (its EPA stops at a tolerance; ties are legitimate).
    assert!(t.deep * 5 > t.pairs, "{t:?}");
    assert!(t.parry_depth_off * 100 < t.deep && t.parry_normal_off * 100 < t.deep, "{t:?}");
    t
}

#[test]
fn penetration_3d_against_exact_and_parry() {
    run::<3, Parry3>(400_000, 31);
}

#[test]
fn penetration_2d_against_exact_and_parry() {
    run::<2, Parry2>(400_000, 32);
}

#[test]
#[ignore = "long run: 2,000,000 pairs per dimension"]
fn penetration_long_run() {
    run::<3, Parry3>(2_000_000, 33);
    run::<2, Parry2>(2_000_000, 34);
}

#[test]
fn penetration_is_invariant_under_translation_and_scale() {
    let mut r = rng(35);
    let mut seen = 0;
    for i in 0..20_000 {
        let (a, b) = gen_pair::<3>(Set::Obb, false, &mut r);
        let Some(p) = penetration(&a, &b) else { continue };
        seen += 1;
        let off = [1e3, -2e3, 5e2];
        let (ta, tb) = (support::translated(&a, off).unwrap(), support::translated(&b, off).unwrap());
        let t = penetration(&ta, &tb).expect("translated: still overlapping");
        assert!((t.depth - p.depth).abs() <= 1e-9 * pair_scale(&ta, &tb), "pair {i}");
        // Its normal attains the depth (a tie may pick another facet).
        let c = a.origin();
        let along = overlap_along(&vertices_rel(&a, c, 0.0), &vertices_rel(&b, c, 0.0), t.normal);
        assert!((along - p.depth).abs() <= 1e-9 * pair_scale(&ta, &tb), "pair {i}");
        let (sa, sb) = (support::scaled(&a, 8.0).unwrap(), support::scaled(&b, 8.0).unwrap());
        let s = penetration(&sa, &sb).expect("scaled: still overlapping");
        assert!((s.depth - 8.0 * p.depth).abs() <= 1e-9 * pair_scale(&sa, &sb), "pair {i}");
    }
    assert!(seen > 1000, "{seen}");
}
