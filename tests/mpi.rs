//! The distributed world under MPI (`mpirun -np 2` and `-np 4`, more
//! processes than this machine's cores): `fmbgrid-mpi check` steps each
//! scene split across the processes and, on rank 0, one `World` holding
//! every body, and compares the gathered contacts after every step, bit
//! for bit (each pair exactly once: the gathered list is strictly sorted).
//! The scenes: uniform 2D boxes in walls larger than a region, mixed
//! sizes 1:1000, a ground with crates, a mostly static field of boxes,
//! turning bodies, a
//! mesh scene, and a cluster in a corner (empty ranks) with bodies that
//! cross several regions in one step. Needs the `mpi` feature and an MPI
//! implementation (`.ci/run` installs Open MPI).
#![cfg(feature = "mpi")]

use std::process::Command;

/// `mpirun --oversubscribe -np NP fmbgrid-mpi ARGS`, under a time limit
/// (`timeout`: a run that hangs fails the test instead of CI): whether it
/// succeeded, its output, and how long it took.
fn mpirun_timed(np: usize, args: &[&str]) -> (bool, String, std::time::Duration) {
    let start = std::time::Instant::now();
    let out = Command::new("timeout")
        .args(["--kill-after=10", "120", "mpirun", "--oversubscribe", "-np", &np.to_string()])
        .arg(env!("CARGO_BIN_EXE_fmbgrid-mpi"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun runs (an MPI implementation is installed)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(124), "mpirun timed out:\n{text}");
    (out.status.success(), text, start.elapsed())
}

fn mpirun(np: usize, args: &[&str]) -> (bool, String) {
    let (ok, text, _) = mpirun_timed(np, args);
    (ok, text)
}

fn check(scene: &str, steps: usize) {
    for np in [2, 4] {
        let (ok, text) = mpirun(np, &["check", scene, "--steps", &steps.to_string()]);
        let verdict = format!("on {np} ranks: {steps} passed, 0 failed");
        assert!(ok && text.contains(&verdict), "{scene}, {np} ranks:\n{text}");
    }
}

#[test]
fn uniform_2d_boxes_in_walls() {
    check("assets/scenes/boxes_2d.toml", 8);
}

#[test]
fn mixed_sizes() {
    check("assets/scenes/tets_mixed.toml", 6);
}

#[test]
fn mostly_static_ground_with_crates() {
    check("assets/scenes/default.toml", 8);
}

#[test]
fn a_mostly_static_world() {
    check("tests/scenes/mpi_mostly_static.toml", 8);
}

#[test]
fn turning_bodies() {
    check("assets/scenes/tumbling.toml", 6);
}

#[test]
fn a_mesh_scene() {
    check("assets/scenes/bunny_rain.toml", 4);
}

#[test]
fn a_cluster_in_a_corner_and_bodies_crossing_regions() {
    check("tests/scenes/mpi_clustered.toml", 8);
}

#[test]
fn a_bad_scene_fails_on_every_rank() {
    let (ok, text) = mpirun(2, &["check", "tests/scenes/no_such_scene.toml"]);
    assert!(!ok && text.contains("no_such_scene"), "{text}");
}

#[test]
fn run_prints_the_summary_on_rank_0() {
    let (ok, text) = mpirun(2, &["run", "assets/scenes/default.toml", "--steps", "3"]);
    assert!(ok, "{text}");
    for line in ["ranks: 2", "ms per step", "ghost fraction", "bytes exchanged per step", "load imbalance"] {
        assert_eq!(text.matches(line).count(), 1, "'{line}' once, from rank 0:\n{text}");
    }
}

/// A failure injected on one rank of four at each stage of a run: every
/// rank prints the same error (naming that rank and the stage), each
/// within a second of entering the failing call, and the job exits
/// non-zero (every rank exits with 1; none is left waiting).
#[test]
fn a_fault_on_one_rank_ends_every_rank_with_the_same_error() {
    let scene = "tests/scenes/mpi_clustered.toml";
    let faults = [
        ("insert", 3, 10),
        ("runaways", 1, 2),
        ("split", 2, 0),
        ("migrate-send", 3, 1),
        ("migrate-receive", 0, 2),
        ("ghosts-send", 1, 3),
        ("ghosts-receive", 2, 1),
        ("step", 3, 2),
    ];
    for (stage, rank, skip) in faults {
        let spec = format!("{rank}:{stage}:{skip}");
        let (ok, text, took) = mpirun_timed(4, &["check", scene, "--steps", "6", "--fault", &spec]);
        assert!(!ok, "{spec}: the job succeeded:\n{text}");
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("fmbgrid-mpi: rank ")).collect();
        assert_eq!(lines.len(), 4, "{spec}: one error line a rank:\n{text}");
        let (who, cause) = (format!("rank {rank}"), format!("a fault injected at {stage}"));
        let mut ms_max = 0.0_f64;
        for line in &lines {
            // "fmbgrid-mpi: rank R: WHAT failed after MS ms: ERROR"
            let (head, error) = line.split_once(" ms: ").expect("the error line's form");
            assert!(error.contains(&who) && error.contains(&cause), "{spec}: {line}");
            assert_eq!(error, lines[0].split_once(" ms: ").unwrap().1, "{spec}: the same error everywhere");
            let ms: f64 = head.rsplit(' ').next().and_then(|x| x.parse().ok()).expect("milliseconds");
            ms_max = ms_max.max(ms);
        }
        assert!(ms_max < 1000.0, "{spec}: a rank took {ms_max} ms to return the error");
        eprintln!("{spec}: every rank returned within {ms_max:.1} ms; the job exited non-zero after {took:?}");
    }
}

