//! Pictures of a scene at a step, from a [`Snapshot`]:
//! * 2D: an SVG with every frame outlined, the moving ones in contact
//!   filled red, the fixed ones filled light grey, and the intersection
//!   boxes as translucent blue rectangles (plus a PNG);
//! * 3D: an ASCII PLY with every frame's triangles (per-vertex colour: the
//!   moving ones in contact red) and the intersection boxes as wireframe
//!   `edge` elements, plus a PNG snapshot from a tiny software rasteriser
//!   (orthographic view from above at an angle), so that no viewer is
//!   needed.
//!
//! Every picture says what it shows: a title (scene, step, counts of
//! bodies, frames and contacts; a PLY comment line), a legend of the
//! colours (one per [`DebugKind`] shown) and, in the SVG
//! and PNG, a scale bar of a round length in world units (in 3D, true for
//! lengths parallel to the picture). Fixed frames stay grey when something
//! touches them, so that a touched ground does not turn red: the
//! intersection boxes show where. The PNGs draw the snapshot's
//! [`debug_lines`](Snapshot::debug_lines), the stream
//! [`World::debug_draw`](crate::World::debug_draw) hands a renderer.
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

mod detail;
mod font;
mod ply;
mod png;
mod svg;

use std::io;
use std::path::{Path, PathBuf};

pub use ply::ply;
pub use png::{Canvas, png_2d, png_3d};
pub use svg::svg;

use crate::scene::{Observer, Snapshot};
use crate::world::{box_corner, edge_pairs};
use crate::{Aabb, DebugKind, Frame, FrameKind};

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
    (0..1usize << D).map(|m| box_corner(b, m))
}

/// The `D * 2^(D-1)` edges of [`box_corners`], as the debug lines' boxes
/// have them: the pairs of corners that differ in bit `i` only, lower
/// first, axis by axis (this order is the PLY's edge order, hence part of
/// its bytes).
fn box_edges<const D: usize>() -> impl Iterator<Item = (usize, usize)> {
    edge_pairs::<D>(FrameKind::Cuboid).into_iter()
}

/// The colour of each kind of line, in every format and in the legends.
/// Fixed frames stay grey even in contact (darker then): a ground touched
/// everywhere must not turn red; the intersection boxes show where.
fn colour(kind: DebugKind) -> [u8; 3] {
    match kind {
        DebugKind::FixedFrame => [120, 120, 120],
        DebugKind::CollidingFixedFrame => [25, 25, 25],
        DebugKind::MovingFrame => [185, 185, 185],
        DebugKind::CollidingMovingFrame => [228, 87, 46],
        DebugKind::SweptBox => [230, 170, 0],
        DebugKind::IntersectionBox => [31, 79, 209],
        DebugKind::Witness => [20, 150, 60],
    }
}

/// `#rrggbb`.
fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The picture's title: scene, step and counts, on one line.
fn title<const D: usize>(s: &Snapshot<D>) -> String {
    // One line: a PLY comment ends at the line's end.
    let scene: String = s.scene.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let mut t = format!(
        "{scene}, step {}: {} bodies, {} frames, {} contacts",
        s.step,
        s.bodies,
        s.frames.len(),
        s.contacts.len()
    );
    if !s.near.is_empty() {
        t.push_str(&format!(", {} pairs within tolerance", s.near.len()));
    }
    t
}

/// The kinds of line a snapshot's SVG and PLY show: every frame's, the
/// intersection boxes' and the witness segments'.
fn kinds<const D: usize>(s: &Snapshot<D>) -> impl Iterator<Item = DebugKind> + '_ {
    let boxes = s.contacts.first().map(|_| DebugKind::IntersectionBox);
    let near = s.near.first().map(|_| DebugKind::Witness);
    (0..s.frames.len()).map(|i| s.frame_kind(i)).chain(boxes).chain(near)
}

/// A legend's entries: the kinds drawn, each once, in drawing order.
fn legend(drawn: impl Iterator<Item = DebugKind>) -> Vec<DebugKind> {
    let mut shown = [false; DebugKind::ALL.len()];
    for kind in drawn {
        shown[kind as usize] = true;
    }
    DebugKind::ALL.into_iter().filter(|&k| shown[k as usize]).collect()
}

/// A round length for a scale bar: the largest 1, 2 or 5 × 10^k not above
/// `at_most` (world units); `None` unless `at_most` is positive and finite.
fn scale_length(at_most: f64) -> Option<f64> {
    if !(at_most.is_finite() && at_most > 0.0) {
        return None;
    }
    // `log10` may land just below an exact power of ten: try the decade
    // above too.
    let k = at_most.log10().floor() as i32;
    [k + 1, k].into_iter().flat_map(|e| [5.0, 2.0, 1.0].map(|m| m * 10f64.powi(e))).find(|&l| l <= at_most)
}

/// A scale bar's label: `5 units`, `0.02 units`, `2e7 units`.
fn scale_label(length: f64) -> String {
    // The leading digit's decade (nudged: `log10` of a power of ten may
    // land an ulp below it).
    let k = (length.log10() + 1e-9).floor() as i32;
    if (-4..=6).contains(&k) {
        // Enough decimals for 0.0005, none for 500.
        format!("{:.*} units", (-k).max(0) as usize, length)
    } else {
        format!("{length:e} units")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_bars_have_round_lengths() {
        assert_eq!(scale_length(7.3), Some(5.0));
        assert_eq!(scale_length(1000.0), Some(1000.0));
        assert_eq!(scale_length(199.0), Some(100.0));
        assert_eq!(scale_length(0.031), Some(0.02));
        assert_eq!(scale_length(0.0), None);
        assert_eq!(scale_length(f64::NAN), None);
        assert_eq!(scale_label(5.0), "5 units");
        assert_eq!(scale_label(0.02), "0.02 units");
        assert_eq!(scale_label(0.0005), "0.0005 units");
        assert_eq!(scale_label(0.01), "0.01 units");
        assert_eq!(scale_label(2000.0), "2000 units");
        assert_eq!(scale_label(2e7), "2e7 units");
    }

    #[test]
    fn titles_are_one_line_with_the_counts() {
        let unit = Frame::from_aabb([0.0; 2], [1.0; 2]).unwrap();
        let s = Snapshot {
            scene: "two\nlines".to_string(),
            step: 3,
            bodies: 2,
            frames: vec![unit, unit],
            fixed: vec![true, false],
            colliding: vec![true, true],
            contacts: vec![],
            near: vec![],
        };
        assert_eq!(title(&s), "two lines, step 3: 2 bodies, 2 frames, 0 contacts");
        assert_eq!(legend(kinds(&s)), [DebugKind::CollidingFixedFrame, DebugKind::CollidingMovingFrame]);
    }
}
