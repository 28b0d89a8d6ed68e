//! The cell list: boxes sorted by cell, for the pairs pass and box queries
//! (the moving frames' swept boxes each step; the fixed frames' and the
//! large bodies' boxes too).
//!
//! Each box goes once into the cell holding its minimum corner, on a level
//! where it spans at most two cells per axis: the level whose cells are at
//! least its extent, or higher when its cells would not fit (Mirtich's
//! hierarchy, but a single slot instead of up to `2^D` entries). Two boxes
//! of one level can then only overlap when their cells are neighbours, so
//! the pairs pass scans a cell and its "forward" half of the `3^D - 1`
//! neighbours (each neighbouring pair of cells is visited from one side
//! only): every pair of one level comes out once with no reference-point
//! test.
//!
//! Across levels, each box above the finest occupied level is also listed
//! as a "cover" entry in every cell it overlaps on its level (1 to `2^D`);
//! a finer box looks up its own cells on each coarser level and takes a
//! pair in the cell holding the overlap's minimum corner, so it comes out
//! once. Queries do the same: slots on the finest level, cover entries
//! above it.
//!
//! The slots are sorted by bucket with a counting sort (buckets are Morton
//! codes of cells, so neighbouring cells are near in memory), written first
//! in item order into the flat arrays and then permuted in place (4 bytes
//! of scratch a slot): cells and levels, then `f32` boxes, then items and
//! groups, read in that order of need by the pass.
//!
//! A box too large or too far for any level (a manual cell size far below
//! the frames' sizes) goes to a short list of huge slots, paired with every
//! other slot by box tests.

use super::cell::{CellSize, MAX_CELL, MAX_LEVELS, cell_count, floor_i32, for_each_cell, morton, parent, spread};
use super::grid_box::GridBox;
use crate::aabb::Aabb;
use crate::fallible::{NoRoom, fit, refill, room_exact};

/// Most items a list holds (ids and store indices fit 26 bits elsewhere).
pub(crate) const MAX_ITEMS: usize = 1 << 26;

/// Lists of at most this many boxes are queried by testing every box.
const SCAN: usize = 64;

/// Items per parallel task of the build's first pass.
#[cfg(feature = "parallel")]
const PARALLEL_MIN: usize = 4096;

/// Level bits of a slot's `info`; the bits above are its spans.
const LEVEL_BITS: u32 = 7;
const LEVEL_MASK: u32 = (1 << LEVEL_BITS) - 1;
/// The level of a huge slot (beyond every real level).
const HUGE: u32 = LEVEL_MASK;
const _: () = assert!(MAX_LEVELS < HUGE as usize);

/// A slot's cell and level, with one bit per axis set when its box reaches
/// into the next cell along that axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot<const D: usize> {
    pub cell: [i32; D],
    info: u32,
}

impl<const D: usize> Slot<D> {
    #[inline(always)]
    fn level(&self) -> u32 {
        self.info & LEVEL_MASK
    }

    #[inline(always)]
    fn spans(&self) -> u32 {
        self.info >> LEVEL_BITS
    }

    #[inline(always)]
    fn is(&self, cell: &[i32; D], level: u32) -> bool {
        self.level() == level && self.cell == *cell
    }
}

/// Neighbour offsets `o ∈ {-1, 0, 1}^D` whose last non-zero coordinate is
/// +1: of `o` and `-o`, exactly one is listed, so each pair of neighbouring
/// cells is scanned from one side. `need` has bit `k` set when `o_k = +1`:
/// a box reaching one cell along `k` only can skip the offset unless it
/// spans into the next one.
struct Forward<const D: usize> {
    /// Padded to 16, so that an index masked by 15 needs no bounds check.
    offsets: [[i32; D]; 16],
    need: [u32; 13],
    /// Bit `k` set when `o_k = -1`.
    back: [u32; 13],
    n: usize,
    /// For a slot's spans and backward reach (bit `k` set when a box of
    /// its level may reach into its cell from the one before along `k`),
    /// the offsets to visit, one bit each, in table order:
    /// `visit[spans][back]`.
    visit: [[u16; 8]; 8],
}

impl<const D: usize> Forward<D> {
    const TABLE: Self = {
        let mut f = Forward { offsets: [[0; D]; 16], need: [0; 13], back: [0; 13], n: 0, visit: [[0; 8]; 8] };
        let total = 3usize.pow(D as u32);
        let mut code = 0;
        while code < total {
            let mut o = [0i32; D];
            let (mut c, mut k) = (code, 0);
            while k < D {
                o[k] = (c % 3) as i32 - 1;
                c /= 3;
                k += 1;
            }
            // Last non-zero coordinate.
            let mut last = 0;
            let (mut need, mut back) = (0, 0);
            k = 0;
            while k < D {
                if o[k] != 0 {
                    last = o[k];
                }
                if o[k] == 1 {
                    need |= 1 << k;
                }
                if o[k] == -1 {
                    back |= 1 << k;
                }
                k += 1;
            }
            if last == 1 {
                f.offsets[f.n] = o;
                f.need[f.n] = need;
                f.back[f.n] = back;
                f.n += 1;
            }
            code += 1;
        }
        let mut spans = 0;
        while spans < 8 {
            let mut back = 0;
            while back < 8 {
                let mut i = 0;
                while i < f.n {
                    if f.need[i] & !spans == 0 && f.back[i] & !back == 0 {
                        f.visit[spans as usize][back as usize] |= 1 << i;
                    }
                    i += 1;
                }
                back += 1;
            }
            spans += 1;
        }
        f
    };
}

/// The Morton spreads of a cell's coordinates and of its neighbours' along
/// each axis, kept by the pairs pass from one slot to the next: the slots
/// of a cell are mostly consecutive, and spreading costs more than the
/// rest of a slot's set-up ([`CellList::partners`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spreads<const D: usize> {
    /// The cell they are of (`None`: none yet).
    cell: Option<[i32; D]>,
    /// Per axis `k`: the spreads of `c - 1`, `c`, `c + 1` shifted by `k`,
    /// padded to 4 and indexed masked by 3 (no bounds check a visit).
    table: [[u64; 4]; D],
}

