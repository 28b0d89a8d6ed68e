//! Scene benchmark: `World::step` (hashed grid + FMB, with the exact box and
//! interval of every contact) against a parry (f64) baseline measured side
//! by side, in the same run, on the same scenes (`benches/support/scenes.rs`):
//! the same swept boxes, a parry `Bvh` broad phase, then parry's narrow phase
//! on every candidate (`intersection_test` when the two frames do not move
//! relative to each other, `cast_shapes` over the step otherwise), giving the
//! same pairs. parry only answers yes/no (or a time of impact): it computes
//! no intersection box.
//!
//! Two parry broad phases, each as fast as we could make it:
//! * `rebuild`: the fixed frames' tree is built once (first step), the moving
//!   frames' tree is rebuilt every step (`Bvh::from_leaves`, binned SAH);
//!   moving pairs by `traverse_bvtt_single_tree::<false>`, moving–fixed pairs
//!   by `leaf_pairs` between the two trees;
//! * `incremental`: rapier's `BroadPhaseBvh`: one tree of every frame, fat
//!   leaves updated with `insert_or_update_partially` (margin `--margin`),
//!   `optimize_incremental` + `refit`, `traverse_bvtt_single_tree::<true>`
//!   for the pairs of changed leaves, and a persistent pair map pruned of
//!   pairs whose fat boxes separated; candidates are the map's pairs whose
//!   swept boxes overlap. (The first step builds the tree with
//!   `Bvh::from_leaves`, a better tree than rapier's one-by-one insertion.)
//!
//! Neither wins everywhere: at 10k–1M moving frames the incremental tree's
//! broad phase is about twice as fast as rebuilding (both are small next to
//! parry's narrow phase); with mostly fixed frames, rebuilding only the
//! small moving tree is much faster than refitting the whole one. The
//! summary names the faster variant for each scene.
//!
//! Run: `cargo bench --bench scene_bench -- [--scene NAME[,NAME…]]
//! [--n N[,N…]] [--steps K] [--settle S] [--threads T] [--no-parry] [--parry rebuild|incremental|both]
//! [--margin M] [--budget SECONDS] [--seed S] [--detail MODES]`.
//! `--detail exact,interval,candidates` steps one fmbgrid world per
//! [`ContactDetail`] mode, side by side (the first is the reference of the
//! ratios); default `exact`. `--csv FILE` appends the summary to FILE as
//! data (`benches/results/README.md`: machine, commit, date, scene, N,
//! engine, mode, median ms, ratio to the best parry), with a header when
//! the file is new.
//! Defaults: every scene at N = 10k, 100k and 1M, 10 steps after one warm-up
//! step, 1 thread, both parry variants, margin 0.01 (rapier's), budget 60 s.
//! `--settle S` steps every engine S more times, untimed, between the
//! warm-up and the timed steps: a persistent broad phase does nothing for
//! its first steps (no frame has left its fat box yet), then frames leave
//! in waves, so the medians of a steady state need the first waves behind
//! them (the figures of BENCHMARKS.md take `--settle 10`).
//! Each step of each engine is timed alone (velocity reversals and other
//! bookkeeping outside the timing); engines alternate step by step. A parry
//! variant whose warm-up step, times K, exceeds the budget is skipped.
//! `--threads T` runs everything in a rayon pool of T threads: fmbgrid's
//! candidate search and FMB run in parallel; parry's narrow phase too (its
//! broad phase is sequential: parry's `parallel` feature is not enabled).

use std::time::Instant;

use fmbgrid::{ContactDetail, Frame, WorldConfig};

#[path = "support/args.rs"]
mod cli;
#[path = "support/parry_world.rs"]
mod parry_world;
#[path = "support/peer.rs"]
mod peer;
#[path = "support/results.rs"]
mod results;
#[path = "support/scenes.rs"]
mod scenes;
#[path = "support/threads.rs"]
mod threads;

