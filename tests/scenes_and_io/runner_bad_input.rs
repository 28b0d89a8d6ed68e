//! Hostile input to the scene files and the `fmbgrid` runner (issue 9):
//! each case exits with code 1 and the message that names what the user
//! wrote, or runs in bounded memory; nothing panics or aborts. The runner
//! runs under a 2 GB address-space cap (`ulimit -v`), so that an attempt to
//! allocate in proportion to a hostile count shows as a failure here, not
//! as a slow machine.
//!
//! Run: `cargo test --release --test suite scenes_and_io::runner_bad_input::` (needs the `cli`
//! feature, on by default, and a POSIX `sh`).
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fmbgrid::scene::{RunOptions, Scene, run};

/// Address-space cap of the runner, in KiB.
const CAP_KIB: u64 = 2_000_000;

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fmbgrid-runner-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The runner under the memory cap.
fn runner(args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("ulimit -v {CAP_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_fmbgrid"))
        .args(args)
        .stdin(Stdio::null());
    c
}

/// Runs to the end: exit code and stderr.
fn finish(args: &[&str]) -> (Option<i32>, String) {
    let Output { status, stderr, .. } = runner(args).output().unwrap();
    (status.code(), String::from_utf8_lossy(&stderr).into_owned())
}

/// The runner exits with 1 and exactly `message` on stderr.
#[track_caller]
fn refused(args: &[&str], message: &str) {
    let (code, stderr) = finish(args);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim_end(), format!("error: {message}"));
}

const BOX3: &str = "dimension = 3\ndt = 0.1\nsteps = 2\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0, 1.0]\n";
const BOX2: &str = "dimension = 2\ndt = 0.1\nsteps = 2\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\n";

#[test]
fn counts_past_the_limit_are_refused_before_any_work() {
    let dir = folder("counts");
    let scatter = write(
        &dir,
        "scatter.toml",
        &format!("{BOX3}scatter = {{ count = 100000000000, min = [0.0, 0.0, 0.0], max = [1.0, 1.0, 1.0] }}\n"),
    );
    refused(
        &["run", scatter.to_str().unwrap()],
        &format!(
            "{}:7:1: body 0: scatter.count = 100000000000 asks for more bodies than the 67108864 a scene may have",
            scatter.display()
        ),
    );
    // 2^32 × 2^32 wraps to 0 in 64 bits: refused, not an empty scene.
    let wraps = write(
        &dir,
        "wraps.toml",
        &format!("{BOX2}grid = {{ count = [4294967296, 4294967296], spacing = [1.0, 1.0] }}\n"),
    );
    refused(
        &["run", wraps.to_str().unwrap()],
        &format!(
            "{}:7:1: body 0: grid.count [4294967296, 4294967296] asks for more bodies than the 67108864 a scene may have",
            wraps.display()
        ),
    );
    // Entries each under the limit, together over it.
    let grid = "grid = { count = [6000, 6000], spacing = [3.0, 3.0] }\n";
    let two =
        write(&dir, "two.toml", &format!("{BOX2}{grid}[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\n{grid}"));
    refused(
        &["run", two.to_str().unwrap()],
        &format!(
            "{}:11:1: body 1: grid.count [6000, 6000] makes 36000000 bodies: with the entries before, 72000000, more than the 67108864 a scene may have",
            two.display()
        ),
    );
}

#[test]
fn a_scene_larger_than_memory_is_a_clear_error() {
    let dir = folder("memory");
    // Under the limit of bodies, but ~30 GB, then ~2.5 GB with the bodies'
    // own frames and the step's buffers: more than the cap allows.
    for count in [60_000_000, 3_000_000] {
        let big = write(
            &dir,
            "big.toml",
            &format!("{BOX3}scatter = {{ count = {count}, min = [0.0, 0.0, 0.0], max = [1e4, 1e4, 1e4] }}\n"),
        );
        let (code, stderr) = finish(&["run", big.to_str().unwrap(), "--quiet"]);
        assert_eq!(code, Some(1), "{stderr}");
        let expected = format!("error: {}:4:1: body 0: not enough memory: about ", big.display());
        assert!(stderr.starts_with(&expected) && stderr.contains("B or more could not be allocated"), "{stderr}");
    }
}

