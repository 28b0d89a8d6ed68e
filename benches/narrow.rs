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

/// One group: fmbgrid's query `ours` against parry's `theirs` on the same
/// pairs, both orders; each returns a number so that neither is optimised
/// away (a count, or a distance).
fn versus<const D: usize, P>(
    c: &mut Criterion,
    name: &str,
    ps: &[(Frame<D>, Frame<D>)],
    peer: impl Fn(&Frame<D>) -> P,
    ours: impl Fn(&Frame<D>, &Frame<D>) -> f64,
    theirs: impl Fn(&P, &P) -> f64,
) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(2 * N as u64));
    g.bench_function("fmbgrid", |b| {
        b.iter(|| ps.iter().map(|(x, y)| ours(black_box(x), black_box(y)) + ours(y, x)).sum::<f64>())
    });
    let shapes: Vec<_> = ps.iter().map(|(a, b)| (peer(a), peer(b))).collect();
    g.bench_function("parry", |b| {
        b.iter(|| shapes.iter().map(|(x, y)| theirs(black_box(x), black_box(y)) + theirs(y, x)).sum::<f64>())
    });
    g.finish();
}

/// 1 for `true`: a yes/no query as a count.
fn one(yes: bool) -> f64 {
    f64::from(u8::from(yes))
}

/// Penetration depth and normal (`query::penetration`) against parry's
/// `contact`; distance with closest points (`query::distance`) against
/// parry's `distance` (distance only); the first contact of moving pairs
/// (`query::first_contact`: instant, normal, point) against parry's
/// `cast_shapes` (time of impact, normals, witnesses). Same pairs, both
/// orders.
fn queries(c: &mut Criterion) {
    use FrameKind::{Cuboid, Tetrahedron};
    let finite = |d: f64| if d.is_finite() { d } else { 0.0 };
    let penetrating3 = |x: &Frame<3>, y: &Frame<3>| one(query::penetration(x, y).is_some());
    let penetrating2 = |x: &Frame<2>, y: &Frame<2>| one(query::penetration(x, y).is_some());
    for (name, ps) in [
        ("penetration_3d_obb", obb_pairs::<3>(7, N)),
        ("penetration_3d_near_cc", pairs::<3>(1, N, Cuboid, Cuboid, false, Set::Near)),
        ("penetration_3d_near_tt", pairs::<3>(2, N, Tetrahedron, Tetrahedron, false, Set::Near)),
    ] {
        versus(c, name, &ps, peer3::peer, penetrating3, |x, y| one(peer3::contact(x, y)));
    }
    for (name, ps) in [
        ("penetration_2d_near_cc", pairs::<2>(5, N, Cuboid, Cuboid, false, Set::Near)),
        ("penetration_2d_near_tt", pairs::<2>(6, N, Tetrahedron, Tetrahedron, false, Set::Near)),
    ] {
        versus(c, name, &ps, peer2::peer, penetrating2, |x, y| one(peer2::contact(x, y)));
    }
    for (name, ps) in [
        ("distance_3d_obb", obb_pairs::<3>(7, N)),
        ("distance_3d_all_cc", pairs::<3>(11, N, Cuboid, Cuboid, false, Set::All)),
        ("distance_3d_all_tt", pairs::<3>(12, N, Tetrahedron, Tetrahedron, false, Set::All)),
    ] {
        versus(c, name, &ps, peer3::peer, |x, y| query::distance(x, y).distance, |x, y| finite(peer3::distance(x, y)));
    }
    for (name, ps) in [
        ("distance_2d_all_cc", pairs::<2>(13, N, Cuboid, Cuboid, false, Set::All)),
        ("distance_2d_all_tt", pairs::<2>(14, N, Tetrahedron, Tetrahedron, false, Set::All)),
    ] {
        versus(c, name, &ps, peer2::peer, |x, y| query::distance(x, y).distance, |x, y| finite(peer2::distance(x, y)));
    }
    for (name, ps) in [
        ("first_contact_3d_near_cc", pairs::<3>(3, N, Cuboid, Cuboid, true, Set::Near)),
        ("first_contact_3d_near_tt", pairs::<3>(4, N, Tetrahedron, Tetrahedron, true, Set::Near)),
    ] {
        versus(
            c,
            name,
            &ps,
            peer3::peer,
            |x, y| one(query::first_contact(x, y).is_some()),
            |x, y| one(peer3::cast(x, y)),
        );
    }
}

