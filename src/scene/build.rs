//! From checked `[[body]]` entries to a world.

use std::path::Path;
use std::time::Instant;

use super::format::{BodySpec, MotionSpec, ShapeKind};
use super::{Scene, SceneError, SplitMix64};
use crate::error::Num;
use crate::frame::MAX_COORDINATE;
use crate::mesh;
use crate::{Body, ContactDetail, Frame, Frame3, Motion, Pose, World, World2, World3, WorldConfig};

/// What building a scene produced, beside the world.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BuildReport {
    /// Bodies inserted.
    pub bodies: usize,
    /// Frames inserted.
    pub frames: usize,
    /// Mesh elements skipped as degenerate (flat or sliver).
    pub degenerate: usize,
    /// Mesh elements skipped as invalid (bad indices or numbers).
    pub invalid: usize,
    /// Time taken to build, in milliseconds (asset loading included).
    pub build_ms: f64,
}

/// Where a body's frames come from.
pub(super) enum Source<const D: usize> {
    Frames(Vec<Frame<D>>),
    Asset { path: String, thickness: Option<f64> },
}

pub(super) enum Repeat<const D: usize> {
    Once,
    Grid { count: [usize; D], spacing: [f64; D] },
    Scatter(Scatter<D>),
}

pub(super) struct Scatter<const D: usize> {
    count: usize,
    seed: u64,
    min: [f64; D],
    max: [f64; D],
    velocity: Option<[f64; 2]>,
    scale: Option<[f64; 2]>,
    axis_scale: Option<[f64; 2]>,
    random_rotation: bool,
}

/// A checked `[[body]]` entry in fixed dimension.
pub(super) struct Resolved<const D: usize> {
    source: Source<D>,
    scale: f64,
    moving: bool,
    position: [f64; D],
    rotation: [[f64; D]; D],
    velocity: [f64; D],
    /// As a rotation vector (2D: `[0, 0, ω]`).
    turn: [f64; 3],
    repeat: Repeat<D>,
}

/// Number of bodies an entry makes (`None` past `usize`).
pub(super) fn copies(b: &BodySpec) -> Option<usize> {
    match (&b.grid, &b.scatter) {
        (Some(g), _) => g.count.iter().try_fold(1usize, |n, &c| n.checked_mul(c)),
        (_, Some(s)) => Some(s.count),
        _ => Some(1),
    }
}

/// Every number finite and at most 1e15 in magnitude (the world's limit
/// for any coordinate), named as written: `position[0] is 1e300: ...`.
fn finite(what: &str, v: &[f64]) -> Result<(), String> {
    let bad = v.iter().enumerate().find(|(_, x)| !(x.is_finite() && x.abs() <= MAX_COORDINATE));
    match bad {
        Some((i, &x)) => {
            let at = if v.len() > 1 { format!("{what}[{i}]") } else { what.to_string() };
            Err(format!("{at} is {}: it must be a finite number of magnitude at most 1e15", Num(x)))
        }
        None => Ok(()),
    }
}

/// A derived quantity (`what` names the keys it comes from) within ±1e15.
fn within(what: &str, v: &[f64]) -> Result<(), String> {
    match v.iter().find(|x| !(x.is_finite() && x.abs() <= MAX_COORDINATE)) {
        Some(&x) => Err(format!("{what} reaches {}: at most 1e15 in magnitude is supported", Num(x))),
        None => Ok(()),
    }
}

fn vector<const D: usize>(what: &str, v: &[f64]) -> Result<[f64; D], String> {
    if v.len() != D {
        return Err(format!("{what} needs {D} numbers, got {}", v.len()));
    }
    finite(what, v)?;
    Ok(std::array::from_fn(|i| v[i]))
}

fn positive(what: &str, x: f64) -> Result<f64, String> {
    if x.is_finite() && x > 0.0 { Ok(x) } else { Err(format!("{what} must be positive and finite, got {}", Num(x))) }
}

