//! Cell sizes, levels and integer cell coordinates.

use crate::aabb::Aabb;

/// Largest cell coordinate magnitude stored, so that neighbours and
/// ranges around them stay well inside `i32`.
pub(crate) const MAX_CELL: f64 = (1u64 << 30) as f64;

/// Most levels: `w₀·2^63` exceeds any box a valid frame can sweep.
pub(crate) const MAX_LEVELS: usize = 64;

/// The base cell size `w₀` of level 0 and the reciprocal cell size of
/// every level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CellSize {
    base: f64,
    inv: [f64; MAX_LEVELS],
}

impl CellSize {
    /// A base cell size; must be positive and finite (checked by callers).
    pub fn new(base: f64) -> Self {
        // Scaling by a power of two is exact, so a cell's parent is exactly
        // its coordinates shifted right (see `parent`).
        let inv = std::array::from_fn(|l| (1.0 / base) * (-(l as f64)).exp2());
        CellSize { base, inv }
    }

    /// The base size `w₀`.
    pub fn base(&self) -> f64 {
        self.base
    }

    /// Reciprocal of the size of the cells of `level`.
    #[inline(always)]
    pub fn inv(&self, level: usize) -> f64 {
        self.inv[level]
    }

    /// Integer cell coordinates of point `p` at `level`.
    #[inline(always)]
    pub fn cell_of<const D: usize>(&self, p: &[f64; D], level: usize) -> [i32; D] {
        let inv = self.inv[level];
        std::array::from_fn(|i| floor_i32(p[i] * inv))
    }
}

/// `⌊x⌋` as `i32`, without a libm call (the baseline x86-64 target has no
/// rounding instruction), clamped to `±(2³¹ - 1)`.
///
/// Items are stored at levels where their cells are within `±2³⁰`, but a
/// query may ask for the cells of a far or huge box at a fine level: the
/// clamped range still covers every stored cell, and the minimum corner of
/// two overlapping boxes (inside both) is always in range.
#[inline(always)]
pub(crate) fn floor_i32(x: f64) -> i32 {
    let t = x as i64; // saturates
    let f = t.saturating_sub(i64::from(x < t as f64));
    f.clamp(-i64::from(i32::MAX), i64::from(i32::MAX)) as i32
}

/// The cell `levels` levels coarser that contains `cell`.
#[inline(always)]
pub(crate) fn parent<const D: usize>(cell: &[i32; D], levels: usize) -> [i32; D] {
    // Arithmetic shift: floor division by 2^levels, negative cells included.
    cell.map(|c| if levels >= 32 { if c < 0 { -1 } else { 0 } } else { c >> levels })
}

/// Number of cells in an inclusive range (saturating).
#[inline(always)]
pub(crate) fn cell_count<const D: usize>(lo: &[i32; D], hi: &[i32; D]) -> u64 {
    (0..D).fold(1u64, |n, i| n.saturating_mul((i64::from(hi[i]) - i64::from(lo[i]) + 1) as u64))
}

/// Calls `f` for each cell of the inclusive range, in lexicographic order.
#[inline(always)]
pub(crate) fn for_each_cell<const D: usize>(lo: &[i32; D], hi: &[i32; D], mut f: impl FnMut([i32; D])) {
    let mut c = *lo;
    loop {
        f(c);
        let mut i = 0;
        loop {
            if c[i] < hi[i] {
                c[i] += 1;
                break;
            }
            c[i] = lo[i];
            i += 1;
            if i == D {
                return;
            }
        }
    }
}

/// Interleaves the low bits of the coordinates (21 bits each in 3D, 32 in 2D).
#[inline(always)]
pub(crate) fn morton<const D: usize>(cell: &[i32; D]) -> u64 {
    (0..D).fold(0, |h, i| h | (spread::<D>(cell[i]) << i))
}

/// One coordinate's bits spread for a `D`-dimensional Morton code (before
/// the shift by its axis): `morton(c) = Σᵢ spread(cᵢ) << i`, so the codes
/// of a block of cells can share their coordinates' spreads.
#[inline(always)]
pub(crate) fn spread<const D: usize>(v: i32) -> u64 {
    let mut x = u64::from(v as u32);
    if D == 2 {
        x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
        x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
        x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
        x = (x | (x << 2)) & 0x3333_3333_3333_3333;
        (x | (x << 1)) & 0x5555_5555_5555_5555
    } else {
        x &= 0x1F_FFFF;
        x = (x | (x << 32)) & 0x001F_0000_0000_FFFF;
        x = (x | (x << 16)) & 0x001F_0000_FF00_00FF;
        x = (x | (x << 8)) & 0x100F_00F0_0F00_F00F;
        x = (x | (x << 4)) & 0x10C3_0C30_C30C_30C3;
        (x | (x << 2)) & 0x1249_2492_4924_9249
    }
}

