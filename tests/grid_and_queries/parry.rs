//! `World::step` against an independent pipeline built from parry (f64):
//! parry's BVH as the broad phase and parry's GJK as the narrow phase.
//!
//! For each step, from the frames as the world holds them (`World::frame`):
//! 1. broad phase: a parry `Bvh` (`Bvh::from_leaves(BvhBuildStrategy::Binned, ..)`)
//!    over the frames' swept AABBs (fixed frames at rest, moving frames
//!    swept by `velocity · dt`), all overlapping leaf pairs by
//!    `traverse_bvtt_single_tree`, then the rules of the world: frames of
//!    different bodies, not both fixed, accepted by both collision filters;
//! 2. narrow phase, on each candidate, by the parry oracle of
//!    `tests/support` (vertex sets in coordinates relative to the first
//!    frame's origin, computed from the frames' origin, components and
//!    velocity, support map = arg-max over the vertices): static pairs (no
//!    relative motion) by `intersection_test`, moving pairs by `cast_shapes`
//!    with `max_time_of_impact = 1`, `stop_at_penetration = true`
//!    (`support::parry_toi`).
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
//!   raised to parry's GJK distance when positive (`support::margin`);
//! * `scale` is the largest extent or coordinate magnitude of the two swept
//!   boxes (coordinates count since positions carry round-off relative to
//!   their magnitude; `support::pair_scale`), and `BAND = 1e-9`
//!   (`support::band`).
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
//! Default run: `cargo test --release --test suite grid_and_queries::parry:: -- --nocapture`
//! prints the counts (candidates, contacts, pairs in the band and how many of
//! them disagree). Long run (more seeds, larger scenes):
//! `cargo test --release --test suite grid_and_queries::parry:: -- --ignored --nocapture`.

use crate::support;
use crate::support::world as world_support;

use std::collections::HashMap;
use std::time::Instant;

use fmbgrid::{Frame, FrameId, World, WorldConfig};
use support::{Oracle, Parry2, Parry3};
use world_support::{
    BodySpec, SceneParams, Sizes, TestRng, accepts, build_world, displacement, random_edits, random_scene, rng,
    scene_body, sub, view,
};

/// Agreement required between the world's entry times and parry's.
const TIME_TOL: f64 = 1e-6;
/// Penetration (relative to the pair's extent) below which a contact counts
/// as grazing for the time check.
const GRAZING: f64 = 1e-6;
/// Time steps of each scene.
const STEPS: [f64; 3] = [1.0, 0.0, 0.5];

// ---------------------------------------------------------------------------
// The parry broad phase (the narrow phase is `support`'s oracle).
// ---------------------------------------------------------------------------

/// parry's BVH, for one dimension.
trait ParryBvh<const D: usize>: Oracle<D> {
    /// All pairs of overlapping boxes (closed test), by a BVH.
    fn pairs(boxes: &[fmbgrid::Aabb<D>]) -> Vec<(u32, u32)>;
}

macro_rules! parry_bvh {
    ($oracle:ident, $parry:ident, $d:literal) => {
        impl ParryBvh<$d> for $oracle {
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
        }
    };
}

parry_bvh!(Parry2, parry2d_f64, 2);
parry_bvh!(Parry3, parry3d_f64, 3);

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
fn check_step<const D: usize, P: ParryBvh<D>>(world: &mut World<D>, dt: f64, tally: &mut Tally) -> Result<(), String> {
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
        let (fa, fb) = (&a.2, &b.2);
        let moving = sub(fb.velocity(), fa.velocity()) != [0.0; D];
        let parry_time = support::parry_toi::<D, P>(fa, fb);
        let margin = support::margin::<D, P>(fa, fb);
        let band = support::band(fa, fb);
        if margin.abs() <= band {
            tally.in_band += 1;
            if world_time.is_some() != parry_time.is_some() {
                tally.in_band_disagree += 1;
            }
            continue;
        }
        match (world_time, parry_time) {
            (Some(t), Some(toi)) if moving => {
                let err = (t[0] - toi).abs();
                if margin > -GRAZING * support::pair_extent(fa, fb) {
                    tally.grazing_time += 1;
                } else if err > TIME_TOL {
                    failures.push(format!(
                        "pair {key:?}: world enters at {}, parry at {toi} (margin {margin:e}, scale {:e})\n  a = {:?}\n  b = {:?}",
                        t[0],
                        support::pair_scale(fa, fb),
                        a.2,
                        b.2
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

fn run<const D: usize, P: ParryBvh<D>>(name: &str, seed: u64, p: &SceneParams, config: WorldConfig) -> Tally {
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

fn scenes<const D: usize, P: ParryBvh<D>>(seed: u64, frames: usize) {
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
/// `cargo test --release --test suite grid_and_queries::parry:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn long_parry_many_seeds() {
    for s in 0..5 {
        scenes::<3, Parry3>(3000 + 10 * s, 3000);
        scenes::<2, Parry2>(4000 + 10 * s, 3000);
    }
}