fn range(what: &str, r: Option<[f64; 2]>, need_positive: bool) -> Result<Option<[f64; 2]>, String> {
    if let Some([lo, hi]) = r {
        finite(what, &[lo, hi])?;
        if lo > hi || (need_positive && lo <= 0.0) {
            let sign = if need_positive { "0 < " } else { "" };
            return Err(format!("{what} must be [lo, hi] with {sign}lo <= hi, got [{}, {}]", Num(lo), Num(hi)));
        }
    }
    Ok(r)
}

fn identity<const D: usize>() -> [[f64; D]; D] {
    std::array::from_fn(|i| std::array::from_fn(|j| if i == j { 1.0 } else { 0.0 }))
}

/// A `D × D` matrix (by columns) from a 2D or 3D one.
fn matrix<const D: usize>(m2: [[f64; 2]; 2], m3: [[f64; 3]; 3]) -> [[f64; D]; D] {
    std::array::from_fn(|i| std::array::from_fn(|j| if D == 2 { m2[i][j] } else { m3[i][j] }))
}

fn rotation_2d(a: f64) -> [[f64; 2]; 2] {
    let (s, c) = a.sin_cos();
    [[c, s], [-s, c]]
}

fn rotation<const D: usize>(r: &[f64]) -> Result<[[f64; D]; D], String> {
    finite("rotation", r)?;
    if D == 2 {
        match r {
            [a] => Ok(matrix(rotation_2d(*a), identity())),
            _ => Err(format!("rotation in 2D is [angle] (radians), got {} numbers", r.len())),
        }
    } else {
        match r {
            [x, y, z, a] => {
                let pose = Pose::<3>::from_axis_angle([*x, *y, *z], *a, [0.0; 3]).map_err(|e| e.to_string())?;
                Ok(matrix(identity(), pose.linear()))
            }
            _ => Err(format!("rotation in 3D is [axis_x, axis_y, axis_z, angle] (radians), got {} numbers", r.len())),
        }
    }
}

/// A uniformly random rotation: an angle in 2D, Shoemake's quaternion in 3D.
fn random_rotation<const D: usize>(rng: &mut SplitMix64) -> [[f64; D]; D] {
    use std::f64::consts::TAU;
    if D == 2 {
        return matrix(rotation_2d(rng.range(0.0, TAU)), identity());
    }
    let (u1, u2, u3) = (rng.next_f64(), rng.next_f64(), rng.next_f64());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let (x, y, z, w) = (a * (TAU * u2).sin(), a * (TAU * u2).cos(), b * (TAU * u3).sin(), b * (TAU * u3).cos());
    let m = [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)],
        [2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)],
        [2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)],
    ];
    matrix(identity(), m)
}

fn shape<const D: usize>(b: &BodySpec, kind: ShapeKind) -> Result<Frame<D>, String> {
    let refuse = |key: &str, v: bool| if v { Err(format!("`{key}` does not apply to shape {kind:?}")) } else { Ok(()) };
    let frame = match kind {
        ShapeKind::Box => {
            refuse("vertices", b.vertices.is_some())?;
            refuse("min", b.min.is_some() || b.max.is_some())?;
            let h = b.half_extents.as_deref().ok_or("shape \"box\" needs `half_extents`")?;
            let h: [f64; D] = vector("half_extents", h)?;
            for &x in &h {
                positive("half_extents", x)?;
            }
            Frame::oriented_box([0.0; D], h, identity())
        }
        ShapeKind::Tetrahedron | ShapeKind::Triangle => {
            refuse("half_extents", b.half_extents.is_some())?;
            refuse("min", b.min.is_some() || b.max.is_some())?;
            let want = if D == 2 { ShapeKind::Triangle } else { ShapeKind::Tetrahedron };
            if kind != want {
                return Err(format!("shape {kind:?} does not exist in {D}D (use {want:?})"));
            }
            let v = b.vertices.as_deref().ok_or("a simplex needs `vertices`")?;
            // `Frame::simplex` refuses a wrong vertex count.
            let v = v.iter().map(|p| vector::<D>("vertex", p)).collect::<Result<Vec<_>, _>>()?;
            Frame::simplex(&v)
        }
        ShapeKind::Aabb => {
            refuse("half_extents", b.half_extents.is_some())?;
            refuse("vertices", b.vertices.is_some())?;
            let min = vector::<D>("min", b.min.as_deref().ok_or("shape \"aabb\" needs `min`")?)?;
            let max = vector::<D>("max", b.max.as_deref().ok_or("shape \"aabb\" needs `max`")?)?;
            Frame::from_aabb(min, max)
        }
    };
    // Named by the keys the frame was made from, so the error is placed there.
    let keys = match kind {
        ShapeKind::Box => "half_extents",
        ShapeKind::Tetrahedron | ShapeKind::Triangle => "vertices",
        ShapeKind::Aabb => "min, max",
    };
    frame.map_err(|e| format!("{keys}: {e}"))
}

