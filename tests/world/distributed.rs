//! The distributed world against one `World` holding every body: on 1 to
//! 4 ranks (threads exchanging through `LocalComm`, the same code paths
//! as MPI processes but the transport), the gathered contacts equal the
//! single world's, bit for bit, each pair exactly once, step after step,
//! on seeded scenes whose bodies migrate between regions and whose split
//! is made anew; events and body pairs too; bad input refused alike on
//! every rank. `tests/mpi.rs` runs the same checks under `mpirun`.

use fmbgrid::distributed::{Comm, DistributedError, DistributedWorld, GlobalContact, GlobalHandle, LocalComm};
use fmbgrid::{Body, ContactEvent, Frame, Pose, Runaway, World, WorldConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a scene asks of the world, replayed alike on both sides.
#[derive(Clone, Debug)]
enum Op<const D: usize> {
    Insert(Body<D>),
    Velocity(u64, [f64; D]),
    Pose(u64, [f64; D]),
    Remove(u64),
    Step(f64),
}

/// A contact as a comparable key: frames by (insertion index, frame
/// index), then the box and interval bits.
type Key = ((u64, u32), (u64, u32), Vec<u64>);

fn key<const D: usize>(c: &GlobalContact<D>) -> Key {
    let bits = c.aabb.min.iter().chain(&c.aabb.max).chain(&c.time).map(|x| x.to_bits()).collect();
    ((c.a.body.0, c.a.index), (c.b.body.0, c.b.index), bits)
}

/// The single world's answers after each step: contacts as keys, body
/// pairs and events by insertion index.
type Answers = Vec<(Vec<Key>, Vec<(u64, u64)>, Vec<(bool, u64, u64)>)>;

fn single<const D: usize>(ops: &[Op<D>], config: WorldConfig) -> Answers {
    let mut world = World::<D>::new(config);
    let mut handles = Vec::new();
    let mut out = Vec::new();
    for op in ops {
        match op {
            Op::Insert(b) => handles.push(world.insert(b.clone()).expect("valid body")),
            Op::Velocity(i, v) => world.set_velocity(handles[*i as usize], *v).expect("live body"),
            Op::Pose(i, t) => world.set_pose(handles[*i as usize], Pose::from_translation(*t).unwrap()).expect("live"),
            Op::Remove(i) => {
                world.remove(handles[*i as usize]).expect("live body");
            }
            Op::Step(dt) => {
                world.step(*dt).expect("a valid step");
                let id = |h| handles.iter().position(|&x| x == h).expect("known handle") as u64;
                let mut keys: Vec<Key> = world
                    .contacts()
                    .iter()
                    .map(|c| {
                        let (a, b) = ((id(c.a.body), c.a.index), (id(c.b.body), c.b.index));
                        let (a, b) = if a < b { (a, b) } else { (b, a) };
                        let bits = c.aabb.min.iter().chain(&c.aabb.max).chain(&c.time).map(|x| x.to_bits()).collect();
                        (a, b, bits)
                    })
                    .collect();
                keys.sort();
                let mut pairs: Vec<(u64, u64)> =
                    world.body_pairs().iter().map(|&(a, b)| sorted(id(a), id(b))).collect();
                pairs.sort();
                let mut events: Vec<(bool, u64, u64)> = world
                    .events()
                    .iter()
                    .map(|e| match *e {
                        ContactEvent::Started(a, b) => (true, sorted(id(a), id(b)).0, sorted(id(a), id(b)).1),
                        ContactEvent::Ended(a, b) => (false, sorted(id(a), id(b)).0, sorted(id(a), id(b)).1),
                    })
                    .collect();
                events.sort();
                out.push((keys, pairs, events));
            }
        }
    }
    out
}

/// Body pairs as slot numbers, and events as (started, body, body).
type BodyPairs = Vec<(u64, u64)>;
type Events = Vec<(bool, u64, u64)>;

/// The whole world's body pairs and its events (sorted), gathered from
/// every rank, as plain numbers.
fn gathered_pairs_and_events<const D: usize, C: Comm>(world: &DistributedWorld<D, C>) -> (BodyPairs, Events) {
    let pairs = world.gather_body_pairs().iter().map(|&(a, b)| (a.0, b.0)).collect();
    let mut events: Events = world
        .gather_events()
        .iter()
        .map(|e| match *e {
            fmbgrid::distributed::GlobalEvent::Started(a, b) => (true, a.0, b.0),
            fmbgrid::distributed::GlobalEvent::Ended(a, b) => (false, a.0, b.0),
        })
        .collect();
    events.sort();
    (pairs, events)
}

fn sorted(a: u64, b: u64) -> (u64, u64) {
    if a < b { (a, b) } else { (b, a) }
}

/// What a rank did in each step: bodies migrated in, ghost frames
/// received, whether space was split anew.
type Work = Vec<[usize; 3]>;

/// The same ops on `ranks` threads; every rank's view of the gathered
/// answers, and its work.
fn distributed<const D: usize>(ops: &[Op<D>], config: WorldConfig, ranks: usize) -> Vec<(Answers, Work)> {
    on_ranks(ranks, |comm| run_rank(comm, ops, config))
}

/// `f` run on each of `ranks` thread ranks: their results, by rank.
fn on_ranks<T: Send>(ranks: usize, f: impl Fn(LocalComm) -> T + Sync) -> Vec<T> {
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = LocalComm::group(ranks).into_iter().map(|comm| s.spawn(move || f(comm))).collect();
        handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
    })
}

fn run_rank<const D: usize, C: Comm>(comm: C, ops: &[Op<D>], config: WorldConfig) -> (Answers, Work) {
    run_world(&mut DistributedWorld::<D, C>::new(comm, config), ops)
}

fn run_world<const D: usize, C: Comm>(world: &mut DistributedWorld<D, C>, ops: &[Op<D>]) -> (Answers, Work) {
    let mut out = Vec::new();
    let mut owned = Vec::new();
    for op in ops {
        match op {
            Op::Insert(b) => {
                world.insert(b.clone()).expect("valid body");
            }
            Op::Velocity(i, v) => world.set_velocity(GlobalHandle(*i), *v).expect("live body"),
            Op::Pose(i, t) => world.set_pose(GlobalHandle(*i), Pose::from_translation(*t).unwrap()).expect("live"),
            Op::Remove(i) => world.remove(GlobalHandle(*i)).expect("live body"),
            Op::Step(dt) => {
                world.step(*dt).expect("a valid step");
                let all = world.gather_contacts();
                let st = world.stats();
                owned.push([st.migrated_in, st.ghost_frames, usize::from(st.rebalanced)]);
                let keys: Vec<Key> = all.iter().map(key).collect();
                let (pairs, events) = gathered_pairs_and_events(world);
                assert!(keys.windows(2).all(|w| w[0] < w[1]), "a pair reported twice");
                let kept: &Vec<(u64, u64)> = &pairs;
                assert!(kept.windows(2).all(|w| w[0] < w[1]), "a body pair kept by two ranks");
                out.push((keys, pairs, events));
            }
        }
    }
    (out, owned)
}

