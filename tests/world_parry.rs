//! `World::step` against an independent pipeline built from parry (f64):
//! parry's BVH as the broad phase and parry's GJK as the narrow phase.
//!
//! For each step, from the frames as the world holds them (`World::frame`):
//! 1. broad phase: a parry `Bvh` (`Bvh::from_leaves(BvhBuildStrategy::Binned, ..)`)
//!    over the frames' swept AABBs (fixed frames at rest, moving frames
//!    swept by `velocity · dt`), all overlapping leaf pairs by
//!    `traverse_bvtt_single_tree`, then the rules of the world: frames of
//!    different bodies, not both fixed, accepted by both collision filters;
//! 2. narrow phase, on each candidate (vertex sets in coordinates relative to
//!    the first frame's origin, support map = arg-max over the vertices):
//!    static pairs (no relative motion) by `intersection_test`, moving pairs
//!    by `cast_shapes` with `max_time_of_impact = 1`,
//!    `stop_at_penetration = true`.
//!
//! The world's pairs must equal parry's away from touching. parry counts
//! touching as a collision, the world does not, so a pair is "don't care"
//! when its signed margin is within `BAND · scale`:
//! * the margin is the signed distance between `A(0)` and the set swept by
//!   `B` relative to `A` (the hull of `B(0)` and `B(0) + v_B·dt - v_A·dt`; the
//!   frames' interiors meet at some instant of the step iff the interiors of
//!   these two sets meet), which covers the relevant instants (start, end,
//!   grazing contacts) in one rule. It is computed as a separating-axis value
//!   over every facet normal of their Minkowski difference (all cross
//!   products of edge directions; exact penetration depth when negative),
//!   raised to parry's GJK distance when positive;
//! * `scale` is the largest extent or coordinate magnitude of the two swept
//!   boxes (coordinates count since positions carry round-off relative to
//!   their magnitude), and `BAND = 1e-9`.
//!
//! Every pair the world reports must also be a candidate of parry's BVH. For
//! moving pairs that both report outside the band, the world's entry time
//! must agree with parry's time of impact within `TIME_TOL` (parry's GJK is
//! iterative), unless the contact is grazing (penetration below `1e-6` of
//! the larger swept box's extent, where the entry time is ill-conditioned);
//! those are only counted.
//!
//! Pairs in the band must stay rare (at most 1% of the candidates, or 3 per
//! scene): with `BAND · scale` about 1e-3 for frames of size 1 at ±1e6, a
//! few of the scene "offset ±1e6" fall in it.
//!
//! Default run: `cargo test --release --test world_parry -- --nocapture`
//! prints the counts (candidates, contacts, pairs in the band and how many of
//! them disagree). Long run (more seeds, larger scenes):
//! `cargo test --release --test world_parry -- --ignored --nocapture`.

mod world_support;

use std::collections::HashMap;
use std::time::Instant;

use fmbgrid::{Frame, FrameId, FrameKind, World, WorldConfig};
use world_support::{
    BodySpec, SceneParams, Sizes, TestRng, accepts, build_world, displacement, random_edits, random_scene, rng,
    scene_body, sub, view,
};

/// Width of the "don't care" band around touching, relative to the pair's scale.
const BAND: f64 = 1e-9;
/// Agreement required between the world's entry times and parry's.
const TIME_TOL: f64 = 1e-6;
/// Penetration (relative to the pair's extent) below which a contact counts
/// as grazing for the time check.
const GRAZING: f64 = 1e-6;
/// Time steps of each scene.
const STEPS: [f64; 3] = [1.0, 0.0, 0.5];

// ---------------------------------------------------------------------------
// The parry side.
// ---------------------------------------------------------------------------

