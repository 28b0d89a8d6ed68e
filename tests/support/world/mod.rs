//! Helpers of the world suites (`tests/world`, `tests/grid_and_queries`,
//! `tests/world_allocations.rs`): seeded scene generators (frames, bodies,
//! scenes), a brute-force O(N²) reference for `World::step` in each contact
//! mode (`ContactDetail`), bit-exact comparison of contact lists, and a
//! textual snapshot of a world (to check that a refused call changed
//! nothing).
//!
//! Each suite imports it as `use crate::support::world as world_support;`
//! and uses a subset. The generator and the vector helpers are
//! `support::math`'s (`scale` is `math::mul`); `random_unit` and `random_rotation`
//! stay here because they draw differently from `support::random_dir` and
//! `support::random_rotation` (a half-open range; a quaternion by rejection
//! rather than Shoemake's), and the seeded world scenes depend on their
//! draws.

pub mod hostile;

use std::collections::HashSet;
use std::fmt::Write as _;

use fmbgrid::{
    Body, BodyHandle, Contact, ContactDetail, ContactEvent, Frame, FrameId, FrameKind, Motion, Pose, World, WorldError,
    intersect, overlap_interval,
};
use rand::Rng;

// Each suite uses a subset (unused re-exports would warn).
#[allow(unused_imports)]
pub use super::math::{TestRng, add, dot, mul as scale, norm, rng, sub};

/// A uniformly distributed unit vector.
pub fn random_unit<const D: usize>(rng: &mut TestRng) -> [f64; D] {
    loop {
        let v: [f64; D] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
        let n = norm(v);
        if n > 0.1 && n <= 1.0 {
            return scale(v, 1.0 / n);
        }
    }
}

/// A uniformly distributed rotation, by columns (`m[i]` is the image of the
/// `i`-th unit vector), determinant +1.
pub fn random_rotation<const D: usize>(rng: &mut TestRng) -> [[f64; D]; D] {
    if D == 2 {
        let a: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        let (s, c) = a.sin_cos();
        let cols = [[c, s], [-s, c]];
        std::array::from_fn(|i| std::array::from_fn(|k| cols[i][k]))
    } else {
        let q: [f64; 4] = random_unit(rng);
        let [w, x, y, z] = q;
        let cols = [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)],
            [2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)],
            [2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)],
        ];
        std::array::from_fn(|i| std::array::from_fn(|k| cols[i][k]))
    }
}

/// `|det C| / Π|cᵢ|` of a set of columns (2D or 3D).
pub fn hadamard_ratio<const D: usize>(c: &[[f64; D]; D]) -> f64 {
    let det = if D == 2 {
        c[0][0] * c[1][1] - c[0][1] * c[1][0]
    } else {
        c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) - c[1][0] * (c[0][1] * c[2][2] - c[0][2] * c[2][1])
            + c[2][0] * (c[0][1] * c[1][2] - c[0][2] * c[1][1])
    };
    det.abs() / c.iter().map(|v| norm(*v)).product::<f64>()
}

/// A random frame of about `size` (largest extent between `size / 2` and
/// `size`) centred near `center`: an oriented box or a tetrahedron (a
/// triangle in 2D), equally likely, never close to flat.
pub fn random_frame<const D: usize>(rng: &mut TestRng, center: [f64; D], size: f64) -> Frame<D> {
    loop {
        let f = if rng.random_bool(0.5) {
            let half: [f64; D] = std::array::from_fn(|_| size * rng.random_range(0.25..0.5));
            Frame::oriented_box(center, half, random_rotation(rng))
        } else {
            let comps: [[f64; D]; D] =
                std::array::from_fn(|_| scale(random_unit(rng), size * rng.random_range(0.6..1.0)));
            if hadamard_ratio(&comps) < 0.1 {
                continue;
            }
            let mut o = center;
            for c in &comps {
                o = sub(o, scale(*c, 1.0 / (D + 1) as f64));
            }
            Frame::tetrahedron(o, comps)
        };
        if let Ok(f) = f {
            return f;
        }
    }
}

/// The same frame, at rest (for comparisons: bodies strip frame velocities).
pub fn at_rest<const D: usize>(f: &Frame<D>) -> Frame<D> {
    Frame::new(f.kind(), f.origin(), f.components()).expect("a valid frame stays valid at rest")
}

