//! The persistent hashed grid: each moving frame's fat box kept in the
//! cells it overlaps from step to step, moved only when its cells change.
//!
//! The levels and cells are the cell list's (`cell_list.rs`): a box goes to
//! the level where it spans at most two cells per axis. Here it is listed
//! in each of those cells (one to `2^D`, Mantel's multi-reference grid),
//! so that a query reads only the cells its own box overlaps on each level
//! and takes a frame met in several of them in the one holding the
//! minimum corner of the two boxes' overlap: each once, with no set.
//!
//! Where the cell list is rebuilt by a counting sort each time, this grid
//! is updated in place: a hash map from the occupied cells to the first
//! entry of each, and per frame its cells and, per entry (a frame in one of
//! its cells), the links of the cell's list: intrusive, in arrays of `2^D`
//! entries a frame, so a frame moves between cells in O(1) with no
//! allocation, and an emptied cell leaves the map. Nothing moved: nothing
//! done. The boxes are the caller's (`world/pair_set.rs` keeps them), read
//! by the queries.

use std::hash::{BuildHasherDefault, Hash, Hasher};

use hashbrown::HashMap;

use super::cell::{CellSize, MAX_LEVELS, cell_count, floor_i32, for_each_cell, morton};
use super::cell_list::cell_and_level;
use super::grid_box::GridBox;
use crate::fallible::{NoRoom, refill, room_for_one};

/// No entry (an empty link).
const NONE: u32 = u32::MAX;

/// The level of the frames no level fits (a manual cell size far below
/// their size): they are listed apart and met by every query.
const HUGE: u32 = u32::MAX;

/// The level of a frame not placed yet.
const UNPLACED: u32 = u32::MAX - 1;

/// A query visiting more cells of a level than this many times the level's
/// frames walks the occupied cells instead (a huge box over fine cells).
const WALK_CELLS: u64 = 4;

/// A cell of a level, hashed along the Morton curve ([`CellHasher`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key<const D: usize> {
    cell: [i32; D],
    level: u32,
}

impl<const D: usize> Hash for Key<D> {
    /// The cell's Morton code (salted per level) as the hash's low bits,
    /// where the map starts its probe: cells near in space are near in the
    /// map, and so are the cells that frames near in the store (in Morton
    /// order) move between and look up one after the other. The top seven
    /// bits, the map's tag, are mixed.
    fn hash<H: Hasher>(&self, state: &mut H) {
        const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
        const TAG: u64 = 0x7F << 57;
        let code = morton(&self.cell) ^ u64::from(self.level).wrapping_mul(MIX);
        state.write_u64(code & !TAG | code.wrapping_mul(MIX) & TAG);
    }
}

/// Takes [`Key`]'s hash as it is.
#[derive(Clone, Copy, Debug, Default)]
struct CellHasher(u64);

impl Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, h: u64) {
        self.0 = h;
    }

    /// Not used by [`Key`]: any other input is folded in (FNV-1a).
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
    }
}

/// Where a frame is: the first of its cells, its level, and one bit per
/// axis set when it spans into the next cell along that axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Home<const D: usize> {
    cell: [i32; D],
    level: u32,
    spans: u32,
}

impl<const D: usize> Home<D> {
    const UNPLACED: Self = Home { cell: [0; D], level: UNPLACED, spans: 0 };

    /// The home of fat box `b` on cells of `size`.
    fn of(size: &CellSize, b: &GridBox<D>) -> Self {
        match cell_and_level(size, b) {
            Some((cell, level)) => {
                let top = size.cell_of(&b.max(), level as usize);
                let spans = (0..D).fold(0, |s, k| s | u32::from(top[k] > cell[k]) << k);
                Home { cell, level, spans }
            }
            None => Home { cell: [0; D], level: HUGE, spans: 0 },
        }
    }

