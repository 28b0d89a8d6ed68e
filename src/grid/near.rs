//! Near lists: for each moving frame, the fixed frames it may meet, kept
//! from step to step while the frame stays inside a fat box.
//!
//! A moving frame's fixed partners are the fixed list's slots whose boxes
//! overlap its swept box. Looking them up costs a box query on the fixed
//! list (up to 27 hashed cells of a list that may hold millions of boxes:
//! cache misses). Instead, each moving frame keeps a **fat box** (its swept
//! box grown by a margin when it was last looked up) and the few fixed
//! slots overlapping it. While the swept box stays inside the fat box, the
//! fixed slots overlapping the swept box are among those kept, so testing
//! the kept ones gives exactly the query's answer (Box2D's enlarged boxes,
//! applied to the one query a step makes per moving frame). A frame that
//! leaves its fat box is looked up again with a new one.
//!
//! A list depends on the fixed list only (its slots): it is dropped when
//! the fixed list changes. It does not depend on the moving frame it was
//! made for: it holds every fixed slot overlapping its fat box, so it is
//! right for any frame whose swept box lies inside. The lists are indexed
//! by the moving store's index; when the store is re-sorted, a list left
//! under another frame is used if that frame's swept box lies in its fat
//! box, and replaced otherwise. Partners always come out in the fixed
//! list's slot order, whether kept or queried, so the answer depends only
//! on the frames, never on the lists' history.

use super::cell_list::CellList;
use super::grid_box::GridBox;
use crate::aabb::Aabb;

/// Fixed slots kept per moving frame; a frame whose fat box overlaps more
/// is "crowded" and queries the fixed list each step until it leaves it.
const CAP: usize = 8;

/// `len` of a crowded entry.
const CROWDED: u32 = u32::MAX;

/// The fat box grows the swept box by this many times the frame's
/// displacement along each axis: a frame moving steadily keeps its list
/// for about this many steps, one at rest keeps it for good. Measured on
/// the mostly-static scene (1M fixed + 10k moving, candidates only): 2×
/// 9.2–10.0 ms, 4× 6.9–7.1, 8× 7.8–8.0, 16× 9.7–10.5; growing by a part
/// of the box's extent too (1/16 to 1/2) only crowded the lists.
const GROW_MOTION: f64 = 4.0;

/// One moving frame's fat box and the fixed slots overlapping it, in slot
/// order (64 bytes in 3D: one cache line).
#[derive(Clone, Copy, Debug)]
struct Near<const D: usize> {
    min: [f32; D],
    max: [f32; D],
    /// Number of `slots` in use, or [`CROWDED`].
    len: u32,
    slots: [u32; CAP],
}

impl<const D: usize> Near<D> {
    /// No fat box (inverted: contains nothing), so the first use looks up.
    const STALE: Self = Near { min: [f32::INFINITY; D], max: [f32::NEG_INFINITY; D], len: CROWDED, slots: [0; CAP] };

    #[inline(always)]
    fn contains(&self, q: &GridBox<D>) -> bool {
        let (lo, hi) = (q.min_f32(), q.max_f32());
        (0..D).fold(true, |c, k| c & (self.min[k] <= lo[k]) & (hi[k] <= self.max[k]))
    }
}

/// Per moving frame (by store index), the fixed slots near it.
#[derive(Clone, Debug, Default)]
pub(crate) struct NearLists<const D: usize> {
    entries: Vec<Near<D>>,
}

/// What [`NearLists::refresh`] needs of moving frame `i`: its swept box
/// and displacement, or `None` when it should query the fixed list every
/// step (frames the caller handles otherwise).
pub(crate) type Moving<const D: usize> = Option<(Aabb<D>, [f64; D])>;

impl<const D: usize> NearLists<D> {
    /// Forgets every list: the moving store or the fixed list changed.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Brings the lists of `n` moving frames up to date for this step's
    /// swept boxes: a frame whose swept box left its fat box (or that has
    /// none) gets a new fat box and its fixed slots, by one query. Runs in
    /// parallel with the `parallel` feature; allocates only when `n`
    /// changed.
    pub fn refresh(&mut self, fixed: &CellList<D>, n: usize, frame: impl Fn(usize) -> Moving<D> + Sync) {
        if self.entries.len() != n {
            self.entries.clear();
            self.entries.resize(n, Near::STALE);
        }
        let update = |(i, e): (usize, &mut Near<D>)| match frame(i) {
            None => *e = Near::STALE,
            Some((swept, d)) => {
                if !e.contains(&GridBox::new(&swept)) {
                    *e = look_up(fixed, &swept, &d);
                }
            }
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            self.entries.par_iter_mut().enumerate().with_min_len(1024).for_each(update);
        }
        #[cfg(not(feature = "parallel"))]
        self.entries.iter_mut().enumerate().for_each(update);
    }

