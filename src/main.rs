//! `fmbgrid`: runs a scene file and prints what it measured.
//!
//! ```text
//! fmbgrid                       # runs assets/scenes/default.toml
//! fmbgrid run SCENE.toml [--steps N] [--threads T] [--json FILE] [--detail exact|interval|candidates]
//!                        [--export DIR] [--export-steps a,b,c] [--tolerance DELTA] [--contacts FILE] [--quiet]
//! ```

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use fmbgrid::export::Exporter;
use fmbgrid::scene::{Observer, RunOptions, Scene, Snapshot, Summary, run};
use fmbgrid::{Contact, ContactDetail, FrameId};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Collision detection for frames (FMB + hashed grid): runs scene files.
#[derive(Parser, Debug)]
#[command(name = "fmbgrid", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Builds a scene from a TOML file and steps it, timing every step.
    Run(RunArgs),
}

#[derive(Args, Debug, Default)]
struct RunArgs {
    /// The scene file (see `fmbgrid::scene` for the format).
    path: PathBuf,
    /// Steps to run (default: the scene's `steps`).
    #[arg(long)]
    steps: Option<usize>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write pictures (2D: SVG + PNG, 3D: PLY + PNG) into this folder.
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
    /// 1-based steps to export (default: the last).
    #[arg(long, value_delimiter = ',', value_name = "a,b,c")]
    export_steps: Vec<usize>,
    /// No progress bar and no table (errors still go to stderr).
    #[arg(long)]
    quiet: bool,
    /// What each contact carries: exact boxes (default), exact intervals
    /// with the swept boxes' overlap, or the broad phase's candidates.
    #[arg(long, value_enum, default_value_t = Detail::Exact)]
    detail: Detail,
    /// Before each step, report the pairs of frames closer than this
    /// distance (overrides the scene's `tolerance`); pictures draw their
    /// closest points.
    #[arg(long, value_name = "DELTA", allow_negative_numbers = true)]
    tolerance: Option<f64>,
    /// Write every step's contacts to this file, one contact a line: step,
    /// the two frames (body index in insertion order, frame index in the
    /// body), the box (min, max) and the interval. JSON Lines, or CSV with
    /// a header when the name ends in `.csv`; numbers read back bit for bit.
    #[arg(long, value_name = "FILE")]
    contacts: Option<PathBuf>,
}

/// `--detail`: the world's `ContactDetail`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Detail {
    /// `ContactDetail::ExactBox`.
    #[default]
    Exact,
    /// `ContactDetail::Interval`.
    Interval,
    /// `ContactDetail::Candidates`.
    Candidates,
}

impl From<Detail> for ContactDetail {
    fn from(d: Detail) -> Self {
        match d {
            Detail::Exact => ContactDetail::ExactBox,
            Detail::Interval => ContactDetail::Interval,
            Detail::Candidates => ContactDetail::Candidates,
        }
    }
}

/// The default scene: next to the crate when run with cargo, else in the
/// current folder.
fn default_scene() -> PathBuf {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.toml");
    if crate_root.exists() { crate_root } else { PathBuf::from("assets/scenes/default.toml") }
}

/// Progress bar, exporter and contacts file.
struct Hooks {
    bar: Option<ProgressBar>,
    exporter: Option<Exporter>,
    contacts: Option<ContactsFile>,
}

/// `--contacts FILE`: where, and as CSV (with its header written yet) or
/// JSON Lines.
struct ContactsFile {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    csv: bool,
    header: bool,
}