    /// Its cells, one entry slot each (`k`: which of the `2^D`).
    fn cells(&self) -> impl Iterator<Item = (u32, [i32; D])> + '_ {
        (0..1u32 << D)
            .filter(|k| k & !self.spans == 0)
            .map(|k| (k, std::array::from_fn(|a| self.cell[a] + ((k >> a) & 1) as i32)))
    }
}

/// Frames (by index) in the cells of their fat boxes.
#[derive(Clone, Debug)]
pub(crate) struct FatGrid<const D: usize> {
    size: CellSize,
    /// Occupied cells: the first entry of each cell's list.
    heads: HashMap<Key<D>, u32, BuildHasherDefault<CellHasher>>,
    /// Per frame: its cells.
    home: Vec<Home<D>>,
    /// Per entry (`frame << D | k`): the next and previous entries of its
    /// cell's list.
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The huge frames.
    huge: Vec<u32>,
    /// Frames placed on each level, and a bit per level holding any (a
    /// query reads the occupied levels only).
    per_level: [u32; MAX_LEVELS],
    occupied: u64,
}

impl<const D: usize> Default for FatGrid<D> {
    fn default() -> Self {
        FatGrid {
            size: CellSize::new(1.0),
            heads: HashMap::default(),
            home: Vec::new(),
            next: Vec::new(),
            prev: Vec::new(),
            huge: Vec::new(),
            per_level: [0; MAX_LEVELS],
            occupied: 0,
        }
    }
}

impl<const D: usize> FatGrid<D> {
    /// Empties the grid for `n` frames, none placed, on cells of `size`
    /// (buffers kept).
    ///
    /// # Errors
    /// [`NoRoom`], the grid then empty with no frame (reset it again).
    pub fn reset(&mut self, size: CellSize, n: usize) -> Result<(), NoRoom> {
        self.size = size;
        self.heads.clear();
        self.huge.clear();
        self.per_level = [0; MAX_LEVELS];
        self.occupied = 0;
        self.home.clear();
        self.next.clear();
        self.prev.clear();
        refill(&mut self.home, n, Home::UNPLACED)?;
        refill(&mut self.next, n << D, NONE)?;
        refill(&mut self.prev, n << D, NONE)
    }

    /// Puts frame `i` in the cells of its (new) fat box `b`: nothing to do
    /// when they are its cells already.
    ///
    /// # Errors
    /// [`NoRoom`] for the map of cells or the huge frames' list, the frame
    /// then where it was.
    pub fn place(&mut self, i: u32, b: &GridBox<D>) -> Result<(), NoRoom> {
        let home = Home::of(&self.size, b);
        let old = self.home[i as usize];
        if old == home {
            return Ok(());
        }
        // Room for the new cells before the frame leaves its old ones.
        let cells = 1usize << D;
        if self.heads.capacity() - self.heads.len() < cells {
            let more = self.heads.len().max(cells);
            let bytes = more * (size_of::<Key<D>>() + 5);
            self.heads.try_reserve(more).map_err(|_| NoRoom { bytes })?;
        }
        if home.level == HUGE && !room_for_one(&mut self.huge) {
            return Err(NoRoom { bytes: 2 * self.huge.len() * 4 });
        }
        match old.level {
            UNPLACED => {}
            HUGE => self.huge.retain(|&j| j != i),
            l => {
                self.per_level[l as usize] -= 1;
                if self.per_level[l as usize] == 0 {
                    self.occupied &= !(1 << l);
                }
                for (k, cell) in old.cells() {
                    self.unlink(i << D | k, Key { cell, level: l });
                }
            }
        }
        match home.level {
            HUGE => self.huge.push(i),
            l => {
                self.per_level[l as usize] += 1;
                self.occupied |= 1 << l;
                for (k, cell) in home.cells() {
                    self.link(i << D | k, Key { cell, level: l });
                }
            }
        }
        self.home[i as usize] = home;
        Ok(())
    }

