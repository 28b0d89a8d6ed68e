//! Bad input never panics: every constructor and `with_velocity` answer NaN,
//! ±infinity, values above `MAX_COORDINATE` (1e15), degenerate and
//! near-degenerate components, wrong vertex counts and non-positive half
//! extents with the documented `FrameError` variant. A fuzz test feeds
//! arbitrary `f64` bit patterns to every constructor and runs the narrow phase
//! on whatever is accepted.

use fmbgrid::frame::{MAX_COORDINATE, MIN_HADAMARD_RATIO};
use fmbgrid::{Frame, Frame2, Frame3, FrameError, FrameKind, intersect, overlaps};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

const KINDS: [FrameKind; 2] = [FrameKind::Cuboid, FrameKind::Tetrahedron];

fn identity<const D: usize>() -> [[f64; D]; D] {
    std::array::from_fn(|i| std::array::from_fn(|k| if i == k { 1.0 } else { 0.0 }))
}

/// The simplex of the identity: `[0, e_0, .., e_{D-1}]`.
fn unit_simplex<const D: usize>() -> Vec<[f64; D]> {
    std::iter::once([0.0; D]).chain(identity::<D>()).collect()
}

fn is_non_finite(r: &Result<impl std::fmt::Debug, FrameError>, bad: f64) -> bool {
    match r {
        Err(FrameError::NonFinite { value, what }) => {
            !what.is_empty() && (value.to_bits() == bad.to_bits() || (value.is_nan() && bad.is_nan()))
        }
        _ => false,
    }
}

fn is_too_large(r: &Result<impl std::fmt::Debug, FrameError>, bad: f64) -> bool {
    matches!(r, Err(FrameError::TooLarge { value, limit, .. }) if *value == bad && *limit == MAX_COORDINATE)
}

/// Every constructor of dimension `D` with `x` written into each input slot
/// in turn; `check` judges each result (with a description for messages).
fn each_slot<const D: usize>(x: f64, check: &mut dyn FnMut(&str, Result<Frame<D>, FrameError>)) {
    let unit = identity::<D>();
    for k in 0..D {
        let mut v = [0.0; D];
        v[k] = x;
        for kind in KINDS {
            check(&format!("new({kind:?}) origin[{k}]"), Frame::new(kind, v, unit));
            for i in 0..D {
                let mut c = unit;
                c[i][k] = x;
                check(&format!("new({kind:?}) component {i}[{k}]"), Frame::new(kind, [0.0; D], c));
            }
        }
        check(&format!("cuboid origin[{k}]"), Frame::cuboid(v, unit));
        check(&format!("tetrahedron origin[{k}]"), Frame::tetrahedron(v, unit));
        let mut c = unit;
        c[0][k] = x;
        check(&format!("cuboid component 0[{k}]"), Frame::cuboid([0.0; D], c));
        check(&format!("tetrahedron component 0[{k}]"), Frame::tetrahedron([0.0; D], c));
        check(&format!("oriented_box center[{k}]"), Frame::oriented_box(v, [1.0; D], unit));
        check(&format!("oriented_box axis 0[{k}]"), Frame::oriented_box([0.0; D], [1.0; D], c));
        let mut hi = [1.0; D];
        hi[k] = x;
        check(&format!("from_aabb min[{k}]"), Frame::from_aabb(v, [1.0; D]));
        check(&format!("from_aabb max[{k}]"), Frame::from_aabb([0.0; D], hi));
        for j in 0..=D {
            let mut s = unit_simplex::<D>();
            s[j][k] = x;
            check(&format!("simplex vertex {j}[{k}]"), Frame::simplex(&s));
        }
        for kind in KINDS {
            let f = Frame::new(kind, [0.0; D], unit).unwrap();
            check(&format!("with_velocity({kind:?})[{k}]"), f.with_velocity(v));
            let moving = f.with_velocity([1.0; D]).unwrap();
            check(&format!("with_velocity again({kind:?})[{k}]"), moving.with_velocity(v));
        }
    }
}

fn all_slots_fail(x: f64, judge: impl Fn(&Result<Frame<3>, FrameError>) -> bool) {
    let mut bad = Vec::new();
    each_slot::<2>(x, &mut |what, r| {
        // Compare through a 3D-typed result: only the error matters.
        let r3: Result<Frame<3>, FrameError> = r.map(|_| Frame3::from_aabb([0.0; 3], [1.0; 3]).unwrap());
        if !judge(&r3) {
            bad.push(format!("2D {what}: {r3:?}"));
        }
    });
    each_slot::<3>(x, &mut |what, r| {
        if !judge(&r) {
            bad.push(format!("3D {what}: {r:?}"));
        }
    });
    assert!(bad.is_empty(), "input {x:e}: wrong answers:\n{}", bad.join("\n"));
}

