//! An exact oracle that shares nothing with FMB: the separating-axis test
//! in integer arithmetic.
//!
//! Every input number is an `f64`, so it is `m · 2^e` exactly; scaled by the
//! pair's smallest exponent, every coordinate becomes an integer, and so do
//! vertices, edges, cross products and projections (no division, no
//! rounding). The candidate axes are the cross products of every pair of
//! edge directions of the two frames (the perpendiculars of the edges in
//! 2D): a superset of the face normals and edge–edge axes, so for any fixed
//! instant the open projections overlap on every axis iff the interiors
//! meet. Motion is a translation, so the axes do not depend on time and
//! the contact interval is the intersection of each axis's open interval
//! of overlapping instants: exact rationals.
//!
//! `delta` grows frame `A` by that distance on every axis (shrinks it when
//! negative): `interval(a, b, -band)` is non-empty iff the frames
//! interpenetrate deeper than `band` at some instant (the penetration depth
//! of convex polytopes is attained on one of these axes), and
//! `interval(a, b, band)` is empty only if some axis separates them by more
//! than `band`. The lengths `|n|` of the axes are bracketed by integer
//! square roots at 64 extra bits, rounded the conservative way each time.

use std::cmp::Ordering;

use fmbgrid::{Frame, FrameKind};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

/// Extra bits of the axis lengths' square roots.
const SQRT_BITS: usize = 64;

/// `x = m · 2^e` exactly (`m` odd or zero).
fn decompose(x: f64) -> (i64, i32) {
    if x == 0.0 {
        return (0, 0);
    }
    let bits = x.to_bits();
    let sign = if bits >> 63 == 1 { -1 } else { 1 };
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1u64 << 52) - 1)) as i64;
    let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | (1i64 << 52), exp - 1075) };
    (sign * m, e)
}

/// A rational `n / d`, `d > 0`.
#[derive(Clone, Debug)]
pub struct Frac {
    n: BigInt,
    d: BigInt,
}

impl Frac {
    fn int(n: i64) -> Frac {
        Frac { n: BigInt::from(n), d: BigInt::from(1) }
    }

    /// `n / d` for `d ≠ 0`.
    fn new(n: BigInt, d: BigInt) -> Frac {
        if d.is_negative() { Frac { n: -n, d: -d } } else { Frac { n, d } }
    }

    fn cmp(&self, other: &Frac) -> Ordering {
        (&self.n * &other.d).cmp(&(&other.n * &self.d))
    }

    /// The nearest `f64` within a few ulps.
    pub fn to_f64(&self) -> f64 {
        let bits = self.n.bits().max(self.d.bits());
        let shift = bits.saturating_sub(900) as usize;
        let (n, d) = (&self.n >> shift, &self.d >> shift);
        n.to_f64().unwrap_or(f64::NAN) / d.to_f64().unwrap_or(f64::NAN)
    }
}

/// The exact contact interval `(t_enter, t_exit)` of the open sets, as
/// rationals (`(0, 1)` for a pair at rest relative to each other that
/// overlaps).
#[derive(Clone, Debug)]
pub struct Interval {
    pub lo: Frac,
    pub hi: Frac,
}

impl Interval {
    pub fn lo(&self) -> f64 {
        self.lo.to_f64()
    }
    pub fn hi(&self) -> f64 {
        self.hi.to_f64()
    }
}

type V = Vec<BigInt>;

struct Exact {
    vertices: Vec<V>,
    edges: Vec<V>,
}