fn random_body<const D: usize>(r: &mut ChaCha8Rng, region: f64, size: f64, fixed: bool) -> Body<D> {
    let frames = r.random_range(1..4);
    let fs: Vec<Frame<D>> = (0..frames)
        .map(|_| {
            loop {
                let o: [f64; D] = std::array::from_fn(|_| r.random_range(-size..size));
                let c: [[f64; D]; D] = std::array::from_fn(|i| {
                    std::array::from_fn(|k| {
                        if i == k { size * r.random_range(0.5..1.5) } else { size * r.random_range(-0.3..0.3) }
                    })
                });
                let kind =
                    if r.random_bool(0.5) { fmbgrid::FrameKind::Cuboid } else { fmbgrid::FrameKind::Tetrahedron };
                if let Ok(f) = Frame::new(kind, o, c) {
                    break f;
                }
            }
        })
        .collect();
    let at: [f64; D] = std::array::from_fn(|_| r.random_range(0.0..region));
    let pose = Pose::from_translation(at).unwrap();
    if fixed {
        Body::fixed(fs).with_pose(pose)
    } else {
        Body::moving(fs).with_pose(pose).with_velocity(std::array::from_fn(|_| r.random_range(-4.0..4.0)))
    }
}

/// A seeded scene: bodies of `sizes`, a share fixed, stepped with
/// velocity changes, teleports (across regions) and removals.
fn scene<const D: usize>(seed: u64, bodies: usize, region: f64, sizes: &[f64], fixed: f64, steps: usize) -> Vec<Op<D>> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let mut ops = Vec::new();
    let mut moving = Vec::new();
    for i in 0..bodies {
        let size = sizes[i % sizes.len()];
        let is_fixed = r.random_bool(fixed);
        ops.push(Op::Insert(random_body::<D>(&mut r, region, size, is_fixed)));
        if !is_fixed {
            moving.push(i as u64);
        }
    }
    let mut removed = Vec::new();
    for step in 0..steps {
        ops.push(Op::Step(0.25));
        if step % 2 == 1 && !moving.is_empty() {
            let i = moving[r.random_range(0..moving.len())];
            if !removed.contains(&i) {
                ops.push(Op::Velocity(i, std::array::from_fn(|_| r.random_range(-20.0..20.0))));
                ops.push(Op::Pose(
                    moving[r.random_range(0..moving.len())],
                    std::array::from_fn(|_| r.random_range(0.0..region)),
                ));
            }
        }
        if step == steps / 2 && moving.len() > 2 {
            let i = moving[r.random_range(0..moving.len())];
            if !removed.contains(&i) {
                ops.push(Op::Remove(i));
                removed.push(i);
            }
        }
    }
    // A teleported or velocity-changed body that was removed: drop those ops.
    ops.retain(|op| match op {
        Op::Velocity(i, _) | Op::Pose(i, _) => {
            !removed.contains(i) || {
                // Only ops before the removal are valid; keep it simple: drop all.
                false
            }
        }
        _ => true,
    });
    ops
}

fn check<const D: usize>(ops: &[Op<D>], config: WorldConfig) {
    let want = single(ops, config);
    let contacts: usize = want.iter().map(|s| s.0.len()).sum();
    assert!(contacts > 0, "the scene must have contacts");
    for ranks in 1..=4 {
        let runs = distributed(ops, config, ranks);
        let total = |k: usize| runs.iter().flat_map(|(_, w)| w.iter().map(move |x| x[k])).sum::<usize>();
        if ranks > 1 {
            // The split was made (at the first step), bodies moved to their
            // regions and frames near the borders were copied.
            assert!(total(0) > 0 && total(1) > 0 && total(2) >= ranks, "{ranks} ranks: no migration or ghosts");
        }
        for (rank, (got, _)) in runs.into_iter().enumerate() {
            assert_eq!(got.len(), want.len());
            for (step, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.0, w.0, "{ranks} ranks, rank {rank}, step {step}: contacts");
                assert_eq!(g.1, w.1, "{ranks} ranks, rank {rank}, step {step}: body pairs");
                assert_eq!(g.2, w.2, "{ranks} ranks, rank {rank}, step {step}: events");
            }
        }
    }
}

#[test]
fn uniform_scenes_equal_one_world_3d() {
    check::<3>(&scene(1, 300, 30.0, &[1.0], 0.0, 8), WorldConfig::default());
}

/// Bodies removed and others inserted after them (on one rank the new
/// bodies take the freed slots of the local world, so their ids are no
/// longer their slots), with steps between: one `World`'s answers.
#[test]
fn bodies_inserted_after_removals_equal_one_world() {
    let mut ops = scene::<3>(5, 200, 25.0, &[1.0], 0.2, 3);
    let mut r = ChaCha8Rng::seed_from_u64(55);
    for i in [3, 17, 60, 61, 150] {
        ops.push(Op::Remove(i));
    }
    ops.push(Op::Step(0.25));
    for _ in 0..8 {
        ops.push(Op::Insert(random_body::<3>(&mut r, 25.0, 1.0, false)));
    }
    ops.extend((0..3).map(|_| Op::Step(0.25)));
    check::<3>(&ops, WorldConfig::default());
}

#[test]
fn uniform_scenes_equal_one_world_2d() {
    check::<2>(&scene(2, 300, 40.0, &[1.0], 0.0, 8), WorldConfig::default());
}

#[test]
fn mixed_sizes_with_frames_larger_than_a_region_equal_one_world() {
    check::<3>(&scene(3, 200, 30.0, &[0.3, 1.0, 3.0, 25.0], 0.2, 6), WorldConfig::default());
}

#[test]
fn mostly_static_worlds_equal_one_world() {
    check::<3>(&scene(4, 400, 30.0, &[1.0], 0.9, 6), WorldConfig::default());
}

#[test]
fn clustered_bodies_equal_one_world() {
    // Everything in a corner: some ranks own nothing.
    check::<2>(&scene(5, 150, 6.0, &[0.5, 1.0], 0.1, 6), WorldConfig::default());
}

#[test]
fn interval_detail_equals_one_world() {
    let config = WorldConfig::default().with_contact_detail(fmbgrid::ContactDetail::Interval);
    check::<3>(&scene(6, 200, 25.0, &[1.0], 0.1, 4), config);
}

#[test]
fn candidates_detail_equals_one_world() {
    let config = WorldConfig::default().with_contact_detail(fmbgrid::ContactDetail::Candidates);
    check::<2>(&scene(10, 200, 25.0, &[1.0, 4.0], 0.2, 4), config);
}

#[test]
fn a_runaway_is_refused_on_every_rank_and_changes_nothing() {
    let mut ops = scene::<2>(7, 60, 20.0, &[1.0], 0.0, 2);
    ops.push(Op::Velocity(3, [1e14, 0.0])); // 5e13 in a step: past a unit frame's reach
    let config = WorldConfig::default().with_runaway(Runaway::Refuse);
    // Three ranks, and one (whose step is the local world's alone).
    for ranks in [3, 1] {
        refused_runaway(&ops, config, ranks);
    }
}

