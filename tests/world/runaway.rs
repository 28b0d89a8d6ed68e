//! Runaway bodies (`fmbgrid::Runaway`, the range rule of `fmbgrid::range`):
//! one body whose motion is not a finite displacement, or would carry a
//! frame beyond its reach, never stops the others. By default the step
//! parks it (in place, velocity zero, listed by `parked()`) and every other
//! body's contacts are the brute force's (`check_step` knows the rule);
//! with `Runaway::Refuse` the step fails and nothing changes.
//!
//! Run: `cargo test --release --test suite world::runaway::`.

use crate::support::world as world_support;

use fmbgrid::{Body, Frame2, Frame3, FrameId, Pose2, Pose3, Runaway, World2, World3, WorldConfig, WorldError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use world_support::{StepStats, check_step, snapshot};

fn unit3(at: [f64; 3]) -> Frame3 {
    Frame3::from_aabb(at, at.map(|x| x + 1.0)).unwrap()
}

/// A crowd of colliding bodies, and two runaways: one too fast for its
/// size, one whose `velocity · dt` overflows.
fn crowd(config: WorldConfig) -> (World3, Vec<fmbgrid::BodyHandle>) {
    let mut w = World3::new(config);
    w.insert(Body::fixed(vec![Frame3::from_aabb([-20.0, -1.0, -20.0], [20.0, 0.0, 20.0]).unwrap()])).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..60 {
        let at = [rng.random_range(-8.0..8.0), rng.random_range(-0.5..3.0), rng.random_range(-8.0..8.0)];
        let v = [rng.random_range(-2.0..2.0), rng.random_range(-3.0..0.0), rng.random_range(-2.0..2.0)];
        w.insert(Body::moving(vec![unit3(at)]).with_velocity(v)).unwrap();
    }
    let fast = w.insert(Body::moving(vec![unit3([0.0, 1.0, 0.0])]).with_velocity([2e12, 0.0, 0.0])).unwrap();
    let huge = w.insert(Body::moving(vec![unit3([3.0, 1.0, 0.0])]).with_velocity([0.0, 1e15, 0.0])).unwrap();
    (w, vec![fast, huge])
}

#[test]
fn a_runaway_is_parked_and_the_others_go_on() {
    let (mut w, runaways) = crowd(WorldConfig::default());
    let mut stats = StepStats::default();
    // dt = 1: the fast one would reach 2e12 (its reach is 1e12); dt = 10:
    // the other's displacement is 1e16, not a supported number.
    check_step(&mut w, 10.0, &mut stats).unwrap();
    let mut expect = runaways.clone();
    expect.sort();
    assert_eq!(w.parked(), expect.as_slice());
    for h in &runaways {
        assert_eq!(w.body(*h).unwrap().velocity(), [0.0; 3]);
    }
    // Parked bodies stayed where they were and still collide at rest: the
    // fast one sits on the ground's top face beside others.
    assert_eq!(w.frame(FrameId { body: runaways[0], index: 0 }).unwrap().origin(), [0.0, 1.0, 0.0]);
    // Later steps go on as usual, with nothing parked.
    for dt in [0.05, 0.1, 0.0] {
        check_step(&mut w, dt, &mut stats).unwrap();
        assert!(w.parked().is_empty());
    }
    assert!(stats.contacts > 20, "{stats:?}");
}

#[test]
fn refuse_fails_the_step_for_the_first_runaway_and_changes_nothing() {
    let (mut w, runaways) = crowd(WorldConfig::default().with_runaway(Runaway::Refuse));
    let before = snapshot(&w);
    // Both runaways at dt = 10; the first in handle order is the fast one.
    assert_eq!(w.step(10.0).map(|c| c.len()), Err(WorldError::OutOfRange(runaways[0])));
    assert_eq!(
        WorldError::OutOfRange(runaways[0]).to_string(),
        format!(
            "body #{}.0 would leave the supported range (a frame's box within ±1e15 and ±1e12 × its shortest component)",
            runaways[0].index()
        )
    );
    assert_eq!(snapshot(&w), before);
    assert!(w.parked().is_empty());
    // Without it, the other one's number is reported.
    w.remove(runaways[0]).unwrap();
    let e = w.step(10.0).unwrap_err();
    assert_eq!(e, WorldError::BadDisplacement { body: runaways[1], value: 1e16 });
    assert_eq!(
        e.to_string(),
        format!(
            "body #{}.0: velocity × dt is 1e16: it must be a finite number of magnitude at most 1e15",
            runaways[1].index()
        )
    );
    // A step they survive: the world's contacts are the brute force's.
    check_step(&mut w, 1e-3, &mut StepStats::default()).unwrap();
}

/// The rule is one: a frame carried by a step to a place is parked exactly
/// when the same frame placed there by a pose is refused as out of range.
#[test]
fn steps_and_poses_apply_one_rule() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut parked, mut kept) = (0, 0);
    for _ in 0..400 {
        let size = 10f64.powf(rng.random_range(-4.0..2.0));
        let frame = Frame2::from_aabb([0.0; 2], [size, 2.0 * size]).unwrap();
        // Targets spread around the frame's reach (1e12 · size).
        let x = size * 1e12 * rng.random_range(0.5..1.5) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let mut w = World2::new(WorldConfig::default());
        let h = w.insert(Body::moving(vec![frame]).with_velocity([x, 0.0])).unwrap();
        w.step(1.0).unwrap();
        let placed = Pose2::from_translation([x, 0.0]).and_then(|p| p.transform_frame(&frame));
        if w.parked() == [h] {
            parked += 1;
            assert!(placed.is_err(), "size {size:e}, x {x:e}: parked, but the frame is valid there");
        } else {
            kept += 1;
            assert!(placed.is_ok(), "size {size:e}, x {x:e}: carried there, but refused there: {placed:?}");
            assert_eq!(w.body(h).unwrap().pose().translation(), [x, 0.0]);
        }
    }
    assert!(parked > 100 && kept > 100, "{parked} parked, {kept} kept");
}

/// Poses in 3D follow the same rule, and name it in their error.
#[test]
fn a_pose_beyond_a_frames_reach_names_the_rule() {
    let mut w = World3::new(WorldConfig::default());
    let h = w.insert(Body::moving(vec![unit3([0.0; 3])])).unwrap();
    let far = Pose3::from_translation([0.0, 0.0, -3e12]).unwrap();
    let e = w.set_pose(h, far).unwrap_err();
    assert_eq!(
        e.to_string(),
        "frame 0 of the body: frame box reaches -3e12, beyond the supported ±1e12 for a frame of its size \
         (|x| <= 1e15 and <= 1e12 × its shortest component)"
    );
}
