//! Qualification: the paper's speed table (fmb-digest §9), measured side by
//! side in one run — FMB `overlaps`, FMB `intersect` (with its exact box), our
//! SAT, and parry (f64) — in ns per ordered pair, per case and type class, on
//! the paper's pair sets ("all": uniform ±100; "near": AABB-overlapping pairs
//! only) and on oriented-box pairs.
//!
//! Run: `cargo bench --bench qualify [-- --pairs N --samples K
//! --only TEXT --csv FILE]` (defaults 20000 pairs, 7 samples; each figure is
//! the median over samples, every sample timing all four methods back to
//! back on the same pairs; `--only` keeps the rows whose label contains
//! TEXT; `--csv` appends the rows to FILE as data, `QUALIFY_HEADER`).

use std::hint::black_box;
use std::time::Instant;

use fmbgrid::{Frame, FrameKind, intersect, overlaps, sat};

#[path = "support/args.rs"]
mod cli;
#[path = "support/pairs.rs"]
mod pairs;
#[path = "support/peer.rs"]
mod peer;
#[path = "support/results.rs"]
mod results;

/// Columns of `qualify.csv` after `machine,commit,date`: one row per method
/// and pair class, ns per ordered pair (median), and its ratio to parry's.
const QUALIFY_HEADER: &str = "bench,case,set,class,pairs,intersecting,engine,method,ns_per_pair,ratio_to_parry";

use pairs::{Set, obb_pairs, pairs};
use peer::{peer2, peer3};

/// Median ns per ordered pair of each method, timed in turn on the same pairs.
fn time_methods(n_ordered: usize, samples: usize, methods: &mut [&mut dyn FnMut() -> usize]) -> Vec<f64> {
    let mut times = vec![Vec::new(); methods.len()];
    for _ in 0..samples {
        for (m, f) in methods.iter_mut().enumerate() {
            let start = Instant::now();
            black_box(f());
            times[m].push(start.elapsed().as_nanos() as f64 / n_ordered as f64);
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

/// Runs `f` on every pair in both orders, counting hits.
fn count<const D: usize>(ps: &[(Frame<D>, Frame<D>)], f: impl Fn(&Frame<D>, &Frame<D>) -> bool) -> usize {
    ps.iter()
        .map(|(a, b)| usize::from(f(black_box(a), black_box(b))) + usize::from(f(black_box(b), black_box(a))))
        .sum()
}

struct Row {
    label: String,
    hit_rate: f64,
    fmb: f64,
    fmb_box: f64,
    sat: f64,
    parry: f64,
}

/// The CSV lines of a row (`QUALIFY_HEADER`).
fn csv_lines(r: &Row, pairs: usize, moving: bool) -> Vec<String> {
    let mut parts = r.label.split(" / ");
    let (case, set, class) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let peer = if moving { "cast_shapes" } else { "intersection_test" };
    [
        ("fmbgrid", "overlaps", r.fmb),
        ("fmbgrid", "intersect", r.fmb_box),
        ("fmbgrid", "sat", r.sat),
        ("parry", peer, r.parry),
    ]
    .iter()
    .map(|(engine, method, ns)| {
        format!("qualify,{case},{set},{class},{pairs},{:.4},{engine},{method},{ns:.2},{:.4}", r.hit_rate, ns / r.parry)
    })
    .collect()
}

fn print_row(r: &Row) {
    println!(
        "| {} | {:.0}% | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} |",
        r.label,
        100.0 * r.hit_rate,
        r.fmb,
        r.fmb_box,
        r.sat,
        r.parry,
        r.fmb / r.sat,
        r.fmb / r.parry,
        r.fmb_box / r.parry
    );
}

macro_rules! measure {
    ($peer:ident, $ps:expr, $moving:expr, $samples:expr, $label:expr, $csv:expr) => {{
        let ps = $ps;
        let n = 2 * ps.len();
        let hits = count(&ps, |a, b| overlaps(a, b));
        let sat_hits = count(&ps, |a, b| sat::overlaps(a, b));
        let shapes: Vec<_> = ps.iter().map(|(a, b)| ($peer::peer(a), $peer::peer(b))).collect();
        // Moving pairs: time of impact within the step; static ones: the boolean test.
        let parry = |a: &_, b: &_| if $moving { $peer::cast(a, b) } else { $peer::test(a, b) };
        let parry_hits: usize = shapes.iter().map(|(a, b)| usize::from(parry(a, b)) + usize::from(parry(b, a))).sum();
        let t = time_methods(
            n,
            $samples,
            &mut [
                &mut || count(&ps, |a, b| overlaps(a, b)),
                &mut || {
                    ps.iter()
                        .map(|(a, b)| {
                            usize::from(intersect(black_box(a), black_box(b)).is_some())
                                + usize::from(intersect(black_box(b), black_box(a)).is_some())
                        })
                        .sum()
                },
                &mut || count(&ps, |a, b| sat::overlaps(a, b)),
                &mut || {
                    shapes
                        .iter()
                        .map(|(a, b)| {
                            usize::from(parry(black_box(a), black_box(b)))
                                + usize::from(parry(black_box(b), black_box(a)))
                        })
                        .sum()
                },
            ],
        );
        if hits != sat_hits || hits.abs_diff(parry_hits) * 1000 > n {
            eprintln!("warning: {}: hits FMB {hits}, SAT {sat_hits}, parry {parry_hits} of {n}", $label);
        }
        let r =
            Row { label: $label, hit_rate: hits as f64 / n as f64, fmb: t[0], fmb_box: t[1], sat: t[2], parry: t[3] };
        print_row(&r);
        $csv.extend(csv_lines(&r, ps.len(), $moving));
    }};
}

fn main() {
    let args: Vec<String> = cli::args();
    let arg = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (n, samples) = (arg("--pairs", 20_000), arg("--samples", 7));
    let text = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let (only, csv_path) = (text("--only"), text("--csv"));
    let mut csv = Vec::new();
    use FrameKind::{Cuboid as C, Tetrahedron as T};
    let classes = [("CC", C, C), ("CT", C, T), ("TT", T, T)];

    println!("Pairs per class: {n} (each timed in both orders); median of {samples} samples; ns per ordered pair.\n");
    println!(
        "| case / set / class | intersecting | FMB overlaps | FMB intersect | SAT | parry | FMB/SAT | FMB/parry | intersect/parry |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let wanted = |label: &str| only.as_deref().is_none_or(|o| label.contains(o));
    for (case, moving) in [("3D static", false), ("3D moving", true), ("2D static", false), ("2D moving", true)] {
        for (set, set_name) in [(Set::Near, "near"), (Set::All, "all")] {
            for (i, &(cls, ka, kb)) in classes.iter().enumerate() {
                let label = format!("{case} / {set_name} / {cls}");
                if !wanted(&label) {
                    continue;
                }
                let seed = 1000 + i as u64;
                if case.starts_with("3D") {
                    measure!(peer3, pairs::<3>(seed, n, ka, kb, moving, set), moving, samples, label, csv);
                } else {
                    measure!(peer2, pairs::<2>(seed, n, ka, kb, moving, set), moving, samples, label, csv);
                }
            }
        }
    }
    for label in ["3D static / OBB near", "2D static / OBB near"] {
        if !wanted(label) {
            continue;
        }
        if label.starts_with("3D") {
            measure!(peer3, obb_pairs::<3>(7, n), false, samples, label.to_string(), csv);
        } else {
            measure!(peer2, obb_pairs::<2>(7, n), false, samples, label.to_string(), csv);
        }
    }
    results::report_lines(csv_path.as_deref(), QUALIFY_HEADER, &csv);
}
