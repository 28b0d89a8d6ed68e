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

/// Largest absolute coordinate.
#[inline]
pub(crate) fn max_abs<const D: usize>(a: &[f64; D]) -> f64 {
    a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
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
/// Gauss–Jordan elimination with partial pivoting; returns `None` when a pivot
/// is exactly zero or the result is not finite. Callers check conditioning
/// themselves (see [`crate::Frame`]); this is construction-time code.
pub(crate) fn invert_columns<const D: usize>(cols: &[[f64; D]; D]) -> Option<([[f64; D]; D], f64)> {
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
    fn singular_matrix_has_no_inverse() {
        assert!(invert_columns(&[[1.0, 2.0], [2.0, 4.0]]).is_none_or(|(_, d)| d.abs() < 1e-15));
        assert!(invert_columns(&[[0.0, 0.0], [0.0, 0.0]]).is_none());
    }
}
