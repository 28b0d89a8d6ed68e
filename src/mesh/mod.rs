//! Mesh loading: Wavefront OBJ, STL (ASCII and binary), PLY (ASCII and
//! binary), TetGen `.node`/`.ele` and Gmsh `.msh` (format 4.1), into one
//! [`Mesh`] of vertices, triangles and tetrahedra, and from there into
//! [`Frame3`](crate::Frame3)s (see [`Mesh::frames`]).
//!
//! Every parser treats its input as hostile: it never panics, checks counts
//! claimed by headers against the length of the input *before* allocating,
//! refuses NaN and infinite coordinates and out-of-range indices, and caps
//! the mesh at [`MAX_VERTICES`] vertices and [`MAX_ELEMENTS`] elements.
//! Errors ([`MeshError`]) name the file and, where the format allows, the
//! line or byte of the problem.
//!
//! ```
//! let obj = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";
//! let mesh = fmbgrid::mesh::parse_obj(obj)?;
//! assert_eq!((mesh.vertices.len(), mesh.triangles.len()), (4, 4));
//! assert!((mesh.enclosed_volume() - 1.0 / 6.0).abs() < 1e-12);
//! let (frames, report) = mesh.frames(0.01);
//! assert_eq!((frames.len(), report.degenerate), (4, 0));
//! # Ok::<(), fmbgrid::mesh::MeshError>(())
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use crate::aabb::Aabb;

mod frames;
mod gmsh;
mod obj;
mod ply;
mod stl;
mod tetgen;

pub use frames::FrameReport;
pub use gmsh::parse_msh;
pub use obj::parse_obj;
pub use ply::parse_ply;
pub use stl::parse_stl;
pub use tetgen::parse_tetgen;

/// Most vertices a loaded mesh may have (2^28, 268 million: 6 GiB of
/// coordinates). Larger claims are refused before anything is allocated.
pub const MAX_VERTICES: usize = 1 << 28;

/// Most triangles plus tetrahedra a loaded mesh may have (2^28).
pub const MAX_ELEMENTS: usize = 1 << 28;

/// A mesh: vertex positions, and triangles and tetrahedra indexing them.
///
/// The parsers only return meshes whose coordinates are finite and whose
/// indices are in range; a `Mesh` built by hand may break either rule, and
/// the methods on it then skip (and count) what is broken instead of
/// panicking.
///
/// ```
/// use fmbgrid::mesh::Mesh;
/// let mesh = Mesh {
///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
///     triangles: vec![],
///     tetrahedra: vec![[0, 1, 2, 3]],
/// };
/// assert!((mesh.tetrahedra_volume() - 1.0 / 6.0).abs() < 1e-15);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions.
    pub vertices: Vec<[f64; 3]>,
    /// Triangles, as indices into `vertices` (counter-clockwise seen from
    /// outside, for the files that follow that convention).
    pub triangles: Vec<[u32; 3]>,
    /// Tetrahedra, as indices into `vertices`.
    pub tetrahedra: Vec<[u32; 4]>,
}

/// Where in a file a [`MeshError`] was found.
///
/// ```
/// use fmbgrid::mesh::{Location, parse_tetgen};
/// let err = parse_tetgen(b"1 3 0 0\n0 0 0 nan\n", b"0 4 0\n").unwrap_err();
/// assert_eq!(err.location, Some(Location::Line(2)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// 1-based line number (text formats).
    Line(usize),
    /// 0-based byte offset (binary formats).
    Byte(u64),
}

/// Why a mesh could not be loaded: the file (when known), where in it
/// (when the format and parser tell), and what is wrong.
///
/// Displayed as `file:line N: problem` or `file: byte N: problem`.
///
/// ```
/// let err = fmbgrid::mesh::parse_obj(b"v 0 0 0\nf 1 2 3\n").unwrap_err();
/// assert_eq!(err.to_string(), "line 2: face index 2 is out of range (1 vertices so far)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct MeshError {
    /// The file, when loading from a path (for [`parse_tetgen`], `.node` or
    /// `.ele` names which of the two inputs is at fault).
    pub file: Option<PathBuf>,
    /// Where in the file, when known.
    pub location: Option<Location>,
    /// What is wrong.
    pub problem: String,
}

