//! `Frames`: an array of validated frames (2D or 3D), and the narrow phase
//! and the two-frame queries vectorised over arrays of pairs.

use fmbgrid::query::{distance, first_contact, penetration, ray_cast};
use fmbgrid::{Frame, FrameKind, IndexPair, Pose, collide, collide_between, intersect, overlap_interval, overlaps};
use numpy::PyReadonlyArrayDyn;
use numpy::ndarray::ArrayViewD;
use pyo3::prelude::*;

use crate::{array, check_shape, fixed, matrix, row, value_error};
use numpy::ndarray::{Ix2, Ix3};

/// Kind codes on the Python side.
pub(crate) const TETRAHEDRON: u8 = 0;
pub(crate) const CUBOID: u8 = 1;

pub(crate) fn kind_code(k: FrameKind) -> u8 {
    match k {
        FrameKind::Tetrahedron => TETRAHEDRON,
        FrameKind::Cuboid => CUBOID,
    }
}

/// Frames of one dimension.
#[derive(Clone, Debug)]
pub(crate) enum Set {
    Two(Vec<Frame<2>>),
    Three(Vec<Frame<3>>),
}

/// An array of frames, each validated once (see `fmbgrid.Frames`).
#[pyclass(module = "fmbgrid._fmbgrid", name = "Frames", frozen)]
pub(crate) struct Frames {
    pub(crate) set: Set,
}

/// The dimension of `(N, D, ...)` input: 2 or 3, from its second length.
fn dim_of(name: &str, a: &ArrayViewD<f64>) -> PyResult<usize> {
    match a.shape() {
        [_, 2, ..] => Ok(2),
        [_, 3, ..] => Ok(3),
        s => Err(value_error(format!(
            "{name} must have shape (N, 2) or (N, 3) (2D or 3D), got {}",
            crate::shape_text(s)
        ))),
    }
}

fn frame_error(i: usize, e: impl std::fmt::Display) -> PyErr {
    value_error(format!("frame {i}: {e}"))
}

fn build<const D: usize>(
    o: &ArrayViewD<f64>,
    c: &ArrayViewD<f64>,
    kinds: &ArrayViewD<u8>,
    v: Option<&ArrayViewD<f64>>,
) -> PyResult<Vec<Frame<D>>> {
    let n = o.shape()[0];
    let (o, c) = (&fixed::<Ix2>(o)?, &fixed::<Ix3>(c)?);
    let v = v.map(fixed::<Ix2>).transpose()?;
    let v = v.as_ref();
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("not enough memory for the frames"))?;
    for i in 0..n {
        let kind = match kinds[[i]] {
            TETRAHEDRON => FrameKind::Tetrahedron,
            CUBOID => FrameKind::Cuboid,
            k => return Err(frame_error(i, format!("kind {k} is neither 0 (tetrahedron) nor 1 (cuboid)"))),
        };
        let mut f = Frame::new(kind, row(o, i), matrix(c, i)).map_err(|e| frame_error(i, e))?;
        if let Some(v) = v {
            let vel = row(v, i);
            if vel != [0.0; D] {
                f = f.with_velocity(vel).map_err(|e| frame_error(i, e))?;
            }
        }
        out.push(f);
    }
    Ok(out)
}

impl Frames {
    pub(crate) fn len(&self) -> usize {
        match &self.set {
            Set::Two(f) => f.len(),
            Set::Three(f) => f.len(),
        }
    }

    pub(crate) fn dim(&self) -> usize {
        match &self.set {
            Set::Two(_) => 2,
            Set::Three(_) => 3,
        }
    }
}

fn export<'py, const D: usize>(py: Python<'py>, f: &[Frame<D>], what: &str) -> Bound<'py, PyAny> {
    let n = f.len();
    match what {
        "origins" => array(py, &[n, D], f.iter().flat_map(|f| f.origin()).collect()),
        "velocities" => array(py, &[n, D], f.iter().flat_map(|f| f.velocity()).collect()),
        "components" => array(py, &[n, D, D], f.iter().flat_map(|f| f.components().into_iter().flatten()).collect()),
        "kinds" => array(py, &[n], f.iter().map(|f| kind_code(f.kind())).collect()),
        _ => array(py, &[n, 2, D], f.iter().flat_map(|f| f.aabb().min.into_iter().chain(f.aabb().max)).collect()),
    }
}

