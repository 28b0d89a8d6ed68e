//! PNG snapshots: a tiny software rasteriser drawing lines and 5 × 7
//! bitmap text into an RGB buffer, encoded with the `png` crate.

use std::io;

use super::detail::Detail;
use super::{colour, font, legend, scale_label, scale_length, title};
use crate::scene::Snapshot;
use crate::{Aabb, DebugKind};

const BACKGROUND: [u8; 3] = [255, 255, 255];
const MARGIN: f64 = 8.0;

/// An RGB image to draw lines into.
#[derive(Clone, Debug)]
pub struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A white canvas.
    pub fn new(width: u32, height: u32) -> Self {
        let pixels = BACKGROUND.repeat(width as usize * height as usize);
        Canvas { width, height, pixels }
    }

    /// The pixel at `(x, y)` (`y` down), if inside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        (x < self.width && y < self.height).then(|| {
            let i = 3 * (y as usize * self.width as usize + x as usize);
            [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
        })
    }

    fn put(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height) {
            let i = 3 * (y as usize * self.width as usize + x as usize);
            self.pixels[i..i + 3].copy_from_slice(&c);
        }
    }

    /// A line between two pixel positions (Bresenham), clipped to the canvas.
    pub fn line(&mut self, a: [f64; 2], b: [f64; 2], c: [u8; 3]) {
        let lim = 4.0 * f64::from(self.width.max(self.height));
        if a.iter().chain(&b).any(|v| !v.is_finite() || v.abs() > lim) {
            return;
        }
        let (mut x0, mut y0) = (a[0].round() as i64, a[1].round() as i64);
        let (x1, y1) = (b[0].round() as i64, b[1].round() as i64);
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let mut err = dx + dy;
        loop {
            self.put(x0, y0, c);
            if x0 == x1 && y0 == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x0 += sx;
            }
            if e2 <= dx {
                err += dx;
                y0 += sy;
            }
        }
    }

    /// The image encoded as an 8-bit RGB PNG.
    ///
    /// # Errors
    /// Encoding errors (none in practice: the buffer has the right size).
    pub fn encode(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut encoder = ::png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(::png::ColorType::Rgb);
        encoder.set_depth(::png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(io::Error::other)?;
        writer.write_image_data(&self.pixels).map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)?;
        Ok(out)
    }
}

/// Maps projected 2D points into a rectangle of the picture, keeping the
/// aspect ratio (y up).
struct Fit {
    min: [f64; 2],
    max_y: f64,
    /// Pixels per world unit.
    scale: f64,
    offset: [f64; 2],
}

impl Fit {
    /// Fits `bounds` into `area` (`[x0, y0, x1, y1]`, pixels), centred.
    fn new(bounds: Aabb<2>, area: [f64; 4]) -> Fit {
        let bounds = if bounds.is_empty() { Aabb { min: [0.0; 2], max: [1.0; 2] } } else { bounds };
        let [w, h] = bounds.extent().map(|x| x.max(1e-9));
        let [x0, y0, x1, y1] = area;
        let scale = ((x1 - x0) / w).min((y1 - y0) / h);
        let offset = [x0 + 0.5 * (x1 - x0 - w * scale), y0 + 0.5 * (y1 - y0 - h * scale)];
        Fit { min: bounds.min, max_y: bounds.max[1], scale, offset }
    }

    fn map(&self, p: [f64; 2]) -> [f64; 2] {
        [self.offset[0] + (p[0] - self.min[0]) * self.scale, self.offset[1] + (self.max_y - p[1]) * self.scale]
    }
}

/// A segment projected to the picture's plane, and what it belongs to.
type Segment = ([f64; 2], [f64; 2], DebugKind);

/// A 2D snapshot as a PNG: its [`debug lines`](Snapshot::debug_lines)
/// (frames grey, moving frames in contact red, intersection boxes blue,
/// witness segments green), under a title, over a legend and a scale bar.
///
/// # Errors
/// Encoding errors.
pub fn png_2d(s: &Snapshot<2>, width: u32, height: u32) -> io::Result<Vec<u8>> {
    snapshot_png(s, |p| p, width, height)
}

/// Orthographic view: a turn of 35° about the vertical (y) axis, then a
/// tilt of 25° looking down. Both are rotations: a length parallel to the
/// picture keeps its size, which the scale bar relies on.
fn project(p: [f64; 3]) -> [f64; 2] {
    let (sy, cy) = 35f64.to_radians().sin_cos();
    let (sp, cp) = 25f64.to_radians().sin_cos();
    let x = cy * p[0] - sy * p[2];
    let z = sy * p[0] + cy * p[2];
    [x, cp * p[1] - sp * z]
}

/// A 3D snapshot as a PNG: as [`png_2d`], in an orthographic projection
/// with y up.
///
/// # Errors
/// Encoding errors.
pub fn png_3d(s: &Snapshot<3>, width: u32, height: u32) -> io::Result<Vec<u8>> {
    snapshot_png(s, project, width, height)
}

