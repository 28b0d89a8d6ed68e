//! `fmbgrid-mpi`: a scene file stepped by a world split across MPI
//! processes (`mpirun -np N fmbgrid-mpi ...`).
//!
//! ```text
//! mpirun -np 4 fmbgrid-mpi run SCENE.toml [--steps N]    # timing summary on rank 0
//! mpirun -np 4 fmbgrid-mpi check SCENE.toml [--steps N]  # rank 0 also steps one World and compares
//! ```
//!
//! Every rank loads the scene and inserts every body; each keeps its
//! share (`fmbgrid::distributed`). `run` prints, on rank 0, ms per step
//! (the slowest rank's, median), contacts, ghost fraction, bytes
//! exchanged and load imbalance; `check` compares the gathered contacts
//! with a single `World`'s after every step, bit for bit, and exits with
//! 1 on any difference.
//!
//! An error of the distributed world is the same on every rank (see
//! `DistributedError`): each rank prints it with the time the failing call
//! took, and every rank exits with 1. A rank that panics ends the job
//! (`MpiComm::world` installs a panic hook that calls `MPI_Abort`). The
//! hidden options `--fault RANK:STAGE:SKIP`, `--panic RANK:STEP` and
//! `--kill RANK:STEP` make one rank fail, panic or die (`kill -9`) on
//! purpose, for `tests/mpi.rs`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use fmbgrid::distributed::{Comm, DistributedWorld, GlobalContact, MpiComm};
use fmbgrid::scene::Scene;
use fmbgrid::{Body, World};

/// A scene stepped by a world split across MPI processes.
#[derive(Parser, Debug)]
#[command(name = "fmbgrid-mpi", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Steps the scene and prints a summary on rank 0.
    Run {
        /// The scene file.
        path: PathBuf,
        /// Steps to run (default: the scene's `steps`).
        #[arg(long)]
        steps: Option<usize>,
        #[command(flatten)]
        faults: Faults,
    },
    /// Steps the scene and, on rank 0, one World holding every body;
    /// compares their contacts after every step.
    Check {
        /// The scene file.
        path: PathBuf,
        /// Steps to run (default: 5).
        #[arg(long, default_value_t = 5)]
        steps: usize,
        #[command(flatten)]
        faults: Faults,
    },
}

/// Failures made on purpose, for the fault tests.
#[derive(clap::Args, Debug, Default, Clone)]
struct Faults {
    /// RANK:STAGE:SKIP: rank RANK fails alone the SKIP+1th time it reaches
    /// STAGE (`fmbgrid::distributed::FAULT_STAGES`).
    #[arg(long, hide = true)]
    fault: Option<String>,
    /// RANK:STEP: rank RANK panics before step STEP (from 1).
    #[arg(long, hide = true)]
    panic: Option<String>,
    /// RANK:STEP: rank RANK kills itself (`kill -9`) before step STEP.
    #[arg(long, hide = true)]
    kill: Option<String>,
}

impl Faults {
    /// The rank and the rest of `RANK:REST`, when `RANK` is `rank`.
    fn mine(spec: &Option<String>, rank: usize) -> Option<&str> {
        let (r, rest) = spec.as_deref()?.split_once(':')?;
        (r.parse() == Ok(rank)).then_some(rest)
    }

    /// True when this rank should fail as `spec` says before step `step`.
    fn at_step(spec: &Option<String>, rank: usize, step: usize) -> bool {
        Self::mine(spec, rank).and_then(|s| s.parse::<usize>().ok()) == Some(step)
    }
}

