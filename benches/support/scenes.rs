//! Seeded world scenes shared by the world bench and the `scene_bench`
//! program (included with `#[path]`): bodies of frames, fixed or moving with
//! a velocity, from which both an fmbgrid [`World`] and the parry baseline
//! are built.
//!
//! Every scene is parameterised by `N` and a seed, steps with [`DT`] = 1/60
//! and, except where noted, aims at about 0.5 intersecting pairs per frame
//! per step (the volume per frame of each scene was measured and tuned for
//! that, at N = 10k and 100k; see [`VOLUME_PER_FRAME`]):
//! * `uniform`: oriented boxes, half extents uniform in 0.5–1.5, uniformly
//!   placed in a cube, all moving with velocity components uniform in
//!   ±[`SPEED`] units per second;
//! * `mixed`: as `uniform`, but each box scaled by a log-uniform factor in
//!   1–1000 (sizes 1:1000);
//! * `clustered`: as `uniform`, but 90% of the frames in a cube of 1% of the
//!   volume (the cluster has the uniform density; the rest are sparse);
//! * `clustered-wide`: oriented boxes of half extents 0.05–5 (log-uniform
//!   scale), three quarters in a cluster at the density of `mixed`'s
//!   estimate, a quarter in a sparse background cube eight times its
//!   volume, each moving about a third of its size a step (velocity
//!   components normal);
//! * `mostly-static`: `N` fixed boxes plus `N / 100` moving ones, uniform
//!   density over all of them (fixed–fixed pairs are never reported);
//! * `tetrahedra`: as `uniform`, with tetrahedra (the box's corner simplex,
//!   centred);
//! * `uniform-fast`, `mostly-static-fast`: the same scenes with fast
//!   movers: velocity components normal with σ = [`FAST_SIGMA`] units per
//!   second (about half a box, 0.5 units, a step);
//! * `uniform-static`, `uniform-resting`: `uniform` with every moving body
//!   at rest (velocity zero), or all but one in [`MOVING_EVERY`];
//! * `2d`: half parallelograms (sheared, 45°–135° between the sides), half
//!   triangles, sides 1–3, moving in the plane.
#![allow(dead_code)]

