//! World benchmarks: one `World::step` (swept boxes, hashed grid, FMB with
//! exact boxes, events, advance) on the scenes of `support/scenes.rs`, with
//! throughput in frames. Velocity reversals (every 60 steps, to keep the
//! scene's density) happen outside the timed region.
//!
//! Also `World::query_aabb` after a step (the moving frames through the
//! step's cell list) and after an edit (every moving frame tested), side by
//! side; `World::cast_ray` and `World::query_point` after a step;
//! `World::contact_geometry` on every contact of a step.
//!
//! `cargo bench --bench world` (filter e.g. `-- uniform`); single thread
//! unless `FMBGRID_THREADS` says otherwise. The parry comparison is in the
//! `scene_bench` program (`benches/scene_bench.rs`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fmbgrid::{Aabb, Pose, WorldConfig};

#[path = "support/scenes.rs"]
mod scenes;

use scenes::Scene;

fn bench_scene<const D: usize>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    scene: &Scene<D>,
    n: usize,
) {
    let mut sim = scene.world(WorldConfig::default()).expect("valid scene");
    sim.prepare();
    sim.step(); // builds the static grid and chooses the cell size
    g.throughput(Throughput::Elements(scene.frames() as u64));
    g.bench_function(format!("{}/{n}", scene.name), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                sim.prepare();
                let t = Instant::now();
                black_box(sim.step());
                total += t.elapsed();
            }
            total
        })
    });
}

fn world_step(c: &mut Criterion) {
    let mut g = c.benchmark_group("world/step");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    bench_scene(&mut g, &scenes::uniform(10_000, 1), 10_000);
    bench_scene(&mut g, &scenes::uniform(100_000, 1), 100_000);
    bench_scene(&mut g, &scenes::mostly_static(10_000, 1), 10_000);
    bench_scene(&mut g, &scenes::mixed(10_000, 1), 10_000);
    bench_scene(&mut g, &scenes::planar(10_000, 1), 10_000);
    g.finish();
}

/// 256 query boxes of extent 2 (about a frame's size), centred on frames
/// spread over the world.
fn query_boxes(world: &fmbgrid::World3) -> Vec<Aabb<3>> {
    let every = (world.len() / 256).max(1);
    world
        .bodies()
        .step_by(every)
        .take(256)
        .map(|(h, _)| {
            let b = world.frame(fmbgrid::FrameId { body: h, index: 0 }).expect("live frame").aabb();
            let c: [f64; 3] = std::array::from_fn(|k| 0.5 * (b.min[k] + b.max[k]));
            Aabb { min: c.map(|x| x - 1.0), max: c.map(|x| x + 1.0) }
        })
        .collect()
}

fn world_query(c: &mut Criterion) {
    let mut g = c.benchmark_group("world/query_aabb");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let mut sim = scenes::uniform(100_000, 1).world(WorldConfig::default()).expect("valid scene");
    sim.step();
    let boxes = query_boxes(&sim.world);
    g.throughput(Throughput::Elements(boxes.len() as u64));
    let mut queries = |label: &str, world: &fmbgrid::World3| {
        g.bench_function(format!("uniform/100000/{label}"), |b| {
            b.iter(|| boxes.iter().map(|q| world.query_aabb(q).len()).sum::<usize>())
        });
    };
    queries("after a step", &sim.world);
    // Re-posing one body outdates the step's list: every moving frame tested.
    let (h, body) = sim.world.bodies().next().map(|(h, b)| (h, b.pose())).expect("bodies");
    sim.world.set_pose(h, Pose::new(body.linear(), body.translation()).expect("same pose")).expect("live");
    queries("after an edit", &sim.world);
    g.finish();
}

