//! `World::step` against a brute-force O(N²) pass, on seeded random scenes.
//!
//! Before each step the brute force takes the frames as the world holds them
//! (`World::frame`), then tests every pair of frames of different bodies,
//! not both fixed, accepted by both collision filters, with
//! `fmbgrid::intersect(frame_a.with_velocity(v_a·dt), frame_b.with_velocity(v_b·dt))`
//! (fixed frames at rest). Both sides call the same function on the same
//! frames, so the contact sets must be equal exactly: same pairs, same boxes
//! and times bit for bit (`world_support::check_step`). The step is also
//! checked for `a < b`, no duplicate pair, `contacts()`, `body_pairs()`,
//! `events()` and the exact advance of every moving body.
//!
//! Each scene runs five steps (`dt` = 1, 0.5, 0, 0.25, 1) with random edits
//! between them, alternately all kinds (removals, insertions, re-poses of
//! fixed and moving bodies, new velocities) and re-poses only, so the
//! incremental parts of the broad phase (static grid kept between steps,
//! rebuilt when fixed bodies change, whether or not anything else did; cell
//! size chosen again) are exercised too.
//!
//! Scenes (2D and 3D, 600–2,000 frames): uniform oriented boxes and
//! tetrahedra; sizes 1:1000 log-uniform; clustered (90% of the bodies in 1%
//! of the volume); everything offset by ±1e6; a few huge frames and very
//! fast frames (displacement of thousands of cells per step); multi-frame
//! bodies with collision filters and many overlapping fixed bodies; a
//! hand-set cell size 100× smaller and 1,000× larger than the frames.
//!
//! The same scenes (one seed each, fewer frames) also run in the cheaper
//! contact modes (`ContactDetail::Interval` and `Candidates`), against the
//! brute force of that mode (`world_support::brute_contacts`): in
//! `Interval`, the same pairs and times as `intersect` with the overlap of
//! the swept boxes as box; in `Candidates`, every pair whose swept boxes
//! overlap, and (checked on the world's answer) every intersecting pair
//! among them.
//!
//! Default run: `cargo test --release --test suite grid_and_queries::brute_force::` (a few seconds).
//! Long run (more seeds, 4,000 frames per scene):
//! `cargo test --release --test suite grid_and_queries::brute_force:: -- --ignored --nocapture`.

use crate::support::world as world_support;

use std::time::Instant;

use rand::Rng;

use fmbgrid::{ContactDetail, World, WorldConfig};
use world_support::{
    BodySpec, SceneParams, Sizes, StepStats, TestRng, build_world, check_step, random_edits, random_reposes,
    random_scene, rng, scene_body,
};

/// The time steps of every scene.
const STEPS: [f64; 5] = [1.0, 0.5, 0.0, 0.25, 1.0];
/// Fraction of the bodies edited (per kind of edit) between steps.
const EDIT_RATE: f64 = 0.02;

/// Seeds per scene in the default run: `seed` and `seed + 1000`.
const SEEDS: [u64; 2] = [0, 1000];

/// Runs a scene with each of `SEEDS` added to `seed`.
fn run<const D: usize>(name: &str, seed: u64, p: &SceneParams, config: WorldConfig) {
    for s in SEEDS {
        run_seed::<D>(name, seed + s, p, config);
    }
}

/// Runs a scene and panics with its name, seed and the first difference.
fn run_seed<const D: usize>(name: &str, seed: u64, p: &SceneParams, config: WorldConfig) -> StepStats {
    let start = Instant::now();
    let mut r = rng(seed);
    let bodies: Vec<BodySpec<D>> = random_scene(&mut r, p);
    let mut world = World::<D>::new(config);
    build_world(&mut world, &bodies);
    let mut stats = StepStats::default();
    let mut edits = 0;
    let params = p.clone();
    let mut fresh = move |r: &mut TestRng| scene_body(r, &params);
    for (k, &dt) in STEPS.iter().enumerate() {
        if k % 2 == 1 {
            edits += random_edits(&mut world, &mut r, &mut fresh, EDIT_RATE);
        } else if k > 0 {
            // Only re-poses (fixed bodies included): the static grid must be
            // rebuilt for them alone.
            edits += random_reposes(&mut world, &mut r, 2.0 * EDIT_RATE);
        }
        if let Err(e) = check_step(&mut world, dt, &mut stats) {
            panic!("scene {name} ({D}D, seed {seed}), step {k}: {e}");
        }
    }
    println!(
        "{name:<22} {D}D seed {seed:>3}: {:>5} frames/step, {:>6} contacts ({} moving), {edits} edits, cell {:.3}, {:.2?}",
        stats.frames / stats.steps,
        stats.contacts,
        stats.moving_contacts,
        world.cell_size(),
        start.elapsed()
    );
    assert!(stats.contacts > 0, "scene {name} ({D}D, seed {seed}) has no contact: it tests nothing");
    stats
}

