//! Every intersecting pair of a set of frames in one call, without a
//! world: the frames' swept boxes into a cell list (`grid/cell_list.rs`),
//! its pairs pass for the candidates, each decided by FMB (`narrow`) as a
//! world's step decides it. The same pipeline as a step (frame → box →
//! grid → candidate pairs → FMB → contacts), with nothing kept between
//! calls: for a set of frames met once (a scene loaded, a batch of poses
//! to test), where a [`World`](crate::World) would keep its lists for the
//! next step.

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use crate::aabb::Aabb;
use crate::contact::ContactDetail;
use crate::error::WorldError;
use crate::fallible::{NoRoom, room, room_for_one};
use crate::frame::Frame;
use crate::grid::{CellList, MAX_ITEMS, Spreads, cell_size_for};
use crate::narrow::contact_of;

/// Slots of the list per parallel task.
const CHUNK: usize = 4096;

/// Two intersecting frames of the set given to [`collide`], by their
/// indices in it, with what the contact detail asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IndexPair<const D: usize> {
    /// The frames' indices, `a < b`.
    pub a: u32,
    /// See `a`.
    pub b: u32,
    /// As [`Contact::aabb`](crate::Contact::aabb): the exact box of the
    /// intersection over the step ([`ContactDetail::ExactBox`]), else the
    /// overlap of the frames' swept boxes.
    pub aabb: Aabb<D>,
    /// As [`Contact::time`](crate::Contact::time): the interval of the step
    /// during which the frames overlap (`[0, 1]` for frames at rest, and in
    /// [`ContactDetail::Candidates`]).
    pub time: [f64; 2],
}

/// Every pair of `frames` that intersect over the step (each frame moving
/// by its own [`velocity`](Frame::velocity), at rest when it has none),
/// sorted by `(a, b)`, as a world holding each frame as a body would
/// report them with `detail`: the exact box of each intersection
/// ([`ContactDetail::ExactBox`]), the contact interval alone
/// ([`ContactDetail::Interval`]), or the pairs of overlapping swept boxes
/// ([`ContactDetail::Candidates`]). Touching is not intersecting.
///
/// # Errors
/// [`WorldError::TooMany`] past 2^26 frames; [`WorldError::OutOfMemory`]
/// when the list or the pairs do not fit in memory.
///
/// ```
/// use fmbgrid::{ContactDetail, Frame2, collide};
/// let frames = [
///     Frame2::from_aabb([0.0, 0.0], [2.0, 2.0])?,
///     Frame2::from_aabb([1.0, 1.0], [3.0, 3.0])?, // overlaps the first
///     Frame2::from_aabb([2.0, 0.0], [3.0, 0.5])?, // touches the first only
/// ];
/// let pairs = collide(&frames, ContactDetail::ExactBox)?;
/// assert_eq!(pairs.len(), 1);
/// assert_eq!((pairs[0].a, pairs[0].b), (0, 1));
/// assert_eq!(pairs[0].aabb.min, [1.0, 1.0]);
/// assert_eq!(pairs[0].aabb.max, [2.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn collide<const D: usize>(frames: &[Frame<D>], detail: ContactDetail) -> Result<Vec<IndexPair<D>>, WorldError> {
    pairs_among(frames, &[], detail)
}

/// Every intersecting pair of a frame of `a` and a frame of `b` (`a` as
/// the first index, `b` as the second, whatever their order), sorted by
/// `(a, b)`; two frames of one set never pair. Otherwise as [`collide`].
///
/// # Errors
/// As [`collide`], for the two sets together.
///
/// ```
/// use fmbgrid::{ContactDetail, Frame2, collide_between};
/// let a = [Frame2::from_aabb([0.0, 0.0], [2.0, 2.0])?, Frame2::from_aabb([1.0, 0.0], [3.0, 1.0])?];
/// let b = [Frame2::from_aabb([2.5, 0.5], [4.0, 4.0])?];
/// let pairs = collide_between(&a, &b, ContactDetail::Interval)?; // a[0] and a[1] overlap: not a pair here
/// assert_eq!(pairs.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>(), [(1, 0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn collide_between<const D: usize>(
    a: &[Frame<D>],
    b: &[Frame<D>],
    detail: ContactDetail,
) -> Result<Vec<IndexPair<D>>, WorldError> {
    if b.is_empty() {
        return Ok(Vec::new());
    }
    pairs_among(a, b, detail)
}

