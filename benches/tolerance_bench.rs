//! Tolerance benchmark, after Mantel's thesis: every pair of frames of two
//! meshes closer than a safety distance δ, with its distance, for two
//! 47k-tetrahedron bunnies (`assets/meshes/bunny_47k`) at poses chosen to
//! land in distance bands (apart, a few pairs within δ, many), δ from 0.1%
//! to 5% of the bunny's size; fmbgrid's `World::pairs_within(δ)` against
//! parry doing the same job: a `Bvh` over the frames' boxes grown by δ/2
//! (binned SAH, rebuilt for each query as the bodies may have moved), its
//! pairs of different bodies, then `query::distance` on each candidate
//! (each tetrahedron a `ConvexPolyhedron` hull, built once outside the
//! timing). Both engines must find the same pairs (compared by count and
//! by the largest distance difference).
//!
//! Run: `cargo bench --bench tolerance_bench -- [--repeats R] [--gaps LIST]
//! [--deltas LIST] [--csv FILE]` (defaults: 7 repeats, the median of R
//! timed queries per pose and δ, one thread; gaps `0.10,0.02,-0.05` and δ
//! `0.001,0.01,0.05`, shares of the bunny's size; `--csv` appends one row
//! per gap and δ to FILE, columns `TOLERANCE_HEADER`).

use std::time::Instant;

use fmbgrid::{Body, Frame3, Pose3, World3, WorldConfig};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::Pose;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
use parry3d_f64::query;
use parry3d_f64::shape::Shape;

#[path = "support/args.rs"]
mod cli;
#[path = "support/peer.rs"]
mod peer;
#[path = "support/results.rs"]
mod results;

/// Columns of `tolerance_bench.csv` after `machine,commit,date`: one row per
/// gap and δ (shares of the bunny's size), the pairs within δ, the median
/// query times and whether parry found the same pairs.
const TOLERANCE_HEADER: &str =
    "bench,tetrahedra,gap,delta,pairs,fmbgrid_ms,parry_ms,ratio_to_parry,same_pairs,distance_sum_diff";

/// A comma-separated list of numbers after `name`, or `default`.
fn list(args: &[String], name: &str, default: &[f64]) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    match cli::value(args, name) {
        Some(v) => Ok(v.split(',').map(str::parse).collect::<Result<_, _>>()?),
        None => Ok(default.to_vec()),
    }
}

/// A median of the sorted copy.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// parry's side: each frame's pose and hull, and its body.
struct Peer {
    shapes: Vec<(Pose, Box<dyn Shape>)>,
    body: Vec<u32>,
}

impl Peer {
    fn new(frames: &[(Frame3, u32)]) -> Self {
        let shapes = frames.iter().map(|(f, _)| peer::peer3::shape(f).expect("solid tetrahedra")).collect();
        Peer { shapes, body: frames.iter().map(|(_, b)| *b).collect() }
    }