fn dot(a: &[BigInt], b: &[BigInt]) -> BigInt {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn cross(a: &[BigInt], b: &[BigInt]) -> V {
    vec![&a[1] * &b[2] - &a[2] * &b[1], &a[2] * &b[0] - &a[0] * &b[2], &a[0] * &b[1] - &a[1] * &b[0]]
}

fn scaled(x: f64, e_min: i32) -> BigInt {
    let (m, e) = decompose(x);
    BigInt::from(m) << ((e - e_min) as usize)
}

fn exact_frame<const D: usize>(f: &Frame<D>, e_min: i32) -> Exact {
    let o: V = f.origin().iter().map(|&x| scaled(x, e_min)).collect();
    let c: Vec<V> = f.components().iter().map(|c| c.iter().map(|&x| scaled(x, e_min)).collect()).collect();
    let add = |a: &V, b: &V| -> V { a.iter().zip(b).map(|(x, y)| x + y).collect() };
    let sub = |a: &V, b: &V| -> V { a.iter().zip(b).map(|(x, y)| x - y).collect() };
    let mut vertices = Vec::new();
    let mut edges: Vec<V> = c.clone();
    match f.kind() {
        FrameKind::Cuboid => {
            for m in 0..1usize << D {
                let mut v = o.clone();
                for (i, ci) in c.iter().enumerate() {
                    if m >> i & 1 == 1 {
                        v = add(&v, ci);
                    }
                }
                vertices.push(v);
            }
        }
        FrameKind::Tetrahedron => {
            vertices.push(o.clone());
            for ci in &c {
                vertices.push(add(&o, ci));
            }
            for i in 0..D {
                for j in i + 1..D {
                    edges.push(sub(&c[j], &c[i]));
                }
            }
        }
    }
    Exact { vertices, edges }
}

/// The smallest exponent among every number of the pair.
fn min_exponent<const D: usize>(frames: [&Frame<D>; 2], delta: f64) -> i32 {
    let mut e_min = decompose(delta).1;
    for f in frames {
        let nums = f.origin().into_iter().chain(f.components().into_iter().flatten()).chain(f.velocity());
        for x in nums {
            if x != 0.0 {
                e_min = e_min.min(decompose(x).1);
            }
        }
    }
    e_min
}

/// `(min, max)` of the projections of `points` on `n`.
fn project(points: &[V], n: &[BigInt]) -> (BigInt, BigInt) {
    let mut it = points.iter().map(|p| dot(p, n));
    let first = it.next().expect("a frame has vertices");
    it.fold((first.clone(), first), |(lo, hi), x| {
        if x < lo {
            (x, hi)
        } else if x > hi {
            (lo, x)
        } else {
            (lo, hi)
        }
    })
}

/// Largest coordinate magnitude or extent of the two frames' (swept)
/// boxes: the scale of the pair, positions included (inputs carry
/// round-off relative to their magnitude); the band is `1e-9` of it.
pub fn pair_scale<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    let mut s: f64 = 0.0;
    for f in [a, b] {
        let bx = f.aabb();
        for i in 0..D {
            s = s.max(bx.max[i] - bx.min[i]).max(bx.min[i].abs()).max(bx.max[i].abs());
        }
    }
    s
}

/// The exact open interval of instants in `(0, 1)` at which the interiors
/// of `a` grown by `delta` and `b` meet; `None` when there is none.
pub fn interval<const D: usize>(a: &Frame<D>, b: &Frame<D>, delta: f64) -> Option<Interval> {
    let e_min = min_exponent([a, b], delta);
    let (ea, eb) = (exact_frame(a, e_min), exact_frame(b, e_min));
    let w: V = (0..D).map(|i| scaled(b.velocity()[i], e_min) - scaled(a.velocity()[i], e_min)).collect();
    let delta_int = scaled(delta, e_min);
    let edges: Vec<&V> = ea.edges.iter().chain(&eb.edges).collect();
    let mut axes: Vec<V> = Vec::new();
    if D == 2 {
        axes.extend(edges.iter().map(|e| vec![-e[1].clone(), e[0].clone()]));
    } else {
        for i in 0..edges.len() {
            for j in i + 1..edges.len() {
                axes.push(cross(edges[i], edges[j]));
            }
        }
    }
    let unit = BigInt::from(1) << SQRT_BITS;
    let (mut lo, mut hi) = (Frac::int(0), Frac::int(1));
    for n in axes.iter().filter(|n| n.iter().any(|x| !x.is_zero())) {
        // `g` is `delta · |n|` at 2^SQRT_BITS, rounded towards less overlap
        // (down when growing, up when shrinking).
        let root = (dot(n, n) << (2 * SQRT_BITS)).sqrt();
        let g = if delta_int.is_negative() { &delta_int * (root + 1) } else { &delta_int * root };
        let (a0, a1) = project(&ea.vertices, n);
        let (b0, b1) = project(&eb.vertices, n);
        let (a0, a1, b0, b1) = (a0 * &unit - &g, a1 * &unit + &g, b0 * &unit, b1 * &unit);
        // Open overlap at t: b0 + t·k < a1 and a0 < b1 + t·k.
        let k = dot(n, &w) * &unit;
        let (upper, lower) = (a1 - b0, a0 - b1); // t·k < upper, t·k > lower
        match k.sign() {
            num_bigint::Sign::NoSign => {
                if !(upper.is_positive() && lower.is_negative()) {
                    return None;
                }
            }
            num_bigint::Sign::Plus => {
                tighten(&mut lo, &mut hi, Frac::new(lower, k.clone()), Frac::new(upper, k));
            }
            num_bigint::Sign::Minus => {
                tighten(&mut lo, &mut hi, Frac::new(upper, k.clone()), Frac::new(lower, k));
            }
        }
        if lo.cmp(&hi) != Ordering::Less {
            return None;
        }
    }
    Some(Interval { lo, hi })
}

fn tighten(lo: &mut Frac, hi: &mut Frac, l: Frac, h: Frac) {
    if l.cmp(lo) == Ordering::Greater {
        *lo = l;
    }
    if h.cmp(hi) == Ordering::Less {
        *hi = h;
    }
}
