//! `World::exact_boxes` after a step in a cheaper contact mode, against the
//! brute force of `world_support` (`brute_contacts`, which takes the frames
//! as `World::frame` reports them before the step and tests them with
//! `intersect`, moving ones translating by `velocity · dt`).
//!
//! Seeded scenes in 2D and 3D with moving and fixed bodies of one to three
//! frames: moving–moving, moving–fixed and multi-frame contacts (each
//! counted, so none of them can go missing unnoticed).
//!
//! * `Interval` step, then `exact_boxes(|_| true)`: the same pairs in the
//!   same order as the step returned, the same pairs as the `ExactBox` brute
//!   force, times bit for bit, and boxes equal to the brute force's exact
//!   boxes within `BOX_TOL · scale`, where the scale of a pair is the
//!   largest absolute coordinate or extent of the two frames' swept boxes
//!   (`pair_scale`), and the deviation of two boxes is the largest
//!   difference of any of their `2·D` corner coordinates. (`exact_boxes`
//!   rebuilds the step's frames by moving the moving ones back by their
//!   displacement, so it may differ from the step-time arithmetic by
//!   round-off; how many boxes are bit-identical is printed.) The step's
//!   box of each contact (the swept boxes' overlap) contains the exact box
//!   within the same tolerance. `contacts()` is what `exact_boxes`
//!   returned; a second call changes nothing.
//! * A selective predicate: the selected contacts get the exact box, the
//!   others keep the step's box bit for bit; asking for all of them
//!   afterwards gives the selected ones the very same boxes again.
//! * `Candidates` step, then `exact_boxes(|_| true)`: the intersecting pairs
//!   get their exact box, the other candidates keep theirs; times stay
//!   `[0, 1]`.
//! * `ContactsOutdated` after `insert`, `remove` and `set_pose` (fixed and
//!   moving bodies), before any step, and in `ExactBox` mode too; the world
//!   is unchanged by the refusal (`world_support::snapshot`) and its
//!   contacts are still readable. Refused calls (an empty body, a stale
//!   handle, a NaN step) and `set_velocity` leave the contacts current, and
//!   after `set_velocity` the boxes are those of the step (the same as in a
//!   twin world without it).
//! * `ExactBox` mode: a no-op, bit for bit.
//!
//! Run: `cargo test --release --test suite grid_and_queries::exact_boxes::`.

use crate::support::world as world_support;

use std::collections::HashMap;

use fmbgrid::{Aabb, Body, Contact, ContactDetail, Frame, FrameId, Motion, World, WorldConfig, WorldError};
use world_support::{
    BodyView, SceneParams, TestRng, brute_contacts, build_world, contact_bits, diff_contacts, displacement,
    random_edits, random_scene, rng, scene_body, snapshot, sorted, view,
};

/// Agreement required between `exact_boxes` and the brute force's exact
/// boxes, relative to the pair's scale.
const BOX_TOL: f64 = 1e-9;

/// Moving and fixed bodies of 1–3 frames, about one or two contacts a frame.
fn params(dim: usize) -> SceneParams {
    SceneParams { max_frames_per_body: 3, fixed: 0.4, ..SceneParams::uniform(1200, dim) }
}

/// The seeded scene in a world of `detail`.
fn world_of<const D: usize>(seed: u64, detail: ContactDetail) -> (World<D>, TestRng) {
    let mut r = rng(seed);
    let bodies = random_scene::<D>(&mut r, &params(D));
    let mut world = World::new(WorldConfig::default().with_contact_detail(detail));
    build_world(&mut world, &bodies);
    (world, r)
}

/// The frames of a step of `dt` as the brute force tests them (moving ones
/// carrying their displacement), by id.
fn step_frames<const D: usize>(bodies: &[BodyView<D>], dt: f64) -> HashMap<FrameId, Frame<D>> {
    let mut out = HashMap::new();
    for b in bodies {
        let d = displacement(b.velocity, dt);
        for (k, f) in b.frames.iter().enumerate() {
            let f = if b.fixed { *f } else { f.with_velocity(d).expect("valid displacement") };
            out.insert(FrameId { body: b.handle, index: k as u32 }, f);
        }
    }
    out
}

/// Largest absolute coordinate or extent of the two frames' swept boxes.
fn pair_scale<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    let mut s: f64 = 0.0;
    for f in [a, b] {
        let bx = f.aabb();
        for i in 0..D {
            s = s.max(bx.max[i] - bx.min[i]).max(bx.min[i].abs()).max(bx.max[i].abs());
        }
    }
    s
}

