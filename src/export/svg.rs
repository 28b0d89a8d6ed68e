//! 2D snapshots as SVG.

use std::fmt::Write;

use super::{colour, hex, kinds, legend, outline, scale_label, scale_length, title};
use crate::scene::Snapshot;
use crate::{Aabb, DebugKind};

/// Width of the drawing, pixels (the height follows the scene's aspect).
const WIDTH: f64 = 1000.0;
const MARGIN: f64 = 10.0;
/// The title's band on top.
const TOP: f64 = 34.0;
const FONT: f64 = 14.0;
/// About a character's width in the sans-serif font, to lay the legend out.
const CHAR: f64 = 0.6 * FONT;
const ROW: f64 = 22.0;
const SWATCH: f64 = 26.0;
/// Room kept at the bottom right for the scale bar.
const SCALE_ROOM: f64 = 220.0;
const SCALE_MAX: f64 = 160.0;

/// Maps world points to the drawing (y up).
struct Map {
    min_x: f64,
    max_y: f64,
    scale: f64,
}

impl Map {
    fn at(&self, p: [f64; 2]) -> (f64, f64) {
        (MARGIN + (p[0] - self.min_x) * self.scale, TOP + (self.max_y - p[1]) * self.scale)
    }
}

/// The snapshot as an SVG document: a title on top; every frame outlined
/// (fixed ones filled light grey, moving ones in contact filled red), the
/// intersection boxes as translucent blue rectangles, the witness segments
/// of pairs closer than the tolerance in green; then a legend and a scale
/// bar at the bottom. y points up. The drawing's groups have ids
/// (`frames`, `boxes`, `witnesses`), the title, legend and scale bar are
/// in `key`.
pub fn svg(s: &Snapshot<2>) -> String {
    let mut bounds = Aabb::EMPTY;
    for f in &s.frames {
        bounds = bounds.union(&f.aabb());
    }
    if bounds.is_empty() {
        bounds = Aabb { min: [0.0; 2], max: [1.0; 2] };
    }
    let [w, h] = bounds.extent().map(|x| x.max(1e-9));
    let map = Map { min_x: bounds.min[0], max_y: bounds.max[1], scale: (WIDTH - 2.0 * MARGIN) / w };
    let kinds = legend(kinds(s));
    let entries = lay_out(&kinds);
    // At least two rows' height: the scale bar and its label need them.
    let rows = entries.last().map_or(1.0, |e| e.2 + 1.0).max(2.0);
    let legend_top = TOP + h * map.scale + MARGIN;
    let height = legend_top + rows * ROW + MARGIN;
    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.2}">"#
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&title(s)));
    let _ = writeln!(out, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    frames(&mut out, s, &map);
    boxes(&mut out, s, &map);
    witnesses(&mut out, s, &map);
    let _ = writeln!(out, r##"<g id="key" font-family="sans-serif" font-size="{FONT}" fill="#1e1e1e">"##);
    let _ = writeln!(out, r#"<text x="{MARGIN}" y="{:.1}">{}</text>"#, MARGIN + FONT, escape(&title(s)));
    for (kind, x, row) in entries {
        let y = legend_top + row * ROW + 0.5 * ROW;
        let c = hex(colour(kind));
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="4"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            x + SWATCH,
            x + SWATCH + 6.0,
            y + 0.35 * FONT,
            kind.label()
        );
    }
    scale_bar(&mut out, map.scale, legend_top + rows * ROW - 6.0);
    let _ = writeln!(out, "</g>\n</svg>");
    out
}

/// Every frame as a polygon, styled by its kind.
fn frames(out: &mut String, s: &Snapshot<2>, map: &Map) {
    let _ = writeln!(out, r#"<g id="frames" stroke-width="0.8">"#);
    for (i, f) in s.frames.iter().enumerate() {
        let kind = s.frame_kind(i);
        let points: Vec<String> = outline(f)
            .into_iter()
            .map(|p| {
                let (x, y) = map.at(p);
                format!("{x:.2},{y:.2}")
            })
            .collect();
        let fill = match kind {
            // Fixed frames are grey whether touched or not: a touched
            // ground is not painted; the boxes say where.
            DebugKind::FixedFrame | DebugKind::CollidingFixedFrame => r##"fill="#eeeeee""##.to_string(),
            DebugKind::CollidingMovingFrame => format!(r#"fill="{}" fill-opacity="0.6""#, hex(colour(kind))),
            _ => r#"fill="none""#.to_string(),
        };
        let _ = writeln!(out, r#"<polygon points="{}" stroke="{}" {fill}/>"#, points.join(" "), hex(colour(kind)));
    }
    let _ = writeln!(out, "</g>");
}

/// The contacts' boxes, translucent over the frames.
fn boxes(out: &mut String, s: &Snapshot<2>, map: &Map) {
    let c = hex(colour(DebugKind::IntersectionBox));
    let _ = writeln!(out, r#"<g id="boxes" fill="{c}" fill-opacity="0.35" stroke="{c}" stroke-width="1">"#);
    for contact in &s.contacts {
        let (x0, y1) = map.at(contact.aabb.min);
        let (x1, y0) = map.at(contact.aabb.max);
        let _ = writeln!(out, r#"<rect x="{x0:.2}" y="{y0:.2}" width="{:.2}" height="{:.2}"/>"#, x1 - x0, y1 - y0);
    }
    let _ = writeln!(out, "</g>");
}

/// Pairs closer than the tolerance: their closest points, joined.
fn witnesses(out: &mut String, s: &Snapshot<2>, map: &Map) {
    let c = hex(colour(DebugKind::Witness));
    let _ = writeln!(out, r#"<g id="witnesses" stroke="{c}" stroke-width="1.5" fill="{c}">"#);
    for p in &s.near {
        let ((x0, y0), (x1, y1)) = (map.at(p.on_a), map.at(p.on_b));
        let _ = writeln!(out, r#"<line x1="{x0:.2}" y1="{y0:.2}" x2="{x1:.2}" y2="{y1:.2}"/>"#);
        let _ =
            writeln!(out, r#"<circle cx="{x0:.2}" cy="{y0:.2}" r="1.5"/><circle cx="{x1:.2}" cy="{y1:.2}" r="1.5"/>"#);
    }
    let _ = writeln!(out, "</g>");
}

/// The legend's entries: each kind, its x and its row, in rows that leave
/// the scale bar its room (text widths estimated).
fn lay_out(kinds: &[DebugKind]) -> Vec<(DebugKind, f64, f64)> {
    let room = WIDTH - SCALE_ROOM;
    let (mut x, mut row) = (MARGIN, 0.0);
    let mut out = Vec::new();
    for &kind in kinds {
        let w = SWATCH + 6.0 + CHAR * kind.label().len() as f64;
        if x > MARGIN && x + w > room {
            (x, row) = (MARGIN, row + 1.0);
        }
        out.push((kind, x, row));
        x += w + 22.0;
    }
    out
}

/// A bar of a round length at the bottom right, at height `y`, ticked at
/// both ends, its length written above it.
fn scale_bar(out: &mut String, pixels_per_unit: f64, y: f64) {
    let Some(length) = scale_length(SCALE_MAX / pixels_per_unit) else { return };
    let right = WIDTH - MARGIN;
    let left = right - length * pixels_per_unit;
    let _ = writeln!(
        out,
        r##"<path d="M{left:.1},{:.1} V{:.1} M{left:.1},{y:.1} H{right:.1} M{right:.1},{:.1} V{:.1}" stroke="#1e1e1e" stroke-width="2" fill="none"/>"##,
        y - 6.0,
        y + 6.0,
        y - 6.0,
        y + 6.0
    );
    let _ =
        writeln!(out, r#"<text x="{right:.1}" y="{:.1}" text-anchor="end">{}</text>"#, y - 10.0, scale_label(length));
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
