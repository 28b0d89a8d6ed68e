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
//! * for frames overlapping at the start: instant 0 and the penetration of
//!   the frames there.
//!
//! Default run: `cargo test --release --test first_contact` (100,000 pairs
//! per dimension).

mod support;

use fmbgrid::query::{first_contact, penetration};
use fmbgrid::{Frame, overlap_interval};
use support::{Oracle, Parry2, Parry3, Set, dot, gen_pair, halfspaces, mul, norm, pair_scale, rng, sub, vertices_rel};

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
            c.map(|c| (c.time, c.normal.map(|x| -x), c.point, c.depth)),
            e.map(|e| (e.time, e.normal, e.point, e.depth)),
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
            continue;
        }
        t.during += 1;
        let off = outside(&a, c.point, c.time).max(outside(&b, c.point, c.time));
        t.point_off = t.point_off.max(off / scale);
        assert!(off <= POINT_TOL * scale, "pair {i}: {c:?} off the frames by {off}\n{a:?}\n{b:?}");
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