use fmbgrid::{Body, BodyHandle, Contact, Frame, Frame2, Frame3, FrameKind, World, WorldConfig, WorldError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Time step of every scene (seconds).
pub const DT: f64 = 1.0 / 60.0;

/// Velocity components are uniform in `-SPEED..SPEED` (units per second).
pub const SPEED: f64 = 3.0;

/// Standard deviation of the fast scenes' velocity components (units per
/// second): about 0.5 units a step at [`DT`].
pub const FAST_SIGMA: f64 = 30.0;

/// Moving bodies reverse their velocity every this many steps, so that a
/// long benchmark keeps the scene's density (bodies oscillate by about
/// `SPEED` units instead of drifting apart).
pub const REVERSE_EVERY: u64 = 60;

/// Names accepted by [`scene`], in the order of the tables.
pub const SCENES: [&str; 11] = [
    "uniform",
    "uniform-fast",
    "uniform-static",
    "uniform-resting",
    "mixed",
    "clustered",
    "clustered-wide",
    "mostly-static",
    "mostly-static-fast",
    "tetrahedra",
    "2d",
];

/// Volume (area in 2D) per frame giving about 0.5 intersecting pairs per
/// frame, measured with the world at N = 10k and 100k: uniform boxes,
/// tetrahedra, 2D shapes. `mixed` scales the boxes' figure by the mean cube
/// of the pair's summed scales (see [`mixed`]).
pub const VOLUME_PER_FRAME: [f64; 3] = [88.0, 24.0, 14.0];

/// One body: its frames in world coordinates (identity pose), whether it
/// moves, and its velocity (zero for fixed bodies).
#[derive(Clone, Debug)]
pub struct SceneBody<const D: usize> {
    pub frames: Vec<Frame<D>>,
    pub moving: bool,
    pub velocity: [f64; D],
}

/// A generated scene.
#[derive(Clone, Debug)]
pub struct Scene<const D: usize> {
    pub name: &'static str,
    pub dt: f64,
    pub bodies: Vec<SceneBody<D>>,
}

impl<const D: usize> Scene<D> {
    /// Number of frames.
    pub fn frames(&self) -> usize {
        self.bodies.iter().map(|b| b.frames.len()).sum()
    }

    /// Number of frames of moving bodies.
    pub fn moving_frames(&self) -> usize {
        self.bodies.iter().filter(|b| b.moving).map(|b| b.frames.len()).sum()
    }

    /// Index of each body's first frame in the flat frame numbering (body
    /// order, then frame order), plus the total at the end.
    pub fn frame_offsets(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.bodies.len() + 1);
        let mut total = 0;
        for b in &self.bodies {
            out.push(total);
            total += b.frames.len();
        }
        out.push(total);
        out
    }

    /// The scene as a world; body `i` gets slot `i` (its handle's index).
    ///
    /// # Errors
    /// Whatever [`World::insert`] refuses (never, for generated scenes).
    pub fn world(&self, config: WorldConfig) -> Result<Sim<D>, WorldError> {
        let mut world = World::new(config);
        let mut moving = Vec::new();
        for b in &self.bodies {
            let body = if b.moving {
                Body::moving(b.frames.clone()).with_velocity(b.velocity)
            } else {
                Body::fixed(b.frames.clone())
            };
            let h = world.insert(body)?;
            if b.moving {
                moving.push((h, b.velocity));
            }
        }
        Ok(Sim { world, moving, steps: 0, dt: self.dt })
    }
}

/// A world built from a scene, stepped with velocity reversal every
/// [`REVERSE_EVERY`] steps.
pub struct Sim<const D: usize> {
    pub world: World<D>,
    moving: Vec<(BodyHandle, [f64; D])>,
    steps: u64,
    pub dt: f64,
}

impl<const D: usize> Sim<D> {
    /// Work to do before a step, outside any timing: reverses the moving
    /// bodies' velocities when due. Returns true when it did.
    pub fn prepare(&mut self) -> bool {
        let due = reverse_due(self.steps);
        if due {
            for (h, v) in &mut self.moving {
                *v = v.map(|x| -x);
                self.world.set_velocity(*h, *v).expect("live moving body");
            }
        }
        self.steps += 1;
        due
    }

    /// The step itself (what the benchmarks time); returns the contact count.
    pub fn step(&mut self) -> usize {
        self.contacts().len()
    }

    /// The step, returning its contacts.
    pub fn contacts(&mut self) -> &[Contact<D>] {
        self.world.step(self.dt).expect("scene stays in range")
    }
}

/// True when the velocities reverse before step number `steps` (0-based).
pub fn reverse_due(steps: u64) -> bool {
    steps > 0 && steps.is_multiple_of(REVERSE_EVERY)
}

/// A 3D scene by name (`None` for `2d` or an unknown name).
pub fn scene3(name: &str, n: usize, seed: u64) -> Option<Scene<3>> {
    Some(match name {
        "uniform" => uniform(n, seed),
        "mixed" => mixed(n, seed),
        "clustered" => clustered(n, seed),
        "clustered-wide" => clustered_wide(n, seed),
        "mostly-static" => mostly_static(n, seed),
        "uniform-fast" => fast(uniform(n, seed), "uniform-fast", seed),
        "uniform-static" => at_rest(uniform(n, seed), "uniform-static"),
        "uniform-resting" => mostly_at_rest(uniform(n, seed), "uniform-resting"),
        "mostly-static-fast" => fast(mostly_static(n, seed), "mostly-static-fast", seed),
        "tetrahedra" => tetrahedra(n, seed),
        _ => return None,
    })
}