#[pymethods]
impl Frames {
    /// Frames from `origins (N, D)`, `components (N, D, D)` (`components[i, j]`
    /// is the j-th component vector of frame i), `kinds (N,)` (0:
    /// tetrahedron, 1: cuboid) and optional `velocities (N, D)`.
    #[staticmethod]
    #[pyo3(signature = (origins, components, kinds, velocities=None))]
    fn new(
        py: Python<'_>,
        origins: PyReadonlyArrayDyn<'_, f64>,
        components: PyReadonlyArrayDyn<'_, f64>,
        kinds: PyReadonlyArrayDyn<'_, u8>,
        velocities: Option<PyReadonlyArrayDyn<'_, f64>>,
    ) -> PyResult<Frames> {
        let (o, c, k) = (origins.as_array(), components.as_array(), kinds.as_array());
        let v = velocities.as_ref().map(|v| v.as_array());
        let d = dim_of("origins", &o)?;
        let n = check_shape("origins", &o, &[None, Some(d)])?;
        check_shape("components", &c, &[Some(n), Some(d), Some(d)])?;
        check_shape("kinds", &k, &[Some(n)])?;
        if let Some(v) = &v {
            check_shape("velocities", v, &[Some(n), Some(d)])?;
        }
        let set = py.detach(|| -> PyResult<Set> {
            Ok(match d {
                2 => Set::Two(build::<2>(&o, &c, &k, v.as_ref())?),
                _ => Set::Three(build::<3>(&o, &c, &k, v.as_ref())?),
            })
        })?;
        Ok(Frames { set })
    }

    /// Axis-aligned boxes `[mins[i], maxs[i]]` as cuboid frames.
    #[staticmethod]
    fn from_aabbs(
        py: Python<'_>,
        mins: PyReadonlyArrayDyn<'_, f64>,
        maxs: PyReadonlyArrayDyn<'_, f64>,
    ) -> PyResult<Frames> {
        let (lo, hi) = (mins.as_array(), maxs.as_array());
        let d = dim_of("mins", &lo)?;
        let n = check_shape("mins", &lo, &[None, Some(d)])?;
        check_shape("maxs", &hi, &[Some(n), Some(d)])?;
        fn go<const D: usize>(lo: &ArrayViewD<f64>, hi: &ArrayViewD<f64>) -> PyResult<Vec<Frame<D>>> {
            (0..lo.shape()[0])
                .map(|i| Frame::from_aabb(row(lo, i), row(hi, i)).map_err(|e| frame_error(i, e)))
                .collect()
        }
        let set = py.detach(|| -> PyResult<Set> {
            Ok(if d == 2 { Set::Two(go::<2>(&lo, &hi)?) } else { Set::Three(go::<3>(&lo, &hi)?) })
        })?;
        Ok(Frames { set })
    }

