//! `World::debug_draw` against the world's own frames and contacts, in 2D
//! and 3D: the frame lines are exactly each frame's edges (counted and
//! compared endpoint for endpoint with pairs of `Frame::vertices` chosen
//! here by another rule), tagged fixed or moving, colliding or not, as the
//! contacts say; the swept boxes are the moving frames' boxes swept by
//! velocity × dt; the intersection boxes are the contacts' boxes; nothing
//! else is drawn. Also a small world checked line by line, stale contacts,
//! a bad time step and a runaway body.
//!
//! Run: `cargo test --release --test suite grid_and_queries::debug_draw::`.

use crate::support::world as world_support;

use std::collections::HashSet;

use fmbgrid::{
    Aabb, Body, Contact, DebugKind, DebugLine, Frame, Frame2, FrameId, FrameKind, Motion, World, World2, WorldConfig,
    WorldError,
};
use world_support::{SceneParams, build_world, random_scene, rng};

const DT: f64 = 0.1;

/// A seeded world of fixed and moving bodies of up to three frames, after
/// one step.
fn seeded_world<const D: usize>(seed: u64) -> World<D> {
    let mut params = SceneParams::uniform(500, D);
    params.max_frames_per_body = 3;
    params.speed = 2.0;
    let mut world = World::new(WorldConfig::default());
    build_world(&mut world, &random_scene::<D>(&mut rng(seed), &params));
    world.step(DT).unwrap();
    world
}

fn drawn<const D: usize>(world: &World<D>, contacts: &[Contact<D>]) -> Vec<DebugLine<D>> {
    let mut lines = Vec::new();
    world.debug_draw(contacts, DT, |l| lines.push(l)).unwrap();
    lines
}

/// Every frame of the world with its id and motion, in body order.
fn frames<const D: usize>(world: &World<D>) -> Vec<(FrameId, Motion, Frame<D>)> {
    let mut out = Vec::new();
    for (h, b) in world.bodies() {
        for index in 0..b.frames().len() as u32 {
            let id = FrameId { body: h, index };
            out.push((id, b.motion(), world.frame(id).unwrap()));
        }
    }
    out
}

/// A segment as a sortable key, ends in a fixed order (bits of the
/// coordinates: the comparison is exact).
fn key<const D: usize>(a: [f64; D], b: [f64; D]) -> Vec<u64> {
    let (a, b) = (a.map(f64::to_bits), b.map(f64::to_bits));
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    lo.iter().chain(&hi).copied().collect()
}

/// The edges a frame must have: every pair of a simplex's vertices; the
/// pairs of a parallelepiped's vertices whose indices differ in exactly one
/// bit (one component apart).
fn expected_edges<const D: usize>(f: &Frame<D>) -> Vec<Vec<u64>> {
    let v: Vec<[f64; D]> = f.vertices().collect();
    let mut out = Vec::new();
    for i in 0..v.len() {
        for j in i + 1..v.len() {
            if f.kind() == FrameKind::Tetrahedron || (i ^ j).count_ones() == 1 {
                out.push(key(v[i], v[j]));
            }
        }
    }
    out.sort();
    out
}

/// The lines of one box: `D · 2^(D-1)` distinct axis-parallel segments,
/// `2^(D-1)` along each axis, each the box's length on that axis, all ends
/// on the box's corners and spanning it.
fn check_box<const D: usize>(lines: &[DebugLine<D>], b: &Aabb<D>, what: &str) {
    assert_eq!(lines.len(), D << (D - 1), "{what}: edge count");
    let mut span = Aabb::EMPTY;
    let mut per_axis = [0; D];
    for l in lines {
        span.include(&l.from);
        span.include(&l.to);
        let axes: Vec<usize> = (0..D).filter(|&k| l.from[k] != l.to[k]).collect();
        assert_eq!(axes.len(), 1, "{what}: {l:?} is not axis-parallel");
        let k = axes[0];
        per_axis[k] += 1;
        assert_eq!((l.from[k] - l.to[k]).abs(), b.max[k] - b.min[k], "{what}: {l:?} length");
        for p in [l.from, l.to] {
            assert!((0..D).all(|i| p[i] == b.min[i] || p[i] == b.max[i]), "{what}: {p:?} is not a corner of {b:?}");
        }
    }
    assert_eq!(span, *b, "{what}: the lines do not span the box");
    assert_eq!(per_axis, [1 << (D - 1); D], "{what}: edges per axis");
    let distinct: HashSet<Vec<u64>> = lines.iter().map(|l| key(l.from, l.to)).collect();
    assert_eq!(distinct.len(), lines.len(), "{what}: a repeated edge");
}

