//! The TOML schema of scene files (see the [module docs](super) for an
//! example). Every table refuses unknown keys.

use serde::{Deserialize, Serialize};

fn default_steps() -> usize {
    100
}

fn one() -> f64 {
    1.0
}

/// A whole scene file.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Display name (default: the file's stem).
    pub name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// 2 or 3.
    pub dimension: u8,
    /// Time step (positive, finite).
    pub dt: f64,
    /// Steps run by default (100 when absent).
    #[serde(default = "default_steps")]
    pub steps: usize,
    /// Base cell size of the grid (chosen automatically when absent).
    pub cell_size: Option<f64>,
    /// Reverse every moving body's velocity every this many steps (keeps a
    /// long run's density, as the benchmarks do).
    pub reverse_every: Option<usize>,
    /// A safety distance δ: the runner reports (and draws) every pair of
    /// frames closer than δ at the start of each step.
    pub tolerance: Option<f64>,
    /// The `[[body]]` entries.
    #[serde(default, rename = "body")]
    pub bodies: Vec<BodySpec>,
}

/// A primitive shape, in the body's local coordinates.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ShapeKind {
    /// A box centred on the origin: `half_extents`.
    Box,
    /// A 3D simplex: `vertices` (4 of them).
    Tetrahedron,
    /// A 2D simplex: `vertices` (3 of them).
    Triangle,
    /// An axis-aligned box: `min` and `max`.
    Aabb,
}

/// Fixed or moving.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MotionSpec {
    /// Never moves; no velocity.
    Fixed,
    /// Translates by its velocity each step (the default).
    #[default]
    Moving,
}

/// One `[[body]]` entry: a shape or an asset, placed once or repeated by
/// `grid` or `scatter`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// A primitive (exclusive with `asset`).
    pub shape: Option<ShapeKind>,
    /// Half extents of a `box`.
    pub half_extents: Option<Vec<f64>>,
    /// Vertices of a `tetrahedron` or `triangle`.
    pub vertices: Option<Vec<Vec<f64>>>,
    /// Lower corner of an `aabb`.
    pub min: Option<Vec<f64>>,
    /// Upper corner of an `aabb`.
    pub max: Option<Vec<f64>>,
    /// A mesh file, relative to the scene file (3D only).
    pub asset: Option<String>,
    /// Thickness given to the triangles of a surface mesh (thin shells);
    /// without it a surface mesh needs its tetrahedralisation beside it.
    pub thickness: Option<f64>,
    /// Uniform scale of the shape or asset (default 1).
    #[serde(default = "one")]
    pub scale: f64,
    /// `"fixed"` or `"moving"` (default).
    #[serde(default)]
    pub motion: MotionSpec,
    /// Translation (default: the origin).
    pub position: Option<Vec<f64>>,
    /// `[angle]` in 2D, `[axis_x, axis_y, axis_z, angle]` in 3D (radians).
    pub rotation: Option<Vec<f64>>,
    /// Velocity (moving bodies only).
    pub velocity: Option<Vec<f64>>,
    /// Angular velocity in radians per unit time about the body's position
    /// (moving bodies only): `[omega]` in 2D, a rotation vector `[x, y, z]`
    /// in 3D. The body turns within each step (see `fmbgrid::Spin`).
    pub angular_velocity: Option<Vec<f64>>,
    /// Repeat on a regular grid.
    pub grid: Option<GridSpec>,
    /// Repeat at seeded random places.
    pub scatter: Option<ScatterSpec>,
}

/// `grid = { count = [nx, ny, nz], spacing = [sx, sy, sz] }`: copies at
/// `position + (i·sx, j·sy, k·sz)`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// Copies along each axis.
    pub count: Vec<usize>,
    /// Distance between copies along each axis.
    pub spacing: Vec<f64>,
}

/// `scatter = { count, seed, min, max, ... }`: copies at uniformly random
/// places in `[min, max]` (offset by `position`), from a seeded
/// deterministic generator (SplitMix64).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScatterSpec {
    /// Number of copies.
    pub count: usize,
    /// Seed of the generator (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Lower corner of the region.
    pub min: Vec<f64>,
    /// Upper corner of the region.
    pub max: Vec<f64>,
    /// Each velocity component gets `U(lo, hi)` added.
    pub velocity_range: Option<[f64; 2]>,
    /// Log-uniform extra scale factor in `[lo, hi]` per copy.
    pub scale_range: Option<[f64; 2]>,
    /// Uniform scale factor in `[lo, hi]` per local axis and copy.
    pub axis_scale_range: Option<[f64; 2]>,
    /// Uniformly random orientation per copy (replaces `rotation`).
    #[serde(default)]
    pub random_rotation: bool,
}