// ---------------------------------------------------------------------------
// Scenes.
// ---------------------------------------------------------------------------

/// Distribution of frame sizes.
#[derive(Clone, Copy, Debug)]
pub enum Sizes {
    /// Uniform in `[lo, hi]`.
    Uniform(f64, f64),
    /// Log-uniform in `[lo, hi]`.
    LogUniform(f64, f64),
}

impl Sizes {
    pub fn sample(self, rng: &mut TestRng) -> f64 {
        match self {
            Sizes::Uniform(lo, hi) => rng.random_range(lo..=hi),
            Sizes::LogUniform(lo, hi) => rng.random_range(lo.ln()..=hi.ln()).exp(),
        }
    }
}

/// How a scene is drawn.
#[derive(Clone, Debug)]
pub struct SceneParams {
    /// Total number of frames (bodies are drawn until it is reached).
    pub frames: usize,
    /// Side of the cube `[0, region]^D` holding the bodies' positions.
    pub region: f64,
    pub sizes: Sizes,
    /// Probability that a body is fixed.
    pub fixed: f64,
    /// Frames per body: 1 to this.
    pub max_frames_per_body: usize,
    /// Typical displacement over a unit step, in multiples of the frame's size.
    pub speed: f64,
    /// Random collision filters on about half the bodies.
    pub filters: bool,
    /// Fraction of the bodies placed in a cube of `cluster_volume` of the region's volume.
    pub cluster: Option<(f64, f64)>,
    /// Added to every position: `+offset` on even axes, `-offset` on odd ones.
    pub offset: f64,
    /// Number of extra huge single-frame bodies (size `huge_size`).
    pub huge: usize,
    pub huge_size: f64,
    /// Number of extra very fast single-frame bodies (displacement `fast_speed` per unit step).
    pub fast: usize,
    pub fast_speed: f64,
}

impl SceneParams {
    /// Uniform scene of `frames` frames of size 0.5–1 with about one or two
    /// contacts per frame.
    pub fn uniform(frames: usize, dim: usize) -> Self {
        // Density: about 0.15 frames per unit volume in 3D, 0.25 per unit area in 2D.
        let density = if dim == 2 { 0.25 } else { 0.15 };
        SceneParams {
            frames,
            region: (frames as f64 / density).powf(1.0 / dim as f64),
            sizes: Sizes::Uniform(0.5, 1.0),
            fixed: 0.3,
            max_frames_per_body: 1,
            speed: 0.5,
            filters: false,
            cluster: None,
            offset: 0.0,
            huge: 0,
            huge_size: 0.0,
            fast: 0,
            fast_speed: 0.0,
        }
    }
}

/// A body to insert, with everything the world takes.
#[derive(Clone, Debug)]
pub struct BodySpec<const D: usize> {
    pub frames: Vec<Frame<D>>,
    pub fixed: bool,
    pub pose: Pose<D>,
    pub velocity: [f64; D],
    pub filter: (u32, u32),
}

impl<const D: usize> BodySpec<D> {
    pub fn body(&self) -> Body<D> {
        let b = if self.fixed { Body::fixed(self.frames.clone()) } else { Body::moving(self.frames.clone()) };
        b.with_pose(self.pose).with_velocity(self.velocity).with_collision_filter(self.filter.0, self.filter.1)
    }
}

/// A random position in the scene (clustered or not, offset).
pub fn position<const D: usize>(rng: &mut TestRng, p: &SceneParams) -> [f64; D] {
    let side = match p.cluster {
        Some((fraction, volume)) if rng.random_bool(fraction) => p.region * volume.powf(1.0 / D as f64),
        _ => p.region,
    };
    std::array::from_fn(|i| rng.random_range(0.0..side) + if i % 2 == 0 { p.offset } else { -p.offset })
}

/// A random ordinary body of the scene (not huge, not fast).
pub fn scene_body<const D: usize>(rng: &mut TestRng, p: &SceneParams) -> BodySpec<D> {
    let at = position(rng, p);
    let size = p.sizes.sample(rng);
    let fixed = rng.random_bool(p.fixed);
    let mut b = random_body(rng, at, size, p.max_frames_per_body, fixed, p.speed);
    if p.filters {
        b.filter = random_filter(rng);
    }
    b
}

