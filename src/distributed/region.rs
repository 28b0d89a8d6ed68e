//! The split of space among ranks: recursive coordinate bisection of the
//! bodies' reference points, weighted by their frame counts. Each rank
//! gets a half-open box `[lo, hi)` (the outer ones reach to infinity), so
//! every point of space belongs to exactly one rank.

use super::comm::Comm;
use crate::aabb::Aabb;

/// One region per rank: rank `r` owns the points `p` with `lo ≤ p < hi`
/// on every axis of `regions[r]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Regions<const D: usize> {
    regions: Vec<Aabb<D>>,
}

impl<const D: usize> Regions<D> {
    /// `ranks` regions splitting `points` (reference point and weight)
    /// into parts of nearly equal weight: the longest axis of the points'
    /// box is cut at the weighted median, `ranks` shared between the two
    /// sides in proportion, recursively. Deterministic: the same points in
    /// the same order give the same regions on every rank.
    ///
    /// ```
    /// use fmbgrid::distributed::Regions;
    /// let points: Vec<([f64; 2], u64)> = (0..100).map(|i| ([i as f64, 0.0], 1)).collect();
    /// let r = Regions::bisect(&points, 4);
    /// let owners: Vec<usize> = points.iter().map(|(p, _)| r.owner(p)).collect();
    /// assert!((0..4).all(|k| owners.iter().filter(|&&o| o == k).count() == 25));
    /// ```
    pub fn bisect(points: &[([f64; D], u64)], ranks: usize) -> Self {
        let whole = Aabb { min: [f64::NEG_INFINITY; D], max: [f64::INFINITY; D] };
        let mut regions = vec![whole; ranks.max(1)];
        let mut order: Vec<usize> = (0..points.len()).collect();
        split(points, &mut order, whole, 0, ranks.max(1), &mut regions);
        Regions { regions }
    }

