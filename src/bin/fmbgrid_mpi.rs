//! `fmbgrid-mpi`: a scene file stepped by a world split across MPI
//! processes (`mpirun -np N fmbgrid-mpi ...`).
//!
//! ```text
//! mpirun -np 4 fmbgrid-mpi run SCENE.toml [--steps N]    # timing summary on rank 0
//! mpirun -np 4 fmbgrid-mpi check SCENE.toml [--steps N]  # rank 0 also steps one World and compares
//! ```
//!
//! Rank 0 alone reads and builds the scene and sends each body once to
//! the rank that keeps it (`DistributedWorld::insert_from`); the other
//! ranks get the few numbers they need (dimension, dt, steps, cell size,
//! name) from rank 0. `run` prints, on rank 0, ms per step
//! (the slowest rank's, median), contacts, ghost fraction, bytes
//! exchanged and load imbalance; `check` compares the gathered contacts
//! with a single `World`'s after every step, bit for bit, and exits with
//! 1 on any difference.
//!
//! An error of the distributed world is the same on every rank (see
//! `DistributedError`): each rank prints it with the time the failing call
//! took, and every rank exits with 1. A rank that panics ends the job
//! (`MpiComm::world` installs a panic hook that calls `MPI_Abort`). The
//! hidden options `--fault RANK:STAGE:SKIP`, `--panic RANK:STEP`,
//! `--kill RANK:STEP` and `--leave RANK:STEP` make one rank fail, panic,
//! die (`kill -9`) or return early on purpose, for `tests/mpi.rs`; with
//! `--retry` a failed step is not the end: every rank checks that no body
//! changed, then steps again. A rank that returns early leaves the others
//! waiting in their next collective, unless `--deadline SECONDS` is given:
//! then a rank that waited that long in one collective names its call and
//! ends the job.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use fmbgrid::distributed::{Comm, DistributedWorld, GlobalContact, GlobalHandle, MpiComm};
use fmbgrid::scene::Scene;
use fmbgrid::{Body, ContactDetail, World, WorldConfig};

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
        /// SECONDS: a rank that waits longer than this in one collective
        /// names the call it was in and ends the job (`MpiComm::with_deadline`).
        #[arg(long)]
        deadline: Option<f64>,
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
        /// SECONDS: as `run --deadline`.
        #[arg(long)]
        deadline: Option<f64>,
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
    /// RANK:STEP: rank RANK returns early (its world dropped, MPI
    /// finalized) before step STEP: the others wait for it.
    #[arg(long, hide = true)]
    leave: Option<String>,
    /// After a failed step, go on: check that every body is as it was
    /// before the call, then make the step again.
    #[arg(long, hide = true)]
    retry: bool,
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

/// Ends this process if MPI's finalization (when `main` returns and the
/// universe drops) has not ended it within `limit`: a rank that returned
/// early waits there for the others, and when they end the job past their
/// deadline `mpirun` does not always end that rank (one run in four here).
fn bound_finalize(rank: usize, limit: std::time::Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        eprintln!("fmbgrid-mpi: rank {rank}: MPI's finalization waited more than {limit:?}: ending the job");
        let me = std::process::id().to_string();
        let _ = std::process::Command::new("kill").args(["-9", &me]).status();
    });
}