    /// Pairs of different bodies within `delta`: (count, sum of distances).
    fn within(&self, delta: f64) -> (usize, f64) {
        let boxes: Vec<Aabb> = self.shapes.iter().map(|(p, s)| s.compute_aabb(p).loosened(delta / 2.0)).collect();
        let tree = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
        let (mut count, mut sum) = (0, 0.0);
        tree.traverse_bvtt_single_tree::<false>(&mut BvhWorkspace::default(), &mut |a, b| {
            let (a, b) = (a as usize, b as usize);
            if self.body[a] == self.body[b] {
                return;
            }
            let (pa, sa) = &self.shapes[a];
            let (pb, sb) = &self.shapes[b];
            let d = query::distance(pa, &**sa, pb, &**sb).map_or(f64::INFINITY, |d| d.distance);
            if d <= delta {
                count += 1;
                sum += d;
            }
        });
        (count, sum)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = cli::args();
    let repeats: usize = match args.iter().position(|a| a == "--repeats") {
        Some(i) => args.get(i + 1).ok_or("--repeats needs a count")?.parse()?,
        None => 7,
    };
    let gaps = list(&args, "--gaps", &[0.10, 0.02, -0.05])?;
    let deltas = list(&args, "--deltas", &[0.001, 0.01, 0.05])?;
    let mut csv = Vec::new();
    let mesh = fmbgrid::mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/meshes/bunny_47k.ele"))?;
    let (frames, _) = mesh.frames(0.0);
    let size = frames.iter().fold(fmbgrid::Aabb::EMPTY, |b, f| b.union(&f.aabb()));
    let extent = size.extent();
    let width = extent[0];
    let scale = extent.iter().fold(0.0_f64, |m, &x| m.max(x));
    println!("# Tolerance pairs of two 47k-tetrahedron bunnies, fmbgrid vs parry 0.31 (f64)\n");
    println!(
        "{} tetrahedra per bunny, size {:.3} (largest extent); the second bunny is the first shifted along x to touch it, plus a gap (negative: overlapping). Median of {repeats} queries, one thread.\n",
        frames.len(),
        scale
    );
    rayon::ThreadPoolBuilder::new().num_threads(1).build_global()?;
    let pair = |shift: f64| -> Result<World3, Box<dyn std::error::Error>> {
        let mut world = World3::new(WorldConfig::default());
        world.insert(Body::moving(frames.clone()))?;
        world.insert(Body::moving(frames.clone()).with_pose(Pose3::from_translation([shift, 0.0, 0.0])?))?;
        Ok(world)
    };
    // The shift at which the two bunnies touch, by bisection.
    let (mut lo, mut hi) = (0.0, 1.5 * width);
    while hi - lo > 1e-6 * scale {
        let mid = 0.5 * (lo + hi);
        if pair(mid)?.pairs_within(0.0)?.is_empty() { hi = mid } else { lo = mid }
    }
    println!("The bunnies touch at a shift of {hi:.4} along x ({:.3} of their width).\n", hi / width);
    println!(
        "| gap (share of size) | δ (share of size) | pairs within δ | fmbgrid ms | parry ms | fmbgrid/parry | same pairs |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &gap in &gaps {
        let mut world = pair(hi + gap * scale)?;
        let placed: Vec<(Frame3, u32)> = world
            .bodies()
            .enumerate()
            .flat_map(|(k, (h, b))| {
                let world = &world;
                (0..b.frames().len() as u32).map(move |index| {
                    (world.frame(fmbgrid::FrameId { body: h, index }).expect("a live frame"), k as u32)
                })
            })
            .collect();
        let parry = Peer::new(&placed);
        for &share in &deltas {
            let delta = share * scale;
            let ours = world.pairs_within(delta)?;
            let (count, sum) = (ours.len(), ours.iter().map(|p| p.distance).sum::<f64>());
            let (theirs, their_sum) = parry.within(delta);
            let mut t_ours = Vec::new();
            let mut t_theirs = Vec::new();
            for _ in 0..repeats {
                let start = Instant::now();
                std::hint::black_box(world.pairs_within(delta)?.len());
                t_ours.push(start.elapsed().as_secs_f64() * 1e3);
                let start = Instant::now();
                std::hint::black_box(parry.within(delta));
                t_theirs.push(start.elapsed().as_secs_f64() * 1e3);
            }
            let (a, b) = (median(t_ours), median(t_theirs));
            let same_pairs = if count == theirs { "yes" } else { "no" };
            csv.push(format!(
                "tolerance_bench,{},{gap:+.2},{share},{count},{a:.2},{b:.2},{:.3},{same_pairs},{:.1e}",
                frames.len(),
                a / b,
                (sum - their_sum).abs()
            ));
            let same = if count == theirs {
                format!("yes (Σ distances differ by {:.1e})", (sum - their_sum).abs())
            } else {
                format!("no: parry {theirs}")
            };
            println!("| {gap:+.2} | {share} | {count} | {a:.2} | {b:.2} | {:.3} | {same} |", a / b);
        }
    }
    results::report_lines(cli::value(&args, "--csv").as_deref(), TOLERANCE_HEADER, &csv);
    Ok(())
}