    /// As [`Regions::bisect`] for points spread over the ranks of `comm`
    /// (collective: every rank passes its own points), without gathering
    /// them: at each level of the bisection, reductions of every part's
    /// weight and box, then of a histogram of its points along the
    /// longest axis (64 bins), refined within the bin where the
    /// left share's weight is reached until that bin weighs at most
    /// `slack` times the mean weight of a rank (or cannot be narrowed);
    /// the cut is the bin edge nearer the share. A few words a part and
    /// level travel, O(ranks) at most, never O(points). Every rank gets
    /// the same regions: every choice is made from reduced numbers.
    ///
    /// ```
    /// use fmbgrid::distributed::{LocalComm, Regions};
    /// let comm = LocalComm::group(1).pop().unwrap();
    /// let points: Vec<([f64; 2], u64)> = (0..100).map(|i| ([i as f64, 0.0], 1)).collect();
    /// let r = Regions::bisect_among(&comm, &points, 0.0);
    /// assert_eq!(r, Regions::bisect(&points, 1));
    /// ```
    pub fn bisect_among<C: Comm>(comm: &C, points: &[([f64; D], u64)], slack: f64) -> Self {
        let ranks = comm.size().max(1);
        let whole = Aabb { min: [f64::NEG_INFINITY; D], max: [f64::INFINITY; D] };
        let mut regions = vec![whole; ranks];
        // The parts still to cut, and the part of each point (`NONE`: done).
        let mut parts = vec![Part { bounds: whole, first: 0, ranks }];
        if ranks == 1 {
            parts.clear();
        }
        // NaN points have no side (infinities do: `key` orders them).
        let ordered = |p: &[f64; D]| p.iter().all(|x| !x.is_nan());
        let mut part: Vec<usize> = points.iter().map(|(p, _)| if ordered(p) { 0 } else { NONE }).collect();
        let mut tolerance = None;
        while !parts.is_empty() {
            let n = parts.len();
            // Each part's weight and its points' box, as order-preserving keys.
            let (mut weight, mut ext) = (vec![0u64; n], vec![0u64; n * 2 * D]);
            for ((p, w), &k) in points.iter().zip(&part) {
                if k == NONE {
                    continue;
                }
                weight[k] = weight[k].saturating_add(*w);
                for d in 0..D {
                    let e = &mut ext[k * 2 * D..];
                    e[d] = e[d].max(key(p[d]));
                    e[D + d] = e[D + d].max(!key(p[d]));
                }
            }
            let (weight, ext) = (comm.all_sum_each(&weight), comm.all_max_each(&ext));
            // A rank's mean weight: from the first level's, the whole.
            let tolerance = *tolerance
                .get_or_insert_with(|| (slack.max(0.0) * weight.iter().sum::<u64>() as f64 / ranks as f64) as u128);
            // Where each part is cut: axis and interval to refine.
            let mut cuts: Vec<Cut> = (0..n)
                .map(|k| {
                    let e = &ext[k * 2 * D..(k + 1) * 2 * D];
                    let (lo, hi): ([f64; D], [f64; D]) =
                        (std::array::from_fn(|d| unkey(!e[D + d])), std::array::from_fn(|d| unkey(e[d])));
                    let axis = (0..D).fold(0, |a, d| if hi[d] - lo[d] > hi[a] - lo[a] { d } else { a });
                    let want = u128::from(weight[k]) * (parts[k].ranks / 2) as u128 / parts[k].ranks as u128;
                    let done = weight[k] == 0 || hi[axis] <= lo[axis];
                    // All points at one coordinate stay on one side (left).
                    let at = if done { parts[k].bounds.max[axis] } else { lo[axis] };
                    Cut { axis, lo: lo[axis], hi: hi[axis].next_up(), below: 0, want, at, done }
                })
                .collect();
            for _ in 0..ROUNDS {
                if cuts.iter().all(|c| c.done) {
                    break;
                }
                let mut hist = vec![0u64; n * BINS];
                for ((p, w), &k) in points.iter().zip(&part) {
                    let Some(c) = cuts.get(k).filter(|c| !c.done) else { continue };
                    let x = p[c.axis];
                    if c.lo <= x && x < c.hi {
                        let b = k * BINS + c.bin(x);
                        hist[b] = hist[b].saturating_add(*w);
                    }
                }
                let hist = comm.all_sum_each(&hist);
                for (k, c) in cuts.iter_mut().enumerate().filter(|(_, c)| !c.done) {
                    c.refine(&hist[k * BINS..(k + 1) * BINS], tolerance);
                }
            }
            // Cut every part (a part still refining after the last round
            // at its best edge so far); a side of one rank is a region.
            let mut next = Vec::new();
            let mut index = vec![[NONE; 2]; n];
            for (k, (p, c)) in parts.iter().zip(&cuts).enumerate() {
                if weight[k] == 0 {
                    // No points: the first rank takes the part, the others
                    // empty boxes at its far corner (as `bisect`).
                    regions[p.first] = p.bounds;
                    for r in &mut regions[p.first + 1..p.first + p.ranks] {
                        *r = Aabb { min: p.bounds.max, max: p.bounds.max };
                    }
                    continue;
                }
                let left_ranks = p.ranks / 2;
                let (mut lb, mut rb) = (p.bounds, p.bounds);
                lb.max[c.axis] = c.at;
                rb.min[c.axis] = c.at;
                for (side, (bounds, first, ranks)) in
                    [(lb, p.first, left_ranks), (rb, p.first + left_ranks, p.ranks - left_ranks)]
                        .into_iter()
                        .enumerate()
                {
                    if ranks == 1 {
                        regions[first] = bounds;
                    } else {
                        index[k][side] = next.len();
                        next.push(Part { bounds, first, ranks });
                    }
                }
            }
            for ((p, _), k) in points.iter().zip(&mut part) {
                if *k != NONE {
                    let c = &cuts[*k];
                    *k = index[*k][usize::from(p[c.axis] >= c.at)];
                }
            }
            parts = next;
        }
        Regions { regions }
    }