    /// Oriented boxes: `centers (N, D)`, `half_extents (N, D)`, `axes (N, D, D)`
    /// (`axes[i, j]`: the world direction of box i's j-th local axis). With
    /// `rigid`, each box's axes must be the columns of a rotation (the
    /// package's `rotations=`, passed transposed).
    #[staticmethod]
    #[pyo3(signature = (centers, half_extents, axes, rigid=false))]
    fn oriented_boxes(
        py: Python<'_>,
        centers: PyReadonlyArrayDyn<'_, f64>,
        half_extents: PyReadonlyArrayDyn<'_, f64>,
        axes: PyReadonlyArrayDyn<'_, f64>,
        rigid: bool,
    ) -> PyResult<Frames> {
        let (c, h, a) = (centers.as_array(), half_extents.as_array(), axes.as_array());
        let d = dim_of("centers", &c)?;
        let n = check_shape("centers", &c, &[None, Some(d)])?;
        check_shape("half_extents", &h, &[Some(n), Some(d)])?;
        check_shape(if rigid { "rotations" } else { "axes" }, &a, &[Some(n), Some(d), Some(d)])?;
        fn go<const D: usize>(
            c: &ArrayViewD<f64>,
            h: &ArrayViewD<f64>,
            a: &ArrayViewD<f64>,
            rigid: bool,
        ) -> PyResult<Vec<Frame<D>>> {
            (0..c.shape()[0])
                .map(|i| {
                    let axes = matrix(a, i);
                    if rigid {
                        // The library's own test of a rotation (its columns
                        // are the box's axes).
                        Pose::<D>::from_rotation(axes, [0.0; D]).map_err(|e| {
                            value_error(format!("rotations[{i}]: {e}; pass axes= for a parallelepiped"))
                        })?;
                    }
                    Frame::oriented_box(row(c, i), row(h, i), axes).map_err(|e| frame_error(i, e))
                })
                .collect()
        }
        let set = py.detach(|| -> PyResult<Set> {
            Ok(if d == 2 { Set::Two(go::<2>(&c, &h, &a, rigid)?) } else { Set::Three(go::<3>(&c, &h, &a, rigid)?) })
        })?;
        Ok(Frames { set })
    }

    /// Simplices from their vertices, `(N, D + 1, D)`.
    #[staticmethod]
    fn simplices(py: Python<'_>, vertices: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Frames> {
        let v = vertices.as_array();
        let d = match v.shape() {
            [_, 3, 2] => 2,
            [_, 4, 3] => 3,
            s => {
                return Err(value_error(format!(
                    "vertices must have shape (N, 3, 2) or (N, 4, 3), got {}",
                    crate::shape_text(s)
                )));
            }
        };
        fn go<const D: usize>(v: &ArrayViewD<f64>) -> PyResult<Vec<Frame<D>>> {
            (0..v.shape()[0])
                .map(|i| {
                    let verts: Vec<[f64; D]> = (0..=D).map(|j| std::array::from_fn(|k| v[[i, j, k]])).collect();
                    Frame::simplex(&verts).map_err(|e| frame_error(i, e))
                })
                .collect()
        }
        let set = py.detach(|| -> PyResult<Set> {
            Ok(if d == 2 { Set::Two(go::<2>(&v)?) } else { Set::Three(go::<3>(&v)?) })
        })?;
        Ok(Frames { set })
    }

    fn __len__(&self) -> usize {
        self.len()
    }

    /// 2 or 3.
    #[getter(dim)]
    fn get_dim(&self) -> usize {
        self.dim()
    }

    /// One of "origins", "components", "velocities", "kinds", "aabbs", as a
    /// new array.
    fn get<'py>(&self, py: Python<'py>, what: &str) -> PyResult<Bound<'py, PyAny>> {
        if !["origins", "components", "velocities", "kinds", "aabbs"].contains(&what) {
            return Err(value_error(format!("no frame array named {what:?}")));
        }
        Ok(match &self.set {
            Set::Two(f) => export(py, f, what),
            Set::Three(f) => export(py, f, what),
        })
    }

    /// The frames at `indices (K,)`, in that order.
    fn take(&self, indices: PyReadonlyArrayDyn<'_, i64>) -> PyResult<Frames> {
        let idx = indices.as_array();
        let k = check_shape("indices", &idx, &[None])?;
        let n = self.len();
        let pick = |j: usize| -> PyResult<usize> {
            let i = idx[[j]];
            usize::try_from(i)
                .ok()
                .filter(|&i| i < n)
                .ok_or_else(|| value_error(format!("indices[{j}] = {i} is out of range for {n} frames")))
        };
        let set = match &self.set {
            Set::Two(f) => Set::Two((0..k).map(|j| Ok(f[pick(j)?])).collect::<PyResult<_>>()?),
            Set::Three(f) => Set::Three((0..k).map(|j| Ok(f[pick(j)?])).collect::<PyResult<_>>()?),
        };
        Ok(Frames { set })
    }

    fn __repr__(&self) -> String {
        format!("Frames(dim={}, len={})", self.dim(), self.len())
    }
}

