//! PNG snapshots: a tiny software rasteriser drawing lines into an RGB
//! buffer, encoded with the `png` crate.

use std::io;

use super::{box_corners, box_edges, edges};
use crate::Aabb;
use crate::scene::Snapshot;

const BACKGROUND: [u8; 3] = [255, 255, 255];
const IDLE: [u8; 3] = [150, 150, 150];
const HIT: [u8; 3] = [214, 40, 20];
const BOX: [u8; 3] = [31, 79, 209];
/// Witness segments of pairs closer than the tolerance.
const NEAR: [u8; 3] = [20, 150, 60];
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

/// Maps projected 2D points into a `width × height` picture, keeping the
/// aspect ratio (y up).
struct Fit {
    min: [f64; 2],
    max_y: f64,
    scale: f64,
    offset: [f64; 2],
}

impl Fit {
    fn new(bounds: Aabb<2>, width: u32, height: u32) -> Fit {
        let bounds = if bounds.is_empty() { Aabb { min: [0.0; 2], max: [1.0; 2] } } else { bounds };
        let [w, h] = bounds.extent().map(|x| x.max(1e-9));
        let scale = ((f64::from(width) - 2.0 * MARGIN) / w).min((f64::from(height) - 2.0 * MARGIN) / h);
        // Centred.
        let offset = [0.5 * (f64::from(width) - w * scale), 0.5 * (f64::from(height) - h * scale)];
        Fit { min: bounds.min, max_y: bounds.max[1], scale, offset }
    }

    fn map(&self, p: [f64; 2]) -> [f64; 2] {
        [self.offset[0] + (p[0] - self.min[0]) * self.scale, self.offset[1] + (self.max_y - p[1]) * self.scale]
    }
}

/// Draws segments (already projected to 2D) fitted into the picture.
fn draw(segments: &[([f64; 2], [f64; 2], [u8; 3])], width: u32, height: u32) -> io::Result<Vec<u8>> {
    let mut bounds = Aabb::EMPTY;
    for (a, b, _) in segments {
        bounds.include(a);
        bounds.include(b);
    }
    let fit = Fit::new(bounds, width, height);
    let mut canvas = Canvas::new(width, height);
    for &(a, b, c) in segments {
        canvas.line(fit.map(a), fit.map(b), c);
    }
    canvas.encode()
}

/// Colour order: idle frames first, then colliding ones, then boxes and
/// witness segments on top.
fn sort_by_layer(segments: &mut [([f64; 2], [f64; 2], [u8; 3])]) {
    let layer = |c: &[u8; 3]| match *c {
        IDLE => 0,
        HIT => 1,
        _ => 2,
    };
    segments.sort_by_key(|s| layer(&s.2));
}

/// A 2D snapshot as a PNG: frame outlines (colliding ones red), boxes blue.
///
/// # Errors
/// Encoding errors.
pub fn png_2d(s: &Snapshot<2>, width: u32, height: u32) -> io::Result<Vec<u8>> {
    snapshot_png(s, |p| p, width, height)
}

/// Orthographic view: a turn of 35° about the vertical (y) axis, then a
/// tilt of 25° looking down.
fn project(p: [f64; 3]) -> [f64; 2] {
    let (sy, cy) = 35f64.to_radians().sin_cos();
    let (sp, cp) = 25f64.to_radians().sin_cos();
    let x = cy * p[0] - sy * p[2];
    let z = sy * p[0] + cy * p[2];
    [x, cp * p[1] - sp * z]
}

/// A 3D snapshot as a PNG: every frame's edges (colliding ones red), the
/// intersection boxes' edges (blue) and, with a tolerance, the witness
/// segments of the pairs closer than it (green), orthographic projection
/// with y up.
///
/// # Errors
/// Encoding errors.
pub fn png_3d(s: &Snapshot<3>, width: u32, height: u32) -> io::Result<Vec<u8>> {
    snapshot_png(s, project, width, height)
}

/// Frame edges (colliding ones red) and box edges (blue), mapped to the
/// picture's plane by `project`.
fn snapshot_png<const D: usize>(
    s: &Snapshot<D>,
    project: impl Fn([f64; D]) -> [f64; 2],
    width: u32,
    height: u32,
) -> io::Result<Vec<u8>> {
    let mut segments = Vec::new();
    for (f, &hit) in s.frames.iter().zip(&s.colliding) {
        let v: Vec<[f64; 2]> = f.vertices().map(&project).collect();
        for (a, b) in edges(f) {
            segments.push((v[a], v[b], if hit { HIT } else { IDLE }));
        }
    }
    for c in &s.contacts {
        let v: Vec<[f64; 2]> = box_corners(&c.aabb).map(&project).collect();
        for (a, b) in box_edges::<D>() {
            segments.push((v[a], v[b], BOX));
        }
    }
    for p in &s.near {
        segments.push((project(p.on_a), project(p.on_b), NEAR));
    }
    sort_by_layer(&mut segments);
    draw(&segments, width, height)
}