/// Largest difference between corresponding corner coordinates.
fn deviation<const D: usize>(x: &Aabb<D>, y: &Aabb<D>) -> f64 {
    (0..D).map(|k| (x.min[k] - y.min[k]).abs().max((x.max[k] - y.max[k]).abs())).fold(0.0, f64::max)
}

/// True when `outer` grown by `tol` on every side contains `inner`.
fn contains<const D: usize>(outer: &Aabb<D>, inner: &Aabb<D>, tol: f64) -> bool {
    (0..D).all(|k| outer.min[k] <= inner.min[k] + tol && inner.max[k] <= outer.max[k] + tol)
}

/// What a check of refined contacts saw.
#[derive(Debug, Default)]
struct Seen {
    /// Contacts given the exact box.
    refined: usize,
    /// Of those, bit-identical to the brute force's box.
    identical: usize,
    /// Of those, whose box changed from the step's.
    changed: usize,
    /// Contacts that kept the step's box.
    kept: usize,
    /// Largest deviation from the brute force's box, relative to the pair's scale.
    worst: f64,
    /// Step boxes not containing the exact box bit for bit (within the tolerance they must).
    not_containing: usize,
    moving_moving: usize,
    moving_fixed: usize,
    multi_frame: usize,
    moving_time: usize,
}

impl std::ops::AddAssign for Seen {
    fn add_assign(&mut self, o: Seen) {
        self.refined += o.refined;
        self.identical += o.identical;
        self.changed += o.changed;
        self.kept += o.kept;
        self.worst = self.worst.max(o.worst);
        self.not_containing += o.not_containing;
        self.moving_moving += o.moving_moving;
        self.moving_fixed += o.moving_fixed;
        self.multi_frame += o.multi_frame;
        self.moving_time += o.moving_time;
    }
}

/// Checks `refined` (the world's contacts after `exact_boxes(select)`)
/// against `rough` (the step's contacts, in its order) and `exact` (the
/// `ExactBox` brute force, sorted by pair). `interval`: the step ran in
/// `Interval` mode (same pairs as `exact`, exact times); otherwise in
/// `Candidates` (a superset, times `[0, 1]`).
#[allow(clippy::too_many_arguments)]
fn check_refined<const D: usize>(
    rough: &[Contact<D>],
    refined: &[Contact<D>],
    exact: &[Contact<D>],
    frames: &HashMap<FrameId, Frame<D>>,
    fixed: &dyn Fn(FrameId) -> bool,
    select: &dyn Fn(&Contact<D>) -> bool,
    interval: bool,
) -> Result<Seen, String> {
    if rough.len() != refined.len() {
        return Err(format!("{} contacts after the step, {} after exact_boxes", rough.len(), refined.len()));
    }
    let mut seen = Seen::default();
    let mut found = 0;
    for (r, c) in rough.iter().zip(refined) {
        if (r.a, r.b) != (c.a, c.b) {
            return Err(format!("exact_boxes changed the pairs or their order: {r:?} became {c:?}"));
        }
        if r.time.map(f64::to_bits) != c.time.map(f64::to_bits) {
            return Err(format!("exact_boxes changed a time: {r:?} became {c:?}"));
        }
        let e = exact.binary_search_by_key(&(c.a, c.b), |e| (e.a, e.b)).ok().map(|i| &exact[i]);
        let Some(e) = e else {
            if interval {
                return Err(format!("pair {:?} / {:?} reported, but the brute force finds no contact", c.a, c.b));
            }
            // A candidate that does not intersect keeps its box.
            if contact_bits(r) != contact_bits(c) {
                return Err(format!("a candidate that does not intersect changed: {r:?} became {c:?}"));
            }
            seen.kept += 1;
            continue;
        };
        found += 1;
        if interval && c.time.map(f64::to_bits) != e.time.map(f64::to_bits) {
            return Err(format!("time {:?} of {:?} / {:?}, brute force {:?}", c.time, c.a, c.b, e.time));
        }
        let scale = pair_scale(&frames[&c.a], &frames[&c.b]);
        let tol = BOX_TOL * scale;
        if !contains(&r.aabb, &e.aabb, tol) {
            return Err(format!(
                "the step's box {:?} does not contain the exact box {e:?} (tolerance {tol:e})",
                r.aabb
            ));
        }
        if !contains(&r.aabb, &e.aabb, 0.0) {
            seen.not_containing += 1;
        }
        let (fa, fb) = (fixed(c.a), fixed(c.b));
        seen.moving_moving += usize::from(!fa && !fb);
        seen.moving_fixed += usize::from(fa != fb);
        seen.multi_frame += usize::from(c.a.index > 0 || c.b.index > 0);
        seen.moving_time += usize::from(e.time != [0.0, 1.0]);
        if select(r) {
            let dev = deviation(&c.aabb, &e.aabb);
            if dev > tol {
                return Err(format!(
                    "exact box {:?} of {:?} / {:?}, brute force {:?}: off by {dev:e} > {tol:e} ({:e} of the scale {scale:e})",
                    c.aabb,
                    c.a,
                    c.b,
                    e.aabb,
                    dev / scale
                ));
            }
            seen.refined += 1;
            seen.identical += usize::from(contact_bits(c) == contact_bits(&Contact { time: c.time, ..*e }));
            seen.changed += usize::from(c.aabb != r.aabb);
            seen.worst = seen.worst.max(dev / scale);
        } else {
            if contact_bits(r) != contact_bits(c) {
                return Err(format!("a contact not selected changed: {r:?} became {c:?}"));
            }
            seen.kept += 1;
        }
    }
    if found != exact.len() {
        return Err(format!("{} pairs intersect, {found} of them reported", exact.len()));
    }
    Ok(seen)
}