/// The pairs `(i, j)` to test: `pairs (M, 2)` into `a` and `b`, or the
/// elementwise pairs when `pairs` is None.
fn pair_list(na: usize, nb: usize, pairs: Option<&ArrayViewD<i64>>) -> PyResult<Vec<(usize, usize)>> {
    let Some(p) = pairs else {
        if na != nb {
            return Err(value_error(format!(
                "a and b have {na} and {nb} frames: pass pairs=(M, 2) indices, or arrays of equal length"
            )));
        }
        return Ok((0..na).map(|i| (i, i)).collect());
    };
    let m = check_shape("pairs", p, &[None, Some(2)])?;
    let index = |k: usize, side: usize, n: usize| -> PyResult<usize> {
        let i = p[[k, side]];
        usize::try_from(i)
            .ok()
            .filter(|&i| i < n)
            .ok_or_else(|| value_error(format!("pairs[{k}, {side}] = {i} is out of range for {n} frames")))
    };
    (0..m).map(|k| Ok((index(k, 0, na)?, index(k, 1, nb)?))).collect()
}

/// `f` over the pairs of two frame sets of one dimension, the GIL released.
macro_rules! over_pairs {
    ($py:expr, $a:expr, $b:expr, $pairs:expr, |$x:ident, $y:ident, $d:ident| $body:expr) => {{
        let pairs = $pairs.as_ref().map(|p| p.as_array());
        let list = pair_list($a.len(), $b.len(), pairs.as_ref())?;
        match (&$a.set, &$b.set) {
            (Set::Two(fa), Set::Two(fb)) => over_pairs!(@dim $py, list, fa, fb, 2, |$x, $y, $d| $body),
            (Set::Three(fa), Set::Three(fb)) => over_pairs!(@dim $py, list, fa, fb, 3, |$x, $y, $d| $body),
            _ => return Err(value_error(format!("a is {}D and b is {}D", $a.dim(), $b.dim()))),
        }
    }};
    // One dimension's arm: `$body` with `$d` the dimension, over `list`.
    (@dim $py:expr, $list:expr, $fa:expr, $fb:expr, $dim:expr, |$x:ident, $y:ident, $d:ident| $body:expr) => {{
        const $d: usize = $dim;
        $py.detach(|| {
            $list
                .iter()
                .map(|&(i, j)| {
                    let ($x, $y) = (&$fa[i], &$fb[j]);
                    $body
                })
                .collect::<Vec<_>>()
        })
        .into_iter()
        .collect::<Vec<_>>()
        .into()
    }};
}

/// Per pair: a flag and a fixed number of floats (NaN where the flag is false).
struct Rows {
    hit: Vec<bool>,
    vals: Vec<f64>,
}

impl From<Vec<(bool, Vec<f64>)>> for Rows {
    fn from(v: Vec<(bool, Vec<f64>)>) -> Rows {
        let mut hit = Vec::with_capacity(v.len());
        let mut vals = Vec::with_capacity(v.len() * v.first().map_or(0, |r| r.1.len()));
        for (h, r) in v {
            hit.push(h);
            vals.extend(r);
        }
        Rows { hit, vals }
    }
}

impl From<Vec<bool>> for Rows {
    fn from(hit: Vec<bool>) -> Rows {
        Rows { hit, vals: Vec::new() }
    }
}

/// Splits `vals` (rows of `widths` summed) into one array per width,
/// shaped `(M, *shape)`.
fn columns<'py>(py: Python<'py>, rows: Rows, shapes: &[&[usize]]) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let m = rows.hit.len();
    let widths: Vec<usize> = shapes.iter().map(|s| s.iter().product()).collect();
    let total: usize = widths.iter().sum();
    let mut out = vec![array(py, &[m], rows.hit)];
    let mut start = 0;
    for (s, w) in shapes.iter().zip(&widths) {
        let v: Vec<f64> =
            (0..m).flat_map(|r| rows.vals[r * total + start..r * total + start + w].iter().copied()).collect();
        let mut shape = vec![m];
        shape.extend_from_slice(s);
        out.push(array(py, &shape, v));
        start += w;
    }
    Ok(out)
}

fn nan_row(n: usize) -> Vec<f64> {
    vec![f64::NAN; n]
}