fn main() -> ExitCode {
    let Some(universe) = mpi::initialize() else {
        eprintln!("fmbgrid-mpi: MPI could not be initialised");
        return ExitCode::FAILURE;
    };
    let comm = MpiComm::world(&universe);
    let cli = Cli::parse();
    let (path, steps, check, faults) = match cli.command {
        Command::Run { path, steps, faults } => (path, steps, false, faults),
        Command::Check { path, steps, faults } => (path, Some(steps), true, faults),
    };
    // Every rank reads the scene: an error is the same on all of them.
    let scene = match Scene::load(&path) {
        Ok(s) => s,
        Err(e) => {
            if comm.rank() == 0 {
                eprintln!("fmbgrid-mpi: {e}");
            }
            return ExitCode::FAILURE;
        }
    };
    let steps = steps.unwrap_or(scene.steps());
    let outcome = match scene.dimension() {
        2 => scene.build_2d().map_err(|e| e.to_string()).and_then(|w| go(comm, &scene, &w, steps, check, &faults)),
        _ => scene.build_3d().map_err(|e| e.to_string()).and_then(|w| go(comm, &scene, &w, steps, check, &faults)),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            // One write, so that the ranks' lines do not interleave.
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("fmbgrid-mpi: {e}\n").as_bytes());
            ExitCode::FAILURE
        }
    }
}

/// Steps the scene's bodies split across the ranks; true when every
/// check passed.
fn go<const D: usize>(
    comm: MpiComm,
    scene: &Scene,
    built: &World<D>,
    steps: usize,
    check: bool,
    faults: &Faults,
) -> Result<bool, String> {
    let bodies: Vec<Body<D>> = built.bodies().map(|(_, b)| b.clone()).collect();
    let (rank, ranks) = (comm.rank(), comm.size());
    let config = built.config();
    let mut world = DistributedWorld::<D, _>::new(comm, config);
    if let Some((stage, skip)) = Faults::mine(&faults.fault, rank).and_then(|s| s.split_once(':')) {
        world.inject_fault(stage, skip.parse().map_err(|_| format!("--fault: bad SKIP {skip}"))?);
    }
    // The same error on every rank, and how long the call took to say so.
    let error = |what: String, start: Instant, e: fmbgrid::distributed::DistributedError| {
        format!("rank {rank}: {what} failed after {:.1} ms: {e}", start.elapsed().as_secs_f64() * 1e3)
    };
    // One agreement for the whole scene, not one a body.
    let start = Instant::now();
    world.insert_many(bodies.iter().cloned()).map_err(|e| error("insert".to_owned(), start, e))?;
    // Rank 0's own world for `check`: the same bodies (the distributed
    // world took them all, so they are valid), compared step by step.
    let mut single = (check && rank == 0).then(|| {
        let mut w = World::<D>::new(config);
        let inserted = bodies.iter().all(|b| w.insert(b.clone()).is_ok());
        (w, inserted)
    });
    let (mut passed, mut failed) = (0, 0);
    let mut rows = Vec::new();
    for step in 0..steps {
        if Faults::at_step(&faults.panic, rank, step + 1) {
            panic!("rank {rank} panics before step {} on purpose", step + 1);
        }
        if Faults::at_step(&faults.kill, rank, step + 1) {
            let _ = std::process::Command::new("kill").args(["-9", &std::process::id().to_string()]).status();
        }
        let start = Instant::now();
        world.step(scene.dt()).map_err(|e| error(format!("step {}", step + 1), start, e))?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let st = world.stats();
        // Collective: every rank gathers, in check mode only.
        let contacts = if check { world.gather_contacts() } else { Vec::new() };
        let mine = world.contacts().len();
        if let Some((one, inserted)) = &mut single {
            // A failure here is rank 0's alone: counted, not returned, so
            // that every rank still reaches the collectives below.
            let same = *inserted && one.step(scene.dt()).is_ok() && contacts == canonical(one);
            if same {
                passed += 1;
            } else {
                failed += 1;
                eprintln!(
                    "step {}: {} contacts gathered, one world has {}",
                    step + 1,
                    contacts.len(),
                    one.contacts().len()
                );
            }
        }
        rows.push((ms, mine, st));
    }
    summary(&world, &rows, ranks);
    if check && rank == 0 {
        println!("check {} on {ranks} ranks: {passed} passed, {failed} failed", scene.name());
    }
    // Every rank exits alike: the verdict is rank 0's.
    let verdict = world_verdict(&world, failed == 0);
    Ok(verdict)
}