/// Checks an entry and converts it to dimension `D`.
pub(super) fn resolve<const D: usize>(b: &BodySpec) -> Result<Resolved<D>, String> {
    let source = match (&b.shape, &b.asset) {
        (Some(_), Some(_)) => return Err("give either `shape` or `asset`, not both".into()),
        (None, None) => return Err("needs a `shape` or an `asset`".into()),
        (Some(kind), None) => {
            if b.thickness.is_some() {
                return Err("`thickness` only applies to an `asset`".into());
            }
            Source::Frames(vec![shape::<D>(b, *kind)?])
        }
        (None, Some(path)) => {
            if D != 3 {
                return Err("mesh assets are 3D only".into());
            }
            if b.half_extents.is_some() || b.vertices.is_some() || b.min.is_some() || b.max.is_some() {
                return Err("shape keys (`half_extents`, `vertices`, `min`, `max`) do not apply to an `asset`".into());
            }
            let thickness = b.thickness.map(|t| positive("thickness", t)).transpose()?;
            Source::Asset { path: path.clone(), thickness }
        }
    };
    let scale = positive("scale", b.scale)?;
    finite("scale", &[scale])?;
    let moving = b.motion == MotionSpec::Moving;
    let position = match &b.position {
        Some(p) => vector("position", p)?,
        None => [0.0; D],
    };
    let rotation = match &b.rotation {
        Some(r) => rotation(r)?,
        None => identity(),
    };
    let velocity = match &b.velocity {
        Some(v) => vector("velocity", v)?,
        None => [0.0; D],
    };
    let turn = match &b.angular_velocity {
        None => [0.0; 3],
        Some(w) if D == 2 => {
            let [w] = vector::<1>("angular_velocity", w)?;
            [0.0, 0.0, w]
        }
        Some(w) => vector::<3>("angular_velocity", w)?,
    };
    let repeat = match (&b.grid, &b.scatter) {
        (Some(_), Some(_)) => return Err("give either `grid` or `scatter`, not both".into()),
        (Some(g), None) => {
            let count: [usize; D] = if g.count.len() == D {
                std::array::from_fn(|i| g.count[i])
            } else {
                return Err(format!("grid.count needs {D} numbers, got {}", g.count.len()));
            };
            let spacing: [f64; D] = vector("grid.spacing", &g.spacing)?;
            // The last copy's position, from what was written.
            let last: Vec<f64> = (0..D).map(|k| position[k] + count[k].saturating_sub(1) as f64 * spacing[k]).collect();
            within("grid.spacing: the last copy's position (position + (grid.count - 1) · grid.spacing)", &last)?;
            Repeat::Grid { count, spacing }
        }
        (None, Some(s)) => {
            let min = vector::<D>("scatter.min", &s.min)?;
            let max = vector::<D>("scatter.max", &s.max)?;
            if let Some(k) = (0..D).find(|&k| min[k] > max[k]) {
                return Err(format!("scatter.min[{k}] = {} is above scatter.max[{k}] = {}", Num(min[k]), Num(max[k])));
            }
            let corners: Vec<f64> = (0..D).flat_map(|k| [position[k] + min[k], position[k] + max[k]]).collect();
            within("scatter.min, scatter.max: the region, offset by position,", &corners)?;
            if let Some([lo, hi]) = s.velocity_range {
                let extremes: Vec<f64> = velocity.iter().flat_map(|v| [v + lo, v + hi]).collect();
                within("scatter.velocity_range: the velocities (velocity + the range)", &extremes)?;
            }
            if s.random_rotation && b.rotation.is_some() {
                return Err("give either `rotation` or `scatter.random_rotation`, not both".into());
            }
            Repeat::Scatter(Scatter {
                count: s.count,
                seed: s.seed,
                min,
                max,
                velocity: range("scatter.velocity_range", s.velocity_range, false)?,
                scale: range("scatter.scale_range", s.scale_range, true)?,
                axis_scale: range("scatter.axis_scale_range", s.axis_scale_range, true)?,
                random_rotation: s.random_rotation,
            })
        }
        (None, None) => Repeat::Once,
    };
    if !moving && (velocity != [0.0; D] || matches!(&repeat, Repeat::Scatter(s) if s.velocity.is_some())) {
        return Err("a fixed body cannot have a velocity (use motion = \"moving\")".into());
    }
    if !moving && turn != [0.0; 3] {
        return Err("a fixed body cannot have an angular velocity (use motion = \"moving\")".into());
    }
    Ok(Resolved { source, scale, moving, position, rotation, velocity, turn, repeat })
}

