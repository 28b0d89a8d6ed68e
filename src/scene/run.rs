//! Running a scene: the core of the `fmbgrid` runner, timing every step.

use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;

use super::stats::StepStats;
use super::{BuildReport, Scene, SceneError};
use crate::{Contact, ContactDetail, DebugKind, DebugLine, Frame, FrameId, Motion, Proximity, World};

/// How to run a scene.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOptions {
    /// Steps to run (default: the scene's `steps`).
    pub steps: Option<usize>,
    /// 1-based steps at which a [`Snapshot`] is handed to the observer.
    pub snapshot_steps: Vec<usize>,
    /// What each contact carries (exact boxes by default).
    pub detail: ContactDetail,
    /// A safety distance δ (overrides the scene's `tolerance`): before each
    /// step, every pair of frames closer than δ is counted
    /// ([`World::pairs_within`]) and handed to snapshots.
    pub tolerance: Option<f64>,
}

/// The frames of a world at the start of a step and that step's contacts:
/// what the exporters draw.
#[derive(Clone, Debug)]
pub struct Snapshot<const D: usize> {
    /// The scene's name.
    pub scene: String,
    /// 1-based step number.
    pub step: usize,
    /// Bodies in the world.
    pub bodies: usize,
    /// Every frame, placed, at the start of the step (at rest).
    pub frames: Vec<Frame<D>>,
    /// Per frame: is its body fixed?
    pub fixed: Vec<bool>,
    /// Per frame: does it intersect another one during the step?
    pub colliding: Vec<bool>,
    /// The step's contacts (their boxes are swept over the step).
    pub contacts: Vec<Contact<D>>,
    /// With a tolerance: the pairs of frames closer than it at the start
    /// of the step, with their closest points (the witness segments).
    pub near: Vec<Proximity<D>>,
}

impl<const D: usize> Snapshot<D> {
    /// What frame `i`'s edges are drawn as: by its body's motion and
    /// whether it collides ([`DebugKind::of_frame`]). A frame the
    /// per-frame vectors do not reach (a hand-made snapshot) counts as
    /// moving and not colliding.
    ///
    /// ```
    /// # use fmbgrid::{DebugKind, Frame2, scene::Snapshot};
    /// let unit = Frame2::from_aabb([0.0; 2], [1.0; 2])?;
    /// let s = Snapshot {
    ///     scene: "s".into(), step: 1, bodies: 2, frames: vec![unit, unit], fixed: vec![true, false],
    ///     colliding: vec![true, false], contacts: vec![], near: vec![],
    /// };
    /// assert_eq!(s.frame_kind(0), DebugKind::CollidingFixedFrame);
    /// assert_eq!(s.frame_kind(1), DebugKind::MovingFrame);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn frame_kind(&self, i: usize) -> DebugKind {
        let fixed = self.fixed.get(i).copied().unwrap_or(false);
        let motion = if fixed { Motion::Fixed } else { Motion::Moving };
        DebugKind::of_frame(motion, self.colliding.get(i).copied().unwrap_or(false))
    }

    /// The snapshot as line segments, as [`World::debug_draw`] hands them
    /// (without swept boxes): every frame's edges, tagged by
    /// [`Snapshot::frame_kind`], then the contacts' boxes, then the witness
    /// segments of the pairs closer than the tolerance. The runner's PNG
    /// pictures draw this stream.
    ///
    /// ```
    /// # use fmbgrid::{DebugKind, Frame3, scene::Snapshot};
    /// let tet = Frame3::tetrahedron([0.0; 3], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])?;
    /// let s = Snapshot {
    ///     scene: "s".into(), step: 1, bodies: 1, frames: vec![tet], fixed: vec![false],
    ///     colliding: vec![false], contacts: vec![], near: vec![],
    /// };
    /// let mut lines = Vec::new();
    /// s.debug_lines(|l| lines.push(l));
    /// assert_eq!(lines.len(), 6);
    /// assert!(lines.iter().all(|l| l.kind == DebugKind::MovingFrame));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn debug_lines(&self, mut line: impl FnMut(DebugLine<D>)) {
        for (i, f) in self.frames.iter().enumerate() {
            DebugLine::frame_edges(f, self.frame_kind(i)).for_each(&mut line);
        }
        for c in &self.contacts {
            DebugLine::box_edges(&c.aabb, DebugKind::IntersectionBox).for_each(&mut line);
        }
        self.near.iter().map(DebugLine::witness).for_each(line);
    }
}

/// Hooks called by [`run`]: progress and snapshots. Every method does
/// nothing by default; `()` is the silent observer.
pub trait Observer {
    /// After each step: `done` of `total` steps.
    fn progress(&mut self, done: usize, total: usize) {
        let _ = (done, total);
    }

