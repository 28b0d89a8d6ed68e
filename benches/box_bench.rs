//! Research harness for the exact box of `intersect`: seeded random
//! intersecting pairs per class, either run through one function (for
//! `valgrind --tool=callgrind --toggle-collect='*box_bench*run_mode*'`,
//! instructions per pair) or checked against the full vertex enumeration.
//!
//! `cargo bench --bench box_bench -- MODE CLASS N [SEED] [--csv FILE]`
//! * MODE: `interval` (`overlap_interval`), `intersect`, `enumerated`
//!   (`intersect` with the box of the full enumeration), `sat` (the
//!   separating-axis oracle's `contact_interval`), `none` (the loop
//!   alone), `check` (new against enumerated, both orders bit for bit),
//!   `digest` (a hash of every bit of `intersect`'s answers, to compare
//!   two builds);
//! * CLASS: `{2,3}{s,m,f}-{cc,tt,ct}` (oriented boxes / simplices of the
//!   world's scenes, static, moving by velocity/60 with velocities ±3 or,
//!   `f`, ±52 units/s as the fast scenes'), `p{2,3}{s,m}` (the paper's ±100
//!   frames, AABB-overlapping pairs, mixed kinds), or `all` (check mode
//!   only); the suffix `-miss` takes pairs whose boxes overlap but which
//!   never intersect (FMB's rejections) instead of intersecting ones;
//! * `--csv FILE` appends one row per class to FILE (columns
//!   `BOX_HEADER`): the wall time per pair of the timed modes (one pass,
//!   the pairs' generation excluded), or the check's figures.

use std::hint::black_box;

use fmbgrid::narrow::{box_fast_path, intersect_enumerated};
use fmbgrid::{Frame, FrameKind, intersect, overlap_interval};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "support/args.rs"]
mod cli;
#[path = "support/results.rs"]
mod results;
// Only its random rotation: the same as the world scenes'.
#[path = "support/scenes.rs"]
mod scenes;

/// Columns of `box_bench.csv` after `machine,commit,date`: one row per mode
/// and class; `ns_per_pair` for the timed modes, the last three for `check`.
const BOX_HEADER: &str = "bench,mode,class,pairs,seed,ns_per_pair,fast_path_share,max_rel_diff,asymmetric";

const SPEED: f64 = 3.0;
/// Fast movers (class `{2,3}f-…`): velocity components uniform in ±52
/// units/s (σ = 30, as the `uniform-fast` scene's), about half a box a step.
const FAST_SPEED: f64 = 52.0;
const DT: f64 = 1.0 / 60.0;

/// Components of a shape like the world scenes': 3D oriented box (half
/// extents 0.5–1.5) or its corner simplex; 2D sheared parallelogram or
/// triangle (sides 1–3, 45°–135°).
fn components<const D: usize>(rng: &mut ChaCha8Rng) -> [[f64; D]; D] {
    let mut c = [[0.0; D]; D];
    if D == 3 {
        let r = scenes::random_rotation(rng);
        for i in 0..3 {
            let len = 2.0 * rng.random_range(0.5..1.5);
            for k in 0..3 {
                c[i][k] = len * r[i][k];
            }
        }
    } else {
        let phi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        let shear: f64 = rng.random_range(std::f64::consts::FRAC_PI_4..3.0 * std::f64::consts::FRAC_PI_4);
        let (l0, l1) = (rng.random_range(1.0..3.0), rng.random_range(1.0..3.0));
        c[0][0] = l0 * phi.cos();
        c[0][1] = l0 * phi.sin();
        c[1][0] = l1 * (phi + shear).cos();
        c[1][1] = l1 * (phi + shear).sin();
    }
    c
}

fn shape<const D: usize>(rng: &mut ChaCha8Rng, kind: FrameKind, spread: f64, speed: Option<f64>) -> Frame<D> {
    let center: [f64; D] = std::array::from_fn(|_| rng.random_range(-spread..spread));
    let c = components::<D>(rng);
    let weight = if kind == FrameKind::Cuboid { 0.5 } else { 1.0 / (D as f64 + 1.0) };
    let origin = std::array::from_fn(|k| center[k] - weight * (0..D).map(|i| c[i][k]).sum::<f64>());
    let f = Frame::new(kind, origin, c).expect("well-formed shape");
    match speed {
        Some(v) => f.with_velocity(std::array::from_fn(|_| rng.random_range(-v..v) * DT)).unwrap(),
        None => f,
    }
}

