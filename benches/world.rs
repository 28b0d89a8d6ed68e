//! World benchmarks: one `World::step` (swept boxes, hashed grid, FMB with
//! exact boxes, events, advance) on the scenes of `support/scenes.rs`, with
//! throughput in frames. Velocity reversals (every 60 steps, to keep the
//! scene's density) happen outside the timed region.
//!
//! Also `World::query_aabb` after a step (the moving frames through the
//! step's cell list) and after an edit (every moving frame tested), side by
//! side.
//!
//! `cargo bench --bench world` (filter e.g. `-- uniform`); single thread
//! unless `FMBGRID_THREADS` says otherwise. The parry comparison is in the
//! `scene_bench` example.

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
}

criterion_group!(benches, run);
criterion_main!(benches);
