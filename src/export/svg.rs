//! 2D snapshots as SVG.

use std::fmt::Write;

use super::outline;
use crate::Aabb;
use crate::scene::Snapshot;

/// Width of the drawing, pixels (the height follows the scene's aspect).
const WIDTH: f64 = 1000.0;
const MARGIN: f64 = 10.0;

/// The snapshot as an SVG document: every frame outlined, the colliding
/// ones filled, the intersection boxes as dashed rectangles, and the
/// witness segments of pairs closer than the tolerance in green; y points
/// up.
pub fn svg(s: &Snapshot<2>) -> String {
    let mut bounds = Aabb::EMPTY;
    for f in &s.frames {
        bounds = bounds.union(&f.aabb());
    }
    if bounds.is_empty() {
        bounds = Aabb { min: [0.0; 2], max: [1.0; 2] };
    }
    let [w, h] = bounds.extent().map(|x| x.max(1e-9));
    let scale = (WIDTH - 2.0 * MARGIN) / w;
    let height = h * scale + 2.0 * MARGIN;
    let map = |p: [f64; 2]| (MARGIN + (p[0] - bounds.min[0]) * scale, MARGIN + (bounds.max[1] - p[1]) * scale);
    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.2}">"#
    );
    let _ = writeln!(
        out,
        "<title>{} step {}: {} frames, {} contacts</title>",
        escape(&s.scene),
        s.step,
        s.frames.len(),
        s.contacts.len()
    );
    let _ = writeln!(out, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(out, r##"<g stroke="#333333" stroke-width="0.6">"##);
    for (f, &hit) in s.frames.iter().zip(&s.colliding) {
        let points: Vec<String> = outline(f)
            .into_iter()
            .map(|p| {
                let (x, y) = map(p);
                format!("{x:.2},{y:.2}")
            })
            .collect();
        let fill = if hit { r##" fill="#e4572e" fill-opacity="0.6""## } else { r#" fill="none""# };
        let _ = writeln!(out, r#"<polygon points="{}"{fill}/>"#, points.join(" "));
    }
    let _ = writeln!(out, "</g>");
    let _ = writeln!(out, r##"<g fill="none" stroke="#1f4fd1" stroke-width="1" stroke-dasharray="4 2">"##);
    for c in &s.contacts {
        let (x0, y1) = map(c.aabb.min);
        let (x1, y0) = map(c.aabb.max);
        let _ = writeln!(out, r#"<rect x="{x0:.2}" y="{y0:.2}" width="{:.2}" height="{:.2}"/>"#, x1 - x0, y1 - y0);
    }
    let _ = writeln!(out, "</g>");
    // Pairs closer than the tolerance: their closest points, joined.
    let _ = writeln!(out, r##"<g stroke="#14963c" stroke-width="1.5" fill="#14963c">"##);
    for p in &s.near {
        let ((x0, y0), (x1, y1)) = (map(p.on_a), map(p.on_b));
        let _ = writeln!(out, r#"<line x1="{x0:.2}" y1="{y0:.2}" x2="{x1:.2}" y2="{y1:.2}"/>"#);
        let _ =
            writeln!(out, r#"<circle cx="{x0:.2}" cy="{y0:.2}" r="1.5"/><circle cx="{x1:.2}" cy="{y1:.2}" r="1.5"/>"#);
    }
    let _ = writeln!(out, "</g>\n</svg>");
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