impl<const D: usize> Default for Spreads<D> {
    fn default() -> Self {
        Spreads { cell: None, table: [[0; 4]; D] }
    }
}

impl<const D: usize> Spreads<D> {
    /// The table of `cell`, computed unless it is the last one's.
    #[inline(always)]
    fn of(&mut self, cell: &[i32; D]) -> &[[u64; 4]; D] {
        if self.cell != Some(*cell) {
            self.table = std::array::from_fn(|k| {
                let [a, b, c] = neighbour_spreads::<D>(cell[k]).map(|x| x << k);
                [a, b, c, 0]
            });
            self.cell = Some(*cell);
        }
        &self.table
    }
}

/// Boxes sorted by cell, for the pairs pass and box queries.
/// Rebuilding reuses every buffer: a warm build allocates nothing.
#[derive(Clone, Debug)]
pub(crate) struct CellList<const D: usize> {
    size: CellSize,
    /// In bucket order: cells and levels, boxes, items, groups (empty when
    /// ungrouped).
    slots: Vec<Slot<D>>,
    min: Vec<[f32; D]>,
    max: Vec<[f32; D]>,
    items: Vec<u32>,
    groups: Vec<u32>,
    /// Bucket `k` holds slots `starts[k]..starts[k + 1]`; the last bucket,
    /// past the table, holds the huge slots.
    starts: Vec<u32>,
    mask: u64,
    /// Bit `ℓ` set when level `ℓ` holds slots.
    occupied: u64,
    /// Per level and axis, an upper bound of the boxes' extents: a box of
    /// the cell before a query's reaches the query only if it is within
    /// this of the query's minimum (rounded up, so never too small).
    reach: [[f64; D]; MAX_LEVELS],
    /// First huge slot (they end the list).
    huge: usize,
    /// Build scratch: each slot's bucket, then its place.
    dest: Vec<u32>,
    /// Build scratch of the parallel build: the slots in item order.
    #[cfg(feature = "parallel")]
    staged: Staged<D>,
    /// Cover entries: each slot above the finest occupied level once in
    /// every cell its box overlaps on its level, for the look-ups from
    /// finer levels, hashed like the slots (`cover_starts`, `cover_mask`).
    cover: Vec<Cover<D>>,
    cover_starts: Vec<u32>,
    cover_mask: u64,
}

/// The occupied levels of a list and, per level and axis, the largest
/// extent of its boxes (`CellList::occupied`, `CellList::reach` before
/// rounding): a maximum, so the same whatever the order the slots are met.
#[derive(Clone, Copy, Debug)]
struct Extents<const D: usize> {
    occupied: u64,
    reach: [[f64; D]; MAX_LEVELS],
}

impl<const D: usize> Default for Extents<D> {
    fn default() -> Self {
        Extents { occupied: 0, reach: [[0.0; D]; MAX_LEVELS] }
    }
}

impl<const D: usize> Extents<D> {
    #[inline(always)]
    fn widen(&mut self, level: usize, lo: &[f32; D], hi: &[f32; D]) {
        self.occupied |= 1 << level;
        for k in 0..D {
            self.reach[level][k] = self.reach[level][k].max(f64::from(hi[k]) - f64::from(lo[k]));
        }
    }

    #[cfg(feature = "parallel")]
    fn merge(mut self, other: Self) -> Self {
        self.occupied |= other.occupied;
        for (mine, theirs) in self.reach.iter_mut().zip(&other.reach) {
            for k in 0..D {
                mine[k] = mine[k].max(theirs[k]);
            }
        }
        self
    }
}

/// The parallel build's first pass writes here, in item order; the slots
/// are then gathered into bucket order in parallel, where the serial build
/// moves them in place along the permutation's cycles.
#[cfg(feature = "parallel")]
#[derive(Clone, Debug, Default)]
struct Staged<const D: usize> {
    slots: Vec<Slot<D>>,
    min: Vec<[f32; D]>,
    max: Vec<[f32; D]>,
    items: Vec<u32>,
    groups: Vec<u32>,
    /// `src[p]`: the item at place `p`, the inverse of `dest`.
    src: Vec<u32>,
}

#[cfg(feature = "parallel")]
impl<const D: usize> Staged<D> {
    fn memory(&self) -> usize {
        self.slots.capacity() * size_of::<Slot<D>>()
            + (self.min.capacity() + self.max.capacity()) * size_of::<[f32; D]>()
            + (self.items.capacity() + self.groups.capacity() + self.src.capacity()) * 4
    }
}

/// A slot listed in one cell it overlaps (see `CellList::cover`).
#[derive(Clone, Copy, Debug)]
struct Cover<const D: usize> {
    cell: [i32; D],
    level: u32,
    slot: u32,
}

impl<const D: usize> Default for CellList<D> {
    fn default() -> Self {
        CellList {
            size: CellSize::new(1.0),
            slots: Vec::new(),
            min: Vec::new(),
            max: Vec::new(),
            items: Vec::new(),
            groups: Vec::new(),
            // Empty until built (no level, no slot to look up): `default`
            // allocates nothing, so `mem::take` of a list is free.
            starts: Vec::new(),
            mask: 0,
            occupied: 0,
            reach: [[0.0; D]; MAX_LEVELS],
            huge: 0,
            dest: Vec::new(),
            #[cfg(feature = "parallel")]
            staged: Staged::default(),
            cover: Vec::new(),
            cover_starts: Vec::new(),
            cover_mask: 0,
        }
    }
}

