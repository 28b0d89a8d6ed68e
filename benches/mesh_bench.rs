//! Mesh scene benchmark: `World::step` on the mesh scenes of
//! `assets/scenes` (`dragons_pass`: two 47k-tetrahedron bunnies passing
//! through each other; `bunny_rain`: 32 thin-shell bunnies falling through
//! fixed boxes onto the ground) and on `tumbling` (crates and blades that
//! turn within each step) against a parry (f64) baseline built from the
//! same world's frames, side by side, on the same steps. For a frame whose
//! body turns, parry's swept box is the ball of its bounding sphere about
//! the body's reference point, swept by the displacement, and its pairs go
//! to `cast_shapes_nonlinear` with the same motion (`NonlinearRigidMotion`
//! about the reference point, ω·dt a step).
//!
//! The parry baseline is flat, one parry shape per frame (not grouped per
//! body as a `Compound` or `TriMesh` would be): tetrahedra and thin-shell
//! tetrahedra are `ConvexPolyhedron::from_convex_hull` of their 4 vertices,
//! orthogonal boxes `Cuboid` + pose (other boxes: the hull of their 8
//! vertices). Broad phase as `scene_bench`'s `rebuild` variant: the fixed
//! frames' `Bvh` is built once (outside the timing), the moving frames'
//! `Bvh::from_leaves` (binned SAH) over their swept boxes every step;
//! `traverse_bvtt_single_tree::<false>` for moving pairs, `leaf_pairs`
//! against the fixed tree, with fmbgrid's filter (never two frames of one
//! body, never two fixed frames). Narrow phase: `intersection_test` when the
//! two frames have the same displacement, `cast_shapes` over the step
//! (`max_time_of_impact` 1, `stop_at_penetration`) otherwise. parry answers
//! yes/no (or a time of impact); fmbgrid also computes the exact box and
//! interval of every intersection.
//!
//! Run: `cargo bench --bench mesh_bench -- [--scene dragons_pass|bunny_rain[,…]]
//! [--steps K] [--start S] [--no-parry] [--threads T] [--scan] [--csv FILE]`.
//! `--csv FILE` appends the medians to FILE as data
//! (`benches/results/README.md`).
//! Defaults: the three scenes, K = 10 timed steps after S untimed fmbgrid steps
//! (S per scene, chosen so the timed steps are among the scene's busiest:
//! see `--scan`), 1 thread. The parry baseline is built from the world's
//! frames after the S steps; each step of each engine is timed alone
//! (velocity reversals outside the timing), engines alternating step by
//! step. The pair sets of the first timed step are compared: the pairs
//! found by one engine only are counted, with the largest |signed distance|
//! parry finds between the two shapes at the time that engine saw them meet
//! (≈ 0: touching-level differences).
//! `--scan` runs fmbgrid alone over all the scene's steps and prints the
//! pairs per step and the busiest window of K steps.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fmbgrid::scene::Scene;
use fmbgrid::{Frame3, FrameId, Motion, World3};
use parry3d_f64::math::{Pose, Vector};
use parry3d_f64::query::{self, NonlinearRigidMotion};
use parry3d_f64::shape::{Cuboid, Shape};

#[path = "support/args.rs"]
mod cli;
#[path = "support/parry_world.rs"]
mod parry_world;
#[path = "support/peer.rs"]
mod peer;
#[path = "support/results.rs"]
mod results;
#[path = "support/threads.rs"]
mod threads;

use parry_world::world3::{ParryWorld, cast_options};

/// The mesh scenes and their default number of untimed steps before the
/// timed ones: the busiest 10 steps by `--scan`. `dragons_pass` (180
/// steps) overlaps from step 39 to 163, with 200k–210k pairs per step at
/// steps 81–95; `bunny_rain` (240 steps) peaks at 12k–16k pairs per step
/// at steps 168–177, when the upper layer of bunnies crosses the fixed
/// boxes and the lower one reaches the ground.
const SCENES: [(&str, usize); 3] = [("dragons_pass", 83), ("bunny_rain", 167), ("tumbling", 40)];

/// parry's shape for a placed frame (`benches/support/peer.rs`): `None`
/// when parry finds the hull flat.
fn shape(f: &Frame3) -> Option<(Pose, Box<dyn Shape>)> {
    peer::peer3::shape(f)
}