/// `overlaps(a, b)` over pairs: `hit (M,)`.
#[pyfunction]
#[pyo3(signature = (a, b, pairs=None))]
fn overlaps_pairs<'py>(
    py: Python<'py>,
    a: &Frames,
    b: &Frames,
    pairs: Option<PyReadonlyArrayDyn<'_, i64>>,
) -> PyResult<Bound<'py, PyAny>> {
    let rows: Rows = over_pairs!(py, a, b, pairs, |x, y, _D| overlaps(x, y));
    Ok(array(py, &[rows.hit.len()], rows.hit))
}

/// `intersect(a, b)` over pairs: `(hit (M,), boxes (M, 2, D), intervals (M, 2))`.
#[pyfunction]
#[pyo3(signature = (a, b, pairs=None))]
fn intersect_pairs<'py>(
    py: Python<'py>,
    a: &Frames,
    b: &Frames,
    pairs: Option<PyReadonlyArrayDyn<'_, i64>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let d = a.dim();
    let rows: Rows = over_pairs!(py, a, b, pairs, |x, y, D| match intersect(x, y) {
        Some(h) => (true, h.aabb.min.into_iter().chain(h.aabb.max).chain(h.time).collect()),
        None => (false, nan_row(2 * D + 2)),
    });
    columns(py, rows, &[&[2, d], &[2]])
}

/// `overlap_interval(a, b)` over pairs: `(hit (M,), intervals (M, 2))`.
#[pyfunction]
#[pyo3(signature = (a, b, pairs=None))]
fn overlap_interval_pairs<'py>(
    py: Python<'py>,
    a: &Frames,
    b: &Frames,
    pairs: Option<PyReadonlyArrayDyn<'_, i64>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let rows: Rows = over_pairs!(py, a, b, pairs, |x, y, _D| match overlap_interval(x, y) {
        Some(t) => (true, t.to_vec()),
        None => (false, nan_row(2)),
    });
    columns(py, rows, &[&[2]])
}

/// `distance(a, b)` over pairs: `(distance (M,), on_a (M, D), on_b (M, D))`.
#[pyfunction]
#[pyo3(signature = (a, b, pairs=None))]
fn distance_pairs<'py>(
    py: Python<'py>,
    a: &Frames,
    b: &Frames,
    pairs: Option<PyReadonlyArrayDyn<'_, i64>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let d = a.dim();
    let rows: Rows = over_pairs!(py, a, b, pairs, |x, y, _D| {
        let r = distance(x, y);
        (true, std::iter::once(r.distance).chain(r.on_a).chain(r.on_b).collect())
    });
    let mut out = columns(py, rows, &[&[], &[d], &[d]])?;
    out.remove(0);
    Ok(out)
}

/// `penetration(a, b)` over pairs: `(hit (M,), depth (M,), normal (M, D))`.
#[pyfunction]
#[pyo3(signature = (a, b, pairs=None))]
fn penetration_pairs<'py>(
    py: Python<'py>,
    a: &Frames,
    b: &Frames,
    pairs: Option<PyReadonlyArrayDyn<'_, i64>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let d = a.dim();
    let rows: Rows = over_pairs!(py, a, b, pairs, |x, y, D| match penetration(x, y) {
        Some(p) => (true, std::iter::once(p.depth).chain(p.normal).collect()),
        None => (false, nan_row(1 + D)),
    });
    columns(py, rows, &[&[], &[d]])
}

/// `first_contact(a, b)` over pairs: `(hit (M,), time (M,), normal (M, D),
/// point (M, D), depth (M,))`.
#[pyfunction]
#[pyo3(signature = (a, b, pairs=None))]
fn first_contact_pairs<'py>(
    py: Python<'py>,
    a: &Frames,
    b: &Frames,
    pairs: Option<PyReadonlyArrayDyn<'_, i64>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let d = a.dim();
    let rows: Rows = over_pairs!(py, a, b, pairs, |x, y, D| match first_contact(x, y) {
        Some(c) => (true, std::iter::once(c.time).chain(c.normal).chain(c.point).chain([c.depth]).collect()),
        None => (false, nan_row(2 + 2 * D)),
    });
    columns(py, rows, &[&[], &[d], &[d], &[]])
}