/// parry queries for one dimension.
trait Parry<const D: usize> {
    /// All pairs of overlapping boxes (closed test), by a BVH.
    fn pairs(boxes: &[fmbgrid::Aabb<D>]) -> Vec<(u32, u32)>;
    /// Closed intersection test of two convex hulls (GJK).
    fn intersects(a: &[[f64; D]], b: &[[f64; D]]) -> bool;
    /// Distance between two convex hulls (GJK; 0 when they intersect).
    fn distance(a: &[[f64; D]], b: &[[f64; D]]) -> f64;
    /// First contact time in `[0, 1]` of `b` translating by `w` relative to `a`.
    fn toi(a: &[[f64; D]], b: &[[f64; D]], w: [f64; D]) -> Option<f64>;
}

struct Parry2;
struct Parry3;

macro_rules! parry_impl {
    ($oracle:ident, $parry:ident, $d:literal) => {
        impl Parry<$d> for $oracle {
            fn pairs(boxes: &[fmbgrid::Aabb<$d>]) -> Vec<(u32, u32)> {
                use $parry::bounding_volume::Aabb;
                use $parry::math::Vector;
                use $parry::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
                let leaves: Vec<Aabb> =
                    boxes.iter().map(|b| Aabb::new(Vector::from_array(b.min), Vector::from_array(b.max))).collect();
                let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
                let mut out = Vec::new();
                bvh.traverse_bvtt_single_tree::<false>(&mut BvhWorkspace::default(), &mut |i, j| {
                    out.push((i.min(j), i.max(j)))
                });
                out
            }

            fn intersects(a: &[[f64; $d]], b: &[[f64; $d]]) -> bool {
                use $parry::math::Pose;
                $parry::query::details::intersection_test_support_map_support_map(
                    &Pose::IDENTITY,
                    &Hull::<$d>::new(a),
                    &Hull::<$d>::new(b),
                )
            }

            fn distance(a: &[[f64; $d]], b: &[[f64; $d]]) -> f64 {
                use $parry::math::Pose;
                $parry::query::details::distance_support_map_support_map(
                    &Pose::IDENTITY,
                    &Hull::<$d>::new(a),
                    &Hull::<$d>::new(b),
                )
            }

            fn toi(a: &[[f64; $d]], b: &[[f64; $d]], w: [f64; $d]) -> Option<f64> {
                use $parry::math::{Pose, Vector};
                use $parry::query::details::{ShapeCastOptions, cast_shapes_support_map_support_map};
                let options = ShapeCastOptions {
                    max_time_of_impact: 1.0,
                    target_distance: 0.0,
                    stop_at_penetration: true,
                    compute_impact_geometry_on_penetration: false,
                };
                cast_shapes_support_map_support_map(
                    &Pose::IDENTITY,
                    Vector::from_array(w),
                    &Hull::<$d>::new(a),
                    &Hull::<$d>::new(b),
                    options,
                )
                .map(|hit| hit.time_of_impact)
            }
        }

        impl $parry::shape::SupportMap for Hull<$d> {
            fn local_support_point(&self, dir: $parry::math::Vector) -> $parry::math::Vector {
                let d = dir.to_array();
                let best = self.0.iter().max_by(|p, q| dot(**p, d).total_cmp(&dot(**q, d))).expect("non-empty hull");
                $parry::math::Vector::from_array(*best)
            }
        }
    };
}

/// A convex hull given by its points: the support map is the arg-max over
/// them (exact for polytopes, no hull construction).
struct Hull<const D: usize>(Vec<[f64; D]>);

impl<const D: usize> Hull<D> {
    fn new(p: &[[f64; D]]) -> Self {
        Hull(p.to_vec())
    }
}

fn dot<const D: usize>(a: [f64; D], b: [f64; D]) -> f64 {
    world_support::dot(a, b)
}

parry_impl!(Parry2, parry2d_f64, 2);
parry_impl!(Parry3, parry3d_f64, 3);

// ---------------------------------------------------------------------------
// Signed margin.
// ---------------------------------------------------------------------------