/// A random collision filter: default half the time, otherwise a group of
/// four and a mask of some of them.
pub fn random_filter(rng: &mut TestRng) -> (u32, u32) {
    if rng.random_bool(0.5) { (1, u32::MAX) } else { (1 << rng.random_range(0..4), rng.random_range(0..16u32)) }
}

/// A body of 1 to `max_frames` frames of size `size` in body coordinates
/// (overlapping one another often), rotated and placed at `at`.
pub fn random_body<const D: usize>(
    rng: &mut TestRng,
    at: [f64; D],
    size: f64,
    max_frames: usize,
    fixed: bool,
    speed: f64,
) -> BodySpec<D> {
    let n = rng.random_range(1..=max_frames);
    let frames = (0..n)
        .map(|k| {
            let c = if k == 0 { [0.0; D] } else { scale(random_unit(rng), size * rng.random_range(0.0..0.8)) };
            random_frame(rng, c, size)
        })
        .collect();
    let pose = Pose::new(random_rotation(rng), at).expect("rotations are valid poses");
    let velocity = if fixed { [0.0; D] } else { scale(random_unit(rng), size * speed * rng.random_range(0.0..2.0)) };
    BodySpec { frames, fixed, pose, velocity, filter: (1, u32::MAX) }
}

/// A random scene.
pub fn random_scene<const D: usize>(rng: &mut TestRng, p: &SceneParams) -> Vec<BodySpec<D>> {
    let mut bodies = Vec::new();
    let mut count = 0;
    while count < p.frames {
        let b = scene_body(rng, p);
        count += b.frames.len();
        bodies.push(b);
    }
    for _ in 0..p.huge {
        let at = position(rng, p);
        let fixed = rng.random_bool(0.5);
        bodies.push(random_body(rng, at, p.huge_size, 1, fixed, p.speed));
    }
    for _ in 0..p.fast {
        let at = position(rng, p);
        let size = p.sizes.sample(rng);
        let mut b = random_body(rng, at, size, 1, false, 0.0);
        b.velocity = scale(random_unit(rng), p.fast_speed);
        bodies.push(b);
    }
    bodies
}

/// Inserts every body; panics on a refusal (generated bodies are valid).
pub fn build_world<const D: usize>(world: &mut World<D>, bodies: &[BodySpec<D>]) -> Vec<BodyHandle> {
    bodies.iter().map(|b| world.insert(b.body()).expect("generated bodies are valid")).collect()
}

// ---------------------------------------------------------------------------
// Brute force.
// ---------------------------------------------------------------------------

/// A body as the world holds it: frames placed (at rest), as `World::frame` gives them.
#[derive(Clone, Debug)]
pub struct BodyView<const D: usize> {
    pub handle: BodyHandle,
    pub fixed: bool,
    pub velocity: [f64; D],
    pub filter: (u32, u32),
    pub frames: Vec<Frame<D>>,
}

/// Every body of the world with its placed frames.
pub fn view<const D: usize>(world: &World<D>) -> Vec<BodyView<D>> {
    world
        .bodies()
        .map(|(handle, body)| BodyView {
            handle,
            fixed: body.motion() == Motion::Fixed,
            velocity: body.velocity(),
            filter: body.collision_filter(),
            frames: (0..body.frames().len() as u32)
                .map(|index| world.frame(FrameId { body: handle, index }).expect("live body, valid index"))
                .collect(),
        })
        .collect()
}

/// True when two filters let their bodies collide.
pub fn accepts(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 & b.1 != 0 && b.0 & a.1 != 0
}

/// The displacement of a body over a step of `dt`, computed as the world does.
pub fn displacement<const D: usize>(velocity: [f64; D], dt: f64) -> [f64; D] {
    std::array::from_fn(|i| velocity[i] * dt)
}

/// Why a body is a runaway over a step (the range rule, restated from the
/// docs with public accessors: `velocity · dt` must be finite within
/// ±1e15, and every frame's box displaced by it within the frame's
/// `reach()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Runaway {
    /// The first bad coordinate of `velocity · dt`.
    BadNumber(f64),
    /// A frame would leave its reach.
    OutOfRange,
}