#[test]
fn nan_and_infinities_are_non_finite() {
    for x in [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        all_slots_fail(x, |r| is_non_finite(r, x));
    }
}

#[test]
fn values_above_the_limit_are_too_large() {
    let just_above = MAX_COORDINATE.next_up();
    for x in [just_above, -just_above, 1e16, -1e16, 1e300, -f64::MAX, f64::MAX] {
        all_slots_fail(x, |r| is_too_large(r, x));
    }
}

#[test]
fn labels_name_the_culprit() {
    let unit = identity::<3>();
    let nan = f64::NAN;
    assert!(matches!(Frame3::cuboid([nan, 0.0, 0.0], unit), Err(FrameError::NonFinite { what: "origin", .. })));
    for i in 0..3 {
        let mut c = unit;
        c[i][1] = nan;
        let Err(FrameError::NonFinite { what, .. }) = Frame3::tetrahedron([0.0; 3], c) else { panic!("{i}") };
        assert_eq!(what, format!("component {i}"));
    }
    let f = Frame3::cuboid([0.0; 3], unit).unwrap();
    assert!(matches!(f.with_velocity([0.0, 0.0, nan]), Err(FrameError::NonFinite { what: "velocity", .. })));
    assert!(matches!(f.with_velocity([0.0, 2e15, 0.0]), Err(FrameError::TooLarge { what: "velocity", .. })));
}

#[test]
fn the_limit_itself_is_accepted() {
    let big = MAX_COORDINATE;
    // Boxes reaching the limit exactly, at rest and swept; a component as
    // long as the limit; velocity at the limit.
    let f = Frame2::cuboid([0.0, -big], [[big, 0.0], [0.0, big]]).unwrap();
    let g = Frame2::cuboid([-big, 0.0], [[big, 0.0], [0.0, big]]).unwrap().with_velocity([big, -big]).unwrap();
    assert!(overlaps(&f, &g));
    let t = Frame3::tetrahedron([-big; 3], [[1e4, 0.0, 0.0], [0.0, 1e4, 0.0], [0.0, 0.0, 1e4]]).unwrap();
    assert!(!overlaps(&f3(big), &t));
    // One past it, at rest or swept: out of range.
    assert!(
        matches!(f.with_velocity([1.0, 0.0]), Err(FrameError::OutOfRange { coordinate, .. }) if coordinate == big + 1.0)
    );
    assert!(matches!(
        Frame2::cuboid([0.5, 0.0], [[big, 0.0], [0.0, 1e4]]),
        Err(FrameError::OutOfRange { coordinate, reach }) if coordinate == big + 0.5 && reach == big
    ));
}

/// The range rule (`fmbgrid::range`): a frame's box stays within
/// `min(1e15, 1e12 × its shortest component)`, wherever it is.
#[test]
fn a_frame_reaches_1e12_times_its_shortest_component() {
    let unit = Frame2::from_aabb([0.0; 2], [1.0; 2]).unwrap();
    assert!((1e12..1.0000001e12).contains(&unit.reach()), "{}", unit.reach());
    // A unit box at 9.99e14 is out of range for its size, not degenerate.
    let far = Frame2::from_aabb([9.99e14, 0.0], [9.99e14 + 1.0, 1.0]).unwrap_err();
    assert!(matches!(far, FrameError::OutOfRange { coordinate, .. } if coordinate == 9.99e14), "{far:?}");
    assert_eq!(
        far.to_string(),
        "frame box reaches 9.99e14, beyond the supported ±1e12 for a frame of its size \
         (|x| <= 1e15 and <= 1e12 × its shortest component)"
    );
    // Just inside: accepted, and the box is as given.
    let near = Frame2::from_aabb([9.9e11, 0.0], [9.9e11 + 1.0, 1.0]).unwrap();
    assert_eq!(near.aabb().max, [9.9e11 + 1.0, 1.0]);
    // Large frames reach the global limit.
    assert_eq!(Frame3::from_aabb([0.0; 3], [1e4; 3]).unwrap().reach(), 1e15);
}

fn f3(x: f64) -> Frame3 {
    Frame3::from_aabb([x - 1e4; 3], [x; 3]).unwrap()
}