/// A failure of the local step on one rank of four, the run going on
/// (`--retry`): every rank prints the same error (naming that rank and
/// the stage) within a second; every body, whichever rank owns it, is as
/// it was before the failed call; the step made again and the steps
/// after it give one `World`'s contacts, bit for bit; the job exits zero.
#[test]
fn a_failed_local_step_changes_nothing_and_the_run_goes_on() {
    let args = ["check", "tests/scenes/mpi_clustered.toml", "--steps", "6", "--fault", "3:step:2", "--retry"];
    let (ok, text, took) = mpirun_timed(4, &args);
    assert!(ok, "the job failed:\n{text}");
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("fmbgrid-mpi: rank ")).collect();
    assert_eq!(lines.len(), 4, "one error line a rank:\n{text}");
    for line in &lines {
        let (head, error) = line.split_once(" ms: ").expect("the error line's form");
        assert!(head.contains("step 3 failed"), "{line}");
        assert!(error.contains("rank 3") && error.contains("a fault injected at step"), "{line}");
        assert_eq!(error, lines[0].split_once(" ms: ").unwrap().1, "the same error everywhere");
        let ms: f64 = head.rsplit(' ').next().and_then(|x| x.parse().ok()).expect("milliseconds");
        assert!(ms < 1000.0, "{line}");
    }
    assert!(text.contains("after the failed step 3: every body as it was"), "{text}");
    assert!(text.contains("6 passed, 0 failed"), "{text}");
    eprintln!("every rank returned the error, nothing changed, the run went on; the job took {took:?}");
}

/// A rank that panics, or is killed, ends the whole job promptly with a
/// non-zero status (the panic hook calls `MPI_Abort`; `mpirun` ends a
/// job whose process died).
#[test]
fn a_rank_that_panics_or_is_killed_ends_the_job() {
    for (flag, words) in [("--panic", "panics before step 2 on purpose"), ("--kill", "")] {
        let (ok, text, took) =
            mpirun_timed(4, &["check", "tests/scenes/mpi_clustered.toml", "--steps", "6", flag, "2:2"]);
        assert!(!ok && text.contains(words), "{flag}:\n{text}");
        assert!(took < std::time::Duration::from_secs(30), "{flag}: the job took {took:?}");
        eprintln!("{flag}: the job ended, non-zero, after {took:?}");
    }
}

/// A rank that returns early leaves the others waiting in their next
/// collective; with a deadline (`MpiComm::with_deadline`), a rank that has
/// waited that long names the call it was in and ends the job, non-zero,
/// instead of hanging.
#[test]
fn a_rank_that_leaves_early_ends_the_job_past_the_deadline() {
    let args = ["check", "tests/scenes/mpi_clustered.toml", "--steps", "6", "--leave", "1:3", "--deadline", "2"];
    let (ok, text, took) = mpirun_timed(3, &args);
    assert!(!ok && text.contains("rank 1 leaves before step 3"), "{text}");
    assert!(text.contains("`step` waited more than 2s for the other ranks"), "{text}");
    assert!(took < std::time::Duration::from_secs(30), "the job took {took:?}");
    eprintln!("the job ended, non-zero, after {took:?}");
}