/// The body's runaway reason over a step of `dt`, if any.
pub fn runaway<const D: usize>(b: &BodyView<D>, dt: f64) -> Option<Runaway> {
    if b.fixed {
        return None;
    }
    let d = displacement(b.velocity, dt);
    if let Some(&x) = d.iter().find(|x| x.is_nan() || x.abs() > 1e15) {
        return Some(Runaway::BadNumber(x));
    }
    let leaves = |f: &Frame<D>| {
        let a = f.aabb();
        (0..D).any(|i| (a.min[i] + d[i]).abs() > f.reach() || (a.max[i] + d[i]).abs() > f.reach())
    };
    b.frames.iter().any(leaves).then_some(Runaway::OutOfRange)
}

/// The contacts of a step of `dt`, by the definition: every pair of frames
/// of different bodies, not both fixed, accepted by both filters, on the
/// frames translating by `velocity · dt` (fixed frames at rest), as the
/// world's `detail` asks:
/// * `ExactBox`: `intersect` decides and gives the box and the interval;
/// * `Interval`: `overlap_interval` decides and gives the interval, the box
///   is the overlap of the two frames' swept boxes; the oracle also
///   asserts that `overlap_interval` is `intersect`'s `time`, bit for bit
///   (so a wrong `overlap_interval` cannot make both sides agree);
/// * `Candidates`: every pair whose swept boxes overlap (closed test), with
///   their overlap as box and `[0, 1]` as interval.
///
/// A frame's swept box is its box as `World::frame` reports it
/// (`Frame::aabb`), swept by `velocity · dt` (`Aabb::swept`), not the box
/// recomputed from its vertices by `with_velocity`: the world translates a
/// moving frame's box step by step (`min + d`) while its vertices become
/// `(origin + d) + component`, so once a body has moved the two can differ
/// by an ulp (`world_model.rs` checks that `World::frame` reports the
/// translated box).
///
/// Sorted by `(a, b)`.
pub fn brute_contacts<const D: usize>(bodies: &[BodyView<D>], dt: f64, detail: ContactDetail) -> Vec<Contact<D>> {
    let mut flat = Vec::new();
    for (bi, b) in bodies.iter().enumerate() {
        let d = displacement(b.velocity, dt);
        for (k, f) in b.frames.iter().enumerate() {
            let moving = if b.fixed { *f } else { f.with_velocity(d).expect("displacement checked by the caller") };
            let swept = if b.fixed { f.aabb() } else { f.aabb().swept(&d) };
            flat.push((bi, FrameId { body: b.handle, index: k as u32 }, moving, swept));
        }
    }
    let mut out = Vec::new();
    for i in 0..flat.len() {
        let (bi, ia, fa, sa) = &flat[i];
        let a = &bodies[*bi];
        for (bj, ib, fb, sb) in &flat[i + 1..] {
            let b = &bodies[*bj];
            if bi == bj || (a.fixed && b.fixed) || !accepts(a.filter, b.filter) {
                continue;
            }
            let found = match detail {
                ContactDetail::ExactBox => intersect(fa, fb).map(|hit| (hit.aabb, hit.time)),
                ContactDetail::Interval => {
                    let time = overlap_interval(fa, fb);
                    let reference = intersect(fa, fb).map(|hit| hit.time);
                    assert!(
                        time.map(|t| t.map(f64::to_bits)) == reference.map(|t| t.map(f64::to_bits)),
                        "overlap_interval {time:?} != intersect(..).time {reference:?} for {ia:?} {fa:?} / {ib:?} {fb:?}"
                    );
                    time.map(|time| {
                        let aabb = sa.intersection(sb).unwrap_or_else(|| {
                            panic!("{ia:?} / {ib:?} intersect, but their swept boxes do not overlap")
                        });
                        (aabb, time)
                    })
                }
                ContactDetail::Candidates => sa.intersection(sb).map(|aabb| (aabb, [0.0, 1.0])),
            };
            if let Some((aabb, time)) = found {
                let (x, y) = if ia < ib { (*ia, *ib) } else { (*ib, *ia) };
                out.push(Contact { a: x, b: y, aabb, time });
            }
        }
    }
    out.sort_by_key(|c| (c.a, c.b));
    out
}

