//! Bad input to the world: each call gives its documented error or a
//! correct result, never a panic, and a refused call changes nothing
//! (bodies, handles, poses, velocities, placed frames, last contacts, body
//! pairs and events are compared as exact text before and after, and the
//! world is then stepped and checked against the brute force).
//!
//! Covered: NaN / infinite / too large poses (`Pose::new`,
//! `from_translation`, `from_axis_angle`, `from_angle`), singular and
//! nearly singular poses, velocities (`insert`, `set_velocity`), time steps
//! (NaN, ±∞, negative; `velocity · dt` overflowing or leaving the supported
//! range), frames flattened by a shearing pose (`insert`, `set_pose`),
//! frames pushed beyond 1e15 by a pose, an empty body, a fixed body given a
//! velocity, stale handles (removed twice, after `clear`, from another world
//! whose slot does not exist here), frame indices past the body's frames,
//! queries with NaN, infinite, inverted or huge boxes, and velocities that
//! sweep about 1e12 cells in one step (exact result; `OutOfRange` beyond
//! 1e15). Both signs of the huge sweeps are tested: negative coordinates far
//! beyond the grid's `i32` cell range are the risky side.
//!
//! Run: `cargo test --release --test suite world::bad_input::`; these tests are
//! cheap, and worth running in debug too (`cargo test --test
//! world_bad_input`), where integer overflow panics instead of wrapping.
//!
//! # Failures found (library bugs, as of commit 411eb82)
//! * `grid::cell::floor_i32` computes `t - 1` with `t = x as i32` saturated
//!   to `i32::MIN` for `x < -2^31` cells: a panic in debug builds, a wrap to
//!   `i32::MAX` in release. A cell range from such a minimum to a maximum
//!   beyond `+2^31` (saturated) then holds a single cell, and
//!   `HashGrid::query_level` visits only that cell:
//!   - `query_aabb_below_the_cell_range_finds_fixed_frames`,
//!     `queries_with_bad_or_huge_boxes`: `World::query_aabb` with a box from
//!     -3e9 (cell 1) to 1e15 misses the fixed frames (static grid fresh);
//!   - `sweeping_across_the_cell_range_finds_fixed_frames`: a unit frame at
//!     x = ±3e9 moving by ∓6e9 (cell 1) misses the fixed unit box at the
//!     origin on its path (20 fixed boxes at level 0), both directions;
//!   - in debug, `sweeping_1e12_cells_in_one_step_towards_negative_coordinates`
//!     and `sweeping_1e12_cells_in_2d_with_moving_partners` also panic
//!     ("attempt to subtract with overflow", from `Store::compact`'s Morton
//!     key and from the queries).
//! * `refused_step_keeps_the_cell_size`: `step` runs `refresh` (which
//!   chooses the automatic cell size again) before validating the
//!   displacements, so a step refused with `OutOfRange` after insertions
//!   changes `cell_size()`, against "the world is unchanged after an error"
//!   (low severity: no contact is affected).

use crate::support::world as world_support;

use fmbgrid::{
    Aabb, Body, BodyHandle, FrameError, FrameId, Pose, Pose2, Pose3, Runaway, World, WorldConfig, WorldError,
};
use fmbgrid::{Frame, Frame2, Frame3, World2, World3, intersect};
use world_support::{StepStats, check_step, snapshot};

const I3: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
const BAD: [f64; 6] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e16, -1e16, f64::MAX];

/// Worlds here refuse runaway bodies: the tests are about refusals that
/// change nothing (`tests/world/runaway.rs` covers parking, the default).
fn strict() -> WorldConfig {
    WorldConfig::default().with_runaway(Runaway::Refuse)
}

fn unit3(at: [f64; 3]) -> Frame3 {
    Frame3::cuboid(at, I3).unwrap()
}

fn bad_number<T: std::fmt::Debug>(r: Result<T, WorldError>) {
    assert!(matches!(r, Err(WorldError::BadNumber { .. })), "expected BadNumber, got {r:?}");
}

/// A small 3D world with a contact, events, and a body of each kind.
fn sample_world() -> (World3, BodyHandle, BodyHandle) {
    let mut w = World3::new(strict());
    let floor =
        w.insert(Body::fixed(vec![Frame3::from_aabb([-10.0, -1.0, -10.0], [10.0, 0.0, 10.0]).unwrap()])).unwrap();
    let ball = w
        .insert(
            Body::moving(vec![unit3([0.0; 3]), Frame3::tetrahedron([0.5, 0.5, 0.5], I3).unwrap()])
                .with_pose(Pose3::from_axis_angle([1.0, 2.0, 3.0], 0.4, [0.0, 0.2, 0.0]).unwrap())
                .with_velocity([0.5, -1.0, 0.0]),
        )
        .unwrap();
    w.insert(Body::moving(vec![unit3([4.0, 0.5, 0.0])]).with_velocity([-3.0, 0.0, 0.0])).unwrap();
    let mut stats = StepStats::default();
    check_step(&mut w, 0.5, &mut stats).unwrap();
    assert!(!w.contacts().is_empty() && !w.events().is_empty());
    (w, floor, ball)
}