/// The snapshot's debug lines (only a detail of a crowded one, clipped),
/// mapped to the picture's plane by `project`, drawn in the order of their
/// kinds (frames under boxes), then the title, the legend of the kinds
/// drawn and the scale bar around them.
fn snapshot_png<const D: usize>(
    s: &Snapshot<D>,
    project: impl Fn([f64; D]) -> [f64; 2],
    width: u32,
    height: u32,
) -> io::Result<Vec<u8>> {
    let detail = Detail::of(s);
    let mut segments: Vec<Segment> = Vec::new();
    s.debug_lines(|l| {
        let ends = match &detail {
            Some(d) => d.clip(l.from, l.to),
            None => Some((l.from, l.to)),
        };
        if let Some((a, b)) = ends {
            segments.push((project(a), project(b), l.kind));
        }
    });
    segments.sort_by_key(|s| s.2);
    let mut bounds = Aabb::EMPTY;
    for (a, b, _) in &segments {
        bounds.include(a);
        bounds.include(b);
    }
    let mut titles = vec![title(s)];
    titles.extend(detail.map(|d| d.caption()));
    let layout = Layout::new(&legend(segments.iter().map(|s| s.2)), titles.len() as u32, width, height);
    let fit = Fit::new(bounds, layout.drawing);
    let mut canvas = Canvas::new(width, height);
    for &(a, b, kind) in &segments {
        let (a, b) = (fit.map(a), fit.map(b));
        canvas.line(a, b, colour(kind));
        if kind == DebugKind::Witness {
            // Most witness segments are a few pixels long, or none (frames
            // that touch): dots at their ends make them visible.
            for p in [a, b] {
                canvas.block(p[0].round() as i64 - 1, p[1].round() as i64 - 1, 3, colour(kind));
            }
        }
    }
    canvas.annotate(&titles, &layout, fit.scale);
    canvas.encode()
}

/// Font scale of every text (10 × 16 pixel glyphs, descenders included).
const TEXT: u32 = 2;
const TEXT_HEIGHT: u32 = font::HEIGHT * TEXT;
const INK: [u8; 3] = [30, 30, 30];
/// Height of a legend row.
const ROW: u32 = TEXT_HEIGHT + 8;
/// A legend entry's swatch: a short thick line of the kind's colour.
const SWATCH: u32 = 26;
/// Room kept at the bottom right for the scale bar.
const SCALE_ROOM: u32 = 230;
/// The scale bar's longest length, pixels.
const SCALE_MAX: f64 = 160.0;

/// Where the title, the drawing and the legend go: the title in a band on
/// top, the legend's entries in rows at the bottom left, the scale bar at
/// the bottom right, the drawing in between.
struct Layout {
    /// `[x0, y0, x1, y1]`, pixels.
    drawing: [f64; 4],
    /// Each entry and the top left corner of its swatch.
    entries: Vec<(DebugKind, u32, u32)>,
    width: u32,
    height: u32,
}

impl Layout {
    /// The layout of a picture with a legend of `kinds` under `titles`
    /// lines of title.
    fn new(kinds: &[DebugKind], titles: u32, width: u32, height: u32) -> Layout {
        let margin = MARGIN as u32;
        let room = width.saturating_sub(SCALE_ROOM + margin);
        let mut placed = Vec::new();
        let (mut x, mut row) = (margin, 0);
        for &kind in kinds {
            let w = SWATCH + 6 + font::text_width(kind.label(), TEXT);
            if x > margin && x + w > room {
                (x, row) = (margin, row + 1);
            }
            placed.push((kind, x, row));
            x += w + 24;
        }
        // Rows from the bottom up: the last row sits on the bottom margin.
        let rows = placed.last().map_or(1, |p| p.2 + 1);
        let top_of_legend = height.saturating_sub(margin + rows * ROW);
        let entries = placed.into_iter().map(|(k, x, r)| (k, x, top_of_legend + r * ROW)).collect();
        let top = f64::from(margin + titles * ROW + 4);
        let bottom = f64::from(top_of_legend) - 8.0;
        Layout { drawing: [MARGIN, top, f64::from(width) - MARGIN, bottom.max(top + 1.0)], entries, width, height }
    }
}

impl Canvas {
    /// `text` in the 5 × 7 font at `scale`, top left at `(x, y)`, clipped
    /// to the canvas.
    fn text(&mut self, x: u32, y: u32, text: &str, scale: u32, c: [u8; 3]) {
        let step = (font::WIDTH + font::SPACING) * scale;
        for (k, ch) in text.chars().enumerate() {
            let left = i64::from(x) + k as i64 * i64::from(step);
            for (row, bits) in font::glyph(ch).into_iter().enumerate() {
                for col in 0..font::WIDTH {
                    if bits & (1 << (font::WIDTH - 1 - col)) != 0 {
                        let (px, py) = (left + i64::from(col * scale), i64::from(y) + row as i64 * i64::from(scale));
                        self.block(px, py, scale, c);
                    }
                }
            }
        }
    }

    /// A `size × size` square of pixels, top left at `(x, y)`.
    fn block(&mut self, x: i64, y: i64, size: u32, c: [u8; 3]) {
        for dy in 0..i64::from(size) {
            for dx in 0..i64::from(size) {
                self.put(x + dx, y + dy, c);
            }
        }
    }

