//! The hashed grid itself: build by counting sort, query by cell look-up.

use super::cell::{CellSize, MAX_LEVELS, cell_count, for_each_cell};
use super::grid_box::GridBox;
use crate::aabb::Aabb;

/// Most items a grid holds: item numbers share a word with the level.
pub(crate) const MAX_ITEMS: usize = 1 << ITEM_BITS;
const ITEM_BITS: u32 = 26;

/// The level of the boxes too large for every level.
const HUGE: usize = MAX_LEVELS;

/// One reference of an item in one cell: 16 bytes in 3D.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<const D: usize> {
    pub cell: [i32; D],
    /// Item number (low 26 bits) and level (high 6 bits).
    tag: u32,
}

impl<const D: usize> Entry<D> {
    #[inline(always)]
    fn new(cell: [i32; D], item: u32, level: usize) -> Self {
        Entry { cell, tag: item | (level as u32) << ITEM_BITS }
    }

    /// The item referenced.
    #[inline(always)]
    pub fn item(&self) -> u32 {
        self.tag & (MAX_ITEMS as u32 - 1)
    }

    /// The level of the cell.
    #[inline(always)]
    pub fn level(&self) -> usize {
        (self.tag >> ITEM_BITS) as usize
    }

    /// True when this entry is for `cell` of `level`.
    #[inline(always)]
    pub fn is(&self, cell: &[i32; D], level: usize) -> bool {
        self.level() == level && self.cell == *cell
    }
}

/// A hierarchical hashed grid over a set of boxes ("items", numbered in the
/// order given to [`HashGrid::build`]). Rebuilding reuses every buffer, so a
/// grid rebuilt each step allocates nothing once warm.
#[derive(Clone, Debug)]
pub(crate) struct HashGrid<const D: usize> {
    size: CellSize,
    boxes: Vec<GridBox<D>>,
    levels: Vec<u8>,
    /// Bucket `b` holds `entries[starts[b]..starts[b + 1]]`.
    starts: Vec<u32>,
    entries: Vec<Entry<D>>,
    /// Bucket count minus one (a power of two minus one).
    mask: u64,
    /// Items of level `ℓ`: `by_level[level_starts[ℓ]..level_starts[ℓ + 1]]`;
    /// level `HUGE` lists the boxes too large for every level.
    level_starts: [u32; MAX_LEVELS + 2],
    by_level: Vec<u32>,
    /// Bit `ℓ` set when level `ℓ` has items.
    occupied: u64,
}

impl<const D: usize> Default for HashGrid<D> {
    fn default() -> Self {
        HashGrid {
            size: CellSize::new(1.0),
            boxes: Vec::new(),
            levels: Vec::new(),
            starts: Vec::new(),
            entries: Vec::new(),
            mask: 0,
            level_starts: [0; MAX_LEVELS + 2],
            by_level: Vec::new(),
            occupied: 0,
        }
    }
}

impl<const D: usize> HashGrid<D> {
    /// Rebuilds the grid over `boxes` with base cell size `size`.
    pub fn build(&mut self, size: CellSize, boxes: impl Iterator<Item = Aabb<D>>) {
        self.boxes.clear();
        self.boxes.extend(boxes.map(|b| GridBox::new(&b)));
        self.index(size);
    }