/// Level and cell of a rounded box: from the level whose cells are at
/// least its extent, the first at which it spans at most two cells per axis
/// with its cells within `±MAX_CELL` (not always the finest such level: a
/// box of extent 0.8 on cells of 0.5 may fit two cells of level 0 but goes
/// to level 1), or `None` when no level fits.
#[inline(always)]
fn place<const D: usize>(size: &CellSize, b: &GridBox<D>) -> Option<Slot<D>> {
    let (lo, hi) = (b.min(), b.max());
    let extent = (0..D).fold(0.0f64, |m, k| m.max(hi[k] - lo[k]));
    // First guess: ⌈log₂(extent / w₀)⌉, read off the exponent bits.
    let x = extent * size.inv(0);
    let mut level = if x > 1.0 {
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
        (exp + i64::from(bits & ((1 << 52) - 1) != 0)).clamp(0, MAX_LEVELS as i64 - 1) as usize
    } else {
        0
    };
    loop {
        let inv = size.inv(level);
        let fits = (0..D).all(|k| lo[k].abs().max(hi[k].abs()) * inv < MAX_CELL);
        if fits {
            // `floor_i32` without its saturation and clamp: the cells are
            // within ±2^30 here.
            let floor = |x: f64| {
                let t = x as i32;
                t - i32::from(x < f64::from(t))
            };
            let (c, d): ([i32; D], [i32; D]) =
                (std::array::from_fn(|k| floor(lo[k] * inv)), std::array::from_fn(|k| floor(hi[k] * inv)));
            if (0..D).all(|k| d[k] - c[k] <= 1) {
                let spans = (0..D).fold(0, |s, k| s | (((d[k] - c[k]) as u32) << k));
                return Some(Slot { cell: c, info: level as u32 | spans << LEVEL_BITS });
            }
        }
        level += 1;
        if level == MAX_LEVELS {
            return None;
        }
    }
}

/// The cell and level [`CellList`] gives a box (see `place`), or `None`
/// for a box no level fits: where the persistent grid (`fat_grid.rs`)
/// keeps it.
#[inline(always)]
pub(crate) fn cell_and_level<const D: usize>(size: &CellSize, b: &GridBox<D>) -> Option<([i32; D], u32)> {
    place(size, b).map(|s| (s.cell, s.level()))
}

/// Along one axis, the cell (of reciprocal size `inv`) holding the minimum
/// corner of the overlap of two boxes starting at `a` and `b`: where the
/// pairs pass takes a pair across levels (`covering`).
#[inline(always)]
fn corner_cell(a: f32, b: f32, inv: f64) -> i32 {
    floor_i32(f64::from(a.max(b)) * inv)
}

/// `spread(c - 1)`, `spread(c)`, `spread(c + 1)` (the coordinates wrap as
/// [`spread`]'s do): the neighbours' by adding and subtracting one on the
/// dilated integer, whose gaps are filled with ones for the carry.
#[inline(always)]
fn neighbour_spreads<const D: usize>(c: i32) -> [u64; 3] {
    let ones: u64 = if D == 2 { 0x5555_5555_5555_5555 } else { 0x1249_2492_4924_9249 };
    let x = spread::<D>(c);
    [x.wrapping_sub(1) & ones, x, (x | !ones).wrapping_add(1) & ones]
}

/// Bucket of a cell of `level`: its Morton code salted per level, masked.
#[inline(always)]
fn bucket<const D: usize>(cell: &[i32; D], level: u32, mask: u64) -> usize {
    bucket_of_code(morton(cell), level, mask)
}

/// [`bucket`] from the cell's Morton code.
#[inline(always)]
fn bucket_of_code(code: u64, level: u32, mask: u64) -> usize {
    let salt = u64::from(level).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((code ^ salt) & mask) as usize
}

impl<const D: usize> CellList<D> {
    /// Rebuilds the list over `n` items, item `i` being `item(i) = (box,
    /// id)`, with cell sizes `size`; [`CellList::item`] gives back the ids.
    /// With `group`, items of one group are never paired. The per-item pass
    /// runs in parallel with the `parallel` feature.
    ///
    /// # Errors
    /// [`NoRoom`] when memory ran out: the list is then empty (it lists
    /// nothing until the next build).
    pub fn build(
        &mut self,
        size: CellSize,
        n: usize,
        item: impl Fn(usize) -> (Aabb<D>, u32) + Sync,
        group: Option<&dyn Fn(usize) -> u32>,
    ) -> Result<(), NoRoom> {
        let built = self.try_build(size, n, item, group);
        if built.is_err() {
            self.empty();
        }
        built
    }

    /// A list of nothing, its buffers kept (no allocation: a list of no
    /// slots is queried slot by slot and reads no bucket).
    fn empty(&mut self) {
        for v in [&mut self.items, &mut self.groups, &mut self.dest] {
            v.clear();
        }
        self.slots.clear();
        self.min.clear();
        self.max.clear();
        self.cover.clear();
        (self.huge, self.occupied) = (0, 0);
    }