/// `scene` with every moving body's velocity drawn anew: components normal
/// with σ = [`FAST_SIGMA`] (Box–Muller, from a stream of its own, so the
/// placement is the slow scene's).
pub fn fast(mut scene: Scene<3>, name: &'static str, seed: u64) -> Scene<3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xfa57);
    let mut normal = move || {
        let (u, v): (f64, f64) = (rng.random::<f64>().max(f64::MIN_POSITIVE), rng.random());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    for body in scene.bodies.iter_mut().filter(|b| b.moving) {
        body.velocity = std::array::from_fn(|_| FAST_SIGMA * normal());
    }
    scene.name = name;
    scene
}

/// `scene` with every moving body at rest (velocity zero, still a moving
/// body): the world of the Python benchmark's static loop, which re-poses
/// every body at each step (`python/bench/uniform.py`).
pub fn at_rest<const D: usize>(mut scene: Scene<D>, name: &'static str) -> Scene<D> {
    for body in scene.bodies.iter_mut().filter(|b| b.moving) {
        body.velocity = [0.0; D];
    }
    scene.name = name;
    scene
}

/// `scene` with all but one moving body in [`MOVING_EVERY`] at rest (the
/// others keep their velocity): a world where most bodies rest.
pub fn mostly_at_rest<const D: usize>(mut scene: Scene<D>, name: &'static str) -> Scene<D> {
    for (k, body) in scene.bodies.iter_mut().filter(|b| b.moving).enumerate() {
        if k % MOVING_EVERY != 0 {
            body.velocity = [0.0; D];
        }
    }
    scene.name = name;
    scene
}

/// One moving body in this many keeps moving in `uniform-resting`.
pub const MOVING_EVERY: usize = 20;

/// A uniformly random rotation (Shoemake's quaternion method), by columns.
pub fn random_rotation(rng: &mut ChaCha8Rng) -> [[f64; 3]; 3] {
    use std::f64::consts::TAU;
    let (u1, u2, u3): (f64, f64, f64) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let (x, y, z, w) = (a * (TAU * u2).sin(), a * (TAU * u2).cos(), b * (TAU * u3).sin(), b * (TAU * u3).cos());
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)],
        [2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)],
        [2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)],
    ]
}

fn velocity<const D: usize>(rng: &mut ChaCha8Rng) -> [f64; D] {
    std::array::from_fn(|_| rng.random_range(-SPEED..SPEED))
}

fn point_in<const D: usize>(rng: &mut ChaCha8Rng, min: f64, side: f64) -> [f64; D] {
    std::array::from_fn(|_| min + side * rng.random::<f64>())
}

/// An oriented box of half extents `scale · U(0.5, 1.5)` centred at `center`.
fn oriented_box(rng: &mut ChaCha8Rng, center: [f64; 3], scale: f64) -> Frame3 {
    let half = std::array::from_fn(|_| scale * rng.random_range(0.5..1.5));
    let axes = random_rotation(rng);
    Frame3::oriented_box(center, half, axes).expect("orthonormal axes, positive extents")
}

fn moving_body<const D: usize>(frame: Frame<D>, rng: &mut ChaCha8Rng) -> SceneBody<D> {
    SceneBody { frames: vec![frame], moving: true, velocity: velocity(rng) }
}

/// Side of the cube holding `count` frames at `volume` per frame.
fn side(count: usize, volume: f64, dim: i32) -> f64 {
    (count.max(1) as f64 * volume).powf(1.0 / f64::from(dim))
}

/// `n` moving oriented boxes in a cube, about 0.5 pairs per frame.
pub fn uniform(n: usize, seed: u64) -> Scene<3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let l = side(n, VOLUME_PER_FRAME[0], 3);
    let bodies = (0..n)
        .map(|_| {
            let c = point_in(&mut rng, 0.0, l);
            let f = oriented_box(&mut rng, c, 1.0);
            moving_body(f, &mut rng)
        })
        .collect();
    Scene { name: "uniform", dt: DT, bodies }
}

