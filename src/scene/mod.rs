//! Scene files: worlds described in TOML, built and run from the command line
//! (`fmbgrid run FILE`) or from code.
//!
//! A scene gives the dimension, the time step, the default number of steps,
//! optionally the grid's cell size, and a list of `[[body]]` entries. Each
//! entry is a primitive `shape` or a mesh `asset`, fixed or moving, placed
//! once or repeated on a `grid` or `scatter`ed at seeded random places.
//!
//! ```toml
//! name = "example"          # optional, default: the file's stem
//! dimension = 3             # 2 or 3
//! dt = 0.016666666666666666 # time step
//! steps = 100               # default number of steps (100)
//! cell_size = 2.0           # optional: the grid's base cell size
//! reverse_every = 60        # optional: moving bodies reverse their velocity every 60 steps
//! tolerance = 0.05          # optional: report the pairs of frames closer than this each step
//!
//! [[body]]                  # fixed ground: an axis-aligned box
//! shape = "aabb"
//! min = [-50.0, -1.0, -50.0]
//! max = [50.0, 0.0, 50.0]
//! motion = "fixed"
//!
//! [[body]]                  # 4 × 1 × 4 rotated boxes falling
//! shape = "box"
//! half_extents = [0.5, 0.5, 0.5]
//! position = [-6.0, 5.0, -6.0]
//! rotation = [0.0, 1.0, 0.0, 0.3]   # axis, then angle in radians (2D: [angle])
//! velocity = [0.0, -10.0, 0.0]
//! grid = { count = [4, 1, 4], spacing = [4.0, 0.0, 4.0] }
//!
//! [[body]]                  # 1000 random tetrahedra
//! shape = "tetrahedron"
//! vertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
//! scatter = { count = 1000, seed = 7, min = [-40.0, 1.0, -40.0], max = [40.0, 20.0, 40.0],
//!             velocity_range = [-3.0, 3.0], scale_range = [1.0, 10.0], random_rotation = true }
//!
//! [[body]]                  # a mesh, relative to the scene file
//! asset = "../meshes/bunny.obj"
//! thickness = 0.01          # surface meshes: thickness of the triangles' frames (world units)
//! scale = 10.0
//! motion = "fixed"
//! ```
//!
//! Body keys:
//! * `shape`: `"box"` (`half_extents`), `"tetrahedron"` (3D) or `"triangle"`
//!   (2D) (`vertices`, local coordinates), `"aabb"` (`min`, `max`); or
//!   `asset` (3D only; OBJ, STL, PLY, TetGen `.node`/`.ele`, Gmsh, as read by
//!   the mesh loader): a volume mesh gives one tetrahedron frame per
//!   element; a surface mesh gives thin shells with `thickness`, or without
//!   it the tetrahedralisation `stem.node`/`stem.ele` beside the file
//!   ([`crate::mesh::load_solid`]; one of the two is required, and
//!   `thickness` on a volume mesh is an error);
//! * `scale` (uniform, default 1), `motion` (`"fixed"` | `"moving"`, default
//!   moving), `position`, `rotation`, `velocity` (moving bodies only);
//! * `grid = { count, spacing }` (one count and spacing per axis): copies at
//!   `position + index · spacing`;
//! * `scatter = { count, seed, min, max, velocity_range, scale_range,
//!   axis_scale_range, random_rotation }`: copies at uniformly random
//!   positions in `[min, max]` (offset by `position`); velocity components
//!   get `U(velocity_range)` added; `scale_range` is a log-uniform extra
//!   scale; `axis_scale_range` a uniform factor per local axis (so a box of
//!   half extents 1 with `axis_scale_range = [0.5, 1.5]` has half extents in
//!   0.5–1.5); `random_rotation` replaces `rotation` by a uniformly random
//!   one. The generator is SplitMix64: the same file gives the same world on
//!   every machine.
//!
//! Errors ([`SceneError`]) name the file, line and column: TOML syntax and
//! type errors, unknown keys, and bad values (`nan`, numbers beyond 1e15,
//! negative sizes, vectors of the wrong length, degenerate shapes) with the
//! body's index, on the line of the key they are about. Counts are checked
//! before anything is built: a scene makes at most [`MAX_BODIES`] bodies,
//! and building reserves the world's memory for each entry first
//! ([`World::try_reserve`](crate::World::try_reserve)), so a scene larger
//! than memory is an error, not an abort.
//!
//! ```
//! use fmbgrid::scene::Scene;
//! let scene = Scene::parse(
//!     r#"
//! dimension = 2
//! dt = 0.1
//! [[body]]
//! shape = "aabb"
//! min = [0.0, 0.0]
//! max = [10.0, 1.0]
//! motion = "fixed"
//! [[body]]
//! shape = "box"
//! half_extents = [0.5, 0.5]
//! position = [5.0, 1.8]
//! velocity = [0.0, -10.0]
//! "#,
//!     ".",
//! )?;
//! let mut world = scene.build_2d()?;
//! assert_eq!(world.len(), 2);
//! assert_eq!(world.step(scene.dt())?.len(), 1);
//!
//! let bad = Scene::parse("dimension = 2\ndt = 0.1\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, nan]\n", ".");
//! assert_eq!(bad.unwrap_err().to_string(), "<string>:5:1: body 0: half_extents[1] is NaN: it must be a finite number of magnitude at most 1e15");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod build;
pub mod format;
mod rng;
mod run;
mod stats;