/// Bit patterns of a contact list, in order.
fn bits<const D: usize>(contacts: &[Contact<D>]) -> Vec<(FrameId, FrameId, Vec<u64>)> {
    contacts.iter().map(contact_bits).collect()
}

/// The body of a frame is fixed (in the world's view before the step).
fn fixed_of<const D: usize>(bodies: &[BodyView<D>]) -> impl Fn(FrameId) -> bool + '_ {
    move |id| bodies.iter().any(|b| b.handle == id.body && b.fixed)
}

/// Steps the scene in `detail` three times (random edits between), each
/// time checking the step against its brute force, then `exact_boxes(select)`.
fn refine_steps<const D: usize>(seed: u64, detail: ContactDetail, select: &(dyn Fn(&Contact<D>) -> bool + Sync)) {
    let (mut world, mut r) = world_of::<D>(seed, detail);
    let p = params(D);
    let mut fresh = |r: &mut TestRng| scene_body(r, &p);
    let mut total = Seen::default();
    for (k, dt) in [1.0, 0.5, 0.25].into_iter().enumerate() {
        if k > 0 {
            random_edits(&mut world, &mut r, &mut fresh, 0.02);
        }
        let before = view(&world);
        let frames = step_frames(&before, dt);
        let exact = brute_contacts(&before, dt, ContactDetail::ExactBox);
        let expected = brute_contacts(&before, dt, detail);
        let rough = world.step(dt).expect("valid step").to_vec();
        if let Some(d) = diff_contacts(&expected, &sorted(&rough), 4) {
            panic!("{D}D seed {seed} {detail:?}, step {k}: the step differs from its brute force:\n{d}");
        }
        let refined = world.exact_boxes(select).expect("contacts are current").to_vec();
        let fixed = fixed_of(&before);
        let seen = check_refined(&rough, &refined, &exact, &frames, &fixed, select, detail == ContactDetail::Interval)
            .unwrap_or_else(|e| panic!("{D}D seed {seed} {detail:?}, step {k} (dt {dt}): {e}"));
        assert_eq!(bits(world.contacts()), bits(&refined), "contacts() is not what exact_boxes returned");
        let again = world.exact_boxes(select).expect("still current").to_vec();
        assert_eq!(bits(&again), bits(&refined), "a second exact_boxes changed the contacts");
        total += seen;
    }
    println!("{D}D seed {seed} {detail:?}: {total:?}");
    // A third of the pairs, or the moving ones, are still well over 80.
    assert!(total.refined > 80, "{D}D: only {} contacts refined", total.refined);
    assert!(total.changed > 50, "{D}D: only {} boxes changed by exact_boxes", total.changed);
    for (what, n) in [
        ("moving–moving", total.moving_moving),
        ("moving–fixed", total.moving_fixed),
        ("multi-frame", total.multi_frame),
        ("moving (time ≠ [0, 1])", total.moving_time),
    ] {
        assert!(n > 50, "{D}D: only {n} {what} contacts");
    }
}

