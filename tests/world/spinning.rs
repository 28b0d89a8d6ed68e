//! Bodies that turn within the step (`set_angular_velocity`) in a `World`,
//! against brute force: every pair of frames of different bodies, each
//! as the world placed it at the step's start and moving by its velocity,
//! decided by `intersect_spinning` when either body turns (with the
//! world's tolerance) and by `intersect` otherwise. The world's contacts
//! must be exactly those (the broad phase's turning boxes lose none), in
//! every detail mode, over steps in which bodies turn slowly, fast or a
//! whole turn, start and stop turning, and are re-posed; after each step
//! the turning bodies' frames are placed anew from their turned poses.
//! The same across thread counts, bit for bit.
//!
//! Run: `cargo test --release --test suite world::spinning::`.

use crate::support::world as world_support;

use fmbgrid::{Body, Contact, Frame, FrameId, Motion, World, World2, World3, WorldConfig, WorldError};
use rand::Rng;
use world_support::{SceneParams, TestRng, Turn, build_world, random_scene, rng, turning_pair};

/// The contacts of the next step of `dt`, by brute force.
fn brute<const D: usize>(world: &World<D>, dt: f64) -> Vec<Contact<D>>
where
    World<D>: Turn<D>,
{
    let mut frames = Vec::new();
    for (h, body) in world.bodies() {
        let d: [f64; D] = body.velocity().map(|v| v * dt);
        let rate = body.angular_velocity().map(|w| w * dt);
        let spin = (body.motion() == Motion::Moving && rate != [0.0; 3])
            .then(|| <World<D> as Turn<D>>::spin(body.pose().translation(), rate));
        for index in 0..body.frames().len() as u32 {
            let id = FrameId { body: h, index };
            let f = world.frame(id).expect("live");
            let f =
                if body.motion() == Motion::Moving && d != [0.0; D] { f.with_velocity(d).expect("valid") } else { f };
            frames.push((id, f, spin, body.motion()));
        }
    }
    let mut out = Vec::new();
    for (i, (a, f, sf, mf)) in frames.iter().enumerate() {
        for (b, g, sg, mg) in &frames[i + 1..] {
            if a.body == b.body || (*mf == Motion::Fixed && *mg == Motion::Fixed) {
                continue;
            }
            let hit = turning_pair(f, *sf, g, *sg);
            if let Some((aabb, time)) = hit {
                let (a, b) = if a < b { (*a, *b) } else { (*b, *a) };
                out.push(Contact { a, b, aabb, time });
            }
        }
    }
    sorted(out)
}

fn sorted<const D: usize>(mut c: Vec<Contact<D>>) -> Vec<Contact<D>> {
    c.sort_unstable_by_key(|c| (c.a, c.b));
    c
}

/// A seeded world in which about a third of the moving bodies turn
/// (slowly, fast, or a whole turn a step), stepped with edits between
/// steps, compared with brute force at each step.
fn turning_world<const D: usize>(seed: u64) -> usize
where
    World<D>: Turn<D>,
{
    let mut r = rng(seed);
    let p = SceneParams { speed: 1.0, max_frames_per_body: 3, ..SceneParams::uniform(500, D) };
    let mut world = World::<D>::new(WorldConfig::default());
    let handles = build_world(&mut world, &random_scene::<D>(&mut r, &p));
    let mut contacts = 0;
    let mut turning = 0;
    for step in 0..6 {
        for &h in &handles {
            if world.body(h).expect("live").motion() == Motion::Moving && r.random_bool(0.35) {
                let w = random_turn(&mut r);
                <World<D> as Turn<D>>::turn(&mut world, h, w).expect("moving");
            }
        }
        let dt = [0.5, 1.0, 0.25, 1.0, 0.0, 0.5][step];
        let want = brute(&world, dt);
        let got = sorted(world.step(dt).expect("a valid step").to_vec());
        assert_eq!(
            got.len(),
            want.len(),
            "seed {seed}, step {step}: {} contacts, brute force {}",
            got.len(),
            want.len()
        );
        assert!(got == want, "seed {seed}, step {step}: contacts differ from brute force");
        contacts += got.len();
        // Turned bodies' frames are placed anew from their poses.
        for (h, body) in world.bodies() {
            turning += usize::from(body.angular_velocity() != [0.0; 3]);
            for (k, f) in body.frames().iter().enumerate() {
                let placed = world.frame(FrameId { body: h, index: k as u32 }).expect("live");
                if body.angular_velocity() != [0.0; 3] && dt > 0.0 {
                    assert_eq!(placed, body.pose().transform_frame(f).expect("valid"), "step {step}");
                }
            }
        }
    }
    assert!(turning > 100, "{turning}");
    contacts
}

fn random_turn(r: &mut TestRng) -> [f64; 3] {
    let angle = match r.random_range(0..4) {
        0 => 0.0,
        1 => r.random_range(-0.1..0.1),
        2 => r.random_range(-3.0..3.0),
        _ => std::f64::consts::TAU,
    };
    let axis: [f64; 3] = std::array::from_fn(|_| r.random_range(-1.0..1.0));
    let n = axis.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
    axis.map(|x| x / n * angle)
}

#[test]
fn turning_worlds_equal_brute_force_3d() {
    let contacts: usize = (1..=3).map(turning_world::<3>).sum();
    assert!(contacts > 200, "{contacts}");
}

#[test]
fn turning_worlds_equal_brute_force_2d() {
    let contacts: usize = (4..=6).map(turning_world::<2>).sum();
    assert!(contacts > 200, "{contacts}");
}