/// What one seeded world drew: how many frames of each kind, and of each
/// shape.
#[derive(Debug, Default)]
struct Seen {
    kinds: [usize; 4],
    cuboids: usize,
    simplices: usize,
}

/// The frame lines of the stream, frame by frame, against the frames'
/// edges and the contacts; returns the rest of the stream.
fn check_frames<'a, const D: usize>(
    world: &World<D>,
    lines: &'a [DebugLine<D>],
    seen: &mut Seen,
) -> &'a [DebugLine<D>] {
    let colliding: HashSet<FrameId> = world.contacts().iter().flat_map(|c| [c.a, c.b]).collect();
    let mut rest = lines;
    for (id, motion, f) in frames(world) {
        let want = expected_edges(&f);
        assert!(rest.len() >= want.len(), "{D}D: the stream ends at frame {id:?}");
        let (these, tail) = rest.split_at(want.len());
        rest = tail;
        let mut got: Vec<Vec<u64>> = these.iter().map(|l| key(l.from, l.to)).collect();
        got.sort();
        assert_eq!(got, want, "{D}D: the lines of frame {id:?} are not its edges");
        let kind = match (motion, colliding.contains(&id)) {
            (Motion::Fixed, false) => DebugKind::FixedFrame,
            (Motion::Fixed, true) => DebugKind::CollidingFixedFrame,
            (Motion::Moving, false) => DebugKind::MovingFrame,
            (Motion::Moving, true) => DebugKind::CollidingMovingFrame,
        };
        assert!(these.iter().all(|l| l.kind == kind), "{D}D: frame {id:?} drawn as {:?}, not {kind:?}", these[0].kind);
        seen.kinds[kind as usize] += 1;
        match f.kind() {
            FrameKind::Cuboid => seen.cuboids += 1,
            FrameKind::Tetrahedron => seen.simplices += 1,
        }
    }
    rest
}

/// The whole stream of a seeded world: frames, then swept boxes, then
/// intersection boxes, and nothing more.
fn check_world<const D: usize>(seed: u64) {
    let world = seeded_world::<D>(seed);
    let lines = drawn(&world, world.contacts());
    let mut seen = Seen::default();
    let mut rest = check_frames(&world, &lines, &mut seen);
    let edges = D << (D - 1);
    for (id, motion, f) in frames(&world) {
        if motion == Motion::Moving {
            let v = world.body(id.body).unwrap().velocity();
            let swept = f.aabb().swept(&v.map(|x| x * DT));
            assert!(rest.len() >= edges && rest[..edges].iter().all(|l| l.kind == DebugKind::SweptBox));
            check_box(&rest[..edges], &swept, &format!("{D}D swept box of {id:?}"));
            rest = &rest[edges..];
        }
    }
    assert!(!world.contacts().is_empty());
    for c in world.contacts() {
        assert!(rest.len() >= edges && rest[..edges].iter().all(|l| l.kind == DebugKind::IntersectionBox));
        check_box(&rest[..edges], &c.aabb, &format!("{D}D intersection box of {:?}-{:?}", c.a, c.b));
        rest = &rest[edges..];
    }
    assert!(rest.is_empty(), "{D}D: {} lines more than the frames and boxes", rest.len());
    // The world exercised every case.
    assert!(seen.kinds.iter().all(|&n| n > 0), "{D}D: a kind of frame is missing: {seen:?}");
    assert!(seen.cuboids > 0 && seen.simplices > 0, "{D}D: {seen:?}");
}

#[test]
fn a_seeded_2d_world_draws_its_frames_and_boxes() {
    for seed in [1, 2] {
        check_world::<2>(seed);
    }
}

#[test]
fn a_seeded_3d_world_draws_its_frames_and_boxes() {
    for seed in [1, 2] {
        check_world::<3>(seed);
    }
}