/// Runs `f`, which must be refused, and checks that nothing changed and that
/// the world still steps correctly afterwards (on a clone).
#[track_caller]
fn refused<const D: usize, T: std::fmt::Debug>(
    world: &mut World<D>,
    f: impl FnOnce(&mut World<D>) -> Result<T, WorldError>,
) -> WorldError {
    let before = snapshot(world);
    let r = f(world);
    let e = match r {
        Err(e) => e,
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
    };
    assert_eq!(snapshot(world), before, "the world changed after {e:?}");
    let mut copy = world.clone();
    check_step(&mut copy, 0.25, &mut StepStats::default()).unwrap_or_else(|m| panic!("after {e:?}: {m}"));
    e
}

#[test]
fn bad_poses_are_refused_by_constructors() {
    for x in BAD {
        bad_number(Pose3::from_translation([0.0, x, 0.0]));
        bad_number(Pose2::from_translation([x, 0.0]));
        bad_number(Pose3::new(I3, [x, 0.0, 0.0]));
        let mut m = I3;
        m[2][1] = x;
        bad_number(Pose3::new(m, [0.0; 3]));
        bad_number(Pose2::new([[1.0, 0.0], [x, 1.0]], [0.0; 2]));
        bad_number(Pose3::from_axis_angle([x, 0.0, 1.0], 0.5, [0.0; 3]));
        bad_number(Pose3::from_axis_angle([0.0, 0.0, 1.0], x, [0.0; 3]));
        bad_number(Pose3::from_axis_angle([0.0, 0.0, 1.0], 0.5, [0.0, 0.0, x]));
        bad_number(Pose2::from_angle(x, [0.0; 2]));
        bad_number(Pose2::from_angle(0.5, [0.0, x]));
    }
    // Limits: 1e15 is accepted, just above is not.
    assert!(Pose3::from_translation([1e15, -1e15, 0.0]).is_ok());
    bad_number(Pose3::from_translation([1.0000000000000002e15, 0.0, 0.0]));
    // A zero rotation axis, or one whose length underflows.
    assert_eq!(Pose3::from_axis_angle([0.0; 3], 0.5, [0.0; 3]), Err(WorldError::ZeroAxis));
    match Pose3::from_axis_angle([1e-200, 0.0, 0.0], 0.5, [0.0; 3]) {
        Err(WorldError::ZeroAxis) => {}
        Ok(p) => assert_orthonormal(&p.linear()),
        Err(e) => panic!("unexpected {e:?}"),
    }
    // A huge but finite angle is a rotation.
    assert_orthonormal(&Pose3::from_axis_angle([1.0, 1.0, 0.0], 1e14, [0.0; 3]).unwrap().linear());
    assert_orthonormal(&Pose3::from_axis_angle([1e15, 0.0, 1e15], -1e14, [0.0; 3]).unwrap().linear());
    // Singular, nearly singular and zero linear parts.
    let degenerate = |r: Result<Pose3, WorldError>| {
        assert!(matches!(r, Err(WorldError::DegeneratePose { .. })), "expected DegeneratePose, got {r:?}")
    };
    degenerate(Pose3::new([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [0.0; 3]));
    degenerate(Pose3::new([[1.0, 0.0, 0.0], [1.0, 1e-8, 0.0], [0.0, 0.0, 1.0]], [0.0; 3]));
    degenerate(Pose3::new([[0.0; 3], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0.0; 3]));
    degenerate(Pose3::new([[0.0; 3]; 3], [0.0; 3]));
    // Tiny but orthogonal columns: a pose, or refused; never a panic.
    let tiny = Pose3::new([[1e-300, 0.0, 0.0], [0.0, 1e-300, 0.0], [0.0, 0.0, 1e-300]], [0.0; 3]);
    assert!(matches!(tiny, Ok(_) | Err(WorldError::DegeneratePose { .. })), "{tiny:?}");
}

fn assert_orthonormal(m: &[[f64; 3]; 3]) {
    for i in 0..3 {
        for j in 0..3 {
            let d = world_support::dot(m[i], m[j]);
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((d - want).abs() < 1e-12, "not a rotation: {m:?}");
        }
    }
}

#[test]
fn bad_velocities_are_refused_and_change_nothing() {
    let (mut w, floor, ball) = sample_world();
    for x in BAD {
        let e = refused(&mut w, |w| w.insert(Body::moving(vec![unit3([0.0; 3])]).with_velocity([0.0, x, 0.0])));
        assert!(matches!(e, WorldError::BadNumber { what: "velocity", .. }), "{e:?}");
        let e = refused(&mut w, |w| w.set_velocity(ball, [x, 0.0, 0.0]));
        assert!(matches!(e, WorldError::BadNumber { .. }), "{e:?}");
        // A bad velocity on a fixed body: refused either way.
        refused(&mut w, |w| w.set_velocity(floor, [x, 0.0, 0.0]));
    }
    assert_eq!(refused(&mut w, |w| w.set_velocity(floor, [1.0, 0.0, 0.0])), WorldError::FixedBody(floor));
    assert_eq!(refused(&mut w, |w| w.set_velocity(floor, [0.0; 3])), WorldError::FixedBody(floor));
    let e = refused(&mut w, |w| w.insert(Body::fixed(vec![unit3([0.0; 3])]).with_velocity([0.0, 1.0, 0.0])));
    assert_eq!(e, WorldError::FixedVelocity);
    // The next insertion is unaffected by the refused one.
    let before: Vec<BodyHandle> = w.bodies().map(|(h, _)| h).collect();
    let h = w.insert(Body::fixed(vec![unit3([50.0; 3])])).unwrap();
    assert!(!before.contains(&h));
}

#[test]
fn bad_time_steps_are_refused_and_change_nothing() {
    let (mut w, _, ball) = sample_world();
    for dt in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, -1e-300, -f64::MAX] {
        let e = refused(&mut w, |w| w.step(dt).map(|c| c.len()));
        assert!(matches!(e, WorldError::BadTimeStep { .. }), "dt {dt}: {e:?}");
    }
    // `velocity · dt` overflows to infinity, or exceeds 1e15.
    w.set_velocity(ball, [1e15, 0.0, 0.0]).unwrap();
    for dt in [1e300, f64::MAX, 2.0] {
        let e = refused(&mut w, |w| w.step(dt).map(|c| c.len()));
        assert!(
            matches!(e, WorldError::BadDisplacement { body, .. } | WorldError::OutOfRange(body) if body == ball),
            "dt {dt}: {e:?}"
        );
    }
    // A displacement within range (1e15) that takes the body beyond 1e15.
    assert_eq!(refused(&mut w, |w| w.step(1.0).map(|c| c.len())), WorldError::OutOfRange(ball));
    // -0.0 is not negative: a step of zero length, checked against brute force.
    let mut z = w.clone();
    z.set_velocity(ball, [0.5, 0.0, 0.0]).unwrap();
    check_step(&mut z, -0.0, &mut StepStats::default()).unwrap();
}

