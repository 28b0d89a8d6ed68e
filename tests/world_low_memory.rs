//! Low memory is an error, never an abort: `World::step` under an
//! allocation cap returns `WorldError::OutOfMemory` with nothing changed,
//! or its contacts; its commit never fails.
//!
//! A capping global allocator refuses any allocation that would take the
//! live heap past `CAP`. For each cap, a fresh world steps a few times with
//! the cap set just above its live heap plus an offset, the offset rising
//! a slice at a time until no step is refused: every allocation a step
//! makes is met by a refusal at some offset. A refused step is then run
//! again with no cap and must give what an uncapped twin gives, bit for bit
//! (the refusal lost nothing). An abort ("memory allocation of N bytes
//! failed") kills this test binary: the test fails.
//!
//! The capped steps are those of a loop under way, whose contacts grow
//! (movers driving into a dense fixed block: what grows is what the
//! contacts decide), those of a fresh world's first steps (which build
//! the broad phase's stores, lists and grids), and those of a crowd of
//! movers meeting each other, slow and fast (the pair set's look-ups and
//! rebuilds, its persistent grid).
//!
//! Its own test binary, since it replaces the global allocator; one test
//! at a time holds the cap (`SERIAL`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use fmbgrid::{Body, Contact, ContactDetail, Frame, World, WorldConfig, WorldError};

/// Refuses allocations past `CAP` bytes of live heap.
struct Capped;

/// Bytes allocated and not yet freed, by every thread.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most live bytes an allocation may leave; `usize::MAX`: no cap.
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Allocations refused since the last reset.
static REFUSED: AtomicUsize = AtomicUsize::new(0);
/// The cap is global: one test holds it at a time.
static SERIAL: Mutex<()> = Mutex::new(());

thread_local! {
    /// True on the threads the cap applies to (`in_worker`'s): the test
    /// harness's own threads, printing another test's outcome, are not
    /// the library's.
    static CAPPED: Cell<bool> = const { Cell::new(false) };
}

/// Whether `grow` more bytes fit under the cap; counts them if so.
fn admit(grow: usize) -> bool {
    let capped = CAPPED.try_with(Cell::get).unwrap_or(false);
    let cap = if capped { CAP.load(Ordering::Relaxed) } else { usize::MAX };
    let live = LIVE.fetch_add(grow, Ordering::Relaxed);
    if cap != usize::MAX && live.saturating_add(grow) > cap {
        LIVE.fetch_sub(grow, Ordering::Relaxed);
        REFUSED.fetch_add(1, Ordering::Relaxed);
        return false;
    }
    true
}

// SAFETY: every call that is admitted is forwarded unchanged to `System`;
// a refusal returns null, which `GlobalAlloc` allows for any failure. The
// counters are atomics, which do not allocate.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !admit(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            LIVE.fetch_sub(new_size.saturating_sub(old), Ordering::Relaxed);
        } else if new_size < old {
            LIVE.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Capped = Capped;

/// Runs `f` in a rayon worker of a two-thread pool made before any cap,
/// its threads started (with the `parallel` feature; on this thread
/// without): the pool's threads and the injector's blocks are rayon's
/// allocations, not ours. The cap applies to these threads only.
fn in_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    #[cfg(feature = "parallel")]
    {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        // Every thread runs this once started: none starts under a cap.
        pool.broadcast(|_| CAPPED.set(true));
        pool.install(f)
    }
    #[cfg(not(feature = "parallel"))]
    {
        CAPPED.set(true);
        let r = f();
        CAPPED.set(false);
        r
    }
}

/// A contact as bits, to compare two worlds' answers exactly.
fn bits<const D: usize>(contacts: &[Contact<D>]) -> Vec<String> {
    contacts
        .iter()
        .map(|c| {
            let b: Vec<u64> = c.aabb.min.iter().chain(&c.aabb.max).chain(&c.time).map(|x| x.to_bits()).collect();
            format!("{:?} {:?} {b:?}", c.a, c.b)
        })
        .collect()
}

