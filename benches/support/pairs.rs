//! Seeded pair generators shared by the narrow-phase bench and the
//! `qualify` program (included with `#[path]`): the paper's uniform ±100
//! frames (fmb-digest §7) and oriented boxes.
#![allow(dead_code)]

use fmbgrid::{Frame, FrameKind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Which pairs of the paper's generator to keep.
#[derive(Clone, Copy, PartialEq)]
pub enum Set {
    /// Every pair.
    All,
    /// Only pairs whose boxes overlap (what a broad phase passes on).
    Near,
}

pub fn random_frame<const D: usize>(rng: &mut ChaCha8Rng, kind: FrameKind, moving: bool) -> Frame<D> {
    loop {
        let mut v = || std::array::from_fn(|_| rng.random_range(-100.0..100.0));
        let (o, c, vel) = (v(), std::array::from_fn(|_| v()), v());
        if let Ok(f) = Frame::new(kind, o, c) {
            // The paper's generator skips |det| <= 0.1; ours refuses degenerate frames itself.
            return if moving { f.with_velocity(vel).unwrap() } else { f };
        }
    }
}

pub fn random_obb<const D: usize>(rng: &mut ChaCha8Rng, spread: f64) -> Frame<D> {
    loop {
        let center = std::array::from_fn(|_| rng.random_range(-spread..spread));
        let half = std::array::from_fn(|_| rng.random_range(0.5..1.5));
        let axes: [[f64; D]; D] = std::array::from_fn(|_| std::array::from_fn(|_| rng.random_range(-1.0..1.0)));
        // Gram-Schmidt to an orthonormal basis.
        let mut q = axes;
        for i in 0..D {
            for j in 0..i {
                let (qj, d) = (q[j], (0..D).map(|k| q[i][k] * q[j][k]).sum::<f64>());
                q[i].iter_mut().zip(qj).for_each(|(x, y)| *x -= d * y);
            }
            let n = (0..D).map(|k| q[i][k] * q[i][k]).sum::<f64>().sqrt();
            q[i].iter_mut().for_each(|x| *x /= n);
        }
        if let Ok(f) = Frame::oriented_box(center, half, q) {
            return f;
        }
    }
}

/// `n` pairs of the class `(ka, kb)`.
pub fn pairs<const D: usize>(
    seed: u64,
    n: usize,
    ka: FrameKind,
    kb: FrameKind,
    moving: bool,
    set: Set,
) -> Vec<(Frame<D>, Frame<D>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (a, b) = (random_frame(&mut rng, ka, moving), random_frame(&mut rng, kb, moving));
        if set == Set::All || a.aabb().intersects(&b.aabb()) {
            out.push((a, b));
        }
    }
    out
}

pub fn obb_pairs<const D: usize>(seed: u64, n: usize) -> Vec<(Frame<D>, Frame<D>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (a, b) = (random_obb(&mut rng, 1.5), random_obb(&mut rng, 1.5));
        if a.aabb().intersects(&b.aabb()) {
            out.push((a, b));
        }
    }
    out
}