fn uniform(frames: usize, dim: usize) -> SceneParams {
    SceneParams::uniform(frames, dim)
}

fn mixed_sizes(frames: usize, dim: usize) -> SceneParams {
    // Sizes 0.1–100 log-uniform; the region keeps big frames from covering it.
    SceneParams {
        sizes: Sizes::LogUniform(0.1, 100.0),
        region: if dim == 2 { 1200.0 } else { 300.0 },
        ..uniform(frames, dim)
    }
}

fn clustered(frames: usize, dim: usize) -> SceneParams {
    let p = uniform(frames, dim);
    // 90% of the bodies in 1% of the volume, in a region 3 times larger per
    // axis: the cluster is 3.3 times denser than the uniform scene in 3D (10
    // times in 2D) and the rest is very sparse.
    let region = p.region * 3.0;
    SceneParams { region, cluster: Some((0.9, 0.01)), ..p }
}

fn far(frames: usize, dim: usize) -> SceneParams {
    SceneParams { offset: 1e6, ..uniform(frames, dim) }
}

fn huge_and_fast(frames: usize, dim: usize) -> SceneParams {
    // Frames of size 0.5–1 (cell ≈ 0.8), five of size 100, and twenty
    // crossing 5,000 units (thousands of cells) per unit step.
    SceneParams { huge: 5, huge_size: 100.0, fast: 20, fast_speed: 5000.0, ..uniform(frames, dim) }
}

fn bodies_and_filters(frames: usize, dim: usize) -> SceneParams {
    // Up to three frames per body, random filters, half the bodies fixed,
    // packed twice as densely (many fixed bodies overlap one another).
    let p = uniform(frames, dim);
    SceneParams {
        max_frames_per_body: 3,
        filters: true,
        fixed: 0.5,
        region: p.region * 0.5f64.powf(1.0 / dim as f64),
        ..p
    }
}

fn large_bodies(frames: usize, dim: usize) -> SceneParams {
    // Bodies of up to 150 frames (meshes, as far as the broad phase is
    // concerned: above its 64-frame threshold, only frames reaching another
    // body or a fixed frame enter the moving grid), packed so that bodies
    // overlap one another.
    let p = uniform(frames, dim);
    SceneParams { max_frames_per_body: 150, fixed: 0.3, region: p.region * 0.2, ..p }
}

fn scenes<const D: usize>(seed: u64, frames: usize) {
    let d = D;
    run_seed::<D>("uniform", seed, &uniform(frames, d), WorldConfig::default());
    run_seed::<D>("mixed sizes 1:1000", seed, &mixed_sizes(frames, d), WorldConfig::default());
    run_seed::<D>("clustered", seed, &clustered(frames, d), WorldConfig::default());
    run_seed::<D>("offset ±1e6", seed, &far(frames, d), WorldConfig::default());
    run_seed::<D>("huge and fast", seed, &huge_and_fast(frames, d), WorldConfig::default());
    run_seed::<D>("bodies, filters, fixed", seed, &bodies_and_filters(frames, d), WorldConfig::default());
    run_seed::<D>("large bodies", seed, &large_bodies(frames, d), WorldConfig::default());
    run_seed::<D>("cell 100x smaller", seed, &uniform(frames / 2, d), WorldConfig::default().with_cell_size(0.0075));
    run_seed::<D>("cell 1000x larger", seed, &uniform(frames / 2, d), WorldConfig::default().with_cell_size(750.0));
}

#[test]
fn uniform_3d() {
    run::<3>("uniform", 1, &uniform(2000, 3), WorldConfig::default());
}

#[test]
fn uniform_2d() {
    run::<2>("uniform", 2, &uniform(2000, 2), WorldConfig::default());
}

#[test]
fn mixed_sizes_3d() {
    run::<3>("mixed sizes 1:1000", 3, &mixed_sizes(1500, 3), WorldConfig::default());
}

