//! Resting contacts (`src/world/resting.rs`): a contact of two frames at
//! rest (or of one and a fixed frame) is taken from the step before instead
//! of running FMB again, and must be exactly the contact FMB gives. Each
//! step is checked against a copy restored from a snapshot taken just
//! before it (a restored world remembers no contact, so its step runs FMB
//! on every pair): the same contacts in the same order and the same
//! events, bit for bit, while bodies stop after moving, start again, take
//! displacements of `-0.0` or of a few ulps, jump or are posed where they
//! are, turn and stop turning, and bodies (moving and fixed) come and go.
//!
//! Run: `cargo test --release --test suite world::resting::`.

#![cfg(feature = "serde")]

use crate::support::world as world_support;
use crate::world::kept_pairs::{moving, step_against_the_pass, velocity};

use fmbgrid::{Body, ContactDetail, Frame, Pose, World, WorldConfig};
use rand::Rng;
use world_support::{SceneParams, TestRng, Turn, build_world, random_scene, rng};

/// One step's edits: most bodies rest; a few move, and those that moved
/// stop; one takes a displacement of `-0.0`, one of a few ulps; a few jump
/// or are posed where they are; one turns at `turn` and stops the step
/// after; at `churn` a moving body and a fixed one come and one goes.
fn edit<const D: usize>(world: &mut World<D>, r: &mut TestRng, region: f64, step: usize, turn: usize, churn: usize)
where
    World<D>: Turn<D>,
{
    let handles = moving(world);
    for &h in &handles {
        let v = if r.random_bool(0.03) { velocity::<D>(r, 1.0) } else { [0.0; D] };
        world.set_velocity(h, v).expect("a live body, a finite velocity");
    }
    let pick = |r: &mut TestRng| handles[r.random_range(0..handles.len())];
    world.set_velocity(pick(r), [-0.0; D]).expect("live");
    world.set_velocity(pick(r), std::array::from_fn(|i| if i == 0 { 1e-300 } else { 0.0 })).expect("live");
    for _ in 0..2 {
        let h = pick(r);
        let pose = world.body(h).expect("live").pose();
        let jump = Pose::new(pose.linear(), std::array::from_fn(|_| r.random_range(0.0..region)));
        world.set_pose(h, jump.expect("a rotation")).expect("a valid pose");
        let h = pick(r);
        let same = world.body(h).expect("live").pose();
        world.set_pose(h, same).expect("its own pose");
    }
    if step == turn || step == turn + 1 {
        let omega = if step == turn { 0.3 } else { 0.0 };
        World::<D>::turn(world, handles[0], [0.0, 0.0, omega]).expect("a moving body");
    }
    if step == churn {
        world.remove(pick(r)).expect("live");
        let spec = random_scene::<D>(r, &SceneParams::uniform(1, D)).remove(0);
        world.insert(spec.body()).expect("a valid body");
        let at: [f64; D] = std::array::from_fn(|_| r.random_range(0.0..region));
        let ground = Frame::from_aabb(at, at.map(|x| x + 2.0)).expect("a box");
        world.insert(Body::fixed(vec![ground])).expect("a valid body");
    }
}

/// A world of touching bodies at rest (several frames each, filters, fixed
/// ones among them) run for `steps` steps against FMB; most contacts must
/// come from the step before (about 70%: the steps after a turn or a
/// churn start afresh).
fn resting_world<const D: usize>(seed: u64, detail: ContactDetail, steps: usize)
where
    World<D>: Turn<D>,
{
    let mut r = rng(seed);
    let p = SceneParams { max_frames_per_body: 3, filters: true, ..SceneParams::uniform(2_000, D) };
    let mut world = World::<D>::new(WorldConfig::default().with_contact_detail(detail));
    build_world(&mut world, &random_scene::<D>(&mut r, &p));
    for h in moving(&world) {
        world.set_velocity(h, [0.0; D]).expect("live");
    }
    let (mut reused, mut contacts) = (0, 0);
    for step in 0..steps {
        if step > 0 {
            edit(&mut world, &mut r, p.region, step, 12, 25);
        }
        let what = format!("{D}D seed {seed} {detail:?} step {step}");
        step_against_the_pass(&mut world, 0.1, &what);
        // A list kept from a step of bodies at rest holds their boxes.
        world.validate();
        reused += world.resting_contacts_used();
        contacts += world.contacts().len();
    }
    assert!(contacts > 20 * steps, "{D}D seed {seed}: {contacts} contacts");
    assert!(2 * reused > contacts, "{D}D seed {seed}: {reused} of {contacts} contacts taken from the step before");
}

#[test]
fn resting_contacts_are_fmbs_in_3d() {
    resting_world::<3>(11, ContactDetail::ExactBox, 40);
    resting_world::<3>(12, ContactDetail::Interval, 40);
}

#[test]
fn resting_contacts_are_fmbs_in_2d() {
    resting_world::<2>(13, ContactDetail::ExactBox, 40);
    resting_world::<2>(14, ContactDetail::Interval, 40);
}

