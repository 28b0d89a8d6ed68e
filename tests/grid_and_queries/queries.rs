//! `World::query_aabb` against brute force, through each path it takes:
//! before any step (every frame tested), right after steps (the moving
//! frames through the step's cell list, whose swept boxes contain the
//! frames' boxes now; frames of large bodies one by one), after the store
//! is re-sorted into the list's order (steps 1 and 33), and after an edit
//! that outdates the list.
//!
//! Run: `cargo test --release --test suite grid_and_queries::queries::`.

use crate::support::world as world_support;

use fmbgrid::{Aabb, Body, FrameId, Pose, World, World3, WorldConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use world_support::{random_frame, random_unit, scale};

fn brute<const D: usize>(world: &World<D>, q: &Aabb<D>) -> Vec<FrameId> {
    let mut out = Vec::new();
    for (h, b) in world.bodies() {
        for index in 0..b.frames().len() as u32 {
            let id = FrameId { body: h, index };
            if world.frame(id).unwrap().aabb().intersects(q) {
                out.push(id);
            }
        }
    }
    out.sort();
    out
}

fn check(world: &World3, rng: &mut ChaCha8Rng, when: &str) -> usize {
    let mut found = 0;
    for _ in 0..200 {
        let c: [f64; 3] = std::array::from_fn(|_| rng.random_range(-25.0..25.0));
        let e: [f64; 3] = std::array::from_fn(|_| rng.random_range(0.1..4.0));
        let q = Aabb { min: std::array::from_fn(|k| c[k] - e[k]), max: std::array::from_fn(|k| c[k] + e[k]) };
        let want = brute(world, &q);
        assert_eq!(world.query_aabb(&q), want, "{when}: {q:?}");
        found += want.len();
    }
    found
}

#[test]
fn queries_match_brute_force_through_every_path() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut w = World3::new(WorldConfig::default());
    for _ in 0..300 {
        let at: [f64; 3] = std::array::from_fn(|_| rng.random_range(-20.0..20.0));
        let f = random_frame::<3>(&mut rng, at, 1.0);
        let body = if rng.random_bool(0.3) { Body::fixed(vec![f]) } else { Body::moving(vec![f]) };
        let body = if body.motion() == fmbgrid::Motion::Moving {
            body.with_velocity(scale(random_unit(&mut rng), 6.0))
        } else {
            body
        };
        w.insert(body).unwrap();
    }
    // A large body (a mesh): 120 frames in a row, moving.
    let mesh: Vec<_> = (0..120).map(|k| random_frame::<3>(&mut rng, [k as f64 * 0.3 - 18.0, 0.0, 0.0], 0.5)).collect();
    let mesh = w.insert(Body::moving(mesh).with_velocity([0.0, 2.0, 0.0])).unwrap();
    let mut found = check(&w, &mut rng, "before any step");
    for step in 1..=40 {
        w.step(0.05).unwrap();
        found += check(&w, &mut rng, &format!("after step {step}"));
    }
    // Outdated list: re-posed, then queried before the next step.
    w.set_pose(mesh, Pose::from_translation([0.0, -5.0, 3.0]).unwrap()).unwrap();
    found += check(&w, &mut rng, "after set_pose");
    w.step(0.05).unwrap();
    found += check(&w, &mut rng, "after the next step");
    assert!(found > 2000, "queries found too little to prove anything: {found}");
}

/// `World::contact_geometry` on every contact of seeded steps equals, within
/// round-off, `query::first_contact` on the two frames as the step saw them (the
/// bodies' frames before the step, translating by velocity · dt), in both
/// 2D and 3D; and it refuses once the world changed.
fn contact_geometry_of_steps<const D: usize>(seed: u64) {
    use fmbgrid::query::first_contact;
    let mut r = world_support::rng(seed);
    let p = world_support::SceneParams::uniform(600, D);
    let bodies = world_support::random_scene::<D>(&mut r, &p);
    let mut world = World::<D>::new(WorldConfig::default());
    world_support::build_world(&mut world, &bodies);
    let dt = 0.5;
    let mut checked = 0;
    for _ in 0..3 {
        let before = world_support::view(&world);
        let frame_of = |id: FrameId| {
            let b = before.iter().find(|b| b.handle == id.body).expect("a body of the world");
            let f = b.frames[id.index as usize];
            if b.fixed {
                f
            } else {
                f.with_velocity(world_support::displacement(b.velocity, dt)).expect("a valid displacement")
            }
        };
        let contacts = world.step(dt).expect("a valid step").to_vec();
        for c in &contacts {
            let want = first_contact(&frame_of(c.a), &frame_of(c.b));
            let got = world.contact_geometry(c).expect("contacts are current");
            // The world moves its frames back by their displacement: the
            // same frames within round-off (about 1e-16 relative).
            assert_eq!(got.is_some(), want.is_some(), "{c:?}");
            if let (Some(g), Some(w)) = (got, want) {
                assert!((g.time - w.time).abs() < 1e-9 && (g.depth - w.depth).abs() < 1e-9, "{g:?} {w:?}");
                assert!(world_support::norm(world_support::sub(g.normal, w.normal)) < 1e-9, "{g:?} {w:?}");
                assert!(
                    world_support::norm(world_support::sub(g.point, w.point))
                        < 1e-9 * (1.0 + world_support::norm(w.point)),
                    "{g:?} {w:?}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 150, "{checked}");
    let any = world.step(dt).expect("a valid step")[0];
    world.insert(Body::fixed(vec![random_frame::<D>(&mut r, [0.0; D], 1.0)])).expect("a valid body");
    assert!(world.contact_geometry(&any).is_err());
}

#[test]
fn contact_geometry_of_step_contacts_3d() {
    contact_geometry_of_steps::<3>(81);
}

#[test]
fn contact_geometry_of_step_contacts_2d() {
    contact_geometry_of_steps::<2>(82);
}

/// User data follows its body through steps, re-sorts, removals and slot
/// reuse: every contact's `contact_user_data` is what was attached to its
/// two bodies, and a removed body's handle is refused.
#[test]
fn user_data_follows_bodies() {
    use std::collections::HashMap;
    let mut r = world_support::rng(83);
    let p = world_support::SceneParams::uniform(800, 3);
    let mut world = World3::new(WorldConfig::default());
    let mut data = HashMap::new();
    let mut next = 1000u64;
    let mut insert = |world: &mut World3, r: &mut world_support::TestRng, data: &mut HashMap<_, _>| {
        let body = world_support::scene_body::<3>(r, &p).body().with_user_data(next);
        let h = world.insert(body).expect("a valid body");
        data.insert(h, next);
        next += 7;
    };
    for _ in 0..600 {
        insert(&mut world, &mut r, &mut data);
    }
    let mut checked = 0;
    for step in 0..40 {
        for c in world.step(0.25).expect("a valid step").to_vec() {
            assert_eq!(world.contact_user_data(&c).expect("live bodies"), (data[&c.a.body], data[&c.b.body]));
            checked += 1;
        }
        if step % 5 == 4 {
            let gone = *data.keys().next().expect("bodies");
            world.remove(gone).expect("a live body");
            data.remove(&gone);
            assert!(world.user_data(gone).is_err() && world.set_user_data(gone, 1).is_err());
            insert(&mut world, &mut r, &mut data);
            let some = *data.keys().next().expect("bodies");
            world.set_user_data(some, 5).expect("a live body");
            data.insert(some, 5);
        }
    }
    assert!(checked > 1000, "{checked}");
}
