//! `World::set_poses_with` (poses as rows of the caller's arrays) against
//! `World::set_poses` (poses built first): the same bodies moved the same
//! way, bit for bit, the same errors, and nothing changed by a refused
//! call, over rows equal to the bodies' poses, new ones, a body listed
//! twice, and rows that are no pose (a NaN, a flat matrix) or take a frame
//! out of range.
//!
//! Run: `cargo test --release --test suite world::pose_rows::`.

#![cfg(feature = "serde")]

use crate::support::world as world_support;

use fmbgrid::{BodyHandle, Contact, Pose3, World3, WorldConfig};
use rand::Rng;
use world_support::{SceneParams, TestRng, build_world, random_scene, rng};

/// A rotation about a random axis (Rodrigues), as columns.
fn rotation(r: &mut TestRng) -> [[f64; 3]; 3] {
    let (a, t): ([f64; 3], f64) =
        ([r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), 1.0], r.random_range(0.0..6.0));
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    let [x, y, z] = a.map(|v| v / n);
    let (c, s) = (f64::cos(t), f64::sin(t));
    let k = 1.0 - c;
    [
        [c + x * x * k, y * x * k + z * s, z * x * k - y * s],
        [x * y * k - z * s, c + y * y * k, z * y * k + x * s],
        [x * z * k + y * s, y * z * k - x * s, c + z * z * k],
    ]
}

/// One call's rows: every body, most as they are, some moved, one listed
/// twice, and at `bad` a row that is no pose or one that is too far.
fn rows(world: &World3, r: &mut TestRng, bad: Option<usize>) -> Vec<(BodyHandle, [[f64; 3]; 3], [f64; 3])> {
    let mut rows: Vec<_> = world
        .bodies()
        .map(|(h, b)| {
            let p = b.pose();
            if r.random_bool(0.1) {
                (h, rotation(r), std::array::from_fn(|_| r.random_range(0.0..30.0)))
            } else {
                (h, p.linear(), p.translation())
            }
        })
        .collect();
    let again = rows[r.random_range(0..rows.len())];
    rows.push((again.0, rotation(r), again.2));
    if let Some(k) = bad {
        let which = r.random_range(0..3);
        let n = rows.len();
        let row = &mut rows[k % n];
        match which {
            0 => row.2[1] = f64::NAN,
            1 => row.1[1] = row.1[0],
            _ => row.2[0] = 1e15,
        }
    }
    rows
}

#[test]
fn rows_move_bodies_as_poses_do() {
    let mut r = rng(21);
    let mut a = World3::new(WorldConfig::default());
    build_world(
        &mut a,
        &random_scene::<3>(&mut r, &SceneParams { max_frames_per_body: 2, ..SceneParams::uniform(600, 3) }),
    );
    let mut b = World3::restore(a.snapshot()).expect("a world's own snapshot restores");
    let mut refused = 0;
    for call in 0..30 {
        let bad = (call % 3 == 2).then(|| r.random_range(0..400));
        let rows = rows(&a, &mut r, bad);
        let poses: Result<Vec<(BodyHandle, Pose3)>, _> =
            rows.iter().map(|&(h, l, t)| Pose3::new(l, t).map(|p| (h, p))).collect();
        let before = b.snapshot();
        let handles: Vec<BodyHandle> = rows.iter().map(|r| r.0).collect();
        let theirs = b.set_poses_with(&handles, |k| (rows[k].1, rows[k].2));
        match poses {
            // Debug strings: a NaN in an error is not equal to itself.
            Ok(poses) => assert_eq!(format!("{:?}", a.set_poses(&poses)), format!("{theirs:?}"), "call {call}"),
            Err(e) => assert_eq!(format!("{:?}", Err::<(), _>(e)), format!("{theirs:?}"), "call {call}: no pose"),
        }
        if theirs.is_err() {
            refused += 1;
            assert!(b.snapshot() == before, "call {call}: a refused call changed the world");
        }
        let ours = a.step(0.05).map(<[Contact<3>]>::to_vec);
        let rows_step = b.step(0.05).map(<[Contact<3>]>::to_vec);
        assert!(ours == rows_step, "call {call}: the contacts differ");
        assert!(a.bodies().zip(b.bodies()).all(|((_, x), (_, y))| x.pose() == y.pose()), "call {call}: poses");
    }
    assert!(refused >= 5, "{refused} calls refused");
}

/// `World::set_rigid_poses_with` moves bodies as `set_poses_with` does when
/// every changed row is a rotation (float32 rotations included), refuses a
/// changed row that is scaled, sheared or mirrored with nothing changed,
/// and takes a row equal to its body's pose as it is, even an affine one.
#[test]
fn rigid_rows_are_rotations_or_unchanged() {
    use fmbgrid::{ROTATION_TOLERANCE, WorldError};
    let mut r = rng(22);
    let mut a = World3::new(WorldConfig::default());
    build_world(&mut a, &random_scene::<3>(&mut r, &SceneParams::uniform(300, 3)));
    let mut b = World3::restore(a.snapshot()).expect("a world's own snapshot restores");
    let handles: Vec<BodyHandle> = a.bodies().map(|(h, _)| h).collect();
    // Rotations rounded to f32, as a single-precision quaternion gives them.
    let turns: Vec<[[f64; 3]; 3]> =
        handles.iter().map(|_| rotation(&mut r).map(|c| c.map(|x| f64::from(x as f32)))).collect();
    assert!(turns.iter().all(|&l| Pose3::new(l, [0.0; 3]).unwrap().rotation_error() <= ROTATION_TOLERANCE));
    let at = |k: usize| [k as f64 % 17.0, 3.0, k as f64 / 20.0];
    a.set_poses_with(&handles, |k| (turns[k], at(k))).expect("rotations");
    b.set_rigid_poses_with(&handles, |k| (turns[k], at(k))).expect("rotations");
    assert!(a.snapshot() == b.snapshot(), "rigid rows move bodies as plain rows do");
    for (name, broken) in [
        ("scaled", turns[7].map(|c| c.map(|x| x * 1.00001))),
        ("sheared", {
            let mut l = turns[7];
            l[1] = std::array::from_fn(|i| l[1][i] + 1e-5 * l[0][i]);
            l
        }),
        ("mirrored", [turns[7][0], turns[7][1], turns[7][2].map(|x| -x)]),
    ] {
        let row = |k: usize| (if k == 7 { broken } else { turns[k] }, at(k).map(|x| x + 1.0));
        let before = b.snapshot();
        let err = b.set_rigid_poses_with(&handles, row).unwrap_err();
        assert!(matches!(err, WorldError::NotARotation { .. }), "{name}: {err}");
        assert!(b.snapshot() == before, "{name}: a refused call changed the world");
        // As an affine pose it is taken; then, unchanged, by the rigid call too.
        b.set_poses_with(&handles, row).expect("an affine pose");
        b.set_rigid_poses_with(&handles, row).expect("unchanged rows are not checked again");
        b.set_rigid_poses_with(&handles, |k| (turns[k], at(k))).expect("rotations");
    }
}