fn refused_runaway(ops: &[Op<2>], config: WorldConfig, ranks: usize) {
    let results: Vec<(Result<(), DistributedError>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = LocalComm::group(ranks)
            .into_iter()
            .map(|comm| {
                s.spawn(move || {
                    let mut world = DistributedWorld::<2, _>::new(comm, config);
                    let _ = run_ops(&mut world, ops);
                    let refused = world.step(0.5).map(|_| ());
                    // Nothing changed: stopping the body lets the step go on.
                    world.set_velocity(GlobalHandle(3), [0.0, 0.0]).expect("live body");
                    world.step(0.5).expect("a valid step");
                    (refused, world.gather_contacts().len())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
    });
    for (refused, _) in &results {
        assert_eq!(refused, &Err(DistributedError::Runaway(GlobalHandle(3))), "{ranks} ranks");
    }
    assert!(results.windows(2).all(|w| w[0].1 == w[1].1));
}

fn run_ops<const D: usize, C: Comm>(world: &mut DistributedWorld<D, C>, ops: &[Op<D>]) -> Result<(), DistributedError> {
    for op in ops {
        match op {
            Op::Insert(b) => drop(world.insert(b.clone())?),
            Op::Velocity(i, v) => world.set_velocity(GlobalHandle(*i), *v)?,
            Op::Pose(i, t) => world.set_pose(GlobalHandle(*i), Pose::from_translation(*t).unwrap())?,
            Op::Remove(i) => world.remove(GlobalHandle(*i))?,
            Op::Step(dt) => drop(world.step(*dt)?),
        }
    }
    Ok(())
}

#[test]
fn bad_input_is_refused_alike_on_every_rank() {
    // A rank that hangs fails the test instead of hanging it.
    let errors: Vec<Vec<String>> = within(3, std::time::Duration::from_secs(60), |comm| {
        let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
        let floor = Frame::from_aabb([0.0, 0.0], [10.0, 1.0]).unwrap();
        let fixed = world.insert(Body::fixed(vec![floor])).unwrap();
        let mut seen = Vec::new();
        let mut note = |r: Result<(), DistributedError>| seen.push(format!("{r:?}"));
        note(world.set_velocity(fixed, [1.0, 0.0]));
        note(world.set_velocity(fixed, [f64::NAN, 0.0]));
        note(world.set_velocity(GlobalHandle(99), [1.0, 0.0]));
        note(world.insert(Body::moving(vec![])).map(|_| ()));
        note(world.step(f64::NAN).map(|_| ()));
        note(world.remove(fixed));
        note(world.remove(fixed));
        seen
    });
    assert!(errors.windows(2).all(|w| w[0] == w[1]), "{errors:?}");
    let e = &errors[0];
    assert!(e[0].starts_with("Err(Refused") && e[1].contains("BadNumber") && e[2].contains("StaleHandle"), "{e:?}");
    assert!(e[3].contains("EmptyBody") && e[4].contains("BadTimeStep") && e[5] == "Ok(())" && e[6].contains("Stale"));
}

/// Whether a body lives is its owner's to say (no rank keeps a table of
/// every id): once the bodies sit with the owners of their regions, a
/// removed body's handle is refused on every rank by every call (before a
/// bad number, as for an id never issued); `len` is the same on every
/// rank; ids go on counting after removals.
#[test]
fn a_removed_body_is_stale_on_every_rank() {
    // A rank that hangs fails the test instead of hanging it.
    let seen: Vec<Vec<String>> = within(3, std::time::Duration::from_secs(60), |comm| {
        let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
        for i in 0..30 {
            let x = f64::from(i) * 3.0;
            let f = Frame::from_aabb([x, 0.0], [x + 1.0, 1.0]).unwrap();
            world.insert(Body::moving(vec![f]).with_velocity([0.5, 0.0])).unwrap();
        }
        world.step(0.1).unwrap();
        world.remove(GlobalHandle(4)).unwrap();
        world.remove(GlobalHandle(17)).unwrap();
        world.step(0.1).unwrap();
        let mut seen = vec![format!("{}", world.len())];
        let mut note = |r: Result<(), DistributedError>| seen.push(format!("{r:?}"));
        note(world.set_velocity(GlobalHandle(4), [1.0, 0.0]));
        note(world.set_velocity(GlobalHandle(4), [f64::NAN, 0.0]));
        note(world.set_pose(GlobalHandle(17), Pose::from_translation([1.0, 1.0]).unwrap()));
        note(world.remove(GlobalHandle(17)));
        note(world.remove(GlobalHandle(30)));
        note(world.set_velocity(GlobalHandle(5), [1.0, 0.0]));
        let f = Frame::from_aabb([0.0, 5.0], [1.0, 6.0]).unwrap();
        seen.push(format!("{:?}", world.insert(Body::fixed(vec![f]))));
        seen.push(format!("{}", world.len()));
        let owners = world.comm().all_gather(vec![u64::from(world.body(GlobalHandle(5)).is_some())]);
        seen.push(format!("{owners:?}"));
        seen
    });
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    let stale = |id: u64| format!("Err(StaleHandle(GlobalHandle({id})))");
    let want = [
        "28".to_owned(),
        stale(4),
        stale(4),
        stale(17),
        stale(17),
        stale(30),
        "Ok(())".to_owned(),
        "Ok(GlobalHandle(30))".to_owned(),
        "29".to_owned(),
    ];
    assert_eq!(seen[0][..9], want);
    // Exactly one rank owns body 5, and answers for it.
    let owners = &seen[0][9];
    assert_eq!(owners.matches("[1]").count(), 1, "{owners}");
}

/// Every body drifts the same way, fast: bodies leave their regions every
/// step, loads pile up on one side, and space is split anew along the
/// way; the answers stay one world's.
#[test]
fn drifting_bodies_migrate_rebalance_and_equal_one_world() {
    let mut r = ChaCha8Rng::seed_from_u64(8);
    let mut ops: Vec<Op<2>> = (0..240)
        .map(|_| {
            let b = random_body::<2>(&mut r, 30.0, 1.0, false);
            Op::Insert(b.with_velocity([12.0 + r.random_range(0.0..4.0), r.random_range(-1.0..1.0)]))
        })
        .collect();
    ops.extend((0..10).map(|_| Op::Step(0.25)));
    let want = single(&ops, WorldConfig::default());
    for ranks in 2..=4 {
        let runs = distributed(&ops, WorldConfig::default(), ranks);
        let splits: usize = runs[0].1.iter().map(|w| w[2]).sum();
        assert!(splits > 1, "{ranks} ranks: space split {splits} times");
        for (got, _) in runs {
            assert_eq!(got, want, "{ranks} ranks");
        }
    }
}

/// Every body at the same reference point (their frames spread around
/// it): no cut can separate them, so one rank owns them all and the
/// others only ghosts, or nothing.
#[test]
fn every_body_on_one_rank_equals_one_world() {
    let mut r = ChaCha8Rng::seed_from_u64(9);
    let mut ops: Vec<Op<3>> = (0..80)
        .map(|_| {
            let offset: [f64; 3] = std::array::from_fn(|_| r.random_range(-8.0..8.0));
            let f = Frame::from_aabb(offset, offset.map(|x| x + 1.5)).unwrap();
            Op::Insert(Body::moving(vec![f]).with_velocity(std::array::from_fn(|_| r.random_range(-2.0..2.0))))
        })
        .collect();
    ops.extend((0..5).map(|_| Op::Step(0.25)));
    let want = single(&ops, WorldConfig::default());
    assert!(want.iter().any(|s| !s.0.is_empty()), "the scene must have contacts");
    for ranks in 2..=4 {
        for (got, _) in distributed(&ops, WorldConfig::default(), ranks) {
            assert_eq!(got, want, "{ranks} ranks");
        }
    }
}

/// Fast bodies whose velocities change every step, many of them: bodies
/// migrate, their ghosts' holders change, and a ghost left behind by a
/// body's old owner must go (or it drifts on with the old motion into
/// another rank's contacts).
#[test]
fn busy_worlds_with_velocity_changes_every_step_equal_one_world() {
    let mut r = ChaCha8Rng::seed_from_u64(11);
    let n = 300;
    let mut ops: Vec<Op<2>> = (0..n).map(|_| Op::Insert(random_body::<2>(&mut r, 30.0, 0.8, false))).collect();
    for _ in 0..16 {
        ops.push(Op::Step(0.25));
        for _ in 0..n / 5 {
            let i = r.random_range(0..n) as u64;
            ops.push(Op::Velocity(i, std::array::from_fn(|_| r.random_range(-24.0..24.0))));
        }
    }
    let want = single(&ops, WorldConfig::default());
    for ranks in 2..=4 {
        for (got, _) in distributed(&ops, WorldConfig::default(), ranks) {
            assert_eq!(got, want, "{ranks} ranks");
        }
    }
}

/// A rank whose thread panics breaks its group: the other ranks fail in
/// their next exchange instead of waiting for it forever (a failing test
/// fails, it does not hang).
#[test]
fn a_panicking_rank_fails_the_others_instead_of_hanging() {
    let outcomes: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = LocalComm::group(3)
            .into_iter()
            .map(|comm| {
                s.spawn(move || {
                    if comm.rank() == 1 {
                        panic!("rank 1 fails on purpose");
                    }
                    comm.all_gather(vec![1]);
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().is_ok()).collect()
    });
    assert_eq!(outcomes, [false, false, false]);
}

/// Runs `rank` on `ranks` thread ranks (not scoped: a rank that hangs is
/// left behind) and waits at most `limit` for all of them: a rank that
/// does not return in time fails the test instead of hanging it.
fn within<T: Send + 'static>(
    ranks: usize,
    limit: std::time::Duration,
    rank: impl Fn(LocalComm) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let rank = std::sync::Arc::new(rank);
    let (tx, rx) = std::sync::mpsc::channel();
    for comm in LocalComm::group(ranks) {
        let (rank, tx) = (std::sync::Arc::clone(&rank), tx.clone());
        std::thread::spawn(move || {
            let r = comm.rank();
            let _ = tx.send((r, rank(comm)));
        });
    }
    drop(tx);
    let deadline = std::time::Instant::now() + limit;
    let mut out: Vec<Option<T>> = (0..ranks).map(|_| None).collect();
    for _ in 0..ranks {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok((r, v)) => out[r] = Some(v),
            Err(e) => panic!("{} of {ranks} ranks returned within {limit:?} ({e})", out.iter().flatten().count()),
        }
    }
    out.into_iter().map(|v| v.expect("every rank answered")).collect()
}

/// A scene that reaches every stage of a step: bodies drifting across
/// regions (migration, new splits, ghosts), velocity and pose changes and a
/// removal between steps.
fn drifting_ops() -> Vec<Op<2>> {
    let mut r = ChaCha8Rng::seed_from_u64(12);
    let mut ops: Vec<Op<2>> = (0..160)
        .map(|_| {
            let b = random_body::<2>(&mut r, 30.0, 1.0, false);
            Op::Insert(b.with_velocity([12.0 + r.random_range(0.0..4.0), r.random_range(-1.0..1.0)]))
        })
        .collect();
    ops.extend((0..3).map(|_| Op::Step(0.25)));
    ops.push(Op::Velocity(5, [-10.0, 2.0]));
    ops.push(Op::Pose(7, [3.0, 20.0]));
    ops.extend((0..3).map(|_| Op::Step(0.25)));
    ops.push(Op::Remove(9));
    ops.extend((0..4).map(|_| Op::Step(0.25)));
    ops
}

/// What one rank saw under an injected fault: the index of the op that
/// failed, its error and how long the call took; and its answers after
/// each step (the failed op retried once: nothing changed, so the retry
/// gives one `World`'s answers).
type Faulted = (Option<(usize, DistributedError, std::time::Duration)>, Answers);

fn run_faulted(comm: LocalComm, ops: &[Op<2>], fault: Option<(usize, &str, usize)>) -> Faulted {
    let me = comm.rank();
    let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    if let Some((rank, stage, skip)) = fault
        && rank == me
    {
        world.inject_fault(stage, skip);
    }
    let mut failed = None;
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let start = std::time::Instant::now();
        let mut result = run_ops(&mut world, std::slice::from_ref(op));
        if let Err(e) = result {
            failed = Some((i, e, start.elapsed()));
            result = run_ops(&mut world, std::slice::from_ref(op));
        }
        result.expect("the retried op succeeds");
        if let Op::Step(_) = op {
            let keys: Vec<Key> = world.gather_contacts().iter().map(key).collect();
            let (pairs, events) = gathered_pairs_and_events(&world);
            out.push((keys, pairs, events));
        }
    }
    (failed, out)
}

/// A failure injected on one rank at each stage (insert, remove, a change
/// of velocity or pose, and in a step the runaway check, the split, both
/// halves of the migration and of the ghost exchange, the local step):
/// every rank returns the same error, naming that rank and the stage,
/// within a second; nothing changed (the op retried gives one `World`'s
/// answers to the end), a failed local step included (prepared on every
/// rank, then called off on every rank).
#[test]
fn a_fault_on_one_rank_is_agreed_by_every_rank_and_changes_nothing() {
    // Four ranks, and one (whose step is the local world's alone; it
    // splits space only at the first step).
    for ranks in [4, 1] {
        faults_agreed(ranks);
    }
}

fn faults_agreed(ranks: usize) {
    let ops = std::sync::Arc::new(drifting_ops());
    let want = single(&ops, WorldConfig::default());
    assert!(want.iter().any(|s| !s.0.is_empty()), "the scene must have contacts");
    let split_skip = if ranks == 1 { 0 } else { 1 };
    let skips = [("insert", 20), ("remove", 0), ("set", 1), ("runaways", 2), ("split", split_skip)];
    let skips = skips.into_iter().chain([
        ("migrate-send", 3),
        ("migrate-receive", 4),
        ("ghosts-send", 5),
        ("ghosts-receive", 6),
        ("step", 7),
    ]);
    let mut slowest = std::time::Duration::ZERO;
    for (k, (stage, skip)) in skips.enumerate() {
        assert_eq!(fmbgrid::distributed::FAULT_STAGES[k], stage);
        let bad = k % ranks;
        let shared = std::sync::Arc::clone(&ops);
        let runs = within(ranks, std::time::Duration::from_secs(60), move |comm| {
            run_faulted(comm, &shared, Some((bad, stage, skip)))
        });
        let (first, _) = &runs[0];
        let (at, error, _) = first.as_ref().unwrap_or_else(|| panic!("{stage}: the fault never fired"));
        let want_error = |e: &DistributedError| match e {
            DistributedError::OnRank { rank, cause } => *rank == bad && cause.contains(stage),
            _ => false,
        };
        assert!(want_error(error), "{stage}: {error:?}");
        for (rank, (failed, got)) in runs.iter().enumerate() {
            let (i, e, took) = failed.as_ref().unwrap_or_else(|| panic!("{stage}: rank {rank} did not fail"));
            assert_eq!((i, e), (at, error), "{stage}: rank {rank}");
            slowest = slowest.max(*took);
            assert!(*took < std::time::Duration::from_secs(1), "{stage}: rank {rank} took {took:?}");
            assert_eq!(got, &want, "{stage}: rank {rank}: the world changed");
        }
    }
    eprintln!("{ranks} ranks: every rank returned the agreed error within {slowest:?}");
}

/// Every body's state as the ranks hold it: this rank's owned bodies by
/// id, out of the first `n` ids.
fn owned_bodies<C: Comm>(world: &DistributedWorld<2, C>, n: u64) -> Vec<(u64, Body<2>)> {
    (0..n).filter_map(|id| world.body(GlobalHandle(id)).map(|b| (id, b.clone()))).collect()
}

/// A failure of the local step on one rank (after its preparation, so
/// that every rank has prepared the step, this one included, in a step
/// that parks a runaway body): every rank returns the same error, naming
/// that rank, within a second; every body is as it was before the call
/// (poses and motion, the runaway's velocity included, whichever rank now
/// owns it); then the world steps on and gives, bit for bit, one
/// `World`'s contacts, body pairs and events, as if the call had never
/// been made. On 1, 2 and 4 ranks, the failure on the last rank.
#[test]
fn a_failed_local_step_is_called_off_on_every_rank() {
    let mut ops = drifting_ops();
    // Before the seventh step: a runaway, which that step parks.
    let at = ops.iter().enumerate().filter(|(_, op)| matches!(op, Op::Step(_))).nth(6).map(|(i, _)| i).unwrap();
    ops.insert(at, Op::Velocity(11, [1e14, 0.0]));
    let ops = std::sync::Arc::new(ops);
    let want = single(&ops, WorldConfig::default());
    for ranks in [1, 2, 4] {
        let shared = std::sync::Arc::clone(&ops);
        let runs = within(ranks, std::time::Duration::from_secs(60), move |comm| {
            let me = comm.rank();
            let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
            if me + 1 == ranks {
                world.inject_fault("step", 6);
            }
            let (mut failed, mut states, mut answers) = (None, None, Vec::new());
            for op in shared.iter() {
                let before = matches!(op, Op::Step(_)).then(|| owned_bodies(&world, 160));
                let start = std::time::Instant::now();
                if let Err(e) = run_ops(&mut world, std::slice::from_ref(op)) {
                    failed = Some((e, start.elapsed()));
                    states = before.map(|b| (b, owned_bodies(&world, 160)));
                    run_ops(&mut world, std::slice::from_ref(op)).expect("the step again");
                }
                if let Op::Step(_) = op {
                    let keys: Vec<Key> = world.gather_contacts().iter().map(key).collect();
                    let (pairs, events) = gathered_pairs_and_events(&world);
                    answers.push((keys, pairs, events));
                }
            }
            (failed, states, answers)
        });
        let mut before_all = Vec::new();
        let mut after_all = Vec::new();
        for (rank, (failed, states, answers)) in runs.into_iter().enumerate() {
            let (e, took) = failed.unwrap_or_else(|| panic!("{ranks} ranks: rank {rank} did not fail"));
            let named =
                matches!(&e, DistributedError::OnRank { rank: r, cause } if *r + 1 == ranks && cause.contains("step"));
            assert!(named, "{ranks} ranks: rank {rank}: {e:?}");
            assert!(took < std::time::Duration::from_secs(1), "{ranks} ranks: rank {rank} took {took:?}");
            let (before, after) = states.expect("the failed op is a step");
            before_all.extend(before);
            after_all.extend(after);
            assert_eq!(answers, want, "{ranks} ranks: rank {rank}: the world changed");
        }
        before_all.sort_by_key(|(id, _)| *id);
        after_all.sort_by_key(|(id, _)| *id);
        // Body 9 was removed before that step: 159 bodies, each owned once.
        assert_eq!(before_all.len(), 159, "{ranks} ranks: every body owned once");
        assert_eq!(after_all, before_all, "{ranks} ranks: a body changed");
        let runaway = after_all.iter().find(|(id, _)| *id == 11).map(|(_, b)| b.velocity());
        assert_eq!(runaway, Some([1e14, 0.0]), "{ranks} ranks: the runaway moves again");
    }
}

/// A rank that panics in the middle of a step: the others panic too in
/// their next collective (the group is broken), promptly, instead of
/// waiting for it forever.
#[test]
fn a_rank_panicking_mid_run_ends_every_rank_promptly() {
    let ops = std::sync::Arc::new(drifting_ops());
    let start = std::time::Instant::now();
    let panicked = within(3, std::time::Duration::from_secs(30), move |comm| {
        let me = comm.rank();
        let ops = std::sync::Arc::clone(&ops);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
            for (i, op) in ops.iter().enumerate() {
                assert!(!(me == 1 && i == 165), "rank 1 fails on purpose");
                run_ops(&mut world, std::slice::from_ref(op)).expect("valid ops");
            }
        }))
        .is_err()
    });
    assert_eq!(panicked, [true, true, true]);
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}

