//! `World`: bodies of frames, stepped in time, with bulk calls over arrays
//! of handles.
//!
//! A handle on the Python side is a `uint64`, `generation << 32 | index`,
//! the same two numbers as the Rust `BodyHandle` (its `Display` is
//! `#index.generation`). The wrapper keeps, per slot index, the live
//! body's `BodyHandle` and whether it is moving (a body's motion never
//! changes), so that turning a Python handle into a Rust one is an array
//! read, and so is the check that a body may be given a velocity; a Rust
//! handle becomes a Python one with no read at all.
//!
//! Every bulk call checks all of its input first (shapes, numbers, handles,
//! frames placed at their poses) and changes the world only once all of it
//! passed: a refused call leaves the world as it was.

use std::time::Instant;

use fmbgrid::{
    Aabb, Body, BodyHandle, ContactDetail, ContactEvent, DebugKind, Frame, FrameId, Motion, Pose, Runaway, StepRoom,
    World as RWorld, WorldConfig, WorldError, WorldSnapshot,
};
use numpy::PyReadonlyArrayDyn;
use numpy::ndarray::ArrayViewD;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::frames::{Frames, Set};
use crate::{Matrices, Vectors, array, check_shape, fixed, matrix, row, transposed, value_error, world_error};
use numpy::ndarray::{Ix2, Ix3};

/// A Python handle.
fn pack(h: BodyHandle) -> u64 {
    (u64::from(h.generation()) << 32) | u64::from(h.index())
}

/// A live body as the handle table knows it.
#[derive(Clone, Copy)]
struct Known {
    handle: BodyHandle,
    moving: bool,
}

/// One world of one dimension and its handle table.
pub(crate) struct Inner<const D: usize> {
    world: RWorld<D>,
    /// Per slot index: the live body's handle and motion.
    slots: Vec<Option<Known>>,
    /// Insertions and removals of bodies so far: the table's version.
    edits: u64,
    /// The handles of the last ids `set_poses` or `set_velocities` took
    /// (`hs_ids`), when the table was at version `hs_at`; and the buffer of
    /// `World::set_poses`' input without rotations (see [`poses_of`]).
    /// Kept between calls: a loop setting every body's pose each step
    /// allocates nothing and reads the table once.
    hs: Vec<BodyHandle>,
    hs_ids: Vec<u64>,
    hs_at: Option<u64>,
    poses: Vec<(BodyHandle, Pose<D>)>,
}

fn handle_error(k: usize, id: u64) -> PyErr {
    value_error(format!("{}: stale or foreign body handle: no live body of this world has it", row_of(k, id)))
}

/// How an error names the body of row `k` of the caller's arrays: the row
/// and the handle (`"row 2 (body 6)"`), one way in every call.
fn row_of(k: usize, id: u64) -> String {
    format!("row {k} (body {id})")
}

/// The error of row `k` (body handle `h`) refused with `e`.
/// What to do about a matrix refused as a rotation that the caller meant
/// as an affine map.
fn affine_hint(e: &WorldError) -> &'static str {
    if matches!(e, WorldError::NotARotation { .. }) { "; pass linears= for an affine map" } else { "" }
}

/// The argument the package's matrices came from: `rotations` (checked to
/// be rotations) or `linears` (any affine map).
fn matrices_name(rigid: bool) -> &'static str {
    if rigid { "rotations" } else { "linears" }
}

fn row_error(k: usize, h: BodyHandle, e: impl std::fmt::Display) -> PyErr {
    value_error(format!("{}: {e}", row_of(k, pack(h))))
}

/// A fixed body of row `k` given a velocity.
fn fixed_error(k: usize, h: BodyHandle) -> PyErr {
    value_error(format!("{}: the body is fixed: it cannot be given a velocity", row_of(k, pack(h))))
}

fn oom(what: &str) -> PyErr {
    pyo3::exceptions::PyMemoryError::new_err(format!("not enough memory for {what}"))
}

/// An empty vector with room for `n` values, reserved fallibly: a result
/// whose size the scene decides is a `MemoryError`, never an abort.
fn reserved<T>(what: &str, n: usize) -> PyResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| oom(what))?;
    Ok(v)
}

/// The arrays `World.step` hands back, as rows: reserved while the step is
/// prepared ([`World::step_with_room`](fmbgrid::World::step_with_room)),
/// filled once it is made.
struct StepOut<const D: usize> {
    bodies: Vec<[u64; 2]>,
    frames: Vec<[u32; 2]>,
    boxes: Vec<[[f64; D]; 2]>,
    times: Vec<[f64; 2]>,
    pairs: Vec<[u64; 2]>,
    started: Vec<[u64; 2]>,
    ended: Vec<[u64; 2]>,
}

impl<const D: usize> Default for StepOut<D> {
    fn default() -> Self {
        let (bodies, frames, boxes, times) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        StepOut { bodies, frames, boxes, times, pairs: Vec::new(), started: Vec::new(), ended: Vec::new() }
    }
}

impl<const D: usize> StepOut<D> {
    /// Room for a step's results of at most `room`'s counts; the bytes
    /// refused on low memory.
    fn reserve(&mut self, room: StepRoom) -> Result<(), usize> {
        fn exact<T>(v: &mut Vec<T>, n: usize) -> Result<(), usize> {
            v.try_reserve_exact(n).map_err(|_| n.saturating_mul(size_of::<T>()))
        }
        exact(&mut self.bodies, room.contacts)?;
        exact(&mut self.frames, room.contacts)?;
        exact(&mut self.boxes, room.contacts)?;
        exact(&mut self.times, room.contacts)?;
        exact(&mut self.pairs, room.body_pairs)?;
        exact(&mut self.started, room.events)?;
        exact(&mut self.ended, room.events)
    }

    /// The seven arrays of `fmbgrid.StepResult`.
    fn arrays(self, py: Python<'_>) -> Arrays<'_> {
        let (m, p, s, e) = (self.bodies.len(), self.pairs.len(), self.started.len(), self.ended.len());
        vec![
            array(py, &[m, 2], self.bodies.into_flattened()),
            array(py, &[m, 2], self.frames.into_flattened()),
            array(py, &[m, 2, D], self.boxes.into_flattened().into_flattened()),
            array(py, &[m, 2], self.times.into_flattened()),
            array(py, &[p, 2], self.pairs.into_flattened()),
            array(py, &[s, 2], self.started.into_flattened()),
            array(py, &[e, 2], self.ended.into_flattened()),
        ]
    }
}

/// `items` appended to `out`, room made fallibly: hits whose count the
/// scene decides are a `MemoryError`, never an abort.
fn append<T>(out: &mut Vec<T>, what: &str, items: impl ExactSizeIterator<Item = T>) -> PyResult<()> {
    out.try_reserve(items.len()).map_err(|_| oom(what))?;
    out.extend(items);
    Ok(())
}

/// `f` of each item, in a vector reserved fallibly ([`reserved`]).
fn rows<T, R>(what: &str, items: &[T], f: impl FnMut(&T) -> R) -> PyResult<Vec<R>> {
    let mut v = reserved(what, items.len())?;
    v.extend(items.iter().map(f));
    Ok(v)
}

impl<const D: usize> Inner<D> {
    fn new(world: RWorld<D>) -> Self {
        let (hs, hs_ids, poses) = (Vec::new(), Vec::new(), Vec::new());
        let mut inner = Inner { world, slots: Vec::new(), edits: 0, hs, hs_ids, hs_at: None, poses };
        inner.rebuild_table();
        inner
    }

    fn rebuild_table(&mut self) {
        self.edits += 1;
        self.slots.clear();
        let live: Vec<BodyHandle> = self.world.bodies().map(|(h, _)| h).collect();
        for h in live {
            self.remember(h);
        }
    }