impl ContactsFile {
    /// One line per contact of step `step`.
    fn write<const D: usize>(&mut self, step: usize, contacts: &[Contact<D>]) -> std::io::Result<()> {
        if self.csv && !self.header {
            let axes = &["x", "y", "z"][..D];
            let names = |what: &str| axes.iter().map(|a| format!("{what}_{a}")).collect::<Vec<_>>().join(",");
            writeln!(self.out, "step,a_body,a_frame,b_body,b_frame,{},{},t_enter,t_exit", names("min"), names("max"))?;
            self.header = true;
        }
        for c in contacts {
            if self.csv {
                // `{}` prints the shortest decimal that reads back the same bits.
                let nums = |v: &[f64]| v.iter().map(f64::to_string).collect::<Vec<_>>().join(",");
                let (a, b) = (c.a, c.b);
                let (min, max, time) = (nums(&c.aabb.min), nums(&c.aabb.max), nums(&c.time));
                let ids = format!("{},{},{},{}", a.body.index(), a.index, b.body.index(), b.index);
                writeln!(self.out, "{step},{ids},{min},{max},{time}")?;
            } else {
                let frame = |id: FrameId| serde_json::json!({ "body": id.body.index(), "frame": id.index });
                let line = serde_json::json!({
                    "step": step,
                    "a": frame(c.a),
                    "b": frame(c.b),
                    "min": c.aabb.min.to_vec(),
                    "max": c.aabb.max.to_vec(),
                    "time": c.time.to_vec(),
                });
                writeln!(self.out, "{line}")?;
            }
        }
        Ok(())
    }
}

impl Hooks {
    fn write_contacts<const D: usize>(&mut self, step: usize, contacts: &[Contact<D>]) -> Result<(), String> {
        let Some(file) = &mut self.contacts else { return Ok(()) };
        file.write(step, contacts).map_err(|e| format!("--contacts {}: {e}", file.path.display()))
    }
}

impl Observer for Hooks {
    fn progress(&mut self, done: usize, _total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
        }
    }

    fn snapshot_2d(&mut self, snapshot: &Snapshot<2>) -> Result<(), String> {
        self.exporter.as_mut().map_or(Ok(()), |e| e.snapshot_2d(snapshot))
    }

    fn snapshot_3d(&mut self, snapshot: &Snapshot<3>) -> Result<(), String> {
        self.exporter.as_mut().map_or(Ok(()), |e| e.snapshot_3d(snapshot))
    }

    fn contacts_2d(&mut self, step: usize, contacts: &[Contact<2>]) -> Result<(), String> {
        self.write_contacts(step, contacts)
    }

    fn contacts_3d(&mut self, step: usize, contacts: &[Contact<3>]) -> Result<(), String> {
        self.write_contacts(step, contacts)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Run(args)) => args,
        None => RunArgs { path: default_scene(), ..RunArgs::default() },
    };
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Most worker threads `--threads` accepts: far more than any machine's
/// cores, far fewer than would exhaust a process's threads or memory.
const MAX_THREADS: usize = 1024;

fn execute(args: &RunArgs) -> Result<(), String> {
    if let Some(d) = args.tolerance
        && !(d.is_finite() && d >= 0.0)
    {
        return Err(format!("--tolerance must be a finite number >= 0, got {d}"));
    }
    match args.threads {
        Some(0) => Err("--threads must be at least 1".into()),
        Some(t) if t > MAX_THREADS => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            Err(format!("--threads {t}: at most {MAX_THREADS} are supported (this machine has {cores} cores)"))
        }
        #[cfg(feature = "parallel")]
        Some(t) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| format!("--threads {t}: cannot start the threads: {e}"))?;
            pool.install(|| execute_here(args))
        }
        #[cfg(not(feature = "parallel"))]
        Some(t) if t > 1 => Err("--threads needs the `parallel` feature".into()),
        _ => execute_here(args),
    }
}

