//! `World::cast_ray`, `cast_ray_all` and `query_point` against brute force
//! (`query::ray_cast` and `Frame::contains_point` on every frame of the
//! world), bit for bit, on seeded scenes in 2D and 3D over several steps
//! with edits, for random rays and for the rays that stress a grid walk:
//! starting inside a frame, grazing an edge, running along a face,
//! nearly along an axis (a component of round-off or subnormal), and
//! crossing thousands of empty cells between two clusters (walked) or a
//! million of them (longer in cells than the world has frames: every
//! frame tested instead).

use crate::support::world as world_support;

use fmbgrid::query::ray_cast;
use fmbgrid::{Body, Frame, FrameId, World, WorldConfig, WorldError};
use rand::Rng;
use world_support::{SceneParams, Sizes, TestRng, build_world, random_scene, random_unit, rng, scene_body, view};

/// Every frame of the world with its id.
fn frames<const D: usize>(world: &World<D>) -> Vec<(FrameId, Frame<D>)> {
    view(world)
        .into_iter()
        .flat_map(|b| {
            b.frames.into_iter().enumerate().map(move |(k, f)| (FrameId { body: b.handle, index: k as u32 }, f))
        })
        .collect()
}

fn check_ray<const D: usize>(
    world: &World<D>,
    all: &[(FrameId, Frame<D>)],
    o: [f64; D],
    d: [f64; D],
    len: f64,
    what: &str,
) -> usize {
    let mut want: Vec<_> =
        all.iter().filter_map(|(id, f)| ray_cast(f, o, d, len).expect("valid ray").map(|h| (*id, h))).collect();
    want.sort_unstable_by(|(a, h), (b, k)| h.time.total_cmp(&k.time).then(a.cmp(b)));
    let got = world.cast_ray_all(o, d, len).expect("a valid ray");
    assert_eq!(got, want, "{what}: all hits of {o:?} + s {d:?}, s ≤ {len}");
    let first = world.cast_ray(o, d, len).expect("a valid ray");
    assert_eq!(first, want.first().copied(), "{what}: first hit of {o:?} + s {d:?}, s ≤ {len}");
    want.len()
}

fn rays<const D: usize>(world: &World<D>, r: &mut TestRng, region: f64) -> usize {
    let all = frames(world);
    let mut hits = 0;
    for _ in 0..60 {
        let o: [f64; D] = std::array::from_fn(|_| r.random_range(-0.1 * region..1.1 * region));
        hits += check_ray(world, &all, o, random_unit(r), r.random_range(0.0..region), "random");
    }
    for _ in 0..30 {
        let (_, f) = &all[r.random_range(0..all.len())];
        let c = f.components();
        // From inside a frame.
        let inside = f.vertices().fold([0.0; D], |p, v| std::array::from_fn(|k| p[k] + v[k] / f.vertex_count() as f64));
        hits += check_ray(world, &all, inside, random_unit(r), region / 4.0, "from inside");
        // Along an edge, from outside: grazing.
        let v0 = f.origin();
        let start = std::array::from_fn(|k| v0[k] - c[0][k]);
        hits += check_ray(world, &all, start, c[0], 3.0, "along an edge");
        // Along a face (2D: the same edge), from a point inside it.
        let on_face: [f64; D] =
            std::array::from_fn(|k| v0[k] + 0.5 * c[0][k] + if D == 3 { 0.5 * c[D - 1][k] } else { 0.0 });
        let back = std::array::from_fn(|k| on_face[k] - 2.0 * c[0][k]);
        hits += check_ray(world, &all, back, c[0], 4.0, "along a face");
    }
    // Nearly axis-aligned: a component of round-off, or below 1e-300.
    for tiny in [6e-17, 1e-300, 1e-320, -5e-324] {
        let o: [f64; D] = std::array::from_fn(|_| r.random_range(0.0..region));
        let d: [f64; D] = std::array::from_fn(|k| if k == 0 { 1.0 } else { tiny });
        hits += check_ray(world, &all, o, d, region, "nearly along an axis");
    }
    for _ in 0..30 {
        let p: [f64; D] = if r.random_bool(0.5) {
            let (_, f) = &all[r.random_range(0..all.len())];
            f.vertices().next().expect("a vertex")
        } else {
            std::array::from_fn(|_| r.random_range(0.0..region))
        };
        let mut want: Vec<FrameId> = all.iter().filter(|(_, f)| f.contains_point(&p, 0.0)).map(|(id, _)| *id).collect();
        want.sort_unstable();
        assert_eq!(world.query_point(p).expect("a valid point"), want, "point {p:?}");
    }
    hits
}

fn scenes<const D: usize>(seed: u64, p: SceneParams) {
    let mut r = rng(seed);
    let bodies = random_scene::<D>(&mut r, &p);
    let mut world = World::<D>::new(WorldConfig::default());
    build_world(&mut world, &bodies);
    let mut hits = rays(&world, &mut r, p.region);
    for _ in 0..3 {
        world.step(0.5).expect("a valid step");
        hits += rays(&world, &mut r, p.region);
        world.insert(scene_body::<D>(&mut r, &p).body()).expect("a valid body");
        hits += rays(&world, &mut r, p.region);
    }
    assert!(hits > 500, "{hits}");
}

#[test]
fn rays_and_points_equal_brute_force_3d() {
    scenes::<3>(91, SceneParams::uniform(800, 3));
}