    fn remember(&mut self, h: BodyHandle) {
        self.edits += 1;
        let i = h.index() as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        let moving = self.world.body(h).is_ok_and(|b| b.motion() == Motion::Moving);
        self.slots[i] = Some(Known { handle: h, moving });
    }

    /// The Python handle of a Rust one (no read of the table: hot in the
    /// step's arrays, after a step that left the table out of cache).
    fn id(&self, h: BodyHandle) -> u64 {
        pack(h)
    }

    fn known(&self, k: usize, id: u64) -> PyResult<Known> {
        let (index, generation) = ((id & 0xffff_ffff) as usize, (id >> 32) as u32);
        match self.slots.get(index).copied().flatten() {
            Some(s) if s.handle.generation() == generation => Ok(s),
            _ => Err(handle_error(k, id)),
        }
    }

    fn handle(&self, k: usize, id: u64) -> PyResult<BodyHandle> {
        self.known(k, id).map(|s| s.handle)
    }

    fn handles(&self, ids: &ArrayViewD<u64>) -> PyResult<Vec<BodyHandle>> {
        let mut hs = Vec::new();
        self.handles_into(ids, &mut hs)?;
        Ok(hs)
    }

    /// [`Inner::handles`] into a buffer (cleared first).
    fn handles_into(&self, ids: &ArrayViewD<u64>, hs: &mut Vec<BodyHandle>) -> PyResult<()> {
        let n = check_shape("handles", ids, &[None])?;
        hs.clear();
        hs.try_reserve(n).map_err(|_| oom("the handles"))?;
        for (k, &id) in ids.iter().enumerate() {
            hs.push(self.handle(k, id)?);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        frames: &[Frame<D>],
        bodies: Option<&ArrayViewD<i64>>,
        moving: &ArrayViewD<bool>,
        velocities: Option<&ArrayViewD<f64>>,
        translations: Option<&ArrayViewD<f64>>,
        linears: Option<&ArrayViewD<f64>>,
        rigid: bool,
        user_data: Option<&ArrayViewD<u64>>,
        filters: Option<&ArrayViewD<u32>>,
    ) -> PyResult<Vec<u64>> {
        let n = frames.len();
        // Frames grouped by body, in order within each body.
        // Body k's frames: `order[first[k]..first[k + 1]]`.
        let (count, order, first): (usize, Vec<usize>, Vec<usize>) = match bodies {
            None => (n, (0..n).collect(), (0..=n).collect()),
            Some(b) => {
                check_shape("bodies", b, &[Some(n)])?;
                let mut count = 0usize;
                for i in 0..n {
                    let k = b[[i]];
                    if k < 0 || k as usize >= n {
                        return Err(value_error(format!(
                            "bodies[{i}] = {k}: body indices must be in 0..{n} (0..number of frames)"
                        )));
                    }
                    count = count.max(k as usize + 1);
                }
                let mut starts = vec![0usize; count + 1];
                for i in 0..n {
                    starts[b[[i]] as usize + 1] += 1;
                }
                if let Some(k) = (0..count).find(|&k| starts[k + 1] == 0) {
                    return Err(value_error(format!("row {k}: a body needs at least one frame (no frame has it)")));
                }
                for k in 0..count {
                    starts[k + 1] += starts[k];
                }
                let mut order = vec![0usize; n];
                let mut next = starts.clone();
                for i in 0..n {
                    let k = b[[i]] as usize;
                    order[next[k]] = i;
                    next[k] += 1;
                }
                (count, order, starts)
            }
        };
        let per = |shape: &[usize]| -> Vec<Option<usize>> {
            let mut s = vec![Some(count)];
            s.extend(shape.iter().map(|&n| Some(n)));
            s
        };
        let all_moving = match moving.shape() {
            [] => Some(moving[[]]),
            _ => {
                check_shape("moving", moving, &per(&[]))?;
                None
            }
        };
        if let Some(v) = velocities {
            check_shape("velocities", v, &per(&[D]))?;
        }
        if let Some(t) = translations {
            check_shape("translations", t, &per(&[D]))?;
        }
        if let Some(l) = linears {
            check_shape(matrices_name(rigid), l, &per(&[D, D]))?;
        }
        if let Some(u) = user_data {
            check_shape("user_data", u, &per(&[]))?;
        }
        if let Some(f) = filters {
            check_shape("filters", f, &per(&[2]))?;
        }
        let velocities = velocities.map(fixed::<Ix2>).transpose()?;
        let velocities = velocities.as_ref();
        let translations = translations.map(fixed::<Ix2>).transpose()?;
        let translations = translations.as_ref();
        let linears = linears.map(fixed::<Ix3>).transpose()?;
        let linears = linears.as_ref();
        let mut built = Vec::new();
        built.try_reserve_exact(count).map_err(|_| oom("the bodies"))?;
        let (mut fixed_frames, mut fixed_bodies) = (0usize, 0usize);
        for k in 0..count {
            let is_moving = all_moving.unwrap_or_else(|| moving[[k]]);
            let list: Vec<Frame<D>> = order[first[k]..first[k + 1]].iter().map(|&i| frames[i]).collect();
            let nframes = list.len();
            let mut body = if is_moving { Body::moving(list) } else { Body::fixed(list) };
            let bad = |e: WorldError| value_error(format!("row {k}: {e}{}", affine_hint(&e)));
            if translations.is_some() || linears.is_some() {
                let t = translations.map_or([0.0; D], |t| row(t, k));
                let pose = match linears {
                    Some(l) if rigid => Pose::from_rotation(matrix(l, k), t),
                    Some(l) => Pose::new(matrix(l, k), t),
                    None => Pose::from_translation(t),
                }
                .map_err(bad)?;
                body = body.with_pose(pose);
            }
            if let Some(v) = velocities {
                let v: [f64; D] = row(v, k);
                check_vector("velocity", &v).map_err(bad)?;
                if !is_moving && v != [0.0; D] {
                    return Err(bad(WorldError::FixedVelocity));
                }
                body = body.with_velocity(v);
            }
            if let Some(u) = user_data {
                body = body.with_user_data(u[[k]]);
            }
            if let Some(f) = filters {
                body = body.with_collision_filter(f[[k, 0]], f[[k, 1]]);
            }
            // The frames placed at the pose, as `World::insert` places them.
            let pose = body.pose();
            for (j, f) in body.frames().iter().enumerate() {
                pose.transform_frame(f).map_err(|e| match e {
                    WorldError::Frame { source, .. } => {
                        value_error(format!("row {k}: frame {j} of the body: {source}"))
                    }
                    e => bad(e),
                })?;
            }
            if !is_moving {
                fixed_frames += nframes;
                fixed_bodies += 1;
            }
            built.push(body);
        }
        self.world.try_reserve(Motion::Fixed, fixed_bodies, fixed_frames).map_err(world_error)?;
        self.world.try_reserve(Motion::Moving, count - fixed_bodies, n - fixed_frames).map_err(world_error)?;
        let mut ids = Vec::new();
        ids.try_reserve_exact(count).map_err(|_| oom("the handles"))?;
        let mut inserted = Vec::with_capacity(count);
        for (k, body) in built.into_iter().enumerate() {
            match self.world.insert(body) {
                Ok(h) => {
                    self.remember(h);
                    inserted.push(h);
                    ids.push(self.id(h));
                }
                Err(e) => {
                    // Not reached (every check of `insert` was made above);
                    // if it were, the bodies of this call come out again.
                    for h in inserted {
                        let _ = self.world.remove(h);
                        self.forget(h);
                    }
                    return Err(value_error(format!("row {k}: {e}")));
                }
            }
        }
        Ok(ids)
    }

    fn remove(&mut self, ids: &ArrayViewD<u64>) -> PyResult<()> {
        let hs = self.handles(ids)?;
        let mut seen = hs.clone();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            return Err(value_error(format!("body {} is listed twice", self.id(w[0]))));
        }
        for h in hs {
            self.world.remove(h).map_err(world_error)?;
            self.forget(h);
        }
        Ok(())
    }

