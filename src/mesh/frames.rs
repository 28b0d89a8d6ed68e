//! From meshes to frames and volumes.

use super::Mesh;
use crate::Frame3;
use crate::math::{cross, dot, norm, sub};

/// What [`Mesh::tetrahedron_frames`], [`Mesh::shell_frames`] and
/// [`Mesh::frames`] did with the mesh's elements: every element is counted
/// exactly once, in one of the three fields.
///
/// ```
/// use fmbgrid::mesh::{FrameReport, Mesh};
/// let mesh = Mesh {
///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
///     triangles: vec![],
///     tetrahedra: vec![[0, 1, 2, 3], [0, 1, 2, 2], [0, 1, 2, 9]],
/// };
/// let (frames, report) = mesh.tetrahedron_frames();
/// assert_eq!(report, FrameReport { frames: 1, degenerate: 1, invalid: 1 });
/// assert_eq!(frames.len(), report.frames);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameReport {
    /// Frames built.
    pub frames: usize,
    /// Elements skipped because their frame was refused by
    /// [`Frame::new`](crate::Frame::new): zero or tiny volume, repeated
    /// vertices, non-finite or too large coordinates.
    pub degenerate: usize,
    /// Elements skipped because a vertex index is out of range.
    pub invalid: usize,
}

impl FrameReport {
    fn count(&mut self, frame: Option<Result<Frame3, crate::FrameError>>, out: &mut Vec<Frame3>) {
        match frame {
            None => self.invalid += 1,
            Some(Err(_)) => self.degenerate += 1,
            Some(Ok(f)) => {
                self.frames += 1;
                out.push(f);
            }
        }
    }
}

impl Mesh {
    /// The vertices of an element, or `None` when an index is out of range.
    fn corners<const N: usize>(&self, element: &[u32; N]) -> Option<[[f64; 3]; N]> {
        let mut out = [[0.0; 3]; N];
        for (o, &i) in out.iter_mut().zip(element) {
            *o = *self.vertices.get(i as usize)?;
        }
        Some(out)
    }

    /// One tetrahedron frame per element of [`tetrahedra`](Mesh::tetrahedra),
    /// with the element's first vertex as origin.
    ///
    /// Elements [`Frame::new`](crate::Frame::new) refuses (flat, repeated
    /// vertices, ...) are skipped and counted as degenerate; elements with an
    /// index out of range are skipped and counted as invalid.
    ///
    /// ```
    /// use fmbgrid::mesh::Mesh;
    /// let mesh = Mesh {
    ///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    ///     triangles: vec![],
    ///     tetrahedra: vec![[0, 1, 2, 3]],
    /// };
    /// let (frames, report) = mesh.tetrahedron_frames();
    /// assert_eq!((frames.len(), report.frames), (1, 1));
    /// ```
    pub fn tetrahedron_frames(&self) -> (Vec<Frame3>, FrameReport) {
        let mut report = FrameReport::default();
        let mut out = Vec::with_capacity(self.tetrahedra.len());
        for t in &self.tetrahedra {
            report.count(self.corners(t).map(|v| Frame3::simplex(&v)), &mut out);
        }
        (out, report)
    }

