//! Kept pairs: the moving frames' candidate pairs, kept from one step to
//! the next for the frames whose swept box did not change (bodies at rest).
//!
//! The pairs pass (`pairs.rs`) finds a step's moving–moving candidates from
//! scratch, visiting every slot's neighbour cells. In a world where most
//! moving bodies rest (zero velocity, or poses set again to what they
//! were), most of those pairs are last step's. So the broad phase keeps
//! the candidate pairs, with each frame's swept box when its pairs were
//! looked up. A step lists the frames whose swept box changed, drops their
//! pairs and looks up their new ones on the step's cell list; the pairs of
//! two unchanged frames are still those of the same two boxes (Box2D keeps
//! its pairs the same way, for boxes enlarged by a margin; here a moving
//! frame's box changes every step, and margins measured on the uniform
//! scene cost more than the pass: the candidates grew 2.2×).
//!
//! They come out as the pass gives them: from the same slot
//! ([`CellList::gives`]) and in the same order ([`CellList::given_at`]), so
//! the step's contacts depend on the frames only, never on when their pairs
//! were kept (a restored world, which keeps none, goes on bit for bit).
//!
//! Keeping pays while few frames change; when more than a quarter do, the
//! pairs are dropped and the pass runs, and the updates pause for a wait
//! that doubles at each such step, up to 31 steps (worlds of movers skip
//! the upkeep). Pairs are looked up for every frame again at the first
//! step at which at most an eighth changed.

use super::radix_sort::sort_keys;
use crate::grid::{CellList, CellSize, Spreads};

/// More frames than `n / DROP` changed in one step: the pass runs.
const DROP: usize = 4;

/// At most `n / KEEP` frames changed in a step: pairs dropped are looked up
/// again for every frame, and kept from then on.
const KEEP: usize = 8;

/// Most steps without an update after the pairs were dropped.
const MOST_WAIT: u32 = 31;

/// Bits of a store index in a kept pair's key, `a << PAIR_BITS | b`.
const PAIR_BITS: u32 = 32;

/// The moving frames' boxes and kept pairs, and the step's candidates.
#[derive(Clone, Debug, Default)]
pub(super) struct KeptPairs<const D: usize> {
    /// Per moving frame (store index): its swept box (as the cell list
    /// rounds it) when its pairs were looked up, or at the last update.
    min: Vec<[f32; D]>,
    max: Vec<[f32; D]>,
    /// The pairs of frames whose boxes overlap, of different groups, `a <<
    /// 32 | b` with `a < b` store indices, sorted; every such pair while
    /// `kept`, which also means the candidates below are this step's.
    pairs: Vec<u64>,
    kept: bool,
    /// The cell size of the list the candidates were listed for.
    cell: Option<CellSize>,
    /// Whether the last step updated the boxes, the steps still to skip,
    /// and the last wait.
    fresh: bool,
    skip: u32,
    wait: u32,
    /// This step's candidates, valid while `kept`: the slots `q` given by
    /// slot `p` are `given[starts[p]..starts[p + 1]]`, in the pass's order
    /// ([`CellList::given_at`]).
    starts: Vec<u32>,
    given: Vec<u32>,
    /// The candidates as `p << 32 | q`, before they are grouped by `p`.
    found_pq: Vec<u64>,
    /// Per store index, its slot in this step's list.
    slot_of: Vec<u32>,
    /// The frames whose box changed this step, and one bit each.
    changed: Vec<u32>,
    changed_bits: Vec<u64>,
    /// Pairs found for them; the merge's and the sort's other buffers.
    found: Vec<u64>,
    merged: Vec<u64>,
    scratch: Vec<u64>,
    /// The re-sort's buffer of boxes.
    box_scratch: Vec<[f32; D]>,
}

impl<const D: usize> KeptPairs<D> {
    /// Forgets the pairs and where the boxes came from (the store's
    /// indices changed, or the step was called off).
    pub fn forget(&mut self) {
        self.kept = false;
        self.fresh = false;
    }

    /// The step's candidates while the pairs are kept (from an update that
    /// kept them to the next change): the slots given by slot `p` are
    /// `given[starts[p]..starts[p + 1]]`.
    pub fn candidates(&self) -> Option<(&[u32], &[u32])> {
        self.kept.then_some((&self.starts, &self.given))
    }

