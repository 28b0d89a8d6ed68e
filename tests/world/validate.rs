//! The invariants the world and its subsystems state on their fields
//! (`World::validate`, hidden from the docs) hold through every kind of
//! change: insertions and removals of fixed and moving bodies, a large
//! body (a mesh's body-level pass), re-poses, turns, parked runaways,
//! `pairs_within`, a snapshot restored, and the re-sorts of steps 1 and 33.
//!
//! In a debug build the world also validates itself after every step and
//! change; run it so: `cargo test --test suite world::validate::`
//! (the release suite runs it too, with the explicit calls only).

use fmbgrid::{Body, Frame3, Pose3, World3, WorldConfig};

fn cube(at: [f64; 3], size: f64) -> Frame3 {
    Frame3::from_aabb(at, at.map(|x| x + size)).unwrap()
}

#[test]
fn the_world_keeps_its_invariants_through_every_kind_of_change() {
    let mut world = World3::new(WorldConfig::default());
    world.validate();
    let floor = world.insert(Body::fixed(vec![cube([-20.0, -1.0, -20.0], 40.0)])).unwrap();
    let mut moving = Vec::new();
    for k in 0..40 {
        let x = f64::from(k % 8) * 1.5 - 6.0;
        let z = f64::from(k / 8) * 1.5 - 4.0;
        let body = Body::moving(vec![cube([x, 39.5, z], 1.0)]).with_velocity([0.3, -2.0, 0.1 * f64::from(k % 3)]);
        moving.push(world.insert(body).unwrap());
        world.validate();
    }
    // A large body: 70 frames in a row.
    let mesh: Vec<Frame3> = (0..70).map(|k| cube([f64::from(k as u8) * 0.5 - 17.0, 41.0, 10.0], 0.4)).collect();
    let large = world.insert(Body::moving(mesh).with_velocity([0.0, -3.0, 0.0])).unwrap();
    world.validate();
    for step in 0..40 {
        world.step(0.1).unwrap();
        world.validate();
        match step {
            3 => {
                world.remove(moving[5]).unwrap();
                world.insert(Body::fixed(vec![cube([3.0, 30.0, 3.0], 2.0)])).unwrap();
            }
            7 => world.set_pose(moving[9], Pose3::from_translation([0.0, 35.0, 0.0]).unwrap()).unwrap(),
            9 => world.set_angular_velocity(moving[11], [0.0, 1.0, 0.0]).unwrap(),
            12 => world.set_angular_velocity(moving[11], [0.0; 3]).unwrap(),
            15 => world.set_velocity(moving[12], [1e14, 0.0, 0.0]).unwrap(), // parked at the next step
            18 => world.set_pose(floor, Pose3::from_translation([0.0, 0.5, 0.0]).unwrap()).unwrap(),
            21 => {
                world.pairs_within(0.5).unwrap();
            }
            24 => world = World3::restore(world.snapshot()).unwrap(),
            27 => {
                world.remove(large).unwrap();
            }
            _ => {}
        }
        world.validate();
    }
    assert!(!world.is_empty());
}

/// `World::set_poses` skips the bodies it knows to be as placed at their
/// pose; `validate` checks each such mark against placing the frames anew.
/// Bodies at rest (some at -0.0 coordinates), moved then stopped, turned
/// then stopped, carried to a snapshot and back, re-posed every step to
/// where they are; turned poses and velocities whose sums round, so that
/// moved frames differ from frames placed anew (the test fails when a step
/// that moves a body leaves its mark).
#[test]
fn bodies_marked_as_placed_are_where_their_pose_puts_them() {
    let mut world = World3::new(WorldConfig::default());
    let (c, s) = (0.6_f64.cos(), 0.6_f64.sin());
    let turned = [[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]];
    let mut bodies = Vec::new();
    for k in 0..12 {
        let body = if k % 2 == 0 {
            Body::moving(vec![cube([-0.0; 3], 1.0)]).with_pose(Pose3::from_translation([-0.0; 3]).unwrap())
        } else {
            let x = 1.7 * f64::from(k);
            let pose = Pose3::new(turned, [x, 0.3, -0.1 * f64::from(k)]).unwrap();
            Body::moving(vec![cube([0.1, 0.2, 0.3], 1.0), cube([0.7, 1.1, -0.3], 0.5)]).with_pose(pose)
        };
        let body = if k % 3 == 1 { body.with_velocity([0.13, -0.07, 0.29]) } else { body };
        bodies.push(world.insert(body).unwrap());
    }
    world.set_angular_velocity(bodies[5], [0.0, 0.3, 0.1]).unwrap();
    for step in 0..12 {
        let poses: Vec<_> = bodies.iter().map(|&b| (b, world.body(b).unwrap().pose())).collect();
        world.set_poses(&poses).unwrap();
        world.validate();
        world.step(0.1).unwrap();
        world.validate();
        match step {
            3 => {
                for &b in &bodies {
                    world.set_velocity(b, [0.0; 3]).unwrap();
                }
            }
            5 => world.set_angular_velocity(bodies[5], [0.0; 3]).unwrap(),
            7 => world = World3::restore(world.snapshot()).unwrap(),
            9 => world.set_velocity(bodies[3], [-0.0, 0.11, 1.3]).unwrap(),
            _ => {}
        }
    }
}
