//! Candidate pairs: what the broad phase hands to the narrow phase.
//!
//! Entries in a fixed order, each with its moving partners, then its fixed
//! ones. Two sources of entries and moving partners:
//! * the pair set (`world/pair_set.rs`, worlds without large bodies):
//!   entries are the moving frames in store order (spatial: the store is
//!   ordered along a Morton curve), and frame `a`'s moving partners are the
//!   frames after it whose swept boxes overlap its own, ascending;
//! * the moving frames' cell list (worlds with a large body, a mesh): one
//!   pass in slot order, which the Morton bucketing makes spatially
//!   coherent; the slot of item `a` gives the slots after it in its cell,
//!   its forward neighbour cells, and the cover entries of coarser levels in
//!   its own cells (`CellList::partners`); items of `a`'s group (its body)
//!   are skipped, so a mesh's own neighbouring elements never pair.
//!
//! Fixed partners are the fixed frames' slots whose boxes overlap `a`'s, in
//! slot order: from `a`'s near list (`grid/near.rs`) while `a` stays in its
//! fat box, else by a box query on the fixed frames' cell list.
//!
//! The order depends on the data only, so chunks of entries run in
//! parallel give the same list in the same order as one pass, and a world
//! gives the same list whatever its history.

use std::ops::Range;

use crate::grid::{CellList, GridBox, NearLists, Spreads};

/// The other side of a candidate pair, by index in its grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Partner {
    /// An item of the moving cell list, by its id.
    Moving(u32),
    /// An item of the fixed grid.
    Fixed(u32),
}

/// The fixed side of the broad phase: the fixed frames' cell list, and
/// the moving items' near lists into it (indexed by the moving items' ids).
#[derive(Clone, Copy)]
pub(crate) struct FixedSide<'a, const D: usize> {
    pub list: &'a CellList<D>,
    pub near: &'a NearLists<D>,
}

/// Where a slot's moving partners come from.
#[derive(Clone, Copy)]
pub(crate) enum MovingSide<'a, const D: usize> {
    /// The pairs pass over the moving cell list.
    Pass(&'a CellList<D>),
    /// The pair set's candidates (`world/pair_set.rs`): entries are the
    /// moving frames in store order, each giving its pairs with the frames
    /// after it.
    Set(SetSide<'a, D>),
}

/// The pair set as the candidate pass reads it: moving frame `a`'s kept
/// pairs are `pairs[starts[a]..starts[a + 1]]` (`a << 32 | b`, `b > a`),
/// and the frames' swept boxes this step (rounded) are `swept`.
#[derive(Clone, Copy)]
pub(crate) struct SetSide<'a, const D: usize> {
    pub starts: &'a [u32],
    pub pairs: &'a [u64],
    pub swept: &'a [GridBox<D>],
}

impl<const D: usize> SetSide<'_, D> {
    /// Frame `a`'s swept box this step.
    #[inline(always)]
    pub fn swept_box(&self, a: usize) -> GridBox<D> {
        self.swept[a]
    }

    /// Calls `f(b)` for each frame `b` of `a`'s kept pairs whose swept box
    /// overlaps `a`'s (closed test): `a`'s moving candidates, in store order.
    #[inline(always)]
    pub fn partners(&self, a: usize, mut f: impl FnMut(u32)) {
        let me = &self.swept[a];
        // The outcome is unpredictable (about half the kept pairs overlap
        // this step): the overlapping ones are gathered without a branch,
        // a batch at a time, then handed on.
        let mut batch = [0u32; 32];
        for pairs in self.pairs[self.starts[a] as usize..self.starts[a + 1] as usize].chunks(32) {
            let mut n = 0;
            for &k in pairs {
                let b = k as u32;
                batch[n] = b;
                n += usize::from(me.overlaps(&self.swept[b as usize]));
            }
            batch[..n].iter().for_each(|&b| f(b));
        }
    }
}

/// Calls `f(a, partner)` for each candidate pair whose first moving item
/// (`a`, its id) is one of the entries `range` (moving frames in store
/// order with the pair set, else the cell list's slots). Over all entries,
/// every pair of overlapping (rounded) boxes, moving–moving (but for items
/// of one group) and moving–fixed, comes out once; an entry's moving
/// partners come first (ascending with the pair set, in the pass's order
/// otherwise), then its fixed ones, in the fixed list's slot order.
/// `scratch` is reused, and grows fallibly: false when it did not fit in
/// memory (the enumeration stopped there).
#[must_use]
pub(crate) fn for_each_candidate<const D: usize>(
    moving: MovingSide<'_, D>,
    fixed: FixedSide<'_, D>,
    range: Range<usize>,
    scratch: &mut Vec<u32>,
    f: impl FnMut(u32, Partner),
) -> bool {
    // One function per source, so that each is compiled as if alone.
    match moving {
        MovingSide::Pass(list) => passed(list, fixed, range, scratch, f),
        MovingSide::Set(set) => from_set(set, fixed, range, scratch, f),
    }
}

/// [`for_each_candidate`] from the pair set: entry `a` is moving frame `a`.
fn from_set<const D: usize>(
    set: SetSide<'_, D>,
    fixed: FixedSide<'_, D>,
    range: Range<usize>,
    scratch: &mut Vec<u32>,
    mut f: impl FnMut(u32, Partner),
) -> bool {
    let any_fixed = !fixed.list.is_empty();
    for a in range {
        // Store indices fit `u32` (`MAX_ITEMS`).
        let item = a as u32;
        set.partners(a, |b| f(item, Partner::Moving(b)));
        if any_fixed && !fixed_near(fixed, item, &set.swept_box(a), scratch, &mut f) {
            return false;
        }
    }
    true
}