/// The pairs of `a` alone (`b` empty), or of `a` with `b`: one list over
/// both, `b`'s frames after `a`'s, each set a group of the list when both
/// are given (a group's items never pair).
fn pairs_among<const D: usize>(
    a: &[Frame<D>],
    b: &[Frame<D>],
    detail: ContactDetail,
) -> Result<Vec<IndexPair<D>>, WorldError> {
    let n = a.len().saturating_add(b.len());
    if n > MAX_ITEMS {
        return Err(WorldError::TooMany);
    }
    let frame = |k: usize| if k < a.len() { &a[k] } else { &b[k - a.len()] };
    // A moving frame's box is its swept box.
    let mut scratch = Vec::new();
    room(&mut scratch, n)?;
    let cell = cell_size_for((0..n).map(|k| frame(k).aabb()), &mut scratch);
    drop(scratch);
    let mut list = CellList::default();
    let set = |k: usize| u32::from(k >= a.len());
    let group: Option<&dyn Fn(usize) -> u32> = if b.is_empty() { None } else { Some(&set) };
    list.build(cell, n, |k| (frame(k).aabb(), k as u32), group)?;
    let pair = |i: u32, j: u32| {
        let (i, j) = (i.min(j), i.max(j));
        // Across the sets, `j` is `b`'s: numbered from its own start.
        let j = if b.is_empty() { j } else { j - a.len() as u32 };
        (i, j, frame(i as usize), if b.is_empty() { &a[j as usize] } else { &b[j as usize] })
    };
    let mut out = pairs_of(&list, pair, detail)?;
    // Each pair once, from one of its slots: in slot order, then sorted.
    out.sort_unstable_by_key(|p| (p.a, p.b));
    Ok(out)
}