    /// The title's lines on top, the legend's entries, and a scale bar for
    /// `pixels_per_unit`.
    fn annotate(&mut self, titles: &[String], layout: &Layout, pixels_per_unit: f64) {
        let margin = MARGIN as u32;
        // Cut a long line (a long scene name) to the picture's width.
        let fits = ((layout.width.saturating_sub(2 * margin)) / ((font::WIDTH + font::SPACING) * TEXT)) as usize;
        for (row, line) in titles.iter().enumerate() {
            let shown: String = if line.chars().count() > fits {
                line.chars().take(fits.saturating_sub(3)).chain("...".chars()).collect()
            } else {
                line.to_string()
            };
            self.text(margin, margin + row as u32 * ROW, &shown, TEXT, INK);
        }
        for &(kind, x, y) in &layout.entries {
            let mid = f64::from(y + TEXT_HEIGHT / 2);
            for d in -1..=1 {
                let y = mid + f64::from(d);
                self.line([f64::from(x), y], [f64::from(x + SWATCH), y], colour(kind));
            }
            self.text(x + SWATCH + 6, y, kind.label(), TEXT, INK);
        }
        self.scale_bar(layout, pixels_per_unit);
    }

    /// A bar of a round length at the bottom right, its ends ticked, its
    /// length written above it.
    fn scale_bar(&mut self, layout: &Layout, pixels_per_unit: f64) {
        let Some(length) = scale_length(SCALE_MAX / pixels_per_unit) else { return };
        let pixels = length * pixels_per_unit;
        let right = f64::from(layout.width) - MARGIN - 4.0;
        let (left, y) = (right - pixels, f64::from(layout.height) - MARGIN - 6.0);
        for d in [0.0, 1.0] {
            self.line([left, y + d], [right, y + d], INK);
        }
        for x in [left, right] {
            self.line([x, y - 6.0], [x, y + 6.0], INK);
        }
        let label = scale_label(length);
        let w = font::text_width(&label, TEXT);
        let x = (right as u32).saturating_sub(w);
        self.text(x, (y as u32).saturating_sub(10 + TEXT_HEIGHT), &label, TEXT, INK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame;

    fn snapshot() -> Snapshot<2> {
        let ground = Frame::from_aabb([0.0, 0.0], [40.0, 1.0]).unwrap();
        let square = Frame::from_aabb([5.0, 0.5], [6.0, 1.5]).unwrap();
        let contact = crate::Contact {
            a: crate::FrameId { body: crate::BodyHandle { index: 0, generation: 0 }, index: 0 },
            b: crate::FrameId { body: crate::BodyHandle { index: 1, generation: 0 }, index: 0 },
            aabb: Aabb { min: [5.0, 0.5], max: [6.0, 1.0] },
            time: [0.0, 1.0],
        };
        Snapshot {
            scene: "ground".into(),
            step: 7,
            bodies: 2,
            frames: vec![ground, square],
            fixed: vec![true, false],
            colliding: vec![true, true],
            contacts: vec![contact],
            near: vec![],
        }
    }

    fn decode(png: &[u8]) -> (u32, Vec<u8>) {
        let mut reader = ::png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        (info.width, buf)
    }

    fn count(pixels: &[u8], c: [u8; 3]) -> usize {
        pixels.chunks(3).filter(|p| *p == c).count()
    }

    /// The touched ground is drawn grey (dark), never red; the square in
    /// contact is red, the box blue; the title, legend and scale bar are
    /// ink outside the drawing.
    #[test]
    fn a_touched_ground_stays_grey() {
        let s = snapshot();
        let (width, pixels) = decode(&png_2d(&s, 640, 480).unwrap());
        assert_eq!(width, 640);
        let fixed = count(&pixels, colour(DebugKind::CollidingFixedFrame));
        let red = count(&pixels, colour(DebugKind::CollidingMovingFrame));
        // The ground is 40 units long, the square 1: far more grey than red.
        assert!(fixed > 10 * red && red > 0, "grey {fixed}, red {red}");
        assert!(count(&pixels, colour(DebugKind::IntersectionBox)) > 0);
        // Text: ink in the title band, none of it in the scene's colours.
        let title_band = &pixels[..3 * 640 * (MARGIN as usize + TEXT_HEIGHT as usize)];
        assert!(count(title_band, INK) > 100);
    }

    #[test]
    fn the_legend_wraps_and_stays_below_the_drawing() {
        let layout = Layout::new(&DebugKind::ALL, 1, 640, 480);
        assert_eq!(layout.entries.len(), 7);
        let rows: std::collections::BTreeSet<u32> = layout.entries.iter().map(|e| e.2).collect();
        assert!(rows.len() > 1, "seven entries do not fit one row of 640 pixels");
        let first_row = rows.iter().next().copied().unwrap_or(0);
        assert!(layout.drawing[3] < f64::from(first_row));
        assert!(layout.entries.iter().all(|&(k, x, _)| x + SWATCH + 6 + font::text_width(k.label(), TEXT) <= 640));
    }
}