    /// The rank owning point `p` (the last rank for a point that is not a
    /// number, so that every input has one owner).
    ///
    /// ```
    /// use fmbgrid::distributed::Regions;
    /// let r = Regions::<2>::bisect(&[([0.0, 0.0], 1), ([10.0, 0.0], 1)], 2);
    /// assert_eq!((r.owner(&[0.0, 5.0]), r.owner(&[10.0, -5.0])), (0, 1));
    /// assert_eq!(r.owner(&[f64::NAN, 0.0]), 1);
    /// ```
    pub fn owner(&self, p: &[f64; D]) -> usize {
        let inside = |r: &Aabb<D>| (0..D).all(|k| r.min[k] <= p[k] && p[k] < r.max[k]);
        self.regions.iter().position(inside).unwrap_or(self.regions.len() - 1)
    }

    /// Every rank whose region's closure meets box `b`.
    ///
    /// ```
    /// use fmbgrid::distributed::Regions;
    /// let r = Regions::<2>::bisect(&[([0.0, 0.0], 1), ([10.0, 0.0], 1)], 2);
    /// let b = fmbgrid::Aabb { min: [9.0, 0.0], max: [11.0, 1.0] };
    /// assert_eq!(r.touching(&b).collect::<Vec<_>>(), [0, 1]); // it reaches the cut at 10
    /// ```
    pub fn touching<'a>(&'a self, b: &'a Aabb<D>) -> impl Iterator<Item = usize> + 'a {
        let meets = |r: &Aabb<D>| (0..D).all(|k| b.max[k] >= r.min[k] && b.min[k] <= r.max[k]);
        self.regions.iter().enumerate().filter(move |(_, r)| meets(r)).map(|(k, _)| k)
    }

    /// How many ranks the split is for.
    ///
    /// ```
    /// use fmbgrid::distributed::Regions;
    /// let r = Regions::<2>::bisect(&[([0.0, 0.0], 1), ([10.0, 0.0], 1)], 2);
    /// assert_eq!(r.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.regions.len()
    }

    /// Never empty: a split has at least one rank.
    ///
    /// ```
    /// use fmbgrid::distributed::Regions;
    /// let r = Regions::<2>::bisect(&[([0.0, 0.0], 1), ([10.0, 0.0], 1)], 2);
    /// assert!(!r.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// The region of rank `r`.
    ///
    /// ```
    /// use fmbgrid::distributed::Regions;
    /// let r = Regions::<2>::bisect(&[([0.0, 0.0], 1), ([10.0, 0.0], 1)], 2);
    /// assert_eq!(r.region(0).map(|b| b.max[0]), Some(10.0));
    /// assert!(r.region(2).is_none());
    /// ```
    pub fn region(&self, r: usize) -> Option<&Aabb<D>> {
        self.regions.get(r)
    }
}

