//! Known defects, each a test that fails today, `#[ignore]`d with its
//! reason so that the suite stays green and the defect stays visible. Run
//! them with `cargo test --release --test narrow known_defects:: -- --ignored`; fix
//! the code, then drop the `#[ignore]`.

/// A vertex of `A` meets a vertex of `B` at t = 2/3; `B`'s vertex (2, -1)
/// belongs to the swept intersection (`tests/narrow/exact_box.rs`,
/// `box_reaches_a_vertex_met_by_a_vertex`, checks the shipped `intersect`).
fn vertex_meets_vertex() -> (fmbgrid::Frame2, fmbgrid::Frame2) {
    let a = fmbgrid::Frame2::cuboid([-0.5, 0.0], [[1.5, -1.0], [0.0, 1.0]]).unwrap().with_velocity([1.5, 0.0]).unwrap();
    let b = fmbgrid::Frame2::tetrahedron([-0.5, -0.5], [[2.5, -0.5], [-1.0, 2.0]]).unwrap();
    (a, b)
}

/// The vertex enumeration (`src/narrow/exact_box.rs`), which is only the
/// simplex's fallback for such pairs (moving, with a parallelepiped), misses
/// that vertex: it returns max x = 1.0, min y = -0.8. Found in review; over
/// 300k lattice pairs it was off by up to 1.39 (2D) and 0.42 (3D).
#[test]
#[ignore = "known defect of the vertex enumeration on degenerate pairs"]
fn enumeration_reaches_a_vertex_met_by_a_vertex() {
    let (a, b) = vertex_meets_vertex();
    let hit = fmbgrid::narrow::intersect_enumerated(&a, &b).unwrap();
    assert!(hit.aabb.max[0] >= 2.0 - 1e-9 && hit.aabb.min[1] <= -1.0 + 1e-9, "{:?}", hit.aabb);
}

/// `overlaps` and `overlap_interval` on moving pairs: near-touching pairs
/// (`Set::NearTouch`) whose relative velocity is scaled by 1e6 overlap at
/// `t = 0` (a vertex of one inside the other by the witness's 1e-9 margin:
/// `overlaps`, whose moving witness needs one end only, says true), and
/// leave each other within about 1e-15 of the step; the elimination, with
/// time as a variable, drops that interval in its touching band
/// (`overlap_interval` and `intersect` say `None`). Found this stop by
/// asserting `overlaps` in `witness.rs`'s moving check (seed 31: pairs 259,
/// 876, 1197, 1497, 1498 of the 3D check). Which answer the touching policy
/// wants at that scale is open; the two must agree.
#[test]
#[ignore = "known defect: overlaps and overlap_interval disagree on near-touching pairs at 1e6x speed"]
fn overlaps_agrees_with_the_interval_at_extreme_speed() {
    use crate::support::{self, Set};
    let mut rng = support::rng(31);
    let mut disagree = 0;
    for i in 0..6_000 {
        let (a, b) = support::gen_pair::<3>(Set::for_index(i), true, &mut rng);
        let Ok(b) = b.with_velocity(support::mul(b.velocity(), 1e6)) else { continue };
        disagree += usize::from(fmbgrid::overlaps(&a, &b) != fmbgrid::overlap_interval(&a, &b).is_some());
    }
    assert_eq!(disagree, 0, "pairs where overlaps and overlap_interval disagree");
}
