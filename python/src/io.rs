//! Files: scene files (TOML, as `fmbgrid run` reads them) and meshes (OBJ,
//! STL, PLY, TetGen, Gmsh), and frames from mesh arrays (trimesh's
//! `vertices` and `faces`, or a tetrahedralisation).

use fmbgrid::mesh::{self, Mesh};
use fmbgrid::scene::Scene;
use numpy::PyReadonlyArrayDyn;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::frames::{Frames, Set};
use crate::world::World;
use crate::{array, check_shape, value_error};

fn scene_info<'py>(py: Python<'py>, s: &Scene) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", s.name())?;
    d.set_item("dimension", s.dimension())?;
    d.set_item("dt", s.dt())?;
    d.set_item("steps", s.steps())?;
    d.set_item("reverse_every", s.spec().reverse_every)?;
    d.set_item("tolerance", s.tolerance())?;
    d.set_item("bodies", s.body_count())?;
    Ok(d)
}

fn build<'py>(py: Python<'py>, s: Scene) -> PyResult<(World, Bound<'py, PyDict>)> {
    let info = scene_info(py, &s)?;
    let world = py.detach(|| match s.dimension() {
        2 => s.build_2d().map(World::from_2d),
        _ => s.build_3d().map(World::from_3d),
    });
    Ok((world.map_err(value_error)?, info))
}

/// A scene file's world, ready to step, and its settings.
#[pyfunction]
fn load_scene<'py>(py: Python<'py>, path: std::path::PathBuf) -> PyResult<(World, Bound<'py, PyDict>)> {
    let scene = py.detach(|| Scene::load(&path)).map_err(value_error)?;
    build(py, scene)
}

/// A scene from TOML text (assets relative to `base_dir`).
#[pyfunction]
#[pyo3(signature = (text, base_dir=std::path::PathBuf::from(".")))]
fn parse_scene<'py>(
    py: Python<'py>,
    text: &str,
    base_dir: std::path::PathBuf,
) -> PyResult<(World, Bound<'py, PyDict>)> {
    let scene = Scene::parse(text, base_dir).map_err(value_error)?;
    build(py, scene)
}

fn mesh_arrays<'py>(py: Python<'py>, m: Mesh) -> Vec<Bound<'py, PyAny>> {
    let (nv, nt, ne) = (m.vertices.len(), m.triangles.len(), m.tetrahedra.len());
    vec![
        array(py, &[nv, 3], m.vertices.into_iter().flatten().collect()),
        array(py, &[nt, 3], m.triangles.into_iter().flatten().collect()),
        array(py, &[ne, 4], m.tetrahedra.into_iter().flatten().collect()),
    ]
}

/// A mesh file: `(vertices (V, 3), triangles (T, 3) uint32, tetrahedra (E, 4)
/// uint32)`. With `solid`, a surface and the tetrahedralisation beside it.
#[pyfunction]
#[pyo3(signature = (path, solid=false))]
fn load_mesh(py: Python<'_>, path: std::path::PathBuf, solid: bool) -> PyResult<Vec<Bound<'_, PyAny>>> {
    let m = py.detach(|| if solid { mesh::load_solid(&path) } else { mesh::load(&path) }).map_err(value_error)?;
    Ok(mesh_arrays(py, m))
}

/// Frames of a mesh: one tetrahedron per element of `tetrahedra` when it
/// has any, else one thin shell of `thickness` per triangle. Returns
/// `(Frames, degenerate count, invalid count)`.
#[pyfunction]
#[pyo3(signature = (vertices, triangles=None, tetrahedra=None, thickness=0.0))]
fn mesh_frames(
    py: Python<'_>,
    vertices: PyReadonlyArrayDyn<'_, f64>,
    triangles: Option<PyReadonlyArrayDyn<'_, u32>>,
    tetrahedra: Option<PyReadonlyArrayDyn<'_, u32>>,
    thickness: f64,
) -> PyResult<(Frames, usize, usize)> {
    let v = vertices.as_array();
    let nv = check_shape("vertices", &v, &[None, Some(3)])?;
    let most = fmbgrid::frame::MAX_COORDINATE;
    if !(thickness.is_finite() && (0.0..=most).contains(&thickness)) {
        return Err(value_error(format!("thickness {thickness} must be a number from 0 to {most:e}")));
    }
    let mut m = Mesh { vertices: (0..nv).map(|i| crate::row(&v, i)).collect(), ..Mesh::default() };
    if let Some(t) = &triangles {
        let t = t.as_array();
        let n = check_shape("triangles", &t, &[None, Some(3)])?;
        m.triangles = (0..n).map(|i| std::array::from_fn(|k| t[[i, k]])).collect();
    }
    if let Some(t) = &tetrahedra {
        let t = t.as_array();
        let n = check_shape("tetrahedra", &t, &[None, Some(4)])?;
        m.tetrahedra = (0..n).map(|i| std::array::from_fn(|k| t[[i, k]])).collect();
    }
    if m.tetrahedra.is_empty() && !m.triangles.is_empty() && thickness == 0.0 {
        return Err(value_error("a surface mesh needs a thickness > 0 (or tetrahedra)"));
    }
    let (frames, report) = py.detach(|| m.frames(thickness));
    Ok((Frames { set: Set::Three(frames) }, report.degenerate, report.invalid))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load_scene, m)?)?;
    m.add_function(wrap_pyfunction!(parse_scene, m)?)?;
    m.add_function(wrap_pyfunction!(load_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(mesh_frames, m)?)?;
    Ok(())
}