#[test]
fn exact_boxes_after_interval_steps_3d() {
    refine_steps::<3>(61, ContactDetail::Interval, &|_| true);
}

#[test]
fn exact_boxes_after_interval_steps_2d() {
    refine_steps::<2>(62, ContactDetail::Interval, &|_| true);
}

#[test]
fn exact_boxes_after_candidates_steps() {
    refine_steps::<3>(63, ContactDetail::Candidates, &|_| true);
    refine_steps::<2>(64, ContactDetail::Candidates, &|_| true);
}

/// A third of the body pairs (by slot), and moving contacts only.
fn selective<const D: usize>(seed: u64) {
    let by_pair = |c: &Contact<D>| (c.a.body.index() + c.b.body.index()).is_multiple_of(3);
    refine_steps::<D>(seed, ContactDetail::Interval, &by_pair);
    refine_steps::<D>(seed + 1, ContactDetail::Interval, &|c: &Contact<D>| c.time != [0.0, 1.0]);

    // Asking for the rest afterwards: the selected keep their boxes, bit
    // for bit (the same frames, the same arithmetic).
    let (mut world, _) = world_of::<D>(seed, ContactDetail::Interval);
    let before = view(&world);
    let rough = world.step(1.0).expect("valid step").to_vec();
    let some = world.exact_boxes(by_pair).expect("current").to_vec();
    let all = world.exact_boxes(|_| true).expect("current").to_vec();
    let exact = brute_contacts(&before, 1.0, ContactDetail::ExactBox);
    let fixed = fixed_of(&before);
    check_refined(&rough, &all, &exact, &step_frames(&before, 1.0), &fixed, &|_| true, true)
        .unwrap_or_else(|e| panic!("{D}D seed {seed}, all after some: {e}"));
    let (mut selected, mut others) = (0, 0);
    for ((r, s), a) in rough.iter().zip(&some).zip(&all) {
        if by_pair(r) {
            assert_eq!(contact_bits(s), contact_bits(a), "a selected box changed when asked again");
            selected += 1;
        } else {
            others += 1;
        }
    }
    assert!(selected > 20 && others > 20, "{D}D: {selected} selected, {others} not: the predicate splits nothing");
}

#[test]
fn exact_boxes_of_selected_contacts_3d() {
    selective::<3>(71);
}

#[test]
fn exact_boxes_of_selected_contacts_2d() {
    selective::<2>(73);
}

/// `exact_boxes` is refused, and changes nothing.
fn assert_outdated<const D: usize>(world: &mut World<D>, what: &str) {
    let contacts = bits(world.contacts());
    let snap = snapshot(world);
    let answer = world.exact_boxes(|_| true).map(<[Contact<D>]>::len);
    assert_eq!(answer, Err(WorldError::ContactsOutdated), "{D}D, after {what}");
    assert_eq!(snapshot(world), snap, "{D}D: a refused exact_boxes changed the world (after {what})");
    assert_eq!(bits(world.contacts()), contacts, "{D}D: contacts() changed (after {what})");
}

/// A handle of a moving (or fixed) body in one of the contacts.
fn body_in_contact<const D: usize>(world: &World<D>, motion: Motion) -> fmbgrid::BodyHandle {
    world
        .contacts()
        .iter()
        .flat_map(|c| [c.a.body, c.b.body])
        .find(|&h| world.body(h).expect("live").motion() == motion)
        .expect("a contact with such a body")
}