use scenes::{SCENES, Scene};

/// Which parry broad phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    Rebuild,
    Incremental,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Rebuild => "parry rebuild",
            Variant::Incremental => "parry incremental",
        }
    }
}

/// What the driver needs of a parry baseline, whatever its dimension.
pub trait Peer {
    /// Bookkeeping before a step (velocity reversal), outside the timing.
    fn prepare(&mut self);
    /// One step: swept boxes, broad phase, narrow phase, advance. Returns
    /// the number of intersecting pairs.
    fn step(&mut self) -> usize;
    /// The intersecting pairs of the last step, as flat frame indices
    /// `(smaller, larger)`.
    fn hits(&self) -> &[(u32, u32)];
    /// Candidate pairs handed to the narrow phase at the last step.
    fn candidates(&self) -> usize;
    /// Bytes of broad-phase structures (trees' heap, box lists, pair lists;
    /// not the shapes, nor parry's internal workspace).
    fn memory(&self) -> usize;
    /// ms spent at the last step in the broad phase (swept boxes included)
    /// and in the narrow phase (advancing included).
    fn phases(&self) -> (f64, f64);
}

/// The parry baseline for one dimension (`parry2d_f64` or `parry3d_f64`):
/// the parry world of `benches/support/parry_world.rs` (module `$world`),
/// with the velocities, the step count and the two broad phases.
macro_rules! baseline {
    ($module:ident, $parry:ident, $world:ident, $dim:literal, $convert:path) => {
        pub mod $module {
            use super::parry_world::$world::ParryWorld;
            use super::scenes::{Scene, reverse_due};
            use super::{Peer, Variant};
            use hashbrown::HashMap;
            use $parry::bounding_volume::{Aabb, BoundingVolume};
            use $parry::math::Vector;
            use $parry::partitioning::{Bvh, BvhBuildStrategy};

            pub struct Baseline {
                variant: Variant,
                margin: f64,
                dt: f64,
                steps: u64,
                /// Shapes, poses, displacements (set by each sweep), swept
                /// boxes, trees, candidates and hits.
                parry: ParryWorld,
                is_moving: Vec<bool>,
                velocity: Vec<Vector>,
                /// `incremental`: persistent pairs and the step that last saw them.
                pairs: HashMap<(u32, u32), u32>,
                stamp: u32,
            }

            impl Baseline {
                /// parry's shapes and poses for the scene's frames (built once,
                /// outside any timing).
                pub fn new(scene: &Scene<$dim>, variant: Variant, margin: f64, parallel: bool) -> Self {
                    let mut b = Baseline {
                        variant,
                        margin,
                        dt: scene.dt,
                        steps: 0,
                        parry: ParryWorld::new(parallel),
                        is_moving: Vec::new(),
                        velocity: Vec::new(),
                        pairs: HashMap::new(),
                        stamp: 0,
                    };
                    for (i, body) in scene.bodies.iter().enumerate() {
                        for f in &body.frames {
                            let (pose, shape) = $convert(f);
                            b.parry.add(pose, shape, i as u32, Vector::ZERO, body.moving);
                            b.is_moving.push(body.moving);
                            b.velocity.push(Vector::from_array(body.velocity));
                        }
                    }
                    b.parry.reset_boxes();
                    b
                }

                /// Swept boxes of the moving frames (and, at the first step,
                /// of the fixed ones).
                fn sweep(&mut self) {
                    for i in 0..self.parry.moving.len() {
                        self.sweep_frame(self.parry.moving[i] as usize);
                    }
                    if self.steps == 1 {
                        for i in 0..self.parry.fixed.len() {
                            self.sweep_frame(self.parry.fixed[i] as usize);
                        }
                    }
                }

                /// Frame `f`'s displacement over the step, then its swept box.
                #[inline]
                fn sweep_frame(&mut self, f: usize) {
                    self.parry.disp[f] = if self.is_moving[f] { self.velocity[f] * self.dt } else { Vector::ZERO };
                    self.parry.sweep_frame(f);
                }

                fn broad_rebuild(&mut self) {
                    if self.parry.static_tree.is_none() {
                        self.parry.build_static_tree();
                    }
                    self.parry.broad_rebuild();
                }

                fn broad_incremental(&mut self) {
                    self.stamp = self.stamp.wrapping_add(1);
                    let m = Vector::splat(self.margin);
                    let first = self.steps == 1;
                    let w = &mut self.parry;
                    if first {
                        let fat: Vec<Aabb> = w.aabbs.iter().map(|b| Aabb::new(b.mins - m, b.maxs + m)).collect();
                        w.tree = Bvh::from_leaves(BvhBuildStrategy::Binned, &fat);
                    } else {
                        for &f in &w.moving {
                            let _ = w.tree.insert_or_update_partially(w.aabbs[f as usize], f, self.margin);
                        }
                        w.tree.optimize_incremental(&mut w.workspace);
                        w.tree.refit(&mut w.workspace);
                    }
                    let stamp = self.stamp;
                    let (body, is_moving, pairs) = (&w.body, &self.is_moving, &mut self.pairs);
                    let mut collect = |a: u32, b: u32| {
                        let (a, b) = (a.min(b), a.max(b));
                        if (is_moving[a as usize] || is_moving[b as usize]) && body[a as usize] != body[b as usize] {
                            pairs.insert((a, b), stamp);
                        }
                    };
                    if first {
                        w.tree.traverse_bvtt_single_tree::<false>(&mut w.workspace, &mut collect);
                    } else {
                        w.tree.traverse_bvtt_single_tree::<true>(&mut w.workspace, &mut collect);
                    }
                    let tree = &w.tree;
                    self.pairs.retain(|&(a, b), seen| {
                        *seen == stamp || {
                            let (Some(na), Some(nb)) = (tree.leaf_node(a), tree.leaf_node(b)) else { return false };
                            !(na.is_changed() || nb.is_changed()) || na.intersects(nb)
                        }
                    });
                    w.candidates.clear();
                    let aabbs = &w.aabbs;
                    w.candidates
                        .extend(self.pairs.keys().filter(|&&(a, b)| aabbs[a as usize].intersects(&aabbs[b as usize])));
                }
            }

            impl Peer for Baseline {
                fn prepare(&mut self) {
                    if reverse_due(self.steps) {
                        for &f in &self.parry.moving {
                            self.velocity[f as usize] = -self.velocity[f as usize];
                        }
                    }
                }

                fn step(&mut self) -> usize {
                    let t = std::time::Instant::now();
                    self.steps += 1;
                    self.sweep();
                    match self.variant {
                        Variant::Rebuild => self.broad_rebuild(),
                        Variant::Incremental => self.broad_incremental(),
                    }
                    self.parry.finish_step(t)
                }

                fn phases(&self) -> (f64, f64) {
                    (self.parry.broad_ms, self.parry.narrow_ms)
                }

                fn hits(&self) -> &[(u32, u32)] {
                    &self.parry.hits
                }

                fn candidates(&self) -> usize {
                    self.parry.candidates.len()
                }

                fn memory(&self) -> usize {
                    self.parry.memory() + self.pairs.capacity() * (size_of::<((u32, u32), u32)>() + 1)
                }
            }
        }
    };
}