    /// Levels, entries and buckets of the boxes just stored, and the items
    /// of each level.
    fn index(&mut self, size: CellSize) {
        self.size = size;
        self.levels.clear();
        self.levels.extend(self.boxes.iter().map(|b| {
            let l = size.level_of(&b.to_aabb());
            let (lo, hi) = size.cell_range(&b.to_aabb(), l);
            // Beyond the top level (a manual cell size far below the boxes'
            // sizes): listed apart and tested by every query.
            if cell_count(&lo, &hi) > 3u64.pow(D as u32) { HUGE as u8 } else { l as u8 }
        }));

        // Pass 1: count the entries, choose the table size.
        let total: usize = self
            .boxes
            .iter()
            .zip(&self.levels)
            .filter(|(_, l)| usize::from(**l) != HUGE)
            .map(|(b, &l)| {
                let (lo, hi) = size.cell_range(&b.to_aabb(), usize::from(l));
                // At most 3^D cells: checked above.
                cell_count(&lo, &hi) as usize
            })
            .sum();
        // One to two entries per bucket: cells are compared anyway, and the
        // bucket array is a third of the grid's memory at load one.
        let buckets = (total / 2).max(1).next_power_of_two();
        self.mask = buckets as u64 - 1;
        self.starts.clear();
        self.starts.resize(buckets + 1, 0);
        for (b, &l) in self.boxes.iter().zip(&self.levels).filter(|(_, l)| usize::from(**l) != HUGE) {
            let l = usize::from(l);
            let (lo, hi) = size.cell_range(&b.to_aabb(), l);
            for_each_cell(&lo, &hi, |cell| self.starts[bucket(&cell, l, self.mask) + 1] += 1);
        }
        for k in 0..buckets {
            self.starts[k + 1] += self.starts[k];
        }

        // Pass 2: scatter, in item order within each bucket (deterministic),
        // using `starts[k]` as bucket `k`'s cursor.
        self.entries.clear();
        self.entries.resize(total, Entry::new([0; D], 0, 0));
        for (item, (b, &l)) in self.boxes.iter().zip(&self.levels).enumerate() {
            let l = usize::from(l);
            if l == HUGE {
                continue;
            }
            let (lo, hi) = size.cell_range(&b.to_aabb(), l);
            for_each_cell(&lo, &hi, |cell| {
                let k = bucket(&cell, l, self.mask);
                let at = self.starts[k] as usize;
                self.starts[k] += 1;
                self.entries[at] = Entry::new(cell, item as u32, l);
            });
        }
        // `starts[k]` now holds the end of bucket `k`: shift back to starts.
        for k in (1..=buckets).rev() {
            self.starts[k] = self.starts[k - 1];
        }
        self.starts[0] = 0;

        // Items by level, for queries that would visit more cells than items.
        self.level_starts = [0; MAX_LEVELS + 2];
        for &l in &self.levels {
            self.level_starts[usize::from(l) + 1] += 1;
        }
        self.occupied = 0;
        for l in 0..=HUGE {
            if l < HUGE && self.level_starts[l + 1] > 0 {
                self.occupied |= 1 << l;
            }
            self.level_starts[l + 1] += self.level_starts[l];
        }
        self.by_level.clear();
        self.by_level.resize(self.boxes.len(), 0);
        let mut fill = self.level_starts;
        for (item, &l) in self.levels.iter().enumerate() {
            let l = usize::from(l);
            self.by_level[fill[l] as usize] = item as u32;
            fill[l] += 1;
        }
    }

    /// Number of items.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// Bytes held by the grid (capacity, not just length).
    pub fn memory(&self) -> usize {
        self.boxes.capacity() * size_of::<GridBox<D>>()
            + self.levels.capacity()
            + self.starts.capacity() * 4
            + self.entries.capacity() * size_of::<Entry<D>>()
            + self.by_level.capacity() * 4
    }

    /// Bit `ℓ` set when level `ℓ` holds items.
    #[inline(always)]
    pub fn occupied(&self) -> u64 {
        self.occupied
    }

    /// The cell sizes.
    #[inline(always)]
    pub fn size(&self) -> &CellSize {
        &self.size
    }

    /// The entries of the bucket holding `cell` of `level` (other cells that
    /// share the bucket included: callers compare cells).
    #[inline(always)]
    fn bucket_entries(&self, cell: &[i32; D], level: usize) -> &[Entry<D>] {
        let k = bucket(cell, level, self.mask);
        &self.entries[self.starts[k] as usize..self.starts[k + 1] as usize]
    }

    /// Calls `f(j)` once for each item `j` whose stored box overlaps `q`
    /// (closed test), on every level: a superset of the items whose exact
    /// boxes do, by the outward rounding.
    pub fn query(&self, q: &Aabb<D>, f: impl FnMut(u32)) {
        self.query_grid_box(&GridBox::new(q), f);
    }

    /// [`HashGrid::query`] for a box already rounded.
    #[inline]
    pub fn query_grid_box(&self, q: &GridBox<D>, mut f: impl FnMut(u32)) {
        let mut levels = self.occupied;
        while levels != 0 {
            let level = levels.trailing_zeros() as usize;
            levels &= levels - 1;
            self.query_level(q, level, &mut f);
        }
        for &j in &self.by_level[self.level_starts[HUGE] as usize..] {
            if self.boxes[j as usize].intersects(q) {
                f(j);
            }
        }
    }

