//! `World::step` allocates nothing once warm: a counting global allocator
//! over a simulation loop of 80 steps (the moving store is re-sorted every
//! 32), with body pairs starting and ending, and large bodies; in each
//! contact mode (`ContactDetail::ExactBox`, `Interval`, `Candidates`).
//!
//! Its own test binary, since it replaces the global allocator; the counter
//! is process-wide, so workers' allocations count too. The steps run inside
//! a rayon worker, so the parallel path's joins use the worker's own deque:
//! called from outside a pool, `step` hands its job to rayon's global
//! injector, which allocates a 1.5 KB block every 63 jobs (rayon's, not
//! ours; documented on `World::step`).

mod support;
use support::world as world_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use fmbgrid::{ContactDetail, Motion, Pose, World, WorldConfig};
use world_support::*;

/// Counts allocations and reallocations while `COUNTING` is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// The counters are global: one test counts at a time.
static SERIAL: Mutex<()> = Mutex::new(());
/// Sizes of the first allocations counted (the new size, for a realloc),
/// for the failure message.
static SIZES: [AtomicUsize; 16] = [const { AtomicUsize::new(0) }; 16];

/// Counts one allocation of `size` bytes.
fn count(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let k = ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        if let Some(slot) = SIZES.get(k) {
            slot.store(size, Ordering::Relaxed);
        }
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the counters are
// atomics, which do not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: as for `alloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Sizes of the first allocations counted.
fn first_sizes() -> Vec<usize> {
    SIZES.iter().map(|x| x.load(Ordering::Relaxed)).take_while(|&x| x > 0).collect()
}

/// Allocations made by `steps` steps of `world`. The same steps run twice
/// before, to warm up: forwards, then back with every velocity reversed;
/// so every buffer has already held the largest step counted.
fn allocations_of_steps<const D: usize>(world: &mut World<D>, dt: f64, steps: usize) -> (usize, usize) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    in_worker(|| {
        for _ in 0..2 {
            for _ in 0..steps {
                world.step(dt).unwrap();
            }
            reverse(world);
        }
        let mut contacts = 0;
        ALLOCATIONS.store(0, Ordering::Relaxed);
        SIZES.iter().for_each(|x| x.store(0, Ordering::Relaxed));
        COUNTING.store(true, Ordering::Relaxed);
        for _ in 0..steps {
            contacts += world.step(dt).unwrap().len();
        }
        COUNTING.store(false, Ordering::Relaxed);
        (ALLOCATIONS.load(Ordering::Relaxed), contacts)
    })
}

/// Runs `f` in a rayon worker of a two-thread pool (with the `parallel`
/// feature; on this thread without).
fn in_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    #[cfg(feature = "parallel")]
    return rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(f);
    #[cfg(not(feature = "parallel"))]
    f()
}

/// Reverses the velocity of every moving body.
fn reverse<const D: usize>(world: &mut World<D>) {
    let moving: Vec<_> =
        world.bodies().filter(|(_, b)| b.motion() == Motion::Moving).map(|(h, b)| (h, b.velocity())).collect();
    for (h, v) in moving {
        world.set_velocity(h, v.map(|x| -x)).unwrap();
    }
}

/// A scene of moving and fixed bodies of 1–3 frames, with collision filters,
/// plus a moving and a fixed body of 100–150 frames (the body-level pruning
/// of meshes); its body pairs start and end over the loop.
fn scene<const D: usize>(seed: u64, detail: ContactDetail) -> World<D> {
    let mut p = SceneParams::uniform(3_000, D);
    p.max_frames_per_body = 3;
    p.filters = true;
    let mut bodies = random_scene::<D>(&mut rng(seed), &p);
    // Two large bodies (meshes go through the body-level pruning).
    let mut r = rng(seed + 1);
    for k in 0..2 {
        let mut big = random_body::<D>(&mut r, [p.region * 0.5; D], 4.0, 150, k == 1, 0.2);
        big.frames.truncate(150);
        while big.frames.len() < 100 {
            big = random_body::<D>(&mut r, [p.region * 0.5; D], 4.0, 150, k == 1, 0.2);
        }
        bodies.push(big);
    }
    let mut world = World::new(WorldConfig::default().with_contact_detail(detail));
    build_world(&mut world, &bodies);
    world
}

/// Every contact mode: what a contact carries changes the narrow phase, not
/// the buffers.
const MODES: [ContactDetail; 3] = [ContactDetail::ExactBox, ContactDetail::Interval, ContactDetail::Candidates];

/// 80 warm steps of the seeded scene in every mode: the loop collides and
/// nothing is allocated.
fn warm_steps_allocate_nothing<const D: usize>(seed: u64) {
    for detail in MODES {
        let mut world = scene::<D>(seed, detail);
        let (allocations, contacts) = allocations_of_steps(&mut world, 0.25, 80);
        assert!(contacts > 1_000, "{detail:?}: the loop must collide: {contacts} contacts");
        assert_eq!(
            allocations,
            0,
            "{detail:?}: {allocations} allocations in 80 warm steps, of {:?} bytes…",
            first_sizes()
        );
    }
}