/// Splits the points `order` (inside `bounds`) among ranks `first..first
/// + ranks`.
fn split<const D: usize>(
    points: &[([f64; D], u64)],
    order: &mut [usize],
    bounds: Aabb<D>,
    first: usize,
    ranks: usize,
    out: &mut [Aabb<D>],
) {
    if ranks <= 1 || order.is_empty() {
        // One rank, or no points left to balance: the first takes the
        // region, the others get empty boxes at its far corner.
        out[first] = bounds;
        for r in &mut out[first + 1..first + ranks] {
            *r = Aabb { min: bounds.max, max: bounds.max };
        }
        return;
    }
    let (lo, hi) = order.iter().fold(([f64::INFINITY; D], [f64::NEG_INFINITY; D]), |(lo, hi), &i| {
        let p = &points[i].0;
        (std::array::from_fn(|k| lo[k].min(p[k])), std::array::from_fn(|k| hi[k].max(p[k])))
    });
    let axis = (0..D).fold(0, |a, k| if hi[k] - lo[k] > hi[a] - lo[a] { k } else { a });
    order.sort_by(|&a, &b| points[a].0[axis].total_cmp(&points[b].0[axis]).then(a.cmp(&b)));
    let left_ranks = ranks / 2;
    let total: u128 = order.iter().map(|&i| points[i].1 as u128).sum();
    let want = total * left_ranks as u128 / ranks as u128;
    // The first point whose running weight passes the left share; the cut
    // goes below it, at a coordinate where no point of the left sits.
    let mut acc = 0u128;
    let mut at = order.len();
    for (k, &i) in order.iter().enumerate() {
        if acc >= want && k > 0 {
            at = k;
            break;
        }
        acc += points[i].1 as u128;
    }
    // Points equal on the axis stay on one side.
    while at < order.len() && at > 0 && points[order[at]].0[axis] == points[order[at - 1]].0[axis] {
        at += 1;
    }
    let cut = if at < order.len() { points[order[at]].0[axis] } else { bounds.max[axis] };
    let (left, right) = order.split_at_mut(at);
    let mut lb = bounds;
    lb.max[axis] = cut;
    let mut rb = bounds;
    rb.min[axis] = cut;
    split(points, left, lb, first, left_ranks, out);
    split(points, right, rb, first + left_ranks, ranks - left_ranks, out);
}

/// Bins of a split's histogram, and the most rounds of refinement a level
/// (`BINS^ROUNDS` ≈ 10¹⁴: a cut within 10⁻¹⁴ of a part's extent).
const BINS: usize = 64;
const ROUNDS: usize = 8;
/// A point whose part is settled.
const NONE: usize = usize::MAX;

/// A part of space still to cut, and the ranks it is for.
struct Part<const D: usize> {
    bounds: Aabb<D>,
    first: usize,
    ranks: usize,
}

/// A part's cut being found: along `axis`, within `[lo, hi)`, with
/// `below` weight under `lo` and `want` the left share; `at` the best cut
/// so far.
struct Cut {
    axis: usize,
    lo: f64,
    hi: f64,
    below: u128,
    want: u128,
    at: f64,
    done: bool,
}

impl Cut {
    /// Edge `i` of the bins of `[lo, hi)` (0 and `BINS` exactly the ends).
    fn edge(&self, i: usize) -> f64 {
        let t = i as f64 / BINS as f64;
        match i {
            0 => self.lo,
            BINS => self.hi,
            // A width past the largest number: the ends weighed instead.
            _ if !(self.hi - self.lo).is_finite() => self.lo * (1.0 - t) + self.hi * t,
            _ => self.lo + (self.hi - self.lo) * t,
        }
    }

    /// The bin of `x` (in `[lo, hi)`): by the edges themselves, so that a
    /// point is on the side of a cut at an edge its bin says.
    fn bin(&self, x: f64) -> usize {
        let (mut a, mut b) = (0, BINS - 1);
        while a < b {
            let m = (a + b).div_ceil(2);
            if self.edge(m) <= x { a = m } else { b = m - 1 }
        }
        a
    }

    /// One round: the bin in which the running weight reaches `want`; the
    /// cut at its nearer edge, done when the bin weighs at most
    /// `tolerance` or cannot be narrowed, else its interval next.
    fn refine(&mut self, hist: &[u64], tolerance: u128) {
        let mut acc = self.below;
        let mut i = 0;
        while i + 1 < BINS && acc + u128::from(hist[i]) <= self.want {
            acc += u128::from(hist[i]);
            i += 1;
        }
        let h = u128::from(hist[i]);
        let (lo, hi) = (self.edge(i), self.edge(i + 1));
        self.at = if self.want - acc.min(self.want) <= (acc + h).saturating_sub(self.want) { lo } else { hi };
        let narrow = lo.next_up().partial_cmp(&hi) != Some(std::cmp::Ordering::Less);
        if h <= tolerance || narrow {
            self.done = true;
        } else {
            (self.lo, self.hi, self.below) = (lo, hi, acc);
        }
    }
}