/// Turning bars, packed so that many pairs come within a coarse spin
/// tolerance without touching (the world reports them: conservative),
/// across the regions' borders.
fn turning_bars(seed: u64, bodies: usize, steps: usize) -> Vec<Op<2>> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let mut ops: Vec<Op<2>> = (0..bodies)
        .map(|_| {
            let f = Frame::from_aabb([0.0, -0.1], [r.random_range(0.5..3.0), 0.1]).unwrap();
            let at = [r.random_range(0.0..24.0), r.random_range(0.0..24.0)];
            let pose = Pose::from_angle(r.random_range(0.0..6.3), at).unwrap();
            let v = [r.random_range(-1.0..1.0), r.random_range(-1.0..1.0)];
            Op::Insert(
                Body::moving(vec![f]).with_pose(pose).with_velocity(v).with_angular_velocity(r.random_range(-8.0..8.0)),
            )
        })
        .collect();
    ops.extend((0..steps).map(|_| Op::Step(0.25)));
    ops
}

/// Turning pairs at a coarse spin tolerance (0.5: conservative boxes and
/// intervals, and whatever pairs come within it), the default one and a
/// fine one: the distributed world reports exactly one world's contacts,
/// bit for bit, on 1 to 4 ranks (a turning pair's contact box lies in both
/// frames' swept boxes, grown by a margin for round-off: the rank owning
/// the low corner of their overlap holds both frames).
#[test]
fn turning_pairs_at_any_spin_tolerance_equal_one_world() {
    let ops = turning_bars(13, 220, 6);
    let coarse = WorldConfig::default().with_spin_tolerance(0.5);
    let fine = WorldConfig::default().with_spin_tolerance(1e-6);
    // The tolerance shows in the answers: coarser boxes and intervals.
    assert_ne!(single(&ops, coarse), single(&ops, fine));
    check(&ops, coarse);
    check(&ops, WorldConfig::default());
    check(&ops, fine);
}