    /// [`CellList::build`], leaving the list half made on an error.
    fn try_build(
        &mut self,
        size: CellSize,
        n: usize,
        item: impl Fn(usize) -> (Aabb<D>, u32) + Sync,
        group: Option<&dyn Fn(usize) -> u32>,
    ) -> Result<(), NoRoom> {
        let grouped = group.is_some();
        self.size = size;
        #[cfg(feature = "parallel")]
        let gather = self.gathers(n);
        #[cfg(feature = "parallel")]
        if gather {
            // Pass 1 fills the staging arrays (swapped in), gathered below.
            self.swap_staged();
        }
        // Pass 1, in item order and in parallel, straight into the final
        // arrays (or, gathering, the staging ones; sized exactly: no
        // doubling slack), with each slot's bucket (huge slots in an extra
        // last one) in `dest`.
        let buckets = n.max(1).next_power_of_two();
        self.mask = buckets as u64 - 1;
        // Every entry is written below: a list of the same length is not
        // filled first (a serial pass over every array).
        fit(&mut self.slots, n, Slot { cell: [0; D], info: HUGE })?;
        fit(&mut self.min, n, [0.0; D])?;
        fit(&mut self.max, n, [0.0; D])?;
        fit(&mut self.items, n, 0)?;
        fit(&mut self.groups, if grouped { n } else { 0 }, 0)?;
        fit(&mut self.dest, n, 0)?;
        let (size, mask) = (&self.size, self.mask);
        // Each slot also widens its level's extents (`Extents`), per chunk
        // of slots: the serial pass below is left with the bucket counts.
        let fill = |first: usize,
                    slots: &mut [Slot<D>],
                    lo: &mut [[f32; D]],
                    hi: &mut [[f32; D]],
                    ids: &mut [u32],
                    dest: &mut [u32]| {
            let mut ext = Extents::default();
            for (j, ((((slot, min), max), id), dest)) in slots.iter_mut().zip(lo).zip(hi).zip(ids).zip(dest).enumerate()
            {
                let (b, x) = item(first + j);
                let b = GridBox::new(&b);
                *slot = place(size, &b).unwrap_or(Slot { cell: [0; D], info: HUGE });
                (*min, *max, *id) = (b.min_f32(), b.max_f32(), x);
                // Buckets fit `u32`: a list holds at most `MAX_ITEMS` slots.
                *dest = if slot.level() == HUGE { buckets } else { bucket(&slot.cell, slot.level(), mask) } as u32;
                if slot.level() != HUGE {
                    ext.widen(slot.level() as usize, min, max);
                }
            }
            ext
        };
        #[cfg(feature = "parallel")]
        let extents = {
            use rayon::prelude::*;
            const C: usize = PARALLEL_MIN;
            self.slots
                .par_chunks_mut(C)
                .zip(self.min.par_chunks_mut(C))
                .zip(self.max.par_chunks_mut(C))
                .zip(self.items.par_chunks_mut(C))
                .zip(self.dest.par_chunks_mut(C))
                .enumerate()
                .map(|(c, ((((slots, lo), hi), ids), dest))| fill(c * C, slots, lo, hi, ids, dest))
                .reduce(Extents::default, Extents::merge)
        };
        #[cfg(not(feature = "parallel"))]
        let extents = fill(0, &mut self.slots, &mut self.min, &mut self.max, &mut self.items, &mut self.dest);
        if let Some(group) = group {
            for (i, g) in self.groups.iter_mut().enumerate() {
                *g = group(i);
            }
        }
        (self.occupied, self.reach) = (extents.occupied, extents.reach);
        // Pass 2: the buckets' sizes.
        refill(&mut self.starts, buckets + 2, 0)?;
        for &k in &self.dest {
            self.starts[k as usize + 1] += 1;
        }
        // Rounded up, as the f64 difference of two f32 may round: once per
        // level, the largest extent's (`next_up` is increasing).
        for (l, reach) in self.reach.iter_mut().enumerate() {
            if self.occupied & (1 << l) != 0 {
                reach.iter_mut().for_each(|e| *e = e.next_up());
            }
        }
        for k in 0..=buckets {
            self.starts[k + 1] += self.starts[k];
        }
        self.huge = self.starts[buckets] as usize;
        // Each slot's place: item order within its bucket (deterministic),
        // with `starts[k]` as bucket `k`'s cursor, then shifted back.
        for d in &mut self.dest {
            let k = *d as usize;
            *d = self.starts[k];
            self.starts[k] += 1;
        }
        for k in (1..=buckets + 1).rev() {
            self.starts[k] = self.starts[k - 1];
        }
        self.starts[0] = 0;
        #[cfg(feature = "parallel")]
        if gather {
            self.swap_staged();
            self.gather(grouped)?;
        } else {
            self.permute(grouped);
        }
        #[cfg(not(feature = "parallel"))]
        self.permute(grouped);
        self.build_cover()
    }

    /// True when the build gathers its slots in parallel (more than one
    /// thread, enough slots) rather than permuting them in place: the
    /// permutation is serial, and was most of the build's serial time.
    #[cfg(feature = "parallel")]
    #[inline(always)]
    fn gathers(&self, n: usize) -> bool {
        n >= 2 * PARALLEL_MIN && rayon::current_num_threads() > 1
    }

    /// Exchanges the list's arrays with the staging ones.
    #[cfg(feature = "parallel")]
    fn swap_staged(&mut self) {
        let st = &mut self.staged;
        std::mem::swap(&mut self.slots, &mut st.slots);
        std::mem::swap(&mut self.min, &mut st.min);
        std::mem::swap(&mut self.max, &mut st.max);
        std::mem::swap(&mut self.items, &mut st.items);
        std::mem::swap(&mut self.groups, &mut st.groups);
    }

    /// Fills the list's arrays in bucket order from the staged ones (item
    /// order), `dest` giving each item's place: the same arrays as
    /// [`CellList::permute`] leaves, in parallel.
    #[cfg(feature = "parallel")]
    fn gather(&mut self, grouped: bool) -> Result<(), NoRoom> {
        use rayon::prelude::*;
        let n = self.dest.len();
        let st = &mut self.staged;
        // The inverse permutation: one store per item, serial (`dest` is a
        // permutation: every entry is written).
        fit(&mut st.src, n, 0)?;
        for (i, &p) in self.dest.iter().enumerate() {
            st.src[p as usize] = i as u32;
        }
        let src = &st.src;
        fn gather_into<T: Copy + Send + Sync>(out: &mut Vec<T>, from: &[T], src: &[u32]) -> Result<(), NoRoom> {
            // Room for exactly `n`, reused once warm: `par_extend` then
            // writes in place without growing.
            room_exact(out, src.len())?;
            out.par_extend(src.par_iter().with_min_len(PARALLEL_MIN).map(|&i| from[i as usize]));
            Ok(())
        }
        gather_into(&mut self.slots, &st.slots, src)?;
        gather_into(&mut self.min, &st.min, src)?;
        gather_into(&mut self.max, &st.max, src)?;
        gather_into(&mut self.items, &st.items, src)?;
        if grouped {
            gather_into(&mut self.groups, &st.groups, src)?;
        } else {
            self.groups.clear();
        }
        Ok(())
    }

