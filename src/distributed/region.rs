//! The split of space among ranks: recursive coordinate bisection of the
//! bodies' reference points, weighted by their frame counts. Each rank
//! gets a half-open box `[lo, hi)` (the outer ones reach to infinity), so
//! every point of space belongs to exactly one rank.

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
