//! parry (f64) as the peer for frames, shared by the benchmarks and the
//! comparison programs (included with `#[path]`). Orthogonal boxes become
//! parry `Cuboid`s (its SAT path); other frames convex hulls or polygons
//! (GJK), built once outside any timing, placed with a pose so that moving
//! them is a translation.
#![allow(dead_code)]

/// True when the components are pairwise orthogonal (relative to their
/// lengths: an absolute test turns large boxes into hulls).
pub fn orthogonal<const D: usize>(c: &[[f64; D]; D]) -> bool {
    let len: [f64; D] = std::array::from_fn(|i| c[i].iter().map(|x| x * x).sum::<f64>().sqrt());
    (0..D).all(|i| (0..i).all(|j| (0..D).map(|k| c[i][k] * c[j][k]).sum::<f64>().abs() <= 1e-12 * len[i] * len[j]))
}

/// `peer`, `test`, `cast`, `distance` and `contact` of one dimension's module, the same code in 2D
/// and 3D: `$frame` is the frame type, `$refused` the panic message for a
/// frame parry refuses. They use the invoking module's `shape` and
/// `velocity`, and its imports of parry's `Pose`, `Vector`, `Shape`,
/// `query` and `ShapeCastOptions`.
macro_rules! pair_queries {
    ($frame:ty, $refused:literal) => {
        /// A frame as parry sees it: pose, shape and velocity.
        pub fn peer(f: &$frame) -> (Pose, Box<dyn Shape>, Vector) {
            let (pose, shape) = shape(f).expect($refused);
            (pose, shape, velocity(f))
        }

        /// parry's static test (velocities ignored).
        pub fn test(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> bool {
            query::intersection_test(&a.0, &*a.1, &b.0, &*b.1).map(|r| r.intersecting).unwrap_or(false)
        }

        /// parry's cast over the step (each displaced by its velocity): do
        /// they meet (time of impact in `[0, 1]`, stopping at penetration)?
        pub fn cast(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> bool {
            let opts = ShapeCastOptions { max_time_of_impact: 1.0, stop_at_penetration: true, ..Default::default() };
            matches!(query::cast_shapes(&a.0, a.2, &*a.1, &b.0, b.2, &*b.1, opts), Ok(Some(_)))
        }

        /// parry's distance (velocities ignored).
        pub fn distance(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> f64 {
            query::distance(&a.0, &*a.1, &b.0, &*b.1).map(|d| d.distance).unwrap_or(f64::NAN)
        }

        /// parry's contact (normal and depth; velocities ignored): do they
        /// interpenetrate?
        pub fn contact(a: &(Pose, Box<dyn Shape>, Vector), b: &(Pose, Box<dyn Shape>, Vector)) -> bool {
            matches!(query::contact(&a.0, &*a.1, &b.0, &*b.1, 0.0), Ok(Some(c)) if c.dist < 0.0)
        }
    };
}

pub mod peer3 {
    use fmbgrid::{Frame3, FrameKind};
    use parry3d_f64::math::{Mat3, Pose, Rot3, Vector};
    use parry3d_f64::query::{self, ShapeCastOptions};
    use parry3d_f64::shape::{ConvexPolyhedron, Cuboid, Shape};

    /// The natural parry shape: a `Cuboid` for orthogonal boxes, a hull
    /// otherwise; `None` when parry finds the hull flat.
    pub fn shape(f: &Frame3) -> Option<(Pose, Box<dyn Shape>)> {
        let c = f.components();
        let o = Vector::from_array(f.origin());
        if f.kind() == FrameKind::Cuboid && super::orthogonal(&c) {
            let cols = c.map(Vector::from_array);
            let mut axes = cols.map(|v| v.normalize());
            if axes[0].cross(axes[1]).dot(axes[2]) < 0.0 {
                axes[2] = -axes[2];
            }
            let center = o + (cols[0] + cols[1] + cols[2]) * 0.5;
            let rot = Rot3::from_mat3(&Mat3::from_cols(axes[0], axes[1], axes[2]));
            let half = Vector::new(cols[0].length(), cols[1].length(), cols[2].length()) * 0.5;
            Some((Pose::from_parts(center, rot), Box::new(Cuboid::new(half))))
        } else {
            let pts: Vec<Vector> = f.vertices().map(|v| Vector::from_array(v) - o).collect();
            let hull = ConvexPolyhedron::from_convex_hull(&pts)?;
            Some((Pose::from_translation(o), Box::new(hull)))
        }
    }

    pub fn velocity(f: &Frame3) -> Vector {
        let v = f.velocity();
        Vector::new(v[0], v[1], v[2])
    }

    pair_queries!(Frame3, "valid frames have solid hulls");
}

pub mod peer2 {
    use fmbgrid::Frame2;
    use parry2d_f64::math::{Pose, Vector};
    use parry2d_f64::query::{self, ShapeCastOptions};
    use parry2d_f64::shape::{ConvexPolygon, Cuboid, Shape};

    /// A `Cuboid` for a rectangle, otherwise the frame as a polygon, its
    /// vertices given counter-clockwise (parry's hull builder drops thin
    /// triangles that our frames accept); `None` when parry refuses it.
    pub fn shape(f: &Frame2) -> Option<(Pose, Box<dyn Shape>)> {
        let (o, c) = (Vector::from_array(f.origin()), f.components());
        let cols = c.map(Vector::from_array);
        if f.kind() == fmbgrid::FrameKind::Cuboid && super::orthogonal(&c) {
            let angle = cols[0].y.atan2(cols[0].x);
            let center = o + (cols[0] + cols[1]) * 0.5;
            let half = Vector::new(cols[0].length(), cols[1].length()) * 0.5;
            return Some((Pose::new(center, angle), Box::new(Cuboid::new(half))));
        }
        let mut pts = match f.kind() {
            fmbgrid::FrameKind::Cuboid => vec![Vector::ZERO, cols[0], cols[0] + cols[1], cols[1]],
            fmbgrid::FrameKind::Tetrahedron => vec![Vector::ZERO, cols[0], cols[1]],
        };
        if cols[0].perp_dot(cols[1]) < 0.0 {
            pts.reverse();
        }
        let poly = ConvexPolygon::from_convex_polyline_unmodified(pts)?;
        Some((Pose::from_translation(o), Box::new(poly)))
    }

    pub fn velocity(f: &Frame2) -> Vector {
        let v = f.velocity();
        Vector::new(v[0], v[1])
    }

    pair_queries!(Frame2, "valid frames have solid polygons");
}