/// parry's shapes for frames (`benches/support/peer.rs`).
fn shape3(f: &Frame<3>) -> (parry3d_f64::math::Pose, Box<dyn parry3d_f64::shape::Shape>) {
    peer::peer3::shape(f).expect("valid frames have solid hulls")
}

fn shape2(f: &Frame<2>) -> (parry2d_f64::math::Pose, Box<dyn parry2d_f64::shape::Shape>) {
    peer::peer2::shape(f).expect("valid frames have solid polygons")
}

baseline!(peer3, parry3d_f64, world3, 3, crate::shape3);
baseline!(peer2, parry2d_f64, world2, 2, crate::shape2);

struct Args {
    scenes: Vec<String>,
    ns: Vec<usize>,
    steps: usize,
    settle: usize,
    threads: usize,
    variants: Vec<Variant>,
    margin: f64,
    budget: f64,
    seed: u64,
    details: Vec<ContactDetail>,
    csv: Option<String>,
}

/// The label of an fmbgrid measure.
fn detail_label(d: ContactDetail) -> &'static str {
    match d {
        ContactDetail::ExactBox => "fmbgrid (grid + FMB, exact boxes)",
        ContactDetail::Interval => "fmbgrid (grid + FMB, intervals only)",
        ContactDetail::Candidates => "fmbgrid (broad phase only: candidates)",
    }
}