    /// Room in the map for twice the cells occupied: their count changes
    /// with the frames' history, and a full map allocates when it grows.
    /// Room to spare only: on low memory, none.
    pub fn keep_headroom(&mut self) {
        if 2 * self.heads.len() > self.heads.capacity() {
            // Optional: the map still holds what it holds.
            let _ = self.heads.try_reserve(self.heads.len());
        }
    }

    /// Takes entry `e` out of the list of cell `key`.
    fn unlink(&mut self, e: u32, key: Key<D>) {
        let (prev, next) = (self.prev[e as usize], self.next[e as usize]);
        if next != NONE {
            self.prev[next as usize] = prev;
        }
        if prev != NONE {
            self.next[prev as usize] = next;
        } else if next == NONE {
            self.heads.remove(&key);
        } else {
            self.heads.insert(key, next);
        }
    }

    /// Puts entry `e` first in the list of cell `key`.
    fn link(&mut self, e: u32, key: Key<D>) {
        let head = match self.heads.get_mut(&key) {
            Some(h) => std::mem::replace(h, e),
            None => {
                self.heads.insert(key, e);
                NONE
            }
        };
        self.next[e as usize] = head;
        self.prev[e as usize] = NONE;
        if head != NONE {
            self.prev[head as usize] = e;
        }
    }

    /// Calls `f(j)` once for each frame `j` whose fat box, `boxes[j]` (the
    /// boxes the frames were placed with), overlaps `q` (closed test), in
    /// no particular order.
    #[inline]
    pub fn query(&self, q: &GridBox<D>, boxes: &[GridBox<D>], mut f: impl FnMut(u32)) {
        let (qmin, qmax) = (q.min_f32(), q.max_f32());
        let overlaps = |j: usize| boxes[j].overlaps(q);
        let mut levels = self.occupied;
        while levels != 0 {
            let l = levels.trailing_zeros() as usize;
            levels &= levels - 1;
            let count = self.per_level[l];
            let inv = self.size.inv(l);
            let lo: [i32; D] = std::array::from_fn(|k| floor_i32(f64::from(qmin[k]) * inv));
            let hi: [i32; D] = std::array::from_fn(|k| floor_i32(f64::from(qmax[k]) * inv));
            // A frame met in several cells is taken in the one holding the
            // minimum corner of the overlap (inside both boxes: one cell).
            // Along an axis, that corner's cell is the later of the frame's
            // first cell and the query's (`floor` keeps order): an entry in
            // its frame's first cell along the axis (bit `a` of `k` clear)
            // is there, one in the next cell only where the query starts in
            // it. So an entry is taken when its bits are among the axes
            // where `cell` is the query's first.
            let mut visit = |cell: &[i32; D], mut e: u32| {
                let starts = (0..D).fold(0, |m, a| m | u32::from(cell[a] == lo[a]) << a);
                let others = ((1 << D) - 1) & !starts;
                while e != NONE {
                    let j = (e >> D) as usize;
                    if (e & others == 0) && overlaps(j) {
                        f(j as u32);
                    }
                    e = self.next[e as usize];
                }
            };
            let level = l as u32;
            if cell_count(&lo, &hi) > WALK_CELLS * u64::from(count) {
                // More cells in the range than frames on the level.
                for (key, &head) in &self.heads {
                    if key.level == level && (0..D).all(|k| lo[k] <= key.cell[k] && key.cell[k] <= hi[k]) {
                        visit(&key.cell, head);
                    }
                }
                continue;
            }
            for_each_cell(&lo, &hi, |cell| {
                if let Some(&head) = self.heads.get(&Key { cell, level }) {
                    visit(&cell, head);
                }
            });
        }
        for &j in &self.huge {
            if overlaps(j as usize) {
                f(j);
            }
        }
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.heads.capacity() * (size_of::<Key<D>>() + 4 + 1)
            + self.home.capacity() * size_of::<Home<D>>()
            + (self.next.capacity() + self.prev.capacity() + self.huge.capacity()) * 4
    }