#[test]
fn mixed_sizes_2d() {
    run::<2>("mixed sizes 1:1000", 4, &mixed_sizes(1500, 2), WorldConfig::default());
}

#[test]
fn clustered_3d() {
    run::<3>("clustered", 5, &clustered(1500, 3), WorldConfig::default());
}

#[test]
fn clustered_2d() {
    run::<2>("clustered", 6, &clustered(1500, 2), WorldConfig::default());
}

#[test]
fn far_coordinates_3d() {
    run::<3>("offset ±1e6", 7, &far(1500, 3), WorldConfig::default());
}

#[test]
fn far_coordinates_2d() {
    run::<2>("offset ±1e6", 8, &far(1500, 2), WorldConfig::default());
}

#[test]
fn huge_and_fast_frames_3d() {
    run::<3>("huge and fast", 9, &huge_and_fast(1500, 3), WorldConfig::default());
}

#[test]
fn huge_and_fast_frames_2d() {
    run::<2>("huge and fast", 10, &huge_and_fast(1500, 2), WorldConfig::default());
}

#[test]
fn multi_frame_bodies_filters_and_fixed_3d() {
    run::<3>("bodies, filters, fixed", 11, &bodies_and_filters(1500, 3), WorldConfig::default());
}

#[test]
fn multi_frame_bodies_filters_and_fixed_2d() {
    run::<2>("bodies, filters, fixed", 12, &bodies_and_filters(1500, 2), WorldConfig::default());
}

#[test]
fn large_multi_frame_bodies_3d() {
    run::<3>("large bodies", 1, &large_bodies(1500, 3), WorldConfig::default());
}

#[test]
fn large_multi_frame_bodies_2d() {
    run::<2>("large bodies", 1, &large_bodies(1500, 2), WorldConfig::default());
}

#[test]
fn cell_much_smaller_than_frames() {
    // Frames of 0.5–1: cells of 0.0075 put every frame six or seven levels up.
    run::<3>("cell 100x smaller", 13, &uniform(800, 3), WorldConfig::default().with_cell_size(0.0075));
    run::<2>("cell 100x smaller", 14, &uniform(800, 2), WorldConfig::default().with_cell_size(0.0075));
}

#[test]
fn cell_much_larger_than_frames() {
    // One cell holds the whole scene: the grid degenerates to all pairs.
    run::<3>("cell 1000x larger", 15, &uniform(800, 3), WorldConfig::default().with_cell_size(750.0));
    run::<2>("cell 1000x larger", 16, &uniform(800, 2), WorldConfig::default().with_cell_size(750.0));
}