/// Frames and skip counts read from a mesh file.
pub(super) struct Loaded {
    pub(super) frames: Vec<Frame3>,
    pub(super) degenerate: usize,
    pub(super) invalid: usize,
}

/// Loads a mesh asset as frames: a volume mesh's tetrahedra; a surface
/// mesh's thin shells when `thickness` (in the mesh's own units) is given,
/// else the tetrahedralisation beside the file (as [`mesh::load_solid`]).
fn load_asset(path: &Path, thickness: Option<f64>) -> Result<Loaded, String> {
    let mut mesh = mesh::load(path).map_err(|e| e.to_string())?;
    match (mesh.tetrahedra.is_empty(), thickness) {
        (false, Some(_)) => {
            return Err(format!(
                "{}: `thickness` only applies to surface meshes (this one has tetrahedra)",
                path.display()
            ));
        }
        (true, None) if mesh::tetrahedralisation_beside(path).is_some() => {
            mesh = mesh::fill(mesh, path).map_err(|e| e.to_string())?;
        }
        (true, None) => {
            return Err(format!(
                "{}: a surface mesh needs a `thickness` (thin shells) or its tetrahedralisation beside it ({} and .node)",
                path.display(),
                path.with_extension("ele").display()
            ));
        }
        _ => {}
    }
    let (frames, report) = mesh.frames(thickness.unwrap_or(0.0));
    Ok(Loaded { frames, degenerate: report.degenerate, invalid: report.invalid })
}

/// The same frame in dimension `D` (`D` must be 3).
fn to_dim<const D: usize>(f: &Frame3) -> Result<Frame<D>, String> {
    let (o, c) = (f.origin(), f.components());
    Frame::new(f.kind(), std::array::from_fn(|k| o[k]), std::array::from_fn(|i| std::array::from_fn(|k| c[i][k])))
        .map_err(|e| e.to_string())
}

impl Scene {
    /// Builds the 3D world.
    ///
    /// # Errors
    /// [`SceneError::Invalid`] for a 2D scene, [`SceneError::Body`] when an
    /// asset cannot be loaded or a body is refused by the world.
    pub fn build_3d(&self) -> Result<World3, SceneError> {
        Ok(self.build_3d_report()?.0)
    }

    /// Builds the 2D world.
    ///
    /// # Errors
    /// As [`Scene::build_3d`].
    pub fn build_2d(&self) -> Result<World2, SceneError> {
        Ok(self.build_2d_report()?.0)
    }

    /// Builds the 3D world, with the counts of frames and skipped elements.
    ///
    /// # Errors
    /// As [`Scene::build_3d`].
    pub fn build_3d_report(&self) -> Result<(World3, BuildReport), SceneError> {
        self.build_with(ContactDetail::ExactBox)
    }