    /// Panics unless every frame `i` is in the lists of the cells of
    /// `fat(i)`, once each, and every list is well linked. Linear in the
    /// frames.
    pub fn validate(&self, fat: impl Fn(usize) -> GridBox<D>) {
        let mut seen = vec![false; self.next.len()];
        let mut per_level = [0u32; MAX_LEVELS];
        for (&key, &head) in &self.heads {
            assert_ne!(head, NONE, "an empty cell left in the map");
            let (mut e, mut prev) = (head, NONE);
            while e != NONE {
                assert!(!std::mem::replace(&mut seen[e as usize], true), "entry {e} listed twice");
                assert_eq!(self.prev[e as usize], prev, "entry {e}'s back link");
                let home = &self.home[(e >> D) as usize];
                let cell = home.cells().find(|(k, _)| *k == e & ((1 << D) - 1)).map(|(_, c)| c);
                assert_eq!((cell, home.level), (Some(key.cell), key.level), "entry {e} in the list of its cell");
                (prev, e) = (e, self.next[e as usize]);
            }
        }
        for (i, home) in self.home.iter().enumerate() {
            assert_eq!(*home, Home::of(&self.size, &fat(i)), "frame {i} in the cells of its fat box");
            match home.level {
                HUGE => assert_eq!(self.huge.iter().filter(|&&j| j as usize == i).count(), 1, "huge frame {i}"),
                l => {
                    per_level[l as usize] += 1;
                    let listed = home.cells().all(|(k, _)| seen[i << D | k as usize]);
                    assert!(listed, "frame {i} in each of its cells");
                }
            }
        }
        assert_eq!(per_level, self.per_level, "frames per level");
        let occupied = per_level.iter().enumerate().fold(0u64, |m, (l, &c)| m | u64::from(c > 0) << l);
        assert_eq!(occupied, self.occupied, "the occupied levels");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aabb::Aabb;
    use crate::grid::random_boxes;

    /// Queries find every box overlapping theirs (brute force), each once,
    /// while boxes move between cells and levels, on a fine, a usual and a
    /// hopeless (every box huge) cell size.
    #[test]
    fn queries_find_every_overlapping_box_once_as_boxes_move() {
        for (base, seed) in [(0.5, 1), (7.0, 2), (1e-300, 3)] {
            let mut boxes: Vec<GridBox<3>> = random_boxes(1500, seed, 50.0).iter().map(GridBox::new).collect();
            let mut grid = FatGrid::default();
            grid.reset(CellSize::new(base), boxes.len()).unwrap();
            for (i, b) in boxes.iter().enumerate() {
                grid.place(i as u32, b).unwrap();
            }
            let moved = random_boxes(boxes.len(), seed + 10, 60.0);
            for round in 0..3 {
                grid.validate(|i| boxes[i]);
                let queries = random_boxes(200, seed + 20 + round, 60.0);
                let huge = Aabb { min: [-1e9, -0.5, -0.5], max: [1e9, 0.5, 0.5] };
                for q in queries.iter().chain([&huge]).map(GridBox::new) {
                    let mut got = Vec::new();
                    grid.query(&q, &boxes, |j| got.push(j));
                    let n = got.len();
                    got.sort_unstable();
                    got.dedup();
                    assert_eq!(got.len(), n, "a frame met twice (base {base})");
                    let want: Vec<u32> = (0..boxes.len() as u32).filter(|&j| boxes[j as usize].overlaps(&q)).collect();
                    assert_eq!(got, want, "base {base}, round {round}");
                }
                // A third of the boxes move (some far, some to another level).
                for i in (round as usize..boxes.len()).step_by(3) {
                    boxes[i] = GridBox::new(&moved[i]);
                    grid.place(i as u32, &boxes[i]).unwrap();
                }
            }
        }
    }
}
