//! Cell sizes, levels and integer cell coordinates.

use crate::aabb::Aabb;

/// Largest cell coordinate magnitude used: cells stay well inside `i32`.
const MAX_CELL: f64 = (1u64 << 30) as f64;

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

    /// Size of the cells of `level`.
    #[inline]
    pub fn width(&self, level: usize) -> f64 {
        self.base * (level as f64).exp2()
    }

    /// The finest level whose cells are at least as large as `b`'s extent
    /// and whose cell coordinates of `b` fit comfortably in `i32`.
    #[inline]
    pub fn level_of<const D: usize>(&self, b: &Aabb<D>) -> usize {
        let extent = b.extent().iter().fold(0.0f64, |m, &e| m.max(e));
        let reach = (0..D).fold(0.0f64, |m, i| m.max(b.min[i].abs()).max(b.max[i].abs()));
        let mut level = 0;
        // Start from the level the extent asks for, then climb while needed.
        if extent > self.base {
            level = ((extent / self.base).log2().ceil() as usize).min(MAX_LEVELS - 1);
        }
        while level < MAX_LEVELS - 1 && (self.width(level) < extent || reach / self.width(level) >= MAX_CELL) {
            level += 1;
        }
        level
    }

    /// Integer cell coordinates of point `p` at `level`.
    #[inline(always)]
    pub fn cell_of<const D: usize>(&self, p: &[f64; D], level: usize) -> [i32; D] {
        let inv = self.inv[level];
        std::array::from_fn(|i| floor_i32(p[i] * inv))
    }

    /// The inclusive range of cells `b` overlaps at `level`.
    #[inline(always)]
    pub fn cell_range<const D: usize>(&self, b: &Aabb<D>, level: usize) -> ([i32; D], [i32; D]) {
        (self.cell_of(&b.min, level), self.cell_of(&b.max, level))
    }
}

/// `⌊x⌋` as `i32`, without a libm call (the baseline x86-64 target has no
/// rounding instruction), clamped to `±(2³¹ - 1)`.
///
/// Items are stored at levels where their cells are within `±2³⁰`, but a
/// query may ask for the cells of a far or huge box at a fine level: the
/// clamped range still covers every stored cell, and a reference point
/// (inside both boxes of a pair) is always in range.
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

/// The automatic base cell size: twice the median of the boxes' largest
/// extents.
///
/// The Mantel thesis found "cell ≈ median size" best for a flat grid of
/// mixed sizes (grid-lessons §3.10). In this hierarchy a box goes to the
/// finest level whose cells are at least its size, so with `w₀ = median`
/// half the boxes land on level 1 (cells of twice the median) and crowd it.
/// Measured on the uniform scene (100k oriented boxes, half extents
/// 0.5–1.5, single thread, `examples/scene_bench.rs`): `w₀` = 1×, 2×, 3×
/// the median gave about 260, 210 and 315 ms per step and 249, 200 and
/// 178 bytes of broad phase per frame. The hierarchy takes care of the
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
    fn levels_grow_with_extent_and_far_positions() {
        let w = CellSize::new(1.0);
        let b = |lo: f64, hi: f64| Aabb { min: [lo, 0.0], max: [hi, 0.5] };
        assert_eq!(w.level_of(&b(0.0, 0.5)), 0);
        assert_eq!(w.level_of(&b(0.0, 1.0)), 0);
        assert_eq!(w.level_of(&b(0.0, 1.5)), 1);
        assert_eq!(w.level_of(&b(0.0, 1000.0)), 10);
        assert_eq!(w.level_of(&b(0.0, 1e12)), 40);
        // Far but small: climbs until cell coordinates fit.
        let far = w.level_of(&b(1e14, 1e14 + 0.5));
        assert!(1e14 / w.width(far) < MAX_CELL);
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
    fn cell_ranges_cover_boxes() {
        let w = CellSize::new(2.0);
        let b = Aabb { min: [-3.0, 0.0, 1.9], max: [1.0, 0.0, 2.1] };
        assert_eq!(w.cell_range(&b, 0), ([-2, 0, 0], [0, 0, 1]));
        let mut n = 0;
        let (lo, hi) = w.cell_range(&b, 0);
        for_each_cell(&lo, &hi, |_| n += 1);
        assert_eq!(n as u64, cell_count(&lo, &hi));
        assert_eq!(n, 6);
    }

    #[test]
    fn twice_the_median_extent_sets_the_base() {
        let boxes = [1.0, 3.0, 2.0].map(|e| Aabb { min: [0.0, 0.0], max: [e, 0.1] });
        assert_eq!(cell_size_for(boxes.into_iter(), &mut Vec::new()).base(), 4.0);
    }
}
