//! How long each stage of the last step took (Box2D's `b2Profile`): the
//! instrument of the broad phase's work, read by `scene_bench`.

use std::time::{Duration, Instant};

/// Wall-clock time of each stage of the last [`World::step`](super::World::step),
/// as `step.rs` numbers them. A step that repeated the last one's results
/// (nothing moved) times only `total`.
///
/// ```
/// use fmbgrid::{Body, Frame2, World2, WorldConfig};
/// let mut world = World2::new(WorldConfig::default());
/// world.insert(Body::moving(vec![Frame2::from_aabb([0.0, 0.0], [1.0, 1.0])?]).with_velocity([1.0, 0.0]))?;
/// world.step(0.1)?;
/// let p = world.profile();
/// assert!(p.check + p.broad + p.narrow + p.events + p.advance <= p.total);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepProfile {
    /// Step 1: the displacements computed and checked (runaways).
    pub check: Duration,
    /// The stores brought up to date with inserted, removed or re-posed
    /// bodies (compaction, cell size, the fixed frames' list).
    pub refresh: Duration,
    /// Steps 2–3: swept boxes, fat boxes, the grids and the kept pairs.
    pub broad: Duration,
    /// Steps 4–5: candidate pairs and the narrow phase on each.
    pub narrow: Duration,
    /// Step 6: contacts gathered in order, body pairs and events.
    pub events: Duration,
    /// Step 7: the moving frames and bodies advance.
    pub advance: Duration,
    /// The whole step.
    pub total: Duration,
}

/// A stopwatch over the stages of one step.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lap {
    start: Instant,
    last: Instant,
}

impl Lap {
    /// Starts timing a step.
    pub fn start() -> Self {
        let now = Instant::now();
        Lap { start: now, last: now }
    }

    /// The time since the last lap (or the start); a new lap begins.
    pub fn lap(&mut self) -> Duration {
        let now = Instant::now();
        now - std::mem::replace(&mut self.last, now)
    }

    /// The time since the start.
    pub fn total(&self) -> Duration {
        self.start.elapsed()
    }
}