/// A mostly-static world over many short steps: 90% of the bodies fixed,
/// the moving ones drifting slowly, so that each moving frame keeps its
/// near list into the fixed frames (`grid/near.rs`) for several steps.
/// Edits come at different rhythms: every 4th step some moving bodies jump
/// (re-posed: their fat boxes are left behind) and others are nudged by
/// less than their gaps to their neighbours, every 5th step new
/// velocities, every 7th step fixed bodies are removed, inserted or
/// re-posed (the fixed list is rebuilt: every kept list is stale), every
/// 14th step bodies of both kinds too, and the moving store is re-sorted on
/// its own schedule (after the first step, then every 32: lists are left
/// under other frames).
fn mostly_static_run<const D: usize>(seed: u64, frames: usize) {
    let p = SceneParams { fixed: 0.9, speed: 0.05, ..uniform(frames, D) };
    let mut r = rng(seed);
    let bodies: Vec<BodySpec<D>> = random_scene(&mut r, &p);
    let mut world = World::<D>::new(WorldConfig::default());
    build_world(&mut world, &bodies);
    let mut stats = StepStats::default();
    let params = p.clone();
    let mut fresh = move |r: &mut TestRng| scene_body(r, &params);
    for k in 0..40 {
        let moving: Vec<_> =
            world.bodies().filter(|(_, b)| b.motion() == fmbgrid::Motion::Moving).map(|(h, _)| h).collect();
        if k % 4 == 3 {
            for &h in moving.iter().step_by(5) {
                let pose = world.body(h).unwrap().pose();
                let t = pose.translation();
                let jump = std::array::from_fn(|i| t[i] + if i == 0 { 3.0 } else { 0.0 });
                world.set_pose(h, fmbgrid::Pose::new(pose.linear(), jump).unwrap()).unwrap();
            }
            // Nudges shorter than the gaps of pairs found apart: the pairs
            // remembered apart (`world/apart.rs`) must be tested again.
            for &h in moving.iter().skip(2).step_by(5) {
                let pose = world.body(h).unwrap().pose();
                let t = pose.translation();
                let nudge = std::array::from_fn(|i| t[i] + r.random_range(-0.4..0.4));
                world.set_pose(h, fmbgrid::Pose::new(pose.linear(), nudge).unwrap()).unwrap();
            }
        }
        if k % 5 == 4 {
            for &h in moving.iter().step_by(3) {
                let v: [f64; D] = std::array::from_fn(|_| r.random_range(-0.2..0.2));
                world.set_velocity(h, v).unwrap();
            }
        }
        if k % 7 == 6 {
            // Fixed bodies only (the fixed list alone changes): some nudged,
            // one removed, one inserted; and every 14th step all kinds.
            let fixed: Vec<_> =
                world.bodies().filter(|(_, b)| b.motion() == fmbgrid::Motion::Fixed).map(|(h, _)| h).collect();
            for &h in fixed.iter().step_by(50) {
                let pose = world.body(h).unwrap().pose();
                let t = pose.translation();
                let nudge = std::array::from_fn(|i| t[i] + r.random_range(-0.5..0.5));
                world.set_pose(h, fmbgrid::Pose::new(pose.linear(), nudge).unwrap()).unwrap();
            }
            world.remove(fixed[r.random_range(0..fixed.len())]).unwrap();
            let mut body = fresh(&mut r);
            body.fixed = true;
            body.velocity = [0.0; D];
            world.insert(body.body()).unwrap();
            if k % 14 == 13 {
                random_edits(&mut world, &mut r, &mut fresh, 0.01);
            }
        }
        if let Err(e) = check_step(&mut world, 0.5, &mut stats) {
            panic!("mostly static ({D}D, seed {seed}), step {k}: {e}");
        }
    }
    assert!(stats.moving_contacts > 0 && stats.contacts > stats.moving_contacts, "{stats:?}");
}

#[test]
fn mostly_static_many_steps_3d() {
    mostly_static_run::<3>(21, 3000);
}

#[test]
fn mostly_static_many_steps_2d() {
    mostly_static_run::<2>(22, 3000);
}

/// The scenes in a cheaper contact mode, one seed each and 1,000 frames
/// (fewer for the quadratic candidate counts of large bodies).
fn scenes_in_mode<const D: usize>(detail: ContactDetail, seed: u64) {
    let d = D;
    let config = WorldConfig::default().with_contact_detail(detail);
    run_seed::<D>("uniform", seed, &uniform(1000, d), config);
    run_seed::<D>("mixed sizes 1:1000", seed + 1, &mixed_sizes(1000, d), config);
    run_seed::<D>("offset ±1e6", seed + 2, &far(1000, d), config);
    run_seed::<D>("huge and fast", seed + 3, &huge_and_fast(1000, d), config);
    run_seed::<D>("bodies, filters, fixed", seed + 4, &bodies_and_filters(1000, d), config);
    run_seed::<D>("large bodies", seed + 5, &large_bodies(800, d), config);
    run_seed::<D>("clustered", seed + 6, &clustered(800, d), config);
    run_seed::<D>("cell 100x smaller", seed + 7, &uniform(400, d), config.with_cell_size(0.0075));
    run_seed::<D>("cell 1000x larger", seed + 8, &uniform(400, d), config.with_cell_size(750.0));
}

#[test]
fn interval_mode_3d() {
    scenes_in_mode::<3>(ContactDetail::Interval, 20);
}

#[test]
fn interval_mode_2d() {
    scenes_in_mode::<2>(ContactDetail::Interval, 30);
}

#[test]
fn candidates_mode_3d() {
    scenes_in_mode::<3>(ContactDetail::Candidates, 40);
}

#[test]
fn candidates_mode_2d() {
    scenes_in_mode::<2>(ContactDetail::Candidates, 50);
}

/// More seeds and 4,000 frames per scene (about a minute on 2 cores):
/// `cargo test --release --test suite grid_and_queries::brute_force:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn long_many_seeds() {
    for seed in 100..106 {
        scenes::<3>(seed, 4000);
        scenes::<2>(seed, 4000);
    }
}
