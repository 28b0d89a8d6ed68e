//! parry (f64) as the peer for frames, shared by the narrow-phase bench and
//! the `qualify` example (included with `#[path]`). Orthogonal boxes become
//! parry `Cuboid`s (its SAT path); other frames convex hulls (GJK), built once
//! outside any timing.
#![allow(dead_code)]

pub mod peer3 {
    use fmbgrid::{Frame3, FrameKind};
    use parry3d_f64::math::{Mat3, Pose, Rot3, Vector};
    use parry3d_f64::query::{self, ShapeCastOptions};
    use parry3d_f64::shape::{ConvexPolyhedron, Cuboid, Shape};

    /// The natural parry shape: a `Cuboid` for orthogonal boxes, a hull otherwise.
    pub fn shape(f: &Frame3) -> (Pose, Box<dyn Shape>) {
        let c = f.components();
        let orthogonal = (0..3).all(|i| {
            (0..i).all(|j| {
                let d: f64 = (0..3).map(|k| c[i][k] * c[j][k]).sum();
                d.abs() < 1e-9
            })
        });
        if f.kind() == FrameKind::Cuboid && orthogonal {
            let len: [f64; 3] = std::array::from_fn(|i| (0..3).map(|k| c[i][k] * c[i][k]).sum::<f64>().sqrt());
            let mut cols: [Vector; 3] = std::array::from_fn(|i| Vector::new(c[i][0], c[i][1], c[i][2]) / len[i]);
            if cols[0].cross(cols[1]).dot(cols[2]) < 0.0 {
                cols[2] = -cols[2];
            }
            let o = f.origin();
            let center = Vector::new(o[0], o[1], o[2])
                + (0..3).map(|i| Vector::new(c[i][0], c[i][1], c[i][2]) * 0.5).sum::<Vector>();
            let rot = Rot3::from_mat3(&Mat3::from_cols(cols[0], cols[1], cols[2]));
            (Pose::from_parts(center, rot), Box::new(Cuboid::new(Vector::new(len[0], len[1], len[2]) * 0.5)))
        } else {
            let pts: Vec<Vector> = f.vertices().map(|v| Vector::new(v[0], v[1], v[2])).collect();
            (Pose::IDENTITY, Box::new(ConvexPolyhedron::from_convex_hull(&pts).expect("non-degenerate frame")))
        }
    }

    pub fn velocity(f: &Frame3) -> Vector {
        let v = f.velocity();
        Vector::new(v[0], v[1], v[2])
    }

    /// A frame as parry sees it: pose, shape and velocity.
    pub fn peer(f: &Frame3) -> (Pose, Box<dyn Shape>, Vector) {
        let (pose, shape) = shape(f);
        (pose, shape, velocity(f))
    }

    /// parry's static test (velocities ignored).
    pub fn test(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> bool {
        query::intersection_test(&a.0, &*a.1, &b.0, &*b.1).map(|r| r.intersecting).unwrap_or(false)
    }

    pub fn cast(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> bool {
        let opts = ShapeCastOptions { max_time_of_impact: 1.0, stop_at_penetration: true, ..Default::default() };
        matches!(query::cast_shapes(&a.0, a.2, &*a.1, &b.0, b.2, &*b.1, opts), Ok(Some(_)))
    }
}

pub mod peer2 {
    use fmbgrid::Frame2;
    use parry2d_f64::math::{Pose, Vector};
    use parry2d_f64::query::{self, ShapeCastOptions};
    use parry2d_f64::shape::{ConvexPolygon, Shape};

    /// The frame as a polygon, its vertices given counter-clockwise (parry's
    /// hull builder drops thin triangles that our frames accept).
    pub fn shape(f: &Frame2) -> (Pose, Box<dyn Shape>) {
        let (o, c) = (f.origin(), f.components());
        let p = |x: f64, y: f64| Vector::new(o[0] + x * c[0][0] + y * c[1][0], o[1] + x * c[0][1] + y * c[1][1]);
        let mut pts = match f.kind() {
            fmbgrid::FrameKind::Cuboid => vec![p(0.0, 0.0), p(1.0, 0.0), p(1.0, 1.0), p(0.0, 1.0)],
            fmbgrid::FrameKind::Tetrahedron => vec![p(0.0, 0.0), p(1.0, 0.0), p(0.0, 1.0)],
        };
        if c[0][0] * c[1][1] - c[0][1] * c[1][0] < 0.0 {
            pts.reverse();
        }
        let poly = ConvexPolygon::from_convex_polyline_unmodified(pts).expect("frames have distinct vertices");
        (Pose::IDENTITY, Box::new(poly))
    }

    pub fn velocity(f: &Frame2) -> Vector {
        let v = f.velocity();
        Vector::new(v[0], v[1])
    }

    /// A frame as parry sees it: pose, shape and velocity.
    pub fn peer(f: &Frame2) -> (Pose, Box<dyn Shape>, Vector) {
        let (pose, shape) = shape(f);
        (pose, shape, velocity(f))
    }

    /// parry's static test (velocities ignored).
    pub fn test(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> bool {
        query::intersection_test(&a.0, &*a.1, &b.0, &*b.1).map(|r| r.intersecting).unwrap_or(false)
    }

    pub fn cast(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> bool {
        let opts = ShapeCastOptions { max_time_of_impact: 1.0, stop_at_penetration: true, ..Default::default() };
        matches!(query::cast_shapes(&a.0, a.2, &*a.1, &b.0, b.2, &*b.1, opts), Ok(Some(_)))
    }
}
