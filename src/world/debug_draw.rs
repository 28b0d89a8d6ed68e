//! Debug drawing: the world hands a callback the line segments of its
//! frames, of the boxes the next step sweeps, and of the contacts'
//! intersection boxes, each tagged with what it belongs to, so that any
//! renderer (a game engine's gizmos, a plotter, the runner's pictures) can
//! show what the engine sees, as rapier's `DebugRenderPipeline` does.
//!
//! The edges come from the frames' own vertices ([`Frame::vertices`]), so a
//! renderer never re-derives the geometry; the kinds are decided in one
//! place ([`DebugKind::of_frame`]), shared with the `export` pictures.

use arrayvec::ArrayVec;
use hashbrown::HashSet;

use super::{Body, FrameId, Motion, Proximity, World};
use crate::aabb::Aabb;
use crate::contact::Contact;
use crate::error::WorldError;
use crate::frame::{Frame, FrameKind, MAX_COORDINATE};

/// What a [`DebugLine`] belongs to.
///
/// Frames are told apart by motion and by whether a contact names them, so
/// a renderer can keep a large fixed frame (a ground) quiet when something
/// touches it and let the intersection boxes show where.
///
/// ```
/// use fmbgrid::{DebugKind, Motion};
/// assert_eq!(DebugKind::of_frame(Motion::Fixed, true), DebugKind::CollidingFixedFrame);
/// assert!(DebugKind::CollidingMovingFrame.is_colliding());
/// assert!(!DebugKind::IntersectionBox.is_frame());
/// assert_eq!(DebugKind::SweptBox.label(), "swept box");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DebugKind {
    /// An edge of a fixed body's frame that no contact names.
    FixedFrame,
    /// An edge of a fixed body's frame named by a contact.
    CollidingFixedFrame,
    /// An edge of a moving body's frame that no contact names.
    MovingFrame,
    /// An edge of a moving body's frame named by a contact.
    CollidingMovingFrame,
    /// An edge of the box a moving frame sweeps over the next step: what
    /// the broad phase puts in its grid.
    SweptBox,
    /// An edge of a contact's box (the exact box of the intersection swept
    /// over the step, with the default [`ContactDetail`](crate::ContactDetail)).
    IntersectionBox,
    /// The segment joining the closest points of two frames closer than a
    /// tolerance ([`World::pairs_within`]).
    Witness,
}

impl DebugKind {
    /// Every kind, in declaration order (the order a painter's renderer
    /// draws them in, frames under boxes).
    ///
    /// ```
    /// use fmbgrid::DebugKind;
    /// assert_eq!(DebugKind::ALL.len(), 7);
    /// assert!(DebugKind::ALL.is_sorted());
    /// ```
    pub const ALL: [DebugKind; 7] = [
        DebugKind::FixedFrame,
        DebugKind::CollidingFixedFrame,
        DebugKind::MovingFrame,
        DebugKind::CollidingMovingFrame,
        DebugKind::SweptBox,
        DebugKind::IntersectionBox,
        DebugKind::Witness,
    ];

    /// The kind of a frame's edges: by its body's motion, and whether a
    /// contact names it.
    ///
    /// ```
    /// use fmbgrid::{DebugKind, Motion};
    /// assert_eq!(DebugKind::of_frame(Motion::Moving, false), DebugKind::MovingFrame);
    /// assert_eq!(DebugKind::of_frame(Motion::Moving, true), DebugKind::CollidingMovingFrame);
    /// ```
    pub fn of_frame(motion: Motion, colliding: bool) -> DebugKind {
        match (motion, colliding) {
            (Motion::Fixed, false) => DebugKind::FixedFrame,
            (Motion::Fixed, true) => DebugKind::CollidingFixedFrame,
            (Motion::Moving, false) => DebugKind::MovingFrame,
            (Motion::Moving, true) => DebugKind::CollidingMovingFrame,
        }
    }

    /// True for the edges of a frame (any of the four frame kinds).
    ///
    /// ```
    /// # use fmbgrid::DebugKind;
    /// assert!(DebugKind::FixedFrame.is_frame() && !DebugKind::SweptBox.is_frame());
    /// ```
    pub fn is_frame(self) -> bool {
        self <= DebugKind::CollidingMovingFrame
    }

    /// True for the edges of a frame named by a contact.
    ///
    /// ```
    /// # use fmbgrid::DebugKind;
    /// assert!(DebugKind::CollidingFixedFrame.is_colliding() && !DebugKind::MovingFrame.is_colliding());
    /// ```
    pub fn is_colliding(self) -> bool {
        matches!(self, DebugKind::CollidingFixedFrame | DebugKind::CollidingMovingFrame)
    }