    /// A snapshot of a 2D scene was taken.
    ///
    /// # Errors
    /// A message that stops the run.
    fn snapshot_2d(&mut self, snapshot: &Snapshot<2>) -> Result<(), String> {
        let _ = snapshot;
        Ok(())
    }

    /// A snapshot of a 3D scene was taken.
    ///
    /// # Errors
    /// A message that stops the run.
    fn snapshot_3d(&mut self, snapshot: &Snapshot<3>) -> Result<(), String> {
        let _ = snapshot;
        Ok(())
    }

    /// The contacts of 1-based step `step` of a 2D scene, after it ran
    /// (outside its timing).
    ///
    /// # Errors
    /// A message that stops the run.
    fn contacts_2d(&mut self, step: usize, contacts: &[Contact<2>]) -> Result<(), String> {
        let _ = (step, contacts);
        Ok(())
    }

    /// The contacts of 1-based step `step` of a 3D scene, after it ran
    /// (outside its timing).
    ///
    /// # Errors
    /// A message that stops the run.
    fn contacts_3d(&mut self, step: usize, contacts: &[Contact<3>]) -> Result<(), String> {
        let _ = (step, contacts);
        Ok(())
    }
}

impl Observer for () {}

/// What a run measured (also written as JSON by `fmbgrid run --json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// The scene's name.
    pub scene: String,
    /// 2 or 3.
    pub dimension: usize,
    /// Bodies in the world.
    pub bodies: usize,
    /// Frames in the world.
    pub frames: usize,
    /// Mesh elements skipped as degenerate.
    pub degenerate_skipped: usize,
    /// Mesh elements skipped as invalid.
    pub invalid_skipped: usize,
    /// Steps run.
    pub steps: usize,
    /// Time step.
    pub dt: f64,
    /// Intersecting frame pairs per step, mean.
    pub pairs_mean: f64,
    /// Intersecting frame pairs per step, maximum.
    pub pairs_max: usize,
    /// Runaway bodies parked over the run (each time one was parked; see
    /// [`Runaway`](crate::Runaway)).
    pub parked: usize,
    /// Fastest step, milliseconds.
    pub ms_min: f64,
    /// Median step, milliseconds (to 0.1%: streamed in constant memory).
    pub ms_median: f64,
    /// Slowest step, milliseconds (the first step builds the static grid).
    pub ms_max: f64,
    /// All steps, milliseconds.
    pub ms_total: f64,
    /// Median step time per frame, nanoseconds.
    pub ns_per_frame: f64,
    /// Building the world (assets included), milliseconds.
    pub build_ms: f64,
    /// The grid's base cell size after the run.
    pub cell_size: f64,
    /// Bytes held by the broad phase after the run.
    pub broad_phase_bytes: usize,
    /// Threads available to the world (1 without the `parallel` feature).
    pub threads: usize,
    /// What each contact carried: `ExactBox`, `Interval` or `Candidates`.
    pub detail: String,
    /// The safety distance checked before each step, if any.
    pub tolerance: Option<f64>,
    /// Pairs of frames closer than the tolerance per step, mean.
    pub within_mean: f64,
    /// Pairs of frames closer than the tolerance per step, maximum.
    pub within_max: usize,
    /// Time spent in the tolerance queries, milliseconds (not in the steps'
    /// times).
    pub within_ms_total: f64,
}

/// Builds and runs a scene for `options.steps` steps (default: the
/// scene's), timing each step alone; hands snapshots to `observer`.
///
/// ```
/// use fmbgrid::scene::{RunOptions, Scene, run};
/// let scene = Scene::parse(
///     "dimension = 2\ndt = 0.1\nsteps = 3\n\
///      [[body]]\nshape = \"aabb\"\nmin = [0.0, 0.0]\nmax = [10.0, 1.0]\nmotion = \"fixed\"\n\
///      [[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\nposition = [5.0, 1.5]\n",
///     ".",
/// )?;
/// let summary = run(&scene, &RunOptions::default(), &mut ())?;
/// assert_eq!((summary.steps, summary.bodies, summary.pairs_max), (3, 2, 1));
/// # Ok::<(), fmbgrid::scene::SceneError>(())
/// ```
///
/// # Errors
/// As [`Scene::build_3d`], [`SceneError::Step`] when the world refuses a
/// step, [`SceneError::Output`] when the observer fails.
pub fn run(scene: &Scene, options: &RunOptions, observer: &mut dyn Observer) -> Result<Summary, SceneError> {
    if scene.dimension() == 2 {
        let (world, report) = scene.build_with(options.detail)?;
        let hands = Hands::<2> { snapshot: |o, s| o.snapshot_2d(s), contacts: |o, k, c| o.contacts_2d(k, c) };
        run_world(scene, world, report, options, observer, hands)
    } else {
        let (world, report) = scene.build_with(options.detail)?;
        let hands = Hands::<3> { snapshot: |o, s| o.snapshot_3d(s), contacts: |o, k, c| o.contacts_3d(k, c) };
        run_world(scene, world, report, options, observer, hands)
    }
}