/// A turning bar sweeps a post it misses at both ends of the step: found,
/// and its interval holds the instant of the crossing.
#[test]
fn a_bar_turning_through_a_post_within_one_step() {
    let mut world = World2::new(WorldConfig::default());
    let bar = world.insert(Body::moving(vec![Frame::from_aabb([0.0, -0.1], [4.0, 0.1]).expect("valid")])).expect("ok");
    let post = world.insert(Body::fixed(vec![Frame::from_aabb([2.0, 2.0], [2.3, 2.3]).expect("valid")])).expect("ok");
    world.set_angular_velocity(bar, std::f64::consts::PI).expect("moving"); // half a turn a unit of time
    let c = world.step(1.0).expect("a valid step").to_vec();
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].a.body, c[0].b.body), (bar, post));
    assert!(c[0].time[0] < 0.25 + 0.02 && c[0].time[1] > 0.25 - 0.02, "{:?}", c[0].time); // at 45°
    // The pose turned by half a turn: the bar now points along −x.
    let f = world.frame(FrameId { body: bar, index: 0 }).expect("live");
    assert!((f.aabb().min[0] + 4.0).abs() < 1e-12, "{:?}", f.aabb());
    assert_eq!(world.contact_geometry(&c[0]), Err(WorldError::Spinning));
    assert!(world.exact_boxes(|_| true).is_ok());
    // Stopped, it no longer reaches the post.
    world.set_angular_velocity(bar, 0.0).expect("moving");
    assert!(world.step(1.0).expect("a valid step").is_empty());
}

#[test]
fn bad_angular_velocities_are_refused_and_change_nothing() {
    let mut world = World3::new(WorldConfig::default());
    let unit = Frame::from_aabb([0.0; 3], [1.0; 3]).expect("valid");
    let h = world.insert(Body::moving(vec![unit])).expect("ok");
    let g = world.insert(Body::fixed(vec![unit])).expect("ok");
    assert!(matches!(world.set_angular_velocity(h, [f64::NAN, 0.0, 0.0]), Err(WorldError::BadNumber { .. })));
    assert!(matches!(world.set_angular_velocity(h, [1e300, 0.0, 0.0]), Err(WorldError::BadNumber { .. })));
    assert_eq!(world.set_angular_velocity(g, [1.0, 0.0, 0.0]), Err(WorldError::FixedBody(g)));
    assert_eq!(world.body(h).expect("live").angular_velocity(), [0.0; 3]);
    let spinning_fixed = Body::fixed(vec![unit]).with_angular_velocity([0.0, 1.0, 0.0]);
    assert_eq!(world.insert(spinning_fixed), Err(WorldError::FixedVelocity));
    // A billion turns a step: conservative, bounded, no panic.
    world.set_angular_velocity(h, [0.0, 0.0, 1e9 * std::f64::consts::TAU]).expect("finite");
    let contacts = world.step(1.0).expect("a valid step");
    assert_eq!(contacts.len(), 1);
}

#[cfg(feature = "parallel")]
#[test]
fn turning_worlds_are_the_same_on_any_number_of_threads() {
    let trace = || {
        let mut r = rng(9);
        let p = SceneParams { speed: 1.0, ..SceneParams::uniform(3_000, 3) };
        let mut world = World3::new(WorldConfig::default().with_contact_detail(fmbgrid::ContactDetail::Interval));
        for h in build_world(&mut world, &random_scene::<3>(&mut r, &p)) {
            if world.body(h).expect("live").motion() == Motion::Moving && r.random_bool(0.3) {
                world.set_angular_velocity(h, random_turn(&mut r)).expect("moving");
            }
        }
        (0..4).map(|_| format!("{:?}", world.step(0.5).expect("a valid step"))).collect::<Vec<_>>()
    };
    let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("pool");
    let one = pool(1).install(trace);
    assert_eq!(pool(2).install(trace), one);
    assert_eq!(pool(3).install(trace), one);
}

/// Scene files: `angular_velocity` turns the bodies of an entry; a fixed
/// body with one, or the wrong count of numbers, is a clear error.
#[cfg(feature = "mesh")]
#[test]
fn scene_files_take_an_angular_velocity() {
    use fmbgrid::scene::Scene;
    let head = "dimension = 2\ndt = 1.0\n[[body]]\nshape = \"aabb\"\nmin = [0.0, -0.1]\nmax = [4.0, 0.1]\n";
    let post = "[[body]]\nshape = \"aabb\"\nmin = [2.0, 2.0]\nmax = [2.3, 2.3]\nmotion = \"fixed\"\n";
    let scene = Scene::parse(&format!("{head}angular_velocity = [3.14159]\n{post}"), ".").expect("valid");
    let mut world = scene.build_2d().expect("builds");
    assert_eq!(world.step(1.0).expect("a valid step").len(), 1);
    let still = Scene::parse(&format!("{head}{post}"), ".").expect("valid");
    assert!(still.build_2d().expect("builds").step(1.0).expect("a valid step").is_empty());
    let bad = |text: String| Scene::parse(&text, ".").and_then(|s| s.build_2d().map(|_| ())).unwrap_err().to_string();
    let fixed = format!("{head}motion = \"fixed\"\nangular_velocity = [1.0]\n");
    assert!(bad(fixed).contains("a fixed body cannot have an angular velocity"));
    let three = format!("{head}angular_velocity = [0.0, 0.0, 1.0]\n");
    assert!(bad(three).contains("angular_velocity needs 1 numbers, got 3"));
}
