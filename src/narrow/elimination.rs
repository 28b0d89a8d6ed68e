//! Fourier–Motzkin elimination over a box, the solver at the heart of FMB.
//!
//! The system is a set of strict rows `a · z < b` over variables `z` that also
//! lie in an open box `lo < z < hi` (initially `(0, 1)` for every variable).
//! Strict rows encode the touching policy: the system is feasible exactly when
//! the intersection has a non-empty interior.
//!
//! Compared with the paper's C code, three changes make it both exact and fast:
//! * **Bounds are not rows.** A row left with one variable tightens that
//!   variable's bound instead of being stored; eliminating `x` pairs each row
//!   with `x`'s opposite bound (`|P| + |N|` rows) and with each other (`|P|·|N|`).
//! * **Rows are judged against the box when they are made**: a row that no
//!   point of the box violates is dropped (exactly), and a row that no point
//!   satisfies ends the test at once (the paper's condition (41), generalised
//!   to the current bounds).
//! * **Tolerances are relative.** Each row carries `s`, the magnitude of the
//!   terms it was computed from; "infeasible" means `b - min ≤ EPS·s`, so the
//!   verdict does not change when every coordinate is scaled or translated.
//!
//! Buffer sizes are proven, not observed: a system of `n` rows yields at most
//! `|P|·|N| + |P| + |N| + |Z| ≤ ⌊n²/4⌋ + n` rows, so the at most 7 initial rows
//! become at most 19, then at most 109 (only the 3D moving case needs three
//! eliminations; the last one produces bounds only).

use arrayvec::ArrayVec;

/// Most variables of any system: `X₀, X₁, X₂, t`.
pub(crate) const MAX_VARS: usize = 4;

/// Most initial rows: a cuboid `A` (2·3 rows) against a tetrahedron `B` (1 row).
pub(crate) const CAP_INITIAL: usize = 7;
/// `⌊7²/4⌋ + 7`: rows after the first elimination.
pub(crate) const CAP_FIRST: usize = CAP_INITIAL * CAP_INITIAL / 4 + CAP_INITIAL;
/// `⌊19²/4⌋ + 19`: rows after the second elimination.
pub(crate) const CAP_SECOND: usize = CAP_FIRST * CAP_FIRST / 4 + CAP_FIRST;

/// Relative tolerance of the touching policy: configurations within about
/// `EPS` (relative to the magnitudes involved) of touching count as touching,
/// i.e. not colliding. Far above `f64` round-off, far below the 1e-9 band in
/// which an answer is allowed to go either way.
pub(crate) const EPS: f64 = 1e-12;

/// One strict inequality `a · z < b`; `s` is the magnitude of the terms it
/// was computed from, the scale of its round-off.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub a: [f64; MAX_VARS],
    pub b: f64,
    pub s: f64,
}

/// The open box `lo < z < hi`; `*_s` are the round-off scales of each bound.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub lo: [f64; MAX_VARS],
    pub hi: [f64; MAX_VARS],
    lo_s: [f64; MAX_VARS],
    hi_s: [f64; MAX_VARS],
}

impl Bounds {
    /// The unit box `(0, 1)` on every variable.
    pub const UNIT: Bounds =
        Bounds { lo: [0.0; MAX_VARS], hi: [1.0; MAX_VARS], lo_s: [1.0; MAX_VARS], hi_s: [1.0; MAX_VARS] };
}

/// The system has no solution: the frames do not collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Infeasible;

/// What [`admit`] made of a row.
enum Admitted {
    /// Kept: it still constrains two or more variables.
    Keep(Row),
    /// Dropped (redundant in the box) or folded into a bound.
    Absorbed,
}

/// Judges `row` against the box over the variables `first..V` (the others are
/// eliminated and their coefficients ignored).
#[inline(always)]
fn admit<const V: usize>(mut row: Row, first: usize, bounds: &mut Bounds) -> Result<Admitted, Infeasible> {
    let tiny = EPS * row.s;
    let (mut min, mut max) = (0.0, 0.0);
    let (mut count, mut var) = (0, 0);
    for j in first..V {
        let a = row.a[j];
        if a.abs() <= tiny {
            // Negligible: drop it, loosening the row so no solution is lost.
            row.b += a.abs() * bounds.lo[j].abs().max(bounds.hi[j].abs());
            row.a[j] = 0.0;
        } else if a > 0.0 {
            min += a * bounds.lo[j];
            max += a * bounds.hi[j];
            count += 1;
            var = j;
        } else {
            min += a * bounds.hi[j];
            max += a * bounds.lo[j];
            count += 1;
            var = j;
        }
    }
    if row.b - min <= tiny {
        return Err(Infeasible);
    }
    if max <= row.b {
        return Ok(Admitted::Absorbed);
    }
    if count >= 2 {
        return Ok(Admitted::Keep(row));
    }
    // One variable left: `a·z < b` is a bound on it.
    let a = row.a[var];
    let (v, s) = (row.b / a, row.s / a.abs());
    if a > 0.0 {
        if v < bounds.hi[var] {
            bounds.hi[var] = v;
            bounds.hi_s[var] = s;
        }
    } else if v > bounds.lo[var] {
        bounds.lo[var] = v;
        bounds.lo_s[var] = s;
    }
    if bounds.hi[var] - bounds.lo[var] <= EPS * (bounds.hi_s[var] + bounds.lo_s[var]) {
        return Err(Infeasible);
    }
    Ok(Admitted::Absorbed)
}

