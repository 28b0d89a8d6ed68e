//! Benchmark results as data (`benches/results/README.md`): rows appended
//! to a CSV file with the machine, commit and date of the run. Shared by
//! the benchmark programs (included with `#[path]`).
#![allow(dead_code)]

use std::io::Write;

/// Columns of every results file.
pub const HEADER: &str =
    "machine,commit,date,bench,scene,n,frames,threads,engine,mode,median_ms,pairs_per_frame,ratio_to_parry";

/// One measured engine on one scene.
pub struct Row {
    pub scene: String,
    pub n: usize,
    pub frames: usize,
    pub threads: usize,
    pub engine: String,
    pub mode: String,
    pub median_ms: f64,
    pub pairs_per_frame: f64,
    /// `median_ms` over the best parry's, when parry ran.
    pub ratio: Option<f64>,
}

/// This machine as a folder name: the CPU model and the number of CPUs
/// (`/proc/cpuinfo`), lower case, non-alphanumerics as `-`.
pub fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info.lines().find_map(|l| l.strip_prefix("model name")).and_then(|l| l.split(':').nth(1));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let name = format!("{}-{cpus}cpu", model.unwrap_or("unknown").trim());
    let name: String = name.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    name.split('-').filter(|w| !w.is_empty()).collect::<Vec<_>>().join("-")
}

/// The output of a command, or `unknown`.
fn command_output(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or("unknown".into(), |o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Appends `lines` (CSV fields after the common `machine,commit,date`) to
/// `path`, a file with columns `header` of its own (written first when the
/// file is new): for programs whose rows are not steps of a scene.
pub fn append_lines(path: &str, header: &str, lines: &[String]) -> std::io::Result<()> {
    if let Some(dir) = std::path::Path::new(path).parent() {
        std::fs::create_dir_all(dir)?;
    }
    let new = !std::path::Path::new(path).exists();
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    if new {
        writeln!(file, "machine,commit,date,{header}")?;
    }
    let (machine, commit, date) =
        (machine(), command_output("git", &["rev-parse", "--short", "HEAD"]), command_output("date", &["-u", "+%F"]));
    for line in lines {
        writeln!(file, "{machine},{commit},{date},{line}")?;
    }
    Ok(())
}

/// [`append_lines`] when asked, saying where (or why not).
pub fn report_lines(path: Option<&str>, header: &str, lines: &[String]) {
    if let Some(path) = path {
        match append_lines(path, header, lines) {
            Ok(()) => eprintln!("[results appended to {path}]"),
            Err(e) => eprintln!("[could not write {path}: {e}]"),
        }
    }
}

/// Appends `rows` of program `bench` to `path` (a header first when the
/// file is new).
pub fn append(path: &str, bench: &str, rows: &[Row]) -> std::io::Result<()> {
    let lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let ratio = r.ratio.map_or(String::new(), |x| format!("{x:.4}"));
            format!(
                "{bench},{},{},{},{},{},{},{:.3},{:.4},{ratio}",
                r.scene, r.n, r.frames, r.threads, r.engine, r.mode, r.median_ms, r.pairs_per_frame
            )
        })
        .collect();
    let columns = HEADER.strip_prefix("machine,commit,date,").unwrap_or(HEADER);
    append_lines(path, columns, &lines)
}

/// Appends `rows` to `path` when asked, and says where (or why not).
pub fn report(path: Option<&str>, bench: &str, rows: &[Row]) {
    if let Some(path) = path {
        match append(path, bench, rows) {
            Ok(()) => eprintln!("[results appended to {path}]"),
            Err(e) => eprintln!("[could not write {path}: {e}]"),
        }
    }
}