/// The parry baseline: its own copy of the world's frames
/// (`benches/support/parry_world.rs`), advanced by the same displacements.
struct Baseline {
    parry: ParryWorld,
}

/// Flat frame numbering of a world: `offset[handle slot] + frame index`.
struct Numbering {
    offset: Vec<usize>,
    frames: usize,
}

impl Numbering {
    fn new(world: &World3) -> Self {
        let slots = world.bodies().map(|(h, _)| h.index() as usize + 1).max().unwrap_or(0);
        let mut offset = vec![usize::MAX; slots];
        let mut frames = 0;
        for (h, body) in world.bodies() {
            offset[h.index() as usize] = frames;
            frames += body.frames().len();
        }
        Numbering { offset, frames }
    }

    fn id(&self, f: FrameId) -> u32 {
        (self.offset[f.body.index() as usize] + f.index as usize) as u32
    }
}

impl Baseline {
    /// Shapes, poses and displacements of every frame of `world` as it is
    /// now, and the fixed frames' tree (all outside any timing). Returns the
    /// baseline and the number of frames parry refused (flat hulls), which
    /// it leaves out.
    fn new(world: &World3, numbering: &Numbering, dt: f64, parallel: bool) -> (Self, usize) {
        let mut b = ParryWorld::with_capacity(parallel, numbering.frames);
        let mut refused = 0;
        for (n, (h, body)) in world.bodies().enumerate() {
            let moving = body.motion() == Motion::Moving;
            let d = if moving { Vector::from_array(body.velocity().map(|v| v * dt)) } else { Vector::ZERO };
            for index in 0..body.frames().len() as u32 {
                let frame = world.frame(FrameId { body: h, index }).expect("listed frame");
                let (pose, shape) = shape(&frame).unwrap_or_else(|| {
                    // Keep the numbering: a point far away that meets nothing.
                    refused += 1;
                    (Pose::from_translation(Vector::splat(1e12)), Box::new(Cuboid::new(Vector::splat(1e-9))))
                });
                let k = b.add(pose, shape, n as u32, d, moving);
                debug_assert_eq!(k, numbering.id(FrameId { body: h, index }));
                let w = body.angular_velocity();
                if moving && w != [0.0; 3] {
                    // The same turn: ω·dt about the body's reference point.
                    let pivot = Vector::from_array(body.pose().translation());
                    let angvel = Vector::from_array(w.map(|x| x * dt));
                    b.set_turn(k, pivot, NonlinearRigidMotion::new(Pose::IDENTITY, pivot, d, angvel));
                }
            }
        }
        b.reset_boxes();
        b.sweep_fixed();
        b.build_static_tree();
        (Baseline { parry: b }, refused)
    }

    /// Every moving frame's displacement is reversed (with the world's).
    fn reverse(&mut self) {
        let p = &mut self.parry;
        for &f in &p.moving {
            p.disp[f as usize] = -p.disp[f as usize];
        }
    }

    /// parry's signed distance between `a` and `b` at time `t` of the step
    /// (negative: penetration depth), from `poses`, the step's start.
    fn distance_at(&self, poses: &[Pose], a: u32, b: u32, t: f64) -> f64 {
        let (p, a, b) = (&self.parry, a as usize, b as usize);
        let mut pa = poses[a];
        let mut pb = poses[b];
        pa.translation += p.disp[a] * t;
        pb.translation += p.disp[b] * t;
        match query::contact(&pa, &*p.shapes[a], &pb, &*p.shapes[b], 1.0) {
            Ok(Some(c)) => c.dist,
            _ => f64::NAN,
        }
    }

    /// Time of impact of `a` and `b` over the step, if they meet.
    fn time_of_impact(&self, poses: &[Pose], a: u32, b: u32) -> Option<f64> {
        let (p, a, b) = (&self.parry, a as usize, b as usize);
        let (sa, sb) = (&*p.shapes[a], &*p.shapes[b]);
        query::cast_shapes(&poses[a], p.disp[a], sa, &poses[b], p.disp[b], sb, cast_options())
            .ok()
            .flatten()
            .map(|h| h.time_of_impact)
    }