/// Admits `row` into `out`; `out` has room by the counting argument of the
/// module docs.
#[inline(always)]
fn admit_into<const V: usize, const N: usize>(
    row: Row,
    first: usize,
    bounds: &mut Bounds,
    out: &mut ArrayVec<Row, N>,
) -> Result<(), Infeasible> {
    if let Admitted::Keep(row) = admit::<V>(row, first, bounds)? {
        // Cannot overflow: N is the proven bound for this stage (module docs).
        out.push(row);
    }
    Ok(())
}

/// Admits a freshly built row of the initial system.
#[inline(always)]
pub(crate) fn admit_initial<const V: usize>(
    row: Row,
    bounds: &mut Bounds,
    out: &mut ArrayVec<Row, CAP_INITIAL>,
) -> Result<(), Infeasible> {
    admit_into::<V, CAP_INITIAL>(row, 0, bounds, out)
}

/// Eliminates variable `k` from `rows`, writing the projected system on
/// variables `k+1..V` to `out`.
#[inline(always)]
fn eliminate<const V: usize, const N: usize>(
    k: usize,
    rows: &[Row],
    bounds: &mut Bounds,
    out: &mut ArrayVec<Row, N>,
) -> Result<(), Infeasible> {
    let next = k + 1;
    let (lo, hi) = (bounds.lo[k], bounds.hi[k]);
    // Each row against the opposite bound of `x_k` (and the rows free of `x_k`).
    for r in rows {
        let a = r.a[k];
        let mut row = *r;
        row.a[k] = 0.0;
        row.b -= a * if a > 0.0 { lo } else { hi };
        admit_into::<V, N>(row, next, bounds, out)?;
    }
    // Each upper bound on `x_k` against each lower bound.
    for p in rows.iter().filter(|r| r.a[k] > 0.0) {
        for q in rows.iter().filter(|r| r.a[k] < 0.0) {
            let (wp, wq) = (-q.a[k], p.a[k]);
            let mut row = Row { a: [0.0; MAX_VARS], b: wp * p.b + wq * q.b, s: wp * p.s + wq * q.s };
            for j in next..V {
                row.a[j] = wp * p.a[j] + wq * q.a[j];
            }
            admit_into::<V, N>(row, next, bounds, out)?;
        }
    }
    Ok(())
}

/// Decides the system `initial` (already admitted against `bounds`) by
/// eliminating `X₀ .. X_{V-2}`; on success `bounds` holds the exact range of
/// the last variable.
pub(crate) fn solve<const V: usize>(initial: &[Row], bounds: &mut Bounds) -> Result<(), Infeasible> {
    let mut first = ArrayVec::<Row, CAP_FIRST>::new();
    eliminate::<V, CAP_FIRST>(0, initial, bounds, &mut first)?;
    if V == 2 {
        debug_assert!(first.is_empty());
        return Ok(());
    }
    let mut second = ArrayVec::<Row, CAP_SECOND>::new();
    eliminate::<V, CAP_SECOND>(1, &first, bounds, &mut second)?;
    if V == 3 {
        debug_assert!(second.is_empty());
        return Ok(());
    }
    // The last elimination leaves one variable: every row becomes a bound.
    let mut last = ArrayVec::<Row, 0>::new();
    eliminate::<V, 0>(2, &second, bounds, &mut last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: [f64; 2], b: f64) -> Row {
        Row { a: [a[0], a[1], 0.0, 0.0], b, s: a[0].abs() + a[1].abs() + b.abs() }
    }

    fn run(rows: &[Row]) -> Result<Bounds, Infeasible> {
        let mut bounds = Bounds::UNIT;
        let mut init = ArrayVec::new();
        for r in rows {
            admit_initial::<2>(*r, &mut bounds, &mut init)?;
        }
        solve::<2>(&init, &mut bounds)?;
        Ok(bounds)
    }

    #[test]
    fn projects_a_triangle_onto_its_last_variable() {
        // x + y < 1 and x > 0.5  =>  y < 0.5
        let b = run(&[row([1.0, 1.0], 1.0), row([-1.0, 0.0], -0.5)]).unwrap();
        assert!((b.hi[1] - 0.5).abs() < 1e-15 && b.lo[1] == 0.0);
    }

    #[test]
    fn touching_is_infeasible_and_overlap_is_not() {
        // x + y < 1 and x + y > 1: a shared edge only.
        assert_eq!(run(&[row([1.0, 1.0], 1.0), row([-1.0, -1.0], -1.0)]).err(), Some(Infeasible));
        assert!(run(&[row([1.0, 1.0], 1.0), row([-1.0, -1.0], -0.999)]).is_ok());
    }

    #[test]
    fn capacities_follow_the_counting_bound() {
        assert_eq!(CAP_FIRST, 19);
        assert_eq!(CAP_SECOND, 109);
    }
}