/// A batch of inserts with one agreement: a fault on one rank in the
/// middle of it leaves no body on any rank (every rank returns the same
/// error); the batch again, then the steps, give one `World`'s answers.
#[test]
fn a_batch_insert_is_all_or_nothing_on_every_rank() {
    let ops = std::sync::Arc::new(drifting_ops());
    let want = single(&ops, WorldConfig::default());
    let shared = std::sync::Arc::clone(&ops);
    let runs = within(4, std::time::Duration::from_secs(60), move |comm| {
        let me = comm.rank();
        let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
        if me == 2 {
            world.inject_fault("insert", 50);
        }
        let bodies = || shared.iter().filter_map(|op| if let Op::Insert(b) = op { Some(b.clone()) } else { None });
        let refused = world.insert_many(bodies()).map(|h| h.len());
        let empty = world.is_empty() && world.owned_len() == 0;
        let inserted = world.insert_many(bodies()).expect("the batch again").len();
        let steps: Vec<Op<2>> = shared.iter().filter(|op| !matches!(op, Op::Insert(_))).cloned().collect();
        let mut out = Vec::new();
        for op in &steps {
            run_ops(&mut world, std::slice::from_ref(op)).expect("valid ops");
            if let Op::Step(_) = op {
                let keys: Vec<Key> = world.gather_contacts().iter().map(key).collect();
                let (pairs, events) = gathered_pairs_and_events(&world);
                out.push((keys, pairs, events));
            }
        }
        (refused, empty, inserted, out)
    });
    for (rank, (refused, empty, inserted, got)) in runs.into_iter().enumerate() {
        let cause = "a fault injected at insert".to_owned();
        assert_eq!(refused, Err(DistributedError::OnRank { rank: 2, cause }), "rank {rank}");
        assert!(empty && inserted == 160, "rank {rank}");
        assert_eq!(got, want, "rank {rank}");
    }
}