#[test]
fn frames_flattened_by_a_shearing_pose_are_refused() {
    // Pose: columns (1, 0) and (1, 5e-4): Hadamard ratio 5e-4, a valid pose.
    // Frame 1: components (1, 0) and (1, 5e-4), ratio 5e-4, valid. Placed:
    // (1, 0) and (1 + 5e-4, 2.5e-7): ratio 2.5e-7 < 1e-6, degenerate.
    let shear = Pose2::new([[1.0, 0.0], [1.0, 5e-4]], [0.0, 0.0]).unwrap();
    let ok = Frame2::from_aabb([0.0; 2], [1.0; 2]).unwrap();
    let thin = Frame2::cuboid([0.0; 2], [[1.0, 0.0], [1.0, 5e-4]]).unwrap();
    let mut w = World2::new(strict());
    let a = w.insert(Body::moving(vec![ok, thin]).with_velocity([1.0, 0.0])).unwrap();
    w.insert(Body::fixed(vec![Frame2::from_aabb([0.5, -1.0], [3.0, 0.5]).unwrap()])).unwrap();
    check_step(&mut w, 0.5, &mut StepStats::default()).unwrap();
    let e = refused(&mut w, |w| w.insert(Body::moving(vec![ok, thin]).with_pose(shear)));
    assert!(matches!(e, WorldError::Frame { index: 1, source: FrameError::Degenerate { .. } }), "{e:?}");
    let e = refused(&mut w, |w| w.insert(Body::fixed(vec![ok, thin]).with_pose(shear)));
    assert!(matches!(e, WorldError::Frame { index: 1, source: FrameError::Degenerate { .. } }), "{e:?}");
    let e = refused(&mut w, |w| w.set_pose(a, shear));
    assert!(matches!(e, WorldError::Frame { index: 1, source: FrameError::Degenerate { .. } }), "{e:?}");
    // The same pose is fine for a body without the thin frame.
    w.insert(Body::moving(vec![ok]).with_pose(shear)).unwrap();
    check_step(&mut w, 1.0, &mut StepStats::default()).unwrap();
}