fn parse_args() -> Args {
    let args: Vec<String> = cli::args();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let number = |name: &str, default: f64| {
        value(name).map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{name}: not a number: {v}")))
    };
    let scenes = match value("--scene").as_deref() {
        None | Some("all") => SCENES.iter().map(|s| s.to_string()).collect(),
        Some(list) => list.split(',').map(str::to_string).collect::<Vec<_>>(),
    };
    if let Some(s) = scenes.iter().find(|s| !SCENES.contains(&s.as_str())) {
        eprintln!("unknown scene {s}; scenes: {}", SCENES.join(", "));
        std::process::exit(2);
    }
    let ns = value("--n").map_or(vec![10_000, 100_000, 1_000_000], |list| {
        list.split(',')
            .map(|v| v.replace('_', "").parse().unwrap_or_else(|_| panic!("--n: not a number: {v}")))
            .collect()
    });
    let variants = if args.iter().any(|a| a == "--no-parry") {
        vec![]
    } else {
        match value("--parry").as_deref() {
            None | Some("both") => vec![Variant::Rebuild, Variant::Incremental],
            Some("rebuild") => vec![Variant::Rebuild],
            Some("incremental") => vec![Variant::Incremental],
            Some(other) => panic!("--parry: rebuild, incremental or both, not {other}"),
        }
    };
    Args {
        scenes,
        ns,
        steps: number("--steps", 10.0).max(1.0) as usize,
        settle: number("--settle", 0.0).max(0.0) as usize,
        threads: number("--threads", 1.0).max(1.0) as usize,
        variants,
        margin: number("--margin", 0.01),
        budget: number("--budget", 60.0),
        seed: number("--seed", 1.0) as u64,
        details: value("--detail").map_or(vec![ContactDetail::ExactBox], |list| {
            list.split(',')
                .map(|d| match d {
                    "exact" => ContactDetail::ExactBox,
                    "interval" => ContactDetail::Interval,
                    "candidates" => ContactDetail::Candidates,
                    other => panic!("--detail: exact, interval or candidates, not {other}"),
                })
                .collect()
        }),
        csv: value("--csv"),
    }
}

/// One engine's figures on one scene.
struct Measure {
    label: String,
    times: Vec<f64>,
    pairs: Vec<usize>,
    memory: usize,
    note: String,
}

impl Measure {
    fn min(&self) -> f64 {
        self.times.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn median(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        if t.is_empty() { f64::NAN } else { t[t.len() / 2] }
    }

    fn mean_pairs(&self) -> f64 {
        self.pairs.iter().sum::<usize>() as f64 / self.pairs.len().max(1) as f64
    }
}

/// A summary line: scene, N, fmbgrid median, best parry median and which.
struct Summary {
    scene: String,
    n: usize,
    frames: usize,
    /// Median per `--detail` mode, in order.
    fmbgrid: Vec<f64>,
    pairs: f64,
    parry: Option<(f64, String)>,
}

/// Number of pairs in one sorted set and not the other.
fn differ(a: &[(u32, u32)], b: &[(u32, u32)]) -> usize {
    let (mut i, mut j, mut d) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => (i, j) = (i + 1, j + 1),
            std::cmp::Ordering::Less => (i, d) = (i + 1, d + 1),
            std::cmp::Ordering::Greater => (j, d) = (j + 1, d + 1),
        }
    }
    d + (a.len() - i) + (b.len() - j)
}

