//! `World::pairs_within(δ)` against brute force: every pair of frames of
//! different bodies, not both fixed, that the collision filters accept,
//! whose exact distance (`query::distance`, itself validated against a
//! feature-pair brute force in `tests/narrow/distance.rs`) is at most `δ`. Seeded
//! scenes (uniform, mixed sizes 1:1000, bodies of several frames with
//! filters, bodies of up to 150 frames), 2D and 3D, several `δ` from 0 to 10× the frame size, over
//! several steps with edits in between; the answer must equal the brute
//! force pair for pair, bit for bit, in `(a, b)` order.

use crate::support::world as world_support;

use fmbgrid::query::distance;
use fmbgrid::{FrameId, Proximity, World, WorldConfig, WorldError};
use rand::Rng;
use world_support::{SceneParams, Sizes, accepts, build_world, random_scene, rng, scene_body, view};

/// Every pair within `delta`, by brute force over all frame pairs.
fn brute<const D: usize>(world: &World<D>, delta: f64) -> Vec<Proximity<D>> {
    let bodies = view(world);
    let frames: Vec<_> = bodies
        .iter()
        .flat_map(|b| {
            b.frames.iter().enumerate().map(move |(k, f)| (FrameId { body: b.handle, index: k as u32 }, b, f))
        })
        .collect();
    let mut out = Vec::new();
    for (x, (ia, ba, fa)) in frames.iter().enumerate() {
        for (ib, bb, fb) in &frames[x + 1..] {
            if ba.handle == bb.handle || (ba.fixed && bb.fixed) || !accepts(ba.filter, bb.filter) {
                continue;
            }
            let (a, b, f, g) = if ia < ib { (*ia, *ib, fa, fb) } else { (*ib, *ia, fb, fa) };
            let d = distance(f, g);
            if d.distance <= delta {
                out.push(Proximity { a, b, distance: d.distance, on_a: d.on_a, on_b: d.on_b });
            }
        }
    }
    out.sort_unstable_by_key(|p| (p.a, p.b));
    out
}

fn check<const D: usize>(name: &str, seed: u64, p: &SceneParams) -> usize {
    let mut r = rng(seed);
    let bodies = random_scene::<D>(&mut r, p);
    let mut world = World::<D>::new(WorldConfig::default());
    build_world(&mut world, &bodies);
    let mut found = 0;
    for step in 0..4 {
        for delta in [0.0, 0.05, 0.5, 2.0, 10.0] {
            let want = brute(&world, delta);
            let got = world.pairs_within(delta).expect("a valid tolerance").to_vec();
            assert_eq!(got.len(), want.len(), "{name} {D}D seed {seed}, step {step}, δ {delta}: count");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g, w, "{name} {D}D seed {seed}, step {step}, δ {delta}");
            }
            found += got.len();
        }
        // Edits between queries: a step, new bodies, a removal.
        world.step(0.5).expect("a valid step");
        let fresh = scene_body::<D>(&mut r, p);
        world.insert(fresh.body()).expect("a valid body");
        let handles: Vec<_> = world.bodies().map(|(h, _)| h).collect();
        world.remove(handles[r.random_range(0..handles.len())]).expect("a live body");
    }
    found
}

fn scenes<const D: usize>(seed: u64) {
    let uniform = SceneParams::uniform(300, D);
    assert!(check::<D>("uniform", seed, &uniform) > 100);
    let mixed = SceneParams {
        sizes: Sizes::LogUniform(0.1, 100.0),
        region: if D == 2 { 600.0 } else { 150.0 },
        ..uniform.clone()
    };
    assert!(check::<D>("mixed sizes", seed + 1, &mixed) > 100);
    let grouped = SceneParams { max_frames_per_body: 3, filters: true, fixed: 0.5, ..uniform.clone() };
    assert!(check::<D>("bodies and filters", seed + 2, &grouped) > 100);
    // Bodies of up to 150 frames, packed: the body-level pass of meshes.
    let large =
        SceneParams { frames: 600, max_frames_per_body: 150, fixed: 0.3, region: uniform.region * 0.4, ..uniform };
    assert!(check::<D>("large bodies", seed + 3, &large) > 100);
}

#[test]
fn pairs_within_equal_brute_force_3d() {
    scenes::<3>(61);
}

#[test]
fn pairs_within_equal_brute_force_2d() {
    scenes::<2>(71);
}

#[test]
fn bad_tolerances_are_refused() {
    let mut world = World::<3>::new(WorldConfig::default());
    for delta in [-1.0, f64::NAN, f64::INFINITY, -0.0 - 1e-300] {
        assert!(matches!(world.pairs_within(delta), Err(WorldError::BadTolerance { .. })), "{delta}");
    }
    assert!(world.pairs_within(0.0).expect("zero is a tolerance").is_empty());
}