/// [`for_each_candidate`] through the pairs pass.
fn passed<const D: usize>(
    list: &CellList<D>,
    fixed: FixedSide<'_, D>,
    range: Range<usize>,
    scratch: &mut Vec<u32>,
    mut f: impl FnMut(u32, Partner),
) -> bool {
    let any_fixed = !fixed.list.is_empty();
    let mut spreads = Spreads::default();
    for p in range {
        let a = list.item(p);
        list.partners(p, &mut spreads, |q| f(a, Partner::Moving(list.item(q))));
        if any_fixed && !fixed_partners(list, fixed, p, scratch, &mut f) {
            return false;
        }
    }
    true
}

/// Calls `f(a, partner)` for the fixed partners of slot `p` (item `a`);
/// false when `scratch` did not fit in memory.
#[inline(always)]
fn fixed_partners<const D: usize>(
    list: &CellList<D>,
    fixed: FixedSide<'_, D>,
    p: usize,
    scratch: &mut Vec<u32>,
    f: &mut impl FnMut(u32, Partner),
) -> bool {
    fixed_near(fixed, list.item(p), &list.grid_box(p), scratch, f)
}

/// Calls `f(a, partner)` for the fixed partners of moving item `a`, whose
/// swept box is `q`; false when `scratch` did not fit in memory.
#[inline(always)]
fn fixed_near<const D: usize>(
    fixed: FixedSide<'_, D>,
    a: u32,
    q: &GridBox<D>,
    scratch: &mut Vec<u32>,
    f: &mut impl FnMut(u32, Partner),
) -> bool {
    fixed.near.for_each(fixed.list, a as usize, q, scratch, |s| f(a, Partner::Fixed(fixed.list.item(s))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aabb::Aabb;
    use crate::grid::{CellSize, GridBox, random_boxes};

    /// Candidates with moving item `i` in group `group(i)`.
    fn candidates(
        moving: &[Aabb<3>],
        fixed: &[Aabb<3>],
        base: f64,
        group: impl Fn(usize) -> u32,
    ) -> Vec<(u32, Partner)> {
        let size = CellSize::new(base);
        let (mut m, mut s) = (CellList::default(), CellList::default());
        m.build(size, moving.len(), |i| (moving[i], i as u32), Some(&group)).unwrap();
        // The fixed list on its own cell size: queries need no shared one.
        s.build(CellSize::new(base * 3.0), fixed.len(), |k| (fixed[k], k as u32), None).unwrap();
        let mut out = Vec::new();
        // In two halves, as parallel chunks would; no near lists (each
        // fixed partner by a query).
        let (n, near) = (m.len(), NearLists::default());
        for range in [0..n / 2, n / 2..n] {
            let fixed = FixedSide { list: &s, near: &near };
            assert!(for_each_candidate(MovingSide::Pass(&m), fixed, range, &mut Vec::new(), |a, p| out.push((a, p))));
        }
        out
    }

    fn brute(moving: &[Aabb<3>], fixed: &[Aabb<3>], group: impl Fn(usize) -> u32) -> Vec<(u32, Partner)> {
        let mut out = Vec::new();
        for i in 0..moving.len() {
            for j in i + 1..moving.len() {
                if group(i) != group(j) && GridBox::new(&moving[i]).overlaps(&GridBox::new(&moving[j])) {
                    out.push((i as u32, Partner::Moving(j as u32)));
                }
            }
            for (k, f) in fixed.iter().enumerate() {
                if GridBox::new(&moving[i]).overlaps(&GridBox::new(f)) {
                    out.push((i as u32, Partner::Fixed(k as u32)));
                }
            }
        }
        out
    }

    fn key(p: &(u32, Partner)) -> (u32, u8, u32) {
        match p.1 {
            Partner::Moving(b) => (p.0, 0, b),
            Partner::Fixed(b) => (p.0, 1, b),
        }
    }

    #[test]
    fn every_overlapping_pair_comes_out_once() {
        check_against_brute_force(|i| i as u32);
    }

    #[test]
    fn items_of_one_group_never_pair() {
        // Groups of 7 neighbours in item order, and groups spread out.
        check_against_brute_force(|i| (i / 7) as u32);
        check_against_brute_force(|i| (i % 5) as u32);
    }

    fn check_against_brute_force(group: impl Fn(usize) -> u32 + Copy) {
        // Base 1e-300: no level fits, every box is huge.
        for (seed, base) in [(1, 1.0), (2, 0.05), (3, 30.0), (4, 3.0), (5, 1e-300)] {
            let moving = random_boxes(700, seed, 40.0);
            let fixed = random_boxes(900, seed + 100, 40.0);
            let mut got = candidates(&moving, &fixed, base, group);
            // Normalise moving pairs to (min, max).
            for (a, p) in &mut got {
                if let Partner::Moving(b) = p {
                    let (x, y) = ((*a).min(*b), (*a).max(*b));
                    (*a, *p) = (x, Partner::Moving(y));
                }
            }
            let n = got.len();
            got.sort_by_key(key);
            got.dedup();
            assert_eq!(got.len(), n, "duplicates at base {base}");
            let mut expect = brute(&moving, &fixed, group);
            expect.sort_by_key(key);
            assert_eq!(got, expect, "base {base}");
        }
    }
}