    /// Body `h` was removed.
    fn forget(&mut self, h: BodyHandle) {
        self.edits += 1;
        self.slots[h.index() as usize] = None;
    }

    /// The handles of `ids` (see [`Inner::handles`]), as the last call
    /// found them when they are the same ids, bit for bit, and no body was
    /// inserted or removed since: a loop passing the same array each step
    /// compares it and reads no table.
    fn kept_handles(&mut self, ids: &ArrayViewD<u64>) -> PyResult<Vec<BodyHandle>> {
        let mut hs = std::mem::take(&mut self.hs);
        let same = |s: &[u64]| s == self.hs_ids.as_slice();
        if self.hs_at == Some(self.edits) && ids.as_slice().is_some_and(same) {
            return Ok(hs);
        }
        self.hs_at = None;
        self.handles_into(ids, &mut hs)?;
        self.hs_ids.clear();
        if self.hs_ids.try_reserve(hs.len()).is_ok() {
            self.hs_ids.extend(ids.iter());
            self.hs_at = Some(self.edits);
        }
        Ok(hs)
    }

    /// Sets velocities, all or none: every handle, number and motion is
    /// checked first (the motion in the handle table: the world's bodies are
    /// not read twice), then `World::set_velocity` sets them.
    fn set_velocities(&mut self, ids: &ArrayViewD<u64>, v: &ArrayViewD<f64>) -> PyResult<()> {
        let hs = self.kept_handles(ids)?;
        let result = (|| {
            check_shape("velocities", v, &[Some(hs.len()), Some(D)])?;
            let v = Vectors::<D>::new(v)?;
            for (k, &h) in hs.iter().enumerate() {
                check_vector("velocity", &v.get(k)).map_err(|e| row_error(k, h, e))?;
                // Live: looked up just above.
                if !self.slots[h.index() as usize].is_some_and(|s| s.moving) {
                    return Err(fixed_error(k, h));
                }
            }
            for (k, &h) in hs.iter().enumerate() {
                self.world.set_velocity(h, v.get(k)).map_err(world_error)?;
            }
            Ok(())
        })();
        self.hs = hs;
        result
    }

    /// Moves bodies to new poses, all or none, through
    /// `World::set_poses_with` (rows read straight from the arrays; with no
    /// rotations, `World::set_poses` of poses keeping each body's own
    /// rotation, see [`poses_of`]), which checks every handle and places
    /// every frame before anything changes, takes a row equal to the body's
    /// pose, bit for bit, as it is, and leaves alone a moving body whose
    /// pose and frames come out unchanged.
    fn set_poses(
        &mut self,
        ids: &ArrayViewD<u64>,
        t: &ArrayViewD<f64>,
        l: Option<&ArrayViewD<f64>>,
        rigid: bool,
    ) -> PyResult<()> {
        let hs = self.kept_handles(ids)?;
        let result = (|| {
            check_shape("translations", t, &[Some(hs.len()), Some(D)])?;
            let t = Vectors::<D>::new(t)?;
            match l {
                Some(l) => {
                    check_shape(matrices_name(rigid), l, &[Some(hs.len()), Some(D), Some(D)])?;
                    let l = Matrices::<D>::new(l)?;
                    // Rows straight from the arrays: the world compares
                    // each with its body's pose and checks only the others.
                    // The layout the package passes (rotations transposed,
                    // translations packed) is read without a match a row.
                    let row = |k: usize| (l.get(k), t.get(k));
                    let set = match (&l, &t) {
                        (Matrices::Transposed(m), Vectors::Packed(v)) => {
                            self.set_rows(&hs, |k| (transposed(&m[k]), v[k]), rigid)
                        }
                        _ => self.set_rows(&hs, row, rigid),
                    };
                    set.map_err(|e| self.pose_error(&hs, row, rigid, e))
                }
                None => {
                    let mut poses = std::mem::take(&mut self.poses);
                    let result = poses_of(&self.world, &hs, &t, &mut poses).and_then(|()| {
                        let row = |k: usize| (poses[k].1.linear(), poses[k].1.translation());
                        self.world.set_poses(&poses).map_err(|e| self.pose_error(&hs, row, false, e))
                    });
                    self.poses = poses;
                    result
                }
            }
        })();
        self.hs = hs;
        result
    }

    /// The error of a refused `World::set_poses`, naming the row (body
    /// `hs[k]`, `row(k)`: linear map, translation): the first whose pose
    /// is refused, or the first body a frame of which its pose makes
    /// invalid (the world's error names the frame, not the row; found
    /// again on this cold path only).
    fn pose_error(
        &self,
        hs: &[BodyHandle],
        row: impl Fn(usize) -> ([[f64; D]; D], [f64; D]),
        rigid: bool,
        e: WorldError,
    ) -> PyErr {
        for (k, &h) in hs.iter().enumerate() {
            let (linear, translation) = row(k);
            let Ok(body) = self.world.body(h) else { return handle_error(k, self.id(h)) };
            // A row that is its body's pose, bit for bit, is taken as it is
            // (an affine pose of a body inserted with `linears` included).
            let same = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            let now = body.pose();
            let unchanged = same(now.translation().as_slice(), &translation)
                && (0..D).all(|i| same(now.linear()[i].as_slice(), &linear[i]));
            let checked = if rigid && !unchanged {
                Pose::from_rotation(linear, translation)
            } else {
                Pose::new(linear, translation)
            };
            let pose = match checked {
                Ok(pose) => pose,
                Err(e) => return row_error(k, h, format_args!("{e}{}", affine_hint(&e))),
            };
            for (j, f) in body.frames().iter().enumerate() {
                if let Err(WorldError::Frame { source, .. }) = pose.transform_frame(f) {
                    return row_error(k, h, format_args!("frame {j} of the body: {source}"));
                }
            }
        }
        world_error(e)
    }

    /// `World::set_poses_with`, or its rigid twin when the rows are
    /// rotations (`rotations=`, not `linears=`).
    fn set_rows(
        &mut self,
        hs: &[BodyHandle],
        row: impl Fn(usize) -> ([[f64; D]; D], [f64; D]),
        rigid: bool,
    ) -> Result<(), WorldError> {
        if rigid { self.world.set_rigid_poses_with(hs, row) } else { self.world.set_poses_with(hs, row) }
    }

    /// The last step's contacts, as the four arrays' data: each collected
    /// from the contacts as fixed-size rows (an exact allocation, made
    /// fallibly; no capacity check per value), then flattened in place.
    fn contact_data(&self) -> PyResult<ContactData> {
        let c = self.world.contacts();
        let bodies: Vec<[u64; 2]> = rows("the contacts", c, |x| [self.id(x.a.body), self.id(x.b.body)])?;
        let frames: Vec<[u32; 2]> = rows("the contacts", c, |x| [x.a.index, x.b.index])?;
        let boxes: Vec<[[f64; D]; 2]> = rows("the contacts", c, |x| [x.aabb.min, x.aabb.max])?;
        let times: Vec<[f64; 2]> = rows("the contacts", c, |x| x.time)?;
        Ok((
            c.len(),
            bodies.into_flattened(),
            frames.into_flattened(),
            boxes.into_flattened().into_flattened(),
            times.into_flattened(),
        ))
    }

