//! Thin frames, across the whole admitted range of thinness (one component
//! down to `MIN_RELATIVE_LENGTH` = 1e-12 of the longest) and of scale,
//! against an exact oracle that shares no code with FMB: the separating-axis
//! test in integer arithmetic (`support/exact_sat.rs`).
//!
//! The promise checked, pair by pair and in both argument orders: where the
//! frames interpenetrate deeper than the band (`1e-9 · pair_scale`) at some
//! instant, FMB finds them (no false negative); where some axis separates
//! them by more than the band all along, FMB does not; every contact
//! interval FMB gives lies between the exact intervals of the frames shrunk
//! and grown by the band (its instants are exact to the band); `overlaps`,
//! `intersect` and `overlap_interval` agree.
//!
//! The long run (millions of pairs):
//! `cargo test --release --test suite narrow::thin_frames:: -- --ignored`.

use crate::support;

use fmbgrid::{Frame, FrameKind, intersect, overlap_interval, overlaps};
use rand::Rng;
use support::{TestRng, add, band, exact_sat, mul, random_dir, random_point, rng, sub};

/// A frame with random directions, `thin_count` of whose heights are
/// `thin` times its size (`thin = 1` for a plain frame), at `scale`: short
/// components (needles, plates), or, a third of the time, a long component
/// within `thin` of the others' plane (a flat sliver).
fn frame<const D: usize>(rng: &mut TestRng, scale: f64, thin: f64, thin_count: usize) -> Option<Frame<D>> {
    let kind = if rng.random_bool(0.5) { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
    let mut comps: [[f64; D]; D] = std::array::from_fn(|i| {
        let len = scale * rng.random_range(0.3..1.5) * if i < thin_count { thin } else { 1.0 };
        mul(random_dir(rng), len)
    });
    if thin < 1.0 && thin_count == 1 && rng.random_bool(0.33) {
        let (u, w): (f64, f64) = (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        comps[0] = add(comps[0], add(mul(comps[1], u), mul(comps[D - 1], if D == 3 { w } else { 0.0 })));
    }
    // Which component is thin is random too.
    let k = rng.random_range(0..D);
    comps.swap(0, k);
    Frame::new(kind, [0.0; D], comps).ok()
}

/// `f` moved so that a random point of it (a vertex half the time) lands
/// on `p`.
fn placed_at<const D: usize>(f: &Frame<D>, p: [f64; D], rng: &mut TestRng) -> Option<Frame<D>> {
    let q = if rng.random_bool(0.5) {
        let vertices: Vec<[f64; D]> = f.vertices().collect();
        vertices[rng.random_range(0..vertices.len())]
    } else {
        random_point(f, 0.0, rng)
    };
    let origin = add(f.origin(), sub(p, q));
    Frame::new(f.kind(), origin, f.components()).ok()
}

/// A random point of `f` at rest, on a face half the time (one local
/// coordinate zero).
fn point_of<const D: usize>(f: &Frame<D>, rng: &mut TestRng) -> [f64; D] {
    let mut x: [f64; D] = std::array::from_fn(|_| rng.random::<f64>());
    if f.kind() == FrameKind::Tetrahedron {
        let total: f64 = x.iter().sum::<f64>() + rng.random::<f64>();
        x = x.map(|xi| xi / total);
    }
    if rng.random_bool(0.5) {
        x[rng.random_range(0..D)] = 0.0;
    }
    let comps = f.components();
    (0..D).fold(f.origin(), |p, i| add(p, mul(comps[i], x[i])))
}

/// The thinness `10^u` for `u` uniform in `[-12, -2]` (or a plain frame).
fn thinness(rng: &mut TestRng) -> f64 {
    10f64.powf(rng.random_range(-12.0..=-2.0)).max(1.0001e-12)
}

/// A random pair with at least one thin frame, overlapping (or nearly) at a
/// random instant when `moving`.
fn thin_pair<const D: usize>(rng: &mut TestRng, moving: bool) -> Option<(Frame<D>, Frame<D>)> {
    let scale = 10f64.powf(rng.random_range(-3.0..=6.0));
    let thin_a = if rng.random_bool(0.5) { thinness(rng) } else { 1.0 };
    let count_a = rng.random_range(1..D);
    let a = frame::<D>(rng, scale, thin_a, count_a)?;
    let (scale_b, thin_b, count_b) =
        (scale * 10f64.powf(rng.random_range(-1.0..=1.0)), thinness(rng), rng.random_range(1..D));
    let b = frame::<D>(rng, scale_b, thin_b, count_b)?;
    // A common point at time `t`, nudged by a fraction of the thin size so
    // near-touching and just-missing pairs come up too.
    let t = if moving { rng.random::<f64>() } else { 0.0 };
    let mut p = point_of(&a, rng);
    if rng.random_bool(0.5) {
        p = add(p, mul(random_dir(rng), scale * 10f64.powf(rng.random_range(-13.0..=0.3))));
    }
    let b = placed_at(&b, p, rng)?;
    // A translation of the whole pair, as far as the reach allows.
    let off = mul(random_dir(rng), scale * 10f64.powf(rng.random_range(-2.0..=2.0)));
    let (mut a, mut b) = (shift(&a, off)?, shift(&b, off)?);
    if moving {
        let va = if rng.random_bool(0.3) { [0.0; D] } else { mul(random_dir(rng), scale * rng.random_range(0.0..3.0)) };
        let vb = mul(random_dir(rng), scale * rng.random_range(0.1..3.0));
        // Both pass through the common configuration at `t`.
        a = shift(&a, mul(va, -t))?.with_velocity(va).ok()?;
        b = shift(&b, mul(vb, -t))?.with_velocity(vb).ok()?;
    }
    Some((a, b))
}

fn shift<const D: usize>(f: &Frame<D>, off: [f64; D]) -> Option<Frame<D>> {
    Frame::new(f.kind(), add(f.origin(), off), f.components()).ok()?.with_velocity(f.velocity()).ok()
}

/// What was seen over a run.
#[derive(Default, Debug)]
struct Tally {
    pairs: usize,
    deep: usize,
    apart: usize,
    in_band: usize,
}

/// Checks one pair in both orders; `Err` describes the first wrong answer.
fn check<const D: usize>(a: &Frame<D>, b: &Frame<D>, tally: &mut Tally) -> Result<(), String> {
    let band = band(a, b);
    let inner = exact_sat::interval(a, b, -band);
    let outer = exact_sat::interval(a, b, band);
    tally.pairs += 1;
    match (&inner, &outer) {
        (Some(_), _) => tally.deep += 1,
        (None, None) => tally.apart += 1,
        _ => tally.in_band += 1,
    }
    // Four ulps of the rationals' conversion to f64.
    let slack = 4.0 * f64::EPSILON;
    for (x, y) in [(a, b), (b, a)] {
        let hit = intersect(x, y);
        let said = format!("{x:?}\n{y:?}\nintersect: {hit:?}\ninner {inner:?}\nouter {outer:?}");
        if overlaps(x, y) != hit.is_some() || overlap_interval(x, y) != hit.map(|h| h.time) {
            return Err(format!("overlaps / intersect / overlap_interval disagree\n{said}"));
        }
        match (hit, &inner, &outer) {
            (None, Some(_), _) => return Err(format!("false negative: deeper than the band\n{said}")),
            (Some(_), _, None) => return Err(format!("false positive: apart by more than the band\n{said}")),
            (Some(h), _, Some(o)) => {
                if h.time[0] < o.lo() - slack || h.time[1] > o.hi() + slack {
                    return Err(format!("interval outside the grown frames' interval\n{said}"));
                }
                if let Some(i) = &inner
                    && (h.time[0] > i.lo() + slack || h.time[1] < i.hi() - slack)
                {
                    return Err(format!("interval misses part of the shrunk frames' interval\n{said}"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn run<const D: usize>(seed: u64, moving: bool, pairs: usize) -> Tally {
    let mut rng = rng(seed);
    let mut tally = Tally::default();
    while tally.pairs < pairs {
        let Some((a, b)) = thin_pair::<D>(&mut rng, moving) else { continue };
        if let Err(e) = check(&a, &b, &mut tally) {
            panic!("pair {} (seed {seed}, {D}D, moving {moving}): {e}", tally.pairs);
        }
    }
    // The generator must exercise both sides of the band, and the band.
    assert!(tally.deep > pairs / 10 && tally.apart > pairs / 100 && tally.in_band > 0, "{tally:?}");
    eprintln!("{D}D, moving {moving}: {tally:?}");
    tally
}

#[test]
fn thin_static_2d() {
    run::<2>(1, false, 20_000);
}

#[test]
fn thin_static_3d() {
    run::<3>(2, false, 10_000);
}

#[test]
fn thin_moving_2d() {
    run::<2>(3, true, 20_000);
}

#[test]
fn thin_moving_3d() {
    run::<3>(4, true, 10_000);
}

#[test]
#[ignore = "long: about a million thin pairs of each class"]
fn thin_long_run() {
    let n = 1_000_000;
    std::thread::scope(|s| {
        s.spawn(|| {
            run::<2>(11, false, n);
            run::<2>(13, true, n);
        });
        s.spawn(|| {
            run::<3>(12, false, n);
            run::<3>(14, true, n);
        });
    });
}

/// The two pairs, confirmed with rational arithmetic.
#[test]
fn reported_thin_pairs() {
    let a = Frame::tetrahedron(
        [0.4809697833637352, -0.6632621344710483, 0.29096766486196857],
        [
            [-0.2742513593947328, 0.7942285091354773, -0.6149814215191667],
            [6.7013490858606316e-9, 3.243404279656394e-9, 1.2002802412400862e-9],
            [0.37652285544483266, -0.4843346492919745, -0.7934130598180091],
        ],
    )
    .unwrap()
    .with_velocity([0.15743652096105476, 0.07342429225841947, -0.1052194458424806])
    .unwrap();
    let b = Frame::cuboid(
        [-1.1189455088232165, -5.873024194269619, -3.4724195102599382],
        [
            [-1.396089448039253, 1.5594156894636697, -0.3686879184821808],
            [0.47778403302905065, -1.7909533785704532, 1.329712931304853],
            [-0.2648400990936819, -0.10939066432842527, 0.31794886028690417],
        ],
    )
    .unwrap()
    .with_velocity([4.687752644644464, 10.888217082251717, 5.579363826320313])
    .unwrap();
    let exact = exact_sat::interval(&a, &b, 0.0).expect("they meet");
    assert!((exact.lo() - 0.46151317879729925).abs() < 1e-15, "{}", exact.lo());
    check(&a, &b, &mut Tally::default()).unwrap();

    let c = Frame::cuboid(
        [0.5451472559217535, -1.209146381470051, 1.726983518079403],
        [
            [1.8625687464009756e-11, 1.028097045717416e-10, 1.1363652137686537e-10],
            [0.2892264447220543, 0.2526679279050345, -0.27600067309677034],
            [-1.0903187439835738, 0.7259017027727758, -0.47803120678474603],
        ],
    )
    .unwrap();
    let d = Frame::tetrahedron(
        [0.2922896533578567, -0.9064939918722912, 0.9983394184925578],
        [
            [-3.456228385612497e-12, -3.7676853696124105e-13, -1.60329866467325e-12],
            [-0.3235574983847559, -0.49325922690072305, 0.8134062581677269],
            [-0.4397025057145647, 1.334396164119458, 0.6342884288504624],
        ],
    )
    .unwrap();
    assert!(exact_sat::interval(&c, &d, -band(&c, &d)).is_some(), "deeper than the band");
    check(&c, &d, &mut Tally::default()).unwrap();
}

/// One touching policy: `penetration` and `distance` (frames at rest) and
/// `first_contact` (moving) give the verdict of `overlaps`, pair by pair, on
/// thin and plain frames placed within the band of touching.
#[test]
fn one_touching_policy() {
    use fmbgrid::query::{distance, first_contact, penetration};
    fn at_rest<const D: usize>(f: &Frame<D>) -> Frame<D> {
        f.with_velocity([0.0; D]).expect("at rest, a frame keeps its range")
    }
    fn policy<const D: usize>(seed: u64) {
        let mut rng = rng(seed);
        let (mut pairs, mut overlapping) = (0, 0);
        while pairs < 5_000 {
            let moving = rng.random_bool(0.5);
            let Some((a, b)) = thin_pair::<D>(&mut rng, moving) else { continue };
            pairs += 1;
            for (x, y) in [(&a, &b), (&b, &a)] {
                assert_eq!(first_contact(x, y).is_some(), overlaps(x, y), "{x:?}\n{y:?}");
                let (x, y) = (at_rest(x), at_rest(y));
                let verdict = overlaps(&x, &y);
                overlapping += usize::from(verdict);
                assert_eq!(penetration(&x, &y).is_some(), verdict, "{x:?}\n{y:?}");
                if verdict {
                    assert_eq!(distance(&x, &y).distance, 0.0, "{x:?}\n{y:?}");
                }
            }
        }
        assert!(overlapping > 1_000 && overlapping < 9_000, "{overlapping}");
    }
    policy::<2>(21);
    policy::<3>(22);
}

/// Interpenetrations of 1e-9 of the size at scales of 1e±6: `overlaps` and
/// `penetration` agree.
#[test]
fn one_touching_policy_at_extreme_scales() {
    use fmbgrid::query::penetration;
    for scale in [1e-6, 1.0, 1e6] {
        for overlap in [-1e-8, -1e-9, -1e-12, 0.0, 1e-12, 1e-9, 1e-8] {
            let a = Frame::<3>::from_aabb([0.0; 3], [scale; 3]).unwrap();
            let lo = scale * (1.0 - overlap);
            let b = Frame::<3>::from_aabb([lo, 0.25 * scale, 0.25 * scale], [lo + scale, 0.75 * scale, 0.75 * scale])
                .unwrap();
            assert_eq!(penetration(&a, &b).is_some(), overlaps(&a, &b), "scale {scale}, overlap {overlap}");
            if overlap >= 1e-9 {
                assert!(overlaps(&a, &b), "scale {scale}, overlap {overlap}");
            }
            if overlap <= -1e-9 {
                assert!(!overlaps(&a, &b), "scale {scale}, overlap {overlap}");
            }
        }
    }
}
