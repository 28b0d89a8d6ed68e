//! Narrow-phase benchmarks: FMB `overlaps` and `intersect`, our SAT and parry
//! on the same pairs, per case; `query::penetration` against parry's
//! `contact` and `query::distance` against parry's `distance`. Each iteration tests 1024 pairs in both
//! orders; criterion reports time per iteration and throughput in pairs.
//!
//! `cargo bench --bench narrow` (add a filter, e.g. `-- 3d_static`, to run one group).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fmbgrid::{Frame, FrameKind, intersect, overlaps, query, sat};

#[path = "support/pairs.rs"]
mod pairs;
#[path = "support/peer.rs"]
mod peer;

use pairs::{Set, obb_pairs, pairs};
use peer::{peer2, peer3};

const N: usize = 1024;

fn both<const D: usize>(ps: &[(Frame<D>, Frame<D>)], f: impl Fn(&Frame<D>, &Frame<D>) -> bool) -> usize {
    ps.iter()
        .map(|(a, b)| usize::from(f(black_box(a), black_box(b))) + usize::from(f(black_box(b), black_box(a))))
        .sum()
}

fn fmb_and_sat<const D: usize>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    ps: &[(Frame<D>, Frame<D>)],
) {
    g.bench_function("fmb_overlaps", |b| b.iter(|| both(ps, overlaps)));
    g.bench_function("fmb_intersect", |b| b.iter(|| both(ps, |x, y| intersect(x, y).is_some())));
    g.bench_function("sat", |b| b.iter(|| both(ps, sat::overlaps)));
}

/// One group per pair set: FMB and SAT, then parry's `query` in both
/// orders on the same pairs, turned into parry peers by `peer` beforehand
/// (outside the timing).
fn with_parry<const D: usize, P>(
    c: &mut Criterion,
    sets: &[(&str, Vec<(Frame<D>, Frame<D>)>)],
    peer: impl Fn(&Frame<D>) -> P,
    query: impl Fn(&P, &P) -> bool,
) {
    for (name, ps) in sets {
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(2 * N as u64));
        fmb_and_sat(&mut g, ps);
        let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer(a), peer(b))).collect();
        g.bench_function("parry", |b| {
            b.iter(|| shapes.iter().filter(|(x, y)| query(black_box(x), black_box(y)) | query(y, x)).count())
        });
        g.finish();
    }
}

fn static_3d(c: &mut Criterion) {
    use FrameKind::{Cuboid, Tetrahedron};
    let sets = [
        ("3d_static_obb", obb_pairs::<3>(7, N)),
        ("3d_static_near_cc", pairs::<3>(1, N, Cuboid, Cuboid, false, Set::Near)),
        ("3d_static_near_tt", pairs::<3>(2, N, Tetrahedron, Tetrahedron, false, Set::Near)),
    ];
    with_parry(c, &sets, peer3::peer, peer3::test);
}

fn moving_3d(c: &mut Criterion) {
    use FrameKind::{Cuboid, Tetrahedron};
    let sets = [
        ("3d_moving_near_cc", pairs::<3>(3, N, Cuboid, Cuboid, true, Set::Near)),
        ("3d_moving_near_tt", pairs::<3>(4, N, Tetrahedron, Tetrahedron, true, Set::Near)),
    ];
    with_parry(c, &sets, peer3::peer, peer3::cast);
}

fn planar(c: &mut Criterion) {
    use FrameKind::{Cuboid, Tetrahedron};
    let sets = [
        ("2d_static_near_cc", pairs::<2>(5, N, Cuboid, Cuboid, false, Set::Near)),
        ("2d_static_near_tt", pairs::<2>(6, N, Tetrahedron, Tetrahedron, false, Set::Near)),
        ("2d_moving_near_cc", pairs::<2>(8, N, Cuboid, Cuboid, true, Set::Near)),
    ];
    for (name, ps) in &sets {
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(2 * N as u64));
        fmb_and_sat(&mut g, ps);
        if !name.contains("moving") {
            let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer2::peer(a), peer2::peer(b))).collect();
            g.bench_function("parry", |b| {
                b.iter(|| {
                    shapes.iter().filter(|(x, y)| peer2::test(black_box(x), black_box(y)) | peer2::test(y, x)).count()
                })
            });
        }
        g.finish();
    }
}