fn main() -> ExitCode {
    let Some(universe) = mpi::initialize() else {
        eprintln!("fmbgrid-mpi: MPI could not be initialised");
        return ExitCode::FAILURE;
    };
    let comm = MpiComm::world(&universe);
    let cli = Cli::parse();
    let (path, steps, check, faults, deadline) = match cli.command {
        Command::Run { path, steps, deadline, faults } => (path, steps, false, faults, deadline),
        Command::Check { path, steps, deadline, faults } => (path, Some(steps), true, faults, deadline),
    };
    let comm = match deadline.map(std::time::Duration::try_from_secs_f64) {
        None => comm,
        Some(Ok(limit)) if !limit.is_zero() => comm.with_deadline(limit),
        Some(_) => {
            eprintln!("fmbgrid-mpi: --deadline takes a positive number of seconds");
            return ExitCode::FAILURE;
        }
    };
    // Rank 0 alone reads and builds the scene; the others learn what they
    // need (dimension, dt, steps, cell size, name, or the error) in one
    // small gather, and get their bodies from rank 0, each once.
    let built = (comm.rank() == 0).then(|| load(&path));
    let head = match &built {
        Some(Ok((head, _))) => head.words(),
        Some(Err(e)) => [vec![1], text_words(e)].concat(),
        None => Vec::new(),
    };
    let head = match Head::from_words(comm.all_gather(head).first().map_or(&[][..], |w| &w[..])) {
        Ok(head) => head,
        Err(e) => {
            if comm.rank() == 0 {
                eprintln!("fmbgrid-mpi: {e}");
            }
            return ExitCode::FAILURE;
        }
    };
    let steps = steps.unwrap_or(head.steps);
    let rank = comm.rank();
    let outcome = match built.and_then(Result::ok).map(|(_, b)| b) {
        Some(Built::Two(bodies)) => go(comm, &head, bodies, steps, check, &faults),
        Some(Built::Three(bodies)) => go(comm, &head, bodies, steps, check, &faults),
        None if head.dimension == 2 => go::<2>(comm, &head, Vec::new(), steps, check, &faults),
        None => go::<3>(comm, &head, Vec::new(), steps, check, &faults),
    };
    if let Some(limit) = deadline.and_then(|s| std::time::Duration::try_from_secs_f64(s).ok()) {
        bound_finalize(rank, limit);
    }
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

/// A scene's bodies, built by rank 0 (the built world itself is dropped).
enum Built {
    Two(Vec<Body<2>>),
    Three(Vec<Body<3>>),
}

/// What every rank needs of the scene besides its bodies.
struct Head {
    dimension: usize,
    dt: f64,
    steps: usize,
    cell_size: Option<f64>,
    name: String,
}

impl Head {
    /// As words: 0 (no error), then the fields, then the name's bytes.
    fn words(&self) -> Vec<u64> {
        let cell = self.cell_size.map_or([0, 0], |c| [1, c.to_bits()]);
        let fields = [0, self.dimension as u64, self.dt.to_bits(), self.steps as u64, cell[0], cell[1]];
        [&fields[..], &text_words(&self.name)].concat()
    }

    /// The head, or rank 0's error, from rank 0's words.
    fn from_words(w: &[u64]) -> Result<Head, String> {
        match w {
            [0, dimension, dt, steps, has_cell, cell, name @ ..] => Ok(Head {
                dimension: *dimension as usize,
                dt: f64::from_bits(*dt),
                steps: *steps as usize,
                cell_size: (*has_cell == 1).then(|| f64::from_bits(*cell)),
                name: text_from_words(name),
            }),
            [1, text @ ..] => Err(text_from_words(text)),
            _ => Err("rank 0 sent no scene".to_owned()),
        }
    }

    /// The world's configuration, as the scene builds it.
    fn config(&self) -> WorldConfig {
        WorldConfig { cell_size: self.cell_size, detail: ContactDetail::ExactBox, ..WorldConfig::default() }
    }
}

/// Reads and builds the scene (rank 0).
fn load(path: &std::path::Path) -> Result<(Head, Built), String> {
    let scene = Scene::load(path).map_err(|e| e.to_string())?;
    let (built, cell_size) = match scene.dimension() {
        2 => {
            let w = scene.build_2d().map_err(|e| e.to_string())?;
            (Built::Two(bodies_of(&w)), w.config().cell_size)
        }
        _ => {
            let w = scene.build_3d().map_err(|e| e.to_string())?;
            (Built::Three(bodies_of(&w)), w.config().cell_size)
        }
    };
    let head = Head {
        dimension: scene.dimension(),
        dt: scene.dt(),
        steps: scene.steps(),
        cell_size,
        name: scene.name().to_owned(),
    };
    Ok((head, built))
}

fn bodies_of<const D: usize>(world: &World<D>) -> Vec<Body<D>> {
    world.bodies().map(|(_, b)| b.clone()).collect()
}

/// A text as words (its bytes, eight a word).
fn text_words(text: &str) -> Vec<u64> {
    text.as_bytes().chunks(8).map(|c| c.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b))).collect()
}