    /// Calls `f(p)` for each slot `p` of `fixed` whose box overlaps `q`,
    /// the swept box of moving frame `i` this step, in slot order: from
    /// `i`'s list after [`NearLists::refresh`], else by a query (sorted in
    /// `scratch`).
    #[inline]
    pub fn for_each(
        &self,
        fixed: &CellList<D>,
        i: usize,
        q: &GridBox<D>,
        scratch: &mut Vec<u32>,
        mut f: impl FnMut(usize),
    ) {
        match self.entries.get(i) {
            Some(e) if e.len != CROWDED && e.contains(q) => {
                for &p in &e.slots[..e.len as usize] {
                    if fixed.slot_overlaps(p as usize, q) {
                        f(p as usize);
                    }
                }
            }
            _ => {
                scratch.clear();
                // Slots fit `u32` (`MAX_ITEMS`).
                fixed.query_slots(q, |p| scratch.push(p as u32));
                scratch.sort_unstable();
                for &p in scratch.iter() {
                    f(p as usize);
                }
            }
        }
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.entries.capacity() * size_of::<Near<D>>()
    }
}

/// A new fat box around `swept` (displacement `d`) and the fixed slots it
/// overlaps, sorted; crowded when they are more than [`CAP`].
fn look_up<const D: usize>(fixed: &CellList<D>, swept: &Aabb<D>, d: &[f64; D]) -> Near<D> {
    let fat = Aabb {
        min: std::array::from_fn(|k| swept.min[k] - GROW_MOTION * d[k].abs()),
        max: std::array::from_fn(|k| swept.max[k] + GROW_MOTION * d[k].abs()),
    };
    let fat = GridBox::new(&fat);
    let mut e = Near { min: fat.min_f32(), max: fat.max_f32(), len: 0, slots: [0; CAP] };
    fixed.query_slots(&fat, |p| {
        if (e.len as usize) < CAP {
            e.slots[e.len as usize] = p as u32;
            e.len += 1;
        } else {
            e.len = CROWDED;
        }
    });
    if e.len != CROWDED {
        e.slots[..e.len as usize].sort_unstable();
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{CellSize, random_boxes};
    use rand::{Rng, SeedableRng};

    /// The slots a direct query finds, sorted.
    fn direct(fixed: &CellList<3>, q: &GridBox<3>) -> Vec<usize> {
        let mut got = Vec::new();
        fixed.query_slots(q, |p| got.push(p));
        got.sort_unstable();
        got
    }

    /// Boxes of extent 0.2 to 2 in a cube of side 40.
    fn small_boxes(n: usize, seed: u64) -> Vec<Aabb<3>> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let c: [f64; 3] = std::array::from_fn(|_| rng.random_range(-20.0..20.0));
                let e: [f64; 3] = std::array::from_fn(|_| rng.random_range(0.2..2.0));
                Aabb { min: c, max: std::array::from_fn(|k| c[k] + e[k]) }
            })
            .collect()
    }

    #[test]
    fn kept_lists_answer_as_a_query_does_while_frames_drift() {
        let fixed_boxes = small_boxes(3000, 7);
        let mut fixed = CellList::default();
        fixed.build(CellSize::new(1.0), fixed_boxes.len(), |k| (fixed_boxes[k], k as u32), None);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        // Moving boxes, each with its own velocity; some teleport at times.
        let mut boxes = small_boxes(400, 8);
        let velocity: Vec<[f64; 3]> =
            (0..boxes.len()).map(|_| std::array::from_fn(|_| rng.random_range(-0.3..0.3))).collect();
        let mut near = NearLists::default();
        let (mut kept, mut scratch) = (0, Vec::new());
        for step in 0..40 {
            let swept: Vec<Aabb<3>> = boxes.iter().zip(&velocity).map(|(b, v)| b.swept(v)).collect();
            // Every seventh frame is handled "otherwise" on odd steps.
            let frame = |i: usize| (step % 2 == 0 || !i.is_multiple_of(7)).then(|| (swept[i], velocity[i]));
            // Every fifth step without a refresh: lists left behind by
            // their frames must not be used.
            if step % 5 != 4 {
                near.refresh(&fixed, boxes.len(), frame);
            }
            for (i, s) in swept.iter().enumerate() {
                let q = GridBox::new(s);
                let mut got = Vec::new();
                near.for_each(&fixed, i, &q, &mut scratch, |p| got.push(p));
                assert_eq!(got, direct(&fixed, &q), "step {step}, frame {i}");
                kept += usize::from(near.entries[i].len != CROWDED);
            }
            for (i, b) in boxes.iter_mut().enumerate() {
                let jump = if rng.random_bool(0.02) { 5.0 } else { 0.0 };
                *b = Aabb {
                    min: std::array::from_fn(|k| b.min[k] + velocity[i][k] + jump),
                    max: std::array::from_fn(|k| b.max[k] + velocity[i][k] + jump),
                };
            }
        }
        // The lists were used, not only the fallback.
        assert!(kept > 400 * 40 / 2, "{kept}");
    }

    #[test]
    fn a_frame_without_a_list_queries() {
        let fixed_boxes = random_boxes(100, 1, 5.0);
        let mut fixed = CellList::default();
        fixed.build(CellSize::new(1.0), fixed_boxes.len(), |k| (fixed_boxes[k], k as u32), None);
        let near = NearLists::<3>::default();
        let q = GridBox::new(&Aabb { min: [-1.0; 3], max: [1.0; 3] });
        let mut got = Vec::new();
        near.for_each(&fixed, 5, &q, &mut Vec::new(), |p| got.push(p));
        assert_eq!(got, direct(&fixed, &q));
        assert!(!got.is_empty());
    }
}