    /// A short English name, for legends.
    ///
    /// ```
    /// # use fmbgrid::DebugKind;
    /// assert_eq!(DebugKind::CollidingMovingFrame.label(), "moving frame in contact");
    /// ```
    pub fn label(self) -> &'static str {
        match self {
            DebugKind::FixedFrame => "fixed frame",
            DebugKind::CollidingFixedFrame => "fixed frame in contact",
            DebugKind::MovingFrame => "moving frame",
            DebugKind::CollidingMovingFrame => "moving frame in contact",
            DebugKind::SweptBox => "swept box",
            DebugKind::IntersectionBox => "intersection box",
            DebugKind::Witness => "within tolerance",
        }
    }
}

/// A segment to draw, in world coordinates, and what it belongs to.
///
/// ```
/// use fmbgrid::{Aabb, DebugKind, DebugLine};
/// let unit = Aabb { min: [0.0, 0.0], max: [1.0, 1.0] };
/// let lines: Vec<_> = DebugLine::box_edges(&unit, DebugKind::IntersectionBox).collect();
/// assert_eq!(lines.len(), 4);
/// assert_eq!((lines[0].from, lines[0].to), ([0.0, 0.0], [1.0, 0.0]));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DebugLine<const D: usize> {
    /// One end.
    pub from: [f64; D],
    /// The other end.
    pub to: [f64; D],
    /// What the segment belongs to.
    pub kind: DebugKind,
}

impl<const D: usize> DebugLine<D> {
    /// The edges of a frame at rest (`t = 0`), tagged `kind`: 4 for a
    /// parallelogram, 3 for a triangle, 12 for a parallelepiped, 6 for a
    /// tetrahedron. A parallelepiped's edges join the vertices of
    /// [`Frame::vertices`] whose indices differ in one bit, axis by axis.
    ///
    /// ```
    /// use fmbgrid::{DebugKind, DebugLine, Frame3};
    /// let tet = Frame3::tetrahedron([0.0; 3], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])?;
    /// let edges: Vec<_> = DebugLine::frame_edges(&tet, DebugKind::MovingFrame).collect();
    /// assert_eq!(edges.len(), 6);
    /// assert_eq!((edges[0].from, edges[0].to), ([0.0; 3], [1.0, 0.0, 0.0]));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn frame_edges(frame: &Frame<D>, kind: DebugKind) -> impl Iterator<Item = DebugLine<D>> + use<D> {
        let frame = *frame;
        edge_pairs::<D>(frame.kind()).into_iter().map(move |(a, b)| DebugLine {
            from: frame.vertex(a),
            to: frame.vertex(b),
            kind,
        })
    }

    /// The `D · 2^(D-1)` edges of a box (4 in 2D, 12 in 3D), tagged `kind`,
    /// in the order of a parallelepiped's [`DebugLine::frame_edges`]. An
    /// empty box has no edges.
    ///
    /// ```
    /// use fmbgrid::{Aabb, DebugKind, DebugLine};
    /// let b = Aabb { min: [0.0; 3], max: [1.0, 2.0, 3.0] };
    /// assert_eq!(DebugLine::box_edges(&b, DebugKind::SweptBox).count(), 12);
    /// assert_eq!(DebugLine::box_edges(&Aabb::<3>::EMPTY, DebugKind::SweptBox).count(), 0);
    /// ```
    pub fn box_edges(aabb: &Aabb<D>, kind: DebugKind) -> impl Iterator<Item = DebugLine<D>> + use<D> {
        let b = *aabb;
        // An empty box's "corners" are infinities: nothing to draw.
        let pairs = if b.is_empty() { ArrayVec::new() } else { edge_pairs::<D>(FrameKind::Cuboid) };
        pairs.into_iter().map(move |(m, n)| DebugLine { from: box_corner(&b, m), to: box_corner(&b, n), kind })
    }

    /// The segment joining a close pair's closest points.
    ///
    /// ```
    /// use fmbgrid::{Body, DebugKind, DebugLine, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [4.0, 1.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([1.0, 1.5], [2.0, 2.5])?]))?;
    /// let pair = world.pairs_within(1.0)?[0];
    /// let line = DebugLine::witness(&pair);
    /// assert_eq!((line.kind, line.from[1], line.to[1]), (DebugKind::Witness, 1.0, 1.5));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn witness(pair: &Proximity<D>) -> DebugLine<D> {
        DebugLine { from: pair.on_a, to: pair.on_b, kind: DebugKind::Witness }
    }
}

/// The edges of a frame of `kind`, as pairs of indices into
/// [`Frame::vertices`]. A cuboid's vertex `m` has bit `i` set when it is
/// the far end along component `i`: its edges join the indices that differ
/// in one bit, lower first, axis by axis (the export's PLY writes boxes'
/// edges in this order). A simplex's edges join every pair of vertices.
pub(crate) fn edge_pairs<const D: usize>(kind: FrameKind) -> ArrayVec<(usize, usize), 12> {
    match kind {
        FrameKind::Cuboid => (0..D)
            .flat_map(|i| (0..1usize << D).filter(move |m| m & (1 << i) == 0).map(move |m| (m, m | (1 << i))))
            .collect(),
        FrameKind::Tetrahedron => (0..=D).flat_map(|a| (a + 1..=D).map(move |b| (a, b))).collect(),
    }
}

