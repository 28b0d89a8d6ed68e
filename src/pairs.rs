//! Candidate pairs: what the broad phase hands to the narrow phase.
//!
//! One pass over the moving grid's entries in bucket order, which the Morton
//! hashing makes spatially coherent. For an entry (item `a`, cell `c` of
//! level `ℓ`):
//! 1. moving items later in the same cell's bucket, same level;
//! 2. moving items of coarser levels, in the parent cell of `c`;
//! 3. fixed items of level `ℓ` and coarser, in `c` or its parent cell;
//! 4. fixed items of finer levels, by a box query, once per item (from the
//!    cell of its box's minimum corner).
//!
//! In 1–2, moving items of `a`'s group (its body) are skipped before their
//! boxes are read: in a mesh most overlapping boxes are the body's own
//! neighbours.
//!
//! In 1–3 a pair is kept only when the minimum corner of the two boxes'
//! overlap lies in `c`: that corner lies in exactly one of `a`'s cells, and
//! the partner is referenced in that cell (or its parent) since its box
//! holds the corner too. So every overlapping pair is produced exactly once,
//! in an order that depends on the data only.

use std::ops::Range;

use crate::grid::{GridBox, HashGrid, parent};

/// The other side of a candidate pair, by index in its grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Partner {
    /// An item of the moving grid.
    Moving(u32),
    /// An item of the fixed grid.
    Fixed(u32),
}

/// Levels set in `mask` from `from` up, finest first.
#[inline(always)]
fn levels_from(mask: u64, from: usize) -> impl Iterator<Item = usize> {
    let mut m = if from >= 64 { 0 } else { mask & (u64::MAX << from) };
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            l
        })
    })
}

/// Calls `f(a, partner)` for each candidate pair whose moving entry lies in
/// `range` of `moving.entries()`. Over the whole range every pair of
/// overlapping boxes, moving–moving (but for items of one group) and
/// moving–fixed, comes out once. Both grids must share their cell size.
pub(crate) fn for_each_candidate<const D: usize>(
    moving: &HashGrid<D>,
    fixed: &HashGrid<D>,
    range: Range<usize>,
    mut f: impl FnMut(u32, Partner),
) {
    // An invariant of the world (both grids are rebuilt on a size change), not
    // of user data: the rest of a `CellSize` follows from its base.
    assert_eq!(moving.size().base(), fixed.size().base(), "grids with different cell sizes");
    let size = moving.size();
    let entries = moving.entries();
    for at in range {
        let e = entries[at];
        let (a, level) = (e.item(), e.level());
        let qa = moving.aabb(a);
        let here = |b: &GridBox<D>| b.intersects(qa) && size.cell_of(&b.corner(qa), level) == e.cell;

        for x in &entries[at + 1..moving.bucket_end(at)] {
            if x.is(&e.cell, level) && !moving.same_group(a, x.item()) && here(moving.aabb(x.item())) {
                f(a, Partner::Moving(x.item()));
            }
        }
        for j in levels_from(moving.occupied(), level + 1) {
            let cell = parent(&e.cell, j - level);
            for x in moving.bucket_entries(&cell, j) {
                if x.is(&cell, j) && !moving.same_group(a, x.item()) && here(moving.aabb(x.item())) {
                    f(a, Partner::Moving(x.item()));
                }
            }
        }
        for j in levels_from(fixed.occupied(), level) {
            let cell = parent(&e.cell, j - level);
            for x in fixed.bucket_entries(&cell, j) {
                if x.is(&cell, j) && here(fixed.aabb(x.item())) {
                    f(a, Partner::Fixed(x.item()));
                }
            }
        }
        let finer = fixed.occupied() & ((1u64 << level) - 1);
        if finer != 0 && size.cell_of(&qa.min(), level) == e.cell {
            for j in levels_from(finer, 0) {
                fixed.query_level(qa, j, &mut |b| f(a, Partner::Fixed(b)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aabb::Aabb;
    use crate::grid::{CellSize, random_boxes};

    /// Candidates with moving item `i` in group `group(i)`.
    fn candidates(
        moving: &[Aabb<3>],
        fixed: &[Aabb<3>],
        base: f64,
        group: impl Fn(usize) -> u32,
    ) -> Vec<(u32, Partner)> {
        let size = CellSize::new(base);
        let (mut m, mut s) = (HashGrid::default(), HashGrid::default());
        m.build_for_pairs(size, moving.iter().enumerate().map(|(i, b)| (*b, group(i))), true);
        s.build(size, fixed.iter().copied());
        let mut out = Vec::new();
        // In two halves, as parallel chunks would.
        let n = m.entries().len();
        for range in [0..n / 2, n / 2..n] {
            for_each_candidate(&m, &s, range, |a, p| out.push((a, p)));
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

    fn check_against_brute_force(group: impl Fn(usize) -> u32 + Copy) {
        for (seed, base) in [(1, 1.0), (2, 0.05), (3, 30.0), (4, 3.0)] {
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