#[test]
fn frames_pushed_beyond_the_range_by_a_pose_are_refused() {
    let (mut w, floor, ball) = sample_world();
    // Unit frames at 1e15: beyond their reach (1e12 for a unit frame).
    let edge = Pose3::from_translation([1e15, 0.0, 0.0]).unwrap();
    let frame_error = |e: &WorldError| matches!(e, WorldError::Frame { source: FrameError::OutOfRange { .. }, .. });
    let e = refused(&mut w, |w| w.insert(Body::moving(vec![unit3([0.0; 3])]).with_pose(edge)));
    assert!(frame_error(&e), "{e:?}");
    let e = refused(&mut w, |w| w.set_pose(ball, edge));
    assert!(frame_error(&e), "{e:?}");
    let e = refused(&mut w, |w| w.set_pose(floor, edge));
    assert!(frame_error(&e), "{e:?}");
    // A huge scale makes the frames too large: the first frame's box
    // reaches 2e15.
    let big = Pose3::new([[1e15, 0.0, 0.0], [0.0, 1e15, 0.0], [0.0, 0.0, 1e15]], [1e15, 0.0, 0.0]).unwrap();
    let e = refused(&mut w, |w| w.set_pose(ball, big));
    assert!(matches!(e, WorldError::Frame { index: 0, source: FrameError::OutOfRange { .. } }), "{e:?}");
    // Just inside (frames of 1e4, long enough at 1e15), then a step that
    // would leave the range.
    let near = Pose3::from_translation([1e15 - 2e4, 0.0, 0.0]).unwrap();
    let big_frame = Frame3::from_aabb([0.0; 3], [1e4; 3]).unwrap();
    let h = w.insert(Body::moving(vec![big_frame]).with_pose(near).with_velocity([2e4, 0.0, 0.0])).unwrap();
    assert_eq!(refused(&mut w, |w| w.step(1.0).map(|c| c.len())), WorldError::OutOfRange(h));
    w.set_velocity(h, [-2e4, 0.0, 0.0]).unwrap();
    check_step(&mut w, 1.0, &mut StepStats::default()).unwrap();
}

#[test]
fn empty_bodies_are_refused() {
    let (mut w, _, _) = sample_world();
    assert_eq!(refused(&mut w, |w| w.insert(Body::fixed(vec![]))), WorldError::EmptyBody);
    assert_eq!(
        refused(&mut w, |w| w.insert(Body::moving(vec![]).with_velocity([1.0, 0.0, 0.0]))),
        WorldError::EmptyBody
    );
    let mut w2 = World2::new(strict());
    assert_eq!(w2.insert(Body::moving(Vec::<Frame2>::new())), Err(WorldError::EmptyBody));
    assert!(w2.is_empty() && w2.step(1.0).unwrap().is_empty());
}

#[test]
fn stale_and_foreign_handles_are_refused() {
    let (mut w, floor, ball) = sample_world();
    let extra = w.insert(Body::moving(vec![unit3([9.0; 3])])).unwrap();
    w.remove(extra).unwrap();
    let unit = Pose3::from_translation([1.0, 2.0, 3.0]).unwrap();
    let stale_ops = |w: &mut World3, h: BodyHandle| {
        assert_eq!(refused(w, |w| w.remove(h).map(|_| ())), WorldError::StaleHandle(h));
        assert_eq!(refused(w, |w| w.set_pose(h, unit)), WorldError::StaleHandle(h));
        assert_eq!(refused(w, |w| w.set_velocity(h, [1.0, 0.0, 0.0])), WorldError::StaleHandle(h));
        assert_eq!(w.body(h).map(|_| ()), Err(WorldError::StaleHandle(h)));
        assert_eq!(w.frame(FrameId { body: h, index: 0 }).map(|_| ()), Err(WorldError::StaleHandle(h)));
    };
    // Removed twice.
    stale_ops(&mut w, extra);
    assert_eq!(
        w.remove(extra).unwrap_err().to_string(),
        format!("stale or foreign body handle #{}.0: no live body of this world has it", extra.index())
    );
    // Slot reused: the old handle still fails and the new body is untouched.
    let reuse = w.insert(Body::moving(vec![unit3([9.0; 3])])).unwrap();
    assert_eq!(reuse.index(), extra.index());
    stale_ops(&mut w, extra);
    assert!(w.body(reuse).is_ok());
    // From another world, whose slot does not exist here.
    let mut other = World3::new(strict());
    let foreign: Vec<BodyHandle> =
        (0..10).map(|i| other.insert(Body::fixed(vec![unit3([i as f64 * 3.0; 3])])).unwrap()).collect();
    stale_ops(&mut w, foreign[9]);
    // Frame index past the body's frames.
    for (h, n) in [(floor, 1), (ball, 2)] {
        assert_eq!(w.frame(FrameId { body: h, index: n }), Err(WorldError::NoSuchFrame { body: h, index: n }));
        assert!(w.frame(FrameId { body: h, index: u32::MAX }).is_err());
    }
    // After clear(), every handle is stale, and new handles are new.
    w.clear();
    assert!(w.is_empty() && w.contacts().is_empty() && w.events().is_empty() && w.body_pairs().is_empty());
    for h in [floor, ball, reuse] {
        stale_ops(&mut w, h);
    }
    let fresh = w.insert(Body::fixed(vec![unit3([0.0; 3])])).unwrap();
    assert!(![floor, ball, reuse, extra].contains(&fresh));
    check_step(&mut w, 1.0, &mut StepStats::default()).unwrap();
}