/// Corner `m` of a box: bit `i` of `m` picks `max` on axis `i`, as a
/// cuboid's vertices do its components.
pub(crate) fn box_corner<const D: usize>(b: &Aabb<D>, m: usize) -> [f64; D] {
    std::array::from_fn(|i| if m & (1 << i) != 0 { b.max[i] } else { b.min[i] })
}

impl<const D: usize> World<D> {
    /// Hands `line` every segment a debug view shows, in this order:
    /// 1. every frame's edges ([`DebugLine::frame_edges`]) where the frame
    ///    is now, body by body as [`World::bodies`] lists them, each body's
    ///    frames in their order; tagged by the body's motion and whether
    ///    `contacts` name the frame ([`DebugKind::of_frame`]);
    /// 2. the box each moving frame sweeps over a step of `dt`
    ///    ([`DebugKind::SweptBox`], same order): its box now, swept by its
    ///    body's velocity times `dt`, as [`World::step`] would grid it;
    ///    none for a body whose displacement is not a finite number within
    ///    range (a runaway);
    /// 3. each contact's box ([`DebugKind::IntersectionBox`]), in the order
    ///    given.
    ///
    /// Call it after a step with [`World::contacts`] (the frames have
    /// advanced: the intersection boxes span where they were and where they
    /// are), or before one with the previous step's contacts; contacts
    /// naming frames no longer in the world colour nothing. Pairs closer
    /// than a tolerance draw with [`DebugLine::witness`].
    ///
    /// # Errors
    /// [`WorldError::BadTimeStep`] for a negative or non-finite `dt`;
    /// nothing is drawn then.
    ///
    /// ```
    /// use fmbgrid::{Body, DebugKind, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([2.0, 1.5], [3.0, 2.5])?]).with_velocity([0.0, -10.0]))?;
    /// world.step(0.1)?; // falls 1 unit: into the ground
    /// let mut lines = Vec::new();
    /// world.debug_draw(world.contacts(), 0.1, |line| lines.push(line))?;
    /// let count = |kind| lines.iter().filter(|l| l.kind == kind).count();
    /// assert_eq!(count(DebugKind::CollidingFixedFrame), 4);
    /// assert_eq!(count(DebugKind::CollidingMovingFrame), 4);
    /// assert_eq!(count(DebugKind::SweptBox), 4);
    /// assert_eq!(count(DebugKind::IntersectionBox), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn debug_draw(
        &self,
        contacts: &[Contact<D>],
        dt: f64,
        mut line: impl FnMut(DebugLine<D>),
    ) -> Result<(), WorldError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(WorldError::BadTimeStep { dt });
        }
        let colliding: HashSet<FrameId> = contacts.iter().flat_map(|c| [c.a, c.b]).collect();
        for (id, body, frame) in self.placed_frames() {
            let kind = DebugKind::of_frame(body.motion(), colliding.contains(&id));
            DebugLine::frame_edges(&frame, kind).for_each(&mut line);
        }
        for (id, body, frame) in self.placed_frames().filter(|(_, b, _)| b.motion() == Motion::Moving) {
            if let Some(d) = displacement(&body.velocity(), dt) {
                // A spinning body's box holds every pose of its turn.
                let swept = match super::spin::spin_of(&self.slots, id.body.index(), dt) {
                    Some(spin) => crate::narrow::swept_aabb(&frame.moved(d), &spin),
                    None => frame.aabb().swept(&d),
                };
                DebugLine::box_edges(&swept, DebugKind::SweptBox).for_each(&mut line);
            }
        }
        for c in contacts {
            DebugLine::box_edges(&c.aabb, DebugKind::IntersectionBox).for_each(&mut line);
        }
        Ok(())
    }

    /// Every frame placed in the world, with its id and body, in body
    /// order.
    fn placed_frames(&self) -> impl Iterator<Item = (FrameId, &Body<D>, Frame<D>)> + '_ {
        self.bodies().flat_map(move |(handle, body)| {
            (0..body.frames().len() as u32).filter_map(move |index| {
                let id = FrameId { body: handle, index };
                // A live body's own frame index: the look-up succeeds.
                self.frame(id).ok().map(|f| (id, body, f))
            })
        })
    }
}

/// A body's displacement over a step of `dt`, as the step computes it;
/// `None` when it is not a finite number within range (the step parks or
/// refuses such a body).
fn displacement<const D: usize>(velocity: &[f64; D], dt: f64) -> Option<[f64; D]> {
    let d: [f64; D] = std::array::from_fn(|i| velocity[i] * dt);
    d.iter().all(|x| x.is_finite() && x.abs() <= MAX_COORDINATE).then_some(d)
}
