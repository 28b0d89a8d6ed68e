//! Validation of `query::first_contact` (instant, normal, point and depth
//! of the first contact of two translating frames) on the moving pair
//! families of `support::Set`, both argument orders:
//!
//! * the instant is FMB's (`overlap_interval`), and the two orders mirror
//!   each other bit for bit;
//! * for a contact that begins during the step: the point lies on both
//!   frames at that instant (every facet of each, from the public API, is
//!   violated by at most `1e-8 · scale`: see `POINT_TOL`), the normal is a unit vector along
//!   which the two frames' projections just touch at that instant (`a`'s
//!   highest vertex level with `b`'s lowest), and parry's `cast_shapes`
//!   normal agrees, or is another direction along which they touch (a tie:
//!   counted), or else parry is counted wrong;
//! * the contact set: its points and centroid (the point) lie on both
//!   frames; for face-to-face contacts built to meet on a patch, its box
//!   is FMB's exact box of the two frames a moment after they meet;
//! * for frames overlapping at the start: instant 0 and the penetration of
//!   the frames there, and a manifold within half the depth of both.
//!
//! Default run: `cargo test --release --test suite narrow::first_contact::` (100,000 pairs
//! per dimension).

use crate::support;

use fmbgrid::query::{first_contact, penetration};
use fmbgrid::{Frame, overlap_interval};
use fmbgrid::{FrameKind, intersect};
use rand::Rng;
use support::{
    Oracle, Parry2, Parry3, Set, TestRng, add, cross, dot, gen_pair, halfspaces, mul, norm, normalize, pair_scale,
    random_rotation, rng, sub, uniform_vec, vertices_rel,
};

const TOL: f64 = 1e-9;

/// The point's distance to each frame, relative to the scale: the instant
/// comes from FMB's elimination, whose round-off on slivers (a component
/// 1e-3 of the others) leaves the frames up to a few 1e-9 of the scale
/// apart or overlapping at it; the point is the middle of their closest
/// points.
const POINT_TOL: f64 = 1e-8;
const DEBUG_PAIRS: u64 = 3_000;

#[derive(Debug, Default)]
struct Tally {
    pairs: u64,
    during: u64,
    at_start: u64,
    parry_compared: u64,
    parry_ties: u64,
    parry_off: u64,
    /// The point's largest distance outside either frame, relative.
    point_off: f64,
    /// Contact sets during the step by their number of points: one, two,
    /// three or more.
    set_sizes: [u64; 3],
}

/// `f` at rest at its position at instant `t`.
fn at<const D: usize>(f: &Frame<D>, t: f64) -> Frame<D> {
    let o: [f64; D] = std::array::from_fn(|k| f.origin()[k] + t * f.velocity()[k]);
    Frame::new(f.kind(), o, f.components()).expect("a translated frame")
}

/// By how much `p` lies outside frame `f` at instant `t` (its worst facet).
fn outside<const D: usize>(f: &Frame<D>, p: [f64; D], t: f64) -> f64 {
    halfspaces(f, [0.0; D]).iter().map(|h| dot(h.n, p) - (h.off + h.nv * t)).fold(f64::NEG_INFINITY, f64::max)
}