#[test]
fn queries_with_bad_or_huge_boxes() {
    let (mut w, _, _) = sample_world();
    let every_frame = |w: &World3| -> Vec<FrameId> {
        let mut v: Vec<FrameId> = w
            .bodies()
            .flat_map(|(h, b)| (0..b.frames().len() as u32).map(move |index| FrameId { body: h, index }))
            .collect();
        v.sort();
        v
    };
    // Fresh grids (after a step), then stale ones (after an insertion).
    for round in 0..2 {
        let all = every_frame(&w);
        let everything = [
            Aabb { min: [-1e15; 3], max: [1e15; 3] },
            Aabb { min: [f64::NEG_INFINITY; 3], max: [f64::INFINITY; 3] },
            Aabb { min: [-f64::MAX; 3], max: [f64::MAX; 3] },
        ];
        for q in everything {
            assert_eq!(w.query_aabb(&q), all, "round {round}: {q:?}");
        }
        let nothing = [
            Aabb { min: [f64::NAN; 3], max: [f64::NAN; 3] },
            Aabb { min: [1.0; 3], max: [-1.0; 3] },
            Aabb { min: [-1e15; 3], max: [-1e14; 3] },
            Aabb { min: [f64::NEG_INFINITY; 3], max: [-1e300; 3] },
            Aabb { min: [1e14; 3], max: [f64::INFINITY; 3] },
        ];
        for q in nothing {
            assert!(w.query_aabb(&q).is_empty(), "round {round}: {q:?}");
        }
        // A probe frame as large as allowed (components up to 1e15).
        let probe = Frame3::from_aabb([-5e14; 3], [5e14; 3]).unwrap();
        let hits: Vec<FrameId> = w.query_frame(&probe).into_iter().map(|(id, _)| id).collect();
        assert_eq!(hits, all);
        w.insert(Body::moving(vec![unit3([1e3; 3])])).unwrap();
        check_step(&mut w, 0.0, &mut StepStats::default()).unwrap();
        w.insert(Body::fixed(vec![unit3([-1e3; 3])])).unwrap();
    }
}

/// A frame sweeping `v` cells (cell size 1) through a fixed box half way.
fn sweep_through(v: f64) {
    const LONG: f64 = 1e4;
    let mut w = World3::new(strict().with_cell_size(1.0));
    let mid = 0.5 * v;
    // The bullet's path lies well inside the wall's cross-section, and the
    // wall is 1e4 long: the overlap is far from the touching band.
    let wall = Frame3::from_aabb([mid, -1.0, -1.0], [mid + LONG, 2.0, 2.0]).unwrap();
    let wall = w.insert(Body::fixed(vec![wall])).unwrap();
    // Off the path: never reported.
    w.insert(Body::fixed(vec![Frame3::from_aabb([mid, 5.0, 0.0], [mid + LONG, 6.0, 1.0]).unwrap()])).unwrap();
    let bullet = w.insert(Body::moving(vec![unit3([0.0, 0.0, 0.0])]).with_velocity([v, 0.0, 0.0])).unwrap();
    let before = w.frame(FrameId { body: bullet, index: 0 }).unwrap();
    let mut stats = StepStats::default();
    check_step(&mut w, 1.0, &mut stats).unwrap_or_else(|e| panic!("v = {v:e}: {e}"));
    let c = w.contacts();
    assert_eq!(c.len(), 1, "v = {v:e}: {c:?}");
    assert_eq!((c[0].a.body, c[0].b.body), (wall, bullet));
    // Entry and exit times: the bullet [0, 1] meets [mid, mid + LONG] (v > 0)
    // or [mid, mid + LONG] with mid < 0 (v < 0).
    let (t0, t1) = if v > 0.0 { ((mid - 1.0) / v, (mid + LONG) / v) } else { ((mid + LONG) / v, (mid - 1.0) / v) };
    assert!((c[0].time[0] - t0).abs() < 1e-9 && (c[0].time[1] - t1).abs() < 1e-9, "v = {v:e}: {:?}", c[0].time);
    let hit = intersect(&before.with_velocity([v, 0.0, 0.0]).unwrap(), &w.frame(c[0].a).unwrap()).unwrap();
    assert_eq!(hit.time, c[0].time);
    // Where it went, and back.
    assert_eq!(w.body(bullet).unwrap().pose().translation(), [v, 0.0, 0.0]);
    w.set_velocity(bullet, [-v, 0.0, 0.0]).unwrap();
    check_step(&mut w, 1.0, &mut stats).unwrap_or_else(|e| panic!("v = {v:e}, back: {e}"));
    assert_eq!(w.contacts().len(), 1);
    assert_eq!(w.body(bullet).unwrap().pose().translation(), [0.0, 0.0, 0.0]);
    // Beyond 1e15 the velocity or the step is refused and nothing changes.
    let e = refused(&mut w, |w| w.set_velocity(bullet, [v.signum() * 2e15, 0.0, 0.0]));
    assert!(matches!(e, WorldError::BadNumber { .. }), "{e:?}");
    w.set_velocity(bullet, [v.signum() * 1e15, 0.0, 0.0]).unwrap();
    let e = refused(&mut w, |w| w.step(2.0).map(|c| c.len()));
    assert!(matches!(e, WorldError::BadDisplacement { body, .. } if body == bullet), "{e:?}");
    w.set_pose(bullet, Pose3::from_translation([v.signum() * 1e12, 0.0, 0.0]).unwrap()).unwrap();
    assert_eq!(refused(&mut w, |w| w.step(1.0).map(|c| c.len())), WorldError::OutOfRange(bullet));
}