    /// The `n` pairs of `pairs` as ids, flattened.
    fn pairs_of(&self, n: usize, pairs: impl Iterator<Item = (BodyHandle, BodyHandle)>) -> PyResult<Vec<u64>> {
        let mut v: Vec<[u64; 2]> = reserved("the body pairs", n)?;
        v.extend(pairs.map(|(a, b)| [self.id(a), self.id(b)]));
        Ok(v.into_flattened())
    }

    /// The last step's `Started` and `Ended` pairs as ids. The events are
    /// sorted, every `Started` before every `Ended` (`World::events`).
    fn events(&self) -> PyResult<(Vec<u64>, Vec<u64>)> {
        let ev = self.world.events();
        let (started, ended) = ev.split_at(ev.partition_point(|e| matches!(e, ContactEvent::Started(..))));
        let pair = |e: &ContactEvent| match *e {
            ContactEvent::Started(a, b) | ContactEvent::Ended(a, b) => (a, b),
        };
        Ok((
            self.pairs_of(started.len(), started.iter().map(pair))?,
            self.pairs_of(ended.len(), ended.iter().map(pair))?,
        ))
    }

    /// `(query (K,) int64, bodies (K,) uint64, frames (K,) uint32)` of hits
    /// found by query `k`.
    fn hits<'py>(&self, py: Python<'py>, found: &[(usize, FrameId)]) -> PyResult<Arrays<'py>> {
        let n = found.len();
        Ok(vec![
            array(py, &[n], rows("the hits", found, |&(k, _)| k as i64)?),
            array(py, &[n], rows("the hits", found, |&(_, id)| self.id(id.body))?),
            array(py, &[n], rows("the hits", found, |&(_, id)| id.index)?),
        ])
    }

    fn live(&self) -> Vec<u64> {
        self.world.bodies().map(|(h, _)| self.id(h)).collect()
    }

    /// The last step's arrays: `(pairs (M, 2), frames (M, 2), boxes (M, 2,
    /// D), intervals (M, 2), body_pairs (P, 2), started (S, 2), ended (E, 2))`.
    /// The last step's results into `out`, whose room
    /// [`StepOut::reserve`] made: nothing allocated, nothing can fail.
    fn fill(&self, out: &mut StepOut<D>) {
        let c = self.world.contacts();
        out.bodies.extend(c.iter().map(|x| [self.id(x.a.body), self.id(x.b.body)]));
        out.frames.extend(c.iter().map(|x| [x.a.index, x.b.index]));
        out.boxes.extend(c.iter().map(|x| [x.aabb.min, x.aabb.max]));
        out.times.extend(c.iter().map(|x| x.time));
        out.pairs.extend(self.world.body_pairs().iter().map(|&(a, b)| [self.id(a), self.id(b)]));
        for e in self.world.events() {
            match *e {
                ContactEvent::Started(a, b) => out.started.push([self.id(a), self.id(b)]),
                ContactEvent::Ended(a, b) => out.ended.push([self.id(a), self.id(b)]),
            }
        }
    }

    fn step_arrays<'py>(&self, py: Python<'py>) -> PyResult<Arrays<'py>> {
        let (m, bodies, frames, boxes, times) = self.contact_data()?;
        let pairs = self.world.body_pairs();
        let pairs = self.pairs_of(pairs.len(), pairs.iter().copied())?;
        let (started, ended) = self.events()?;
        Ok(vec![
            array(py, &[m, 2], bodies),
            array(py, &[m, 2], frames),
            array(py, &[m, 2, D], boxes),
            array(py, &[m, 2], times),
            array(py, &[pairs.len() / 2, 2], pairs),
            array(py, &[started.len() / 2, 2], started),
            array(py, &[ended.len() / 2, 2], ended),
        ])
    }

    /// Rows `0..m` of the last step's contacts, or the rows listed in
    /// `rows (K,)` (checked against `m`).
    fn contact_rows(&self, rows: Option<&ArrayViewD<i64>>) -> PyResult<Vec<usize>> {
        let m = self.world.contacts().len();
        match rows {
            None => Ok((0..m).collect()),
            Some(r) => {
                let k = check_shape("rows", r, &[None])?;
                (0..k)
                    .map(|i| match usize::try_from(r[[i]]) {
                        Ok(x) if x < m => Ok(x),
                        _ => Err(value_error(format!(
                            "rows[{i}] = {}: the last step has {m} contacts (rows 0..{m})",
                            r[[i]]
                        ))),
                    })
                    .collect()
            }
        }
    }
}

/// The poses of `set_poses` without rotations, row by row, into `poses`:
/// each body keeps its own rotation (read from the world) and takes the
/// row's translation; a body left where it is keeps its own pose, bit for
/// bit, without `Pose::new`'s checks.
fn poses_of<const D: usize>(
    world: &RWorld<D>,
    hs: &[BodyHandle],
    t: &Vectors<D>,
    poses: &mut Vec<(BodyHandle, Pose<D>)>,
) -> PyResult<()> {
    poses.clear();
    poses.try_reserve(hs.len()).map_err(|_| oom("the poses"))?;
    for (k, &h) in hs.iter().enumerate() {
        let now = world.body(h).map_err(world_error)?.pose();
        let translation = t.get(k);
        let pose = if now.translation().map(f64::to_bits) == translation.map(f64::to_bits) {
            now
        } else {
            Pose::new(now.linear(), translation).map_err(|e| row_error(k, h, e))?
        };
        poses.push((h, pose));
    }
    Ok(())
}

/// A vector a world accepts: finite, within ±1e15 (`World`'s own check).
fn check_vector<const D: usize>(what: &'static str, v: &[f64; D]) -> Result<(), WorldError> {
    match v.iter().find(|x| !x.is_finite() || x.abs() > fmbgrid::frame::MAX_COORDINATE) {
        Some(&value) => Err(WorldError::BadNumber { what, value }),
        None => Ok(()),
    }
}

pub(crate) enum Dim {
    Two(Box<Inner<2>>),
    Three(Box<Inner<3>>),
}

/// Bodies of frames and the broad phase over them (see `fmbgrid.World`).
#[pyclass(module = "fmbgrid._fmbgrid", name = "World")]
pub(crate) struct World {
    pub(crate) inner: Dim,
}

macro_rules! dispatch {
    ($self:expr, $w:ident, $D:ident => $body:expr) => {
        match &mut $self.inner {
            Dim::Two($w) => {
                #[allow(dead_code)]
                const $D: usize = 2;
                $body
            }
            Dim::Three($w) => {
                #[allow(dead_code)]
                const $D: usize = 3;
                $body
            }
        }
    };
}

fn parse_config(
    cell_size: Option<f64>,
    detail: &str,
    runaway: &str,
    spin_tolerance: Option<f64>,
) -> PyResult<WorldConfig> {
    let mut config = WorldConfig::default();
    if let Some(w) = cell_size {
        if !(w > 0.0 && w.is_finite()) {
            return Err(value_error(format!("cell_size {w} must be positive and finite")));
        }
        config = config.with_cell_size(w);
    }
    if let Some(w) = spin_tolerance {
        if !(w > 0.0 && w.is_finite()) {
            return Err(value_error(format!("spin_tolerance {w} must be positive and finite")));
        }
        config = config.with_spin_tolerance(w);
    }
    config.detail = detail_of(detail)?;
    config.runaway = match runaway {
        "park" => Runaway::Park,
        "refuse" => Runaway::Refuse,
        _ => return Err(value_error(format!("runaway {runaway:?}: expected 'park' or 'refuse'"))),
    };
    Ok(config)
}