/// The intersecting pairs the list's pass finds, in slot order (chunks in
/// parallel, concatenated in order: the same answer on any thread count).
/// `pair(i, j)` names the pair of list items `i` and `j` and gives its
/// two frames.
fn pairs_of<'f, const D: usize>(
    list: &CellList<D>,
    pair: impl Fn(u32, u32) -> (u32, u32, &'f Frame<D>, &'f Frame<D>) + Sync,
    detail: ContactDetail,
) -> Result<Vec<IndexPair<D>>, NoRoom> {
    let run = |from: usize| -> Result<Vec<IndexPair<D>>, NoRoom> {
        let mut found = Vec::new();
        let mut spreads = Spreads::default();
        let mut fits = true;
        for p in from..list.len().min(from + CHUNK) {
            let i = list.item(p);
            list.partners(p, &mut spreads, |q| {
                let (a, b, f, g) = pair(i, list.item(q));
                let Some((aabb, time)) = contact_of(detail, f, g) else { return };
                if room_for_one(&mut found) {
                    found.push(IndexPair { a, b, aabb, time });
                } else {
                    fits = false;
                }
            });
            if !fits {
                return Err(NoRoom { bytes: 2 * found.len() * size_of::<IndexPair<D>>() });
            }
        }
        Ok(found)
    };
    let starts: Vec<usize> = (0..list.len()).step_by(CHUNK).collect();
    #[cfg(feature = "parallel")]
    let chunks: Vec<Result<Vec<IndexPair<D>>, NoRoom>> = starts.par_iter().map(|&s| run(s)).collect();
    #[cfg(not(feature = "parallel"))]
    let chunks: Vec<Result<Vec<IndexPair<D>>, NoRoom>> = starts.iter().map(|&s| run(s)).collect();
    let mut total = 0;
    for c in &chunks {
        total += c.as_ref().map_err(|e| *e)?.len();
    }
    let mut out = Vec::new();
    room(&mut out, total)?;
    for c in chunks.into_iter().flatten() {
        out.extend(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame3;

    /// Random oriented boxes and tetrahedra, some moving, some thin.
    fn frames(n: usize, seed: u64) -> Vec<Frame3> {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|k| {
                let o = [next() * 20.0, next() * 20.0, next() * 20.0];
                let thin = if k % 7 == 0 { 1e-7 } else { 1.0 };
                let comps = [[next() + 0.2, next() - 0.5, 0.1], [next() - 0.5, next() + 0.2, 0.2], [0.1, 0.2, thin]];
                let f = if k % 3 == 0 { Frame3::tetrahedron(o, comps) } else { Frame3::cuboid(o, comps) }.unwrap();
                if k % 2 == 0 { f.with_velocity([next() - 0.5, next() * 2.0, 0.0]).unwrap() } else { f }
            })
            .collect()
    }

    /// Every mode against every pair tested one by one (brute force, both
    /// argument orders agree in the narrow phase).
    #[test]
    fn pairs_match_brute_force_in_every_mode() {
        let fs = frames(700, 3);
        for detail in [ContactDetail::ExactBox, ContactDetail::Interval, ContactDetail::Candidates] {
            let got = collide(&fs, detail).unwrap();
            let mut want = Vec::new();
            for a in 0..fs.len() {
                for b in a + 1..fs.len() {
                    if let Some((aabb, time)) = contact_of(detail, &fs[a], &fs[b]) {
                        want.push(IndexPair { a: a as u32, b: b as u32, aabb, time });
                    }
                }
            }
            assert!(want.len() > 50, "{detail:?}: the set must have pairs ({})", want.len());
            assert_eq!(got, want, "{detail:?}");
        }
    }

    /// The same answer as a world holding each frame as a body.
    #[test]
    fn a_world_of_the_frames_finds_the_same_contacts() {
        use crate::{Body, World, WorldConfig};
        let fs = frames(500, 5);
        for detail in [ContactDetail::ExactBox, ContactDetail::Interval] {
            let mut world = World::<3>::new(WorldConfig::default().with_contact_detail(detail));
            for f in &fs {
                // The frame at rest, its displacement the body's.
                let body = Body::moving(vec![f.with_velocity([0.0; 3]).unwrap()]);
                world.insert(body.with_velocity(f.velocity())).unwrap();
            }
            let mut from_world: Vec<IndexPair<3>> = (world.step(1.0).unwrap().iter())
                .map(|c| {
                    let (a, b) = (c.a.body.index(), c.b.body.index());
                    IndexPair { a: a.min(b), b: a.max(b), aabb: c.aabb, time: c.time }
                })
                .collect();
            from_world.sort_by_key(|p| (p.a, p.b));
            let ours = collide(&fs, detail).unwrap();
            assert_eq!(ours, from_world, "{detail:?}");
        }
    }

    /// Between two sets: the pairs across them alone, as every pair of the
    /// two tested one by one (both orders of the sets).
    #[test]
    fn pairs_between_two_sets_match_brute_force() {
        let (a, b) = (frames(400, 7), frames(300, 8));
        for detail in [ContactDetail::ExactBox, ContactDetail::Candidates] {
            let got = collide_between(&a, &b, detail).unwrap();
            let mut want = Vec::new();
            for (i, f) in a.iter().enumerate() {
                for (j, g) in b.iter().enumerate() {
                    if let Some((aabb, time)) = contact_of(detail, f, g) {
                        want.push(IndexPair { a: i as u32, b: j as u32, aabb, time });
                    }
                }
            }
            assert!(want.len() > 30, "{detail:?}: the sets must meet ({})", want.len());
            assert_eq!(got, want, "{detail:?}");
            let mut swapped: Vec<_> =
                collide_between(&b, &a, detail).unwrap().iter().map(|p| IndexPair { a: p.b, b: p.a, ..*p }).collect();
            swapped.sort_unstable_by_key(|p| (p.a, p.b));
            assert_eq!(swapped, want, "{detail:?}, the sets swapped");
        }
        assert!(collide_between(&a, &[], ContactDetail::ExactBox).unwrap().is_empty());
    }

    #[test]
    fn an_empty_set_has_no_pairs() {
        assert!(collide::<2>(&[], ContactDetail::ExactBox).unwrap().is_empty());
    }
}