    /// Brings the boxes and the kept pairs up to date with `list`, the
    /// step's cell list of every moving frame's swept box (ids: store
    /// indices), and lists the candidates; drops the pairs (the pass runs)
    /// when too many frames changed.
    pub fn update(&mut self, list: &CellList<D>) {
        if self.skip > 0 {
            self.skip -= 1;
            self.forget();
            return;
        }
        let n = list.len();
        if self.min.len() != n {
            self.forget();
            self.min.resize(n, [f32::INFINITY; D]);
            self.max.resize(n, [f32::NEG_INFINITY; D]);
        }
        let fresh = std::mem::replace(&mut self.fresh, true);
        let most = if self.kept { n / DROP } else { n / KEEP };
        self.slot_of.resize(n, u32::MAX);
        // Boxes older than the last step are all brought up to date, so
        // that the next step measures what changed in one step.
        let listed = self.list_changed(list, if fresh { most } else { n });
        if listed.is_none() || self.changed.len() > most {
            // Measured against the last step's boxes: wait before the next
            // try (older ones are measured again next step).
            if fresh {
                self.wait = (2 * self.wait + 1).min(MOST_WAIT);
                self.skip = self.wait;
            }
            self.kept = false;
            return;
        }
        self.wait = 0;
        let cell = Some(list.cell_size());
        if self.kept && self.changed.is_empty() && listed == Some(true) && self.cell == cell {
            // Every frame in the same slot with the same box, on the same
            // cells: the very list of the last step, and its candidates.
            return;
        }
        if self.kept {
            self.replace_pairs_of_changed(list);
        } else {
            self.look_up_all(list);
            self.kept = true;
        }
        self.list_candidates(list);
        self.cell = cell;
    }

    /// Lists in `changed` the frames whose box is not the one kept, keeps
    /// theirs and each frame's slot; `None` (with the frames after the
    /// `most + 1`-th change left as they were) as soon as more than `most`
    /// changed, else whether every frame is in the same slot as before.
    fn list_changed(&mut self, list: &CellList<D>, most: usize) -> Option<bool> {
        self.changed.clear();
        let mut same_slots = true;
        for p in 0..list.len() {
            let i = list.item(p) as usize;
            same_slots &= self.slot_of[i] == p as u32;
            self.slot_of[i] = p as u32;
            let b = list.grid_box(p);
            let (lo, hi) = (b.min_f32(), b.max_f32());
            if self.min[i] != lo || self.max[i] != hi {
                (self.min[i], self.max[i]) = (lo, hi);
                self.changed.push(i as u32);
                if self.changed.len() > most {
                    return None;
                }
            }
        }
        Some(same_slots)
    }

    /// Drops the pairs of the frames that changed, looks up theirs anew and
    /// merges them in (both lists sorted).
    fn replace_pairs_of_changed(&mut self, list: &CellList<D>) {
        self.changed_bits.clear();
        self.changed_bits.resize(list.len().div_ceil(64), 0);
        for &i in &self.changed {
            self.changed_bits[i as usize / 64] |= 1 << (i % 64);
        }
        let bits = &self.changed_bits;
        let changed = |i: u32| bits[i as usize / 64] >> (i % 64) & 1 != 0;
        self.pairs.retain(|&k| !changed((k >> PAIR_BITS) as u32) && !changed(k as u32));
        self.found.clear();
        for &c in &self.changed {
            // A pair of two changed frames, from the lower one's look-up.
            look_up(list, &self.slot_of, c, |b| !changed(b) || b > c, &mut self.found);
        }
        sort_keys(&mut self.found, &mut self.scratch);
        merge(&self.pairs, &self.found, &mut self.merged);
        std::mem::swap(&mut self.pairs, &mut self.merged);
    }

    /// Every frame's pairs, from the pairs pass (each pair once).
    fn look_up_all(&mut self, list: &CellList<D>) {
        self.pairs.clear();
        let mut spreads = Spreads::default();
        for p in 0..list.len() {
            let a = list.item(p);
            list.partners(p, &mut spreads, |q| {
                let b = list.item(q);
                self.pairs.push(u64::from(a.min(b)) << PAIR_BITS | u64::from(a.max(b)));
            });
        }
        sort_keys(&mut self.pairs, &mut self.scratch);
    }