/// A tolerance that puts every pair of 30,000 boxes within reach asks for
/// ~43 GB of pairs: a clear error at the step, not an abort.
#[test]
fn a_tolerance_beyond_memory_is_a_clear_error() {
    let dir = folder("tolerance_memory");
    let scene = write(
        &dir,
        "many.toml",
        &format!(
            "{BOX2}velocity = [1.0, 0.0]
scatter = {{ count = 30000, min = [0.0, 0.0], max = [100.0, 100.0] }}
"
        ),
    );
    let (code, stderr) = finish(&["run", scene.to_str().unwrap(), "--tolerance", "1e9", "--quiet"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("step 1") && stderr.contains("not enough memory: about "), "{stderr}");
}

/// Huge step counts run in constant memory (nothing is allocated per
/// step): still running under the cap after a while, its resident memory
/// not growing between two samples, then stopped.
#[test]
fn huge_step_counts_run_in_bounded_memory() {
    let dir = folder("steps");
    let scene = write(&dir, "small.toml", BOX2);
    for steps in ["18446744073709551615", "100000000000"] {
        let mut child = runner(&["run", scene.to_str().unwrap(), "--steps", steps, "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let mut samples = Vec::new();
        while started.elapsed() < Duration::from_millis(2000) {
            if let Some(status) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                panic!("--steps {steps}: ended with {status}: {}", String::from_utf8_lossy(&out.stderr));
            }
            std::thread::sleep(Duration::from_millis(50));
            if started.elapsed() > Duration::from_millis(500) && samples.len() < 2 {
                samples.extend(resident_kib(child.id()));
            }
        }
        let last = resident_kib(child.id());
        child.kill().unwrap();
        // Tens of thousands of steps ran between the samples.
        if let (Some(&first), Some(last)) = (samples.first(), last) {
            assert!(last < first + 4096, "--steps {steps}: resident memory grew from {first} to {last} KiB");
        }
        let _ = child.wait();
    }
}

/// `VmRSS` of a process, in KiB (Linux; `None` elsewhere).
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn absurd_thread_counts_are_refused() {
    let dir = folder("threads");
    let scene = write(&dir, "small.toml", BOX2);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    refused(
        &["run", scene.to_str().unwrap(), "--threads", "100000"],
        &format!("--threads 100000: at most 1024 are supported (this machine has {cores} cores)"),
    );
    refused(&["run", scene.to_str().unwrap(), "--threads", "0"], "--threads must be at least 1");
}

#[test]
fn bad_tolerances_are_refused() {
    let dir = folder("tolerance");
    let scene = write(&dir, "small.toml", BOX2);
    refused(&["run", scene.to_str().unwrap(), "--tolerance", "-1"], "--tolerance must be a finite number >= 0, got -1");
    refused(
        &["run", scene.to_str().unwrap(), "--tolerance", "NaN"],
        "--tolerance must be a finite number >= 0, got NaN",
    );
}

#[test]
fn unwritable_outputs_fail_before_the_run() {
    let dir = folder("outputs");
    // 10^5 steps: the run would take a while if it started.
    let scene = write(&dir, "long.toml", &BOX2.replace("steps = 2", "steps = 100000"));
    let file = write(&dir, "a-file", "");
    let started = Instant::now();
    refused(
        &["run", scene.to_str().unwrap(), "--export", "/proc/no-such-folder"],
        "--export /proc/no-such-folder: cannot create the folder: No such file or directory (os error 2)",
    );
    let inside = file.join("x");
    refused(
        &["run", scene.to_str().unwrap(), "--json", inside.to_str().unwrap()],
        &format!("--json {}: cannot write the file: Not a directory (os error 20)", inside.display()),
    );
    assert!(started.elapsed() < Duration::from_secs(10), "the run started before the check");
}

/// A runaway body is parked: the run goes on, warns, and counts it.
#[test]
fn a_runaway_body_does_not_stop_the_run() {
    let dir = folder("runaway");
    let text = format!(
        "{BOX2}velocity = [1e14, 0.0]\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\nposition = [1.5, 0.0]\n"
    );
    let scene = write(&dir, "runaway.toml", &text);
    let (code, stderr) = finish(&["run", scene.to_str().unwrap(), "--quiet"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "warning: 1 time(s) a body would have left the supported range and was parked (stopped in place)"
    );
    let summary = run(&Scene::parse(&text, ".").unwrap(), &RunOptions::default(), &mut ()).unwrap();
    assert_eq!((summary.steps, summary.parked, summary.pairs_max), (2, 1, 1));
}

fn parse_err(text: &str) -> String {
    Scene::parse(text, ".").map(|_| ()).unwrap_err().to_string()
}

#[test]
fn messages_name_what_was_written() {
    // A zero rotation axis is not a number out of range.
    assert_eq!(
        parse_err(&format!("{BOX3}rotation = [0.0, 0.0, 0.0, 1.0]\n")),
        "<string>:7:1: body 0: the rotation axis is zero: it needs a direction (any non-zero length)"
    );
    // The key as written (`position`, not "pose translation"), the number
    // in exponent form (not 301 digits).
    assert_eq!(
        parse_err(&format!("{BOX3}position = [1e300, 0.0, 0.0]\n")),
        "<string>:7:1: body 0: position[0] is 1e300: it must be a finite number of magnitude at most 1e15"
    );
    // `[body]` for `[[body]]`.
    assert_eq!(
        parse_err("dimension = 2\ndt = 0.1\n[body]\nshape = \"box\"\n"),
        "<string>:3:1: `[body]` is a single table: bodies are an array of tables, written `[[body]]`"
    );
    // `[[ body ]]` is a header too: its entry's errors are on their lines.
    assert_eq!(
        parse_err("dimension = 2\ndt = 0.1\n\n\n  [[ body ]]\n  shape = \"box\"\n  half_extents = [1.0, -1.0]\n"),
        "<string>:7:3: body 0: half_extents must be positive and finite, got -1"
    );
    assert_eq!(
        parse_err("dimension = 2\ndt = 0.1\n\n  [[ body ]]\n"),
        "<string>:4:3: body 0: needs a `shape` or an `asset`"
    );
    // Derived values name the keys they come from.
    assert_eq!(
        parse_err(&format!("{BOX2}grid = {{ count = [3, 1], spacing = [6e14, 0.0] }}\n")),
        "<string>:7:1: body 0: grid.spacing: the last copy's position (position + (grid.count - 1) · grid.spacing) \
         reaches 1.2e15: at most 1e15 in magnitude is supported"
    );
    assert_eq!(
        parse_err(&format!(
            "{BOX2}velocity = [9e14, 0.0]\nscatter = {{ count = 2, min = [0.0, 0.0], max = [1.0, 1.0], velocity_range = [0.0, 2e14] }}\n"
        )),
        "<string>:8:1: body 0: scatter.velocity_range: the velocities (velocity + the range) reaches 1.1e15: \
         at most 1e15 in magnitude is supported"
    );
    assert_eq!(
        parse_err(&format!("{BOX2}scale = 1e300\n")),
        "<string>:7:1: body 0: scale is 1e300: it must be a finite number of magnitude at most 1e15"
    );
    // A multi-line array's rows are not table headers: the key after it is
    // still found.
    assert_eq!(
        parse_err(
            "dimension = 2\ndt = 0.1\n[[body]]\nshape = \"triangle\"\nvertices = [\n  [0.0, 0.0],\n  [1.0, 0.0],\n  [0.0, 1.0],\n]\nvelocity = [nan, 0.0]\n"
        ),
        "<string>:10:1: body 0: velocity[0] is NaN: it must be a finite number of magnitude at most 1e15"
    );
    // A unit box far out: out of range for its size, not "degenerate".
    assert_eq!(
        parse_err(
            "dimension = 2\ndt = 0.1\n[[body]]\nshape = \"aabb\"\nmin = [9.99e14, 0.0]\nmax = [9.990000000000010e14, 1.0]\n"
        ),
        "<string>:5:1: body 0: min, max: frame box reaches 9.99e14, beyond the supported ±1e12 for a frame of its size \
         (|x| <= 1e15 and <= 1e12 × its shortest component)"
    );
}

#[test]
fn meshes_that_are_not_meshes_say_where() {
    use fmbgrid::mesh;
    // Plain text passed as OBJ.
    let e = mesh::parse_obj(b"Dear user,\nthis is a letter.\n").unwrap_err();
    assert_eq!(e.to_string(), "line 1: `Dear` is not an OBJ statement (is this an OBJ file?)");
    let e = mesh::parse_obj(b"# only a comment\n\n").unwrap_err();
    assert_eq!(e.to_string(), "no vertex (`v` line): not an OBJ mesh");
    // ASCII STL errors have a line.
    let stl = b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 x\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
    assert_eq!(mesh::parse_stl(stl).unwrap_err().to_string(), "line 5: vertex: \"x\" is not a number");
    let two = b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\nendsolid t\n";
    assert_eq!(mesh::parse_stl(two).unwrap_err().to_string(), "line 6: a facet's loop has 2 vertices, 3 are needed");
    // A truncated MSH says more than "invalid MSH file:".
    let msh = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mesh/truncated.msh")).unwrap();
    for cut in [msh.len(), msh.len() / 2, 20] {
        let e = mesh::parse_msh(&msh[..cut]).unwrap_err().to_string();
        let detail = e.split("invalid MSH file:").nth(1).unwrap_or("");
        assert!(detail.trim().len() > 10, "cut {cut}: {e}");
    }
}