/// Runaway bodies parked (the default policy), on several ranks, some
/// of them migrating in the same step: parked after the migration, by
/// whichever rank holds them then, their ghosts told; one `World`'s
/// answers.
#[test]
fn parked_runaways_equal_one_world() {
    let mut ops = drifting_ops();
    let at = ops.iter().position(|op| matches!(op, Op::Step(_))).expect("a step") + 2;
    for i in [3, 40, 77, 120] {
        ops.insert(at, Op::Velocity(i, [1e14, 0.0]));
    }
    let config = WorldConfig::default().with_runaway(Runaway::Park);
    check(&ops, config);
}

/// A box of `size` at `at` (its corner), in body coordinates.
fn boxed(at: [f64; 2], size: [f64; 2]) -> Frame<2> {
    Frame::from_aabb(at, [at[0] + size[0], at[1] + size[1]]).unwrap()
}

/// Bodies placed to test where body pairs are kept, two ranks split at
/// x = 1 (fillers far above make the cut; ids in comments):
/// - pairs of two-frame bodies spanning the cut, in contact at both ends,
///   so that each of the two ranks finds one contact of the pair: (0, 1)
///   with the keeper's (the owner of 0, left) contact lasting longer than
///   the other rank's, (2, 3) with the keeper's (right) ending first;
/// - bodies that migrate while in contact: 4 slides right along the
///   fixed bar 5 (the keeper, the owner of 4, moves), 7 slides right
///   along the fixed bar 6 (the keeper stays, the contacts move), 8 and 9
///   move right together (both migrate, one step apart), 10 slides left
///   along the fixed bar 11 (the keeper moves right to left).
fn pairs_across_ranks() -> Vec<Op<2>> {
    let moving = |frames, at, v| {
        Op::Insert(Body::moving(frames).with_pose(Pose::from_translation(at).unwrap()).with_velocity(v))
    };
    let fixed = |frames, at| Op::Insert(Body::fixed(frames).with_pose(Pose::from_translation(at).unwrap()));
    let up = [0.0, 1.0];
    let mut ops = vec![
        fixed(vec![boxed([-11.0, 0.0], [2.0, 1.0]), boxed([9.0, 0.0], [2.0, 1.0])], [-1.0, 0.0]),
        moving(vec![boxed([-12.5, 0.5], [2.0, 1.0]), boxed([6.5, 0.9], [2.0, 1.0])], [1.0, 0.0], up),
        fixed(vec![boxed([-13.0, 0.0], [2.0, 1.0]), boxed([7.0, 0.0], [2.0, 1.0])], [1.0, 10.0]),
        moving(vec![boxed([-10.5, 0.5], [2.0, 1.0]), boxed([8.5, 0.9], [2.0, 1.0])], [-1.0, 10.0], up),
        moving(vec![boxed([-0.5, -0.5], [1.0, 1.0])], [-3.0, 20.5], [8.0, 0.0]),
        fixed(vec![boxed([-19.0, 0.0], [40.0, 1.0])], [-1.0, 20.0]),
        fixed(vec![boxed([-19.0, 0.0], [40.0, 1.0])], [-1.0, 30.0]),
        moving(vec![boxed([-0.5, -0.5], [1.0, 1.0])], [-3.0, 30.5], [8.0, 0.0]),
        moving(vec![boxed([-1.0, -1.0], [2.0, 2.0])], [-3.0, 40.0], [8.0, 0.0]),
        moving(vec![boxed([-1.0, -1.0], [2.0, 2.0])], [-2.5, 40.5], [8.0, 0.0]),
        moving(vec![boxed([-0.5, -0.5], [1.0, 1.0])], [3.0, 50.5], [-8.0, 0.0]),
        fixed(vec![boxed([-21.0, 0.0], [40.0, 1.0])], [1.0, 50.0]),
    ];
    // Frames left of the cut: 10 (bodies 0, 3, 4 to 9); right: 6. The
    // fillers even them out, so the weighted median cuts at x = 1.
    let filler = |x: f64| fixed(vec![boxed([0.0, 0.0], [0.5, 0.5])], [x, 100.0]);
    ops.extend((0..100).map(|i| filler(-80.0 + 0.75 * f64::from(i))));
    ops.extend((0..104).map(|i| filler(5.0 + 0.72 * f64::from(i))));
    ops.extend((0..8).map(|_| Op::Step(0.25)));
    ops
}

