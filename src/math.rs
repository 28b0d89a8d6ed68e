//! Small fixed-size linear algebra on `[f64; D]` vectors and `[[f64; D]; D]`
//! matrices, generic over the dimension so 2D and 3D share one code path.
//!
//! Matrices are stored as arrays of *columns* where noted (frame components),
//! and as arrays of *rows* for inverses, so every hot product is a dot product
//! of two contiguous arrays.

/// The smaller of two numbers known not to be NaN (one `minsd`, where
/// `f64::min` pays for NaN handling on the hot paths).
#[inline(always)]
pub(crate) fn fmin(a: f64, b: f64) -> f64 {
    if a < b { a } else { b }
}

/// The larger of two numbers known not to be NaN.
#[inline(always)]
pub(crate) fn fmax(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// Vertices `origin + Σ_{bit i of m} cᵢ` of a parallelepiped, for
/// `m < 2^D` (entries past `2^D` are unused), built incrementally.
#[inline(always)]
pub(crate) fn box_vertices<const D: usize>(origin: &[f64; D], c: &[[f64; D]; D]) -> [[f64; D]; 8] {
    let mut v = [*origin; 8];
    for m in 1..1usize << D {
        let bit = m.trailing_zeros() as usize;
        v[m] = add(&v[m & (m - 1)], &c[bit]);
    }
    v
}

/// `a · b`.
#[inline(always)]
pub(crate) fn dot<const D: usize>(a: &[f64; D], b: &[f64; D]) -> f64 {
    let mut s = 0.0;
    for i in 0..D {
        s += a[i] * b[i];
    }
    s
}

/// `a - b`.
#[inline(always)]
pub(crate) fn sub<const D: usize>(a: &[f64; D], b: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|i| a[i] - b[i])
}

/// `a + b`.
#[inline(always)]
pub(crate) fn add<const D: usize>(a: &[f64; D], b: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|i| a[i] + b[i])
}

/// `a + s * b`.
#[inline(always)]
pub(crate) fn add_scaled<const D: usize>(a: &[f64; D], s: f64, b: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|i| a[i] + s * b[i])
}

/// Euclidean length.
#[inline]
pub(crate) fn norm<const D: usize>(a: &[f64; D]) -> f64 {
    dot(a, a).sqrt()
}

/// `rows · v`: each output coordinate is the dot product of one row with `v`.
#[inline(always)]
pub(crate) fn mul_rows<const D: usize>(rows: &[[f64; D]; D], v: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|j| dot(&rows[j], v))
}

/// 3D cross product.
#[inline(always)]
pub(crate) fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Inverse of the matrix whose *columns* are `cols`, returned as *rows*
/// (`rows[j] · cols[i] = δ_ij`), together with its determinant.
///
/// By the adjugate: row `j` is the normal of the face spanned by the other
/// columns (a cross product in 3D, a perpendicular in 2D) over the
/// determinant. Each row's *direction* is then exact to round-off however
/// ill-conditioned the matrix (only its length carries the determinant's
/// relative error), which keeps the face planes of thin frames exact;
/// elimination would tilt them by up to `cond · ε`. Returns `None` for a
/// zero or non-finite determinant. Dimensions other than 2 and 3 use
/// Gauss–Jordan elimination.
pub(crate) fn invert_columns<const D: usize>(cols: &[[f64; D]; D]) -> Option<([[f64; D]; D], f64)> {
    let mut adj = [[0.0; D]; D];
    let det = match D {
        2 => {
            let (c0, c1) = (&cols[0], &cols[1]);
            adj[0][0] = c1[1];
            adj[0][1] = -c1[0];
            adj[1][0] = -c0[1];
            adj[1][1] = c0[0];
            c0[0] * c1[1] - c0[1] * c1[0]
        }
        3 => {
            let c = |i: usize| -> [f64; 3] { std::array::from_fn(|k| cols[i][k]) };
            for j in 0..3 {
                let n = cross(&c((j + 1) % 3), &c((j + 2) % 3));
                adj[j][..3].copy_from_slice(&n);
            }
            dot(&adj[0], &cols[0])
        }
        _ => return gauss_jordan(cols),
    };
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inv = adj.map(|r| r.map(|x| x / det));
    inv.iter().flatten().all(|x| x.is_finite()).then_some((inv, det))
}

