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
//! run(&scene, &RunOptions { steps: None, snapshot_steps: vec![1], ..RunOptions::default() }, &mut exporter)?;
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
use crate::{Aabb, Frame, FrameKind};

/// Size of the PNG snapshots, pixels.
pub const PNG_SIZE: (u32, u32) = (1024, 768);

/// Writes `<scene>_step<k>.svg` and `.png` into `dir` (created if needed).
///
/// # Errors
/// I/O errors.
pub fn write_2d(dir: &Path, snapshot: &Snapshot<2>) -> io::Result<Vec<PathBuf>> {
    write(dir, snapshot, "svg", svg, png_2d)
}

/// Writes `<scene>_step<k>.ply` and `.png` into `dir` (created if needed).
///
/// # Errors
/// I/O errors.
pub fn write_3d(dir: &Path, snapshot: &Snapshot<3>) -> io::Result<Vec<PathBuf>> {
    write(dir, snapshot, "ply", ply, png_3d)
}

/// Writes `<stem>.<ext>` from `text`, then `<stem>.png`; returns both paths
/// in that order.
fn write<const D: usize>(
    dir: &Path,
    snapshot: &Snapshot<D>,
    ext: &str,
    text: fn(&Snapshot<D>) -> String,
    png: fn(&Snapshot<D>, u32, u32) -> io::Result<Vec<u8>>,
) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let stem = stem(dir, &snapshot.scene, snapshot.step);
    let text_path = stem.with_extension(ext);
    std::fs::write(&text_path, text(snapshot))?;
    let png_path = stem.with_extension("png");
    std::fs::write(&png_path, png(snapshot, PNG_SIZE.0, PNG_SIZE.1)?)?;
    Ok(vec![text_path, png_path])
}

fn stem(dir: &Path, scene: &str, step: usize) -> PathBuf {
    // At most 64 characters: a long scene name must not make file names
    // the file system refuses.
    let name: String =
        scene.chars().take(64).map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
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

    /// Keeps the files of one export, or turns its error into the run's
    /// message.
    fn record(&mut self, files: io::Result<Vec<PathBuf>>) -> Result<(), String> {
        let files = files.map_err(|e| format!("export to {}: {e}", self.dir.display()))?;
        self.written.extend(files);
        Ok(())
    }
}

impl Observer for Exporter {
    fn snapshot_2d(&mut self, snapshot: &Snapshot<2>) -> Result<(), String> {
        self.record(write_2d(&self.dir, snapshot))
    }

    fn snapshot_3d(&mut self, snapshot: &Snapshot<3>) -> Result<(), String> {
        self.record(write_3d(&self.dir, snapshot))
    }
}

/// A frame's vertices in [`Frame::vertices`] order.
fn vertices<const D: usize>(f: &Frame<D>) -> Vec<[f64; D]> {
    f.vertices().collect()
}

/// Edges of a frame, as pairs of indices into [`Frame::vertices`].
fn edges<const D: usize>(f: &Frame<D>) -> Vec<(usize, usize)> {
    match f.kind() {
        // A cuboid frame's vertices are numbered like a box's corners.
        FrameKind::Cuboid => box_edges::<D>().collect(),
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

/// The `2^D` corners of a box (bit `i` of the index: max on axis `i`).
fn box_corners<const D: usize>(b: &Aabb<D>) -> impl Iterator<Item = [f64; D]> + '_ {
    (0..1usize << D).map(|m| std::array::from_fn(|i| if m & (1 << i) != 0 { b.max[i] } else { b.min[i] }))
}

/// The `D * 2^(D-1)` edges of [`box_corners`]: the pairs of corners that
/// differ in bit `i` only, lower first, axis by axis (this order is the
/// PLY's edge order, hence part of its bytes).
fn box_edges<const D: usize>() -> impl Iterator<Item = (usize, usize)> {
    (0..D).flat_map(|i| (0..1usize << D).filter(move |m| m & (1 << i) == 0).map(move |m| (m, m | (1 << i))))
}