/// One World's contacts in the distributed world's terms: bodies by
/// insertion order (handles of a world that only inserted), sorted.
fn canonical<const D: usize>(world: &World<D>) -> Vec<GlobalContact<D>> {
    use fmbgrid::distributed::{GlobalFrame, GlobalHandle};
    let ids: std::collections::HashMap<_, u64> = world.bodies().enumerate().map(|(i, (h, _))| (h, i as u64)).collect();
    let frame = |f: fmbgrid::FrameId| GlobalFrame { body: GlobalHandle(ids[&f.body]), index: f.index };
    let mut out: Vec<GlobalContact<D>> = world
        .contacts()
        .iter()
        .map(|c| {
            let (a, b) = (frame(c.a), frame(c.b));
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            GlobalContact { a, b, aabb: c.aabb, time: c.time }
        })
        .collect();
    out.sort_by_key(|c| (c.a, c.b));
    out
}

/// Rank 0's verdict on every rank (a collective).
fn world_verdict<const D: usize, C: Comm>(world: &DistributedWorld<D, C>, ok: bool) -> bool {
    world.comm().all_gather(vec![u64::from(ok)]).iter().all(|w| w == &[1])
}

/// The per-step figures of every rank, printed by rank 0: the slowest
/// rank's time (it sets the pace), contacts, ghost frames against owned
/// frames, bytes sent, and the heaviest rank against the mean.
fn summary<const D: usize, C: Comm>(
    world: &DistributedWorld<D, C>,
    rows: &[(f64, usize, fmbgrid::distributed::StepStats)],
    ranks: usize,
) {
    let mine: Vec<u64> = rows
        .iter()
        .flat_map(|(ms, n, st)| {
            [ms.to_bits(), st.owned_frames as u64, st.ghost_frames as u64, st.words_sent as u64, *n as u64]
        })
        .collect();
    let all = world.comm().all_gather(mine);
    if world.comm().rank() != 0 || rows.is_empty() {
        return;
    }
    let at = |r: usize, step: usize, k: usize| all[r].get(5 * step + k).copied().unwrap_or(0);
    let mut slowest: Vec<f64> =
        (0..rows.len()).map(|s| (0..ranks).map(|r| f64::from_bits(at(r, s, 0))).fold(0.0, f64::max)).collect();
    slowest.sort_by(f64::total_cmp);
    let sum = |s: usize, k: usize| (0..ranks).map(|r| at(r, s, k)).sum::<u64>() as f64;
    let steps = rows.len() as f64;
    let owned: f64 = (0..rows.len()).map(|s| sum(s, 1)).sum::<f64>() / steps;
    let ghosts: f64 = (0..rows.len()).map(|s| sum(s, 2)).sum::<f64>() / steps;
    // The median: the first step's includes the initial split's migration.
    let mut bytes: Vec<f64> = (0..rows.len()).map(|s| 8.0 * sum(s, 3)).collect();
    bytes.sort_by(f64::total_cmp);
    let (first_bytes, bytes) = (8.0 * sum(0, 3), bytes[bytes.len() / 2]);
    let imbalance: f64 = (0..rows.len())
        .map(|s| (0..ranks).map(|r| at(r, s, 1)).max().unwrap_or(0) as f64 / (sum(s, 1) / ranks as f64).max(1.0))
        .sum::<f64>()
        / steps;
    // Each contact is owned by one rank: their sum is the world's.
    let contacts: f64 = (0..rows.len()).map(|s| sum(s, 4)).sum::<f64>() / steps;
    println!("ranks: {ranks}");
    println!("steps: {}", rows.len());
    println!(
        "ms per step (slowest rank): min {:.2} / median {:.2} / max {:.2}",
        slowest[0],
        slowest[slowest.len() / 2],
        slowest[slowest.len() - 1]
    );
    println!("contacts per step: {contacts:.1}");
    println!("frames owned (all ranks): {owned:.0}");
    println!("ghost fraction: {:.4} ({ghosts:.0} ghost frames a step)", ghosts / owned.max(1.0));
    println!("bytes exchanged per step: median {bytes:.0} (the first step, with the initial split: {first_bytes:.0})");
    println!("load imbalance (heaviest / mean): {imbalance:.3}");
}
