//! Conversions from and to mint types (the `mint` feature): round trips
//! are exact, quaternions give the rotations `Pose3::from_axis_angle`
//! gives, and malformed input is an error.
//!
//! Run: `cargo test --release --features mint --test suite scenes_and_io::interop::` (the README's
//! test command enables the feature).

#![cfg(feature = "mint")]

use fmbgrid::{Frame3, Pose2, Pose3, WorldError};
use mint::{ColumnMatrix3, ColumnMatrix4, Point3, Quaternion, Vector3};
use rand::{Rng, SeedableRng};

fn quaternion(axis: [f64; 3], angle: f64) -> Quaternion<f64> {
    let n = axis.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (s, c) = (0.5 * angle).sin_cos();
    Quaternion { v: Vector3 { x: axis[0] / n * s, y: axis[1] / n * s, z: axis[2] / n * s }, s: c }
}

#[test]
fn quaternions_give_the_axis_angle_rotations() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for _ in 0..10_000 {
        let axis: [f64; 3] = std::array::from_fn(|_| r.random_range(-1.0..1.0));
        let (angle, t) = (r.random_range(-7.0..7.0), std::array::from_fn(|_| r.random_range(-9.0..9.0)));
        let Ok(ours) = Pose3::from_axis_angle(axis, angle, t) else { continue };
        // Any length of quaternion: it is normalised.
        let q = quaternion(axis, angle);
        let k = r.random_range(0.1..10.0);
        let scaled = Quaternion { v: Vector3 { x: q.v.x * k, y: q.v.y * k, z: q.v.z * k }, s: q.s * k };
        let theirs = Pose3::from_mint(scaled, t).expect("a valid rotation");
        let (a, b) = (ours.linear(), theirs.linear());
        for i in 0..3 {
            for j in 0..3 {
                assert!((a[i][j] - b[i][j]).abs() < 1e-14, "{axis:?} {angle}: {a:?} vs {b:?}");
            }
        }
        assert_eq!(theirs.translation(), t);
    }
}

#[test]
fn homogeneous_matrices_round_trip_exactly() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    for _ in 0..1_000 {
        let t = std::array::from_fn(|_| r.random_range(-9.0..9.0));
        let p3 = Pose3::from_axis_angle([1.0, 2.0, r.random()], r.random_range(-3.0..3.0), t).expect("valid");
        let m: ColumnMatrix4<f64> = p3.into();
        assert_eq!(Pose3::try_from(m), Ok(p3));
        let p2 = Pose2::from_angle(r.random_range(-3.0..3.0), [t[0], t[1]]).expect("valid");
        let m: ColumnMatrix3<f64> = p2.into();
        assert_eq!(Pose2::try_from(m), Ok(p2));
        let (l, tr) = p2.to_mint();
        assert_eq!(Pose2::new([l.x.into(), l.y.into()], tr.into()), Ok(p2));
    }
}

#[test]
fn mint_points_and_vectors_are_arrays() {
    let corner: Point3<f64> = Point3 { x: 1.0, y: 2.0, z: 3.0 };
    let f = Frame3::from_aabb(corner.into(), [2.0, 3.0, 4.0]).expect("valid");
    let back: Point3<f64> = f.origin().into();
    assert_eq!(back, corner);
}

#[test]
fn malformed_mint_input_is_an_error() {
    let zero = Quaternion { v: Vector3 { x: 0.0, y: 0.0, z: 0.0 }, s: 0.0 };
    assert!(matches!(Pose3::from_mint(zero, [0.0; 3]), Err(WorldError::BadNumber { .. })));
    let nan = Quaternion { v: Vector3 { x: f64::NAN, y: 0.0, z: 0.0 }, s: 1.0 };
    assert!(matches!(Pose3::from_mint(nan, [0.0; 3]), Err(WorldError::BadNumber { .. })));
    let mut m: ColumnMatrix4<f64> = Pose3::IDENTITY.into();
    m.x.w = 0.5; // a projective matrix: no pose
    assert!(matches!(Pose3::try_from(m), Err(WorldError::BadNumber { .. })));
    let mut m: ColumnMatrix4<f64> = Pose3::IDENTITY.into();
    m.y = m.x; // singular
    assert!(matches!(Pose3::try_from(m), Err(WorldError::DegeneratePose { .. })));
    let mut m: ColumnMatrix3<f64> = Pose2::IDENTITY.into();
    m.z.z = 2.0;
    assert!(Pose2::try_from(m).is_err());
}