/// Penetration depth and normal (`query::penetration`) against parry's
/// `contact` on the same static pairs, both orders.
fn penetration(c: &mut Criterion) {
    use FrameKind::{Cuboid, Tetrahedron};
    let deep = |(a, b): &(Frame<3>, Frame<3>)| query::penetration(a, b).is_some();
    let sets3 = [
        ("penetration_3d_obb", obb_pairs::<3>(7, N)),
        ("penetration_3d_near_cc", pairs::<3>(1, N, Cuboid, Cuboid, false, Set::Near)),
        ("penetration_3d_near_tt", pairs::<3>(2, N, Tetrahedron, Tetrahedron, false, Set::Near)),
    ];
    for (name, ps) in &sets3 {
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(2 * N as u64));
        g.bench_function("fmbgrid", |b| b.iter(|| both(ps, |x, y| query::penetration(x, y).is_some())));
        let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer3::peer(a), peer3::peer(b))).collect();
        g.bench_function("parry", |b| {
            b.iter(|| {
                shapes.iter().filter(|(x, y)| peer3::contact(black_box(x), black_box(y)) | peer3::contact(y, x)).count()
            })
        });
        g.finish();
        // Both engines see the same overlapping pairs.
        let theirs = shapes.iter().filter(|(x, y)| peer3::contact(x, y)).count();
        println!("{name}: {} of {N} pairs interpenetrate (parry: {theirs})", ps.iter().filter(|p| deep(p)).count());
    }
    let sets2 = [
        ("penetration_2d_near_cc", pairs::<2>(5, N, Cuboid, Cuboid, false, Set::Near)),
        ("penetration_2d_near_tt", pairs::<2>(6, N, Tetrahedron, Tetrahedron, false, Set::Near)),
    ];
    for (name, ps) in &sets2 {
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(2 * N as u64));
        g.bench_function("fmbgrid", |b| b.iter(|| both(ps, |x, y| query::penetration(x, y).is_some())));
        let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer2::peer(a), peer2::peer(b))).collect();
        g.bench_function("parry", |b| {
            b.iter(|| {
                shapes.iter().filter(|(x, y)| peer2::contact(black_box(x), black_box(y)) | peer2::contact(y, x)).count()
            })
        });
        g.finish();
    }
}

/// Distance with closest points (`query::distance`) against parry's
/// `distance` on the same static pairs (apart and overlapping), both orders.
fn distance(c: &mut Criterion) {
    use FrameKind::{Cuboid, Tetrahedron};
    let sum = |d: f64| if d.is_finite() { d } else { 0.0 };
    let sets3 = [
        ("distance_3d_obb", obb_pairs::<3>(7, N)),
        ("distance_3d_all_cc", pairs::<3>(11, N, Cuboid, Cuboid, false, Set::All)),
        ("distance_3d_all_tt", pairs::<3>(12, N, Tetrahedron, Tetrahedron, false, Set::All)),
    ];
    for (name, ps) in &sets3 {
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(2 * N as u64));
        g.bench_function("fmbgrid", |b| {
            b.iter(|| {
                ps.iter()
                    .map(|(x, y)| query::distance(black_box(x), black_box(y)).distance + query::distance(y, x).distance)
                    .sum::<f64>()
            })
        });
        let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer3::peer(a), peer3::peer(b))).collect();
        g.bench_function("parry", |b| {
            b.iter(|| {
                shapes
                    .iter()
                    .map(|(x, y)| sum(peer3::distance(black_box(x), black_box(y))) + sum(peer3::distance(y, x)))
                    .sum::<f64>()
            })
        });
        g.finish();
    }
    let sets2 = [
        ("distance_2d_all_cc", pairs::<2>(13, N, Cuboid, Cuboid, false, Set::All)),
        ("distance_2d_all_tt", pairs::<2>(14, N, Tetrahedron, Tetrahedron, false, Set::All)),
    ];
    for (name, ps) in &sets2 {
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(2 * N as u64));
        g.bench_function("fmbgrid", |b| {
            b.iter(|| {
                ps.iter()
                    .map(|(x, y)| query::distance(black_box(x), black_box(y)).distance + query::distance(y, x).distance)
                    .sum::<f64>()
            })
        });
        let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer2::peer(a), peer2::peer(b))).collect();
        g.bench_function("parry", |b| {
            b.iter(|| {
                shapes
                    .iter()
                    .map(|(x, y)| sum(peer2::distance(black_box(x), black_box(y))) + sum(peer2::distance(y, x)))
                    .sum::<f64>()
            })
        });
        g.finish();
    }
}

/// First contact of moving pairs (`query::first_contact`: instant, normal,
/// point) against parry's `cast_shapes` (time of impact, normals, witness
/// points), same pairs, both orders.
fn first_contact(c: &mut Criterion) {
    use FrameKind::{Cuboid, Tetrahedron};
    let sets = [
        ("first_contact_3d_near_cc", pairs::<3>(3, N, Cuboid, Cuboid, true, Set::Near)),
        ("first_contact_3d_near_tt", pairs::<3>(4, N, Tetrahedron, Tetrahedron, true, Set::Near)),
    ];
    for (name, ps) in &sets {
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(2 * N as u64));
        g.bench_function("fmbgrid", |b| b.iter(|| both(ps, |x, y| query::first_contact(x, y).is_some())));
        let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer3::peer(a), peer3::peer(b))).collect();
        g.bench_function("parry", |b| {
            b.iter(|| {
                shapes.iter().filter(|(x, y)| peer3::cast(black_box(x), black_box(y)) | peer3::cast(y, x)).count()
            })
        });
        g.finish();
    }
}

criterion_group!(benches, static_3d, moving_3d, planar, penetration, distance, first_contact);
criterion_main!(benches);