    /// The kept pairs, grouped by the slot that gives them (a counting
    /// sort), each group in the pass's order.
    fn list_candidates(&mut self, list: &CellList<D>) {
        let n = list.len();
        self.starts.clear();
        self.starts.resize(n + 2, 0);
        self.found_pq.clear();
        for &k in &self.pairs {
            let (p, q) = (self.slot_of[(k >> PAIR_BITS) as usize] as usize, self.slot_of[k as u32 as usize] as usize);
            let (p, q) = if list.gives(p, q) { (p, q) } else { (q, p) };
            self.starts[p + 2] += 1;
            self.found_pq.push((p as u64) << 32 | q as u64);
        }
        // Prefix sums shifted by one: `starts[p + 1]` is group `p`'s cursor.
        for p in 2..n + 2 {
            self.starts[p] += self.starts[p - 1];
        }
        self.given.resize(self.found_pq.len(), 0);
        for &k in &self.found_pq {
            let cursor = &mut self.starts[(k >> 32) as usize + 1];
            self.given[*cursor as usize] = k as u32;
            *cursor += 1;
        }
        self.starts.truncate(n + 1);
        for p in 0..n {
            let group = &mut self.given[self.starts[p] as usize..self.starts[p + 1] as usize];
            if group.len() > 1 {
                in_pass_order(list, p, group);
            }
        }
    }

    /// The frames were re-sorted into the order of `list`, this step's
    /// (the frame of slot `p` is now at store index `p`): the boxes and
    /// kept pairs follow. Kept pairs imply an update with this list.
    pub fn renumber(&mut self, list: &CellList<D>) {
        if !self.kept {
            self.fresh = false;
            return;
        }
        for boxes in [&mut self.min, &mut self.max] {
            self.box_scratch.clear();
            self.box_scratch.extend((0..list.len()).map(|p| boxes[list.item(p) as usize]));
            boxes.copy_from_slice(&self.box_scratch);
        }
        let slot_of = &self.slot_of;
        for k in &mut self.pairs {
            let (a, b) = (slot_of[(*k >> PAIR_BITS) as usize], slot_of[*k as u32 as usize]);
            *k = u64::from(a.min(b)) << PAIR_BITS | u64::from(a.max(b));
        }
        sort_keys(&mut self.pairs, &mut self.scratch);
        // Store index and slot are one now.
        for (p, s) in self.slot_of.iter_mut().enumerate() {
            *s = p as u32;
        }
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        (self.min.capacity() + self.max.capacity() + self.box_scratch.capacity()) * size_of::<[f32; D]>()
            + (self.pairs.capacity()
                + self.found_pq.capacity()
                + self.changed_bits.capacity()
                + self.found.capacity()
                + self.merged.capacity()
                + self.scratch.capacity())
                * 8
            + (self.slot_of.capacity() + self.changed.capacity() + self.starts.capacity() + self.given.capacity()) * 4
    }
}

/// Pushes to `out` the pairs of frame `c` with the frames `b` whose boxes
/// overlap its box in `list`, of another group, for which `take(b)`, as
/// `min << 32 | max`.
#[inline]
fn look_up<const D: usize>(
    list: &CellList<D>,
    slot_of: &[u32],
    c: u32,
    take: impl Fn(u32) -> bool,
    out: &mut Vec<u64>,
) {
    let pc = slot_of[c as usize] as usize;
    list.query_slots(&list.grid_box(pc), |q| {
        let b = list.item(q);
        if b != c && take(b) && list.other_groups(pc, q) {
            out.push(u64::from(b.min(c)) << PAIR_BITS | u64::from(b.max(c)));
        }
    });
}

/// Sorts the slots `group` given by slot `p` in the pass's order: by
/// insertion, each slot's place computed once, for the few a slot gives.
#[inline]
fn in_pass_order<const D: usize>(list: &CellList<D>, p: usize, group: &mut [u32]) {
    const FEW: usize = 16;
    if group.len() > FEW {
        group.sort_unstable_by_key(|&q| list.given_at(p, q as usize));
        return;
    }
    let mut keys = [0u64; FEW];
    for j in 0..group.len() {
        let (key, q) = (list.given_at(p, group[j] as usize), group[j]);
        let mut i = j;
        while i > 0 && keys[i - 1] > key {
            keys[i] = keys[i - 1];
            group[i] = group[i - 1];
            i -= 1;
        }
        (keys[i], group[i]) = (key, q);
    }
}

/// `a` and `b` (sorted, no key in both) merged into `out`.
fn merge(a: &[u64], b: &[u64], out: &mut Vec<u64>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}
