//! Determinism of `World::step`: the same scene and the same operations give
//! the same contacts in the same order, bit for bit, whatever the number of
//! threads (1, 2 and 3 threads with the `parallel` feature, each in its own
//! rayon pool), and across two runs of the same seed; and also the same
//! body pairs, events, poses and placed frames.
//!
//! The same across thread counts in the cheaper contact modes too
//! (`ContactDetail::Interval` and `Candidates`), and in `Interval` mode the
//! contacts after `World::exact_boxes`.
//!
//! Scenes have 4,000 moving frames (several parallel chunks of the step)
//! plus 1,000 fixed ones, in 2D and 3D, with multi-frame bodies and
//! filters, over five steps with removals, insertions, re-poses and new
//! velocities between them.
//!
//! Run: `cargo test --release --test suite world::determinism::`.

use crate::support::world as world_support;

use fmbgrid::{ContactDetail, FrameId, World, WorldConfig};
use world_support::{SceneParams, TestRng, build_world, contact_bits, random_edits, random_scene, rng, scene_body};

/// Time steps of each run.
const STEPS: [f64; 5] = [1.0, 0.5, 0.0, 1.0, 0.25];

/// Everything a run produces, numbers as bit patterns.
#[derive(Debug, PartialEq, Eq)]
struct Trace {
    /// Per step, the contacts in the order the world returned them.
    contacts: Vec<Vec<(FrameId, FrameId, Vec<u64>)>>,
    /// Per step, `body_pairs()` and `events()` as text.
    pairs_and_events: Vec<String>,
    /// In `Interval` mode, per step, the contacts after `exact_boxes` of
    /// the moving ones.
    refined: Vec<Vec<(FrameId, FrameId, Vec<u64>)>>,
    /// Final poses and placed frames as text (exact `Debug` of `f64`).
    end: String,
}

fn scene(dim: usize) -> SceneParams {
    // 5,000 frames, 80% moving, up to 2 frames per body, filters on half of them.
    let p = SceneParams::uniform(5000, dim);
    SceneParams { fixed: 0.2, max_frames_per_body: 2, filters: true, ..p }
}

/// Runs the seeded scene and records its trace.
fn run<const D: usize>(seed: u64) -> Trace {
    run_in::<D>(seed, ContactDetail::ExactBox)
}

/// Runs the seeded scene in a contact mode and records its trace.
fn run_in<const D: usize>(seed: u64, detail: ContactDetail) -> Trace {
    let p = scene(D);
    let mut r = rng(seed);
    let bodies = random_scene::<D>(&mut r, &p);
    let mut world = World::<D>::new(WorldConfig::default().with_contact_detail(detail));
    build_world(&mut world, &bodies);
    let moving: usize = bodies.iter().filter(|b| !b.fixed).map(|b| b.frames.len()).sum();
    assert!(moving > 3000, "only {moving} moving frames");
    let mut fresh = |r: &mut TestRng| scene_body(r, &p);
    let mut trace =
        Trace { contacts: Vec::new(), pairs_and_events: Vec::new(), refined: Vec::new(), end: String::new() };
    for (k, &dt) in STEPS.iter().enumerate() {
        if k > 0 {
            random_edits(&mut world, &mut r, &mut fresh, 0.02);
        }
        let contacts = world.step(dt).expect("valid step");
        trace.contacts.push(contacts.iter().map(contact_bits).collect());
        trace.pairs_and_events.push(format!("{:?}\n{:?}", world.body_pairs(), world.events()));
        if detail == ContactDetail::Interval {
            let refined = world.exact_boxes(|c| c.time != [0.0, 1.0]).expect("contacts are current");
            trace.refined.push(refined.iter().map(contact_bits).collect());
        }
    }
    trace.end = world_support::snapshot(&world);
    let total: usize = trace.contacts.iter().map(Vec::len).sum();
    assert!(total > 1000, "only {total} contacts: the scene is too sparse to test the order");
    trace
}

/// The first step where two traces differ, for the failure message.
fn first_difference(a: &Trace, b: &Trace) -> String {
    for (k, (x, y)) in a.contacts.iter().zip(&b.contacts).enumerate() {
        if x != y {
            let at = x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(x.len().min(y.len()));
            return format!(
                "step {k}: {} vs {} contacts, first difference at position {at}: {:?} vs {:?}",
                x.len(),
                y.len(),
                x.get(at),
                y.get(at)
            );
        }
    }
    if a.pairs_and_events != b.pairs_and_events {
        return "body pairs or events differ".into();
    }
    if a.refined != b.refined {
        return "contacts after exact_boxes differ".into();
    }
    "final state differs".into()
}

fn same_across_runs<const D: usize>(seed: u64) {
    let a = run::<D>(seed);
    let b = run::<D>(seed);
    assert!(a == b, "{D}D seed {seed}: two runs differ: {}", first_difference(&a, &b));
}

#[test]
fn same_across_runs_3d() {
    same_across_runs::<3>(7);
}

#[test]
fn same_across_runs_2d() {
    same_across_runs::<2>(8);
}

#[cfg(feature = "parallel")]
fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool").install(f)
}

#[cfg(feature = "parallel")]
fn same_across_thread_counts<const D: usize>(seed: u64) {
    let one = in_pool(1, || run::<D>(seed));
    for threads in [2, 3] {
        let many = in_pool(threads, || run::<D>(seed));
        assert!(one == many, "{D}D seed {seed}: 1 thread and {threads} differ: {}", first_difference(&one, &many));
    }
}

#[cfg(feature = "parallel")]
#[test]
fn same_with_1_2_and_3_threads_3d() {
    same_across_thread_counts::<3>(11);
}

#[cfg(feature = "parallel")]
#[test]
fn same_with_1_2_and_3_threads_2d() {
    same_across_thread_counts::<2>(12);
}

/// The cheaper contact modes: the same contacts (intervals and boxes of
/// the swept boxes' overlap, or the candidates) in the same order, and in
/// `Interval` mode the same exact boxes from `exact_boxes`.
#[cfg(feature = "parallel")]
fn same_across_thread_counts_in_modes<const D: usize>(seed: u64) {
    for detail in [ContactDetail::Interval, ContactDetail::Candidates] {
        let one = in_pool(1, || run_in::<D>(seed, detail));
        for threads in [2, 3] {
            let many = in_pool(threads, || run_in::<D>(seed, detail));
            assert!(
                one == many,
                "{D}D seed {seed} {detail:?}: 1 thread and {threads} differ: {}",
                first_difference(&one, &many)
            );
        }
    }
}

#[cfg(feature = "parallel")]
#[test]
fn same_with_1_2_and_3_threads_in_cheaper_modes_3d() {
    same_across_thread_counts_in_modes::<3>(13);
}

#[cfg(feature = "parallel")]
#[test]
fn same_with_1_2_and_3_threads_in_cheaper_modes_2d() {
    same_across_thread_counts_in_modes::<2>(14);
}