    /// The cover entries of the slots above the finest occupied level, by
    /// counting sort into their own table.
    fn build_cover(&mut self) -> Result<(), NoRoom> {
        let finest = self.occupied.trailing_zeros();
        let coarse = |s: &Slot<D>| s.level() != HUGE && s.level() > finest;
        let count = |s: &Slot<D>| 1usize << s.spans().count_ones();
        let total: usize = self.slots[..self.huge].iter().filter(|s| coarse(s)).map(count).sum();
        let buckets = total.max(1).next_power_of_two();
        self.cover_mask = buckets as u64 - 1;
        refill(&mut self.cover_starts, buckets + 1, 0)?;
        room_exact(&mut self.cover, total)?;
        if total == 0 {
            return Ok(());
        }
        self.cover.resize(total, Cover { cell: [0; D], level: 0, slot: 0 });
        for s in self.slots[..self.huge].iter().filter(|s| coarse(s)) {
            let (lo, hi) = (s.cell, std::array::from_fn(|k| s.cell[k] + ((s.spans() >> k) & 1) as i32));
            for_each_cell(&lo, &hi, |c| self.cover_starts[bucket(&c, s.level(), self.cover_mask) + 1] += 1);
        }
        for k in 0..buckets {
            self.cover_starts[k + 1] += self.cover_starts[k];
        }
        for (p, s) in self.slots[..self.huge].iter().enumerate().filter(|(_, s)| coarse(s)) {
            let (lo, hi) = (s.cell, std::array::from_fn(|k| s.cell[k] + ((s.spans() >> k) & 1) as i32));
            for_each_cell(&lo, &hi, |c| {
                let k = bucket(&c, s.level(), self.cover_mask);
                let at = self.cover_starts[k] as usize;
                self.cover_starts[k] += 1;
                self.cover[at] = Cover { cell: c, level: s.level(), slot: p as u32 };
            });
        }
        for k in (1..=buckets).rev() {
            self.cover_starts[k] = self.cover_starts[k - 1];
        }
        self.cover_starts[0] = 0;
        Ok(())
    }

    /// Calls `f(q)` for each slot `q` of level `l` whose box overlaps the
    /// rounded box `min..max` (cells `lo..=hi` of level `l`), once: through
    /// the cover entries, in the cell holding the overlap's minimum corner.
    /// Level `l` must be above the finest occupied one.
    #[inline(always)]
    fn covering(&self, min: &[f32; D], max: &[f32; D], lo: &[i32; D], hi: &[i32; D], l: u32, mut f: impl FnMut(usize)) {
        let inv = self.size.inv(l as usize);
        if (0..D).any(|k| lo[k] > hi[k]) {
            return;
        }
        for_each_cell(lo, hi, |cell| {
            let k = bucket(&cell, l, self.cover_mask);
            for e in &self.cover[self.cover_starts[k] as usize..self.cover_starts[k + 1] as usize] {
                if e.level != l || e.cell != cell {
                    continue;
                }
                let q = e.slot as usize;
                let (a, b) = (&self.min[q], &self.max[q]);
                let overlap = (0..D).fold(true, |o, k| o & (a[k] <= max[k]) & (min[k] <= b[k]));
                // The overlap's minimum corner lies in exactly one cell.
                if overlap && (0..D).all(|k| corner_cell(a[k], min[k], inv) == cell[k]) {
                    f(q);
                }
            }
        });
    }

    /// Moves every slot to `dest`, in place along the permutation's cycles:
    /// each swap puts one slot where it belongs.
    fn permute(&mut self, grouped: bool) {
        for i in 0..self.dest.len() {
            loop {
                let j = self.dest[i] as usize;
                if j == i {
                    break;
                }
                self.slots.swap(i, j);
                self.min.swap(i, j);
                self.max.swap(i, j);
                self.items.swap(i, j);
                if grouped {
                    self.groups.swap(i, j);
                }
                self.dest.swap(i, j);
            }
        }
    }

    /// Number of slots (one per item).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The id of the item in slot `p`.
    #[inline(always)]
    pub fn item(&self, p: usize) -> u32 {
        self.items[p]
    }

    /// The occupied levels, a bit each, and the first huge slot: what a
    /// walk over the cells (`ray_walk.rs`) needs. `None` for a list small
    /// enough to be tested slot by slot.
    pub fn walk_plan(&self) -> Option<(u64, usize)> {
        (self.len() > SCAN).then_some((self.occupied, self.huge))
    }

    /// The list's cell size.
    pub fn cell_size(&self) -> CellSize {
        self.size
    }

    /// Calls `f(p)` for each slot `p` of the cells `cells` of level `l`.
    /// Every bucket's bounds are read before any slot, so that the cache
    /// misses of a large list overlap instead of queueing.
    #[inline]
    pub fn cells_slots(&self, cells: &[[i32; D]], l: u32, mut f: impl FnMut(usize)) {
        const BATCH: usize = 27;
        for chunk in cells.chunks(BATCH) {
            let mut ranges = [(0u32, 0u32); BATCH];
            for (r, cell) in ranges.iter_mut().zip(chunk) {
                let b = bucket(cell, l, self.mask);
                *r = (self.starts[b], self.starts[b + 1]);
            }
            for (&(from, to), cell) in ranges.iter().zip(chunk) {
                for p in from as usize..to as usize {
                    if self.slots[p].is(cell, l) {
                        f(p);
                    }
                }
            }
        }
    }

    /// Renames every item as its slot (`item(p) = p`): for a caller that
    /// reordered its own data as the slots.
    pub fn number_items_by_slot(&mut self) {
        for (p, id) in self.items.iter_mut().enumerate() {
            // A list holds at most MAX_ITEMS < 2^32 slots.
            *id = p as u32;
        }
    }

    /// The rounded box of slot `p`.
    #[inline(always)]
    pub fn grid_box(&self, p: usize) -> GridBox<D> {
        GridBox::from_f32(self.min[p], self.max[p])
    }

    /// True when the items of slots `p` and `q` are of different groups
    /// (always, for a list built without groups).
    #[inline(always)]
    pub fn other_groups(&self, p: usize, q: usize) -> bool {
        self.groups.is_empty() || self.groups[p] != self.groups[q]
    }

    /// True when the boxes of slots `p` and `q` overlap (closed) and their
    /// items are of different groups: the pairs pass's test.
    #[inline(always)]
    pub fn pairs(&self, p: usize, q: usize) -> bool {
        let (a, b) = ((&self.min[p], &self.max[p]), (&self.min[q], &self.max[q]));
        // Non-short-circuit: the outcome is unpredictable.
        let overlap = (0..D).fold(true, |o, k| o & (a.0[k] <= b.1[k]) & (b.0[k] <= a.1[k]));
        overlap && self.other_groups(p, q)
    }