/// Every body moving: no contact is taken from the step before.
#[test]
fn moving_worlds_take_no_contact() {
    let mut r = rng(15);
    let mut world = World::<3>::new(WorldConfig::default());
    build_world(&mut world, &random_scene::<3>(&mut r, &SceneParams { fixed: 0.0, ..SceneParams::uniform(1_500, 3) }));
    for step in 0..10 {
        step_against_the_pass(&mut world, 0.1, &format!("moving step {step}"));
        assert_eq!(world.resting_contacts_used(), 0, "step {step}");
    }
}

/// Bodies moving, then all at rest: the first step at rest rebuilds the
/// moving list, the later ones keep it (nothing moves, nothing changed);
/// a jump or a turn brings the builds back. Every step as FMB's, and the
/// list kept holds the frames' boxes.
#[test]
fn a_world_coming_to_rest_keeps_its_list_exact() {
    let mut r = rng(16);
    let p = SceneParams { max_frames_per_body: 2, ..SceneParams::uniform(1_500, 3) };
    let mut world = World::<3>::new(WorldConfig::default());
    build_world(&mut world, &random_scene::<3>(&mut r, &p));
    let handles = moving(&world);
    let mut reused = 0;
    for step in 0..16 {
        let moves = step < 3 || step == 9;
        for &h in &handles {
            let v = if moves { velocity::<3>(&mut r, 1.0) } else { [0.0; 3] };
            world.set_velocity(h, v).expect("live");
        }
        if step == 12 {
            let pose = world.body(handles[0]).expect("live").pose();
            let jump = Pose::new(pose.linear(), [p.region / 2.0; 3]).expect("a rotation");
            world.set_pose(handles[0], jump).expect("a valid pose");
        }
        step_against_the_pass(&mut world, 0.1, &format!("step {step}"));
        world.validate();
        reused += world.resting_contacts_used();
    }
    assert!(reused > 5 * world.contacts().len(), "{reused} contacts taken from the step before");
}

/// A world at rest after moving: from its second step at rest on, a step
/// gives the last step's results again (nothing moved, nothing changed,
/// nothing moves) and must equal what a restored copy computes afresh, bit
/// for bit, with no event. Every way of breaking the repeat is tried: a
/// velocity set (even to zero), another `dt`, a re-pose (to another pose,
/// and to the same pose, which changes nothing), a body inserted, contacts
/// taken by `step_into` or refined by `exact_boxes` (copied back from the
/// step's own).
#[test]
fn a_world_at_rest_repeats_its_last_step_exactly() {
    for detail in [ContactDetail::ExactBox, ContactDetail::Interval, ContactDetail::Candidates] {
        let mut r = rng(17);
        let p = SceneParams { max_frames_per_body: 2, filters: true, ..SceneParams::uniform(1_500, 3) };
        let mut world = World::<3>::new(WorldConfig::default().with_contact_detail(detail));
        build_world(&mut world, &random_scene::<3>(&mut r, &p));
        let handles = moving(&world);
        let mut repeats = 0;
        let mut taken = Vec::new();
        for step in 0..30 {
            let what = format!("{detail:?} step {step}");
            if step < 3 {
                for &h in &handles {
                    world.set_velocity(h, velocity::<3>(&mut r, 1.0)).expect("live");
                }
            } else if step == 3 || step == 15 {
                for &h in &handles {
                    world.set_velocity(h, [0.0; 3]).expect("live");
                }
            }
            let dt = if step == 20 { 0.05 } else { 0.1 };
            match step {
                8 => world.set_pose(handles[1], world.body(handles[1]).expect("live").pose()).expect("its pose"),
                10 => {
                    let pose = world.body(handles[2]).expect("live").pose();
                    let jump = Pose::new(pose.linear(), [p.region / 2.0; 3]).expect("a rotation");
                    world.set_pose(handles[2], jump).expect("a valid pose");
                }
                12 => world.step_into(dt, &mut taken).expect("a step"),
                17 => {
                    world.exact_boxes(|_| true).expect("current");
                }
                23 => {
                    let ground = Frame::from_aabb([1.0; 3], [3.0; 3]).expect("a box");
                    world.insert(Body::fixed(vec![ground])).expect("a valid body");
                }
                26 => {
                    world.set_velocity(handles[3], [5.0; 3]).expect("finite");
                    world.set_velocity(handles[3], [0.0; 3]).expect("finite");
                }
                _ => {}
            }
            step_against_the_pass(&mut world, dt, &what);
            world.validate();
            // The first step at rest, and each step after a break, runs
            // (a pose set again to the body's own may re-place its frames,
            // whose bits can differ from the frames translated there).
            let breaks = [3, 10, 15, 20, 21, 23, 26];
            if step != 8 {
                assert_eq!(world.step_repeated(), step > 3 && !breaks.contains(&step), "{what}");
            }
            if world.step_repeated() {
                repeats += 1;
                assert!(world.events().is_empty(), "{what}: a repeated step has no event");
            }
        }
        assert!(repeats >= 15, "{detail:?}: {repeats} repeated steps");
        assert!(!world.contacts().is_empty());
    }
}
