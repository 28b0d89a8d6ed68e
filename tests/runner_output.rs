//! What the `fmbgrid` runner writes: `--contacts FILE` (every step's
//! contacts as JSON Lines) parsed back and compared, contact for contact
//! and bit for bit, with the library's own run of the same scene; and an
//! unwritable contacts file refused before the run.
//!
//! Run: `cargo test --release --test runner_output` (needs the `cli`
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

#[test]
fn contacts_file_equals_the_library_run() {
    let out = std::env::temp_dir().join(format!("fmbgrid-contacts-{}.jsonl", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_fmbgrid"))
        .args(["run", scene_path("default.toml").to_str().unwrap(), "--steps", "20", "--quiet", "--contacts"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let got: Vec<Line> = text.lines().map(parse).collect();
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