#[test]
fn derived_numbers_above_the_limit_are_too_large() {
    let x = 0.9 * MAX_COORDINATE;
    // Differences of valid vertices, box extents and box components can
    // exceed the limit: refused, not overflowed.
    assert!(matches!(Frame2::simplex(&[[-x, 0.0], [x, 0.0], [0.0, x]]), Err(FrameError::TooLarge { .. })));
    assert!(matches!(Frame3::from_aabb([-x; 3], [x; 3]), Err(FrameError::TooLarge { .. })));
    assert!(matches!(Frame2::oriented_box([0.0; 2], [x, 1.0], identity()), Err(FrameError::TooLarge { .. })));
}

#[test]
fn dependent_components_are_degenerate() {
    for kind in KINDS {
        // Colinear (2D and 3D), coplanar (3D), parallel and antiparallel.
        for c in [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [-3.0, -6.0]]] {
            assert!(matches!(Frame2::new(kind, [0.0; 2], c), Err(FrameError::Degenerate { .. })), "{kind:?} {c:?}");
        }
        for c in [
            [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]],
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
        ] {
            assert!(matches!(Frame3::new(kind, [0.0; 3], c), Err(FrameError::Degenerate { .. })), "{kind:?} {c:?}");
        }
    }
    assert!(matches!(Frame2::triangle([0.0, 0.0], [1.0, 1.0], [3.0, 3.0]), Err(FrameError::Degenerate { .. })));
    assert!(matches!(
        Frame3::tetrahedron_from_vertices([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]),
        Err(FrameError::Degenerate { .. })
    ));
    assert!(matches!(
        Frame3::simplex(&[[0.0; 3], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [0.0, 0.0, 1.0]]),
        Err(FrameError::Degenerate { .. })
    ));
    let s = std::f64::consts::FRAC_1_SQRT_2;
    assert!(matches!(
        Frame3::oriented_box([0.0; 3], [1.0; 3], [[s, s, 0.0], [-1.0, -1.0, 0.0], [0.0, 0.0, 1.0]]),
        Err(FrameError::Degenerate { .. })
    ));
}

#[test]
fn zero_and_tiny_components_are_too_thin() {
    for kind in KINDS {
        for i in 0..3 {
            let mut c = identity::<3>();
            c[i] = [0.0; 3];
            assert!(
                matches!(Frame3::new(kind, [0.0; 3], c), Err(FrameError::TooThin { index, .. }) if index == i),
                "{kind:?} zero component {i}"
            );
            // 1e-13 of the longest component: a sliver.
            c[i] = [0.0; 3];
            c[i][i] = 1e-13;
            assert!(matches!(Frame3::new(kind, [0.0; 3], c), Err(FrameError::TooThin { index, .. }) if index == i));
            // 1e-7 is fine near the origin, but reaches only 1e5: out of
            // range at 1e6 (the range rule, not a degenerate frame).
            c[i][i] = 1e-7;
            assert!(Frame3::new(kind, [1e4; 3], c).is_ok());
            assert!(matches!(Frame3::new(kind, [1e6; 3], c), Err(FrameError::OutOfRange { .. })));
        }
        let c = [[0.0, 0.0], [0.0, 1.0]];
        assert!(matches!(Frame2::new(kind, [0.0; 2], c), Err(FrameError::TooThin { index: 0, .. })));
    }
    // Flat boxes and zero axes.
    assert!(matches!(Frame2::from_aabb([0.0, 1.0], [1.0, 1.0]), Err(FrameError::EmptyBox { axis: 1, .. })));
    assert!(matches!(Frame3::from_aabb([2.0; 3], [2.0; 3]), Err(FrameError::EmptyBox { axis: 0, .. })));
    assert!(matches!(
        Frame3::oriented_box([0.0; 3], [1.0; 3], [[1.0, 0.0, 0.0], [0.0; 3], [0.0, 0.0, 1.0]]),
        Err(FrameError::TooThin { index: 1, .. })
    ));
    // Repeated vertices.
    assert!(matches!(Frame2::triangle([0.0, 0.0], [0.0, 0.0], [0.0, 1.0]), Err(FrameError::TooThin { index: 0, .. })));
}

#[test]
fn empty_boxes_are_refused() {
    // `from_aabb` documents `EmptyBox` unless min < max on every axis; it
    // once built the [0,1]² frame from min [1, 0], max [0, 1].
    let r = Frame2::from_aabb([1.0, 0.0], [0.0, 1.0]);
    assert!(matches!(r, Err(FrameError::EmptyBox { axis: 0, .. })), "from_aabb([1, 0], [0, 1]) gave {r:?}");
    let r = Frame3::from_aabb([0.0; 3], [-1.0; 3]);
    assert!(matches!(r, Err(FrameError::EmptyBox { axis: 0, .. })), "from_aabb([0; 3], [-1; 3]) gave {r:?}");
    let r = Frame3::from_aabb([0.0; 3], [1.0, 1.0, -1.0]);
    assert!(matches!(r, Err(FrameError::EmptyBox { axis: 2, .. })), "gave {r:?}");
}

