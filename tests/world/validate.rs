//! The invariants the world and its subsystems state on their fields
//! (`World::validate`, hidden from the docs) hold through every kind of
//! change: insertions and removals of fixed and moving bodies, a large
//! body (a mesh's body-level pass), re-poses, turns, parked runaways,
//! `pairs_within`, a snapshot restored, and the re-sorts of steps 1 and 33.
//!
//! In a debug build the world also validates itself after every step and
//! change; run it so: `cargo test --features serde,mint --test world validate::`
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
