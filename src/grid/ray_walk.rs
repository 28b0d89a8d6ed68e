//! A ray through a cell list: on each occupied level, the cells along the
//! ray in order (a DDA after Amanatides and Woo: the integer cell advances
//! along the axis whose boundary the ray meets first), and for each, the
//! block `[cell − 1, cell]` of cells whose slots can overlap it (a box
//! lives in the cell of its minimum corner and spans two cells at most).
//! A step along axis `k` brings in one slab of the block, `2^(D−1)` cells;
//! the rest was visited by the step before, so each cell, hence each slot,
//! is visited once.
//!
//! Rounding: where the ray passes within round-off of an edge or a corner
//! (two crossings closer than `1e-12` of their axes' scales), the DDA may
//! take them in the wrong order and skip a cell the ray grazes; the walk
//! then also visits the blocks of every cell around the edge or corner
//! (those the crossings in any order would enter). Those slots may come
//! twice, as may every slot when a level's walk gives up (cells beyond
//! the coordinates' range): callers must tolerate repeats; none is lost.
//! Each axis stops at the ray's end (or the best hit) plus its round-off,
//! and never steps past the ray's span of cells, so a nearly
//! axis-aligned ray costs its cells, not the round-off of its slow axis.

use super::cell_list::CellList;

/// Calls `visit(p)` for every slot `p` of `list` whose box may meet the
/// ray `origin + t · dir`, `0 ≤ t ≤ end` (a superset: the caller tests
/// exactly), at least once (repeats are rare: see the module docs). `visit` returns the ray parameter beyond which
/// nothing more is wanted (the best hit so far, or `end`); a level's walk
/// stops at the first segment that starts beyond it.
pub(crate) fn walk_ray<const D: usize>(
    list: &CellList<D>,
    origin: &[f64; D],
    dir: &[f64; D],
    end: f64,
    mut visit: impl FnMut(usize) -> f64,
) {
    let Some((occupied, huge)) = list.walk_plan() else {
        // A short list: every slot.
        for p in 0..list.len() {
            visit(p);
        }
        return;
    };
    let mut bound = end;
    for p in huge..list.len() {
        bound = bound.min(visit(p));
    }
    let mut levels = occupied;
    while levels != 0 {
        let l = levels.trailing_zeros();
        levels &= levels - 1;
        if !walk_level(list, l, origin, dir, end, &mut bound, &mut visit) {
            // Cells finer than the ray's round-off: every slot instead.
            for p in 0..list.len() {
                visit(p);
            }
            return;
        }
    }
}

/// The walk over level `l`'s cells; false, having visited nothing more,
/// when the ray's cells leave the range of cell coordinates (a ray far
/// beyond every listed box, or over cells finer than its round-off).
fn walk_level<const D: usize>(
    list: &CellList<D>,
    l: u32,
    origin: &[f64; D],
    dir: &[f64; D],
    end: f64,
    bound: &mut f64,
    visit: &mut impl FnMut(usize) -> f64,
) -> bool {
    let inv = list.cell_size().inv(l as usize);
    // A direction component below 1e-300 moves the ray by less than
    // 1e-285 over any range: it counts as zero (its reciprocal would be
    // infinite).
    let dir: [f64; D] = dir.map(|x| if x.abs() < 1e-300 { 0.0 } else { x });
    let mut cell: [i64; D] = std::array::from_fn(|k| (origin[k] * inv).floor() as i64);
    let step: [i64; D] = std::array::from_fn(|k| if dir[k] > 0.0 { 1 } else { -1 });
    // The cells the ray can reach along each axis: its span, one more
    // each side. No axis steps past them.
    let last: [i64; D] = std::array::from_fn(|k| ((origin[k] + end * dir[k]) * inv).floor() as i64 + step[k]);
    // The ray parameter at which it leaves cell `c` along axis `k`
    // (products, not quotients: within an ulp or two, far below `tie`).
    let (width, over): (f64, [f64; D]) = (1.0 / inv, std::array::from_fn(|k| 1.0 / dir[k]));
    let exit = |k: usize, c: i64| {
        if dir[k] == 0.0 { f64::INFINITY } else { ((c + i64::from(dir[k] > 0.0)) as f64 * width - origin[k]) * over[k] }
    };
    let mut next: [f64; D] = std::array::from_fn(|k| exit(k, cell[k]));
    // Per axis, crossings closer than this (far above their round-off) may
    // come in either order.
    let tie: [f64; D] = std::array::from_fn(|k| {
        if dir[k] == 0.0 { 0.0 } else { 1e-12 * ((origin[k].abs() + width) * over[k].abs() + end) }
    });
    let mut cells = [[0i32; D]; 8];
    let Some(n) = block(&cell, None, &mut cells) else { return false };
    list.cells_slots(&cells[..n], l, |s| *bound = bound.min(visit(s)));
    loop {
        // Axes whose next crossing is past the ray's end (or the best hit),
        // or past the ray's span of cells, are done.
        let limit = end.min(*bound);
        for k in 0..D {
            if next[k] > limit + tie[k] || cell[k] == last[k] {
                next[k] = f64::INFINITY;
            }
        }
        let k = (0..D).min_by(|&i, &j| next[i].total_cmp(&next[j])).unwrap_or(0);
        let t = next[k];
        if t == f64::INFINITY {
            return true;
        }
        // The ray passes (nearly) through an edge or a corner: every cell
        // around it, which crossings in another order would enter.
        let tied: usize = (0..D).filter(|&j| next[j] - t <= tie[j] + tie[k]).map(|j| 1 << j).sum();
        if tied != 1 << k {
            for subset in (1..1usize << D).filter(|m| m & !tied == 0 && *m != 1 << k) {
                let beside: [i64; D] =
                    std::array::from_fn(|j| cell[j] + if subset >> j & 1 == 1 { step[j] } else { 0 });
                let Some(n) = block(&beside, None, &mut cells) else { return false };
                list.cells_slots(&cells[..n], l, |s| *bound = bound.min(visit(s)));
            }
        }
        cell[k] += step[k];
        next[k] = exit(k, cell[k]);
        // Only the slab of the block that the step brings in.
        let slab = if step[k] > 0 { cell[k] } else { cell[k] - 1 };
        let Some(n) = block(&cell, Some((k, slab)), &mut cells) else { return false };
        list.cells_slots(&cells[..n], l, |s| *bound = bound.min(visit(s)));
    }
}

/// The cells `[cell − 1, cell]` (those whose boxes can reach into `cell`:
/// a box lives in the cell of its minimum corner, spanning two cells at
/// most), or only those with coordinate `slab.1` along axis `slab.0`;
/// their number, or `None` beyond the cell coordinates' range.
fn block<const D: usize>(cell: &[i64; D], slab: Option<(usize, i64)>, out: &mut [[i32; D]; 8]) -> Option<usize> {
    let limit = i64::from(i32::MAX) - 1;
    if cell.iter().any(|c| c.abs() > limit) {
        return None;
    }
    let mut n = 0;
    for m in 0..1usize << D {
        let c: [i64; D] = std::array::from_fn(|i| cell[i] - ((m >> i) & 1) as i64);
        if slab.is_none_or(|(k, s)| c[k] == s) {
            // In range: checked above.
            out[n] = c.map(|x| x as i32);
            n += 1;
        }
    }
    Some(n)
}