#[test]
fn sweeping_1e12_cells_in_one_step() {
    sweep_through(1e12);
}

#[test]
fn sweeping_1e12_cells_in_one_step_towards_negative_coordinates() {
    sweep_through(-1e12);
}

#[test]
fn sweeping_1e12_cells_in_2d_with_moving_partners() {
    // Two bodies crossing each other 1e12 cells from home, and a crowd of
    // slow ones at both ends.
    // Frames of 2, long enough for coordinates of 1e12 (1e-12 relative).
    let mut w = World2::new(strict().with_cell_size(1.0));
    let unit = Frame2::from_aabb([0.0; 2], [2.0; 2]).unwrap();
    w.insert(Body::moving(vec![unit]).with_velocity([1e12, 0.0])).unwrap();
    w.insert(
        Body::moving(vec![unit]).with_pose(Pose2::from_translation([1e12, 0.5]).unwrap()).with_velocity([-1e12, 0.0]),
    )
    .unwrap();
    for i in 0..50 {
        let x = if i % 2 == 0 { 1e12 } else { 0.0 } + (i / 2) as f64 * 0.7;
        w.insert(
            Body::moving(vec![unit]).with_pose(Pose2::from_translation([x, 1.2]).unwrap()).with_velocity([0.1, -1.0]),
        )
        .unwrap();
        w.insert(Body::fixed(vec![unit]).with_pose(Pose2::from_translation([-x, -3.0]).unwrap())).unwrap();
    }
    let mut stats = StepStats::default();
    for dt in [1.0, 0.5, 1.0, 0.0] {
        check_step(&mut w, dt, &mut stats).unwrap();
    }
    assert!(stats.contacts > 50, "{stats:?}");
}

#[test]
fn small_frames_carried_far_stay_correct() {
    // A frame of 0.5 reaches 5e11 (the range rule): carried to 4e11 in one
    // step, it keeps giving the brute-force result against a fixed frame
    // there; carried to 1e12, it is a runaway, as a new frame of its size
    // there would be refused.
    let mut w = World3::new(strict());
    let small = Frame3::from_aabb([0.0; 3], [0.5; 3]).unwrap();
    let far = 4e11;
    let target = Frame3::from_aabb([far, 0.0, 0.0], [far + 4.0, 4.0, 4.0]).unwrap();
    w.insert(Body::fixed(vec![target])).unwrap();
    let h = w.insert(Body::moving(vec![small]).with_velocity([far + 1.0, 1.0, 1.0])).unwrap();
    let mut stats = StepStats::default();
    check_step(&mut w, 1.0, &mut stats).unwrap();
    w.set_velocity(h, [0.5, 0.0, 0.0]).unwrap();
    check_step(&mut w, 1.0, &mut stats).unwrap();
    assert_eq!(w.contacts().len(), 1);
    let c = w.contacts()[0];
    assert_eq!(c.time, [0.0, 1.0]);
    assert!((c.aabb.min[0] - (far + 1.0)).abs() < 1e-3 && (c.aabb.max[0] - (far + 2.0)).abs() < 1e-3, "{c:?}");
    w.set_velocity(h, [1e12, 0.0, 0.0]).unwrap();
    assert_eq!(refused(&mut w, |w| w.step(1.0).map(|c| c.len())), WorldError::OutOfRange(h));
    assert!(matches!(Frame3::from_aabb([1e12; 3], [1e12 + 0.5; 3]), Err(FrameError::OutOfRange { .. })));
}