/// A world whose moving bodies mostly rest (one in 20 moves, small bodies
/// only): its steps read their candidates off the kept pairs, dropping and
/// looking up the movers' pairs, and allocate nothing once warm either.
#[test]
fn a_resting_world_keeping_its_pairs_allocates_nothing() {
    for detail in MODES {
        let p = SceneParams { max_frames_per_body: 3, filters: true, ..SceneParams::uniform(3_000, 3) };
        let mut bodies = random_scene::<3>(&mut rng(12), &p);
        for (k, b) in bodies.iter_mut().enumerate() {
            if k % 20 != 0 {
                b.velocity = [0.0; 3];
            }
        }
        let mut world = World::new(WorldConfig::default().with_contact_detail(detail));
        build_world(&mut world, &bodies);
        let (allocations, contacts) = allocations_of_steps(&mut world, 0.25, 80);
        assert!(world.kept_pairs_used(), "{detail:?}: the kept pairs must be in use");
        assert!(contacts > 1_000, "{detail:?}: the loop must collide: {contacts} contacts");
        assert_eq!(
            allocations,
            0,
            "{detail:?}: {allocations} allocations in 80 warm steps, of {:?} bytes…",
            first_sizes()
        );
    }
}

#[test]
fn a_warm_step_allocates_nothing_3d() {
    warm_steps_allocate_nothing::<3>(7);
}

#[test]
fn a_warm_step_allocates_nothing_2d() {
    warm_steps_allocate_nothing::<2>(8);
}

/// A scene large enough for the parallel build's paths: the cell list's
/// gather (8,192 moving frames and more) and the parallel sort of the body
/// pairs (32,768 contacts and more), on two threads.
#[test]
fn large_parallel_steps_allocate_nothing() {
    let mut p = SceneParams::uniform(24_000, 3);
    p.region *= 0.6;
    p.fixed = 0.0;
    let mut world = World::<3>::new(WorldConfig::default().with_contact_detail(ContactDetail::Candidates));
    build_world(&mut world, &random_scene::<3>(&mut rng(21), &p));
    let steps = 4;
    let (allocations, contacts) = allocations_of_steps(&mut world, 0.25, steps);
    assert!(contacts >= steps * 32_768, "the parallel sort must run: {} contacts a step", contacts / steps);
    assert_eq!(allocations, 0, "{allocations} allocations in {steps} warm steps, of {:?} bytes…", first_sizes());
}

/// Reacting to contacts in the loop (`World::step_into`, then a velocity
/// change per contact) allocates nothing once the buffers have grown.
#[test]
fn reacting_to_contacts_allocates_nothing() {
    let mut world = scene::<3>(9, ContactDetail::ExactBox);
    let mut contacts = Vec::new();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (allocations, seen) = in_worker(|| {
        let react = |world: &mut World<3>, contacts: &mut Vec<fmbgrid::Contact<3>>| {
            world.step_into(0.25, contacts).unwrap();
            for c in contacts.iter() {
                for id in [c.a, c.b] {
                    if let Ok(v) = world.body(id.body).map(|b| b.velocity()) {
                        // Fixed bodies refuse a velocity: that is fine here.
                        let _ = world.set_velocity(id.body, v.map(|x| -x));
                    }
                }
            }
            contacts.len()
        };
        // Long enough for both contact buffers and the event lists to
        // reach their largest sizes (bounces make more events than steps).
        for _ in 0..400 {
            react(&mut world, &mut contacts);
        }
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        let seen: usize = (0..80).map(|_| react(&mut world, &mut contacts)).sum();
        COUNTING.store(false, Ordering::Relaxed);
        (ALLOCATIONS.load(Ordering::Relaxed), seen)
    });
    assert!(seen > 1_000, "the loop must collide: {seen} contacts");
    assert_eq!(allocations, 0, "{allocations} allocations in 80 warm steps, of {:?} bytes…", first_sizes());
}

/// A loop that drives every moving body by its pose allocates nothing once
/// warm: one `World::set_pose` a body each step (as kinematic loops do), or
/// one `World::set_poses` with all of them (as the Python bindings do; the
/// caller keeps its list of poses between steps).
#[test]
fn driving_bodies_by_their_poses_allocates_nothing() {
    for bulk in [false, true] {
        let mut world = scene::<3>(10, ContactDetail::ExactBox);
        let moving: Vec<_> = world.bodies().filter(|(_, b)| b.motion() == Motion::Moving).map(|(h, _)| h).collect();
        let mut poses = Vec::with_capacity(moving.len());
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (allocations, seen) = in_worker(|| {
            // Back and forth along x by 0.05 a step, whatever the velocity.
            let mut drive = |world: &mut World<3>, k: usize| {
                let shift = if k.is_multiple_of(2) { 0.05 } else { -0.05 };
                poses.clear();
                for &h in &moving {
                    let pose = world.body(h).unwrap().pose();
                    let t = pose.translation();
                    poses.push((h, Pose::new(pose.linear(), [t[0] + shift, t[1], t[2]]).unwrap()));
                }
                if bulk {
                    world.set_poses(&poses).unwrap();
                } else {
                    for &(h, pose) in &poses {
                        world.set_pose(h, pose).unwrap();
                    }
                }
                world.step(0.25).unwrap().len()
            };
            for k in 0..40 {
                drive(&mut world, k);
            }
            ALLOCATIONS.store(0, Ordering::Relaxed);
            SIZES.iter().for_each(|x| x.store(0, Ordering::Relaxed));
            COUNTING.store(true, Ordering::Relaxed);
            let seen: usize = (0..20).map(|k| drive(&mut world, k)).sum();
            COUNTING.store(false, Ordering::Relaxed);
            (ALLOCATIONS.load(Ordering::Relaxed), seen)
        });
        let how = if bulk { "set_poses" } else { "set_pose" };
        assert!(seen > 1_000, "{how}: the loop must collide: {seen} contacts");
        assert_eq!(allocations, 0, "{how}: {allocations} allocations in 20 warm steps, of {:?} bytes…", first_sizes());
    }
}