/// Pairs of `subset` (sorted by pair) missing from `superset` (sorted by
/// pair), at most `shown` of them, and how many in all.
pub fn missing_pairs<const D: usize>(
    subset: &[Contact<D>],
    superset: &[Contact<D>],
    shown: usize,
) -> (usize, Vec<(FrameId, FrameId)>) {
    let mut missing = Vec::new();
    let mut count = 0;
    for c in subset {
        if superset.binary_search_by_key(&(c.a, c.b), |s| (s.a, s.b)).is_err() {
            count += 1;
            if missing.len() < shown {
                missing.push((c.a, c.b));
            }
        }
    }
    (count, missing)
}

/// Bit pattern of a contact (for exact comparison, `-0.0 != 0.0`).
pub fn contact_bits<const D: usize>(c: &Contact<D>) -> (FrameId, FrameId, Vec<u64>) {
    let mut bits: Vec<u64> = c.aabb.min.iter().chain(&c.aabb.max).map(|x| x.to_bits()).collect();
    bits.extend(c.time.map(f64::to_bits));
    (c.a, c.b, bits)
}

/// The contacts sorted by pair.
pub fn sorted<const D: usize>(contacts: &[Contact<D>]) -> Vec<Contact<D>> {
    let mut v = contacts.to_vec();
    v.sort_by_key(|c| (c.a, c.b));
    v
}

/// Compares two contact lists sorted by pair, bit for bit; `None` when
/// equal, otherwise a description of up to `shown` differences of each kind.
pub fn diff_contacts<const D: usize>(expected: &[Contact<D>], got: &[Contact<D>], shown: usize) -> Option<String> {
    let mut missing = Vec::new();
    let mut extra = Vec::new();
    let mut differ = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < expected.len() || j < got.len() {
        let e = expected.get(i).map(|c| (c.a, c.b));
        let g = got.get(j).map(|c| (c.a, c.b));
        match (e, g) {
            (Some(x), Some(y)) if x == y => {
                if contact_bits(&expected[i]) != contact_bits(&got[j]) {
                    differ.push((expected[i], got[j]));
                }
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                missing.push(expected[i]);
                i += 1;
            }
            (Some(_), None) => {
                missing.push(expected[i]);
                i += 1;
            }
            _ => {
                extra.push(got[j]);
                j += 1;
            }
        }
    }
    if missing.is_empty() && extra.is_empty() && differ.is_empty() {
        return None;
    }
    let mut s = format!(
        "{} expected, {} reported: {} missing, {} extra, {} with other box or time\n",
        expected.len(),
        got.len(),
        missing.len(),
        extra.len(),
        differ.len()
    );
    for c in missing.iter().take(shown) {
        let _ = writeln!(s, "  missing {c:?}");
    }
    for c in extra.iter().take(shown) {
        let _ = writeln!(s, "  extra   {c:?}");
    }
    for (e, g) in differ.iter().take(shown) {
        let _ = writeln!(s, "  differ  expected {e:?}\n          reported {g:?}");
    }
    Some(s)
}