/// `World::cast_ray` on the uniform 100k scene after a step: 256 rays from
/// frames' centres in random directions, each 100 cells long (they stop
/// at their first hit, usually sooner), and `World::query_point` at the
/// same centres.
fn world_rays(c: &mut Criterion) {
    use rand::{Rng, SeedableRng};
    let mut g = c.benchmark_group("world/rays");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let mut sim = scenes::uniform(100_000, 1).world(WorldConfig::default()).expect("valid scene");
    sim.step();
    let world = &sim.world;
    let centres: Vec<[f64; 3]> =
        query_boxes(world).iter().map(|b| std::array::from_fn(|k| 0.5 * (b.min[k] + b.max[k]))).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let rays: Vec<([f64; 3], [f64; 3])> = centres
        .iter()
        .map(|&o| {
            let d: [f64; 3] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
            let n = d.iter().map(|x| x * x).sum::<f64>().sqrt();
            (o, d.map(|x| x / n))
        })
        .collect();
    let length = 100.0 * world.cell_size();
    g.throughput(Throughput::Elements(rays.len() as u64));
    g.bench_function("uniform/100000/cast_ray first hit", |b| {
        b.iter(|| rays.iter().filter(|(o, d)| world.cast_ray(*o, *d, length).expect("valid ray").is_some()).count())
    });
    // The same rays started outside the scene's frames, through empty space:
    // each walks its whole 100 cells.
    let far: Vec<([f64; 3], [f64; 3])> = rays.iter().map(|&(o, d)| (o.map(|x| x + 1e4), d)).collect();
    g.bench_function("uniform/100000/cast_ray 100 empty cells", |b| {
        b.iter(|| far.iter().filter(|(o, d)| world.cast_ray(*o, *d, length).expect("valid ray").is_some()).count())
    });
    g.bench_function("uniform/100000/query_point", |b| {
        b.iter(|| centres.iter().map(|p| world.query_point(*p).expect("valid point").len()).sum::<usize>())
    });
    g.finish();
}

/// `World::contact_geometry` (first contact's instant, normal and contact
/// set, or depth and manifold for frames overlapping from the start) on
/// every contact of a step of the uniform 10k scene, beside that step
/// itself: what asking for the geometry of every contact costs.
fn world_contact_geometry(c: &mut Criterion) {
    let mut g = c.benchmark_group("world/contact_geometry");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let mut sim = scenes::uniform(10_000, 1).world(WorldConfig::default()).expect("valid scene");
    sim.step();
    sim.prepare();
    sim.step();
    let contacts = sim.world.contacts().to_vec();
    g.throughput(Throughput::Elements(contacts.len() as u64));
    g.bench_function(format!("uniform/10000/every contact ({})", contacts.len()), |b| {
        b.iter(|| contacts.iter().filter(|k| sim.world.contact_geometry(k).is_ok()).count())
    });
    g.finish();
}

/// `World::set_pose` on every body of the uniform 100k scene (each to a
/// pose a little along x, back and forth): what a loop that drives its
/// bodies by their poses pays before each step.
fn world_set_pose(c: &mut Criterion) {
    let mut g = c.benchmark_group("world/set_pose");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let mut sim = scenes::uniform(100_000, 1).world(WorldConfig::default()).expect("valid scene");
    sim.step();
    let poses: Vec<_> = sim.world.bodies().map(|(h, b)| (h, b.pose())).collect();
    g.throughput(Throughput::Elements(poses.len() as u64));
    let mut shift = 0.01;
    g.bench_function("uniform/100000/every body", |b| {
        b.iter(|| {
            shift = -shift;
            for (h, p) in &poses {
                let t = p.translation();
                let pose = Pose::new(p.linear(), [t[0] + shift, t[1], t[2]]).expect("a valid pose");
                sim.world.set_pose(*h, pose).expect("a live body");
            }
        })
    });
    g.finish();
}

fn run(c: &mut Criterion) {
    let threads = std::env::var("FMBGRID_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    // Criterion is not `Send`: size the global pool instead of installing one.
    #[cfg(feature = "parallel")]
    if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global() {
        eprintln!("rayon global pool already built ({e}); running on it");
    }
    #[cfg(not(feature = "parallel"))]
    let _ = threads;
    world_step(c);
    world_query(c);
    world_rays(c);
    world_contact_geometry(c);
    world_set_pose(c);
}

criterion_group!(benches, run);
criterion_main!(benches);