/// Frames that turn within the step (`intersect_spinning`, tolerance
/// 1e-3 of a unit frame) against the same pairs translating only
/// (`intersect`), and against parry's `cast_shapes_nonlinear` with the
/// same motions (convex hulls of the frames): the paper's moving near
/// pairs of cuboids, each turning about its centre by 0.1 rad, or a whole
/// turn, about one of three axes.
fn spinning(c: &mut Criterion) {
    use fmbgrid::{Spin, intersect_spinning};
    let ps = pairs::<3>(5, N, FrameKind::Cuboid, FrameKind::Cuboid, true, Set::Near);
    let spin = |f: &Frame<3>, angle: f64, k: usize| {
        let centre = f.vertices().fold([0.0; 3], |p, v| std::array::from_fn(|i| p[i] + v[i] / 8.0));
        let axis = [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]][k % 3];
        Spin::<3>::new(centre, axis.map(|x| x * angle)).expect("valid spin")
    };
    let mut g = c.benchmark_group("spinning_3d_near_cc");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("translating (intersect)", |b| {
        b.iter(|| ps.iter().filter(|(x, y)| intersect(black_box(x), black_box(y)).is_some()).count())
    });
    use parry3d_f64::math::{Pose, Vector};
    use parry3d_f64::query::{NonlinearRigidMotion, cast_shapes_nonlinear};
    use parry3d_f64::shape::ConvexPolyhedron;
    let hull = |f: &Frame<3>| {
        let pts: Vec<Vector> = f.vertices().map(Vector::from_array).collect();
        ConvexPolyhedron::from_convex_hull(&pts).expect("a solid hull")
    };
    let hulls: Vec<_> = ps.iter().map(|(x, y)| (hull(x), hull(y))).collect();
    for (name, angle) in [("0.1 rad a step", 0.1), ("a whole turn a step", std::f64::consts::TAU)] {
        let spun: Vec<_> =
            ps.iter().enumerate().map(|(k, (x, y))| (spin(x, angle, k), spin(y, -angle, k + 1))).collect();
        g.bench_function(name, |b| {
            b.iter(|| {
                ps.iter()
                    .zip(&spun)
                    .filter(|((x, y), (sx, sy))| {
                        intersect_spinning(black_box(x), sx, black_box(y), sy, 1e-3).expect("valid").is_some()
                    })
                    .count()
            })
        });
        // parry's nonlinear cast on the same pairs and motions.
        let motion = |f: &Frame<3>, s: &Spin<3>| {
            let (p, v, w) = (s.pivot(), f.velocity(), s.rotation());
            NonlinearRigidMotion::new(
                Pose::IDENTITY,
                Vector::from_array(p),
                Vector::from_array(v),
                Vector::from_array(w),
            )
        };
        let motions: Vec<_> = ps.iter().zip(&spun).map(|((x, y), (sx, sy))| (motion(x, sx), motion(y, sy))).collect();
        g.bench_function(format!("{name}, parry cast_shapes_nonlinear"), |b| {
            b.iter(|| {
                hulls
                    .iter()
                    .zip(&motions)
                    .filter(|((x, y), (mx, my))| {
                        matches!(cast_shapes_nonlinear(mx, black_box(x), my, black_box(y), 0.0, 1.0, true), Ok(Some(_)))
                    })
                    .count()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, static_3d, moving_3d, planar, queries, spinning);
criterion_main!(benches);