/// Body pairs of a contact list, sorted, each once.
pub fn body_pairs_of<const D: usize>(contacts: &[Contact<D>]) -> Vec<(BodyHandle, BodyHandle)> {
    let mut v: Vec<_> = contacts.iter().map(|c| (c.a.body, c.b.body)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Started / ended events between the body pairs of two consecutive steps;
/// an ended pair is reported only if both bodies are still `live`.
pub fn expected_events(
    previous: &[(BodyHandle, BodyHandle)],
    now: &[(BodyHandle, BodyHandle)],
    live: impl Fn(BodyHandle) -> bool,
) -> Vec<ContactEvent> {
    let before: HashSet<_> = previous.iter().copied().collect();
    let after: HashSet<_> = now.iter().copied().collect();
    let mut events: Vec<ContactEvent> = now
        .iter()
        .filter(|p| !before.contains(p))
        .map(|&(a, b)| ContactEvent::Started(a, b))
        .chain(
            previous
                .iter()
                .filter(|p| !after.contains(p) && live(p.0) && live(p.1))
                .map(|&(a, b)| ContactEvent::Ended(a, b)),
        )
        .collect();
    events.sort_unstable();
    events
}

/// Statistics of checked steps.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepStats {
    pub steps: usize,
    pub frames: usize,
    pub contacts: usize,
    pub moving_contacts: usize,
}

/// Runs one `world.step(dt)` and checks it against the brute force in the
/// world's `config().detail`: the contact set (pairs, boxes and times bit
/// for bit), `a < b`, no duplicate, `contacts()`, `body_pairs()`,
/// `events()`, and the advance of every moving body (pose and frames
/// translated by exactly `velocity · dt`). In `Candidates` mode, also that
/// every pair of the `ExactBox` brute force is a candidate. Returns a
/// description of the first failure.
///
/// Runaway bodies (see [`runaway`]): with `Runaway::Refuse` the step must
/// fail with the first one's error (in handle order) and change nothing,
/// and this returns `Ok` then; with `Runaway::Park` they stay in place with
/// zero velocity and `parked()` lists them.
pub fn check_step<const D: usize>(world: &mut World<D>, dt: f64, stats: &mut StepStats) -> Result<(), String> {
    let mut before = view(world);
    let runaways: Vec<(BodyHandle, Runaway)> =
        before.iter().filter_map(|b| runaway(b, dt).map(|r| (b.handle, r))).collect();
    let refuse = dt.is_finite() && dt >= 0.0 && world.config().runaway == fmbgrid::Runaway::Refuse;
    if refuse && let Some(&(h, why)) = runaways.iter().min_by_key(|(h, _)| *h) {
        let want = match why {
            Runaway::BadNumber(value) => WorldError::BadDisplacement { body: h, value },
            Runaway::OutOfRange => WorldError::OutOfRange(h),
        };
        let unchanged = snapshot(world);
        let got = world.step(dt).map(|c| c.len());
        return match got {
            Err(e) if format!("{e:?}") == format!("{want:?}") && snapshot(world) == unchanged => Ok(()),
            Err(e) => Err(format!("step({dt}) refused with {e:?} (or changed the world), expected {want:?}")),
            Ok(_) => Err(format!("step({dt}) accepted, expected {want:?}")),
        };
    }
    for b in &mut before {
        if runaways.iter().any(|(h, _)| *h == b.handle) {
            b.velocity = [0.0; D];
        }
    }
    let detail = world.config().detail;
    let expected = brute_contacts(&before, dt, detail);
    // The contacts by the definition, for the superset check of `Candidates`.
    let exact = (detail == ContactDetail::Candidates).then(|| brute_contacts(&before, dt, ContactDetail::ExactBox));
    let previous = world.body_pairs().to_vec();
    let poses: Vec<Pose<D>> = before.iter().map(|b| world.body(b.handle).unwrap().pose()).collect();
    let got = world.step(dt).map_err(|e| format!("step({dt}) refused: {e}"))?.to_vec();
    let mut parked: Vec<BodyHandle> = runaways.iter().map(|(h, _)| *h).collect();
    parked.sort();
    if world.parked() != parked.as_slice() {
        return Err(format!("parked() {:?}, expected {parked:?}", world.parked()));
    }
    if let Some(h) = parked.iter().find(|h| world.body(**h).map(|b| b.velocity()) != Ok([0.0; D])) {
        return Err(format!("parked body {h:?} kept its velocity"));
    }
    if world.contacts().len() != got.len() {
        return Err("contacts() differs from what step returned".into());
    }
    for (x, y) in got.iter().zip(world.contacts()) {
        if contact_bits(x) != contact_bits(y) {
            return Err("contacts() differs from what step returned".into());
        }
    }
    if let Some(c) = got.iter().find(|c| c.a >= c.b) {
        return Err(format!("contact with a >= b: {c:?}"));
    }
    let got_sorted = sorted(&got);
    if let Some(w) = got_sorted.windows(2).find(|w| (w[0].a, w[0].b) == (w[1].a, w[1].b)) {
        return Err(format!("pair reported twice: {:?} / {:?}", w[0], w[1]));
    }
    if let Some(exact) = &exact {
        // Checked on what the world reported, not on the oracle's candidates.
        let (count, missing) = missing_pairs(exact, &got_sorted, 8);
        if count > 0 {
            return Err(format!("{count} intersecting pairs are not among the candidates, e.g. {missing:?}"));
        }
    }
    if let Some(d) = diff_contacts(&expected, &got_sorted, 8) {
        return Err(format!("contacts differ from brute force (dt = {dt}):\n{d}"));
    }
    let pairs = body_pairs_of(&expected);
    if world.body_pairs() != pairs.as_slice() {
        return Err(format!("body_pairs() {:?} != expected {:?}", world.body_pairs(), pairs));
    }
    let live: HashSet<BodyHandle> = before.iter().map(|b| b.handle).collect();
    let events = expected_events(&previous, &pairs, |h| live.contains(&h));
    if world.events() != events.as_slice() {
        return Err(format!("events() {:?} != expected {:?}", world.events(), events));
    }
    for (b, pose) in before.iter().zip(&poses) {
        let d = if b.fixed { [0.0; D] } else { displacement(b.velocity, dt) };
        let now = world.body(b.handle).map_err(|e| format!("body lost by a step: {e}"))?;
        // Exact values (`==`: a zero displacement may or may not turn -0.0 into 0.0).
        let want = add(pose.translation(), d);
        if now.pose().translation() != want || now.pose().linear() != pose.linear() {
            return Err(format!("body {:?} at {:?} after the step, expected {:?}", b.handle, now.pose(), want));
        }
        for (k, f) in b.frames.iter().enumerate() {
            let placed = world.frame(FrameId { body: b.handle, index: k as u32 }).unwrap();
            let want = add(f.origin(), d);
            if placed.origin() != want || placed.components() != f.components() {
                return Err(format!("frame {k} of {:?} at {:?} after the step, expected {want:?}", b.handle, placed));
            }
        }
    }
    stats.steps += 1;
    stats.frames += before.iter().map(|b| b.frames.len()).sum::<usize>();
    stats.contacts += got.len();
    stats.moving_contacts += got.iter().filter(|c| c.time != [0.0, 1.0]).count();
    Ok(())
}

/// Random edits between steps: removes, inserts (from `fresh`), re-poses
/// (fixed bodies included) and new velocities, each on a few percent of the
/// bodies. Returns the number of edits.
pub fn random_edits<const D: usize>(
    world: &mut World<D>,
    rng: &mut TestRng,
    fresh: &mut impl FnMut(&mut TestRng) -> BodySpec<D>,
    rate: f64,
) -> usize {
    let handles: Vec<(BodyHandle, bool)> = world.bodies().map(|(h, b)| (h, b.motion() == Motion::Fixed)).collect();
    let mut edits = 0;
    for (h, fixed) in handles {
        let r: f64 = rng.random();
        if r < rate {
            world.remove(h).expect("live handle");
        } else if r < 2.0 * rate {
            let b = world.body(h).unwrap();
            let t = add(b.pose().translation(), scale(random_unit(rng), rng.random_range(0.0..2.0)));
            let pose = Pose::new(random_rotation(rng), t).unwrap();
            world.set_pose(h, pose).expect("rotated frames stay valid");
        } else if r < 4.0 * rate && !fixed {
            let v = world.body(h).unwrap().velocity();
            let v = if rng.random_bool(0.2) { [0.0; D] } else { scale(v, -rng.random_range(0.5..2.0)) };
            world.set_velocity(h, v).expect("finite velocity");
        } else {
            continue;
        }
        edits += 1;
    }
    let inserts = (world.len() as f64 * rate).ceil() as usize;
    for _ in 0..inserts {
        let b = fresh(rng);
        world.insert(b.body()).expect("generated bodies are valid");
        edits += 1;
    }
    edits
}

/// Re-poses a fraction `rate` of the bodies (fixed ones included) and
/// nothing else: no insertion or removal that would force the broad phase
/// to rebuild anyway.
pub fn random_reposes<const D: usize>(world: &mut World<D>, rng: &mut TestRng, rate: f64) -> usize {
    let handles: Vec<BodyHandle> = world.bodies().map(|(h, _)| h).collect();
    let mut edits = 0;
    for h in handles {
        if rng.random_bool(rate) {
            let t =
                add(world.body(h).unwrap().pose().translation(), scale(random_unit(rng), rng.random_range(0.0..2.0)));
            world.set_pose(h, Pose::new(random_rotation(rng), t).unwrap()).expect("rotated frames stay valid");
            edits += 1;
        }
    }
    edits
}

/// Everything observable about a world, as text with every number written
/// exactly (Rust's `Debug` for `f64` round-trips): the cell size; bodies in slot order with
/// handles, poses, velocities, filters, frames and placed frames; the last
/// contacts, body pairs and events.
pub fn snapshot<const D: usize>(world: &World<D>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "len {} empty {} cell {:?}", world.len(), world.is_empty(), world.cell_size());
    for (h, b) in world.bodies() {
        let _ = writeln!(s, "{h:?} {b:?}");
        for index in 0..b.frames().len() as u32 {
            let _ = writeln!(s, "  placed {:?}", world.frame(FrameId { body: h, index }));
        }
    }
    let _ = writeln!(s, "contacts {:?}", world.contacts());
    let _ = writeln!(s, "pairs {:?}", world.body_pairs());
    let _ = writeln!(s, "events {:?}", world.events());
    s
}