/// What each of two ranks did at each step: the body pairs of its own
/// contacts, and the body pairs it keeps.
type Kept = Vec<[Vec<(u64, u64)>; 2]>;

fn kept_on_two_ranks(ops: &[Op<2>]) -> Vec<Kept> {
    std::thread::scope(|s| {
        let handles: Vec<_> = LocalComm::group(2)
            .into_iter()
            .map(|comm| {
                s.spawn(move || {
                    let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
                    let mut out = Vec::new();
                    for op in ops {
                        run_ops(&mut world, std::slice::from_ref(op)).expect("valid ops");
                        if let Op::Step(_) = op {
                            let mut own: Vec<(u64, u64)> =
                                world.contacts().iter().map(|c| (c.a.body.0, c.b.body.0)).collect();
                            own.dedup();
                            let kept = world.body_pairs().iter().map(|&(a, b)| (a.0, b.0)).collect();
                            out.push([own, kept]);
                        }
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
    })
}

/// Body pairs whose contacts two ranks find, and bodies that migrate
/// while in contact: the body pairs and events are one `World`'s on 2 to
/// 4 ranks; on two, the cases happen as built (each rank finds a contact
/// of the pair, the keeper of a pair changes rank with its first body).
#[test]
fn body_pairs_found_on_two_ranks_and_across_migrations_equal_one_world() {
    let ops = pairs_across_ranks();
    let want = single(&ops, WorldConfig::default());
    let pairs_at = |step: usize| &want[step].1;
    let events = |p: (u64, u64)| -> Vec<(usize, bool)> {
        (want.iter().enumerate())
            .flat_map(|(s, w)| w.2.iter().filter(|e| (e.1, e.2) == p).map(move |e| (s, e.0)))
            .collect()
    };
    // One World: the two-ended pairs start, outlive one end, then end; the
    // sliding pairs stay in contact throughout.
    for p in [(0, 1), (2, 3)] {
        let e = events(p);
        assert!(e.len() == 2 && e[0] == (0, true) && !e[1].1 && e[1].0 >= 2, "{p:?}: {e:?}");
    }
    for p in [(4, 5), (6, 7), (8, 9), (10, 11)] {
        assert!((0..want.len()).all(|s| pairs_at(s).contains(&p)), "{p:?} not in contact throughout");
        assert_eq!(events(p), [(0, true)], "{p:?}");
    }
    for ranks in 2..=4 {
        for (rank, (got, _)) in distributed(&ops, WorldConfig::default(), ranks).into_iter().enumerate() {
            assert_eq!(got, want, "{ranks} ranks, rank {rank}");
        }
    }
    let ranks = kept_on_two_ranks(&ops);
    let (left, right) = (&ranks[0], &ranks[1]);
    for p in [(0, 1), (2, 3)] {
        assert!(left[0][0].contains(&p) && right[0][0].contains(&p), "{p:?}: not found on both ranks");
    }
    // Kept by the owner of its first body, wherever the contacts are.
    assert!(left[0][1].contains(&(0, 1)) && right[0][1].contains(&(2, 3)));
    // (0, 1): the keeper's own contact outlives the other rank's; (2, 3):
    // the keeper's ends first, and the other rank's claim keeps the pair.
    let step = (1..want.len()).find(|&s| !right[s][0].contains(&(0, 1))).expect("the right end of (0, 1) parts");
    assert!(left[step][1].contains(&(0, 1)));
    let step = (1..want.len()).find(|&s| !right[s][0].contains(&(2, 3))).expect("the right end of (2, 3) parts");
    assert!(left[step][0].contains(&(2, 3)) && right[step][1].contains(&(2, 3)), "step {step}");
    // Migrations while in contact: 4 and 10 take their pairs along.
    let last = want.len() - 1;
    assert!(left[0][1].contains(&(4, 5)) && right[last][1].contains(&(4, 5)));
    assert!(right[0][1].contains(&(10, 11)) && left[last][1].contains(&(10, 11)));
    assert!(left[0][1].contains(&(8, 9)) && right[last][1].contains(&(8, 9)));
    // 7 moves, 6 stays: the keeper stays left, the contacts go right.
    assert!(left[last][1].contains(&(6, 7)) && right[last][0].contains(&(6, 7)));
}

/// A scene's bodies loaded by one rank (`insert_from`: each body sent
/// once to its keeper; a second batch after the first split goes to the
/// regions' owners), then stepped: one `World`'s answers on 1 to 4 ranks,
/// from any root; a bad body in a batch leaves no body on any rank.
#[test]
fn bodies_loaded_from_one_rank_equal_one_world() {
    let ops = scene::<3>(21, 300, 30.0, &[1.0, 2.5], 0.2, 6);
    let loaded = ops.iter().take_while(|op| matches!(op, Op::Insert(_))).count();
    // The first batch before any step, a second one after the first step.
    let mut late: Vec<Op<3>> = ops[..loaded].to_vec();
    let late_bodies: Vec<Body<3>> = (0..40)
        .map(|i| {
            let f = Frame::from_aabb([0.0; 3], [1.5; 3]).unwrap();
            Body::moving(vec![f]).with_pose(Pose::from_translation([f64::from(i) * 0.7, 15.0, 15.0]).unwrap())
        })
        .collect();
    late.push(ops[loaded].clone());
    late.extend(late_bodies.iter().cloned().map(Op::Insert));
    late.extend(ops[loaded + 1..].iter().cloned());
    let want = single(&late, WorldConfig::default());
    let batch: Vec<Body<3>> =
        ops[..loaded].iter().map(|op| if let Op::Insert(b) = op { b.clone() } else { unreachable!() }).collect();
    for ranks in 1..=4 {
        let root = ranks - 1;
        let (batch, late_bodies, rest) = (&batch, &late_bodies, &ops[loaded..]);
        let runs = on_ranks(ranks, |comm| {
            let me = comm.rank();
            let mut world = DistributedWorld::<3, _>::new(comm, WorldConfig::default());
            let mine = |b: &Vec<Body<3>>| if me == root { b.clone() } else { Vec::new() };
            // A bad body: nothing inserted anywhere.
            let mut bad = mine(batch);
            if me == root {
                bad.insert(7, Body::moving(vec![]));
            }
            let e = world.insert_from(root, bad).unwrap_err();
            assert!(matches!(e, DistributedError::OnRank { rank, .. } if rank == root), "{e:?}");
            assert_eq!(world.len(), 0);
            // No such root: the same error on every rank (it was each
            // rank's own number), nothing inserted.
            let e = world.insert_from(ranks, mine(batch)).unwrap_err();
            let want = format!("rank 0: no rank {ranks} of {ranks} to load from");
            assert_eq!(e.to_string(), want, "rank {me}");
            assert_eq!(world.len(), 0);
            let handles = world.insert_from(root, mine(batch)).expect("valid bodies");
            assert_eq!(handles.len(), batch.len());
            let (mut answers, _) = run_world(&mut world, &rest[..1]);
            world.insert_from(root, mine(late_bodies)).expect("valid bodies");
            let (more, work) = run_world(&mut world, &rest[1..]);
            answers.extend(more);
            (answers, work)
        });
        for (rank, (got, _)) in runs.into_iter().enumerate() {
            assert_eq!(got.len(), want.len());
            for (step, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{ranks} ranks, rank {rank}, step {step}");
            }
        }
    }
}

/// Ranks in different calls (a removal made on the owner only, while the
/// others step), a batch one body short on one rank, ranks of different
/// configurations: every rank returns `Diverged` from the call it was in,
/// nothing changed, and the ranks then go on equal to one world; ranks of
/// different configurations are refused from their first call. Without
/// the calls' digests the first two returned Ok everywhere and the worlds
/// parted ways (442 bodies on some ranks, 441 on others), the third hung
/// (issue 36).
#[test]
fn ranks_in_different_calls_are_refused_alike_and_change_nothing() {
    let ops = scene::<2>(12, 120, 20.0, &[0.5, 1.5], 0.2, 4);
    let inserts = ops.iter().take_while(|op| matches!(op, Op::Insert(_))).count();
    let want = single(&ops, WorldConfig::default());
    let diverged = |e: DistributedError, call: &str, me: usize| match e {
        DistributedError::Diverged { call: c, .. } if c == call => {}
        e => panic!("rank {me}: {e:?}, expected Diverged in {call}"),
    };
    for ranks in [2, 3] {
        let runs = on_ranks(ranks, |comm| {
            let me = comm.rank();
            let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
            let (mut answers, _) = run_world(&mut world, &ops[..inserts]);
            let len = world.len();
            // Body 0's owner removes it; the others step.
            if me == 0 {
                diverged(world.remove(GlobalHandle(0)).unwrap_err(), "remove", me);
            } else {
                diverged(world.step(0.25).map(|_| ()).unwrap_err(), "step", me);
            }
            // One rank's batch is a body short.
            let unit = Frame::<2>::from_aabb([50.0; 2], [51.0; 2]).unwrap();
            let batch = (0..3 - usize::from(me == ranks - 1)).map(|_| Body::fixed(vec![unit]));
            diverged(world.insert_many(batch).unwrap_err(), "insert_many", me);
            assert_eq!(world.len(), len, "rank {me}: nothing inserted or removed");
            let (more, work) = run_world(&mut world, &ops[inserts..]);
            answers.extend(more);
            (answers, work)
        });
        for (rank, (got, _)) in runs.into_iter().enumerate() {
            assert_eq!(got, want, "{ranks} ranks, rank {rank}");
        }
        // One rank refuses runaways, the others park them: the first call
        // finds it.
        let runs = on_ranks(ranks, |comm| {
            let me = comm.rank();
            let policy = if me == 0 { Runaway::Refuse } else { Runaway::Park };
            let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default().with_runaway(policy));
            let Op::Insert(body) = &ops[0] else { unreachable!("the scene starts with its bodies") };
            let e = world.insert(body.clone()).unwrap_err();
            (e, world.len(), world.step(0.25).map(|_| ()).unwrap_err())
        });
        for (me, (insert, len, step)) in runs.into_iter().enumerate() {
            diverged(insert, "insert", me);
            diverged(step, "step", me);
            assert_eq!(len, 0, "rank {me}: nothing inserted");
        }
    }
}

/// A rank that returns early (drops its world) while the others step:
/// they fail at their next collective, saying why, instead of waiting for
/// it forever (issue 36). Ranks that all finish together never notice.
#[test]
fn a_rank_that_leaves_early_fails_the_others_instead_of_hanging() {
    let ops = scene::<2>(13, 60, 20.0, &[0.5, 1.5], 0.2, 2);
    let inserts = ops.iter().take_while(|op| matches!(op, Op::Insert(_))).count();
    let outcomes: Vec<Result<(), String>> = on_ranks(3, |comm| {
        let me = comm.rank();
        let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
        run_world(&mut world, &ops[..inserts]);
        if me == 2 {
            return Ok(()); // leaves: its world is dropped
        }
        let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for _ in 0..3 {
                world.step(0.25).expect("a valid step");
            }
        }));
        stepped.map_err(|e| {
            e.downcast_ref::<String>().cloned().or(e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap()
        })
    });
    assert_eq!(outcomes[2], Ok(()));
    for (me, outcome) in outcomes[..2].iter().enumerate() {
        let message = outcome.as_ref().expect_err("stepping without rank 2 fails");
        assert!(message.contains("a rank of this LocalComm group is gone"), "rank {me}: {message}");
    }
    // All finishing together: nobody notices the others leave.
    let runs = on_ranks(3, |comm| {
        let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
        run_world(&mut world, &ops).0
    });
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "the ranks agree");
}

/// Ranks stepping by different `dt`s (one computed from rank-local state)
/// all get the same error, before anything changed; stepping alike
/// afterwards, they equal one world. Without the check every rank
/// returned Ok and the worlds parted ways (issue 36).
#[test]
fn ranks_stepping_by_different_dts_are_refused_alike_and_change_nothing() {
    let ops = scene::<2>(11, 120, 20.0, &[0.5, 1.5], 0.2, 4);
    let inserts = ops.iter().take_while(|op| matches!(op, Op::Insert(_))).count();
    let want = single(&ops, WorldConfig::default());
    for ranks in [2, 3] {
        let runs = on_ranks(ranks, |comm| {
            let me = comm.rank();
            let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
            let (mut answers, _) = run_world(&mut world, &ops[..inserts]);
            let e = world.step(0.25 + 1e-3 * me as f64).unwrap_err();
            assert!(matches!(e, DistributedError::Diverged { call: "step", .. }), "rank {me}: {e:?}");
            let want = format!(
                "the ranks called step differently: dt differs between ranks (from 2.5e-1 to {:e})",
                0.25 + 1e-3 * (ranks - 1) as f64
            );
            assert_eq!(e.to_string(), want, "rank {me}");
            let (more, work) = run_world(&mut world, &ops[inserts..]);
            answers.extend(more);
            (answers, work)
        });
        for (rank, (got, _)) in runs.into_iter().enumerate() {
            assert_eq!(got, want, "{ranks} ranks, rank {rank}");
        }
    }
}