/// Sizes over three orders of magnitude (several levels of the grid, some
/// frames huge), bodies of up to 80 frames (large bodies, which the moving
/// list leaves out) and rays along the cells' corners.
#[test]
fn rays_over_mixed_levels_and_large_bodies_equal_brute_force() {
    let p = |dim| SceneParams {
        sizes: Sizes::LogUniform(0.05, 5.0),
        max_frames_per_body: 80,
        huge: 3,
        huge_size: 30.0,
        ..SceneParams::uniform(1_500, dim)
    };
    scenes::<3>(93, p(3));
    scenes::<2>(94, p(2));
}

/// Rays through the lattice of a unit grid: along its lines, through its
/// corners, diagonally across them: every tie of the walk's next cell.
#[test]
fn rays_along_cell_boundaries_and_through_corners() {
    let mut r = rng(95);
    let mut world = World::<3>::new(WorldConfig::default().with_cell_size(1.0));
    for _ in 0..400 {
        let lo: [f64; 3] = std::array::from_fn(|_| r.random_range(0..12) as f64 + 0.25 * r.random_range(0..4) as f64);
        let hi = std::array::from_fn(|k| lo[k] + 0.25 * r.random_range(1..4) as f64);
        let f = Frame::from_aabb(lo, hi).expect("valid");
        let body = if r.random_bool(0.5) { Body::fixed(vec![f]) } else { Body::moving(vec![f]) };
        world.insert(body).expect("valid");
    }
    world.step(0.0).expect("a valid step");
    let all = frames(&world);
    let mut hits = 0;
    for _ in 0..2_000 {
        let o: [f64; 3] = std::array::from_fn(|_| r.random_range(-1..14) as f64);
        let d: [f64; 3] = std::array::from_fn(|_| r.random_range(-2..=2) as f64);
        if d == [0.0; 3] {
            continue;
        }
        hits += check_ray(&world, &all, o, d, 20.0, "on the lattice");
    }
    assert!(hits > 500, "{hits}");
}

#[test]
fn rays_and_points_equal_brute_force_2d() {
    scenes::<2>(92, SceneParams::uniform(800, 2));
}

/// Two clusters of 3,000 unit boxes each, 5,000 cells apart: rays from
/// one to the other walk the grid across the empty cells between them
/// (fewer cells than frames), and find what brute force finds.
#[test]
fn rays_walk_thousands_of_empty_cells_between_clusters() {
    let mut r = rng(95);
    let mut world = World::<3>::new(WorldConfig::default().with_cell_size(1.0));
    for (k, x) in [0.0, 5000.0].into_iter().enumerate() {
        for _ in 0..3000 {
            let at: [f64; 3] = std::array::from_fn(|i| if i == 0 { x } else { 0.0 } + r.random_range(0.0..20.0));
            let f = Frame::from_aabb(at, at.map(|c| c + 0.8)).unwrap();
            world.insert(if k == 0 { Body::fixed(vec![f]) } else { Body::moving(vec![f]) }).unwrap();
        }
    }
    world.step(0.0).unwrap();
    let all = frames(&world);
    let mut hits = 0;
    for i in 0..200 {
        let o: [f64; 3] = std::array::from_fn(|_| r.random_range(0.0..20.0));
        let to: [f64; 3] = std::array::from_fn(|k| if k == 0 { 5000.0 } else { 0.0 } + r.random_range(0.0..20.0));
        let d = std::array::from_fn(|k| to[k] - o[k]);
        hits += check_ray(&world, &all, o, d, 1.1, &format!("cluster ray {i}"));
    }
    assert!(hits > 200, "{hits} hits: the rays must meet both clusters");
}

/// Longer in cells than the world has frames: every frame is tested
/// instead of walking a million cells, with the same answers.
#[test]
fn a_ray_across_a_million_empty_cells() {
    let mut world = World::<3>::new(WorldConfig::default().with_cell_size(1.0));
    let near = world.insert(Body::fixed(vec![Frame::from_aabb([0.0; 3], [1.0; 3]).unwrap()])).unwrap();
    let far =
        world.insert(Body::moving(vec![Frame::from_aabb([2e6, 0.0, 0.0], [2e6 + 1.0, 1.0, 1.0]).unwrap()])).unwrap();
    world.step(0.0).unwrap();
    let hit = world.cast_ray([2.0, 0.5, 0.5], [1.0, 0.0, 0.0], 3e6).unwrap().unwrap();
    assert_eq!((hit.0.body, hit.1.time), (far, 2e6 - 2.0));
    let back = world.cast_ray([2.0, 0.5, 0.5], [-1.0, 0.0, 0.0], 3e6).unwrap().unwrap();
    assert_eq!((back.0.body, back.1.time), (near, 1.0));
    assert!(world.cast_ray([2.0, 0.5, 0.5], [0.0, 1.0, 0.0], 3e6).unwrap().is_none());
}

#[test]
fn bad_rays_and_points_are_refused() {
    let world = World::<2>::new(WorldConfig::default());
    assert!(matches!(world.cast_ray([0.0; 2], [0.0; 2], 1.0), Err(WorldError::ZeroRay)));
    assert!(matches!(world.cast_ray([f64::NAN, 0.0], [1.0, 0.0], 1.0), Err(WorldError::BadNumber { .. })));
    assert!(matches!(world.cast_ray_all([0.0; 2], [1.0, 0.0], -1.0), Err(WorldError::BadNumber { .. })));
    assert!(matches!(world.cast_ray([0.0; 2], [1.0, 0.0], f64::INFINITY), Err(WorldError::BadNumber { .. })));
    assert!(matches!(world.query_point([0.0, f64::INFINITY]), Err(WorldError::BadNumber { .. })));
}