    /// One thin tetrahedron per triangle, for surface meshes: the triangle
    /// `a, b, c` plus the apex `(a + b + c) / 3 + thickness · n`, where `n` is
    /// the triangle's unit normal `(b - a) × (c - a) / |…|` (outward for
    /// counter-clockwise faces, so a positive `thickness` thickens the shell
    /// outwards and a negative one inwards). The FMB paper's bunny demo turns
    /// the Stanford bunny's surface into frames this way: thin tetrahedra
    /// standing on the triangles.
    ///
    /// Triangles [`Frame::new`](crate::Frame::new) refuses are skipped and
    /// counted as degenerate: zero-area triangles, and also every triangle
    /// when `thickness` is zero or not finite, or so small next to the
    /// triangle (below about 1e-6 of its size, see
    /// [`MIN_HADAMARD_RATIO`](crate::frame::MIN_HADAMARD_RATIO)) that the
    /// tetrahedron is numerically flat. Triangles with an index out of range
    /// are counted as invalid.
    ///
    /// ```
    /// use fmbgrid::mesh::Mesh;
    /// let mesh = Mesh {
    ///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [2.0, 0.0, 0.0]],
    ///     triangles: vec![[0, 1, 2], [0, 1, 3]], // the second one is flat
    ///     tetrahedra: vec![],
    /// };
    /// let (frames, report) = mesh.shell_frames(0.1);
    /// assert_eq!((report.frames, report.degenerate), (1, 1));
    /// assert!((frames[0].aabb().max[2] - 0.1).abs() < 1e-15); // apex above the xy plane
    /// ```
    pub fn shell_frames(&self, thickness: f64) -> (Vec<Frame3>, FrameReport) {
        let mut report = FrameReport::default();
        let mut out = Vec::with_capacity(self.triangles.len());
        for t in &self.triangles {
            let frame = self.corners(t).map(|[a, b, c]| {
                let n = cross(&sub(&b, &a), &sub(&c, &a));
                let len = norm(&n);
                // A zero (or non-finite) normal leaves a flat apex that
                // `Frame::new` refuses: the triangle counts as degenerate.
                let s = if len > 0.0 { thickness / len } else { 0.0 };
                let apex: [f64; 3] = std::array::from_fn(|k| (a[k] + b[k] + c[k]) / 3.0 + s * n[k]);
                Frame3::simplex(&[a, b, c, apex])
            });
            report.count(frame, &mut out);
        }
        (out, report)
    }

    /// The mesh's frames: [`tetrahedron_frames`](Mesh::tetrahedron_frames)
    /// when it has tetrahedra, else [`shell_frames`](Mesh::shell_frames)
    /// with `thickness` (unused for volume meshes).
    ///
    /// ```
    /// use fmbgrid::mesh::Mesh;
    /// let surface = Mesh {
    ///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    ///     triangles: vec![[0, 1, 2]],
    ///     tetrahedra: vec![],
    /// };
    /// assert_eq!(surface.frames(0.01).1.frames, 1);
    /// ```
    pub fn frames(&self, thickness: f64) -> (Vec<Frame3>, FrameReport) {
        if self.tetrahedra.is_empty() { self.shell_frames(thickness) } else { self.tetrahedron_frames() }
    }

    /// Total volume of the tetrahedra, `Σ |det(b - a, c - a, d - a)| / 6`
    /// (elements with an index out of range are left out).
    ///
    /// ```
    /// use fmbgrid::mesh::Mesh;
    /// let mesh = Mesh {
    ///     vertices: vec![[0.0; 3], [2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0]],
    ///     triangles: vec![],
    ///     tetrahedra: vec![[0, 2, 1, 3]], // orientation does not matter
    /// };
    /// assert_eq!(mesh.tetrahedra_volume(), 1.0);
    /// ```
    pub fn tetrahedra_volume(&self) -> f64 {
        let volume = |[a, b, c, d]: [[f64; 3]; 4]| dot(&sub(&b, &a), &cross(&sub(&c, &a), &sub(&d, &a))).abs() / 6.0;
        self.tetrahedra.iter().filter_map(|t| self.corners(t)).map(volume).sum()
    }

    /// The volume enclosed by the triangles, by the divergence theorem:
    /// `Σ (a - o) · ((b - o) × (c - o)) / 6` over the triangles, with `o` the
    /// centre of the mesh's box (any point gives the same sum for a closed
    /// surface; a central one keeps round-off small).
    ///
    /// Only meaningful for a closed, consistently oriented surface; it is
    /// positive when the triangles are counter-clockwise seen from outside
    /// and negative when they all face inwards. Triangles with an index out
    /// of range are left out.
    ///
    /// ```
    /// use fmbgrid::mesh::Mesh;
    /// let tet = Mesh {
    ///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    ///     triangles: vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
    ///     tetrahedra: vec![],
    /// };
    /// assert!((tet.enclosed_volume() - 1.0 / 6.0).abs() < 1e-15);
    /// ```
    pub fn enclosed_volume(&self) -> f64 {
        let Some(b) = self.aabb() else { return 0.0 };
        let o: [f64; 3] = std::array::from_fn(|k| 0.5 * (b.min[k] + b.max[k]));
        let volume = |[a, b, c]: [[f64; 3]; 3]| dot(&sub(&a, &o), &cross(&sub(&b, &o), &sub(&c, &o))) / 6.0;
        self.triangles.iter().filter_map(|t| self.corners(t)).map(volume).sum()
    }
}