fn run<const D: usize, O: Oracle<D>>(pairs: u64, seed: u64) -> Tally {
    let pairs = if cfg!(debug_assertions) { pairs.min(DEBUG_PAIRS) } else { pairs };
    let mut r = rng(seed);
    let mut t = Tally::default();
    for i in 0..pairs {
        let (a, b) = gen_pair::<D>(Set::for_index(i), true, &mut r);
        t.pairs += 1;
        let (c, e) = (first_contact(&a, &b), first_contact(&b, &a));
        assert_eq!(
            c.map(|c| (c.time, c.normal.map(|x| -x), c.point, c.depth, c.set)),
            e.map(|e| (e.time, e.normal, e.point, e.depth, e.set)),
            "pair {i}"
        );
        let interval = overlap_interval(&a, &b);
        assert_eq!(c.map(|c| c.time), interval.map(|w| w[0]), "pair {i}");
        let Some(c) = c else { continue };
        assert!((norm(c.normal) - 1.0).abs() < 1e-12, "pair {i}: {c:?}");
        let scale = pair_scale(&a, &b);
        if c.depth > 0.0 {
            t.at_start += 1;
            assert_eq!(c.time, 0.0, "pair {i}");
            let p = penetration(&at(&a, 0.0), &at(&b, 0.0)).expect("overlapping at the start");
            assert_eq!((p.depth, p.normal), (c.depth, c.normal), "pair {i}");
            // The manifold lies halfway through the depth: each point is
            // within half of it from both frames.
            for &q in c.set.points() {
                let off = outside(&a, q, 0.0).max(outside(&b, q, 0.0));
                assert!(off <= 0.5 * c.depth + POINT_TOL * scale, "pair {i}: {c:?} {q:?} off by {off}");
            }
            continue;
        }
        t.during += 1;
        assert_eq!(c.point, c.set.centroid(), "pair {i}");
        t.set_sizes[c.set.points().len().min(3) - 1] += 1;
        for &p in c.set.points().iter().chain([&c.point]) {
            let off = outside(&a, p, c.time).max(outside(&b, p, c.time));
            t.point_off = t.point_off.max(off / scale);
            assert!(off <= POINT_TOL * scale, "pair {i}: {c:?} off the frames by {off} at {p:?}\n{a:?}\n{b:?}");
        }
        let o = a.origin();
        let (va, vb) = (vertices_rel(&a, o, c.time), vertices_rel(&b, o, c.time));
        let touch = |n: [f64; D]| {
            let hi = va.iter().map(|x| dot(*x, n)).fold(f64::NEG_INFINITY, f64::max);
            let lo = vb.iter().map(|x| dot(*x, n)).fold(f64::INFINITY, f64::min);
            lo - hi
        };
        assert!(
            touch(c.normal).abs() <= TOL * scale,
            "pair {i}: {c:?} gap {} along the normal\n{a:?}\n{b:?}",
            touch(c.normal)
        );
        let w = sub(b.velocity(), a.velocity());
        let (pa, pb) = (vertices_rel(&a, o, 0.0), vertices_rel(&b, o, 0.0));
        let theirs = O::cast_normal(&pa, &pb, w);
        t.parry_compared += u64::from(theirs.is_some());
        if let Some((_, normal)) = theirs
            && dot(normal, c.normal) < 1.0 - 1e-6
        {
            if touch(mul(normal, 1.0 / norm(normal))).abs() <= 1e-6 * scale {
                t.parry_ties += 1;
            } else {
                t.parry_off += 1;
            }
        }
    }
    println!("{D}D: {t:?}");
    assert!(t.during * 10 > t.pairs && t.at_start * 10 > t.pairs, "{t:?}");
    assert!(t.parry_compared * 10 > t.during * 9 && t.parry_off * 50 < t.during, "{t:?}");
    t
}

#[test]
fn first_contact_3d_against_fmb_geometry_and_parry() {
    run::<3, Parry3>(100_000, 51);
}

#[test]
fn first_contact_2d_against_fmb_geometry_and_parry() {
    run::<2, Parry2>(100_000, 52);
}