/// Components with Hadamard ratio `ratio` at scale `s`: unit-ish vectors,
/// the last one tilted out of the others' span by the angle whose sine is
/// `ratio`.
fn tilted<const D: usize>(s: f64, ratio: f64) -> [[f64; D]; D] {
    let mut c = identity::<D>().map(|r| r.map(|x| x * s));
    // c[D-1] = s (cos θ · e_0 + sin θ · e_{D-1}), θ = asin(ratio).
    let cos = (1.0 - ratio * ratio).sqrt();
    c[D - 1] = std::array::from_fn(|k| {
        if k == 0 {
            s * cos
        } else if k == D - 1 {
            s * ratio
        } else {
            0.0
        }
    });
    c
}

#[test]
fn nearly_dependent_components_are_degenerate_at_every_scale() {
    for s in [1e-9, 1e-3, 1.0, 1e3, 1e9, 1e14] {
        for kind in KINDS {
            for ratio in [1e-7, 0.5 * MIN_HADAMARD_RATIO, 1e-10] {
                for r in [
                    Frame::new(kind, [0.0; 2], tilted::<2>(s, ratio)).map(|_| ()),
                    Frame::new(kind, [0.0; 3], tilted::<3>(s, ratio)).map(|_| ()),
                ] {
                    match r {
                        Err(FrameError::Degenerate { ratio: got, limit }) => {
                            assert!(got < MIN_HADAMARD_RATIO && limit == MIN_HADAMARD_RATIO, "{s} {ratio}: {got}");
                        }
                        other => panic!("scale {s}, ratio {ratio}, {kind:?}: {other:?}"),
                    }
                }
            }
            for ratio in [1e-5, 1e-3, 1.0] {
                assert!(Frame::new(kind, [0.0; 2], tilted::<2>(s, ratio)).is_ok(), "scale {s}, ratio {ratio}");
                assert!(Frame::new(kind, [0.0; 3], tilted::<3>(s, ratio)).is_ok(), "scale {s}, ratio {ratio}");
            }
        }
        // Nearly parallel axes of an oriented box, and nearly colinear
        // triangle vertices.
        let axes = tilted::<3>(1.0, 1e-7);
        let r = Frame3::oriented_box([s; 3], [s; 3], axes);
        assert!(matches!(r, Err(FrameError::Degenerate { .. })), "scale {s}: {r:?}");
        let c = tilted::<2>(s, 1e-7);
        let r = Frame2::triangle([s, -s], [s + c[0][0], -s + c[0][1]], [s + c[1][0], -s + c[1][1]]);
        assert!(matches!(r, Err(FrameError::Degenerate { .. })), "scale {s}: {r:?}");
        // Through the vertex constructors, at an offset.
        let o = [s; 3];
        let c = tilted::<3>(s, 1e-7);
        let v: Vec<[f64; 3]> =
            std::iter::once(o).chain(c.iter().map(|ci| std::array::from_fn(|k| o[k] + ci[k]))).collect();
        assert!(matches!(Frame3::simplex(&v), Err(FrameError::Degenerate { .. })), "scale {s}");
    }
}

#[test]
fn wrong_vertex_counts() {
    for n in [0, 1, 2, 4, 5, 8] {
        let v = vec![[0.5, 0.25]; n];
        assert_eq!(Frame2::simplex(&v).unwrap_err(), FrameError::VertexCount { dim: 2, expected: 3, got: n });
    }
    for n in [0, 1, 2, 3, 5, 8] {
        let v = vec![[0.5, 0.25, 0.125]; n];
        assert_eq!(Frame3::simplex(&v).unwrap_err(), FrameError::VertexCount { dim: 3, expected: 4, got: n });
    }
    // The count is checked before the numbers.
    assert!(matches!(Frame2::simplex(&[[f64::NAN, 0.0]; 2]), Err(FrameError::VertexCount { got: 2, .. })));
}

