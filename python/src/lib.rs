//! Python bindings of fmbgrid: the native module `fmbgrid._fmbgrid`.
//!
//! Everything crosses the boundary as numpy arrays: frames in as
//! `origins (N, D)` and `components (N, D, D)`, contacts out as arrays of
//! `(M, ...)`; no Python object is made per frame, body or pair, and the GIL
//! is released while the engine works. The Python package (`fmbgrid/`)
//! turns user input into the exact dtypes these functions take (float64,
//! uint64, uint32, uint8, bool) and wraps the tuples they return in named
//! results; the shapes and every number are checked here, before anything
//! changes.

use std::fmt::Display;

use numpy::ndarray::{ArrayD, ArrayView, ArrayViewD, Dimension, Ix2, Ix3, IxDyn, NdIndex};
use numpy::{Element, IntoPyArray};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;

mod frames;
mod io;
mod reference;
mod world;

pyo3::create_exception!(
    _fmbgrid,
    FmbgridError,
    PyValueError,
    "An input the engine refuses (a bad number, shape, handle or file); a ValueError."
);

/// A Python `FmbgridError` (a `ValueError`) with the engine's message.
pub(crate) fn value_error(e: impl Display) -> PyErr {
    FmbgridError::new_err(e.to_string())
}

/// The engine's world error as a Python exception: `MemoryError` when
/// memory ran out, `FmbgridError` (a `ValueError`) otherwise.
pub(crate) fn world_error(e: fmbgrid::WorldError) -> PyErr {
    match e {
        fmbgrid::WorldError::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        e => value_error(e),
    }
}

/// `(2, 3)`-style text of a shape, as numpy prints it.
pub(crate) fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// Most rows (frames, bodies, pairs, rays, handles) one call takes: 2^27,
/// twice the frames a world holds (2^26 fixed and 2^26 moving). A larger
/// array (a broadcast one costs nothing to make) is refused before any
/// memory is taken for it.
pub(crate) const MAX_ROWS: usize = 1 << 27;

/// Checks that `a` has the shape `expected` (`None`: any length) and
/// returns its first length (at most [`MAX_ROWS`]).
pub(crate) fn check_shape<T>(name: &str, a: &ArrayViewD<T>, expected: &[Option<usize>]) -> PyResult<usize> {
    let shape = a.shape();
    if let Some(&n) = shape.first().filter(|&&n| n > MAX_ROWS) {
        return Err(value_error(format!("{name} has {n} rows: one call takes at most {MAX_ROWS}")));
    }
    let fits = shape.len() == expected.len() && shape.iter().zip(expected).all(|(n, e)| e.is_none_or(|e| *n == e));
    if !fits {
        let want: Vec<String> = expected
            .iter()
            .enumerate()
            .map(|(i, e)| match e {
                Some(n) => n.to_string(),
                None if i == 0 => "N".to_string(),
                None => "M".to_string(),
            })
            .collect();
        let want = if want.len() == 1 { format!("({},)", want[0]) } else { format!("({})", want.join(", ")) };
        return Err(value_error(format!("{name} must have shape {want}, got {}", shape_text(shape))));
    }
    Ok(shape.first().copied().unwrap_or(0))
}

/// Row `i` of an `(N, D)` array (an `ArrayView2` from [`fixed`] reads
/// faster than a dynamic-dimension view).
pub(crate) fn row<const D: usize, Dm: Dimension>(a: &ArrayView<f64, Dm>, i: usize) -> [f64; D]
where
    [usize; 2]: NdIndex<Dm>,
{
    std::array::from_fn(|k| a[[i, k]])
}

/// Matrix `i` of an `(N, D, D)` array: `m[j]` is row `j` of the input.
pub(crate) fn matrix<const D: usize, Dm: Dimension>(a: &ArrayView<f64, Dm>, i: usize) -> [[f64; D]; D]
where
    [usize; 3]: NdIndex<Dm>,
{
    std::array::from_fn(|j| std::array::from_fn(|k| a[[i, j, k]]))
}