/// Edge directions of a frame.
fn edge_dirs<const D: usize>(f: &Frame<D>) -> Vec<[f64; D]> {
    let c = f.components();
    let mut v = c.to_vec();
    if f.kind() == FrameKind::Tetrahedron {
        for i in 0..D {
            for j in i + 1..D {
                v.push(sub(c[j], c[i]));
            }
        }
    }
    v
}

/// Unit normals of every facet a Minkowski difference of polytopes with
/// these edge directions can have: perpendiculars (2D), pairwise cross
/// products (3D).
fn axes<const D: usize>(dirs: &[[f64; D]]) -> Vec<[f64; D]> {
    let mut out = Vec::new();
    let mut push = |n: [f64; D]| {
        let l = world_support::norm(n);
        if l > 0.0 {
            out.push(n.map(|x| x / l));
        }
    };
    if D == 2 {
        for d in dirs {
            push(std::array::from_fn(|k| if k == 0 { -d[1] } else { d[0] }));
        }
    } else {
        for (i, a) in dirs.iter().enumerate() {
            for b in &dirs[i + 1..] {
                push(std::array::from_fn(|k| {
                    let (p, q) = ((k + 1) % 3, (k + 2) % 3);
                    a[p] * b[q] - a[q] * b[p]
                }));
            }
        }
    }
    out
}