/// The kind of a frame as a short label.
pub fn kind_label(k: FrameKind) -> &'static str {
    match k {
        FrameKind::Cuboid => "cuboid",
        FrameKind::Tetrahedron => "tetra",
    }
}

// ---------------------------------------------------------------------------
// Turning bodies.
// ---------------------------------------------------------------------------

/// Angular velocities and spins in code generic over the dimension, as
/// the 3D rotation vector (2D: its last coordinate).
pub trait Turn<const D: usize> {
    fn turn(world: &mut World<D>, h: BodyHandle, w: [f64; 3]) -> Result<(), fmbgrid::WorldError>;
    fn spin(pivot: [f64; D], rate: [f64; 3]) -> fmbgrid::Spin<D>;
}

impl Turn<2> for World<2> {
    fn turn(world: &mut World<2>, h: BodyHandle, w: [f64; 3]) -> Result<(), fmbgrid::WorldError> {
        world.set_angular_velocity(h, w[2])
    }
    fn spin(pivot: [f64; 2], rate: [f64; 3]) -> fmbgrid::Spin<2> {
        fmbgrid::Spin::<2>::new(pivot, rate[2]).expect("valid spin")
    }
}

impl Turn<3> for World<3> {
    fn turn(world: &mut World<3>, h: BodyHandle, w: [f64; 3]) -> Result<(), fmbgrid::WorldError> {
        world.set_angular_velocity(h, w)
    }
    fn spin(pivot: [f64; 3], rate: [f64; 3]) -> fmbgrid::Spin<3> {
        fmbgrid::Spin::<3>::new(pivot, rate).expect("valid spin")
    }
}