/// The contact detail named `detail`.
pub(crate) fn detail_of(detail: &str) -> PyResult<ContactDetail> {
    match detail {
        "exact_box" => Ok(ContactDetail::ExactBox),
        "interval" => Ok(ContactDetail::Interval),
        "candidates" => Ok(ContactDetail::Candidates),
        _ => Err(value_error(format!("detail {detail:?}: expected 'exact_box', 'interval' or 'candidates'"))),
    }
}

impl World {
    pub(crate) fn from_2d(w: RWorld<2>) -> World {
        World { inner: Dim::Two(Box::new(Inner::new(w))) }
    }

    pub(crate) fn from_3d(w: RWorld<3>) -> World {
        World { inner: Dim::Three(Box::new(Inner::new(w))) }
    }
}

type Arrays<'py> = Vec<Bound<'py, PyAny>>;

/// The last step's contacts as flat arrays' data: `(M, bodies (2M),
/// frames (2M), boxes (2MD), intervals (2M))`.
type ContactData = (usize, Vec<u64>, Vec<u32>, Vec<f64>, Vec<f64>);

#[pymethods]
impl World {
    #[new]
    #[pyo3(signature = (dim=3, cell_size=None, detail="exact_box", runaway="park", spin_tolerance=None))]
    fn new(
        dim: usize,
        cell_size: Option<f64>,
        detail: &str,
        runaway: &str,
        spin_tolerance: Option<f64>,
    ) -> PyResult<World> {
        let config = parse_config(cell_size, detail, runaway, spin_tolerance)?;
        match dim {
            2 => Ok(World::from_2d(RWorld::new(config))),
            3 => Ok(World::from_3d(RWorld::new(config))),
            _ => Err(value_error(format!("dim must be 2 or 3, got {dim}"))),
        }
    }

    /// 2 or 3.
    #[getter]
    fn dim(&self) -> usize {
        match self.inner {
            Dim::Two(_) => 2,
            Dim::Three(_) => 3,
        }
    }

    fn __len__(&mut self) -> usize {
        dispatch!(self, w, D => w.world.len())
    }

    /// The settings: `(cell_size or None, detail, runaway, spin_tolerance or None)`.
    fn config(&mut self) -> (Option<f64>, &'static str, &'static str, Option<f64>) {
        let c = dispatch!(self, w, D => w.world.config());
        let detail = match c.detail {
            ContactDetail::ExactBox => "exact_box",
            ContactDetail::Interval => "interval",
            ContactDetail::Candidates => "candidates",
        };
        let runaway = match c.runaway {
            Runaway::Park => "park",
            Runaway::Refuse => "refuse",
        };
        (c.cell_size, detail, runaway, c.spin_tolerance)
    }

    /// The grid's base cell size in use.
    fn cell_size(&mut self) -> f64 {
        dispatch!(self, w, D => w.world.cell_size())
    }

