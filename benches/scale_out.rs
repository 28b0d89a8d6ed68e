//! What splitting a uniform world among ranks costs in ghosts, computed
//! from the split itself (no processes): `N` boxes of the uniform
//! benchmark scene (88 units³ per box, half extents 0.5–1.5, random
//! orientations, velocity components in −3..3, `dt` = 1/60), split by
//! `fmbgrid::distributed::Regions` for 1 to 64 ranks; for each, the ghost
//! frames (a frame's copy on each other rank whose region its swept box
//! reaches), the ghost fraction, and the bytes a step sends (a one-frame
//! body's ghost parcel: 55 words of 8 bytes in 3D).
//!
//! `cargo bench --bench scale_out -- [N] [--csv FILE]` (default
//! 10,000,000; `--csv` appends one row per rank count to FILE, columns
//! `SCALE_OUT_HEADER`).
//!
//! `cargo bench --bench scale_out -- step SCENE.toml [STEPS] [RANKS]
//! [world|dist|both]`: what the distributed world costs over a plain
//! `World` on the same scene, in one process. Both are built from the
//! scene; then each step is run on the plain world and on the distributed
//! one (`RANKS` thread ranks, default 1), side by side (which goes first
//! alternating), and the median ms per step of each and their ratio
//! printed (the first step, which splits space, left out). `world` or
//! `dist` steps only one of them (for instruction counts under callgrind:
//! the warm step is the difference of two step counts). Run with
//! `RAYON_NUM_THREADS=1` for one thread a rank.

use fmbgrid::Aabb;
use fmbgrid::distributed::Regions;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "support/args.rs"]
mod cli;
#[path = "support/results.rs"]
mod results;

/// Columns of `scale_out.csv` after `machine,commit,date`: one row per rank
/// count (computed from the split, no timing).
const SCALE_OUT_HEADER: &str =
    "bench,n,ranks,frames_per_rank,ghost_frames,ghost_fraction,most_received_share,ghost_mb_per_step,mb_per_rank";

/// Words of a one-frame 3D body's parcel (see `distributed/parcel.rs`):
/// 6 header words, velocity 3, angular velocity 3, pose 12, then per
/// frame 1 index word, two frames of 12 and a box of 6.
const GHOST_BYTES: usize = 8 * (6 + 3 + 3 + 12 + 1 + 24 + 6);

fn main() {
    let args = cli::args();
    if args.first().map(String::as_str) == Some("step") {
        #[cfg(feature = "mesh")]
        return step_mode(&args[1..]);
        #[cfg(not(feature = "mesh"))]
        {
            eprintln!("scale_out step: the step mode reads a scene file: build with the `mesh` feature");
            std::process::exit(2);
        }
    }
    let csv_path = cli::value(&args, "--csv");
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10_000_000);
    let mut csv = Vec::new();
    let side = (88.0 * n as f64).cbrt();
    let dt = 1.0 / 60.0;
    let mut r = ChaCha8Rng::seed_from_u64(1);
    let mut points = Vec::with_capacity(n);
    let mut boxes = Vec::with_capacity(n);
    for _ in 0..n {
        let c: [f64; 3] = std::array::from_fn(|_| r.random_range(0.0..side));
        // A rotated box's extent along an axis is at most |h|·√3; a random
        // rotation's is sum_j |R_kj| h_j, drawn here from its components.
        let h: [f64; 3] = std::array::from_fn(|_| r.random_range(0.5..1.5));
        let half: [f64; 3] = std::array::from_fn(|_| {
            let u: [f64; 3] = std::array::from_fn(|_| r.random_range(-1.0_f64..1.0));
            let len = u.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
            (0..3).map(|j| (u[j] / len).abs() * h[j]).sum::<f64>()
        });
        let d: [f64; 3] = std::array::from_fn(|_| r.random_range(-3.0..3.0) * dt);
        let b = Aabb { min: std::array::from_fn(|k| c[k] - half[k]), max: std::array::from_fn(|k| c[k] + half[k]) };
        points.push((c, 1u64));
        boxes.push(b.swept(&d));
    }
    println!("# Ghosts of a split uniform world: {n} boxes in a cube of side {side:.1}\n");
    println!(
        "| ranks | frames per rank | ghost frames | ghost fraction | most received by a rank / its frames | ghost bytes per step (all ranks) | per rank |"
    );
    println!("|---|---|---|---|---|---|---|");
    for ranks in [1, 2, 4, 8, 16, 32, 64] {
        let regions = Regions::bisect(&points, ranks);
        let (mut owned, mut received) = (vec![0usize; ranks], vec![0usize; ranks]);
        for ((p, _), b) in points.iter().zip(&boxes) {
            let home = regions.owner(p);
            owned[home] += 1;
            for k in regions.touching(b).filter(|&k| k != home) {
                received[k] += 1;
            }
        }
        let ghosts: usize = received.iter().sum();
        let worst = (0..ranks).map(|k| received[k] as f64 / owned[k].max(1) as f64).fold(0.0, f64::max);
        let bytes = ghosts * GHOST_BYTES;
        let (fraction, mb) = (ghosts as f64 / n as f64, bytes as f64 / 1e6);
        println!(
            "| {ranks} | {} | {ghosts} | {fraction:.4} | {worst:.4} | {mb:.1} MB | {:.2} MB |",
            n / ranks,
            mb / ranks as f64
        );
        csv.push(format!(
            "scale_out,{n},{ranks},{},{ghosts},{fraction:.4},{worst:.4},{mb:.1},{:.2}",
            n / ranks,
            mb / ranks as f64
        ));
    }
    results::report_lines(csv_path.as_deref(), SCALE_OUT_HEADER, &csv);
}