/// Frames that meet face to face (edge to edge in 2D): `a` a random
/// frame, `b` one whose face spanned by its first `D − 1` components lies
/// in the plane of `a`'s face through its origin (opposite `a`'s first
/// component), `b` above it by 1 and falling at 2 along the face's
/// outward normal, so they meet at instant 0.5 on a polygon (a segment in
/// 2D).
fn flat_pair<const D: usize>(r: &mut TestRng) -> Option<(Frame<D>, Frame<D>, [f64; D])> {
    let kind = |r: &mut TestRng| if r.random_bool(0.5) { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
    let rot = random_rotation::<D>(r);
    let ca: [[f64; D]; D] = std::array::from_fn(|i| add(mul(rot[i], r.random_range(0.5..2.0)), uniform_vec(r, 0.3)));
    // `a`'s face through its origin opposite `ca[0]`, spanned by the rest.
    let mut n =
        if D == 2 { std::array::from_fn(|k| [-ca[1][1], ca[1][0]][k.min(1)]) } else { plane_normal(ca[1], ca[2]) };
    if dot(n, ca[0]) > 0.0 {
        n = mul(n, -1.0);
    }
    let n = normalize(n);
    let in_plane = |r: &mut TestRng| {
        let v = uniform_vec::<D>(r, 1.5);
        sub(v, mul(n, dot(v, n)))
    };
    let mut cb: [[f64; D]; D] = std::array::from_fn(|_| in_plane(r));
    cb[D - 1] = add(mul(n, r.random_range(0.5..1.5)), in_plane(r));
    let (u, v) = (r.random_range(-0.7..1.2), r.random_range(-0.7..1.2));
    let mut o = add(add(a_origin::<D>(), mul(ca[1], u)), mul(n, 1.0));
    if D == 3 {
        o = add(o, mul(ca[D - 1], v));
    }
    let a = Frame::new(kind(r), a_origin(), ca).ok()?;
    let b = Frame::new(kind(r), o, cb).ok()?.with_velocity(mul(n, -2.0)).ok()?;
    Some((a, b, n))
}

fn a_origin<const D: usize>() -> [f64; D] {
    std::array::from_fn(|k| 0.25 * (k as f64 + 1.0))
}

fn plane_normal<const D: usize>(p: [f64; D], q: [f64; D]) -> [f64; D] {
    let c = cross(std::array::from_fn(|k| p[k]), std::array::from_fn(|k| q[k]));
    std::array::from_fn(|k| c[k])
}

/// Face-to-face contacts: the set is the whole shared patch. Its box must
/// equal FMB's exact box of the two frames a moment (`2 · 10⁻⁸` of
/// interpenetration) after they meet, up to that moment's growth of the
/// patch (`1e-6`; the frames' walls are not steeper than 1:10).
fn flat_contacts<const D: usize>(seed: u64) {
    let (mut r, mut met, mut patches) = (rng(seed), 0, 0);
    for i in 0..4_000 {
        let Some((a, b, n)) = flat_pair::<D>(&mut r) else { continue };
        // Those that miss `a`'s face and meet it later, elsewhere, are no
        // flat contacts.
        let Some(c) = first_contact(&a, &b).filter(|c| (c.time - 0.5).abs() < 1e-9) else { continue };
        met += 1;
        assert!(dot(c.normal, n) > 1.0 - 1e-9, "case {i}: {c:?}");
        let later = intersect(&at(&a, 0.5 + 1e-8), &at(&b, 0.5 + 1e-8)).expect("overlapping after the contact");
        let set = c.set.aabb();
        for k in 0..D {
            let off = (set.min[k] - later.aabb.min[k]).abs().max((set.max[k] - later.aabb.max[k]).abs());
            assert!(off < 1e-6, "case {i}: axis {k} off by {off}: set {set:?}, FMB {:?}\n{a:?}\n{b:?}", later.aabb);
        }
        patches += u64::from(c.set.points().len() >= D);
        assert_eq!(c.set.points(), first_contact(&b, &a).map(|e| e.set).expect("symmetric").points(), "case {i}");
    }
    println!("{D}D: {met} flat contacts, {patches} with a {}", if D == 2 { "segment" } else { "polygon" });
    assert!(met > 1_000 && patches * 10 > met * 9, "{met} {patches}");
}

#[test]
fn contact_set_of_flat_contacts_3d_is_fmbs_box_just_after() {
    flat_contacts::<3>(53);
}

#[test]
fn contact_set_of_flat_contacts_2d_is_fmbs_box_just_after() {
    flat_contacts::<2>(54);
}

/// Review regressions: a cube's edge landing on a slab across its border
/// meets it on a segment of two points (not three near-copies of one end);
/// a plate thinner than the feature tolerance gets one common point
/// instead of a clipped sliver.
#[test]
fn contact_sets_of_an_overhanging_edge_and_a_plate_thinner_than_the_tolerance() {
    let slab = Frame::<3>::from_aabb([0.0, 0.0, -1.0], [2.0, 2.0, 0.0]).expect("valid");
    let (c, s) = (std::f64::consts::FRAC_1_SQRT_2, std::f64::consts::FRAC_1_SQRT_2);
    let cube = Frame::<3>::oriented_box([2.0, 1.0, 0.9], [0.7, 0.5, 0.5], [[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]])
        .and_then(|f| f.with_velocity([0.0, 0.0, -1.0]))
        .expect("valid");
    let set = first_contact(&slab, &cube).expect("they meet").set;
    assert_eq!(set.points().len(), 2, "{set:?}");
    assert!((set.centroid()[0] - 1.65).abs() < 1e-9 && (set.aabb().min[0] - 1.3).abs() < 1e-9, "{set:?}");
    let plate = Frame::<3>::from_aabb([0.0, 0.0, 0.0], [1e-10, 2.0, 2.0]).expect("valid");
    let block = Frame::<3>::from_aabb([1.0, 0.5, 0.5], [2.0, 1.5, 1.5]).and_then(|f| f.with_velocity([-2.0, 0.0, 0.0]));
    let c = first_contact(&plate, &block.expect("valid")).expect("they meet");
    assert_eq!(c.set.points(), [c.point]);
    assert!(c.point[0].abs() < 1e-9 && (0.5..=1.5).contains(&c.point[1]), "{c:?}");
}
