//! Hostile sequences of `World` calls, shared by the property test
//! `tests/world/hostile.rs` (in CI) and the fuzz target `fuzz/world_ops`:
//! arbitrary numbers (NaN, infinities, subnormals, ±1e300, the limits),
//! bodies of many frames, stale and foreign handles, both runaway
//! policies. After every call:
//! - no panic (the caller catches none: a panic fails the test or is the
//!   fuzzer's crash);
//! - a refused call (`Err`) left the world exactly as it was (`snapshot`);
//! - an accepted edit shows in the world (pose, velocity, removal);
//! - every step's contacts, body pairs, events, parked bodies and new
//!   poses are the brute force's (`check_step`, which knows the range rule
//!   and both runaway policies);
//! - `query_aabb` finds exactly the frames whose boxes meet the query box.

use fmbgrid::{Aabb, Body, BodyHandle, Frame, FrameId, FrameKind, Pose, Runaway, World, WorldConfig};

use super::{StepStats, check_step, snapshot};

/// A number: small and exact, a special value, or any bit pattern.
#[derive(Clone, Copy, Debug)]
pub enum Num {
    /// `k / 16`.
    Small(i16),
    /// One of [`SPECIAL`].
    Special(u8),
    /// `f64::from_bits`.
    Bits(u64),
}

/// Values at and around every limit.
pub const SPECIAL: [f64; 16] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    5e-324,
    f64::MIN_POSITIVE,
    1e-300,
    1e300,
    -1e300,
    1e15,
    -1e15,
    1.0000000000000002e15,
    1e12,
    f64::MAX,
    -1e-12,
];

impl Num {
    pub fn value(self) -> f64 {
        match self {
            Num::Small(k) => f64::from(k) / 16.0,
            Num::Special(i) => SPECIAL[usize::from(i) % SPECIAL.len()],
            Num::Bits(b) => f64::from_bits(b),
        }
    }
}

pub type Vec3 = [Num; 3];

fn take<const D: usize>(v: &Vec3) -> [f64; D] {
    std::array::from_fn(|i| v[i].value())
}

/// A frame as given to `Frame::new` (which may refuse it).
#[derive(Clone, Debug)]
pub struct FrameSpec {
    pub simplex: bool,
    pub origin: Vec3,
    pub components: [Vec3; 3],
}

impl FrameSpec {
    fn frame<const D: usize>(&self) -> Option<Frame<D>> {
        let kind = if self.simplex { FrameKind::Tetrahedron } else { FrameKind::Cuboid };
        Frame::new(kind, take(&self.origin), std::array::from_fn(|i| take(&self.components[i]))).ok()
    }
}

/// A pose as given to `Pose::new` (which may refuse it).
#[derive(Clone, Debug)]
pub struct PoseSpec {
    pub linear: [Vec3; 3],
    pub translation: Vec3,
}

impl PoseSpec {
    fn pose<const D: usize>(&self) -> Option<Pose<D>> {
        Pose::new(std::array::from_fn(|i| take(&self.linear[i])), take(&self.translation)).ok()
    }
}

#[derive(Clone, Debug)]
pub enum Op {
    /// A body of the given frames (the valid ones), or of `copies` copies
    /// of the first valid one side by side (bodies of many frames).
    Insert {
        fixed: bool,
        frames: Vec<FrameSpec>,
        copies: u16,
        pose: Option<PoseSpec>,
        velocity: Vec3,
    },
    /// Handle `k` of those issued, or a foreign one when `k` is past them.
    Remove(u16),
    SetPose(u16, PoseSpec),
    SetVelocity(u16, Vec3),
    Step(Num),
    QueryAabb(Vec3, Vec3),
    QueryFrame(FrameSpec),
    Clear,
}

/// What a run went through (so that a test can show it is not vacuous).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub refused: usize,
    /// Steps refused for a runaway, as the oracle predicted.
    pub step_refusals: usize,
    pub parked: usize,
    pub steps: usize,
    pub contacts: usize,
    pub big_bodies: usize,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.refused += o.refused;
        self.step_refusals += o.step_refusals;
        self.parked += o.parked;
        self.steps += o.steps;
        self.contacts += o.contacts;
        self.big_bodies += o.big_bodies;
    }
}

/// Most frames a body gets from `copies` (keeps a case fast).
pub const MAX_COPIES: u16 = 2000;

/// Runs `ops` on a fresh world (runaway policy `refuse` or parking) and
/// checks everything listed in the module docs.
pub fn run<const D: usize>(refuse: bool, ops: &[Op]) -> Result<Counts, String> {
    let policy = if refuse { Runaway::Refuse } else { Runaway::Park };
    let mut world = World::<D>::new(WorldConfig::default().with_runaway(policy));
    // Handles from another world, used where this world has no body in
    // their slot (a foreign handle naming a live slot and generation here
    // is indistinguishable from this world's own: handles carry no world
    // tag).
    let mut other = World::<D>::new(WorldConfig::default());
    let unit = Frame::<D>::from_aabb([0.0; D], [1.0; D]).map_err(|e| e.to_string())?;
    let foreign: Vec<BodyHandle> = (0..40).filter_map(|_| other.insert(Body::fixed(vec![unit])).ok()).collect();
    let mut issued: Vec<BodyHandle> = Vec::new();
    let mut stats = StepStats::default();
    let mut counts = Counts::default();
    for (i, op) in ops.iter().enumerate() {
        let refused =
            apply(&mut world, &mut issued, &foreign, &mut stats, op).map_err(|e| format!("op {i} {op:?}: {e}"))?;
        counts.refused += usize::from(refused);
        counts.step_refusals +=
            usize::from(refused && matches!(op, Op::Step(dt) if dt.value() >= 0.0 && dt.value().is_finite()));
        if matches!(op, Op::Step(_)) {
            counts.parked += world.parked().len();
        }
        counts.big_bodies += usize::from(
            matches!(op, Op::Insert { .. }) && !refused && world.bodies().any(|(_, b)| b.frames().len() > 100),
        );
    }
    counts.steps = stats.steps;
    counts.contacts = stats.contacts;
    Ok(counts)
}