    /// Calls `f(q)` for each slot `q` of `range`, in order, that is in
    /// `cell` of `level` and pairs with slot `p` ([`CellList::pairs`]): the
    /// range's slots and boxes walked together, bounds checked once.
    #[inline(always)]
    fn scan(&self, p: usize, range: std::ops::Range<usize>, cell: &[i32; D], level: u32, f: &mut impl FnMut(usize)) {
        let (a_min, a_max) = (&self.min[p], &self.max[p]);
        let from = range.start;
        let slots = self.slots[range.clone()].iter().zip(&self.min[range.clone()]).zip(&self.max[range]);
        for (j, ((s, b_min), b_max)) in slots.enumerate() {
            if s.is(cell, level) {
                // Non-short-circuit: the outcome is unpredictable.
                let overlap = (0..D).fold(true, |o, k| o & (a_min[k] <= b_max[k]) & (b_min[k] <= a_max[k]));
                let q = from + j;
                if overlap && self.other_groups(p, q) {
                    f(q);
                }
            }
        }
    }

    /// Slots of `cell` of `level` (other cells sharing the bucket excluded
    /// by the caller's `is` test).
    #[inline(always)]
    fn bucket_of(&self, cell: &[i32; D], level: u32) -> std::ops::Range<usize> {
        let k = bucket(cell, level, self.mask);
        self.starts[k] as usize..self.starts[k + 1] as usize
    }

    /// The lowest cell, along each axis, of level `l` that can hold a box
    /// reaching `min`: the cell of `min` minus one, or `min`'s own cell when
    /// no box of the level is long enough to reach over from the one before.
    #[inline(always)]
    fn low_cells(&self, min: &[f32; D], l: u32) -> [i32; D] {
        let inv = self.size.inv(l as usize);
        let reach = &self.reach[l as usize];
        std::array::from_fn(|k| {
            let m = f64::from(min[k]);
            let own = floor_i32(m * inv);
            // A box of the level reaching `min` starts at or above
            // `min - reach` (the subtraction rounded down).
            let lowest = floor_i32((m - reach[k]).next_down() * inv);
            lowest.clamp(own.saturating_sub(1), own)
        })
    }

    /// Bit `k` set when a box of level `l` may reach into `cell` from the
    /// cell before it along axis `k` and overlap a box whose minimum is
    /// `min`: [`CellList::low_cells`]`[k] < cell[k]`, without the floors
    /// (`⌊y⌋ < c` exactly when `y < c` for an integer `c`).
    #[inline(always)]
    fn reach_back(&self, min: &[f32; D], cell: &[i32; D], l: u32) -> u32 {
        let inv = self.size.inv(l as usize);
        let reach = &self.reach[l as usize];
        (0..D).fold(0, |b, k| {
            let lowest = (f64::from(min[k]) - reach[k]).next_down() * inv;
            b | u32::from(lowest < f64::from(cell[k])) << k
        })
    }

    /// Calls `f(q)` for every slot `q` that pairs with slot `p` and comes
    /// out from `p`'s side: over all slots, every pair of overlapping boxes
    /// of different groups comes out exactly once. `spreads` is the caller's
    /// from its last slot (any value is correct; the last slot's saves work).
    #[inline]
    pub fn partners(&self, p: usize, spreads: &mut Spreads<D>, mut f: impl FnMut(usize)) {
        if p >= self.huge {
            // A huge slot meets every ordinary slot, and the huge ones after it.
            for q in (0..self.huge).chain(p + 1..self.len()) {
                if self.pairs(p, q) {
                    f(q);
                }
            }
            return;
        }
        let s = self.slots[p];
        let level = s.level();
        // Each axis's coordinates -1, 0, +1 around the cell spread once
        // (a cell's slots share them): a neighbour's Morton code is an OR
        // of its axes' spreads.
        let spreads = spreads.of(&s.cell);
        let bucket_at = |o: &[i32; D]| {
            let code = (0..D).fold(0, |h, k| h | spreads[k][(o[k] + 1) as usize & 3]);
            let k = bucket_of_code(code, level, self.mask);
            let range = &self.starts[k..k + 2];
            range[0] as usize..range[1] as usize
        };
        // Same cell: the slots after `p` in its bucket.
        let here = bucket_at(&[0; D]);
        self.scan(p, p + 1..here.end, &s.cell, level, &mut f);
        // Forward neighbours, same level; `+1` along an axis only where the
        // box reaches the next cell.
        let forward = &Forward::<D>::TABLE;
        let spans = s.spans();
        // `-1` along an axis only where a box of the level can reach back.
        let back = self.reach_back(&self.min[p], &s.cell, level);
        let mut visit = forward.visit[spans as usize & 7][back as usize & 7];
        while visit != 0 {
            let o = &forward.offsets[visit.trailing_zeros() as usize & 15];
            visit &= visit - 1;
            let cell: [i32; D] = std::array::from_fn(|k| s.cell[k] + o[k]);
            self.scan(p, bucket_at(o), &cell, level, &mut f);
        }
        // Coarser levels: through their cover entries, in the 1–8 cells of
        // that level this box overlaps.
        let mut coarser = if level + 1 >= 64 { 0 } else { self.occupied & (u64::MAX << (level + 1)) };
        let span_hi: [i32; D] = std::array::from_fn(|k| s.cell[k] + ((spans >> k) & 1) as i32);
        while coarser != 0 {
            let l = coarser.trailing_zeros();
            coarser &= coarser - 1;
            let up = (l - level) as usize;
            let (lo, hi) = (parent(&s.cell, up), parent(&span_hi, up));
            self.covering(&self.min[p], &self.max[p], &lo, &hi, l, |q| {
                if self.other_groups(p, q) {
                    f(q);
                }
            });
        }
    }

    /// Calls `f(id)` once for each item whose box overlaps `q` (closed
    /// test on the rounded boxes: a superset of the items whose exact boxes
    /// overlap `q`'s), on every level. An item of level `ℓ` overlapping `q`
    /// has its cell in `[cell(q.min) - 1, cell(q.max)]` of that level.
    pub fn query(&self, q: &Aabb<D>, mut f: impl FnMut(u32)) {
        self.query_slots(&GridBox::new(q), |p| f(self.items[p]));
    }