fn outdated<const D: usize>(seed: u64) {
    for detail in [ContactDetail::Interval, ContactDetail::Candidates, ContactDetail::ExactBox] {
        let (mut world, _) = world_of::<D>(seed, detail);
        assert_outdated(&mut world, "no step yet");
        // A body to remove later, and a stale handle.
        let stale = world.insert(Body::fixed(vec![Frame::from_aabb([-9.0; D], [-8.0; D]).unwrap()])).unwrap();
        world.remove(stale).unwrap();
        world.step(1.0).expect("valid step");
        assert!(!world.contacts().is_empty());

        // Refused calls change nothing, so the contacts stay current.
        let contacts = bits(world.contacts());
        assert_eq!(world.insert(Body::fixed(vec![])), Err(WorldError::EmptyBody));
        assert!(world.remove(stale).is_err());
        assert!(world.set_pose(stale, fmbgrid::Pose::IDENTITY).is_err());
        assert!(world.step(f64::NAN).is_err());
        let kept = world.exact_boxes(|_| false).expect("refused calls keep the contacts current");
        assert_eq!(bits(kept), contacts, "{D}D {detail:?}: exact_boxes(|_| false) changed something");

        let extra = Body::moving(vec![Frame::from_aabb([1.0; D], [2.0; D]).unwrap()]);
        let inserted = world.insert(extra).unwrap();
        assert_outdated(&mut world, "insert");

        world.step(0.5).expect("valid step");
        world.remove(inserted).unwrap();
        assert_outdated(&mut world, "remove");

        for motion in [Motion::Fixed, Motion::Moving] {
            world.step(0.5).expect("valid step");
            let h = body_in_contact(&world, motion);
            let pose = world.body(h).unwrap().pose();
            // The same pose again: re-posed all the same.
            world.set_pose(h, pose).unwrap();
            assert_outdated(&mut world, &format!("set_pose of a {motion:?} body"));
        }

        // Stepping again makes them current.
        world.step(0.25).expect("valid step");
        assert!(world.exact_boxes(|_| true).is_ok(), "{D}D {detail:?}: a step makes the contacts current");
    }
}

#[test]
fn contacts_outdated_3d() {
    outdated::<3>(81);
}

#[test]
fn contacts_outdated_2d() {
    outdated::<2>(82);
}

/// `set_velocity` after the step: the contacts stay current and the boxes
/// are those of the step's motion (as in a twin world without the change).
fn velocity_change<const D: usize>(seed: u64) {
    let (mut world, _) = world_of::<D>(seed, ContactDetail::Interval);
    let (mut twin, _) = world_of::<D>(seed, ContactDetail::Interval);
    let before = view(&world);
    let rough = world.step(1.0).expect("valid step").to_vec();
    twin.step(1.0).expect("valid step");
    let moving: Vec<_> = world
        .contacts()
        .iter()
        .flat_map(|c| [c.a.body, c.b.body])
        .filter(|&h| world.body(h).unwrap().motion() == Motion::Moving)
        .collect();
    assert!(moving.len() > 100);
    for (k, h) in moving.into_iter().enumerate() {
        let v = world.body(h).unwrap().velocity();
        let v = if k.is_multiple_of(3) { [0.0; D] } else { v.map(|x| -3.0 * x + 1.0) };
        world.set_velocity(h, v).unwrap();
    }
    let refined = world.exact_boxes(|_| true).expect("set_velocity keeps the contacts current").to_vec();
    let expected = twin.exact_boxes(|_| true).expect("current").to_vec();
    assert_eq!(bits(&refined), bits(&expected), "{D}D: set_velocity changed what exact_boxes computes");
    let exact = brute_contacts(&before, 1.0, ContactDetail::ExactBox);
    let fixed = fixed_of(&before);
    check_refined(&rough, &refined, &exact, &step_frames(&before, 1.0), &fixed, &|_| true, true)
        .unwrap_or_else(|e| panic!("{D}D seed {seed}, after set_velocity: {e}"));
}

#[test]
fn set_velocity_keeps_contacts_current_3d() {
    velocity_change::<3>(91);
}

#[test]
fn set_velocity_keeps_contacts_current_2d() {
    velocity_change::<2>(92);
}

/// In `ExactBox` mode `exact_boxes` returns the step's contacts, bit for bit.
fn no_op<const D: usize>(seed: u64) {
    let (mut world, mut r) = world_of::<D>(seed, ContactDetail::ExactBox);
    let p = params(D);
    let mut fresh = |r: &mut TestRng| scene_body(r, &p);
    for dt in [1.0, 0.5] {
        let before = view(&world);
        let stepped = bits(world.step(dt).expect("valid step"));
        let snap = snapshot(&world);
        let refined = bits(world.exact_boxes(|_| true).expect("current"));
        assert_eq!(refined, stepped, "{D}D: exact_boxes changed ExactBox contacts");
        assert_eq!(snapshot(&world), snap, "{D}D: exact_boxes changed an ExactBox world");
        let exact = brute_contacts(&before, dt, ContactDetail::ExactBox);
        assert!(diff_contacts(&exact, &sorted(world.contacts()), 4).is_none());
        assert!(!exact.is_empty());
        random_edits(&mut world, &mut r, &mut fresh, 0.02);
    }
}

#[test]
fn no_op_in_exact_box_mode_3d() {
    no_op::<3>(95);
}

#[test]
fn no_op_in_exact_box_mode_2d() {
    no_op::<2>(96);
}