fn text_from_words(words: &[u64]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).filter(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Steps the scene's bodies split across the ranks; true when every
/// check passed.
fn go<const D: usize>(
    comm: MpiComm,
    head: &Head,
    bodies: Vec<Body<D>>,
    steps: usize,
    check: bool,
    faults: &Faults,
) -> Result<bool, String> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let config = head.config();
    let mut world = DistributedWorld::<D, _>::new(comm, config);
    if let Some((stage, skip)) = Faults::mine(&faults.fault, rank).and_then(|s| s.split_once(':')) {
        world.inject_fault(stage, skip.parse().map_err(|_| format!("--fault: bad SKIP {skip}"))?);
    }
    // The same error on every rank, and how long the call took to say so.
    let error = |what: String, start: Instant, e: fmbgrid::distributed::DistributedError| {
        format!("rank {rank}: {what} failed after {:.1} ms: {e}", start.elapsed().as_secs_f64() * 1e3)
    };
    // Rank 0 sends each body once, to the rank that keeps it (one
    // agreement for the whole scene). Rank 0 keeps the list for `check`.
    let start = Instant::now();
    let kept = if check { bodies.clone() } else { Vec::new() };
    let handles = world.insert_from(0, bodies).map_err(|e| error("insert".to_owned(), start, e))?;
    let bodies = kept;
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
        if Faults::at_step(&faults.leave, rank, step + 1) {
            eprintln!("rank {rank} leaves before step {} on purpose", step + 1);
            return Ok(true);
        }
        let before = faults.retry.then(|| bodies_state(&world, &handles));
        let start = Instant::now();
        if let Err(e) = world.step(head.dt) {
            let e = error(format!("step {}", step + 1), start, e);
            let Some(before) = before else { return Err(e) };
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("fmbgrid-mpi: {e}\n").as_bytes());
            let same = bodies_state(&world, &handles) == before;
            if rank == 0 {
                let what = if same { "every body as it was" } else { "a body changed" };
                println!("after the failed step {}: {what}", step + 1);
            }
            failed += usize::from(!same);
            world.step(head.dt).map_err(|e| error(format!("step {} again", step + 1), start, e))?;
        }
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let st = world.stats();
        // Collective: every rank gathers, in check mode only.
        let contacts = if check { world.gather_contacts() } else { Vec::new() };
        let mine = world.contacts().len();
        if let Some((one, inserted)) = &mut single {
            // A failure here is rank 0's alone: counted, not returned, so
            // that every rank still reaches the collectives below.
            let same = *inserted && one.step(head.dt).is_ok() && contacts == canonical(one);
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
        println!("check {} on {ranks} ranks: {passed} passed, {failed} failed", head.name);
    }
    // Every rank exits alike: the verdict is rank 0's.
    let verdict = world_verdict(&world, failed == 0);
    Ok(verdict)
}

/// Every body's pose and motion, whichever rank owns it, as (id, hash of
/// their bits) sorted by id, on every rank (collective).
fn bodies_state<const D: usize, C: Comm>(world: &DistributedWorld<D, C>, handles: &[GlobalHandle]) -> Vec<[u64; 2]> {
    use std::hash::{Hash, Hasher};
    let mut mine = Vec::new();
    for &h in handles {
        if let Some(b) = world.body(h) {
            // Debug prints each f64 so that it reads back exactly.
            let mut hasher = std::hash::DefaultHasher::new();
            format!("{:?}", (b.pose(), b.velocity(), b.angular_velocity())).hash(&mut hasher);
            mine.extend([h.0, hasher.finish()]);
        }
    }
    let mut all: Vec<[u64; 2]> = world.comm().all_gather(mine).concat().chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    all.sort_unstable();
    all
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