/// Largest scale factor of `mixed` (the smallest is 1).
pub const MIXED_RATIO: f64 = 1000.0;

/// Measured correction of `mixed`'s volume per frame: the cube-of-sums
/// estimate alone gives 0.41 pairs per frame.
pub const MIXED_CORRECTION: f64 = 0.83;

/// `n` moving oriented boxes whose sizes span 1:1000 (log-uniform scale
/// factor), at the density of pairs of `uniform` as far as the size
/// distribution allows: the probability that two boxes meet grows as the
/// cube of their summed sizes, so the volume per frame is the uniform one
/// times `E[(s₁ + s₂)³] / 8` (times [`MIXED_CORRECTION`]). Pairs are mostly
/// between large boxes, and between a large box and the small ones in it.
pub fn mixed(n: usize, seed: u64) -> Scene<3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Moments of the log-uniform s on [1, r]: E[s^k] = (r^k - 1) / (k ln r).
    let r = MIXED_RATIO;
    let m = |k: f64| (r.powf(k) - 1.0) / (k * r.ln());
    let cube_of_sum = 2.0 * m(3.0) + 6.0 * m(2.0) * m(1.0);
    let l = side(n, VOLUME_PER_FRAME[0] * MIXED_CORRECTION * cube_of_sum / 8.0, 3);
    let bodies = (0..n)
        .map(|_| {
            let c = point_in(&mut rng, 0.0, l);
            let scale = r.powf(rng.random::<f64>());
            let f = oriented_box(&mut rng, c, scale);
            moving_body(f, &mut rng)
        })
        .collect();
    Scene { name: "mixed", dt: DT, bodies }
}

/// `n` moving oriented boxes, 90% of them in a cube of 1% of the volume
/// (at the uniform density, so about 0.45 pairs per frame overall), the
/// rest spread over the whole cube.
pub fn clustered(n: usize, seed: u64) -> Scene<3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let inside = n * 9 / 10;
    let lc = side(inside, VOLUME_PER_FRAME[0], 3);
    let l = lc * 100f64.cbrt();
    let corner: [f64; 3] = point_in(&mut rng, 0.0, l - lc);
    let bodies = (0..n)
        .map(|i| {
            let c = if i < inside {
                std::array::from_fn(|k| corner[k] + lc * rng.random::<f64>())
            } else {
                point_in(&mut rng, 0.0, l)
            };
            let f = oriented_box(&mut rng, c, 1.0);
            moving_body(f, &mut rng)
        })
        .collect();
    Scene { name: "clustered", dt: DT, bodies }
}

/// Smallest and largest scale factor of `clustered-wide`'s boxes.
pub const WIDE_SCALES: [f64; 2] = [0.05, 5.0];

/// `n` moving oriented boxes whose sizes span two orders of magnitude
/// (scale log-uniform in [`WIDE_SCALES`]), three quarters of them in a
/// cluster at the density `mixed`'s estimate gives such sizes, the rest in
/// a background cube of eight times the cluster's volume around it; each
/// moves about a third of its size a step, in a random direction.
pub fn clustered_wide(n: usize, seed: u64) -> Scene<3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let [a, b] = WIDE_SCALES;
    // Moments of the log-uniform s on [a, b]: E[s^k] = (b^k - a^k) / (k ln(b/a)).
    let m = |k: f64| (b.powf(k) - a.powf(k)) / (k * (b / a).ln());
    let cube_of_sum = 2.0 * m(3.0) + 6.0 * m(2.0) * m(1.0);
    let inside = n * 3 / 4;
    let lc = side(inside, VOLUME_PER_FRAME[0] * cube_of_sum / 8.0, 3);
    let mut normal = {
        let mut r = ChaCha8Rng::seed_from_u64(seed ^ 0x31de);
        move || {
            let (u, v): (f64, f64) = (r.random::<f64>().max(f64::MIN_POSITIVE), r.random());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    };
    let bodies = (0..n)
        .map(|i| {
            let c = if i < inside { point_in(&mut rng, 0.0, lc) } else { point_in(&mut rng, -0.5 * lc, 2.0 * lc) };
            let scale = a * (b / a).powf(rng.random::<f64>());
            let f = oriented_box(&mut rng, c, scale);
            // A third of the box's size (twice its scale) a step, spread over
            // three axes.
            let sigma = 2.0 * scale / 3.0 / DT / 3f64.sqrt();
            SceneBody { frames: vec![f], moving: true, velocity: std::array::from_fn(|_| sigma * normal()) }
        })
        .collect();
    Scene { name: "clustered-wide", dt: DT, bodies }
}

