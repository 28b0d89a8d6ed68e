//! The pair set (`src/world/pair_set.rs`): the moving frames' candidate
//! pairs kept from step to step through fat boxes and a persistent grid.
//! Every step of worlds of slow, fast, huge, teleported, inserted and
//! removed frames, with bodies of several frames, must give brute force's
//! contacts (`check_step`) and keep the set's invariants
//! (`World::validate`): every frame's swept box inside its fat box (a frame
//! that left its fat box and was not moved fails it), every frame in its
//! fat box's cells, and the pairs exactly those of overlapping fat boxes of
//! different bodies (a pair kept after its fat boxes separated fails it,
//! and so does a pair missed). Each step is also checked against a copy
//! restored from a snapshot (which starts with no set): the same contacts
//! in the same order, bit for bit.
//!
//! Run: `cargo test --release --test suite world::pair_set::`.

use crate::support::world as world_support;

use fmbgrid::{Body, Frame, Pose, World, WorldConfig};
use rand::Rng;
use world_support::{SceneParams, StepStats, build_world, check_step, random_edits, random_scene, rng, scene_body};

/// `steps` steps of a world of `p`'s bodies, each checked against brute
/// force and validated; every fifth step, random edits at `edit_rate`;
/// at step 7 a few bodies jump far away (teleports).
fn run<const D: usize>(seed: u64, p: SceneParams, config: WorldConfig, steps: usize, edit_rate: f64) -> StepStats {
    let mut r = rng(seed);
    let mut world = World::<D>::new(config);
    build_world(&mut world, &random_scene::<D>(&mut r, &p));
    let (mut stats, mut kept) = (StepStats::default(), 0);
    for step in 0..steps {
        if step % 5 == 4 && edit_rate > 0.0 {
            random_edits(&mut world, &mut r, &mut |r| scene_body::<D>(r, &p), edit_rate);
        }
        if step == 7 {
            let moving: Vec<_> =
                world.bodies().filter(|(_, b)| b.velocity() != [0.0; D]).map(|(h, _)| h).take(5).collect();
            for h in moving {
                let pose = world.body(h).expect("live").pose();
                let far: [f64; D] = std::array::from_fn(|_| r.random_range(0.0..p.region));
                world.set_pose(h, Pose::new(pose.linear(), far).expect("a rotation")).expect("a valid pose");
            }
        }
        let mut fresh = World::restore(world.snapshot()).expect("a world's own snapshot restores");
        if let Err(e) = check_step(&mut world, 0.1, &mut stats) {
            panic!("{D}D seed {seed} step {step}: {e}");
        }
        world.validate();
        let theirs = fresh.step(0.1).expect("the same step").to_vec();
        assert!(theirs == world.contacts(), "{D}D seed {seed} step {step}: a restored copy's contacts differ");
        assert!(!fresh.kept_pairs_used(), "a restored world keeps no pairs");
        kept += usize::from(world.kept_pairs_used());
    }
    // Slow worlds keep their pairs but after the first steps and the edits
    // (which renumber the store).
    assert!(kept >= steps / 2, "{D}D seed {seed}: pairs kept on {kept} of {steps} steps");
    stats
}

#[test]
fn slow_frames_keep_their_pairs_exactly() {
    let p = SceneParams { fixed: 0.2, speed: 0.05, ..SceneParams::uniform(1_500, 3) };
    let stats = run::<3>(1, p, WorldConfig::default(), 30, 0.0);
    assert!(stats.contacts > 20 * stats.steps, "{stats:?}");
    let p = SceneParams { fixed: 0.2, speed: 0.05, ..SceneParams::uniform(1_500, 2) };
    run::<2>(2, p, WorldConfig::default(), 30, 0.0);
}

/// Mostly slow frames (the pair set in its persistent mode), with fast
/// ones among them, huge ones, bodies of several frames and filters.
#[test]
fn fast_huge_and_multi_frame_bodies_keep_their_pairs_exactly() {
    let p = SceneParams {
        speed: 0.05,
        max_frames_per_body: 3,
        filters: true,
        huge: 3,
        huge_size: 40.0,
        fast: 20,
        fast_speed: 30.0,
        ..SceneParams::uniform(1_500, 3)
    };
    let stats = run::<3>(3, p.clone(), WorldConfig::default(), 25, 0.02);
    assert!(stats.contacts > 20 * stats.steps, "{stats:?}");
    run::<2>(
        4,
        SceneParams { speed: 0.05, fast: 10, ..SceneParams::uniform(1_200, 2) },
        WorldConfig::default(),
        25,
        0.02,
    );
}

/// A manual cell size far below the frames: every fat box is huge for the
/// grid, which lists them apart.
#[test]
fn frames_no_level_fits_keep_their_pairs_exactly() {
    let p = SceneParams { speed: 0.05, ..SceneParams::uniform(400, 3) };
    run::<3>(5, p, WorldConfig::default().with_cell_size(1e-300), 16, 0.02);
}

/// A frame crossing a row of others, one cell and more a step: each step's
/// pairs are its neighbours of that step, as brute force says.
#[test]
fn a_frame_leaving_its_fat_box_finds_its_new_pairs() {
    let mut world = World::<2>::new(WorldConfig::default());
    for k in 0..40 {
        let x = 2.0 * f64::from(k);
        world.insert(Body::moving(vec![Frame::from_aabb([x, 0.0], [x + 1.0, 1.0]).expect("a box")])).expect("valid");
    }
    let bar = Body::moving(vec![Frame::from_aabb([-3.0, 0.5], [-2.0, 1.5]).expect("a box")]).with_velocity([13.0, 0.0]);
    world.insert(bar).expect("valid");
    let mut stats = StepStats::default();
    for step in 0..60 {
        if let Err(e) = check_step(&mut world, 0.1, &mut stats) {
            panic!("step {step}: {e}");
        }
        world.validate();
    }
    assert!(stats.contacts >= 50, "{stats:?}");
}