/// An order-preserving key of a number (`a < b` exactly when `key(a) <
/// key(b)`, for numbers that are not NaN).
fn key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

fn unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::LocalComm;

    /// Point sets that make a split hard: uniform, a dense cluster in a
    /// corner with a few far away, heavy bodies, many at one coordinate,
    /// all at one point, fewer points than ranks, none.
    fn point_sets() -> Vec<Vec<([f64; 3], u64)>> {
        let mut seed = 3u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut sets = Vec::new();
        sets.push((0..3000).map(|_| ([rnd() * 100.0, rnd() * 40.0, rnd() * 10.0], 1)).collect());
        let mut cluster: Vec<_> = (0..2000).map(|_| ([rnd(), rnd(), rnd()], 1 + (rnd() * 3.0) as u64)).collect();
        cluster.extend((0..20).map(|_| ([1e6 * rnd(), -1e6 * rnd(), 5.0], 40)));
        sets.push(cluster);
        sets.push((0..1500).map(|i| ([f64::from(i % 7), rnd() * 1e-9, 0.0], 1)).collect());
        sets.push(vec![([2.0, 2.0, 2.0], 1); 500]);
        sets.push(vec![([0.0, 1.0, 2.0], 5), ([-3.0, 1.0, 0.5], 1)]);
        sets.push(vec![([-1e308, 0.0, 0.0], 1), ([1e308, 0.0, 0.0], 1), ([0.0, 0.0, 0.0], 1), ([1e307, 1.0, 0.0], 1)]);
        sets.push(Vec::new());
        sets
    }

    /// The split by histograms, points spread over the ranks: the same
    /// regions on every rank, every point in exactly one region, and the
    /// heaviest rank within the imbalance allowed of what the split of all
    /// the points in one place gives (or of the mean).
    #[test]
    fn a_split_from_histograms_covers_every_point_and_balances_as_the_whole() {
        let imbalance = 0.25;
        for points in point_sets() {
            for ranks in 1..=5 {
                let split: Vec<Regions<3>> = std::thread::scope(|s| {
                    let handles: Vec<_> = LocalComm::group(ranks)
                        .into_iter()
                        .map(|comm| {
                            let points = &points;
                            s.spawn(move || {
                                // Rank r holds every `ranks`-th point, from r on.
                                let me = comm.rank();
                                let mine: Vec<_> = points.iter().skip(me).step_by(ranks).copied().collect();
                                Regions::bisect_among(&comm, &mine, imbalance / 8.0)
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                assert!(split.windows(2).all(|w| w[0] == w[1]), "{ranks} ranks: regions differ between ranks");
                let r = &split[0];
                assert_eq!(r.len(), ranks);
                let mut load = vec![0u64; ranks];
                for (p, w) in &points {
                    let inside = |b: &Aabb<3>| (0..3).all(|k| b.min[k] <= p[k] && p[k] < b.max[k]);
                    let holders: Vec<usize> = (0..ranks).filter(|&k| inside(r.region(k).unwrap())).collect();
                    assert_eq!(holders.len(), 1, "{p:?} in regions {holders:?} of {r:?}");
                    load[holders[0]] += w;
                }
                let exact = Regions::bisect(&points, ranks);
                let mut exact_load = vec![0u64; ranks];
                for (p, w) in &points {
                    exact_load[exact.owner(p)] += w;
                }
                let total: u64 = load.iter().sum();
                let bound = (*exact_load.iter().max().unwrap() as f64).max(total as f64 / ranks as f64);
                let heaviest = *load.iter().max().unwrap() as f64;
                assert!(heaviest <= bound * (1.0 + imbalance), "{ranks} ranks: {load:?} against {exact_load:?}");
            }
        }
    }

    #[test]
    fn keys_keep_the_order_of_numbers() {
        let xs = [f64::NEG_INFINITY, -1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, f64::INFINITY];
        for w in xs.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{w:?}");
        }
        for x in xs {
            assert_eq!(unkey(key(x)).to_bits(), x.to_bits());
        }
    }
}
