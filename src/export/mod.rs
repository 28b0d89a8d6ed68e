//! Pictures of a scene at a step, from a [`Snapshot`]:
//! * 2D: an SVG with every frame outlined, the colliding ones filled, and
//!   the intersection boxes as dashed rectangles (plus a PNG);
//! * 3D: an ASCII PLY with every frame's triangles (colliding ones red,
//!   per-vertex colour) and the intersection boxes as wireframe `edge`
//!   elements, plus a PNG snapshot from a tiny software rasteriser
//!   (orthographic view from above at an angle), so that no viewer is
//!   needed.
//!
//! ```
//! use fmbgrid::scene::{RunOptions, Scene, run};
//! use fmbgrid::export::Exporter;
//! let scene = Scene::parse(
//!     "dimension = 2\ndt = 0.1\nsteps = 1\n[[body]]\nshape = \"aabb\"\nmin = [-1.0, -1.0]\nmax = [1.0, 1.0]\n\
//!      motion = \"fixed\"\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\nposition = [1.5, 0.0]\n",
//!     ".",
//! )?;
//! let dir = std::env::temp_dir().join("fmbgrid_export_doctest");
//! let mut exporter = Exporter::new(&dir);
//! run(&scene, &RunOptions { steps: None, snapshot_steps: vec![1] }, &mut exporter)?;
//! assert_eq!(exporter.written().len(), 2); // .svg and .png
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ply;
mod png;
mod svg;

use std::io;
use std::path::{Path, PathBuf};

pub use ply::ply;
pub use png::{Canvas, png_2d, png_3d};
pub use svg::svg;

use crate::scene::{Observer, Snapshot};
use crate::{Frame, FrameKind};

/// Size of the PNG snapshots, pixels.
pub const PNG_SIZE: (u32, u32) = (1024, 768);

/// Writes `<scene>_step<k>.svg` and `.png` into `dir` (created if needed).
///
/// # Errors
/// I/O errors.
pub fn write_2d(dir: &Path, snapshot: &Snapshot<2>) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let stem = stem(dir, &snapshot.scene, snapshot.step);
    let svg_path = stem.with_extension("svg");
    std::fs::write(&svg_path, svg(snapshot))?;
    let png_path = stem.with_extension("png");
    std::fs::write(&png_path, png_2d(snapshot, PNG_SIZE.0, PNG_SIZE.1)?)?;
    Ok(vec![svg_path, png_path])
}

/// Writes `<scene>_step<k>.ply` and `.png` into `dir` (created if needed).
///
/// # Errors
/// I/O errors.
pub fn write_3d(dir: &Path, snapshot: &Snapshot<3>) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let stem = stem(dir, &snapshot.scene, snapshot.step);
    let ply_path = stem.with_extension("ply");
    std::fs::write(&ply_path, ply(snapshot))?;
    let png_path = stem.with_extension("png");
    std::fs::write(&png_path, png_3d(snapshot, PNG_SIZE.0, PNG_SIZE.1)?)?;
    Ok(vec![ply_path, png_path])
}

fn stem(dir: &Path, scene: &str, step: usize) -> PathBuf {
    let name: String = scene.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    dir.join(format!("{name}_step{step:05}"))
}

/// An [`Observer`] writing every snapshot into a folder.
#[derive(Clone, Debug)]
pub struct Exporter {
    dir: PathBuf,
    written: Vec<PathBuf>,
}

impl Exporter {
    /// Exports into `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Exporter { dir: dir.into(), written: Vec::new() }
    }

    /// The files written so far.
    pub fn written(&self) -> &[PathBuf] {
        &self.written
    }
}

impl Observer for Exporter {
    fn snapshot_2d(&mut self, snapshot: &Snapshot<2>) -> Result<(), String> {
        let files = write_2d(&self.dir, snapshot).map_err(|e| format!("export to {}: {e}", self.dir.display()))?;
        self.written.extend(files);
        Ok(())
    }

    fn snapshot_3d(&mut self, snapshot: &Snapshot<3>) -> Result<(), String> {
        let files = write_3d(&self.dir, snapshot).map_err(|e| format!("export to {}: {e}", self.dir.display()))?;
        self.written.extend(files);
        Ok(())
    }
}

/// A frame's vertices in [`Frame::vertices`] order.
fn vertices<const D: usize>(f: &Frame<D>) -> Vec<[f64; D]> {
    f.vertices().collect()
}

/// Edges of a frame, as pairs of indices into [`Frame::vertices`].
fn edges<const D: usize>(f: &Frame<D>) -> Vec<(usize, usize)> {
    match f.kind() {
        FrameKind::Cuboid => {
            let n = 1usize << D;
            (0..n).flat_map(|m| (0..D).filter(move |i| m & (1 << i) == 0).map(move |i| (m, m | (1 << i)))).collect()
        }
        FrameKind::Tetrahedron => (0..=D).flat_map(|a| (a + 1..=D).map(move |b| (a, b))).collect(),
    }
}

/// Triangles of a 3D frame's surface, as indices into [`Frame::vertices`].
fn triangles(f: &Frame<3>) -> Vec<[usize; 3]> {
    match f.kind() {
        FrameKind::Cuboid => {
            let mut out = Vec::with_capacity(12);
            for i in 0..3 {
                let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                for side in [0, 1 << i] {
                    let q = [side, side | (1 << j), side | (1 << j) | (1 << k), side | (1 << k)];
                    out.push([q[0], q[1], q[2]]);
                    out.push([q[0], q[2], q[3]]);
                }
            }
            out
        }
        FrameKind::Tetrahedron => vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
    }
}

/// Boundary of a 2D frame, in order around it.
fn outline(f: &Frame<2>) -> Vec<[f64; 2]> {
    let v = vertices(f);
    match f.kind() {
        FrameKind::Cuboid => vec![v[0], v[1], v[3], v[2]],
        FrameKind::Tetrahedron => v,
    }
}

/// The 8 corners of a 3D box (bit `i` of the index: max on axis `i`).
fn box_corners(min: [f64; 3], max: [f64; 3]) -> [[f64; 3]; 8] {
    std::array::from_fn(|m| std::array::from_fn(|i| if m & (1 << i) != 0 { max[i] } else { min[i] }))
}

/// The 12 edges of [`box_corners`].
const BOX_EDGES: [(usize, usize); 12] =
    [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)];