fn paper<const D: usize>(rng: &mut ChaCha8Rng, moving: bool) -> Frame<D> {
    loop {
        let kind = if rng.random::<bool>() { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
        let mut v = || std::array::from_fn(|_| rng.random_range(-100.0..100.0));
        let (o, c, vel) = (v(), std::array::from_fn(|_| v()), v());
        if let Ok(f) = Frame::new(kind, o, c) {
            return if moving { f.with_velocity(vel).unwrap() } else { f };
        }
    }
}

/// `n` intersecting pairs of `class`; with the suffix `-miss`, pairs
/// whose (swept) boxes overlap but which never intersect: FMB's rejections.
fn pairs<const D: usize>(class: &str, n: usize, seed: u64) -> Vec<(Frame<D>, Frame<D>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let motion = class.as_bytes()[if class.starts_with('p') { 2 } else { 1 }];
    let moving = motion != b's';
    let speed = match motion {
        b'm' => Some(SPEED),
        b'f' => Some(FAST_SPEED),
        _ => None,
    };
    let miss = class.ends_with("-miss");
    let kinds = |k: u8| if k == b'c' { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (a, b) = if class.starts_with('p') {
            (paper::<D>(&mut rng, moving), paper::<D>(&mut rng, moving))
        } else {
            let k = &class.as_bytes()[3..5];
            let spread = if D == 3 { 2.0 } else { 1.75 };
            (shape::<D>(&mut rng, kinds(k[0]), spread, speed), shape::<D>(&mut rng, kinds(k[1]), spread, speed))
        };
        let kept = if miss {
            a.aabb().intersects(&b.aabb()) && intersect_enumerated(&a, &b).is_none()
        } else {
            intersect_enumerated(&a, &b).is_some()
        };
        if kept {
            out.push((a, b));
        }
    }
    out
}

#[inline(never)]
fn run_mode<const D: usize>(mode: &str, ps: &[(Frame<D>, Frame<D>)]) -> f64 {
    let mut acc = 0.0;
    match mode {
        "interval" => {
            for (a, b) in ps {
                acc += overlap_interval(black_box(a), black_box(b)).map_or(0.0, |t| t[0]);
            }
        }
        "intersect" => {
            for (a, b) in ps {
                acc += intersect(black_box(a), black_box(b)).map_or(0.0, |h| h.aabb.min[0]);
            }
        }
        "enumerated" => {
            for (a, b) in ps {
                acc += intersect_enumerated(black_box(a), black_box(b)).map_or(0.0, |h| h.aabb.min[0]);
            }
        }
        "sat" => {
            for (a, b) in ps {
                acc += fmbgrid::sat::contact_interval(black_box(a), black_box(b)).map_or(0.0, |t| t[0]);
            }
        }
        "digest" => {
            // FNV-1a over every bit of every answer: equal digests of two
            // builds mean the same answers, bit for bit.
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for (a, b) in ps {
                let hit = intersect(a, b);
                for x in std::iter::once(u64::from(hit.is_some())).chain(bits(&hit)) {
                    h = (h ^ x).wrapping_mul(0x0100_0000_01b3);
                }
            }
            println!("digest {h:016x}");
        }
        "none" => {
            for (a, b) in ps {
                acc += black_box(a).origin()[0] + black_box(b).origin()[0];
            }
        }
        _ => panic!("unknown mode {mode}"),
    }
    acc
}

fn bits<const D: usize>(h: &Option<fmbgrid::Intersection<D>>) -> Vec<u64> {
    h.iter().flat_map(|h| h.aabb.min.iter().chain(&h.aabb.max).chain(&h.time).map(|x| x.to_bits())).collect()
}

/// New box against the enumeration: largest difference relative to the
/// frames' scale, and the number of asymmetric results (must be 0).
fn check<const D: usize>(class: &str, ps: &[(Frame<D>, Frame<D>)]) -> (f64, usize, f64) {
    let (mut worst, mut asym, mut worst_at, mut fast) = (0.0f64, 0usize, 0usize, 0usize);
    for (idx, (a, b)) in ps.iter().enumerate() {
        fast += usize::from(box_fast_path(a, b));
        let (new, back, reference) = (intersect(a, b), intersect(b, a), intersect_enumerated(a, b));
        if bits(&new) != bits(&back) {
            asym += 1;
        }
        let (Some(new), Some(reference)) = (new, reference) else {
            panic!("{class} #{idx}: one method misses the intersection")
        };
        assert_eq!(new.time, reference.time);
        let u = a.aabb().union(&b.aabb());
        let scale = (0..D).map(|k| (u.max[k] - u.min[k]).max(u.max[k].abs()).max(u.min[k].abs())).fold(0.0, f64::max);
        for k in 0..D {
            let d =
                (new.aabb.min[k] - reference.aabb.min[k]).abs().max((new.aabb.max[k] - reference.aabb.max[k]).abs());
            if d / scale > worst {
                worst = d / scale;
                worst_at = idx;
            }
        }
    }
    if worst > 1e-9 {
        let (a, b) = &ps[worst_at];
        eprintln!(
            "{class}: worst pair #{worst_at}: {a:?}\n{b:?}\nnew {:?}\nref {:?}",
            intersect(a, b),
            intersect_enumerated(a, b)
        );
    }
    #[cfg(feature = "box-stats")]
    {
        let piv = fmbgrid::narrow::take_box_pivots();
        println!("{class}: pivots per pair {:.2}", piv as f64 / ps.len() as f64 / 3.0);
    }
    (worst, asym, fast as f64 / ps.len() as f64)
}

fn class_dim(class: &str) -> u8 {
    class.as_bytes()[if class.starts_with('p') { 1 } else { 0 }]
}

const CLASSES: [&str; 16] = [
    "3s-cc", "3m-cc", "3s-tt", "3m-tt", "3s-ct", "3m-ct", "2s-cc", "2m-cc", "2s-tt", "2m-tt", "2s-ct", "2m-ct", "p3s",
    "p3m", "p2s", "p2m",
];

/// `run_mode` timed once over the pairs: (its result, ns per pair).
fn timed<const D: usize>(mode: &str, ps: &[(Frame<D>, Frame<D>)]) -> (f64, f64) {
    let start = std::time::Instant::now();
    let acc = run_mode(mode, ps);
    (acc, start.elapsed().as_nanos() as f64 / ps.len().max(1) as f64)
}

fn main() {
    let mut args: Vec<String> = cli::args();
    let csv_path = cli::value(&args, "--csv");
    if let Some(i) = args.iter().position(|a| a == "--csv") {
        args.drain(i..(i + 2).min(args.len()));
    }
    let mode = args.first().map_or("check", String::as_str);
    let class = args.get(1).map_or("all", String::as_str);
    let n: usize = args.get(2).map_or(20_000, |s| s.parse().expect("N"));
    let seed: u64 = args.get(3).map_or(1, |s| s.parse().expect("SEED"));
    let classes: Vec<&str> = if class == "all" { CLASSES.to_vec() } else { vec![class] };
    let mut csv = Vec::new();
    for class in classes {
        let class_seed =
            seed.wrapping_mul(1000).wrapping_add(CLASSES.iter().position(|c| *c == class).unwrap_or(99) as u64);
        let checked = match (mode, class_dim(class)) {
            ("check", b'3') => Some(check(class, &pairs::<3>(class, n, class_seed))),
            ("check", _) => Some(check(class, &pairs::<2>(class, n, class_seed))),
            _ => None,
        };
        if let Some((worst, asym, fast)) = checked {
            println!("{class}: {n} pairs, fast path {:.1}%, max rel diff {worst:.3e}, asymmetric {asym}", 100.0 * fast);
            csv.push(format!("box_bench,check,{class},{n},{seed},,{fast:.4},{worst:.3e},{asym}"));
            continue;
        }
        let (acc, ns) = match class_dim(class) {
            b'3' => timed(mode, &pairs::<3>(class, n, class_seed)),
            _ => timed(mode, &pairs::<2>(class, n, class_seed)),
        };
        println!("{acc}");
        csv.push(format!("box_bench,{mode},{class},{n},{seed},{ns:.1},,,"));
    }
    results::report_lines(csv_path.as_deref(), BOX_HEADER, &csv);
}
