//! Fuzz target: scene files. Any text goes to `Scene::parse`; a scene it
//! accepts is built and run for at most 3 steps (when its declared size is
//! small enough for a fuzzing iteration). Errors are fine; a panic, an
//! abort or a hang is a crash.
//!
//! `cargo fuzz run scene_file` (see `fuzz/README.md`).
#![no_main]

use fmbgrid::scene::{RunOptions, Scene, run};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(scene) = Scene::parse(text, "/nonexistent") else { return };
    // Sizes the library checks before building are exercised by `parse`;
    // running a million bodies per input would only slow the fuzzer.
    if scene.body_count() > 2_000 {
        return;
    }
    let options = RunOptions { steps: Some(scene.steps().min(3)), ..RunOptions::default() };
    let _ = run(&scene, &options, &mut ());
});