    /// [`CellList::query`] for a box already rounded, by slot: calls
    /// `f(p)` once for each slot `p` whose box overlaps `q` (the item is
    /// [`CellList::item`]`(p)`).
    #[inline]
    pub fn query_slots(&self, q: &GridBox<D>, mut f: impl FnMut(usize)) {
        let (qmin, qmax) = (q.min_f32(), q.max_f32());
        // An empty (inverted) box overlaps nothing.
        if (0..D).any(|k| qmin[k] > qmax[k]) {
            return;
        }
        let hit = |p: usize| self.slot_overlaps(p, q);
        if self.len() <= SCAN {
            // A few boxes (the bodies' boxes of a world of meshes): testing
            // them all beats looking up cells.
            for p in 0..self.len() {
                if hit(p) {
                    f(p);
                }
            }
            return;
        }
        let mut levels = self.occupied;
        while levels != 0 {
            let l = levels.trailing_zeros();
            levels &= levels - 1;
            let inv = self.size.inv(l as usize);
            let hi: [i32; D] = std::array::from_fn(|k| floor_i32(f64::from(qmax[k]) * inv));
            if l > self.occupied.trailing_zeros() {
                // Above the finest level: the query's own cells, through the
                // cover entries (unless a huge query over fine cells).
                let own: [i32; D] = std::array::from_fn(|k| floor_i32(f64::from(qmin[k]) * inv));
                if cell_count(&own, &hi) <= self.cover.len() as u64 {
                    self.covering(&qmin, &qmax, &own, &hi, l, &mut f);
                    continue;
                }
            }
            let lo = self.low_cells(&qmin, l);
            if cell_count(&lo, &hi) > self.huge as u64 {
                // A query larger than the list (a huge box over fine cells):
                // test every slot of the level instead, each once.
                for p in (0..self.huge).filter(|&p| self.slots[p].level() == l) {
                    if hit(p) {
                        f(p);
                    }
                }
                continue;
            }
            self.visit_cells(&lo, &hi, l, |p| {
                if hit(p) {
                    f(p);
                }
            });
        }
        for p in self.huge..self.len() {
            if hit(p) {
                f(p);
            }
        }
    }

    /// True when the box of slot `p` overlaps `q` (closed test).
    #[inline(always)]
    pub fn slot_overlaps(&self, p: usize, q: &GridBox<D>) -> bool {
        let (a, b, qmin, qmax) = (&self.min[p], &self.max[p], q.min_f32(), q.max_f32());
        (0..D).fold(true, |o, k| o & (a[k] <= qmax[k]) & (qmin[k] <= b[k]))
    }

    /// Calls `f(p)` for each slot `p` of the cells `lo..=hi` of level `l`.
    /// Up to 27 cells, every bucket's bounds are read before any slot, so
    /// the cache misses of a large list overlap instead of queueing.
    #[inline(always)]
    fn visit_cells(&self, lo: &[i32; D], hi: &[i32; D], l: u32, mut f: impl FnMut(usize)) {
        const BATCH: usize = 27;
        if (0..D).any(|k| lo[k] > hi[k]) {
            return;
        }
        if cell_count(lo, hi) > BATCH as u64 {
            for_each_cell(lo, hi, |cell| {
                for p in self.bucket_of(&cell, l) {
                    if self.slots[p].is(&cell, l) {
                        f(p);
                    }
                }
            });
            return;
        }
        // Each coordinate spread once (at most 3 per axis in the usual
        // 3×3×3 block), each cell's Morton code an OR of its axes' spreads.
        let mut spreads = [[0u64; BATCH]; D];
        for (k, row) in spreads.iter_mut().enumerate() {
            for (j, s) in row[..=(hi[k] - lo[k]) as usize].iter_mut().enumerate() {
                *s = spread::<D>(lo[k] + j as i32) << k;
            }
        }
        let mut cells = [[0i32; D]; BATCH];
        let mut ranges = [(0u32, 0u32); BATCH];
        let mut n = 0;
        for_each_cell(lo, hi, |cell| {
            let code = (0..D).fold(0, |h, k| h | spreads[k][(cell[k] - lo[k]) as usize]);
            let b = bucket_of_code(code, l, self.mask);
            cells[n] = cell;
            ranges[n] = (self.starts[b], self.starts[b + 1]);
            n += 1;
        });
        for (&(from, to), cell) in ranges.iter().zip(&cells[..n]) {
            for p in from as usize..to as usize {
                if self.slots[p].is(cell, l) {
                    f(p);
                }
            }
        }
    }

    /// Frees the build scratch: for a list built once and queried many
    /// times (the fixed frames').
    pub fn release_scratch(&mut self) {
        self.dest = Vec::new();
        #[cfg(feature = "parallel")]
        {
            self.staged = Staged::default();
        }
    }

    /// True when the list holds no item.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes held (capacity, not just length), scratch included.
    pub fn memory(&self) -> usize {
        self.slots.capacity() * size_of::<Slot<D>>()
            + (self.min.capacity() + self.max.capacity()) * size_of::<[f32; D]>()
            + (self.items.capacity() + self.groups.capacity() + self.starts.capacity() + self.dest.capacity()) * 4
            + self.cover.capacity() * size_of::<Cover<D>>()
            + self.cover_starts.capacity() * 4
            + self.staged_memory()
    }