/// Gauss–Jordan inverse with partial pivoting (see [`invert_columns`]).
fn gauss_jordan<const D: usize>(cols: &[[f64; D]; D]) -> Option<([[f64; D]; D], f64)> {
    // m[r][c] = cols[c][r]: the matrix itself, row-major.
    let mut m: [[f64; D]; D] = std::array::from_fn(|r| std::array::from_fn(|c| cols[c][r]));
    let mut inv: [[f64; D]; D] = std::array::from_fn(|r| std::array::from_fn(|c| f64::from(u8::from(r == c))));
    let mut det = 1.0;
    for col in 0..D {
        let pivot = (col..D).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[pivot][col] == 0.0 {
            return None;
        }
        if pivot != col {
            m.swap(pivot, col);
            inv.swap(pivot, col);
            det = -det;
        }
        let p = m[col][col];
        det *= p;
        for c in 0..D {
            m[col][c] /= p;
            inv[col][c] /= p;
        }
        for r in 0..D {
            if r != col {
                let f = m[r][col];
                if f != 0.0 {
                    for c in 0..D {
                        m[r][c] -= f * m[col][c];
                        inv[r][c] -= f * inv[col][c];
                    }
                }
            }
        }
    }
    let finite = det.is_finite() && inv.iter().flatten().all(|x| x.is_finite());
    finite.then_some((inv, det))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_of_sheared_3d_matrix_is_exact_on_products() {
        let cols = [[1.0, 0.5, 0.0], [0.5, 1.0, 0.25], [0.0, 2.0, 3.0]];
        let (rows, det) = invert_columns(&cols).unwrap();
        for j in 0..3 {
            for i in 0..3 {
                let expect = if i == j { 1.0 } else { 0.0 };
                assert!((dot(&rows[j], &cols[i]) - expect).abs() < 1e-14);
            }
        }
        // det of [[1,.5,0],[.5,1,2],[0,.25,3]] (rows = coordinates)
        let expect = 1.0 * (1.0 * 3.0 - 2.0 * 0.25) - 0.5 * (0.5 * 3.0 - 0.0) + 0.0;
        assert!((det - expect).abs() < 1e-14);
    }

    #[test]
    fn adjugate_and_elimination_agree() {
        let cols = [[2.0, 0.5, -1.0, 0.0], [0.0, 1.0, 0.25, 3.0], [1.0, 0.0, 4.0, 0.5], [0.0, 2.0, 0.0, 1.0]];
        let (rows, _) = invert_columns(&cols).unwrap(); // 4D: elimination
        for j in 0..4 {
            for i in 0..4 {
                assert!((dot(&rows[j], &cols[i]) - f64::from(u8::from(i == j))).abs() < 1e-14);
            }
        }
        let c3 = [[1.0, 0.5, 0.0], [0.5, 1.0, 0.25], [0.0, 2.0, 3.0]];
        let (a, da) = invert_columns(&c3).unwrap();
        let (b, db) = gauss_jordan(&c3).unwrap();
        assert!((da - db).abs() < 1e-14);
        for j in 0..3 {
            for k in 0..3 {
                assert!((a[j][k] - b[j][k]).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn face_normals_of_a_sliver_keep_their_direction() {
        // A component 1e-5 out of the others' plane: cond ~ 1e5.
        let cols = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1e-5]];
        let (rows, _) = invert_columns(&cols).unwrap();
        // Row 2 is normal to the first two columns exactly.
        assert_eq!(rows[2][0], 0.0);
        assert_eq!(rows[2][1], 0.0);
    }

    #[test]
    fn singular_matrix_has_no_inverse() {
        assert!(invert_columns(&[[1.0, 2.0], [2.0, 4.0]]).is_none_or(|(_, d)| d.abs() < 1e-15));
        assert!(invert_columns(&[[0.0, 0.0], [0.0, 0.0]]).is_none());
    }
}
