//! Detail views for crowded PNGs. Past [`CROWDED`] contacts, a picture of
//! the whole scene is a blot: the intersection boxes hide one another and
//! the frames. The PNG then shows a cube (a square in 2D) centred on the
//! contacts' median, as large as holds about [`ITEMS`] frames and boxes,
//! every line clipped to it, and says so under its title; unless the
//! boxes pile up in the detail too (more than [`PILED`] a frame). The SVG
//! and PLY keep the whole scene: their viewers zoom.

use super::Snapshot;
use crate::Aabb;

/// Contacts past which a PNG shows a detail.
pub(super) const CROWDED: usize = 3000;
/// About how many frames and intersection boxes a detail shows.
const ITEMS: usize = 1500;
/// Contacts per frame past which a detail is no clearer than the whole.
const PILED: usize = 2;
/// Halvings of the search for the cube's size: far below a pixel.
const HALVINGS: usize = 48;

/// The part of a crowded snapshot a PNG shows.
pub(super) struct Detail<const D: usize> {
    pub window: Aabb<D>,
    /// Frames and contacts whose boxes meet the window.
    pub frames: usize,
    pub contacts: usize,
}

impl<const D: usize> Detail<D> {
    /// The detail of a crowded snapshot; `None` when it is not crowded.
    pub(super) fn of(s: &Snapshot<D>) -> Option<Detail<D>> {
        if s.contacts.len() <= CROWDED {
            return None;
        }
        let centre = median(s.contacts.iter().map(|c| centre(&c.aabb)))?;
        let count = |window: &Aabb<D>| {
            let frames = s.frames.iter().filter(|f| f.aabb().intersects(window)).count();
            (frames, s.contacts.iter().filter(|c| c.aabb.intersects(window)).count())
        };
        let cube = |r: f64| Aabb { min: centre.map(|x| x - r), max: centre.map(|x| x + r) };
        let mut bounds = Aabb::EMPTY;
        for f in &s.frames {
            bounds = bounds.union(&f.aabb());
        }
        let reach = (0..D).map(|k| (bounds.max[k] - centre[k]).max(centre[k] - bounds.min[k])).fold(0.0, f64::max);
        // The largest cube meeting at most `ITEMS` boxes, by bisection.
        let (mut lo, mut hi) = (0.0, reach.max(f64::MIN_POSITIVE));
        for _ in 0..HALVINGS {
            let mid = 0.5 * (lo + hi);
            let (f, c) = count(&cube(mid));
            if f + c <= ITEMS {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // Boxes piled on one point: the smallest cube meeting more.
        let window = cube(if lo > 0.0 { lo } else { hi });
        let (frames, contacts) = count(&window);
        // Boxes denser than frames (two meshes through each other) crowd
        // any detail too: the whole scene then shows at least where.
        (contacts <= PILED * frames).then_some(Detail { window, frames, contacts })
    }

    /// The line under the title that says what the picture shows.
    pub(super) fn caption(&self) -> String {
        let side = self.window.max[0] - self.window.min[0];
        // Three significant digits: 43.1, 0.235, 4321.
        let decimals = (2 - (side.log10() + 1e-9).floor() as i32).max(0) as usize;
        let shape = if D == 2 { "square" } else { "cube" };
        format!(
            "detail: {shape} of side {side:.decimals$} at the contacts' median; {} frames, {} contacts",
            self.frames, self.contacts
        )
    }

    /// The part of segment `a`–`b` in the window (Liang–Barsky), if any.
    pub(super) fn clip(&self, a: [f64; D], b: [f64; D]) -> Option<([f64; D], [f64; D])> {
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for k in 0..D {
            let d = b[k] - a[k];
            // Entering through the low face, leaving through the high one
            // (or the reverse when `d` is negative).
            for (p, q) in [(-d, a[k] - self.window.min[k]), (d, self.window.max[k] - a[k])] {
                if p == 0.0 {
                    if q < 0.0 {
                        return None;
                    }
                } else if p < 0.0 {
                    t0 = t0.max(q / p);
                } else {
                    t1 = t1.min(q / p);
                }
            }
        }
        let at = |t: f64| std::array::from_fn(|k| a[k] + t * (b[k] - a[k]));
        (t0 <= t1).then(|| (at(t0), at(t1)))
    }
}

fn centre<const D: usize>(b: &Aabb<D>) -> [f64; D] {
    std::array::from_fn(|k| 0.5 * (b.min[k] + b.max[k]))
}

/// The per-axis median of `points`; `None` without points.
fn median<const D: usize>(points: impl Iterator<Item = [f64; D]>) -> Option<[f64; D]> {
    let points: Vec<[f64; D]> = points.collect();
    if points.is_empty() {
        return None;
    }
    let mid = points.len() / 2;
    Some(std::array::from_fn(|k| {
        let mut axis: Vec<f64> = points.iter().map(|p| p[k]).collect();
        *axis.select_nth_unstable_by(mid, f64::total_cmp).1
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_clipped_to_the_window() {
        let d = Detail { window: Aabb { min: [0.0, 0.0], max: [1.0, 1.0] }, frames: 0, contacts: 0 };
        assert_eq!(d.clip([-1.0, 0.5], [2.0, 0.5]), Some(([0.0, 0.5], [1.0, 0.5])));
        assert_eq!(d.clip([0.25, 0.25], [0.75, 0.5]), Some(([0.25, 0.25], [0.75, 0.5])));
        assert_eq!(d.clip([-1.0, 2.0], [2.0, 2.0]), None);
        assert_eq!(d.clip([2.0, 0.0], [3.0, 1.0]), None);
        assert_eq!(d.clip([-0.5, 0.5], [0.5, 1.5]), Some(([0.0, 1.0], [0.0, 1.0])));
    }

    #[test]
    fn captions_are_short() {
        let d = Detail { window: Aabb { min: [0.0; 3], max: [43.057; 3] }, frames: 1043, contacts: 520 };
        assert_eq!(d.caption(), "detail: cube of side 43.1 at the contacts' median; 1043 frames, 520 contacts");
        let d = Detail { window: Aabb { min: [1.0; 2], max: [1.2346; 2] }, frames: 9, contacts: 1 };
        assert_eq!(d.caption(), "detail: square of side 0.235 at the contacts' median; 9 frames, 1 contacts");
    }

    /// A crowded snapshot: 80 × 80 unit squares, each touching its right
    /// neighbour. The detail is centred on the contacts' median and holds
    /// at most `ITEMS` frames and boxes, not far fewer.
    #[test]
    fn a_crowded_snapshot_gets_a_detail() {
        use crate::{BodyHandle, Contact, Frame, FrameId};
        let n = 80;
        let id = |k: usize| FrameId { body: BodyHandle { index: k as u32, generation: 0 }, index: 0 };
        let mut s = Snapshot {
            scene: "grid".into(),
            step: 1,
            bodies: n * n,
            frames: Vec::new(),
            fixed: vec![false; n * n],
            colliding: vec![true; n * n],
            contacts: Vec::new(),
            near: Vec::new(),
        };
        for k in 0..n * n {
            let at = [(k % n) as f64, (k / n) as f64];
            s.frames.push(Frame::from_aabb(at, [at[0] + 1.0, at[1] + 1.0]).unwrap());
            if k % n + 1 < n {
                let aabb = Aabb { min: [at[0] + 1.0, at[1]], max: [at[0] + 1.0, at[1] + 1.0] };
                s.contacts.push(Contact { a: id(k), b: id(k + 1), aabb, time: [0.0, 1.0] });
            }
        }
        assert!(s.contacts.len() > CROWDED);
        let d = Detail::of(&s).unwrap();
        let centre: Vec<f64> = (0..2).map(|k| 0.5 * (d.window.min[k] + d.window.max[k])).collect();
        assert_eq!(centre, [40.0, 40.5]);
        assert!(d.frames + d.contacts <= ITEMS && d.frames + d.contacts > ITEMS / 2, "{} {}", d.frames, d.contacts);
        // Contacts piled on the frames: no detail either.
        let piled = s.contacts.clone();
        s.contacts.extend(piled.iter().chain(&piled));
        assert!(Detail::of(&s).is_none());
        s.contacts.truncate(CROWDED);
        assert!(Detail::of(&s).is_none());
    }

    #[test]
    fn the_median_is_per_axis() {
        let m = median([[0.0, 9.0], [5.0, 1.0], [1.0, 2.0]].into_iter());
        assert_eq!(m, Some([1.0, 2.0]));
        assert_eq!(median(std::iter::empty::<[f64; 3]>()), None);
    }
}