fn handle(issued: &[BodyHandle], foreign: &[BodyHandle], k: u16) -> BodyHandle {
    let k = usize::from(k);
    if k < issued.len() { issued[k] } else { foreign[k % foreign.len()] }
}

/// `r` must be `Ok`, or `Err` with the world unchanged since `before`.
fn unchanged_if_refused<const D: usize, T>(
    world: &World<D>,
    before: &str,
    r: &Result<T, fmbgrid::WorldError>,
) -> Result<bool, String> {
    if let Err(e) = r
        && snapshot(world) != before
    {
        return Err(format!("refused with {e:?} but the world changed"));
    }
    Ok(r.is_err())
}

fn apply<const D: usize>(
    world: &mut World<D>,
    issued: &mut Vec<BodyHandle>,
    foreign: &[BodyHandle],
    stats: &mut StepStats,
    op: &Op,
) -> Result<bool, String> {
    let before = snapshot(world);
    let mut refused = false;
    match op {
        Op::Insert { fixed, frames, copies, pose, velocity } => {
            let mut list: Vec<Frame<D>> = frames.iter().filter_map(FrameSpec::frame).collect();
            if *copies > 1
                && let Some(&first) = list.first()
            {
                let step = first.aabb().max[0] - first.aabb().min[0];
                list = (0..(*copies).min(MAX_COPIES))
                    .filter_map(|k| {
                        let p = Pose::<D>::from_translation(std::array::from_fn(|i| {
                            if i == 0 { f64::from(k) * step } else { 0.0 }
                        }))
                        .ok()?;
                        p.transform_frame(&first).ok()
                    })
                    .collect();
            }
            let body = if *fixed { Body::fixed(list) } else { Body::moving(list) };
            let body = match pose.as_ref().and_then(PoseSpec::pose) {
                Some(p) => body.with_pose(p),
                None => body,
            };
            let v = take::<D>(velocity);
            let r = world.insert(body.with_velocity(v));
            refused = unchanged_if_refused(world, &before, &r)?;
            if let Ok(h) = r {
                if issued.contains(&h) {
                    return Err(format!("handle {h:?} issued twice"));
                }
                let b = world.body(h).map_err(|e| format!("new body refused: {e}"))?;
                if b.velocity() != v {
                    return Err("velocity not kept".into());
                }
                issued.push(h);
            }
        }
        Op::Remove(k) => {
            let h = handle(issued, foreign, *k);
            let r = world.remove(h);
            refused = unchanged_if_refused(world, &before, &r)?;
            if r.is_ok() && world.body(h).is_ok() {
                return Err("removed body still there".into());
            }
        }
        Op::SetPose(k, spec) => {
            let h = handle(issued, foreign, *k);
            if let Some(pose) = spec.pose::<D>() {
                let r = world.set_pose(h, pose);
                refused = unchanged_if_refused(world, &before, &r)?;
                if r.is_ok() && world.body(h).map(|b| b.pose()) != Ok(pose) {
                    return Err("pose not kept".into());
                }
            }
        }
        Op::SetVelocity(k, v) => {
            let h = handle(issued, foreign, *k);
            let v = take::<D>(v);
            let r = world.set_velocity(h, v);
            refused = unchanged_if_refused(world, &before, &r)?;
            if r.is_ok() && world.body(h).map(|b| b.velocity()) != Ok(v) {
                return Err("velocity not kept".into());
            }
        }
        Op::Step(dt) => {
            let dt = dt.value();
            if dt.is_finite() && dt >= 0.0 {
                let steps = stats.steps;
                check_step(world, dt, stats)?;
                // `check_step` returns Ok for a refusal it predicted.
                refused = stats.steps == steps;
            } else {
                let r = world.step(dt).map(|c| c.len());
                if r.is_ok() {
                    return Err(format!("step({dt}) accepted"));
                }
                refused = unchanged_if_refused(world, &before, &r)?;
            }
        }
        Op::QueryAabb(a, b) => {
            let (a, b) = (take::<D>(a), take::<D>(b));
            let q = Aabb { min: std::array::from_fn(|i| a[i].min(b[i])), max: std::array::from_fn(|i| a[i].max(b[i])) };
            let got = world.query_aabb(&q);
            let mut want = Vec::new();
            for (h, body) in world.bodies() {
                for index in 0..body.frames().len() as u32 {
                    let id = FrameId { body: h, index };
                    if world.frame(id).is_ok_and(|f| f.aabb().intersects(&q)) {
                        want.push(id);
                    }
                }
            }
            want.sort();
            if got != want {
                return Err(format!("query_aabb({q:?}): {got:?}, expected {want:?}"));
            }
        }
        Op::QueryFrame(spec) => {
            if let Some(f) = spec.frame::<D>() {
                let _ = world.query_frame(&f);
            }
        }
        Op::Clear => {
            world.clear();
            if !world.is_empty() {
                return Err("clear left bodies".into());
            }
        }
    }
    Ok(refused)
}