    /// One step: swept boxes, broad phase (`rebuild`), narrow phase,
    /// advance. Returns the number of intersecting pairs.
    fn step(&mut self) -> usize {
        let t = Instant::now();
        self.parry.sweep_moving();
        self.parry.broad_rebuild();
        self.parry.finish_step(t)
    }
}

struct Args {
    scenes: Vec<String>,
    steps: usize,
    start: Option<usize>,
    parry: bool,
    threads: usize,
    scan: bool,
    csv: Option<String>,
}

fn parse_args() -> Args {
    let args: Vec<String> = cli::args();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let number = |name: &str| {
        value(name).map(|v| v.parse::<usize>().unwrap_or_else(|_| panic!("{name}: not a whole number: {v}")))
    };
    let scenes = match value("--scene").as_deref() {
        None | Some("all") => SCENES.iter().map(|s| s.0.to_string()).collect(),
        Some(list) => list.split(',').map(str::to_string).collect::<Vec<_>>(),
    };
    if let Some(s) = scenes.iter().find(|s| !SCENES.iter().any(|k| k.0 == s.as_str())) {
        eprintln!("unknown scene {s}; scenes: {}", SCENES.map(|s| s.0).join(", "));
        std::process::exit(2);
    }
    Args {
        scenes,
        steps: number("--steps").unwrap_or(10).max(1),
        start: number("--start"),
        parry: !args.iter().any(|a| a == "--no-parry"),
        threads: number("--threads").unwrap_or(1).max(1),
        scan: args.iter().any(|a| a == "--scan"),
        csv: value("--csv"),
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn median(v: &[f64]) -> f64 {
    let mut t = v.to_vec();
    t.sort_by(f64::total_cmp);
    if t.is_empty() { f64::NAN } else { t[t.len() / 2] }
}

fn scene_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes").join(format!("{name}.toml"))
}

/// Reverses every moving body's velocity when the scene asks for it before
/// 1-based step `step` (as the scene runner does). Returns whether it did.
fn reverse_due(scene: &Scene, world: &mut World3, step: usize) -> bool {
    let Some(every) = scene.spec().reverse_every else { return false };
    if step <= 1 || !(step - 1).is_multiple_of(every) {
        return false;
    }
    let moving: Vec<_> =
        world.bodies().filter(|(_, b)| b.motion() == Motion::Moving).map(|(h, b)| (h, b.velocity())).collect();
    for (h, v) in moving {
        world.set_velocity(h, v.map(|x| -x)).expect("moving body");
    }
    true
}

/// The sorted intersecting pairs of the world's last step, flat-numbered.
fn fmbgrid_pairs(world: &World3, numbering: &Numbering) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = world
        .contacts()
        .iter()
        .map(|c| {
            let (a, b) = (numbering.id(c.a), numbering.id(c.b));
            (a.min(b), a.max(b))
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

/// fmbgrid alone over all the scene's steps: pairs per step and the
/// busiest window of `k` steps.
fn scan(name: &str, k: usize) {
    let scene = Scene::load(scene_path(name)).unwrap_or_else(|e| panic!("{e}"));
    let (mut world, report) = scene.build_3d_report().unwrap_or_else(|e| panic!("{e}"));
    let mut pairs = Vec::with_capacity(scene.steps());
    let t = Instant::now();
    for step in 1..=scene.steps() {
        reverse_due(&scene, &mut world, step);
        pairs.push(world.step(scene.dt()).expect("step").len());
    }
    println!(
        "\n### scan of {name}: {} frames, {} steps in {:.1} s\n",
        report.frames,
        scene.steps(),
        t.elapsed().as_secs_f64()
    );
    for (i, chunk) in pairs.chunks(10).enumerate() {
        let line: Vec<String> = chunk.iter().map(|p| p.to_string()).collect();
        println!("steps {:>3}–{:>3}: {}", i * 10 + 1, i * 10 + chunk.len(), line.join(" "));
    }
    let best = (0..pairs.len().saturating_sub(k) + 1)
        .max_by_key(|&s| pairs[s..(s + k).min(pairs.len())].iter().sum::<usize>())
        .unwrap_or(0);
    println!("\nbusiest {k} steps: {}–{} (--start {best})", best + 1, best + k);
}

/// One row of the summary table.
struct Row {
    scene: String,
    frames: usize,
    range: (usize, usize),
    pairs: f64,
    fmbgrid: Vec<f64>,
    parry: Vec<f64>,
    broad: Vec<f64>,
    narrow: Vec<f64>,
    /// parry's candidate pairs (handed to the narrow phase) per step.
    candidates: Vec<usize>,
    check: String,
}

fn run_scene(args: &Args, name: &str) -> Row {
    let scene = Scene::load(scene_path(name)).unwrap_or_else(|e| panic!("{e}"));
    let dt = scene.dt();
    let start = args.start.unwrap_or_else(|| SCENES.iter().find(|s| s.0 == name).map_or(0, |s| s.1));
    let t = Instant::now();
    let (mut world, report) = scene.build_3d_report().unwrap_or_else(|e| panic!("{e}"));
    for step in 1..=start {
        reverse_due(&scene, &mut world, step);
        world.step(dt).unwrap_or_else(|e| panic!("step {step}: {e}"));
    }
    eprintln!(
        "[{name}: built ({} frames) and advanced {start} steps in {:.1} s]",
        report.frames,
        t.elapsed().as_secs_f64()
    );
    let numbering = Numbering::new(&world);
    let mut peer = args.parry.then(|| {
        let t = Instant::now();
        let (b, refused) = Baseline::new(&world, &numbering, dt, args.threads > 1);
        eprintln!(
            "[{name}: parry baseline built in {:.1} s; {refused} frames refused by parry]",
            t.elapsed().as_secs_f64()
        );
        if refused > 0 {
            eprintln!("warning: {refused} frames parry finds flat are left out of the parry baseline");
        }
        b
    });

    let mut row = Row {
        scene: name.to_string(),
        frames: report.frames,
        range: (start + 1, start + args.steps),
        pairs: 0.0,
        fmbgrid: vec![],
        parry: vec![],
        broad: vec![],
        narrow: vec![],
        candidates: vec![],
        check: "not run".into(),
    };
    let mut pair_counts = Vec::new();
    for k in 0..args.steps {
        let step = start + k + 1;
        if reverse_due(&scene, &mut world, step)
            && let Some(p) = &mut peer
        {
            p.reverse();
        }
        let t = Instant::now();
        let n = world.step(dt).unwrap_or_else(|e| panic!("step {step}: {e}")).len();
        row.fmbgrid.push(ms(t));
        pair_counts.push(n);
        let Some(p) = &mut peer else { continue };
        let start_poses = (k == 0).then(|| p.parry.poses.clone());
        let t = Instant::now();
        let m = p.step();
        row.parry.push(ms(t));
        row.broad.push(p.parry.broad_ms);
        row.narrow.push(p.parry.narrow_ms);
        row.candidates.push(p.parry.candidates.len());
        if let Some(poses) = start_poses {
            row.check = compare(&world, &numbering, p, &poses, n, m);
        }
    }
    row.pairs = pair_counts.iter().sum::<usize>() as f64 / pair_counts.len().max(1) as f64;
    row
}

/// Compares the pair sets of the first timed step; for each differing pair,
/// parry's signed distance between the two shapes when one engine saw them
/// meet (fmbgrid only: the middle of its contact interval; parry only: its
/// time of impact).
fn compare(world: &World3, numbering: &Numbering, p: &Baseline, poses: &[Pose], n: usize, m: usize) -> String {
    let fmb = fmbgrid_pairs(world, numbering);
    let mut parry = p.parry.hits.clone();
    parry.sort_unstable();
    let only_fmb: Vec<(u32, u32)> = fmb.iter().filter(|x| parry.binary_search(x).is_err()).copied().collect();
    let only_parry: Vec<(u32, u32)> = parry.iter().filter(|x| fmb.binary_search(x).is_err()).copied().collect();
    if only_fmb.is_empty() && only_parry.is_empty() {
        return format!("{n} = {m} pairs, 0 differ");
    }
    let times: std::collections::HashMap<(u32, u32), f64> = world
        .contacts()
        .iter()
        .map(|c| {
            let (a, b) = (numbering.id(c.a), numbering.id(c.b));
            ((a.min(b), a.max(b)), 0.5 * (c.time[0] + c.time[1]))
        })
        .collect();
    let worst = |d: &mut dyn Iterator<Item = f64>| d.map(f64::abs).fold(0.0, f64::max);
    let d_fmb = worst(&mut only_fmb.iter().map(|&(a, b)| p.distance_at(poses, a, b, times[&(a, b)])));
    let d_parry = worst(
        &mut only_parry.iter().map(|&(a, b)| p.distance_at(poses, a, b, p.time_of_impact(poses, a, b).unwrap_or(0.0))),
    );
    format!(
        "fmbgrid {n}, parry {m}: {} differ ({} fmbgrid only, parry |distance| ≤ {d_fmb:.1e}; {} parry only, ≤ {d_parry:.1e})",
        only_fmb.len() + only_parry.len(),
        only_fmb.len(),
        only_parry.len()
    )
}

fn run(args: &Args) {
    if args.scan {
        for name in &args.scenes {
            scan(name, args.steps);
        }
        return;
    }
    let rows: Vec<Row> = args.scenes.iter().map(|name| run_scene(args, name)).collect();
    println!("# fmbgrid `World::step` vs parry 0.31 (f64) on the mesh scenes, side by side\n");
    println!(
        "fmbgrid reports every intersecting frame pair over the step **with the exact box of the intersection and \
         the contact interval**; parry reports the same pairs with a yes/no answer (`intersection_test`) or a time \
         of impact (`cast_shapes`), **no intersection box**. parry baseline: one shape per frame (convex hulls of \
         the tetrahedra, `Cuboid` + pose for boxes), a flat `Bvh` of the moving frames' swept boxes rebuilt every \
         step plus the fixed frames' `Bvh` built once, same body filter. Times per step, min / median over the \
         timed steps; parry's broad (swept boxes, tree, pairs) / narrow (tests, advance) split is the median of \
         each. `fmbgrid/parry` < 1: fmbgrid is faster. {} thread(s).\n",
        threads::pool_threads()
    );
    println!(
        "| scene | frames | timed steps | pairs/step | fmbgrid ms/step (min / median) | parry ms/step (min / median) \
         | parry broad / narrow ms | parry candidates/step | fmbgrid/parry | first timed step |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let (parry, split, cands, ratio) = if r.parry.is_empty() {
            ("–".to_string(), "–".to_string(), "–".to_string(), "–".to_string())
        } else {
            (
                format!("{:.2} / {:.2}", min(&r.parry), median(&r.parry)),
                format!("{:.2} / {:.2}", median(&r.broad), median(&r.narrow)),
                format!("{:.0}", r.candidates.iter().sum::<usize>() as f64 / r.candidates.len() as f64),
                format!("{:.3}", median(&r.fmbgrid) / median(&r.parry)),
            )
        };
        println!(
            "| {} | {} | {}–{} | {:.0} | {:.2} / {:.2} | {parry} | {split} | {cands} | {ratio} | {} |",
            r.scene,
            r.frames,
            r.range.0,
            r.range.1,
            r.pairs,
            min(&r.fmbgrid),
            median(&r.fmbgrid),
            r.check
        );
    }
    results::report(args.csv.as_deref(), "mesh_bench", &result_rows(args, &rows));
}

/// The medians as rows of data: fmbgrid (exact boxes) and parry.
fn result_rows(args: &Args, rows: &[Row]) -> Vec<results::Row> {
    let mut out = Vec::new();
    for r in rows {
        let parry = (!r.parry.is_empty()).then(|| median(&r.parry));
        let row = |engine: &str, mode: &str, ms: f64, ratio: Option<f64>| results::Row {
            scene: r.scene.clone(),
            n: r.frames,
            frames: r.frames,
            threads: args.threads,
            engine: engine.to_string(),
            mode: mode.to_string(),
            median_ms: ms,
            pairs_per_frame: r.pairs / r.frames as f64,
            ratio,
        };
        let fmb = median(&r.fmbgrid);
        out.push(row("fmbgrid", "ExactBox", fmb, parry.map(|p| fmb / p)));
        if let Some(p) = parry {
            out.push(row("parry rebuild", "end poses or cast", p, Some(1.0)));
        }
    }
    out
}

fn main() {
    let args = parse_args();
    threads::run_with_threads(args.threads, || run(&args));
}