/// `ray_cast` of ray `i` against frame `i`: `(hit (R,), time (R,), normal (R, D))`.
#[pyfunction]
fn ray_cast_frames<'py>(
    py: Python<'py>,
    frames: &Frames,
    origins: PyReadonlyArrayDyn<'_, f64>,
    directions: PyReadonlyArrayDyn<'_, f64>,
    max_times: PyReadonlyArrayDyn<'_, f64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let (o, dir, t) = (origins.as_array(), directions.as_array(), max_times.as_array());
    let (n, d) = (frames.len(), frames.dim());
    check_shape("origins", &o, &[Some(n), Some(d)])?;
    check_shape("directions", &dir, &[Some(n), Some(d)])?;
    check_shape("max_times", &t, &[Some(n)])?;
    fn go<const D: usize>(
        f: &[Frame<D>],
        o: &ArrayViewD<f64>,
        dir: &ArrayViewD<f64>,
        t: &ArrayViewD<f64>,
    ) -> PyResult<Vec<(bool, Vec<f64>)>> {
        (0..f.len())
            .map(|i| match ray_cast(&f[i], row(o, i), row(dir, i), t[[i]]) {
                Ok(Some(h)) => Ok((true, std::iter::once(h.time).chain(h.normal).collect())),
                Ok(None) => Ok((false, nan_row(1 + D))),
                Err(e) => Err(value_error(format!("ray {i}: {e}"))),
            })
            .collect()
    }
    let rows = py.detach(|| match &frames.set {
        Set::Two(f) => go(f, &o, &dir, &t),
        Set::Three(f) => go(f, &o, &dir, &t),
    })?;
    columns(py, rows.into(), &[&[], &[d]])
}

/// Every intersecting pair of one set (`fmbgrid::collide`), or across two
/// (`fmbgrid::collide_between`, with `other`): `(pairs (P, 2) int64,
/// boxes (P, 2, D), intervals (P, 2))`, sorted.
#[pyfunction]
#[pyo3(signature = (frames, other=None, detail="exact_box"))]
fn collide_frames<'py>(
    py: Python<'py>,
    frames: &Frames,
    other: Option<&Frames>,
    detail: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let detail = crate::world::detail_of(detail)?;
    if other.is_some_and(|o| o.dim() != frames.dim()) {
        return Err(value_error("the two sets of frames must have the same dimension"));
    }
    fn flat<const D: usize>(pairs: Vec<IndexPair<D>>) -> (Vec<i64>, Vec<f64>, Vec<f64>) {
        let ij = pairs.iter().flat_map(|p| [i64::from(p.a), i64::from(p.b)]).collect();
        let boxes = pairs.iter().flat_map(|p| p.aabb.min.into_iter().chain(p.aabb.max)).collect();
        let times = pairs.iter().flat_map(|p| p.time).collect();
        (ij, boxes, times)
    }
    let found = py.detach(|| match (&frames.set, other.map(|o| &o.set)) {
        (Set::Two(f), None) => collide(f, detail).map(flat),
        (Set::Three(f), None) => collide(f, detail).map(flat),
        (Set::Two(f), Some(Set::Two(g))) => collide_between(f, g, detail).map(flat),
        (Set::Three(f), Some(Set::Three(g))) => collide_between(f, g, detail).map(flat),
        // Refused above: the dimensions match.
        _ => Ok((Vec::new(), Vec::new(), Vec::new())),
    });
    let (ij, boxes, times) = found.map_err(crate::world_error)?;
    let (m, d) = (ij.len() / 2, frames.dim());
    Ok(vec![array(py, &[m, 2], ij), array(py, &[m, 2, d], boxes), array(py, &[m, 2], times)])
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Frames>()?;
    m.add_function(wrap_pyfunction!(overlaps_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(intersect_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(overlap_interval_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(distance_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(penetration_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(first_contact_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(ray_cast_frames, m)?)?;
    m.add_function(wrap_pyfunction!(collide_frames, m)?)?;
    Ok(())
}
