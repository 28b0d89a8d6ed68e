//! 3D snapshots as ASCII PLY.

use std::fmt::Write;

use super::{box_corners, box_edges, colour, kinds, legend, title, triangles, vertices};
use crate::DebugKind;
use crate::scene::Snapshot;

/// The snapshot as an ASCII PLY: every frame's surface triangles
/// (`face`), each frame's vertices coloured by its kind (moving frames in
/// contact red, the others greys; per-vertex colour), then the
/// intersection boxes' corners and their wireframe as `edge` elements
/// (blue), and with a tolerance the closest points of each pair closer
/// than it, joined by a green `edge`. PLY has no text: the title and the
/// legend are `comment` lines of the header.
pub fn ply(s: &Snapshot<3>) -> String {
    let frame_vertices: usize = s.frames.iter().map(|f| f.vertex_count()).sum();
    let faces: usize = s.frames.iter().map(|f| triangles(f).len()).sum();
    let box_vertices = 8 * s.contacts.len() + 2 * s.near.len();
    let mut out = String::with_capacity(40 * (frame_vertices + box_vertices) + 16 * faces);
    let _ = writeln!(out, "ply\nformat ascii 1.0\ncomment fmbgrid: {}", title(s));
    for kind in legend(kinds(s)) {
        let [r, g, b] = colour(kind);
        let _ = writeln!(out, "comment colour {r} {g} {b}: {}", kind.label());
    }
    let _ = write!(
        out,
        "element vertex {}\nproperty float x\nproperty float y\nproperty float z\n\
         property uchar red\nproperty uchar green\nproperty uchar blue\n\
         element face {faces}\nproperty list uchar int vertex_indices\n\
         element edge {}\nproperty int vertex1\nproperty int vertex2\n\
         property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n",
        frame_vertices + box_vertices,
        12 * s.contacts.len() + s.near.len(),
    );
    let point = |out: &mut String, p: [f64; 3], c: [u8; 3]| {
        let _ = writeln!(out, "{} {} {} {} {} {}", p[0] as f32, p[1] as f32, p[2] as f32, c[0], c[1], c[2]);
    };
    for (i, f) in s.frames.iter().enumerate() {
        for p in vertices(f) {
            point(&mut out, p, colour(s.frame_kind(i)));
        }
    }
    let (boxes, near) = (colour(DebugKind::IntersectionBox), colour(DebugKind::Witness));
    for c in &s.contacts {
        for p in box_corners(&c.aabb) {
            point(&mut out, p, boxes);
        }
    }
    for p in &s.near {
        point(&mut out, p.on_a, near);
        point(&mut out, p.on_b, near);
    }
    let mut base = 0;
    for f in &s.frames {
        for [a, b, c] in triangles(f) {
            let _ = writeln!(out, "3 {} {} {}", base + a, base + b, base + c);
        }
        base += f.vertex_count();
    }
    for _ in &s.contacts {
        for (a, b) in box_edges::<3>() {
            let _ = writeln!(out, "{} {} {} {} {}", base + a, base + b, boxes[0], boxes[1], boxes[2]);
        }
        base += 8;
    }
    for _ in &s.near {
        let _ = writeln!(out, "{} {} {} {} {}", base, base + 1, near[0], near[1], near[2]);
        base += 2;
    }
    out
}