/// The median time of each stage of fmbgrid's steps (`World::profile`).
fn stages(profiles: &[fmbgrid::StepProfile]) -> String {
    let median = |f: fn(&fmbgrid::StepProfile) -> std::time::Duration| {
        let mut v: Vec<f64> = profiles.iter().map(|p| f(p).as_secs_f64() * 1e3).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    format!(
        "median stages ms: check {:.2}, refresh {:.2}, broad {:.2}, narrow {:.2}, events {:.2}, advance {:.2}",
        median(|p| p.check),
        median(|p| p.refresh),
        median(|p| p.broad),
        median(|p| p.narrow),
        median(|p| p.events),
        median(|p| p.advance)
    )
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn run_scene<const D: usize, P: Peer>(
    args: &Args,
    scene: &Scene<D>,
    n: usize,
    make: impl Fn(&Scene<D>, Variant) -> P,
) -> Summary {
    let frames = scene.frames();
    let setup = Instant::now();
    let mut sims: Vec<_> = args
        .details
        .iter()
        .map(|&d| scene.world(WorldConfig::default().with_contact_detail(d)).expect("valid scene"))
        .collect();
    let mut peers: Vec<(Variant, P)> = args.variants.iter().map(|&v| (v, make(scene, v))).collect();
    let setup = ms(setup);

    // Warm-up step: fixed structures get built; pair sets are compared.
    let offsets = scene.frame_offsets();
    let mut fmb_warm = Vec::new();
    for sim in &mut sims[1..] {
        sim.prepare();
        let t = Instant::now();
        sim.contacts();
        fmb_warm.push(ms(t));
    }
    let sim = &mut sims[0];
    sim.prepare();
    let t = Instant::now();
    let contacts = sim.contacts();
    fmb_warm.insert(0, ms(t));
    let mut fmb_pairs: Vec<(u32, u32)> = contacts
        .iter()
        .map(|c| {
            let id = |f: fmbgrid::FrameId| (offsets[f.body.index() as usize] + f.index as usize) as u32;
            let (a, b) = (id(c.a), id(c.b));
            (a.min(b), a.max(b))
        })
        .collect();
    fmb_pairs.sort_unstable();
    let mut notes =
        vec![format!("fmbgrid warm-up step {:.1} ms (cell size {:.3})", fmb_warm[0], sim.world.cell_size())];
    let mut measures: Vec<Measure> = args
        .details
        .iter()
        .map(|&d| Measure {
            label: detail_label(d).into(),
            times: vec![],
            pairs: vec![],
            memory: 0,
            note: String::new(),
        })
        .collect();
    let m = sims.len();
    let mut live = Vec::new();
    for (v, p) in &mut peers {
        p.prepare();
        let t = Instant::now();
        p.step();
        let warm = ms(t);
        let mut hits = p.hits().to_vec();
        hits.sort_unstable();
        let d = differ(&fmb_pairs, &hits);
        notes.push(format!(
            "{} warm-up step {warm:.1} ms: {} pairs, fmbgrid {}, {d} pairs differ",
            v.name(),
            hits.len(),
            fmb_pairs.len()
        ));
        let skip = warm * args.steps as f64 > args.budget * 1e3;
        measures.push(Measure {
            label: v.name().into(),
            times: vec![],
            pairs: vec![],
            memory: 0,
            note: if skip {
                format!("skipped (warm-up {warm:.0} ms × {} steps > budget {} s)", args.steps, args.budget)
            } else {
                String::new()
            },
        });
        live.push(!skip);
    }

    // Untimed steps to a steady state, engines in turn as below.
    for _ in 0..args.settle {
        for sim in &mut sims {
            sim.prepare();
            sim.step();
        }
        for (k, (_, p)) in peers.iter_mut().enumerate() {
            if live[k] {
                p.prepare();
                p.step();
            }
        }
    }
    let mut phases = vec![Vec::new(); peers.len()];
    let mut profiles = vec![Vec::new(); sims.len()];
    for _ in 0..args.steps {
        for ((sim, measure), profile) in sims.iter_mut().zip(&mut measures).zip(&mut profiles) {
            sim.prepare();
            let t = Instant::now();
            let c = sim.step();
            measure.times.push(ms(t));
            measure.pairs.push(c);
            profile.push(sim.world.profile());
        }
        for (k, (_, p)) in peers.iter_mut().enumerate() {
            if !live[k] {
                continue;
            }
            p.prepare();
            let t = Instant::now();
            let c = p.step();
            measures[k + m].times.push(ms(t));
            measures[k + m].pairs.push(c);
            phases[k].push(p.phases());
        }
    }
    for ((sim, measure), profile) in sims.iter().zip(&mut measures).zip(&profiles) {
        measure.memory = sim.world.broad_phase_memory();
        measure.note = stages(profile);
    }
    for (k, (_, p)) in peers.iter().enumerate() {
        measures[k + m].memory = p.memory();
        if live[k] {
            let median = |f: fn(&(f64, f64)) -> f64| {
                let mut v: Vec<f64> = phases[k].iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            measures[k + m].note = format!(
                "median broad {:.2} ms, narrow {:.2} ms; {} candidates at the last step",
                median(|p| p.0),
                median(|p| p.1),
                p.candidates()
            );
        }
    }

    println!(
        "\n### {} — N = {n}: {frames} frames ({} moving), {} steps after 1 warm-up and {} untimed, {} thread(s)\n",
        scene.name,
        scene.moving_frames(),
        args.steps,
        args.settle,
        args.threads
    );
    println!(
        "| engine | min ms/step | median ms/step | ns/frame | pairs/step | broad-phase B/frame | fmbgrid/this | |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let fmb = measures[0].median();
    for m in &measures {
        if m.times.is_empty() {
            println!("| {} | – | – | – | – | – | – | {} |", m.label, m.note);
            continue;
        }
        println!(
            "| {} | {:.2} | {:.2} | {:.0} | {:.0} | {:.1} | {:.2} | {} |",
            m.label,
            m.min(),
            m.median(),
            m.median() * 1e6 / frames as f64,
            m.mean_pairs(),
            m.memory as f64 / frames as f64,
            fmb / m.median(),
            m.note
        );
    }
    println!();
    println!("(setup {setup:.0} ms; {})", notes.join("; "));
    let parry = measures[m..]
        .iter()
        .filter(|m| !m.times.is_empty())
        .map(|m| (m.median(), m.label.clone()))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    Summary {
        scene: scene.name.to_string(),
        n,
        frames,
        fmbgrid: measures[..m].iter().map(|x| x.median()).collect(),
        pairs: measures[0].mean_pairs(),
        parry,
    }
}

fn run(args: &Args) {
    println!("# fmbgrid `World::step` vs parry 0.31 (f64), side by side\n");
    println!(
        "fmbgrid reports every intersecting pair over the step **with the exact box of the intersection and the \
         contact interval** (FMB); parry reports the same pairs with a yes/no answer (`intersection_test`) or a time \
         of impact (`cast_shapes`), **no intersection box**. Both start from the same swept boxes. Times per step \
         (min and median over the timed steps), ns/frame from the median; pairs/step are intersecting pairs found \
         (mean); broad-phase bytes per frame: fmbgrid's `broad_phase_memory()`, parry's trees' heap plus box and \
         pair lists. `fmbgrid/this` < 1 means fmbgrid is faster. Scenes: `benches/support/scenes.rs` (seed {}).",
        args.seed
    );
    println!(
        "\nparry rebuild: fixed frames' `Bvh` built once, moving frames' `Bvh::from_leaves` every step, \
         `traverse_bvtt_single_tree::<false>` + `leaf_pairs` against the fixed tree. parry incremental: rapier's \
         scheme, one tree, `insert_or_update_partially` (margin {}) + `optimize_incremental` + `refit`, \
         `traverse_bvtt_single_tree::<true>`, persistent pair map. Narrow phase: `intersection_test` when the \
         two frames have the same displacement, `cast_shapes` over the step otherwise; `Cuboid` + pose for \
         orthogonal boxes, convex hulls otherwise. Threads in the pool: {}.",
        args.margin,
        threads::pool_threads()
    );
    let mut summary = Vec::new();
    for &n in &args.ns {
        for name in &args.scenes {
            let t = Instant::now();
            let parallel = args.threads > 1;
            let s = if name == "2d" {
                let scene = scenes::planar(n, args.seed);
                eprintln!("[{name} N={n}: generated in {:.0} ms]", ms(t));
                run_scene(args, &scene, n, |s, v| peer2::Baseline::new(s, v, args.margin, parallel))
            } else {
                let scene = scenes::scene3(name, n, args.seed).expect("known scene");
                eprintln!("[{name} N={n}: generated in {:.0} ms]", ms(t));
                run_scene(args, &scene, n, |s, v| peer3::Baseline::new(s, v, args.margin, parallel))
            };
            summary.push(s);
        }
    }
    println!("\n## Summary (median ms per step, {} thread(s))\n", args.threads);
    println!(
        "| scene | N | frames | pairs/frame | fmbgrid mode | fmbgrid ms | ns/frame | best parry ms | parry variant | fmbgrid/parry |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for s in &summary {
        for (&detail, &fmb) in args.details.iter().zip(&s.fmbgrid) {
            let (p, which, ratio) = match &s.parry {
                Some((p, w)) => (format!("{p:.2}"), w.as_str(), format!("{:.2}", fmb / p)),
                None if args.variants.is_empty() => ("–".into(), "not run", "–".into()),
                None => ("–".into(), "skipped", "–".into()),
            };
            println!(
                "| {} | {} | {} | {:.3} | {detail:?} | {fmb:.2} | {:.0} | {p} | {which} | {ratio} |",
                s.scene,
                s.n,
                s.frames,
                s.pairs / s.frames as f64,
                fmb * 1e6 / s.frames as f64
            );
        }
    }
    results::report(args.csv.as_deref(), "scene_bench", &result_rows(args, &summary));
}

/// The summary as rows of data: one per fmbgrid mode and one for the best
/// parry variant.
fn result_rows(args: &Args, summary: &[Summary]) -> Vec<results::Row> {
    let mut rows = Vec::new();
    for s in summary {
        let per_frame = s.pairs / s.frames as f64;
        let row = |engine: &str, mode: String, ms: f64, ratio: Option<f64>| results::Row {
            scene: s.scene.clone(),
            n: s.n,
            frames: s.frames,
            threads: args.threads,
            engine: engine.to_string(),
            mode,
            median_ms: ms,
            pairs_per_frame: per_frame,
            ratio,
        };
        for (&detail, &fmb) in args.details.iter().zip(&s.fmbgrid) {
            rows.push(row("fmbgrid", format!("{detail:?}"), fmb, s.parry.as_ref().map(|(p, _)| fmb / p)));
        }
        if let Some((p, which)) = &s.parry {
            rows.push(row(which, "end poses or cast".into(), *p, Some(1.0)));
        }
    }
    rows
}

fn main() {
    let args = parse_args();
    threads::run_with_threads(args.threads, || run(&args));
}