/// A frame type check: 2D worlds share the code paths.
#[test]
fn bad_input_in_2d() {
    let mut w = World2::new(strict());
    let unit = Frame::<2>::from_aabb([0.0; 2], [1.0; 2]).unwrap();
    let a = w.insert(Body::moving(vec![unit]).with_velocity([1.0, 0.0])).unwrap();
    w.insert(Body::fixed(vec![unit]).with_pose(Pose::from_translation([0.5, 0.5]).unwrap())).unwrap();
    check_step(&mut w, 1.0, &mut StepStats::default()).unwrap();
    for x in BAD {
        refused(&mut w, |w| w.set_velocity(a, [0.0, x]));
        refused(&mut w, |w| w.step(-x.abs()).map(|c| c.len()));
    }
    refused(&mut w, |w| w.step(f64::NAN).map(|c| c.len()));
    w.set_velocity(a, [1e15, 0.0]).unwrap();
    refused(&mut w, |w| w.step(10.0).map(|c| c.len()));
}

/// A unit frame starting 3e9 cells from the origin and sweeping 6e9 cells
/// across it (so its swept box reaches beyond the `i32` cell range of the
/// finest level on both sides) through a row of twenty fixed unit boxes at
/// the origin: it must hit the one on its path, as the brute force says.
/// (The overlap, 1 unit against a scale of 6e9, is well clear of the narrow
/// phase's 1e-12 touching band.) Both directions run before failing.
#[test]
fn sweeping_across_the_cell_range_finds_fixed_frames() {
    let mut failures = Vec::new();
    for (start, v) in [(3e9, -6e9), (-3e9, 6e9)] {
        let outcome = std::panic::catch_unwind(|| {
            let mut w = World3::new(strict().with_cell_size(1.0));
            for k in 0..20 {
                w.insert(Body::fixed(vec![unit3([0.0, 0.0, 3.0 * k as f64])])).unwrap();
            }
            let from = Pose3::from_translation([start, 0.0, 0.0]).unwrap();
            w.insert(Body::moving(vec![unit3([0.0; 3])]).with_pose(from).with_velocity([v, 0.0, 0.0])).unwrap();
            let mut stats = StepStats::default();
            check_step(&mut w, 1.0, &mut stats).and_then(|()| match stats.contacts {
                1 => Ok(()),
                n => Err(format!("{n} contacts, expected 1")),
            })
        });
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("start {start:e}, velocity {v:e}: {e}")),
            Err(_) => failures.push(format!("start {start:e}, velocity {v:e}: panicked")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `query_aabb` with a box reaching below -2^31 cells, with the static grid
/// up to date (after a step): every fixed frame in the box must be found.
#[test]
fn query_aabb_below_the_cell_range_finds_fixed_frames() {
    let mut w = World3::new(strict().with_cell_size(1.0));
    let fixed = w.insert(Body::fixed(vec![unit3([0.0; 3])])).unwrap();
    w.step(0.0).unwrap();
    for min in [-3e9, -1e12, -1e15] {
        let q = Aabb { min: [min; 3], max: [1e15; 3] };
        assert_eq!(w.query_aabb(&q), [FrameId { body: fixed, index: 0 }], "query {q:?}");
    }
}

/// A refused step leaves even the grid's cell size as it was: bodies
/// inserted since the last step (which change the automatic cell size) and
/// a step refused for `OutOfRange`.
#[test]
fn refused_step_keeps_the_cell_size() {
    let (mut w, _, ball) = sample_world();
    let cell = w.cell_size();
    for i in 0..5 {
        w.insert(Body::fixed(vec![
            Frame3::from_aabb([20.0 * i as f64, 50.0, 0.0], [20.0 * i as f64 + 9.0, 59.0, 9.0]).unwrap(),
        ]))
        .unwrap();
    }
    w.set_velocity(ball, [1e15, 0.0, 0.0]).unwrap();
    assert_eq!(refused(&mut w, |w| w.step(1.0).map(|c| c.len())), WorldError::OutOfRange(ball));
    assert_eq!(w.cell_size(), cell, "cell size changed by a refused step");
}

/// A world of moving bodies only picks its cell size from them; the empty
/// static grid must follow, or the candidate pass (which walks between the
/// grids by cell coordinates) trips its consistency check in debug builds.
#[test]
fn moving_only_world_keeps_both_grids_on_one_cell_size() {
    let mut w = World3::new(strict());
    w.insert(Body::moving(vec![Frame3::from_aabb([0.0; 3], [2.0; 3]).unwrap()])).unwrap();
    w.step(0.1).unwrap();
    let b = w.insert(Body::moving(vec![Frame3::from_aabb([1.0; 3], [9.0; 3]).unwrap()])).unwrap();
    assert_eq!(w.step(0.1).unwrap().len(), 1);
    w.remove(b).unwrap();
    assert!(w.step(0.1).unwrap().is_empty());
}

/// A manual cell size that is not positive and finite is ignored: the world
/// sizes its cells as an automatic one does, with or without fixed bodies.
#[test]
fn invalid_cell_sizes_mean_automatic() {
    let bodies = |world: &mut World<3>, with_fixed: bool| {
        if with_fixed {
            world
                .insert(Body::fixed(vec![Frame::from_aabb([-50.0, -4.0, -50.0], [50.0, 0.0, 50.0]).unwrap()]))
                .unwrap();
        }
        for k in 0..5 {
            let x = 5.0 * f64::from(k);
            let cube = Frame::from_aabb([x, 1.0, 0.0], [x + 3.0, 4.0, 3.0]).unwrap();
            world.insert(Body::moving(vec![cube]).with_velocity([0.0, -1.0, 0.0])).unwrap();
        }
    };
    for with_fixed in [false, true] {
        let mut auto = World::<3>::new(strict());
        bodies(&mut auto, with_fixed);
        auto.step(0.1).unwrap();
        assert!(auto.cell_size() > 1.0, "automatic size {}", auto.cell_size());
        for bad in [-1.0, 0.0, f64::NAN, f64::INFINITY] {
            let mut world = World::<3>::new(strict().with_cell_size(bad));
            bodies(&mut world, with_fixed);
            world.step(0.1).unwrap();
            assert_eq!(world.cell_size(), auto.cell_size(), "cell size {bad}, fixed bodies: {with_fixed}");
        }
    }
}

/// An inverted query box (`min > max` on one axis) over a fixed list large
/// enough to be looked up by cells: no frame, no panic (the cell list's
/// batched look-up once indexed past its 27 cells here).
#[test]
fn inverted_query_boxes_find_nothing() {
    let mut world = World2::new(strict());
    for i in 0..100 {
        let x = f64::from(i) * 0.7;
        world.insert(Body::fixed(vec![Frame2::from_aabb([x, 0.0], [x + 0.5, 0.5]).unwrap()])).unwrap();
    }
    world.step(0.0).unwrap();
    assert!(world.query_aabb(&Aabb { min: [0.0, 5.9], max: [30.0, 4.8] }).is_empty());
    assert!(world.query_aabb(&Aabb { min: [30.0, 0.0], max: [0.0, 0.5] }).is_empty());
    assert_eq!(world.query_aabb(&Aabb { min: [0.0, 0.0], max: [30.0, 0.5] }).len(), 43);
    let mut world = World3::new(strict());
    for i in 0..100 {
        let x = f64::from(i) * 0.7;
        world.insert(Body::fixed(vec![Frame3::from_aabb([x, 0.0, 0.0], [x + 0.5, 0.5, 0.5]).unwrap()])).unwrap();
    }
    world.step(0.0).unwrap();
    assert!(world.query_aabb(&Aabb { min: [0.0, 5.9, 0.0], max: [30.0, 4.8, 0.5] }).is_empty());
}

/// A step refused for two bodies (one would leave the range, the other's
/// `velocity × dt` overflows) reports the first in slot order, whether the
/// world checks body by body (bodies just inserted) or in one pass over its
/// store (nothing changed since the last step).
#[test]
fn a_refused_step_reports_the_same_error_whatever_the_history() {
    let world = || -> (World2, BodyHandle) {
        let mut w = World2::new(strict());
        let far = Frame2::from_aabb([9.0e14, 0.0], [9.0e14 + 1.0e4, 1.0e4]).unwrap();
        let leaving = w.insert(Body::moving(vec![far]).with_velocity([1.0e14, 0.0])).unwrap();
        let near = Frame2::from_aabb([0.0, 0.0], [1.0, 1.0]).unwrap();
        w.insert(Body::moving(vec![near]).with_velocity([9.0e14, 0.0])).unwrap();
        (w, leaving)
    };
    let (mut fresh, leaving) = world();
    let body_by_body = fresh.step(2.0);
    let (mut stepped, _) = world();
    stepped.step(0.0).unwrap();
    let one_pass = stepped.step(2.0);
    assert_eq!(body_by_body, Err(WorldError::OutOfRange(leaving)));
    assert_eq!(one_pass, Err(WorldError::OutOfRange(leaving)));
}