/// The observer's methods for one dimension.
struct Hands<const D: usize> {
    snapshot: fn(&mut dyn Observer, &Snapshot<D>) -> Result<(), String>,
    contacts: fn(&mut dyn Observer, usize, &[Contact<D>]) -> Result<(), String>,
}

fn run_world<const D: usize>(
    scene: &Scene,
    mut world: World<D>,
    report: BuildReport,
    options: &RunOptions,
    observer: &mut dyn Observer,
    hands: Hands<D>,
) -> Result<Summary, SceneError> {
    let output = |step: usize, message: String| SceneError::Output { file: scene.file.clone(), step, message };
    let steps = options.steps.unwrap_or(scene.steps());
    let moving: Vec<_> = world.bodies().filter(|(_, b)| b.motion() == Motion::Moving).map(|(h, _)| h).collect();
    // Streamed: nothing is kept per step, however many are asked for.
    let mut stats = StepStats::new();
    let mut parked = 0;
    let tolerance = options.tolerance.or(scene.tolerance());
    let (mut within_total, mut within_max, mut within_ms) = (0usize, 0usize, 0.0);
    for step in 1..=steps {
        if let Some(every) = scene.spec.reverse_every
            && step > 1
            && (step - 1).is_multiple_of(every)
        {
            for &h in &moving {
                // Listed from the world just above; moving: cannot fail.
                if let Ok(v) = world.body(h).map(|b| b.velocity()) {
                    let _ = world.set_velocity(h, v.map(|x| -x));
                }
            }
        }
        let snap = options.snapshot_steps.contains(&step);
        let frames = if snap { placed_frames(&world) } else { Vec::new() };
        let mut near = Vec::new();
        if let Some(delta) = tolerance {
            let started = Instant::now();
            let found = world.pairs_within(delta).map_err(|source| SceneError::Step {
                file: scene.file.clone(),
                step,
                source,
            })?;
            within_ms += started.elapsed().as_secs_f64() * 1e3;
            (within_total, within_max) = (within_total + found.len(), within_max.max(found.len()));
            if snap {
                near = found.to_vec();
            }
        }
        let started = Instant::now();
        let contacts =
            world.step(scene.dt()).map_err(|source| SceneError::Step { file: scene.file.clone(), step, source })?;
        stats.add(started.elapsed().as_secs_f64() * 1e3, contacts.len());
        let contacts = world.contacts();
        (hands.contacts)(observer, step, contacts).map_err(|m| output(step, m))?;
        parked += world.parked().len();
        if snap {
            let index: HashMap<FrameId, usize> = frames.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
            let mut colliding = vec![false; frames.len()];
            for c in contacts {
                for id in [c.a, c.b] {
                    if let Some(&i) = index.get(&id) {
                        colliding[i] = true;
                    }
                }
            }
            let fixed = frames.iter().map(|(id, _)| world.body(id.body).is_ok_and(|b| b.motion() == Motion::Fixed));
            let snapshot = Snapshot {
                scene: scene.name().to_string(),
                step,
                bodies: world.len(),
                fixed: fixed.collect(),
                frames: frames.into_iter().map(|(_, f)| f).collect(),
                colliding,
                contacts: contacts.to_vec(),
                near,
            };
            (hands.snapshot)(observer, &snapshot).map_err(|m| output(step, m))?;
        }
        observer.progress(step, steps);
    }
    let median = stats.ms_median();
    Ok(Summary {
        scene: scene.name().to_string(),
        dimension: D,
        bodies: report.bodies,
        frames: report.frames,
        degenerate_skipped: report.degenerate,
        invalid_skipped: report.invalid,
        steps,
        dt: scene.dt(),
        pairs_mean: stats.pairs_mean(),
        pairs_max: stats.pairs_max,
        parked,
        ms_min: stats.ms_min(),
        ms_median: median,
        ms_max: stats.ms_max,
        ms_total: stats.ms_total,
        ns_per_frame: median * 1e6 / report.frames.max(1) as f64,
        build_ms: report.build_ms,
        cell_size: world.cell_size(),
        broad_phase_bytes: world.broad_phase_memory(),
        threads: threads(),
        detail: format!("{:?}", world.config().detail),
        tolerance,
        within_mean: within_total as f64 / steps.max(1) as f64,
        within_max,
        within_ms_total: within_ms,
    })
}

fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// Every frame of the world with its id, placed at its body's pose.
fn placed_frames<const D: usize>(world: &World<D>) -> Vec<(FrameId, Frame<D>)> {
    let mut out = Vec::new();
    for (h, body) in world.bodies() {
        for index in 0..body.frames().len() as u32 {
            let id = FrameId { body: h, index };
            if let Ok(f) = world.frame(id) {
                out.push((id, f));
            }
        }
    }
    out
}
