//! What the `fmbgrid` runner writes: `--contacts FILE` (every step's
//! contacts as JSON Lines, or CSV for a `.csv` name) parsed back and
//! compared, contact for contact and bit for bit, with the library's own
//! run of the same scene; and an unwritable contacts file refused before
//! the run.
//!
//! Run: `cargo test --release --test suite scenes_and_io::runner_output::` (needs the `cli`
//! feature, on by default).
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Command;

use fmbgrid::scene::Scene;

fn scene_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes").join(name)
}

/// `(step, body a, frame a, body b, frame b, min, max, time)` of a line.
type Line = (u64, u64, u64, u64, u64, Vec<f64>, Vec<f64>, Vec<f64>);

fn parse(line: &str) -> Line {
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let n = |x: &serde_json::Value| x.as_u64().unwrap();
    let list = |x: &serde_json::Value| x.as_array().unwrap().iter().map(|y| y.as_f64().unwrap()).collect::<Vec<_>>();
    (
        n(&v["step"]),
        n(&v["a"]["body"]),
        n(&v["a"]["frame"]),
        n(&v["b"]["body"]),
        n(&v["b"]["frame"]),
        list(&v["min"]),
        list(&v["max"]),
        list(&v["time"]),
    )
}

/// A CSV line: `step,a_body,a_frame,b_body,b_frame,min…,max…,t_enter,t_exit`.
fn parse_csv(line: &str) -> Line {
    let f: Vec<&str> = line.split(',').collect();
    assert_eq!(f.len(), 13, "{line}");
    let n = |k: usize| f[k].parse::<u64>().unwrap_or_else(|e| panic!("{e}: {line}"));
    let x = |r: std::ops::Range<usize>| f[r].iter().map(|s| s.parse::<f64>().unwrap()).collect::<Vec<_>>();
    (n(0), n(1), n(2), n(3), n(4), x(5..8), x(8..11), x(11..13))
}

#[test]
fn contacts_file_equals_the_library_run() {
    contacts_file_as(".jsonl", |text| text.lines().map(parse).collect());
}

#[test]
fn csv_contacts_file_equals_the_library_run() {
    contacts_file_as(".csv", |text| {
        let mut lines = text.lines();
        let header = "step,a_body,a_frame,b_body,b_frame,min_x,min_y,min_z,max_x,max_y,max_z,t_enter,t_exit";
        assert_eq!(lines.next(), Some(header));
        lines.map(parse_csv).collect()
    });
}

/// The default scene's first 20 steps written to a contacts file named
/// `*<suffix>`, read back by `read`, equal the library's contacts.
fn contacts_file_as(suffix: &str, read: impl Fn(&str) -> Vec<Line>) {
    let out = std::env::temp_dir().join(format!("fmbgrid-contacts-{}{suffix}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_fmbgrid"))
        .args(["run", scene_path("default.toml").to_str().unwrap(), "--steps", "20", "--quiet", "--contacts"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let got = read(&text);
    let scene = Scene::load(scene_path("default.toml")).unwrap();
    let mut world = scene.build_3d().unwrap();
    let mut want = Vec::new();
    for step in 1..=20u64 {
        for c in world.step(scene.dt()).unwrap() {
            let (a, b) = (c.a, c.b);
            let id = |x: u32| u64::from(x);
            want.push((
                step,
                id(a.body.index()),
                id(a.index),
                id(b.body.index()),
                id(b.index),
                c.aabb.min.to_vec(),
                c.aabb.max.to_vec(),
                c.time.to_vec(),
            ));
        }
    }
    assert!(want.len() > 100, "{}", want.len());
    if let Some(k) = (0..got.len().min(want.len())).find(|&k| got[k] != want[k]) {
        panic!("contact {k} differs:\n runner  {:?}\n library {:?}", got[k], want[k]);
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn an_unwritable_contacts_file_is_refused_before_the_run() {
    let output = Command::new(env!("CARGO_BIN_EXE_fmbgrid"))
        .args([
            "run",
            scene_path("default.toml").to_str().unwrap(),
            "--quiet",
            "--contacts",
            "/nonexistent-folder/c.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--contacts /nonexistent-folder/c.jsonl: cannot write the file"), "{stderr}");
}