impl MeshError {
    /// An error with no file or location yet.
    pub(crate) fn new(problem: impl Into<String>) -> Self {
        MeshError { file: None, location: None, problem: problem.into() }
    }

    /// An error at a 1-based line.
    pub(crate) fn at_line(line: usize, problem: impl Into<String>) -> Self {
        MeshError { location: Some(Location::Line(line)), ..Self::new(problem) }
    }

    /// An error at a 0-based byte offset.
    pub(crate) fn at_byte(byte: u64, problem: impl Into<String>) -> Self {
        MeshError { location: Some(Location::Byte(byte)), ..Self::new(problem) }
    }

    /// The same error, attributed to `file`.
    pub(crate) fn in_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }

    fn render(&self) -> String {
        let file = self.file.as_ref().map(|f| f.display().to_string());
        match (file, self.location) {
            (Some(f), Some(Location::Line(n))) => format!("{f}:line {n}: {}", self.problem),
            (Some(f), Some(Location::Byte(n))) => format!("{f}: byte {n}: {}", self.problem),
            (Some(f), None) => format!("{f}: {}", self.problem),
            (None, Some(Location::Line(n))) => format!("line {n}: {}", self.problem),
            (None, Some(Location::Byte(n))) => format!("byte {n}: {}", self.problem),
            (None, None) => self.problem.clone(),
        }
    }
}

/// Loads a mesh, choosing the parser by the file's extension (case
/// insensitive): `obj`, `stl`, `ply`, `msh`, or `node`/`ele` for TetGen.
///
/// For TetGen, naming either file loads both `stem.node` and `stem.ele`.
///
/// # Errors
/// [`MeshError`] naming the file when it cannot be read, its extension is
/// unknown, or its contents are malformed.
///
/// ```no_run
/// let bunny = fmbgrid::mesh::load("assets/meshes/bunny_6k.ele")?;
/// let (frames, report) = bunny.frames(0.0);
/// println!("{} tetrahedra, {} degenerate", report.frames, report.degenerate);
/// # Ok::<(), fmbgrid::mesh::MeshError>(())
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<Mesh, MeshError> {
    let path = path.as_ref();
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let parse: fn(&[u8]) -> Result<Mesh, MeshError> = match ext.as_str() {
        "obj" => parse_obj,
        "stl" => parse_stl,
        "ply" => parse_ply,
        "msh" => parse_msh,
        "node" | "ele" => return load_tetgen(path),
        _ => {
            let problem = "unknown mesh extension (expected obj, stl, ply, msh, node or ele)";
            return Err(MeshError::new(problem).in_file(path));
        }
    };
    let bytes = read(path)?;
    parse(&bytes).map_err(|e| e.in_file(path))
}

/// How far a tetrahedralisation may stray from its surface for
/// [`load_solid`] to accept it, relative: its volume against the enclosed
/// volume, and its box's corners against the surface's (relative to the
/// box's largest extent). Far above the round-off of both meshes, far below
/// any real mismatch (one tetrahedron of a 10⁵-element mesh more or less
/// moves the volume by about 1e-5).
pub const SOLID_TOLERANCE: f64 = 1e-7;

/// The TetGen pair `stem.node` / `stem.ele` beside a file `stem.ext`, when
/// both exist: where [`load_solid`] looks for a surface's tetrahedralisation.
///
/// ```
/// use fmbgrid::mesh::tetrahedralisation_beside;
/// assert!(tetrahedralisation_beside("assets/meshes/icosphere.obj").is_some());
/// assert!(tetrahedralisation_beside("assets/meshes/cube.obj").is_none());
/// ```
pub fn tetrahedralisation_beside(path: impl AsRef<Path>) -> Option<PathBuf> {
    let ele = path.as_ref().with_extension("ele");
    (ele.is_file() && ele.with_extension("node").is_file()).then_some(ele)
}