/// A mostly static scene whose contacts grow step after step: a dense
/// block of fixed boxes (a lattice of spacing 1.2, boxes of side 1), and
/// sparse small movers (spacing 3, side 0.5, no two ever meet) driving
/// into it one unit a step. Their sweeps stay the same: the buffers sized
/// by the bodies (lists, grids, stores) are made by the first steps, and
/// what grows later is what the contacts decide: the near lists of fixed
/// frames, the candidates, the contacts, the body pairs and events.
fn block<const D: usize>(detail: ContactDetail) -> World<D> {
    let mut world = World::new(WorldConfig::default().with_contact_detail(detail));
    let across = if D == 2 { 30 } else { 9 };
    for o in lattice::<D>(std::array::from_fn(|d| if d == 0 { 17 } else { across }), 1.2, 12.0) {
        world.insert(Body::fixed(vec![cube(o, 1.0)])).unwrap();
    }
    let rows = if D == 2 { 12 } else { 4 };
    for o in lattice::<D>(std::array::from_fn(|d| if d == 0 { 3 } else { rows }), 3.0, 0.0) {
        let o: [f64; D] = std::array::from_fn(|d| o[d] + 0.35);
        let v = std::array::from_fn(|d| if d == 0 { 2.0 } else { 0.0 });
        world.insert(Body::moving(vec![cube(o, 0.5)]).with_velocity(v)).unwrap();
    }
    world
}

/// The points of a lattice of `counts` points a side, `spacing` apart, its
/// first axis from `from`.
fn lattice<const D: usize>(counts: [usize; D], spacing: f64, from: f64) -> impl Iterator<Item = [f64; D]> {
    let total: usize = counts.iter().product();
    (0..total).map(move |mut k| {
        std::array::from_fn(|d| {
            let i = k % counts[d];
            k /= counts[d];
            (if d == 0 { from } else { 0.0 }) + spacing * i as f64
        })
    })
}

/// An axis-aligned cube.
fn cube<const D: usize>(origin: [f64; D], side: f64) -> Frame<D> {
    Frame::<D>::cuboid(origin, std::array::from_fn(|i| std::array::from_fn(|j| if i == j { side } else { 0.0 })))
        .unwrap()
}

/// A crowd of movers meeting each other: a lattice of cubes whose rows
/// drive through one another, at `speed` (0.05: most stay in their fat
/// boxes, the pair set persistent; 1.0: every one leaves its fat box each
/// step, the pair set rebuilt), with a fixed floor under them.
fn crowd<const D: usize>(detail: ContactDetail, speed: f64) -> World<D> {
    let mut world = World::new(WorldConfig::default().with_contact_detail(detail));
    let across = if D == 2 { 24 } else { 8 };
    for (k, o) in lattice::<D>(std::array::from_fn(|_| across), 1.1, 0.0).enumerate() {
        let v = std::array::from_fn(|d| if d == 0 { if k % 2 == 0 { speed } else { -speed } } else { 0.0 });
        let side = 0.6 + 0.1 * (k % 5) as f64;
        world.insert(Body::moving(vec![cube(o, side)]).with_velocity(v)).unwrap();
    }
    for o in lattice::<D>(std::array::from_fn(|d| if d == D - 1 { 1 } else { across }), 1.1, 0.0) {
        let o: [f64; D] = std::array::from_fn(|d| if d == D - 1 { -1.0 } else { o[d] });
        world.insert(Body::fixed(vec![cube(o, 1.2)])).unwrap();
    }
    world
}

/// [`crowd`] with every third mover spinning about the vertical: the
/// turns remembered in the commit.
fn spinning_crowd(detail: ContactDetail) -> World<3> {
    let mut world = crowd::<3>(detail, 0.05);
    let movers: Vec<_> = world.bodies().filter(|(_, b)| b.velocity() != [0.0; 3]).map(|(h, _)| h).collect();
    for h in movers.into_iter().step_by(3) {
        world.set_angular_velocity(h, [0.0, 0.0, 0.2]).unwrap();
    }
    world
}

/// Uncapped steps first (the movers still outside the block): the
/// buffers sized by the bodies are made, as in any simulation loop.
const WARM: usize = 2;
/// Then the capped steps, into the block.
const STEPS: usize = 14;
/// Each step moves the movers one unit.
const DT: f64 = 0.5;