    /// Inserts bodies; see `fmbgrid.World.insert`. Returns their handles.
    /// `rotations`: the poses' linear parts by columns, checked to be
    /// rotations unless `rigid` is false (the package's `linears=`).
    #[pyo3(signature = (frames, bodies=None, moving=None, velocities=None, translations=None, rotations=None, user_data=None, filters=None, rigid=true))]
    #[allow(clippy::too_many_arguments)]
    fn insert<'py>(
        &mut self,
        py: Python<'py>,
        frames: &Frames,
        bodies: Option<PyReadonlyArrayDyn<'_, i64>>,
        moving: Option<PyReadonlyArrayDyn<'_, bool>>,
        velocities: Option<PyReadonlyArrayDyn<'_, f64>>,
        translations: Option<PyReadonlyArrayDyn<'_, f64>>,
        rotations: Option<PyReadonlyArrayDyn<'_, f64>>,
        user_data: Option<PyReadonlyArrayDyn<'_, u64>>,
        filters: Option<PyReadonlyArrayDyn<'_, u32>>,
        rigid: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if frames.dim() != self.dim() {
            return Err(value_error(format!("the frames are {}D, the world is {}D", frames.dim(), self.dim())));
        }
        let b = bodies.as_ref().map(|a| a.as_array());
        let default_moving = numpy::ndarray::arr0(true).into_dyn();
        let m = moving.as_ref().map(|a| a.as_array());
        let m = m.unwrap_or_else(|| default_moving.view());
        let v = velocities.as_ref().map(|a| a.as_array());
        let t = translations.as_ref().map(|a| a.as_array());
        let l = rotations.as_ref().map(|a| a.as_array());
        let u = user_data.as_ref().map(|a| a.as_array());
        let f = filters.as_ref().map(|a| a.as_array());
        let ids = match (&mut self.inner, &frames.set) {
            (Dim::Two(w), Set::Two(fr)) => py.detach(|| {
                w.insert(fr, b.as_ref(), &m, v.as_ref(), t.as_ref(), l.as_ref(), rigid, u.as_ref(), f.as_ref())
            })?,
            (Dim::Three(w), Set::Three(fr)) => py.detach(|| {
                w.insert(fr, b.as_ref(), &m, v.as_ref(), t.as_ref(), l.as_ref(), rigid, u.as_ref(), f.as_ref())
            })?,
            _ => unreachable!("dimensions checked above"),
        };
        Ok(array(py, &[ids.len()], ids))
    }

    /// Removes the bodies `handles (K,)` (all or none).
    fn remove(&mut self, py: Python<'_>, handles: PyReadonlyArrayDyn<'_, u64>) -> PyResult<()> {
        let h = handles.as_array();
        dispatch!(self, w, D => py.detach(|| w.remove(&h)))
    }

    /// Sets the velocities of moving bodies, `velocities (K, D)` (all or none).
    fn set_velocities(
        &mut self,
        py: Python<'_>,
        handles: PyReadonlyArrayDyn<'_, u64>,
        velocities: PyReadonlyArrayDyn<'_, f64>,
    ) -> PyResult<()> {
        let (h, v) = (handles.as_array(), velocities.as_array());
        dispatch!(self, w, D => py.detach(|| w.set_velocities(&h, &v)))
    }

    /// Moves bodies to new poses (all or none); `rotations` as in `insert`.
    #[pyo3(signature = (handles, translations, rotations=None, rigid=true))]
    fn set_poses(
        &mut self,
        py: Python<'_>,
        handles: PyReadonlyArrayDyn<'_, u64>,
        translations: PyReadonlyArrayDyn<'_, f64>,
        rotations: Option<PyReadonlyArrayDyn<'_, f64>>,
        rigid: bool,
    ) -> PyResult<()> {
        let (h, t) = (handles.as_array(), translations.as_array());
        let l = rotations.as_ref().map(|a| a.as_array());
        dispatch!(self, w, D => py.detach(|| w.set_poses(&h, &t, l.as_ref(), rigid)))
    }

    /// Sets angular velocities: `(K,)` in 2D, `(K, 3)` in 3D (all or none).
    fn set_angular_velocities(
        &mut self,
        py: Python<'_>,
        handles: PyReadonlyArrayDyn<'_, u64>,
        omegas: PyReadonlyArrayDyn<'_, f64>,
    ) -> PyResult<()> {
        let (h, o) = (handles.as_array(), omegas.as_array());
        match &mut self.inner {
            Dim::Two(w) => py.detach(|| {
                let hs = w.handles(&h)?;
                check_shape("omegas", &o, &[Some(hs.len())])?;
                for (k, &x) in hs.iter().enumerate() {
                    check_vector("angular velocity", &[o[[k]]]).map_err(|e| row_error(k, x, e))?;
                    if w.world.body(x).map_err(world_error)?.motion() == Motion::Fixed {
                        return Err(fixed_error(k, x));
                    }
                }
                for (k, &x) in hs.iter().enumerate() {
                    w.world.set_angular_velocity(x, o[[k]]).map_err(world_error)?;
                }
                Ok(())
            }),
            Dim::Three(w) => py.detach(|| {
                let hs = w.handles(&h)?;
                check_shape("omegas", &o, &[Some(hs.len()), Some(3)])?;
                for (k, &x) in hs.iter().enumerate() {
                    check_vector("angular velocity", &row::<3, _>(&o, k)).map_err(|e| row_error(k, x, e))?;
                    if w.world.body(x).map_err(world_error)?.motion() == Motion::Fixed {
                        return Err(fixed_error(k, x));
                    }
                }
                for (k, &x) in hs.iter().enumerate() {
                    w.world.set_angular_velocity(x, row::<3, _>(&o, k)).map_err(world_error)?;
                }
                Ok(())
            }),
        }
    }

    /// Sets the bodies' user data, `data (K,)` uint64.
    fn set_user_data(
        &mut self,
        py: Python<'_>,
        handles: PyReadonlyArrayDyn<'_, u64>,
        data: PyReadonlyArrayDyn<'_, u64>,
    ) -> PyResult<()> {
        let (h, d) = (handles.as_array(), data.as_array());
        dispatch!(self, w, D => py.detach(|| {
            let hs = w.handles(&h)?;
            check_shape("data", &d, &[Some(hs.len())])?;
            for (k, &x) in hs.iter().enumerate() {
                w.world.set_user_data(x, d[[k]]).map_err(world_error)?;
            }
            Ok(())
        }))
    }

    /// Per body of `handles (K,)`: `(translations (K, D), rotations (K, D, D),
    /// velocities (K, D), moving (K,), user_data (K,), frame counts (K,))`.
    fn bodies_info<'py>(&mut self, py: Python<'py>, handles: PyReadonlyArrayDyn<'_, u64>) -> PyResult<Arrays<'py>> {
        let h = handles.as_array();
        dispatch!(self, w, D => {
            let hs = w.handles(&h)?;
            let k = hs.len();
            let (mut t, mut l, mut v, mut m, mut u, mut c) = (vec![], vec![], vec![], vec![], vec![], vec![]);
            for &x in &hs {
                let b = w.world.body(x).map_err(world_error)?;
                t.extend(b.pose().translation());
                l.extend(b.pose().linear().into_iter().flatten());
                v.extend(b.velocity());
                m.push(b.motion() == Motion::Moving);
                u.push(b.user_data());
                c.push(b.frames().len() as u32);
            }
            Ok(vec![
                array(py, &[k, D], t),
                array(py, &[k, D, D], l),
                array(py, &[k, D], v),
                array(py, &[k], m),
                array(py, &[k], u),
                array(py, &[k], c),
            ])
        })
    }

    /// The live bodies' handles, in slot order.
    fn handles<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyAny> {
        let ids = dispatch!(self, w, D => w.live());
        array(py, &[ids.len()], ids)
    }

    /// Every placed frame: `(Frames, bodies (N,) handles, indices (N,) in the body)`.
    fn frames<'py>(&mut self, py: Python<'py>) -> PyResult<(Frames, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let (set, bodies, index) = match &mut self.inner {
            Dim::Two(w) => {
                let (f, b, i) = placed(w)?;
                (Set::Two(f), b, i)
            }
            Dim::Three(w) => {
                let (f, b, i) = placed(w)?;
                (Set::Three(f), b, i)
            }
        };
        let n = bodies.len();
        Ok((Frames { set }, array(py, &[n], bodies), array(py, &[n], index)))
    }

    /// Steps the world by `dt`: `(pairs (M, 2) uint64, frames (M, 2) uint32,
    /// boxes (M, 2, D), intervals (M, 2), body_pairs (P, 2), started (S, 2),
    /// ended (E, 2))`.
    fn step<'py>(&mut self, py: Python<'py>, dt: f64) -> PyResult<Arrays<'py>> {
        dispatch!(self, w, D => {
            // The arrays' room is made before the step changes anything: a
            // step whose answer would not fit is refused, never made and lost.
            let mut out = StepOut::default();
            py.detach(|| w.world.step_with_room(dt, |room| out.reserve(room)).map(|_| ())).map_err(world_error)?;
            w.fill(&mut out);
            Ok(out.arrays(py))
        })
    }

    /// Runs `steps` steps of `dt` in Rust alone (nothing crosses to
    /// Python): the seconds each took, for measuring the Python layer.
    /// `also`: "" (the step alone), "poses" (before each step, every body
    /// set to its pose with one `World::set_poses`, as a Python loop calling
    /// `set_poses` with all of them does) or "velocities" (every moving body
    /// given its velocity again with `World::set_velocity`); with either,
    /// after each step, the body pairs read as slot indices into a new
    /// vector, as the Python loop reads them (`body_pairs & 0xFFFFFFFF`).
    #[pyo3(signature = (dt, steps, also=""))]
    fn time_steps(&mut self, py: Python<'_>, dt: f64, steps: &Bound<'_, PyAny>, also: &str) -> PyResult<Vec<f64>> {
        if !["", "poses", "velocities"].contains(&also) {
            return Err(value_error(format!("also {also:?}: expected '', 'poses' or 'velocities'")));
        }
        // Integers only (Python's or numpy's: `__index__`), no float or
        // string; negative or huge counts are a named error.
        let steps = steps
            .call_method0("__index__")
            .and_then(|n| n.extract::<i64>())
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| value_error(format!("steps = {steps}: expected an integer from 0 to 2**63 - 1")))?;
        dispatch!(self, w, D => py.detach(|| {
            let mut times = reserved("the step times", steps)?;
            let bodies: Vec<(BodyHandle, Pose<D>, [f64; D], Motion)> =
                w.world.bodies().map(|(h, b)| (h, b.pose(), b.velocity(), b.motion())).collect();
            let poses: Vec<(BodyHandle, Pose<D>)> = bodies.iter().map(|&(h, p, _, _)| (h, p)).collect();
            for _ in 0..steps {
                let t = Instant::now();
                match also {
                    "poses" => w.world.set_poses(&poses).map_err(world_error)?,
                    "velocities" => {
                        for &(h, _, v, m) in &bodies {
                            if m == Motion::Moving {
                                w.world.set_velocity(h, v).map_err(world_error)?;
                            }
                        }
                    }
                    _ => {}
                }
                let n = w.world.step(dt).map_err(world_error)?.len();
                if !also.is_empty() {
                    let read: Vec<[i64; 2]> = w
                        .world
                        .body_pairs()
                        .iter()
                        .map(|(a, b)| [i64::from(a.index()), i64::from(b.index())])
                        .collect();
                    std::hint::black_box(read);
                }
                times.push(t.elapsed().as_secs_f64());
                std::hint::black_box(n);
            }
            Ok(times)
        }))
    }

    /// Bodies parked by the last step (runaways).
    fn parked<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyAny> {
        let ids: Vec<u64> = dispatch!(self, w, D => w.world.parked().iter().map(|&h| w.id(h)).collect());
        array(py, &[ids.len()], ids)
    }

    /// Pairs of frames at most `delta` apart: `(pairs (P, 2), frames (P, 2),
    /// distances (P,), on_a (P, D), on_b (P, D))`.
    fn pairs_within<'py>(&mut self, py: Python<'py>, delta: f64) -> PyResult<Arrays<'py>> {
        dispatch!(self, w, D => {
            let found = py.detach(|| w.world.pairs_within(delta).map_err(world_error).and_then(|p| rows("the pairs", p, |x| *x)))?;
            let p = found.len();
            let mut bodies = reserved("the pairs", 2 * p)?;
            let mut frames = reserved("the pairs", 2 * p)?;
            let (mut d, mut a, mut b) = (reserved("the pairs", p)?, reserved("the pairs", p * D)?, reserved("the pairs", p * D)?);
            for x in &found {
                bodies.extend([w.id(x.a.body), w.id(x.b.body)]);
                frames.extend([x.a.index, x.b.index]);
                d.push(x.distance);
                a.extend(x.on_a);
                b.extend(x.on_b);
            }
            Ok(vec![
                array(py, &[p, 2], bodies),
                array(py, &[p, 2], frames),
                array(py, &[p], d),
                array(py, &[p, D], a),
                array(py, &[p, D], b),
            ])
        })
    }

    /// The first frame each ray meets: `(hit (R,), bodies (R,), frames (R,),
    /// times (R,), normals (R, D))`.
    fn cast_rays<'py>(
        &mut self,
        py: Python<'py>,
        origins: PyReadonlyArrayDyn<'_, f64>,
        directions: PyReadonlyArrayDyn<'_, f64>,
        max_times: PyReadonlyArrayDyn<'_, f64>,
    ) -> PyResult<Arrays<'py>> {
        let (o, dir, t) = (origins.as_array(), directions.as_array(), max_times.as_array());
        dispatch!(self, w, D => {
            let r = check_rays(&o, &dir, &t, D)?;
            let hits = py.detach(|| {
                let mut hits = reserved("the rays' hits", r)?;
                for k in 0..r {
                    hits.push(w.world.cast_ray(row(&o, k), row(&dir, k), t[[k]]).map_err(|e| value_error(format!("ray {k}: {e}")))?);
                }
                Ok::<_, PyErr>(hits)
            })?;
            let what = "the rays' hits";
            let mut hit = reserved(what, r)?;
            let (mut bodies, mut frames, mut times) = (reserved(what, r)?, reserved(what, r)?, reserved(what, r)?);
            let mut normals = reserved(what, r.saturating_mul(D))?;
            for h in hits {
                match h {
                    Some((id, x)) => {
                        hit.push(true);
                        bodies.push(w.id(id.body));
                        frames.push(id.index);
                        times.push(x.time);
                        normals.extend(x.normal);
                    }
                    None => {
                        hit.push(false);
                        bodies.push(u64::MAX);
                        frames.push(u32::MAX);
                        times.push(f64::INFINITY);
                        normals.extend([f64::NAN; D]);
                    }
                }
            }
            Ok(vec![
                array(py, &[r], hit),
                array(py, &[r], bodies),
                array(py, &[r], frames),
                array(py, &[r], times),
                array(py, &[r, D], normals),
            ])
        })
    }

    /// The last step's arrays again, as `step` returned them (with the
    /// boxes `exact_boxes` refined since).
    fn last_step<'py>(&mut self, py: Python<'py>) -> PyResult<Arrays<'py>> {
        dispatch!(self, w, D => w.step_arrays(py))
    }

    /// `World::exact_boxes` for the last step's contacts whose row `select
    /// (M,)` is true (all when None): the boxes of every contact, `(M, 2, D)`,
    /// the selected ones exact.
    #[pyo3(signature = (select=None))]
    fn exact_boxes<'py>(
        &mut self,
        py: Python<'py>,
        select: Option<PyReadonlyArrayDyn<'_, bool>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let select = select.as_ref().map(|a| a.as_array());
        dispatch!(self, w, D => {
            // The contacts selected, by their two frames (each pair once).
            let chosen: Option<std::collections::HashSet<(FrameId, FrameId)>> = match &select {
                None => None,
                Some(s) => {
                    let c = w.world.contacts();
                    check_shape("select", s, &[Some(c.len())])?;
                    Some(c.iter().enumerate().filter(|&(i, _)| s[[i]]).map(|(_, x)| (x.a, x.b)).collect())
                }
            };
            let boxes = py.detach(|| {
                let c = w.world.exact_boxes(|x| chosen.as_ref().is_none_or(|s| s.contains(&(x.a, x.b))))?;
                Ok::<_, WorldError>(c.iter().flat_map(|x| x.aabb.min.into_iter().chain(x.aabb.max)).collect::<Vec<f64>>())
            }).map_err(world_error)?;
            Ok(array(py, &[boxes.len() / (2 * D), 2, D], boxes))
        })
    }

    /// `World::contact_geometry` of the last step's contacts at `rows (K,)`
    /// (all when None): `(hit (K,), time (K,), normal (K, D), point (K, D),
    /// depth (K,))`, NaN where no answer (a pair within round-off of
    /// touching).
    #[pyo3(signature = (rows=None))]
    fn contact_geometry<'py>(
        &mut self,
        py: Python<'py>,
        rows: Option<PyReadonlyArrayDyn<'_, i64>>,
    ) -> PyResult<Arrays<'py>> {
        let rows = rows.as_ref().map(|a| a.as_array());
        dispatch!(self, w, D => {
            let picked = w.contact_rows(rows.as_ref())?;
            let k = picked.len();
            let (mut hit, mut time, mut normal, mut point, mut depth) =
                (Vec::with_capacity(k), Vec::with_capacity(k), Vec::with_capacity(k * D), Vec::with_capacity(k * D), Vec::with_capacity(k));
            py.detach(|| {
                let c = w.world.contacts();
                for (i, &r) in picked.iter().enumerate() {
                    let g = w.world.contact_geometry(&c[r]).map_err(|e| value_error(format!("contact {r} (rows[{i}]): {e}")))?;
                    hit.push(g.is_some());
                    match g {
                        Some(g) => {
                            time.push(g.time);
                            normal.extend(g.normal);
                            point.extend(g.point);
                            depth.push(g.depth);
                        }
                        None => {
                            time.push(f64::NAN);
                            normal.extend([f64::NAN; D]);
                            point.extend([f64::NAN; D]);
                            depth.push(f64::NAN);
                        }
                    }
                }
                Ok::<_, PyErr>(())
            })?;
            Ok(vec![
                array(py, &[k], hit),
                array(py, &[k], time),
                array(py, &[k, D], normal),
                array(py, &[k, D], point),
                array(py, &[k], depth),
            ])
        })
    }

    /// `World::query_aabb` for each box `[mins[q], maxs[q]]`: `(query (K,),
    /// bodies (K,), frames (K,))`, each query's frames sorted.
    fn query_aabbs<'py>(
        &mut self,
        py: Python<'py>,
        mins: PyReadonlyArrayDyn<'_, f64>,
        maxs: PyReadonlyArrayDyn<'_, f64>,
    ) -> PyResult<Arrays<'py>> {
        let (lo, hi) = (mins.as_array(), maxs.as_array());
        dispatch!(self, w, D => {
            let q = check_shape("mins", &lo, &[None, Some(D)])?;
            check_shape("maxs", &hi, &[Some(q), Some(D)])?;
            let (lo, hi) = (fixed::<Ix2>(&lo)?, fixed::<Ix2>(&hi)?);
            let found = py.detach(|| {
                let mut out = Vec::new();
                for k in 0..q {
                    let aabb = Aabb { min: row(&lo, k), max: row(&hi, k) };
                    check_vector("box corner", &aabb.min)
                        .and_then(|()| check_vector("box corner", &aabb.max))
                        .map_err(|e| value_error(format!("box {k}: {e}")))?;
                    append(&mut out, "the hits", w.world.query_aabb(&aabb).into_iter().map(|id| (k, id)))?;
                }
                Ok::<_, PyErr>(out)
            })?;
            w.hits(py, &found)
        })
    }

    /// `World::query_point` for each of `points (Q, D)`: `(query (K,),
    /// bodies (K,), frames (K,))`.
    fn query_points<'py>(&mut self, py: Python<'py>, points: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Arrays<'py>> {
        let p = points.as_array();
        dispatch!(self, w, D => {
            let q = check_shape("points", &p, &[None, Some(D)])?;
            let p = fixed::<Ix2>(&p)?;
            let found = py.detach(|| {
                let mut out = Vec::new();
                for k in 0..q {
                    let ids = w.world.query_point(row(&p, k)).map_err(|e| value_error(format!("point {k}: {e}")))?;
                    append(&mut out, "the hits", ids.into_iter().map(|id| (k, id)))?;
                }
                Ok::<_, PyErr>(out)
            })?;
            w.hits(py, &found)
        })
    }

    /// `World::query_frame` for each of `frames`: `(query (K,), bodies (K,),
    /// frames (K,), boxes (K, 2, D), intervals (K, 2))`.
    fn query_frames<'py>(&mut self, py: Python<'py>, frames: &Frames) -> PyResult<Arrays<'py>> {
        fn go<'py, const D: usize>(py: Python<'py>, w: &Inner<D>, probes: &[Frame<D>]) -> PyResult<Arrays<'py>> {
            let found = py.detach(|| {
                let mut found = Vec::new();
                for (k, f) in probes.iter().enumerate() {
                    append(&mut found, "the hits", w.world.query_frame(f).into_iter().map(|h| (k, h)))?;
                }
                Ok::<_, PyErr>(found)
            })?;
            let ids: Vec<(usize, FrameId)> = rows("the hits", &found, |&(k, (id, _))| (k, id))?;
            let mut out = w.hits(py, &ids)?;
            let n = found.len();
            let boxes: Vec<[[f64; D]; 2]> = rows("the hits", &found, |(_, (_, h))| [h.aabb.min, h.aabb.max])?;
            let times: Vec<[f64; 2]> = rows("the hits", &found, |(_, (_, h))| h.time)?;
            out.push(array(py, &[n, 2, D], boxes.into_flattened().into_flattened()));
            out.push(array(py, &[n, 2], times.into_flattened()));
            Ok(out)
        }
        match (&mut self.inner, &frames.set) {
            (Dim::Two(w), Set::Two(f)) => go(py, w, f),
            (Dim::Three(w), Set::Three(f)) => go(py, w, f),
            _ => Err(value_error(format!("the frames are {}D, the world is {}D", frames.dim(), self.dim()))),
        }
    }

    /// Every frame each ray meets (`World::cast_ray_all`): `(ray (K,),
    /// bodies (K,), frames (K,), times (K,), normals (K, D))`, each ray's
    /// hits by time.
    fn cast_rays_all<'py>(
        &mut self,
        py: Python<'py>,
        origins: PyReadonlyArrayDyn<'_, f64>,
        directions: PyReadonlyArrayDyn<'_, f64>,
        max_times: PyReadonlyArrayDyn<'_, f64>,
    ) -> PyResult<Arrays<'py>> {
        let (o, dir, t) = (origins.as_array(), directions.as_array(), max_times.as_array());
        dispatch!(self, w, D => {
            let r = check_rays(&o, &dir, &t, D)?;
            let found = py.detach(|| {
                let mut out = Vec::new();
                for k in 0..r {
                    let hits = w.world.cast_ray_all(row(&o, k), row(&dir, k), t[[k]]).map_err(|e| value_error(format!("ray {k}: {e}")))?;
                    append(&mut out, "the hits", hits.into_iter().map(|h| (k, h)))?;
                }
                Ok::<_, PyErr>(out)
            })?;
            let ids: Vec<(usize, FrameId)> = rows("the hits", &found, |&(k, (id, _))| (k, id))?;
            let mut out = w.hits(py, &ids)?;
            let n = found.len();
            out.push(array(py, &[n], rows("the hits", &found, |(_, (_, h))| h.time)?));
            out.push(array(py, &[n, D], rows("the hits", &found, |(_, (_, h))| h.normal)?.into_flattened()));
            Ok(out)
        })
    }

    /// `World::debug_draw` with the last step's contacts (none when
    /// `contacts` is false) and the swept boxes of a step of `dt`:
    /// `(starts (L, D), ends (L, D), kinds (L,) uint8)`, a kind being an
    /// index into `DEBUG_KINDS`.
    #[pyo3(signature = (dt, contacts=true))]
    fn debug_draw<'py>(&mut self, py: Python<'py>, dt: f64, contacts: bool) -> PyResult<Arrays<'py>> {
        dispatch!(self, w, D => {
            let (mut from, mut to, mut kinds) = (Vec::new(), Vec::new(), Vec::new());
            py.detach(|| {
                let c: &[fmbgrid::Contact<D>] = if contacts { w.world.contacts() } else { &[] };
                w.world.debug_draw(c, dt, |l| {
                    from.extend(l.from);
                    to.extend(l.to);
                    kinds.push(DebugKind::ALL.iter().position(|&k| k == l.kind).unwrap_or(0) as u8);
                })
            }).map_err(world_error)?;
            let n = kinds.len();
            Ok(vec![array(py, &[n, D], from), array(py, &[n, D], to), array(py, &[n], kinds)])
        })
    }

    /// The world as bytes (JSON of the engine's `WorldSnapshot`): restoring
    /// it gives a world that steps bit for bit as this one would.
    fn snapshot<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = dispatch!(self, w, D => py.detach(|| serde_json::to_vec(&w.world.snapshot())))
            .map_err(|e| value_error(format!("snapshot: {e}")))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The world a `snapshot` was taken of.
    #[staticmethod]
    fn restore(py: Python<'_>, dim: usize, data: &[u8]) -> PyResult<World> {
        let bad = |e: serde_json::Error| value_error(format!("bad world snapshot: {e}"));
        py.detach(|| match dim {
            2 => {
                let s: WorldSnapshot<2> = serde_json::from_slice(data).map_err(bad)?;
                Ok(World::from_2d(RWorld::restore(s).map_err(world_error)?))
            }
            3 => {
                let s: WorldSnapshot<3> = serde_json::from_slice(data).map_err(bad)?;
                Ok(World::from_3d(RWorld::restore(s).map_err(world_error)?))
            }
            _ => Err(value_error(format!("dim must be 2 or 3, got {dim}"))),
        })
    }

    /// Removes every body.
    fn clear(&mut self) {
        dispatch!(self, w, D => {
            w.world.clear();
            w.rebuild_table();
        })
    }
}

fn placed<const D: usize>(w: &Inner<D>) -> PyResult<(Vec<Frame<D>>, Vec<u64>, Vec<u32>)> {
    let (mut f, mut b, mut i) = (Vec::new(), Vec::new(), Vec::new());
    for (h, body) in w.world.bodies() {
        for index in 0..body.frames().len() as u32 {
            f.push(w.world.frame(FrameId { body: h, index }).map_err(world_error)?);
            b.push(w.id(h));
            i.push(index);
        }
    }
    Ok((f, b, i))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<World>()?;
    Ok(())
}

/// The number of rays of a batch, after checking that `origins` and
/// `directions` are `(R, dims)` and `max_times` is `(R,)`.
fn check_rays(o: &ArrayViewD<f64>, dir: &ArrayViewD<f64>, t: &ArrayViewD<f64>, dims: usize) -> PyResult<usize> {
    let r = check_shape("origins", o, &[None, Some(dims)])?;
    check_shape("directions", dir, &[Some(r), Some(dims)])?;
    check_shape("max_times", t, &[Some(r)])?;
    Ok(r)
}