/// `n` fixed oriented boxes plus `n / 100` moving ones, all at the uniform
/// density (only pairs with a moving box count: about one per moving box).
pub fn mostly_static(n: usize, seed: u64) -> Scene<3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let moving = (n / 100).max(1);
    let l = side(n + moving, VOLUME_PER_FRAME[0], 3);
    let bodies = (0..n + moving)
        .map(|i| {
            let c = point_in(&mut rng, 0.0, l);
            let f = oriented_box(&mut rng, c, 1.0);
            if i < n {
                SceneBody { frames: vec![f], moving: false, velocity: [0.0; 3] }
            } else {
                moving_body(f, &mut rng)
            }
        })
        .collect();
    Scene { name: "mostly-static", dt: DT, bodies }
}

/// `n` moving tetrahedra: the corner simplex of a `uniform` box, centred
/// on the box's centre, about 0.5 pairs per frame.
pub fn tetrahedra(n: usize, seed: u64) -> Scene<3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let l = side(n, VOLUME_PER_FRAME[1], 3);
    let bodies = (0..n)
        .map(|_| {
            let c: [f64; 3] = point_in(&mut rng, 0.0, l);
            let axes = random_rotation(&mut rng);
            let comps: [[f64; 3]; 3] = std::array::from_fn(|i| {
                let len = 2.0 * rng.random_range(0.5..1.5);
                axes[i].map(|x| x * len)
            });
            let origin = std::array::from_fn(|k| c[k] - 0.25 * (comps[0][k] + comps[1][k] + comps[2][k]));
            let f = Frame3::tetrahedron(origin, comps).expect("orthogonal components");
            moving_body(f, &mut rng)
        })
        .collect();
    Scene { name: "tetrahedra", dt: DT, bodies }
}

/// `n` moving 2D frames, alternately parallelograms (sides 1–3, 45°–135°
/// apart) and triangles of the same sides, about 0.5 pairs per frame.
pub fn planar(n: usize, seed: u64) -> Scene<2> {
    use std::f64::consts::{FRAC_PI_4, TAU};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let l = side(n, VOLUME_PER_FRAME[2], 2);
    let bodies = (0..n)
        .map(|i| {
            let c: [f64; 2] = point_in(&mut rng, 0.0, l);
            let a = rng.random_range(0.0..TAU);
            let b = a + rng.random_range(FRAC_PI_4..3.0 * FRAC_PI_4);
            let (l0, l1) = (rng.random_range(1.0..3.0), rng.random_range(1.0..3.0));
            let comps = [[l0 * a.cos(), l0 * a.sin()], [l1 * b.cos(), l1 * b.sin()]];
            let (kind, w) = if i % 2 == 0 { (FrameKind::Cuboid, 0.5) } else { (FrameKind::Tetrahedron, 1.0 / 3.0) };
            let origin = std::array::from_fn(|k| c[k] - w * (comps[0][k] + comps[1][k]));
            let f = Frame2::new(kind, origin, comps).expect("sides at least 45° apart");
            moving_body(f, &mut rng)
        })
        .collect();
    Scene { name: "2d", dt: DT, bodies }
}