/// The outputs asked for can be written, before the run: the export
/// folder exists or can be created and takes a file, and the JSON file can
/// be written (an existing one is not truncated, a missing one is created
/// and removed again).
fn check_outputs(args: &RunArgs) -> Result<(), String> {
    if let Some(dir) = &args.export {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--export {}: cannot create the folder: {e}", dir.display()))?;
        let probe = dir.join(".fmbgrid-write-test");
        std::fs::write(&probe, b"")
            .map_err(|e| format!("--export {}: cannot write into the folder: {e}", dir.display()))?;
        let _ = std::fs::remove_file(&probe);
    }
    if let Some(path) = &args.json {
        let cannot = |e: std::io::Error| format!("--json {}: cannot write the file: {e}", path.display());
        if path.exists() {
            std::fs::OpenOptions::new().append(true).open(path).map_err(cannot)?;
        } else {
            std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(cannot)?;
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(())
}

fn execute_here(args: &RunArgs) -> Result<(), String> {
    let scene = Scene::load(&args.path).map_err(|e| e.to_string())?;
    let steps = args.steps.unwrap_or(scene.steps());
    let mut export_steps = args.export_steps.clone();
    if let Some(&bad) = export_steps.iter().find(|&&k| k == 0 || k > steps) {
        return Err(format!("--export-steps: step {bad} is not among the steps run (1 to {steps})"));
    }
    check_outputs(args)?;
    if args.export.is_some() && export_steps.is_empty() {
        export_steps.push(steps);
    }
    if !args.quiet {
        eprintln!(
            "{}: {}D, {} bodies from {} entries, {} steps of dt = {}",
            scene.file().display(),
            scene.dimension(),
            scene.body_count(),
            scene.spec().bodies.len(),
            steps,
            scene.dt()
        );
    }
    let show_bar = !args.quiet && std::io::stderr().is_terminal() && steps >= 10;
    let bar = show_bar.then(|| {
        let bar = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} steps ({eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    let contacts = match &args.contacts {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| format!("--contacts {}: cannot write the file: {e}", path.display()))?;
            let csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
            Some(ContactsFile { path: path.clone(), out: std::io::BufWriter::new(file), csv, header: false })
        }
        None => None,
    };
    let mut hooks = Hooks { bar, exporter: args.export.as_ref().map(Exporter::new), contacts };
    let options = RunOptions {
        steps: Some(steps),
        snapshot_steps: export_steps,
        detail: args.detail.into(),
        tolerance: args.tolerance,
    };
    let summary = run(&scene, &options, &mut hooks);
    if let Some(bar) = &hooks.bar {
        bar.finish_and_clear();
    }
    let summary = summary.map_err(|e| e.to_string())?;
    if let Some(file) = &mut hooks.contacts {
        file.out.flush().map_err(|e| format!("--contacts {}: {e}", file.path.display()))?;
    }
    if summary.parked > 0 {
        eprintln!(
            "warning: {} time(s) a body would have left the supported range and was parked (stopped in place)",
            summary.parked
        );
    }
    if !args.quiet {
        print_table(&summary);
        if let Some(e) = &hooks.exporter {
            for f in e.written() {
                println!("wrote {}", f.display());
            }
        }
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
        std::fs::write(path, json + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn print_table(s: &Summary) {
    let within = match s.tolerance {
        Some(d) => {
            format!("δ = {d}: mean {:.2}, max {} ({:.1} ms in all)", s.within_mean, s.within_max, s.within_ms_total)
        }
        None => "no tolerance asked".into(),
    };
    let rows: [(&str, String); 15] = [
        ("scene", format!("{} ({}D)", s.scene, s.dimension)),
        ("bodies", s.bodies.to_string()),
        ("frames", s.frames.to_string()),
        ("degenerate skipped", format!("{} (invalid: {})", s.degenerate_skipped, s.invalid_skipped)),
        ("steps", format!("{} (dt = {})", s.steps, s.dt)),
        ("pairs per step", format!("mean {:.2}, max {}", s.pairs_mean, s.pairs_max)),
        ("runaways parked", s.parked.to_string()),
        ("ms per step", format!("min {:.3}, median {:.3}, max {:.3}", s.ms_min, s.ms_median, s.ms_max)),
        ("ns per frame", format!("{:.1} (median step)", s.ns_per_frame)),
        ("total", format!("{:.1} ms stepping, {:.1} ms building", s.ms_total, s.build_ms)),
        ("cell size", format!("{:.4}", s.cell_size)),
        ("broad phase memory", format!("{:.2} MiB", s.broad_phase_bytes as f64 / (1024.0 * 1024.0))),
        ("threads", s.threads.to_string()),
        ("contact detail", s.detail.clone()),
        ("pairs within tolerance", within),
    ];
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("{k:<width$}  {v}");
    }
}