/// A ground and a falling square, every line written out.
#[test]
fn a_small_world_line_by_line() {
    let mut world = World2::new(WorldConfig::default());
    world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0]).unwrap()])).unwrap();
    let square = Body::moving(vec![Frame2::from_aabb([2.0, 1.5], [3.0, 2.5]).unwrap()]).with_velocity([0.0, -10.0]);
    world.insert(square).unwrap();
    let contacts = world.step(DT).unwrap().to_vec(); // falls 1: to [2, 3] × [0.5, 1.5]
    assert_eq!(contacts.len(), 1);
    assert_eq!(contacts[0].aabb, Aabb { min: [2.0, 0.5], max: [3.0, 1.0] });
    let lines = drawn(&world, &contacts);
    let l = |from: [f64; 2], to: [f64; 2], kind| DebugLine { from, to, kind };
    let box_lines = |min: [f64; 2], max: [f64; 2], kind| {
        vec![
            l(min, [max[0], min[1]], kind),
            l([min[0], max[1]], max, kind),
            l(min, [min[0], max[1]], kind),
            l([max[0], min[1]], max, kind),
        ]
    };
    let mut want = box_lines([0.0, 0.0], [10.0, 1.0], DebugKind::CollidingFixedFrame);
    want.extend(box_lines([2.0, 0.5], [3.0, 1.5], DebugKind::CollidingMovingFrame));
    want.extend(box_lines([2.0, -0.5], [3.0, 1.5], DebugKind::SweptBox));
    want.extend(box_lines([2.0, 0.5], [3.0, 1.0], DebugKind::IntersectionBox));
    assert_eq!(lines, want);
}

/// Only the frames a contact names are colliding: without contacts none
/// is, a frame elsewhere never is, and a contact naming a removed body
/// colours nothing (and does not fail).
#[test]
fn only_the_frames_in_contact_are_colliding() {
    let mut world = World2::new(WorldConfig::default());
    let ground = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0]).unwrap()])).unwrap();
    let wall = world.insert(Body::fixed(vec![Frame2::from_aabb([20.0, 0.0], [21.0, 9.0]).unwrap()])).unwrap();
    let on = Body::moving(vec![Frame2::triangle([2.0, 0.5], [3.0, 0.5], [2.5, 2.0]).unwrap()]);
    let on = world.insert(on).unwrap();
    let off = world.insert(Body::moving(vec![Frame2::from_aabb([5.0, 5.0], [6.0, 6.0]).unwrap()])).unwrap();
    let contacts = world.step(DT).unwrap().to_vec();
    assert_eq!(contacts.len(), 1);
    let kinds = |lines: &[DebugLine<2>]| -> Vec<DebugKind> {
        let mut k: Vec<DebugKind> = lines.iter().filter(|l| l.kind.is_frame()).map(|l| l.kind).collect();
        k.dedup();
        k
    };
    // Body order: ground, wall, triangle, square.
    let lines = drawn(&world, &contacts);
    assert_eq!(
        kinds(&lines),
        [
            DebugKind::CollidingFixedFrame,
            DebugKind::FixedFrame,
            DebugKind::CollidingMovingFrame,
            DebugKind::MovingFrame
        ]
    );
    assert_eq!(lines.iter().filter(|l| l.kind.is_frame()).count(), 4 + 4 + 3 + 4);
    let quiet = drawn(&world, &[]);
    assert_eq!(kinds(&quiet), [DebugKind::FixedFrame, DebugKind::MovingFrame]);
    assert!(quiet.iter().all(|l| l.kind != DebugKind::IntersectionBox));
    world.remove(on).unwrap();
    let stale = drawn(&world, &contacts);
    assert_eq!(kinds(&stale), [DebugKind::CollidingFixedFrame, DebugKind::FixedFrame, DebugKind::MovingFrame]);
    assert_eq!(stale.iter().filter(|l| l.kind == DebugKind::IntersectionBox).count(), 4);
    let _ = (ground, wall, off);
}

#[test]
fn a_bad_time_step_draws_nothing() {
    let world = seeded_world::<2>(3);
    for dt in [-1.0, f64::NAN, f64::INFINITY] {
        let mut count = 0;
        let e = world.debug_draw(world.contacts(), dt, |_| count += 1);
        assert!(matches!(e, Err(WorldError::BadTimeStep { .. })), "{dt}: {e:?}");
        assert_eq!(count, 0);
    }
}

/// A body whose displacement over `dt` leaves the coordinates' range has
/// no swept box (the step would park it), but its frame is drawn.
#[test]
fn a_runaway_has_no_swept_box() {
    let mut world = World2::new(WorldConfig::default());
    let fast = Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2]).unwrap()]).with_velocity([1e15, 0.0]);
    world.insert(fast).unwrap();
    world.insert(Body::moving(vec![Frame2::from_aabb([5.0; 2], [6.0; 2]).unwrap()])).unwrap();
    let mut lines = Vec::new();
    world.debug_draw(&[], 10.0, |l| lines.push(l)).unwrap();
    assert_eq!(lines.iter().filter(|l| l.kind == DebugKind::MovingFrame).count(), 8);
    let swept: Vec<_> = lines.iter().filter(|l| l.kind == DebugKind::SweptBox).collect();
    assert_eq!(swept.len(), 4);
    assert!(swept.iter().all(|l| l.from[0] >= 5.0), "the slow square's box only");
}
