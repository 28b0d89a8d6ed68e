//! Candidate pairs: what the broad phase hands to the narrow phase.
//!
//! One pass over the moving frames' cell list in slot order, which the
//! Morton bucketing makes spatially coherent. For the slot of moving item `a`:
//! 1. moving partners, each pair once, from the cell list: the slots after
//!    `a` in its cell, its forward neighbour cells, and the cover entries of
//!    coarser levels in its own cells (`CellList::partners`); items of `a`'s
//!    group (its body) are skipped, so a mesh's own neighbouring elements
//!    never pair;
//! 2. fixed partners, the fixed frames' slots whose boxes overlap `a`'s,
//!    in slot order: from `a`'s near list (`grid/near.rs`) while `a` stays
//!    in its fat box, else by a box query on the fixed frames' cell list.
//!
//! A slot's moving partners are found by the pass above, or read off the
//! kept pairs (`world/kept_pairs.rs`) when the broad phase kept them: the
//! same pairs, given from the same side ([`CellList::gives`]), in the same
//! order ([`CellList::given_at`]). The order depends on the data
//! only, so chunks of slots run in parallel give the same list in the same
//! order as one pass, and a world gives the same list whatever its history.

use std::ops::Range;

use crate::grid::{CellList, NearLists, Spreads};

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
    /// The kept pairs' candidates of this step over that list: the slots
    /// given by slot `p` are `given[starts[p]..starts[p + 1]]`, in the
    /// pass's order (`KeptPairs::candidates`, as `(starts, given)`).
    Kept(&'a CellList<D>, &'a [u32], &'a [u32]),
}

/// Calls `f(a, partner)` for each candidate pair whose first moving item
/// (`a`, its id) sits in `range` of the cell list's slots. Over all slots, every pair of
/// overlapping (rounded) boxes, moving–moving (but for items of one group)
/// and moving–fixed, comes out once; a moving item's moving partners come
/// first, in the pass's order ([`CellList::given_at`]), then its fixed
/// ones, in the fixed list's slot order. `scratch` is reused.
pub(crate) fn for_each_candidate<const D: usize>(
    moving: MovingSide<'_, D>,
    fixed: FixedSide<'_, D>,
    range: Range<usize>,
    scratch: &mut Vec<u32>,
    f: impl FnMut(u32, Partner),
) {
    // One function per source, so that each is compiled as if alone.
    match moving {
        MovingSide::Pass(list) => passed(list, fixed, range, scratch, f),
        MovingSide::Kept(list, starts, given) => kept(list, starts, given, fixed, range, scratch, f),
    }
}

/// [`for_each_candidate`] through the pairs pass.
fn passed<const D: usize>(
    list: &CellList<D>,
    fixed: FixedSide<'_, D>,
    range: Range<usize>,
    scratch: &mut Vec<u32>,
    mut f: impl FnMut(u32, Partner),
) {
    let any_fixed = !fixed.list.is_empty();
    let mut spreads = Spreads::default();
    for p in range {
        let a = list.item(p);
        list.partners(p, &mut spreads, |q| f(a, Partner::Moving(list.item(q))));
        if any_fixed {
            fixed_partners(list, fixed, p, scratch, &mut f);
        }
    }
}

/// [`for_each_candidate`] from the kept candidates (not inlined: the
/// pass's loop, inlined alone, compiles to fewer instructions).
#[inline(never)]
fn kept<const D: usize>(
    list: &CellList<D>,
    starts: &[u32],
    given: &[u32],
    fixed: FixedSide<'_, D>,
    range: Range<usize>,
    scratch: &mut Vec<u32>,
    mut f: impl FnMut(u32, Partner),
) {
    let any_fixed = !fixed.list.is_empty();
    for p in range {
        let a = list.item(p);
        for &q in &given[starts[p] as usize..starts[p + 1] as usize] {
            f(a, Partner::Moving(list.item(q as usize)));
        }
        if any_fixed {
            fixed_partners(list, fixed, p, scratch, &mut f);
        }
    }
}

/// Calls `f(a, partner)` for the fixed partners of slot `p` (item `a`).
#[inline(always)]
fn fixed_partners<const D: usize>(
    list: &CellList<D>,
    fixed: FixedSide<'_, D>,
    p: usize,
    scratch: &mut Vec<u32>,
    f: &mut impl FnMut(u32, Partner),
) {
    let a = list.item(p);
    let q = list.grid_box(p);
    fixed.near.for_each(fixed.list, a as usize, &q, scratch, |s| f(a, Partner::Fixed(fixed.list.item(s))));
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
        m.build(size, moving.len(), |i| (moving[i], i as u32), Some(&group));
        // The fixed list on its own cell size: queries need no shared one.
        s.build(CellSize::new(base * 3.0), fixed.len(), |k| (fixed[k], k as u32), None);
        let mut out = Vec::new();
        // In two halves, as parallel chunks would; no near lists (each
        // fixed partner by a query).
        let (n, near) = (m.len(), NearLists::default());
        for range in [0..n / 2, n / 2..n] {
            let fixed = FixedSide { list: &s, near: &near };
            for_each_candidate(MovingSide::Pass(&m), fixed, range, &mut Vec::new(), |a, p| out.push((a, p)));
        }
        out
    }

    fn brute(moving: &[Aabb<3>], fixed: &[Aabb<3>], group: impl Fn(usize) -> u32) -> Vec<(u32, Partner)> {
        let mut out = Vec::new();
        for i in 0..moving.len() {
            for j in i + 1..moving.len() {
                if group(i) != group(j) && GridBox::new(&moving[i]).intersects(&GridBox::new(&moving[j])) {
                    out.push((i as u32, Partner::Moving(j as u32)));
                }
            }
            for (k, f) in fixed.iter().enumerate() {
                if GridBox::new(&moving[i]).intersects(&GridBox::new(f)) {
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

    /// `CellList::gives` names the side each pair comes out from and
    /// `CellList::given_at` its place, which the kept pairs rely on: every
    /// pair the pass gives from `p` has `gives(p, q)` and not `gives(q,
    /// p)`, and `given_at(p, q)` increases along the pass's order.
    #[test]
    fn gives_names_the_side_of_every_pair() {
        for (seed, base) in [(1, 1.0), (2, 0.05), (3, 30.0), (4, 3.0), (5, 1e-300)] {
            let moving = random_boxes(700, seed, 40.0);
            let mut m = CellList::default();
            m.build(CellSize::new(base), moving.len(), |i| (moving[i], i as u32), None);
            let (mut spreads, mut given) = (Spreads::default(), 0);
            for p in 0..m.len() {
                let mut last = None;
                m.partners(p, &mut spreads, |q| {
                    assert!(m.pairs(p, q), "base {base}: {p}, {q}");
                    assert!(m.gives(p, q) && !m.gives(q, p), "base {base}: {p} gives {q}");
                    let at = m.given_at(p, q);
                    assert!(last < Some(at), "base {base}: {p} gives {q} out of order");
                    last = Some(at);
                    given += 1;
                });
            }
            assert!(given > 100, "base {base}: {given} pairs");
        }
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