    fn staged_memory(&self) -> usize {
        #[cfg(feature = "parallel")]
        return self.staged.memory();
        #[cfg(not(feature = "parallel"))]
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::random_boxes;

    fn list(base: f64, boxes: &[Aabb<3>]) -> CellList<3> {
        let mut grid = CellList::default();
        grid.build(CellSize::new(base), boxes.len(), |i| (boxes[i], i as u32), None).unwrap();
        grid
    }

    #[test]
    fn queries_find_every_overlapping_box_once() {
        queries_match_brute_force(2000, 0.5);
        queries_match_brute_force(2000, 7.0);
        // Small lists are scanned.
        queries_match_brute_force(SCAN, 0.5);
        queries_match_brute_force(SCAN + 1, 0.5);
    }

    /// A manual cell size no level can bring up to the boxes' sizes: every
    /// box is listed apart (in the grid this replaced, this aborted on a
    /// 2 TB allocation).
    #[test]
    fn boxes_beyond_the_top_level_are_still_found() {
        queries_match_brute_force(2000, 1e-300);
    }

    fn queries_match_brute_force(n: usize, base: f64) {
        let boxes = random_boxes(n, 4, 50.0);
        let grid = list(base, &boxes);
        let queries = random_boxes(300, 5, 60.0);
        let huge = Aabb { min: [-1e9, -0.5, -0.5], max: [1e9, 0.5, 0.5] };
        let point = Aabb { min: [1.0, 2.0, 3.0], max: [1.0, 2.0, 3.0] };
        for q in queries.iter().chain([&huge, &point]) {
            let mut got = Vec::new();
            grid.query(q, |j| got.push(j));
            let n = got.len();
            got.sort_unstable();
            got.dedup();
            assert_eq!(got.len(), n, "an item reported twice (base {base})");
            // The list's boxes are rounded outward: compare with the same boxes.
            let rounded = GridBox::new(q);
            let expect: Vec<u32> =
                (0..boxes.len() as u32).filter(|&j| GridBox::new(&boxes[j as usize]).overlaps(&rounded)).collect();
            assert_eq!(got, expect, "base {base}");
        }
    }

    /// The parallel build (staged, then gathered) lays out the very arrays
    /// the serial one (permuted in place) does, grouped or not, and keeps
    /// doing so when rebuilt over fewer or more items.
    #[cfg(feature = "parallel")]
    #[test]
    fn gathered_and_permuted_builds_are_identical() {
        let pool = |threads| rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let (one, two) = (pool(1), pool(2));
        let (mut serial, mut parallel) = (CellList::<3>::default(), CellList::<3>::default());
        for (n, seed, grouped) in
            [(3 * PARALLEL_MIN, 11, false), (5 * PARALLEL_MIN, 12, true), (2 * PARALLEL_MIN, 13, true)]
        {
            let boxes = random_boxes(n, seed, 200.0);
            let group = |i: usize| (i / 3) as u32;
            let build = |grid: &mut CellList<3>| {
                let g: Option<&dyn Fn(usize) -> u32> = if grouped { Some(&group) } else { None };
                grid.build(CellSize::new(2.0), n, |i| (boxes[i], i as u32), g).unwrap();
            };
            one.install(|| build(&mut serial));
            two.install(|| build(&mut parallel));
            assert!(two.install(|| parallel.gathers(n)) && !one.install(|| serial.gathers(n)));
            assert_eq!(serial.slots, parallel.slots);
            assert_eq!(serial.min, parallel.min);
            assert_eq!(serial.max, parallel.max);
            assert_eq!(serial.items, parallel.items);
            assert_eq!(serial.groups, parallel.groups);
            assert_eq!(serial.starts, parallel.starts);
            assert_eq!(serial.cover_starts, parallel.cover_starts);
            assert_eq!(serial.huge, parallel.huge);
            assert_eq!((serial.occupied, serial.reach), (parallel.occupied, parallel.reach));
        }
    }

    #[test]
    fn rebuilding_reuses_buffers_and_forgets_old_items() {
        let mut grid = list(1.0, &random_boxes(500, 6, 20.0));
        let few = random_boxes(10, 7, 20.0);
        grid.build(CellSize::new(1.0), few.len(), |i| (few[i], 9), None).unwrap();
        assert_eq!(grid.len(), 10);
        let mut n = 0;
        grid.query(&Aabb { min: [-1e3; 3], max: [1e3; 3] }, |id| {
            assert_eq!(id, 9);
            n += 1;
        });
        assert_eq!(n, 10);
    }

    #[test]
    fn boxes_go_to_the_level_of_their_extent_spanning_two_cells_at_most() {
        let w = CellSize::new(1.0);
        let level =
            |lo: f64, hi: f64| place(&w, &GridBox::new(&Aabb { min: [lo, 0.0], max: [hi, 0.5] })).map(|s| s.level());
        assert_eq!(level(0.0, 0.5), Some(0));
        assert_eq!(level(0.5, 1.5), Some(0)); // two cells
        assert_eq!(level(0.5, 2.5), Some(1)); // three cells on level 0
        assert_eq!(level(0.0, 1000.0), Some(10));
        assert_eq!(level(0.0, 1e12), Some(40));
        // Far but small: climbs until the cells fit.
        let far = place(&w, &GridBox::new(&Aabb { min: [1e14, 0.0], max: [1e14 + 0.5, 0.5] })).unwrap();
        assert!(far.cell[0].unsigned_abs() < 1 << 30);
        assert_eq!(place(&CellSize::new(1e-300), &GridBox::new(&Aabb { min: [0.0, 0.0], max: [1.0, 1.0] })), None);
    }

    #[test]
    fn neighbour_spreads_are_the_neighbours_spreads() {
        for c in [0, 1, -1, 5, -7, (1 << 21) - 1, 1 << 21, -(1 << 21), i32::MAX, i32::MIN, -i32::MAX, 123_456_789] {
            let want = |d: i32| [spread::<3>(c.wrapping_sub(d)), spread::<3>(c), spread::<3>(c.wrapping_add(d))];
            assert_eq!(neighbour_spreads::<3>(c), want(1), "{c}");
            let want = [spread::<2>(c.wrapping_sub(1)), spread::<2>(c), spread::<2>(c.wrapping_add(1))];
            assert_eq!(neighbour_spreads::<2>(c), want, "{c}");
        }
    }

    #[test]
    fn forward_offsets_are_half_the_neighbours() {
        assert_eq!(Forward::<2>::TABLE.n, 4);
        assert_eq!(Forward::<3>::TABLE.n, 13);
        let f = Forward::<3>::TABLE;
        for o in &f.offsets[..f.n] {
            let back = o.map(|x| -x);
            assert!(!f.offsets[..f.n].contains(&back), "{o:?} and its opposite");
        }
    }
}