    /// Builds the 2D world, with the counts of frames and skipped elements.
    ///
    /// # Errors
    /// As [`Scene::build_3d`].
    pub fn build_2d_report(&self) -> Result<(World2, BuildReport), SceneError> {
        self.build_with(ContactDetail::ExactBox)
    }

    /// The world in dimension `D`, whose contacts carry `detail`.
    pub(crate) fn build_with<const D: usize>(
        &self,
        detail: ContactDetail,
    ) -> Result<(World<D>, BuildReport), SceneError> {
        let started = Instant::now();
        if self.dimension() != D {
            return Err(self.invalid("dimension", format!("this is a {}D scene, not {D}D", self.dimension())));
        }
        let config = WorldConfig { cell_size: self.spec.cell_size, detail, ..WorldConfig::default() };
        let mut world = World::new(config);
        let mut report = BuildReport::default();
        for (index, spec) in self.spec.bodies.iter().enumerate() {
            let err = |m: String| self.body_error(index, m);
            let r = resolve::<D>(spec).map_err(err)?;
            let local = match &r.source {
                Source::Frames(f) => f.clone(),
                Source::Asset { path, thickness } => {
                    let loaded = load_asset(&self.asset_path(path), thickness.map(|t| t / r.scale))
                        .map_err(|m| err(format!("asset {m}")))?;
                    report.degenerate += loaded.degenerate;
                    report.invalid += loaded.invalid;
                    let frames = loaded.frames.iter().map(to_dim::<D>).collect::<Result<Vec<_>, _>>().map_err(err)?;
                    if frames.is_empty() {
                        return Err(err(format!("{path}: the mesh gives no usable frame")));
                    }
                    frames
                }
            };
            // The world's arrays for the whole entry at once: a clear error
            // when memory cannot be had, not an abort half way.
            let copies = copies(spec).unwrap_or(usize::MAX);
            let motion = if r.moving { Motion::Moving } else { Motion::Fixed };
            world.try_reserve(motion, copies, copies.saturating_mul(local.len())).map_err(|e| err(e.to_string()))?;
            let mut insert = |position: [f64; D], rotation: &[[f64; D]; D], axis: [f64; D], velocity: [f64; D]| {
                let linear = std::array::from_fn(|i| rotation[i].map(|x| x * axis[i]));
                let pose = Pose::new(linear, position).map_err(|e| err(e.to_string()))?;
                let body = if r.moving { Body::moving(local.clone()) } else { Body::fixed(local.clone()) };
                let body = body.with_pose(pose).with_velocity(velocity).with_turn(r.turn);
                world.insert(body).map_err(|e| err(e.to_string()))?;
                report.bodies += 1;
                report.frames += local.len();
                Ok::<(), SceneError>(())
            };
            let uniform = [r.scale; D];
            match &r.repeat {
                Repeat::Once => insert(r.position, &r.rotation, uniform, r.velocity)?,
                Repeat::Grid { count, spacing } => {
                    let total: usize = count.iter().product();
                    for n in 0..total {
                        let mut rest = n;
                        let mut p = r.position;
                        for k in 0..D {
                            p[k] += (rest % count[k]) as f64 * spacing[k];
                            rest /= count[k];
                        }
                        insert(p, &r.rotation, uniform, r.velocity)?;
                    }
                }
                Repeat::Scatter(s) => {
                    let mut rng = SplitMix64::new(s.seed);
                    for _ in 0..s.count {
                        let p = std::array::from_fn(|k| r.position[k] + rng.range(s.min[k], s.max[k]));
                        let rot = if s.random_rotation { random_rotation(&mut rng) } else { r.rotation };
                        let k = s.scale.map_or(1.0, |[lo, hi]| rng.log_range(lo, hi));
                        let axis = std::array::from_fn(|_| {
                            r.scale * k * s.axis_scale.map_or(1.0, |[lo, hi]| rng.range(lo, hi))
                        });
                        let v = std::array::from_fn(|k| {
                            r.velocity[k] + s.velocity.map_or(0.0, |[lo, hi]| rng.range(lo, hi))
                        });
                        insert(p, &rot, axis, v)?;
                    }
                }
            }
        }
        report.build_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok((world, report))
    }
}