/// The automatic base cell size: twice the median of the boxes' largest
/// extents.
///
/// The Mantel thesis found "cell ≈ median size" best for a flat grid of
/// mixed sizes (grid-lessons §3.10). In this hierarchy a box goes to the
/// finest level whose cells are at least its size, so with `w₀ = median`
/// half the boxes land on level 1 (cells of twice the median) and crowd it.
/// Measured on the uniform scene (100k oriented boxes, half extents
/// 0.5–1.5, single thread, `benches/scene_bench.rs`): `w₀` = 1×, 2×, 3×
/// the median gave about 260, 210 and 315 ms per step and 249, 200 and
/// 178 bytes of broad phase per frame. Sizing it to the boxes swept by
/// fast movers does not pay either: 1.5×, 2×, 2.5×, 3× the (at rest)
/// median gave 199.5, 190.5, 191.1 and 193.1 M instructions a warm step on
/// `uniform-fast` 20k with exact boxes (147.6, 139.4, 140.1 and 142.4 on
/// `uniform`; callgrind, 2026-11-27). The hierarchy takes care of the
/// large tail. Falls back to 1 for an empty or all-flat set.
pub(crate) fn cell_size_for<const D: usize>(boxes: impl Iterator<Item = Aabb<D>>, scratch: &mut Vec<f64>) -> CellSize {
    scratch.clear();
    scratch.extend(boxes.map(|b| b.extent().iter().fold(0.0f64, |m, &e| m.max(e))));
    if scratch.is_empty() {
        return CellSize::new(1.0);
    }
    let mid = scratch.len() / 2;
    let (_, median, _) = scratch.select_nth_unstable_by(mid, f64::total_cmp);
    CellSize::new(if *median > 0.0 && median.is_finite() { 2.0 * *median } else { 1.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morton_codes_interleave_and_separate_cells() {
        assert_eq!(morton(&[1, 0, 0]), 1);
        assert_eq!(morton(&[0, 1, 0]), 2);
        assert_eq!(morton(&[0, 0, 1]), 4);
        assert_eq!(morton(&[3, 3]), 0b1111);
        let mut seen = std::collections::HashSet::new();
        for x in -4..4 {
            for y in -4..4 {
                for z in -4..4 {
                    assert!(seen.insert(morton(&[x, y, z])));
                }
            }
        }
    }

    #[test]
    fn parents_contain_their_children() {
        let w = CellSize::new(0.7);
        for p in [[-3.3, 0.0, 5.1], [1e6, -1e6, 0.35], [-0.0001, 0.0001, -7.7]] {
            for l in 0..6 {
                for up in 0..40 {
                    assert_eq!(parent(&w.cell_of(&p, l), up), w.cell_of(&p, l + up), "{p:?} {l} {up}");
                }
            }
        }
    }

    #[test]
    fn floor_matches_the_library() {
        for x in [-2.5, -2.0, -1e-300, -0.0, 0.0, 0.3, 1.0, 7.999, 1e9, -1e9] {
            assert_eq!(floor_i32(x), x.floor() as i32, "{x}");
        }
        // Beyond the i32 range: clamped, never wrapped (a wrap once turned a
        // query from -3e9 to 1e15 into a single cell).
        assert_eq!(floor_i32(-3e9), -i32::MAX);
        assert_eq!(floor_i32(-1e300), -i32::MAX);
        assert_eq!(floor_i32(3e9), i32::MAX);
        assert_eq!(floor_i32(f64::from(i32::MIN) - 0.5), -i32::MAX);
    }

    #[test]
    fn twice_the_median_extent_sets_the_base() {
        let boxes = [1.0, 3.0, 2.0].map(|e| Aabb { min: [0.0, 0.0], max: [e, 0.1] });
        assert_eq!(cell_size_for(boxes.into_iter(), &mut Vec::new()).base(), 4.0);
    }
}