/// Largest separation of two point sets' hulls over `axes` (negative: the
/// smallest overlap, the penetration depth when the axes are complete).
fn sat_margin<const D: usize>(p: &[[f64; D]], q: &[[f64; D]], axes: &[[f64; D]]) -> f64 {
    let span = |s: &[[f64; D]], n: [f64; D]| {
        s.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            let x = dot(*v, n);
            (lo.min(x), hi.max(x))
        })
    };
    axes.iter()
        .map(|&n| {
            let (a0, a1) = span(p, n);
            let (b0, b1) = span(q, n);
            (b0 - a1).max(a0 - b1)
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// A pair as both pipelines see it: vertex sets relative to `a`'s origin.
struct PairGeometry<const D: usize> {
    a: Vec<[f64; D]>,
    b: Vec<[f64; D]>,
    /// Displacement of `b` relative to `a` over the step.
    w: [f64; D],
    /// `b(0)` and `b(0) + w`: the set swept by `b` relative to `a`.
    swept: Vec<[f64; D]>,
    dirs: Vec<[f64; D]>,
    /// Largest extent or coordinate magnitude of the two swept boxes.
    scale: f64,
    /// Largest extent of the two swept boxes.
    extent: f64,
}

impl<const D: usize> PairGeometry<D> {
    fn new(a: &Frame<D>, b: &Frame<D>) -> Self {
        let c = a.origin();
        let rel = |f: &Frame<D>| f.vertices().map(|v| sub(v, c)).collect::<Vec<_>>();
        let (pa, pb) = (rel(a), rel(b));
        let w = sub(b.velocity(), a.velocity());
        let mut swept = pb.clone();
        if w != [0.0; D] {
            swept.extend(pb.iter().map(|v| world_support::add(*v, w)));
        }
        let mut dirs = edge_dirs(a);
        dirs.extend(edge_dirs(b));
        if w != [0.0; D] {
            dirs.push(w);
        }
        let scale = [a.aabb(), b.aabb()]
            .iter()
            .flat_map(|bx| bx.extent().into_iter().chain(bx.min).chain(bx.max))
            .fold(0.0f64, |m, x| m.max(x.abs()));
        let extent = [a.aabb(), b.aabb()].iter().flat_map(|bx| bx.extent()).fold(0.0f64, f64::max);
        PairGeometry { a: pa, b: pb, w, swept, dirs, scale, extent }
    }

    fn moving(&self) -> bool {
        self.w != [0.0; D]
    }

    /// Signed margin of `a` against the set swept by `b`.
    fn margin<P: Parry<D>>(&self) -> f64 {
        let s = sat_margin(&self.a, &self.swept, &axes(&self.dirs));
        if s > 0.0 { s.max(P::distance(&self.a, &self.swept)) } else { s }
    }

    /// parry's verdict (closed: touching collides) and first contact time.
    fn parry<P: Parry<D>>(&self) -> Option<f64> {
        if self.moving() { P::toi(&self.a, &self.b, self.w) } else { P::intersects(&self.a, &self.b).then_some(0.0) }
    }
}

// ---------------------------------------------------------------------------
// The comparison.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    candidates: usize,
    contacts: usize,
    moving_contacts: usize,
    in_band: usize,
    in_band_disagree: usize,
    grazing_time: usize,
    max_time_err: f64,
}

/// One step checked against parry; returns the first failure.
fn check_step<const D: usize, P: Parry<D>>(world: &mut World<D>, dt: f64, tally: &mut Tally) -> Result<(), String> {
    let bodies = view(world);
    let mut flat: Vec<(usize, FrameId, Frame<D>)> = Vec::new();
    for (bi, b) in bodies.iter().enumerate() {
        let d = displacement(b.velocity, dt);
        for (k, f) in b.frames.iter().enumerate() {
            let f = if b.fixed { *f } else { f.with_velocity(d).map_err(|e| e.to_string())? };
            flat.push((bi, FrameId { body: b.handle, index: k as u32 }, f));
        }
    }
    let boxes: Vec<_> = flat.iter().map(|(_, _, f)| f.aabb()).collect();
    let candidates: Vec<(usize, usize)> = P::pairs(&boxes)
        .into_iter()
        .map(|(i, j)| (i as usize, j as usize))
        .filter(|&(i, j)| {
            let (a, b) = (&bodies[flat[i].0], &bodies[flat[j].0]);
            flat[i].0 != flat[j].0 && !(a.fixed && b.fixed) && accepts(a.filter, b.filter)
        })
        .collect();

    let contacts = world.step(dt).map_err(|e| format!("step({dt}) refused: {e}"))?;
    let mut reported: HashMap<(FrameId, FrameId), [f64; 2]> = contacts.iter().map(|c| ((c.a, c.b), c.time)).collect();
    tally.contacts += contacts.len();
    tally.moving_contacts += contacts.iter().filter(|c| c.time != [0.0, 1.0]).count();
    tally.candidates += candidates.len();

    let mut failures = Vec::new();
    for (i, j) in candidates {
        let (a, b) = (&flat[i], &flat[j]);
        let key = if a.1 < b.1 { (a.1, b.1) } else { (b.1, a.1) };
        let world_time = reported.remove(&key);
        let g = PairGeometry::new(&a.2, &b.2);
        let parry_time = g.parry::<P>();
        let margin = g.margin::<P>();
        let band = BAND * g.scale;
        if margin.abs() <= band {
            tally.in_band += 1;
            if world_time.is_some() != parry_time.is_some() {
                tally.in_band_disagree += 1;
            }
            continue;
        }
        match (world_time, parry_time) {
            (Some(t), Some(toi)) if g.moving() => {
                let err = (t[0] - toi).abs();
                if margin > -GRAZING * g.extent {
                    tally.grazing_time += 1;
                } else if err > TIME_TOL {
                    failures.push(format!(
                        "pair {key:?}: world enters at {}, parry at {toi} (margin {margin:e}, scale {:e})\n  a = {:?}\n  b = {:?}",
                        t[0], g.scale, a.2, b.2
                    ));
                } else {
                    tally.max_time_err = tally.max_time_err.max(err);
                }
            }
            (Some(_), Some(_)) | (None, None) => {}
            (w, p) => failures.push(format!(
                "pair {key:?}: world says {}, parry says {} (margin {margin:e}, band {band:e})\n  a = {:?}\n  b = {:?}",
                w.is_some(),
                p.is_some(),
                a.2,
                b.2
            )),
        }
    }
    for (key, _) in reported {
        failures.push(format!("pair {key:?} reported by the world but its swept boxes do not overlap (parry's BVH)"));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        let n = failures.len();
        failures.truncate(6);
        Err(format!("{n} disagreement(s) with parry (dt = {dt}):\n{}", failures.join("\n")))
    }
}

fn run<const D: usize, P: Parry<D>>(name: &str, seed: u64, p: &SceneParams, config: WorldConfig) -> Tally {
    let start = Instant::now();
    let mut r = rng(seed);
    let bodies: Vec<BodySpec<D>> = random_scene(&mut r, p);
    let mut world = World::<D>::new(config);
    build_world(&mut world, &bodies);
    let mut tally = Tally::default();
    let params = p.clone();
    let mut fresh = move |r: &mut TestRng| scene_body(r, &params);
    for (k, &dt) in STEPS.iter().enumerate() {
        if k > 0 {
            random_edits(&mut world, &mut r, &mut fresh, 0.02);
        }
        if let Err(e) = check_step::<D, P>(&mut world, dt, &mut tally) {
            panic!("scene {name} ({D}D, seed {seed}), step {k}: {e}");
        }
    }
    println!(
        "{name:<20} {D}D seed {seed:>3}: {:>6} candidates, {:>5} contacts ({:>5} moving), {} in band ({} disagree), \
         {} grazing, max |Δt| {:.1e}, {:.2?}",
        tally.candidates,
        tally.contacts,
        tally.moving_contacts,
        tally.in_band,
        tally.in_band_disagree,
        tally.grazing_time,
        tally.max_time_err,
        start.elapsed()
    );
    assert!(tally.contacts > 0, "scene {name} has no contact: it tests nothing");
    // Skipped pairs must stay rare, or the comparison says little.
    assert!(
        tally.in_band * 100 <= tally.candidates.max(300),
        "scene {name} ({D}D, seed {seed}): {} of {} candidates within the band of touching",
        tally.in_band,
        tally.candidates
    );
    tally
}

fn scenes<const D: usize, P: Parry<D>>(seed: u64, frames: usize) {
    let u = SceneParams::uniform(frames, D);
    run::<D, P>("uniform", seed, &u, WorldConfig::default());
    let mixed =
        SceneParams { sizes: Sizes::LogUniform(0.1, 100.0), region: if D == 2 { 1000.0 } else { 250.0 }, ..u.clone() };
    run::<D, P>("mixed sizes 1:1000", seed + 1, &mixed, WorldConfig::default());
    let clustered = SceneParams { region: u.region * 3.0, cluster: Some((0.9, 0.01)), ..u.clone() };
    run::<D, P>("clustered", seed + 2, &clustered, WorldConfig::default());
    let far = SceneParams { offset: 1e6, ..u.clone() };
    run::<D, P>("offset ±1e6", seed + 3, &far, WorldConfig::default());
    let fast = SceneParams { huge: 3, huge_size: 50.0, fast: 10, fast_speed: 3000.0, ..u.clone() };
    run::<D, P>("huge and fast", seed + 4, &fast, WorldConfig::default());
    let bodies = SceneParams { max_frames_per_body: 3, filters: true, fixed: 0.5, ..u.clone() };
    run::<D, P>("bodies and filters", seed + 5, &bodies, WorldConfig::default());
    run::<D, P>("cell 0.01", seed + 6, &u, WorldConfig::default().with_cell_size(0.01));
}

#[test]
fn parry_agrees_3d() {
    scenes::<3, Parry3>(1000, 2000);
}

#[test]
fn parry_agrees_2d() {
    scenes::<2, Parry2>(2000, 2000);
}

/// More seeds, 3,000 frames per scene:
/// `cargo test --release --test world_parry -- --ignored --nocapture`.
#[test]
#[ignore]
fn long_parry_many_seeds() {
    for s in 0..5 {
        scenes::<3, Parry3>(3000 + 10 * s, 3000);
        scenes::<2, Parry2>(4000 + 10 * s, 3000);
    }
}