/// A closed surface and the tetrahedralisation that fills it: the surface
/// file (`obj`, `stl`, `ply` or `msh`, with triangles only) plus the TetGen
/// pair `stem.node` / `stem.ele` beside it (as `tetgen -pY stem.off` writes
/// it, renamed). The mesh holds the surface's triangles and the
/// tetrahedralisation's tetrahedra (its vertices after the surface's), so
/// [`Mesh::frames`] gives one tetrahedron frame per element, and
/// [`Mesh::enclosed_volume`] and [`Mesh::tetrahedra_volume`] agree.
///
/// # Errors
/// [`MeshError`] when either file cannot be loaded (a missing `stem.ele` is
/// named), when the surface file already has tetrahedra, or when the
/// tetrahedra do not fill the surface: their volume differs from the
/// enclosed volume, or their box from the surface's, by more than
/// [`SOLID_TOLERANCE`] (an open surface, a tetrahedralisation of another
/// shape, or one moved or scaled).
///
/// ```
/// let sphere = fmbgrid::mesh::load_solid("assets/meshes/icosphere.obj")?;
/// assert_eq!((sphere.triangles.len(), sphere.tetrahedra.len()), (320, 480));
/// assert!((sphere.tetrahedra_volume() / sphere.enclosed_volume() - 1.0).abs() < 1e-9);
/// let err = fmbgrid::mesh::load_solid("assets/meshes/cube.obj").unwrap_err();
/// assert!(err.to_string().contains("cube.ele"));
/// # Ok::<(), fmbgrid::mesh::MeshError>(())
/// ```
pub fn load_solid(path: impl AsRef<Path>) -> Result<Mesh, MeshError> {
    let path = path.as_ref();
    let surface = load(path)?;
    fill(surface, path)
}

/// The `surface` read from `path`, with the tetrahedralisation beside it
/// (see [`load_solid`]).
pub(crate) fn fill(mut surface: Mesh, path: &Path) -> Result<Mesh, MeshError> {
    let refuse = |problem: String| MeshError::new(problem).in_file(path);
    if !surface.tetrahedra.is_empty() {
        return Err(refuse("already has tetrahedra: a solid is made from a surface mesh".into()));
    }
    let Some(ele) = tetrahedralisation_beside(path) else {
        let missing = path.with_extension("ele");
        return Err(refuse(format!("no tetrahedralisation beside it ({} and .node)", missing.display())));
    };
    let solid = load_tetgen(&ele)?;
    let (filled, enclosed) = (solid.tetrahedra_volume(), surface.enclosed_volume().abs());
    if !(enclosed > 0.0 && (filled - enclosed).abs() <= SOLID_TOLERANCE * enclosed) {
        let ele = ele.display();
        return Err(refuse(format!(
            "{ele} does not fill the surface: tetrahedra volume {filled} against enclosed volume {enclosed}"
        )));
    }
    // Both boxes exist: both meshes enclose a positive volume.
    let (Some(outer), Some(inner)) = (surface.aabb(), solid.aabb()) else {
        return Err(refuse("an empty mesh".into()));
    };
    let size = outer.extent().into_iter().fold(0.0, f64::max);
    let apart = (0..3).map(|k| (outer.min[k] - inner.min[k]).abs().max((outer.max[k] - inner.max[k]).abs()));
    if apart.fold(0.0, f64::max) > SOLID_TOLERANCE * size {
        return Err(refuse(format!(
            "{} does not fill the surface: its box {:?}..{:?} against the surface's {:?}..{:?}",
            ele.display(),
            inner.min,
            inner.max,
            outer.min,
            outer.max
        )));
    }
    let (vertices, elements) =
        (surface.vertices.len() + solid.vertices.len(), surface.triangles.len() + solid.tetrahedra.len());
    check_sizes(vertices, elements).map_err(|e| e.in_file(path))?;
    // Cannot truncate: at most MAX_VERTICES (2^28) vertices, just checked.
    let base = surface.vertices.len() as u32;
    surface.vertices.extend_from_slice(&solid.vertices);
    surface.tetrahedra.extend(solid.tetrahedra.iter().map(|t| t.map(|i| i + base)));
    Ok(surface)
}

