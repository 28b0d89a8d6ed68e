//! Kept pairs (the pair set, `src/world/pair_set.rs`): a world whose moving
//! bodies mostly rest or move slowly reads its candidates off the pairs
//! kept from the steps before, and must answer exactly as a world that
//! finds them afresh does. Each step is
//! checked against a copy restored from a snapshot taken just before it
//! (a restored world keeps no pairs: its step runs the pass): the same
//! contacts in the same order and the same events, bit for bit, while
//! bodies start and stop, jump to new poses or are posed where they are,
//! many move at once, bodies come and go, and the store is re-sorted.
//!
//! Run: `cargo test --release --test suite world::kept_pairs::`.

#![cfg(feature = "serde")]

use crate::support::world as world_support;

use fmbgrid::{BodyHandle, Contact, ContactDetail, Motion, Pose, World, WorldConfig};
use rand::Rng;
use world_support::{SceneParams, TestRng, build_world, random_scene, random_unit, rng};

/// Steps `world` once, and a copy restored from its snapshot beside it;
/// panics unless they agree bit for bit. Returns whether `world` used its
/// kept pairs.
pub(crate) fn step_against_the_pass<const D: usize>(world: &mut World<D>, dt: f64, what: &str) -> bool {
    let mut pass = World::restore(world.snapshot()).expect("a world's own snapshot restores");
    let ours = world.step(dt).map(<[Contact<D>]>::to_vec);
    let theirs = pass.step(dt).map(<[Contact<D>]>::to_vec);
    assert!(!pass.kept_pairs_used(), "{what}: a restored world keeps no pairs");
    let bits = |c: &Result<Vec<Contact<D>>, _>| {
        c.as_ref().map(|c| crate::support::contact_bits(c)).map_err(|e| format!("{e:?}"))
    };
    assert!(bits(&ours) == bits(&theirs), "{what}: the contacts differ from the pass's");
    assert_eq!(world.events(), pass.events(), "{what}: events");
    world.kept_pairs_used()
}

/// The moving bodies' handles.
pub(crate) fn moving<const D: usize>(world: &World<D>) -> Vec<BodyHandle> {
    world.bodies().filter(|(_, b)| b.motion() == Motion::Moving).map(|(h, _)| h).collect()
}

/// A velocity of about `speed` in a random direction.
pub(crate) fn velocity<const D: usize>(r: &mut TestRng, speed: f64) -> [f64; D] {
    random_unit::<D>(r).map(|x| x * speed * r.random_range(0.2..1.0))
}

/// One step's edits: a few bodies start moving, the others stop; a few jump
/// to another pose, a few are posed where they are; at `burst`, half of
/// them move (more than the kept pairs take); at `churn`, a body comes and
/// one goes.
fn edit<const D: usize>(world: &mut World<D>, r: &mut TestRng, region: f64, step: usize, burst: usize, churn: usize) {
    let handles = moving(world);
    let share = if step == burst { 0.5 } else { 0.02 };
    for &h in &handles {
        let v = if r.random_bool(share) { velocity::<D>(r, 2.0) } else { [0.0; D] };
        world.set_velocity(h, v).expect("a live body, a finite velocity");
    }
    for _ in 0..3 {
        let h = handles[r.random_range(0..handles.len())];
        let pose = world.body(h).expect("live").pose();
        let jump = Pose::new(pose.linear(), std::array::from_fn(|_| r.random_range(0.0..region)));
        world.set_pose(h, jump.expect("a rotation")).expect("a valid pose");
        let h = handles[r.random_range(0..handles.len())];
        let same = world.body(h).expect("live").pose();
        world.set_pose(h, same).expect("its own pose");
    }
    if step == churn {
        world.remove(handles[r.random_range(0..handles.len())]).expect("live");
        let spec = random_scene::<D>(r, &SceneParams::uniform(1, D)).remove(0);
        world.insert(spec.body()).expect("a valid body");
    }
}

/// A world of resting bodies (several frames each, filters, fixed ones
/// among them) run for `steps` steps against the pass; kept pairs must be
/// used on most steps.
fn resting_world<const D: usize>(seed: u64, detail: ContactDetail, steps: usize) {
    let mut r = rng(seed);
    let p = SceneParams { max_frames_per_body: 3, filters: true, ..SceneParams::uniform(2_500, D) };
    let mut world = World::<D>::new(WorldConfig::default().with_contact_detail(detail));
    build_world(&mut world, &random_scene::<D>(&mut r, &p));
    for h in moving(&world) {
        world.set_velocity(h, [0.0; D]).expect("live");
    }
    let (mut kept, mut contacts) = (0, 0);
    for step in 0..steps {
        if step > 0 {
            edit(&mut world, &mut r, p.region, step, 20, 45);
        }
        let what = format!("{D}D seed {seed} {detail:?} step {step}");
        kept += usize::from(step_against_the_pass(&mut world, 0.1, &what));
        contacts += world.contacts().len();
    }
    assert!(kept >= steps / 2, "{D}D seed {seed}: kept pairs used on {kept} of {steps} steps");
    assert!(contacts > steps, "{D}D seed {seed}: {contacts} contacts");
}

#[test]
fn resting_worlds_answer_as_the_pass_in_3d() {
    resting_world::<3>(1, ContactDetail::Interval, 70);
    resting_world::<3>(2, ContactDetail::ExactBox, 40);
}

#[test]
fn resting_worlds_answer_as_the_pass_in_2d() {
    resting_world::<2>(3, ContactDetail::Interval, 70);
    resting_world::<2>(4, ContactDetail::Candidates, 40);
}

/// Every body moving: at a fiftieth of their size a step (about the
/// uniform benchmark scene's speeds), the pairs are kept on most steps; at
/// twice their size a step, most frames leave their fat boxes every step
/// and the pairs are found afresh on most steps (the pair set's rebuild
/// mode). Either way, as afresh.
#[test]
fn slow_worlds_keep_their_pairs_and_fast_ones_rebuild() {
    for (speed, seed) in [(0.2, 5), (20.0, 6)] {
        let mut r = rng(seed);
        let mut world = World::<3>::new(WorldConfig::default().with_contact_detail(ContactDetail::Interval));
        let p = SceneParams { fixed: 0.0, speed, ..SceneParams::uniform(2_000, 3) };
        build_world(&mut world, &random_scene::<3>(&mut r, &p));
        let mut kept = 0;
        for step in 0..40 {
            kept += usize::from(step_against_the_pass(&mut world, 0.1, &format!("speed {speed} step {step}")));
        }
        // Slow: kept but on the first steps; fast: rebuilt on most steps.
        let ok = if speed < 1.0 { kept >= 30 } else { kept <= 20 };
        assert!(ok, "speed {speed}: pairs kept on {kept} of 40 steps");
    }
}