/// The rows of an `(N, D)` float array whose shape was checked, read as
/// `[f64; D]`: straight from memory when the array is C-contiguous (what
/// numpy makes by default), else element by element.
pub(crate) enum Vectors<'a, const D: usize> {
    Packed(&'a [[f64; D]]),
    Strided(ArrayView<'a, f64, Ix2>),
}

impl<'a, const D: usize> Vectors<'a, D> {
    pub(crate) fn new(a: &ArrayViewD<'a, f64>) -> PyResult<Self> {
        let a = fixed::<Ix2>(a)?;
        Ok(match a.to_slice() {
            Some(s) if a.ncols() == D => Vectors::Packed(s.as_chunks::<D>().0),
            _ => Vectors::Strided(a),
        })
    }

    /// Row `k` (`k` < N).
    #[inline]
    pub(crate) fn get(&self, k: usize) -> [f64; D] {
        match self {
            Vectors::Packed(s) => s[k],
            Vectors::Strided(a) => row(a, k),
        }
    }
}

/// The matrices of an `(N, D, D)` float array whose shape was checked, read
/// as [`matrix`] reads them: straight from memory when the array, or its
/// transpose (`np.swapaxes(r, -1, -2)` of a C-contiguous `r`, as the
/// Python package passes rotations), is C-contiguous, else element by
/// element.
pub(crate) enum Matrices<'a, const D: usize> {
    Packed(&'a [[[f64; D]; D]]),
    Transposed(&'a [[[f64; D]; D]]),
    Strided(ArrayView<'a, f64, Ix3>),
}

impl<'a, const D: usize> Matrices<'a, D> {
    pub(crate) fn new(a: &ArrayViewD<'a, f64>) -> PyResult<Self> {
        let a = fixed::<Ix3>(a)?;
        let square = a.shape()[1..] == [D, D];
        if let Some(s) = a.to_slice().filter(|_| square) {
            return Ok(Matrices::Packed(s.as_chunks::<D>().0.as_chunks::<D>().0));
        }
        if let Some(s) = a.permuted_axes([0, 2, 1]).to_slice().filter(|_| square) {
            return Ok(Matrices::Transposed(s.as_chunks::<D>().0.as_chunks::<D>().0));
        }
        Ok(Matrices::Strided(a))
    }

    /// Matrix `k` (`k` < N): `m[j]` is row `j` of the input's matrix `k`.
    #[inline]
    pub(crate) fn get(&self, k: usize) -> [[f64; D]; D] {
        match self {
            Matrices::Packed(s) => s[k],
            Matrices::Transposed(s) => transposed(&s[k]),
            Matrices::Strided(a) => matrix(a, k),
        }
    }
}

/// The transpose of `m`: row `j` of the input's matrix read from an array
/// stored transposed.
#[inline(always)]
pub(crate) fn transposed<const D: usize>(m: &[[f64; D]; D]) -> [[f64; D]; D] {
    std::array::from_fn(|j| std::array::from_fn(|i| m[i][j]))
}

/// A view of fixed dimension (`Ix2`, `Ix3`) of an array whose shape was
/// checked: its element reads skip the dynamic index arithmetic.
pub(crate) fn fixed<'a, Dm: Dimension>(a: &ArrayViewD<'a, f64>) -> PyResult<ArrayView<'a, f64, Dm>> {
    a.clone().into_dimensionality::<Dm>().map_err(value_error)
}

/// A numpy array of `shape` holding `v` (row-major), without a copy.
pub(crate) fn array<'py, T: Element>(py: Python<'py>, shape: &[usize], v: Vec<T>) -> Bound<'py, PyAny> {
    // The lengths multiply to `v.len()` at every call site.
    match ArrayD::from_shape_vec(IxDyn(shape), v) {
        Ok(a) => a.into_pyarray(py).into_any(),
        Err(e) => panic!("array of shape {shape:?}: {e}"),
    }
}

/// The native module.
#[pymodule]
fn _fmbgrid(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FmbgridError", m.py().get_type::<FmbgridError>())?;
    m.add("MAX_COORDINATE", fmbgrid::frame::MAX_COORDINATE)?;
    m.add("SPIN_TOLERANCE", fmbgrid::SPIN_TOLERANCE)?;
    m.add("ROTATION_TOLERANCE", fmbgrid::ROTATION_TOLERANCE)?;
    m.add("MAX_ROWS", MAX_ROWS)?;
    m.add("DEBUG_KINDS", fmbgrid::DebugKind::ALL.map(|k| k.label()).to_vec())?;
    frames::register(m)?;
    world::register(m)?;
    io::register(m)?;
    m.add_function(wrap_pyfunction!(reference::_reference_answers, m)?)?;
    Ok(())
}
