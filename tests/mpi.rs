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

fn mpirun(np: usize, args: &[&str]) -> (bool, String) {
    let out = Command::new("mpirun")
        .args(["--oversubscribe", "-np", &np.to_string(), env!("CARGO_BIN_EXE_fmbgrid-mpi")])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun runs (an MPI implementation is installed)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
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