/// Sweeps the cap over `STEPS` steps of a fresh world made by `scene`,
/// after `warm` uncapped ones, a slice of `slice` bytes at a time, until a
/// whole run is refused nothing; returns how many steps were refused in
/// all.
fn sweep<const D: usize>(scene: impl Fn() -> World<D> + Send + Sync, warm: usize, slice: usize) -> usize {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    in_worker(|| {
        // The uncapped twin's answers.
        let mut twin = scene();
        let detail = twin.config().detail;
        (0..warm).for_each(|_| _ = twin.step(DT).unwrap());
        let expected: Vec<Vec<String>> = (0..STEPS).map(|_| bits(twin.step(DT).unwrap())).collect();
        assert!(expected.iter().any(|c| !c.is_empty()), "{detail:?}: the steps must have contacts");
        drop(twin);
        let mut refused_steps = 0;
        for k in 0.. {
            let mut world = scene();
            (0..warm).for_each(|_| _ = world.step(DT).unwrap());
            let mut refused_here = 0;
            REFUSED.store(0, Ordering::Relaxed);
            for (s, expected) in expected.iter().enumerate() {
                CAP.store(LIVE.load(Ordering::Relaxed) + k * slice, Ordering::Relaxed);
                let outcome = world.step(DT).map(|c| c.len());
                CAP.store(usize::MAX, Ordering::Relaxed);
                match outcome {
                    Ok(_) => {}
                    Err(WorldError::OutOfMemory { .. }) => refused_here += 1,
                    Err(e) => panic!("{detail:?}, offset {k}×{slice}, step {s}: {e}"),
                }
                // Refused or not, the step (run again uncapped if refused)
                // answers as the twin: a refusal changed nothing.
                let contacts = if outcome.is_ok() { bits(world.contacts()) } else { bits(world.step(DT).unwrap()) };
                assert!(
                    contacts == *expected,
                    "{detail:?}, offset {k}×{slice}, step {s}: contacts differ from the uncapped twin's"
                );
            }
            refused_steps += refused_here;
            // No step refused and no allocation refused (one a step may
            // survive, such as a near list's): past the peak.
            if refused_here == 0 && REFUSED.load(Ordering::Relaxed) == 0 {
                break;
            }
            assert!(k < 10_000, "{detail:?}: the cap never stopped refusing");
        }
        refused_steps
    })
}

/// Every contact mode, both dimensions: the buffers differ in what they hold.
const MODES: [ContactDetail; 3] = [ContactDetail::ExactBox, ContactDetail::Interval, ContactDetail::Candidates];

/// Contacts growing in a loop under way (the buffers sized by the bodies
/// made by uncapped steps first).
#[test]
fn low_memory_in_a_step_is_an_error_and_loses_nothing_3d() {
    for detail in MODES {
        let grows =
            |w: &mut World<3>| (w.step(DT).unwrap().len(), (0..STEPS).map(|_| w.step(DT).unwrap().len()).last());
        let (first, last) = grows(&mut block::<3>(detail));
        assert!(last.unwrap() > first + 100, "{detail:?}: the contacts must grow");
        let refused = sweep(|| block::<3>(detail), WARM, 1 << 10);
        assert!(refused > 10, "{detail:?}: the cap must refuse some steps: {refused}");
    }
}

#[test]
fn low_memory_in_a_step_is_an_error_and_loses_nothing_2d() {
    for detail in MODES {
        let refused = sweep(|| block::<2>(detail), WARM, 1 << 10);
        assert!(refused > 10, "{detail:?}: the cap must refuse some steps: {refused}");
    }
}

/// A fresh world's first steps: the stores compacted, the cell size
/// chosen, the fixed list, the pair set, the near lists, the narrow
/// phase's chunks, all made under the cap.
#[test]
fn low_memory_in_a_first_step_is_an_error_and_loses_nothing() {
    for detail in MODES {
        let refused = sweep(|| block::<3>(detail), 0, 4 << 10);
        assert!(refused > 10, "{detail:?} 3D: the cap must refuse some steps: {refused}");
        let refused = sweep(|| block::<2>(detail), 0, 4 << 10);
        assert!(refused > 10, "{detail:?} 2D: the cap must refuse some steps: {refused}");
    }
}

/// Movers meeting each other, slow (the pair set persistent: fat boxes
/// placed in its grid, looked up, pairs merged), fast (rebuilt from a
/// cell list each step) and spinning, from their first step.
#[test]
fn low_memory_among_meeting_movers_is_an_error_and_loses_nothing() {
    for detail in MODES {
        for speed in [0.05, 1.0] {
            let refused = sweep(|| crowd::<3>(detail, speed), 0, 4 << 10);
            assert!(refused > 10, "{detail:?} 3D, speed {speed}: the cap must refuse some steps: {refused}");
            let refused = sweep(|| crowd::<2>(detail, speed), 0, 4 << 10);
            assert!(refused > 10, "{detail:?} 2D, speed {speed}: the cap must refuse some steps: {refused}");
        }
    }
    // The turns are remembered alike in every mode: one is enough.
    let refused = sweep(|| spinning_crowd(ContactDetail::ExactBox), 0, 16 << 10);
    assert!(refused > 10, "spinning: the cap must refuse some steps: {refused}");
}
