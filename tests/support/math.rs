//! The seeded generator and the small vector helpers of every test crate,
//! re-exported by `support` (and by `support::world`). A leaf module: the
//! fuzz target `world_ops` includes it by path with `support/world`.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The generator used by every test: seeded, portable, reproducible.
pub type TestRng = ChaCha8Rng;

/// A seeded generator.
pub fn rng(seed: u64) -> TestRng {
    TestRng::seed_from_u64(seed)
}

// ---------------------------------------------------------------------------
// Small vector helpers.
// ---------------------------------------------------------------------------

pub fn add<const D: usize>(a: [f64; D], b: [f64; D]) -> [f64; D] {
    std::array::from_fn(|i| a[i] + b[i])
}

pub fn sub<const D: usize>(a: [f64; D], b: [f64; D]) -> [f64; D] {
    std::array::from_fn(|i| a[i] - b[i])
}

pub fn mul<const D: usize>(a: [f64; D], s: f64) -> [f64; D] {
    a.map(|x| x * s)
}

pub fn dot<const D: usize>(a: [f64; D], b: [f64; D]) -> f64 {
    (0..D).map(|i| a[i] * b[i]).sum()
}

pub fn norm<const D: usize>(a: [f64; D]) -> f64 {
    dot(a, a).sqrt()
}

pub fn normalize<const D: usize>(a: [f64; D]) -> [f64; D] {
    mul(a, 1.0 / norm(a))
}

fn to3<const D: usize>(a: [f64; D]) -> [f64; 3] {
    let mut r = [0.0; 3];
    r[..D].copy_from_slice(&a);
    r
}

fn from3<const D: usize>(r: [f64; 3]) -> [f64; D] {
    std::array::from_fn(|i| r[i])
}

pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// A vector orthogonal to the `D - 1` vectors `v` (2D: `v[0]` turned by 90°;
/// 3D: `v[0] × v[1]`). Not normalised.
pub fn orthogonal<const D: usize>(v: &[[f64; D]]) -> [f64; D] {
    match D {
        2 => std::array::from_fn(|i| if i == 0 { -v[0][1] } else { v[0][0] }),
        3 => from3(cross(to3(v[0]), to3(v[1]))),
        _ => unreachable!("2D or 3D only"),
    }
}