#[test]
fn non_positive_half_extents() {
    for bad in [0.0, -0.0, -1.0, -1e-300, f64::NEG_INFINITY, -f64::MAX] {
        for i in 0..3 {
            let mut he = [1.0; 3];
            he[i] = bad;
            let r = Frame3::oriented_box([0.0; 3], he, identity());
            assert!(
                matches!(r, Err(FrameError::NonPositiveExtent { index, value }) if index == i && value.to_bits() == bad.to_bits()),
                "half extent {i} = {bad}: {r:?}"
            );
        }
        let r = Frame2::oriented_box([0.0; 2], [1.0, bad], identity());
        assert!(matches!(r, Err(FrameError::NonPositiveExtent { index: 1, .. })), "{r:?}");
    }
    // NaN is neither positive nor finite: either variant is documented.
    let r = Frame2::oriented_box([0.0; 2], [f64::NAN, 1.0], identity());
    assert!(matches!(r, Err(FrameError::NonPositiveExtent { index: 0, .. } | FrameError::NonFinite { .. })), "{r:?}");
    // +∞ is positive but not finite.
    let r = Frame2::oriented_box([0.0; 2], [1.0, f64::INFINITY], identity());
    assert!(matches!(r, Err(FrameError::NonFinite { .. })), "{r:?}");
    // Tiny but positive: accepted as an extent, then judged by size.
    let r = Frame2::oriented_box([0.0; 2], [1.0, 1e-300], identity());
    assert!(matches!(r, Err(FrameError::TooThin { index: 1, .. })), "{r:?}");
}

/// Arbitrary `f64`s: every bit pattern class (NaN, infinities, subnormals,
/// zeros, huge and ordinary values), biased towards ordinary ones.
fn any_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -10.0..10.0f64,
        1 => any::<f64>(),
        1 => prop::sample::select(vec![
            0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, 5e-324, 1e15, -1e15, 1.0000000000000002e15,
            1e-12, 1e-300, f64::MAX,
        ]),
    ]
}

fn fuzz_config() -> Config {
    Config { cases: 2000, rng_seed: RngSeed::Fixed(0xBAD1), failure_persistence: None, ..Config::default() }
}

/// Whatever a constructor accepts is usable: finite box, and the narrow phase
/// answers without panicking against a unit frame and itself.
fn usable<const D: usize>(r: Result<Frame<D>, FrameError>) -> Result<(), TestCaseError> {
    let Ok(f) = r else { return Ok(()) };
    let bx = f.aabb();
    prop_assert!(bx.min.iter().chain(&bx.max).all(|x| x.is_finite()), "non-finite box {:?}", bx);
    let unit = Frame::<D>::from_aabb([0.0; D], [1.0; D]).unwrap();
    for g in [unit, unit.with_velocity([1.0; D]).unwrap(), f] {
        let hit = intersect(&f, &g);
        prop_assert_eq!(hit.is_some(), overlaps(&f, &g));
        if let Some(h) = hit {
            prop_assert!(h.time[0] <= h.time[1] && h.time[0] >= 0.0 && h.time[1] <= 1.0, "{:?}", h);
            prop_assert!(h.aabb.min.iter().chain(&h.aabb.max).all(|x| x.is_finite()), "{:?}", h);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz_config())]

    #[test]
    fn arbitrary_numbers_never_panic_2d(x in proptest::collection::vec(any_number(), 12), kind in any::<bool>()) {
        let v = |i: usize| [x[i], x[i + 1]];
        let kind = if kind { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
        let f = Frame2::new(kind, v(0), [v(2), v(4)]);
        usable(f.clone())?;
        usable(f.and_then(|f| f.with_velocity(v(6))))?;
        usable(Frame2::oriented_box(v(0), v(2), [v(4), v(6)]))?;
        usable(Frame2::from_aabb(v(0), v(2)))?;
        usable(Frame2::simplex(&[v(0), v(2), v(4)]))?;
        usable(Frame2::triangle(v(6), v(8), v(10)))?;
    }

    #[test]
    fn arbitrary_numbers_never_panic_3d(x in proptest::collection::vec(any_number(), 15), kind in any::<bool>()) {
        let v = |i: usize| [x[i], x[i + 1], x[i + 2]];
        let kind = if kind { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
        let f = Frame3::new(kind, v(0), [v(3), v(6), v(9)]);
        usable(f.clone())?;
        usable(f.and_then(|f| f.with_velocity(v(12))))?;
        usable(Frame3::oriented_box(v(0), v(3), [v(6), v(9), v(12)]))?;
        usable(Frame3::from_aabb(v(0), v(3)))?;
        usable(Frame3::simplex(&[v(0), v(3), v(6), v(9)]))?;
        usable(Frame3::tetrahedron_from_vertices(v(3), v(6), v(9), v(12)))?;
    }
}