/// `step SCENE [STEPS] [RANKS] [world|dist|both]`: a plain `World` and a
/// distributed world on `RANKS` thread ranks stepped side by side.
#[cfg(feature = "mesh")]
fn step_mode(args: &[String]) {
    use fmbgrid::distributed::{DistributedWorld, LocalComm};
    use fmbgrid::{Body, World3};
    use std::time::Instant;
    let path = args.first().expect("step SCENE.toml [STEPS] [RANKS] [world|dist|both]");
    let steps: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(6);
    let ranks: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
    let which = args.get(3).map_or("both", String::as_str);
    let scene = fmbgrid::scene::Scene::load(path).expect("a 3D scene file");
    let mut plain: World3 = scene.build_3d().expect("a 3D scene");
    let dt = scene.dt();
    let bodies: Vec<Body<3>> = plain.bodies().map(|(_, b)| b.clone()).collect();
    let config = plain.config();
    let (run_world, run_dist) = (which != "dist", which != "world");
    let mut worlds: Vec<DistributedWorld<3, LocalComm>> = if run_dist {
        LocalComm::group(ranks).into_iter().map(|c| DistributedWorld::new(c, config)).collect()
    } else {
        Vec::new()
    };
    drop(scene);
    std::thread::scope(|s| {
        let handles: Vec<_> = worlds
            .iter_mut()
            .map(|w| {
                let bodies = &bodies;
                s.spawn(move || w.insert_many(bodies.iter().cloned()).map(|_| ()))
            })
            .collect();
        for h in handles {
            h.join().expect("a rank").expect("the bodies insert");
        }
    });
    drop(bodies);
    let (mut t_world, mut t_dist) = (Vec::new(), Vec::new());
    let (mut n_world, mut n_dist) = (0, 0);
    for step in 0..steps {
        // Which goes first alternates, so that a drift in the machine's
        // load does not favour one.
        for turn in [step % 2, 1 - step % 2] {
            if turn == 0 && run_world {
                let start = Instant::now();
                n_world = plain.step(dt).expect("the plain step").len();
                t_world.push(start.elapsed().as_secs_f64() * 1e3);
            }
            if turn == 1 && run_dist {
                let start = Instant::now();
                n_dist = std::thread::scope(|s| {
                    let handles: Vec<_> =
                        worlds.iter_mut().map(|w| s.spawn(move || w.step(dt).map(|c| c.len()))).collect();
                    handles.into_iter().map(|h| h.join().expect("a rank").expect("the distributed step")).sum()
                });
                t_dist.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let median = |t: &[f64]| {
        let mut t: Vec<f64> = t.iter().skip(1).copied().collect();
        t.sort_by(f64::total_cmp);
        t.get(t.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (w, d) = (median(&t_world), median(&t_dist));
    let all = |t: &[f64]| t.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(" ");
    println!("plain World: {w:.1} ms a step (median of steps 2..; {n_world} contacts) [{}]", all(&t_world));
    println!("distributed, {ranks} rank(s): {d:.1} ms a step ({n_dist} contacts) [{}]", all(&t_dist));
    if run_world && run_dist {
        // Each step's pair ran back to back: the median of their ratios
        // is less swayed by a loaded machine than the ratio of medians.
        let ratios: Vec<f64> = t_dist.iter().zip(&t_world).map(|(d, w)| d / w).collect();
        println!(
            "ratio distributed / plain: {:.3} (of medians), {:.3} (median of each step's)",
            d / w,
            median(&ratios)
        );
    }
}
