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
/// Allocations of at most this many bytes are never refused: 0 but in
/// the distributed sweep, whose agreement on an error allocates the
/// error's report (its words gathered, the message decoded), a few hundred
/// bytes that a process out of memory for its buffers still has.
static SMALL: AtomicUsize = AtomicUsize::new(0);
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
    let small = grow <= SMALL.load(Ordering::Relaxed);
    let cap = if capped && !small { CAP.load(Ordering::Relaxed) } else { usize::MAX };
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

/// A `LocalComm` whose own buffers (what it sends, receives and reduces)
/// are allocated with the cap lifted: the transport's memory is the
/// communicator's (MPI allocates its own), the rest of a distributed step
/// is the library's, capped.
struct Uncapped(fmbgrid::distributed::LocalComm);

/// Runs `f` with the cap lifted on this thread.
fn uncapped<R>(f: impl FnOnce() -> R) -> R {
    let was = CAPPED.replace(false);
    let r = f();
    CAPPED.set(was);
    r
}

impl fmbgrid::distributed::Comm for Uncapped {
    // `begin_call` keeps its default (nothing to do).
    fn rank(&self) -> usize {
        self.0.rank()
    }
    fn size(&self) -> usize {
        self.0.size()
    }
    fn exchange(&self, out: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        uncapped(|| self.0.exchange(out))
    }
    fn exchange_among(&self, peers: &[usize], out: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        uncapped(|| self.0.exchange_among(peers, out))
    }
    fn all_gather(&self, mine: Vec<u64>) -> Vec<Vec<u64>> {
        uncapped(|| self.0.all_gather(mine))
    }
    fn all_sum(&self, mine: u64) -> u64 {
        uncapped(|| self.0.all_sum(mine))
    }
    fn all_sum_each(&self, mine: &[u64]) -> Vec<u64> {
        uncapped(|| self.0.all_sum_each(mine))
    }
    fn all_max_each(&self, mine: &[u64]) -> Vec<u64> {
        uncapped(|| self.0.all_max_each(mine))
    }
    fn all_max(&self, mine: u64) -> u64 {
        uncapped(|| self.0.all_max(mine))
    }
}

/// One `World`'s contacts as a distributed world gathers them (bodies
/// named by insertion order, each pair's frames in order, sorted).
fn canonical(world: &World<3>) -> Vec<fmbgrid::distributed::GlobalContact<3>> {
    use fmbgrid::distributed::{GlobalContact, GlobalFrame, GlobalHandle};
    let ids: std::collections::HashMap<_, u64> = world.bodies().enumerate().map(|(i, (h, _))| (h, i as u64)).collect();
    let frame = |f: fmbgrid::FrameId| GlobalFrame { body: GlobalHandle(ids[&f.body]), index: f.index };
    let mut out: Vec<GlobalContact<3>> = (world.contacts().iter())
        .map(|c| {
            let (a, b) = (frame(c.a), frame(c.b));
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            GlobalContact { a, b, aabb: c.aabb, time: c.time }
        })
        .collect();
    out.sort_by_key(|c| (c.a, c.b));
    out
}

/// Sweeps the cap over `STEPS` steps of a crowd split over `ranks` thread
/// ranks, from their first step: every rank's step is refused alike
/// (`OnRank` out of memory, the same on every rank) or made, and the
/// gathered contacts of each step (run again uncapped when refused) are
/// one `World`'s, bit for bit. Returns how many steps were refused.
fn distributed_sweep(ranks: usize, slice: usize) -> usize {
    use fmbgrid::distributed::{Comm, DistributedWorld, LocalComm};
    use std::sync::Barrier;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    SMALL.store(1 << 10, Ordering::Relaxed);
    let mut one = crowd::<3>(ContactDetail::ExactBox, 0.05);
    let bodies: Vec<Body<3>> = one.bodies().map(|(_, b)| b.clone()).collect();
    let expected: Vec<_> = (0..STEPS)
        .map(|_| {
            one.step(DT).unwrap();
            canonical(&one)
        })
        .collect();
    assert!(expected.iter().all(|c| !c.is_empty()), "the crowd must meet");
    let mut refused_steps = 0;
    for k in 0.. {
        let barrier = Barrier::new(ranks);
        let (bodies, expected, barrier) = (&bodies, &expected, &barrier);
        let runs: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = LocalComm::group(ranks)
                .into_iter()
                .map(|comm| {
                    s.spawn(move || {
                        in_worker(|| {
                            let config = WorldConfig::default();
                            let mut world = DistributedWorld::<3, _>::new(Uncapped(comm), config);
                            let mine = if world.comm().rank() == 0 { bodies.clone() } else { Vec::new() };
                            world.insert_from(0, mine).unwrap();
                            let mut refused = 0;
                            for (s, expected) in expected.iter().enumerate() {
                                barrier.wait();
                                if world.comm().rank() == 0 {
                                    CAP.store(LIVE.load(Ordering::Relaxed) + k * slice, Ordering::Relaxed);
                                }
                                barrier.wait();
                                let outcome = world.step(DT).map(|_| ());
                                barrier.wait();
                                CAP.store(usize::MAX, Ordering::Relaxed);
                                if let Err(e) = outcome {
                                    assert!(e.to_string().contains("memory"), "offset {k}×{slice}, step {s}: {e}");
                                    refused += 1;
                                    world.step(DT).unwrap();
                                }
                                let got = world.gather_contacts();
                                assert!(
                                    got == *expected,
                                    "offset {k}×{slice}, step {s}: contacts differ from one world's"
                                );
                            }
                            refused
                        })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(runs.iter().all(|&r| r == runs[0]), "offset {k}: the ranks refused different steps: {runs:?}");
        refused_steps += runs[0];
        if runs[0] == 0 && REFUSED.load(Ordering::Relaxed) == 0 {
            break;
        }
        REFUSED.store(0, Ordering::Relaxed);
        assert!(k < 10_000, "the cap never stopped refusing");
    }
    SMALL.store(0, Ordering::Relaxed);
    refused_steps
}

/// A distributed step under an allocation cap, on 2 and 3 thread ranks:
/// the same error on every rank, nothing changed, never an abort. Not yet
/// so (issue 36): the stages before the local step (the migration's
/// parcels, the ghosts' plan and their insertion) and the exchange of pair
/// claims after the commit allocate infallibly; with the split's points
/// fallible and an error's report (under 1 KB) admitted, the first abort
/// is in `plan_ghosts`. Run with `cargo test --release --test
/// world_low_memory -- --ignored`.
#[test]
#[ignore = "known defect: a distributed step's own stages abort on low memory"]
fn low_memory_in_a_distributed_step_is_an_agreed_error() {
    for ranks in [2, 3] {
        let refused = distributed_sweep(ranks, 16 << 10);
        assert!(refused > 5, "{ranks} ranks: the cap must refuse some steps: {refused}");
    }
}