fn load_tetgen(path: &Path) -> Result<Mesh, MeshError> {
    let node_path = path.with_extension("node");
    let ele_path = path.with_extension("ele");
    let node = read(&node_path)?;
    let ele = read(&ele_path)?;
    let (vertices, base) = tetgen::parse_node(&node).map_err(|e| e.in_file(&node_path))?;
    let tetrahedra = tetgen::parse_ele(&ele, vertices.len(), base).map_err(|e| e.in_file(&ele_path))?;
    Ok(Mesh { vertices, triangles: Vec::new(), tetrahedra })
}

fn read(path: &Path) -> Result<Vec<u8>, MeshError> {
    std::fs::read(path).map_err(|e| MeshError::new(format!("cannot read: {e}")).in_file(path))
}

/// Checks the invariants every parser promises (finite coordinates, indices
/// in range, sizes within the caps) on a mesh assembled from a third-party
/// parser's output, where the file position of a problem is no longer known.
pub(crate) fn validated(mesh: Mesh) -> Result<Mesh, MeshError> {
    check_sizes(mesh.vertices.len(), mesh.triangles.len() + mesh.tetrahedra.len())?;
    if let Some((i, v)) = mesh.vertices.iter().enumerate().find(|(_, v)| !v.iter().all(|x| x.is_finite())) {
        return Err(MeshError::new(format!("vertex {i} has a non-finite coordinate {v:?}")));
    }
    let n = mesh.vertices.len();
    let in_range = |idx: &[u32]| idx.iter().all(|&i| (i as usize) < n);
    if let Some(t) = mesh.triangles.iter().position(|t| !in_range(t)) {
        return Err(MeshError::new(format!("triangle {t} has a vertex index out of range ({n} vertices)")));
    }
    if let Some(t) = mesh.tetrahedra.iter().position(|t| !in_range(t)) {
        return Err(MeshError::new(format!("tetrahedron {t} has a vertex index out of range ({n} vertices)")));
    }
    Ok(mesh)
}

/// Refuses meshes beyond [`MAX_VERTICES`] or [`MAX_ELEMENTS`].
pub(crate) fn check_sizes(vertices: usize, elements: usize) -> Result<(), MeshError> {
    if vertices > MAX_VERTICES {
        return Err(MeshError::new(format!("{vertices} vertices exceed the limit of {MAX_VERTICES}")));
    }
    if elements > MAX_ELEMENTS {
        return Err(MeshError::new(format!("{elements} elements exceed the limit of {MAX_ELEMENTS}")));
    }
    Ok(())
}

/// A coordinate triple, or why it is refused (NaN or infinite).
pub(crate) fn finite_point(p: [f64; 3]) -> Result<[f64; 3], String> {
    if p.iter().all(|x| x.is_finite()) { Ok(p) } else { Err(format!("non-finite coordinate in {p:?}")) }
}

/// An index into `n` vertices as `u32`, or why it is refused.
pub(crate) fn vertex_index(i: u64, n: usize) -> Result<u32, String> {
    match u32::try_from(i) {
        Ok(v) if (v as usize) < n => Ok(v),
        _ => Err(format!("vertex index {i} is out of range ({n} vertices)")),
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Byte(n) => write!(f, "byte {n}"),
        }
    }
}

impl Mesh {
    /// The box of all vertices, or `None` for a mesh without (finite)
    /// vertices.
    ///
    /// ```
    /// use fmbgrid::mesh::Mesh;
    /// let mesh = Mesh { vertices: vec![[0.0, 1.0, 2.0], [3.0, -1.0, 2.0]], ..Mesh::default() };
    /// assert_eq!(mesh.aabb().unwrap().max, [3.0, 1.0, 2.0]);
    /// assert_eq!(Mesh::default().aabb(), None);
    /// ```
    pub fn aabb(&self) -> Option<Aabb<3>> {
        let mut b = Aabb::EMPTY;
        for v in &self.vertices {
            b.include(v);
        }
        (!b.is_empty()).then_some(b)
    }
}