/// The contact of two frames (moving ones carrying their displacement)
/// as a world with turning bodies decides it: `intersect_spinning` with
/// the world's default tolerance when either turns (`spins`), else
/// `intersect`.
pub fn turning_pair<const D: usize>(
    f: &Frame<D>,
    sf: Option<fmbgrid::Spin<D>>,
    g: &Frame<D>,
    sg: Option<fmbgrid::Spin<D>>,
) -> Option<(fmbgrid::Aabb<D>, [f64; 2])>
where
    World<D>: Turn<D>,
{
    if sf.is_none() && sg.is_none() {
        return fmbgrid::intersect(f, g).map(|c| (c.aabb, c.time));
    }
    let still = |x: &Frame<D>| <World<D> as Turn<D>>::spin(x.origin(), [0.0; 3]);
    // The larger frame's own box (at rest, not swept).
    let size = |x: &Frame<D>| {
        let (lo, hi) = x.vertices().fold(([f64::INFINITY; D], [f64::NEG_INFINITY; D]), |(lo, hi), v| {
            (std::array::from_fn(|k| lo[k].min(v[k])), std::array::from_fn(|k| hi[k].max(v[k])))
        });
        (0..D).map(|k| hi[k] - lo[k]).fold(0.0_f64, f64::max)
    };
    let tol = fmbgrid::SPIN_TOLERANCE * size(f).max(size(g));
    let (sf, sg) = (sf.unwrap_or_else(|| still(f)), sg.unwrap_or_else(|| still(g)));
    fmbgrid::intersect_spinning(f, &sf, g, &sg, tol).expect("valid tolerance").map(|c| (c.aabb, c.time))
}