    /// Items of `level` overlapping `q`, each once.
    pub fn query_level(&self, q: &GridBox<D>, level: usize, f: &mut impl FnMut(u32)) {
        let (lo, hi) = self.size.cell_range(&q.to_aabb(), level);
        let items = &self.by_level[self.level_starts[level] as usize..self.level_starts[level + 1] as usize];
        if cell_count(&lo, &hi) > items.len() as u64 {
            // Cheaper to test every item of the level (a huge or fast query
            // over fine cells): no cell can report an item twice here.
            for &j in items {
                if self.boxes[j as usize].intersects(q) {
                    f(j);
                }
            }
            return;
        }
        for_each_cell(&lo, &hi, |cell| self.visit_cell(q, cell, level, &mut *f));
    }

    /// Items referenced in `cell` of `level` whose box overlaps `q` and whose
    /// overlap with `q` has its minimum corner in this cell.
    #[inline(always)]
    fn visit_cell(&self, q: &GridBox<D>, cell: [i32; D], level: usize, mut f: impl FnMut(u32)) {
        for e in self.bucket_entries(&cell, level) {
            if !e.is(&cell, level) {
                continue;
            }
            let b = &self.boxes[e.item() as usize];
            if !b.intersects(q) {
                continue;
            }
            if self.size.cell_of(&b.corner(q), level) == cell {
                f(e.item());
            }
        }
    }
}

/// Bucket of a cell: its Morton code (low bits of each coordinate,
/// interleaved) salted per level, masked to the table. Neighbouring cells
/// land in neighbouring buckets, so a pass over cells in bucket order reads
/// both grids nearly sequentially; cells that wrap onto one bucket are told
/// apart by their stored coordinates.
#[inline(always)]
fn bucket<const D: usize>(cell: &[i32; D], level: usize, mask: u64) -> usize {
    let salt = (level as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((morton(cell) ^ salt) & mask) as usize
}

/// Interleaves the low bits of the coordinates (21 bits each in 3D, 32 in 2D).
#[inline(always)]
pub(crate) fn morton<const D: usize>(cell: &[i32; D]) -> u64 {
    let spread = |v: i32| -> u64 {
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
    };
    (0..D).fold(0, |h, i| h | (spread(cell[i]) << i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::random_boxes;

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
    fn queries_find_every_overlapping_box_once() {
        queries_match_brute_force(0.5);
    }

    /// A manual cell size no level can bring up to the boxes' sizes: every
    /// box is listed apart (this once aborted on a 2 TB allocation).
    #[test]
    fn boxes_beyond_the_top_level_are_still_found() {
        queries_match_brute_force(1e-300);
    }

    fn queries_match_brute_force(base: f64) {
        let boxes = random_boxes(2000, 4, 50.0);
        let mut grid = HashGrid::default();
        grid.build(CellSize::new(base), boxes.iter().copied());
        let queries = random_boxes(300, 5, 60.0);
        let huge = Aabb { min: [-1e9, -0.5, -0.5], max: [1e9, 0.5, 0.5] };
        for q in queries.iter().chain([&huge]) {
            let mut got = Vec::new();
            grid.query(q, |j| got.push(j));
            got.sort_unstable();
            // The grid's boxes are rounded outward: compare with the same boxes.
            let rounded = GridBox::new(q);
            let expect: Vec<u32> =
                (0..boxes.len() as u32).filter(|&j| GridBox::new(&boxes[j as usize]).intersects(&rounded)).collect();
            assert_eq!(got, expect);
        }
    }

    #[test]
    fn rebuilding_reuses_buffers_and_forgets_old_items() {
        let mut grid = HashGrid::default();
        grid.build(CellSize::new(1.0), random_boxes(500, 6, 20.0).into_iter());
        grid.build(CellSize::new(1.0), random_boxes(10, 7, 20.0).into_iter());
        assert_eq!(grid.len(), 10);
        let mut n = 0;
        grid.query(&Aabb { min: [-1e3; 3], max: [1e3; 3] }, |_| n += 1);
        assert_eq!(n, 10);
    }
}