use std::path::{Path, PathBuf};

pub use build::BuildReport;
pub use format::SceneFile;
pub use rng::SplitMix64;

use crate::error::Num;
pub use run::{Observer, RunOptions, Snapshot, Summary, run};

/// Why a scene could not be read, built or run. Displayed as
/// `file:line: problem`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SceneError {
    /// The file could not be read.
    #[error("{}: {source}", file.display())]
    Io {
        /// The scene file.
        file: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not valid TOML, an unknown key, or a value of the wrong type.
    #[error("{}:{line}:{column}: {message}", file.display())]
    Syntax {
        /// The scene file.
        file: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column (in characters) of the problem.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A scene-level value is refused (`dimension`, `dt`, ...).
    #[error("{}:{line}:{column}: {message}", file.display())]
    Invalid {
        /// The scene file.
        file: PathBuf,
        /// 1-based line of the key (1 when unknown).
        line: usize,
        /// 1-based column of the key.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A `[[body]]` entry is refused.
    #[error("{}:{line}:{column}: body {index}: {message}", file.display())]
    Body {
        /// The scene file.
        file: PathBuf,
        /// 1-based line of the entry's key the problem is about, else of its
        /// `[[body]]` header.
        line: usize,
        /// 1-based column of that key or header.
        column: usize,
        /// 0-based index of the entry.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// The run's output (an exporter or another observer) failed.
    #[error("{}: step {step}: {message}", file.display())]
    Output {
        /// The scene file.
        file: PathBuf,
        /// 1-based step number.
        step: usize,
        /// What failed.
        message: String,
    },
    /// A scene could not be written back as TOML.
    #[error("the scene cannot be written as TOML: {0}")]
    Save(String),
    /// The world refused a step.
    #[error("{}: step {step}: {source}", file.display())]
    Step {
        /// The scene file.
        file: PathBuf,
        /// 1-based step number.
        step: usize,
        /// The cause.
        source: crate::WorldError,
    },
}

/// Most bodies a scene may make (after `grid` and `scatter`): the world's
/// limit of frames of one motion, 2^26 (67,108,864).
pub const MAX_BODIES: usize = 1 << 26;

/// Where a key or table header is in the text (1-based).
#[derive(Clone, Debug)]
struct Place {
    key: String,
    line: usize,
    column: usize,
}

/// A parsed and checked scene file.
#[derive(Clone, Debug)]
pub struct Scene {
    file: PathBuf,
    base_dir: PathBuf,
    spec: SceneFile,
    /// Each `[[body]]` header, in order.
    body_headers: Vec<Place>,
    /// Each `key = value` line and table header, in order.
    places: Vec<Place>,
}

impl Scene {
    /// Reads and checks a scene file; assets resolve relative to its folder.
    ///
    /// # Errors
    /// [`SceneError::Io`], or as [`Scene::parse`].
    pub fn load(path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let text =
            std::fs::read_to_string(path).map_err(|source| SceneError::Io { file: path.to_path_buf(), source })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::parse_file(&text, base, path.to_path_buf())
    }

    /// Parses and checks a scene from text; assets resolve relative to
    /// `base_dir`; errors name the file `<string>`.
    ///
    /// # Errors
    /// [`SceneError::Syntax`], [`SceneError::Invalid`], [`SceneError::Body`].
    pub fn parse(text: &str, base_dir: impl AsRef<Path>) -> Result<Scene, SceneError> {
        Self::parse_file(text, base_dir.as_ref().to_path_buf(), PathBuf::from("<string>"))
    }

    fn parse_file(text: &str, base_dir: PathBuf, file: PathBuf) -> Result<Scene, SceneError> {
        let places = places(text);
        // `[body]` parses as one table where an array of them is expected;
        // say what to write instead of the parser's "expected a sequence".
        if let Some(p) = places.iter().find(|p| p.key == "[body]") {
            return Err(SceneError::Syntax {
                file,
                line: p.line,
                column: p.column,
                message: "`[body]` is a single table: bodies are an array of tables, written `[[body]]`".into(),
            });
        }
        let spec: SceneFile = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| line_column(text, s.start));
            SceneError::Syntax { file: file.clone(), line, column, message: e.message().trim().to_string() }
        })?;
        let body_headers = places.iter().filter(|p| p.key == "[[body]]").cloned().collect();
        let scene = Scene { file, base_dir, spec, body_headers, places };
        scene.check()?;
        Ok(scene)
    }

    /// The scene's name (its `name`, else the file's stem).
    pub fn name(&self) -> &str {
        match &self.spec.name {
            Some(n) => n,
            None => self.file.file_stem().and_then(|s| s.to_str()).unwrap_or("scene"),
        }
    }

    /// The file it was read from (`<string>` for [`Scene::parse`]).
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// 2 or 3.
    pub fn dimension(&self) -> usize {
        usize::from(self.spec.dimension)
    }

    /// The time step.
    pub fn dt(&self) -> f64 {
        self.spec.dt
    }

    /// The default number of steps.
    pub fn steps(&self) -> usize {
        self.spec.steps
    }

    /// The safety distance whose violations the runner reports, if any.
    pub fn tolerance(&self) -> Option<f64> {
        self.spec.tolerance
    }

    /// The parsed file.
    pub fn spec(&self) -> &SceneFile {
        &self.spec
    }

    /// The scene as TOML text: [`Scene::parse`] of it (with the same base
    /// directory, against which mesh paths resolve) gives the same
    /// [`SceneFile`]. Comments and key order are not kept.
    ///
    /// ```
    /// use fmbgrid::scene::Scene;
    /// let text = "dimension = 2\ndt = 0.1\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\n";
    /// let scene = Scene::parse(text, ".")?;
    /// let again = Scene::parse(&scene.to_toml()?, ".")?;
    /// assert_eq!(again.spec(), scene.spec());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SceneError::Save`] when a value has no TOML form (none of a
    /// parsed scene's do).
    pub fn to_toml(&self) -> Result<String, SceneError> {
        toml::to_string(&self.spec).map_err(|e| SceneError::Save(e.to_string()))
    }

    /// Number of bodies the scene builds (after `grid` and `scatter`), at
    /// most [`MAX_BODIES`].
    pub fn body_count(&self) -> usize {
        // Checked when the scene was read: no overflow, at most MAX_BODIES.
        self.spec.bodies.iter().map(|b| build::copies(b).unwrap_or(MAX_BODIES)).sum()
    }

    /// Number of `[[body]]` entries that load a mesh asset.
    pub fn asset_count(&self) -> usize {
        self.spec.bodies.iter().filter(|b| b.asset.is_some()).count()
    }

    fn invalid(&self, key: &str, message: String) -> SceneError {
        let (line, column) = self.places.iter().find(|p| p.key == key).map_or((1, 1), |p| (p.line, p.column));
        SceneError::Invalid { file: self.file.clone(), line, column, message }
    }

    /// An error of body entry `index`, placed at the first of the entry's
    /// keys that the message names (`half_extents`, `scatter.min`, ...),
    /// else at the entry's header.
    pub(super) fn body_error(&self, index: usize, message: String) -> SceneError {
        let header = self.body_headers.get(index);
        let (mut line, mut column) = header.map_or((1, 1), |p| (p.line, p.column));
        if let Some(h) = header {
            // The entry's keys: from its header to the next table header.
            let keys: Vec<&Place> =
                self.places.iter().skip_while(|p| p.line <= h.line).take_while(|p| !p.key.starts_with('[')).collect();
            let named = message
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map(|w| if w == "vertex" { "vertices" } else { w })
                .find_map(|w| keys.iter().find(|p| p.key == w));
            if let Some(p) = named {
                (line, column) = (p.line, p.column);
            }
        }
        SceneError::Body { file: self.file.clone(), line, column, index, message }
    }

    fn check(&self) -> Result<(), SceneError> {
        let s = &self.spec;
        if s.dimension != 2 && s.dimension != 3 {
            return Err(self.invalid("dimension", format!("dimension must be 2 or 3, got {}", s.dimension)));
        }
        if !(s.dt.is_finite() && s.dt >= 0.0) {
            return Err(self.invalid("dt", format!("dt must be finite and non-negative, got {}", Num(s.dt))));
        }
        if let Some(w) = s.cell_size
            && !(w.is_finite() && w > 0.0)
        {
            return Err(self.invalid("cell_size", format!("cell_size must be positive and finite, got {}", Num(w))));
        }
        if let Some(d) = s.tolerance
            && !(d.is_finite() && d >= 0.0)
        {
            return Err(self.invalid("tolerance", format!("tolerance must be finite and non-negative, got {}", Num(d))));
        }
        if s.reverse_every == Some(0) {
            return Err(self.invalid("reverse_every", "reverse_every must be at least 1".into()));
        }
        let mut total = 0usize;
        for (i, b) in s.bodies.iter().enumerate() {
            let checked = match s.dimension {
                2 => build::resolve::<2>(b).map(drop),
                _ => build::resolve::<3>(b).map(drop),
            };
            checked.map_err(|m| self.body_error(i, m))?;
            // What the entry's count key says, for both messages.
            let key = match (&b.grid, &b.scatter) {
                (Some(g), _) => format!("grid.count {:?}", g.count),
                (_, Some(c)) => format!("scatter.count = {}", c.count),
                _ => "this entry".into(),
            };
            let copies = build::copies(b).filter(|&n| n <= MAX_BODIES).ok_or_else(|| {
                self.body_error(i, format!("{key} asks for more bodies than the {MAX_BODIES} a scene may have"))
            })?;
            total = total.saturating_add(copies);
            if total > MAX_BODIES {
                let noun = if copies == 1 { "body" } else { "bodies" };
                return Err(self.body_error(
                    i,
                    format!(
                        "{key} makes {copies} {noun}: with the entries before, {total}, more than the {MAX_BODIES} a scene may have"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn asset_path(&self, asset: &str) -> PathBuf {
        self.base_dir.join(asset)
    }
}

/// 1-based line and column (in characters) of byte offset `at` in `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Every table header (as `[name]` or `[[name]]`, spaces removed) and
/// `key = value` line of a TOML text, with its place. Lines inside
/// multi-line strings are skipped, and the rows of a multi-line array
/// (`[0.0, 1.0],`) are not headers: a header's brackets hold a name.
fn places(text: &str) -> Vec<Place> {
    let mut out = Vec::new();
    let mut in_string = false;
    for (i, raw) in text.lines().enumerate() {
        let quotes = raw.matches("\"\"\"").count() + raw.matches("'''").count();
        let was_in_string = in_string;
        in_string ^= quotes % 2 == 1;
        if was_in_string {
            continue;
        }
        let trimmed = raw.trim_start();
        let column = raw.chars().count() - trimmed.chars().count() + 1;
        let code = trimmed.split('#').next().unwrap_or("").trim_end();
        let key = if let Some(inner) = code.strip_prefix('[') {
            let name = inner.trim_start_matches('[').trim_start();
            if !name.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '"' || c == '\'') || name.contains(',')
            {
                continue;
            }
            code.chars().filter(|c| !c.is_whitespace()).collect()
        } else if let Some((key, _)) = code.split_once('=') {
            key.trim().to_string()
        } else {
            continue;
        };
        if !key.is_empty() {
            out.push(Place { key, line: i + 1, column });
        }
    }
    out
}
