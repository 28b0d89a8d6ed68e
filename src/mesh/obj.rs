//! Wavefront OBJ, through `tobj` (triangulating, single-indexed).
//!
//! `tobj` reports neither the line of an error nor refuses NaN, and in debug
//! builds overflows on absurd texture or normal indices; a light pre-pass
//! over the text checks what it would trip on (coordinates, and every index
//! of every face against the counts so far) and names the line.

use super::{MAX_ELEMENTS, MAX_VERTICES, Mesh, MeshError, validated};

/// Parses a Wavefront OBJ file: its `v` positions and its faces (`f`),
/// triangulated as fans. Points, lines, texture coordinates, normals and
/// materials are ignored (`mtllib` files are never opened). Vertices are
/// single-indexed: a position used with two different normals or texture
/// coordinates becomes two vertices.
///
/// # Errors
/// [`MeshError`] with the line of a malformed or non-finite vertex, or of a
/// face index out of range; without a line for the rarer errors found by
/// `tobj` itself.
///
/// ```
/// let quad = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n";
/// let mesh = fmbgrid::mesh::parse_obj(quad)?;
/// assert_eq!(mesh.triangles.len(), 2);
/// let err = fmbgrid::mesh::parse_obj(b"v 0 0 nan\n").unwrap_err();
/// assert_eq!(err.to_string(), "line 1: vertex 1 has a non-finite coordinate");
/// # Ok::<(), fmbgrid::mesh::MeshError>(())
/// ```
pub fn parse_obj(bytes: &[u8]) -> Result<Mesh, MeshError> {
    prescan(bytes)?;
    // `LoadOptions` grows fields under tobj's optional features.
    #[allow(clippy::needless_update)]
    let options = tobj::LoadOptions {
        single_index: true,
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    // No material file is ever opened: a mesh must not make us read other
    // files.
    let no_materials = |_: &std::path::Path| Err(tobj::LoadError::OpenFileFailed);
    let (models, _materials) = tobj::load_obj_buf(&mut std::io::Cursor::new(bytes), &options, no_materials)
        .map_err(|e| MeshError::new(format!("invalid OBJ: {e}")))?;
    let mut mesh = Mesh::default();
    for model in &models {
        let m = &model.mesh;
        let offset = mesh.vertices.len();
        mesh.vertices.extend(m.positions.chunks_exact(3).map(|p| [p[0], p[1], p[2]].map(f64::from)));
        let shift = |i: u32| u32::try_from(offset).ok().and_then(|o| o.checked_add(i)).unwrap_or(u32::MAX);
        mesh.triangles.extend(m.indices.chunks_exact(3).map(|t| [shift(t[0]), shift(t[1]), shift(t[2])]));
    }
    validated(mesh)
}

/// Checks what `tobj` would mishandle, line by line: `v` lines need three
/// finite numbers (and a non-zero, finite weight if any); face indices must
/// name an existing position, texture coordinate or normal (1-based, or
/// negative from the end). Also caps the counts.
fn prescan(bytes: &[u8]) -> Result<(), MeshError> {
    let mut counts = [0usize; 3]; // v, vt, vn seen so far
    let mut faces = 0usize;
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let err = |problem: String| MeshError::at_line(line, problem);
        // tobj reads lines as UTF-8 and fails without a position otherwise.
        let text = std::str::from_utf8(raw).map_err(|_| err("not UTF-8 text".into()))?;
        let mut words = text.split_whitespace();
        match words.next() {
            Some("v") => {
                counts[0] += 1;
                check_position(counts[0], words.collect()).map_err(err)?;
                if counts[0] > MAX_VERTICES {
                    return Err(err(format!("more than {MAX_VERTICES} vertices")));
                }
            }
            Some("vt") => counts[1] += 1,
            Some("vn") => counts[2] += 1,
            // tobj reads `l` lines as faces too (then ignores them).
            Some(kind @ ("f" | "l")) => {
                let words: Vec<&str> = words.collect();
                if kind == "f" && words.len() < 3 {
                    return Err(err(format!("face has {} vertices, at least 3 are needed", words.len())));
                }
                for word in words {
                    check_face_vertex(word, &counts).map_err(err)?;
                }
                faces += 1;
                if faces > MAX_ELEMENTS {
                    return Err(err(format!("more than {MAX_ELEMENTS} faces")));
                }
            }
            Some(word) if word.starts_with('#') || OTHER_STATEMENTS.contains(&word) => {}
            None => {}
            Some(word) => {
                let word: String = word.chars().take(24).collect();
                return Err(err(format!("`{word}` is not an OBJ statement (is this an OBJ file?)")));
            }
        }
    }
    if counts[0] == 0 {
        return Err(MeshError::new("no vertex (`v` line): not an OBJ mesh"));
    }
    Ok(())
}

/// OBJ statements other than `v`, `vt`, `vn`, `f` and `l`: accepted and
/// ignored (groups, materials, smoothing, free-form geometry).
const OTHER_STATEMENTS: [&str; 30] = [
    "vp",
    "p",
    "g",
    "o",
    "s",
    "mg",
    "mtllib",
    "usemtl",
    "maplib",
    "usemap",
    "cstype",
    "deg",
    "bmat",
    "step",
    "curv",
    "curv2",
    "surf",
    "parm",
    "trim",
    "hole",
    "scrv",
    "sp",
    "end",
    "con",
    "bevel",
    "c_interp",
    "d_interp",
    "lod",
    "shadow_obj",
    "trace_obj",
];

fn check_position(n: usize, words: Vec<&str>) -> Result<(), String> {
    if words.len() < 3 {
        return Err(format!("vertex {n} needs 3 coordinates, found {}", words.len()));
    }
    // As tobj reads them: f32, scaled by the weight when there are 4 numbers.
    let mut xyz = [0f32; 3];
    for (x, w) in xyz.iter_mut().zip(&words) {
        *x = w.parse().map_err(|_| format!("vertex {n}: {w:?} is not a number"))?;
    }
    if words.len() == 4 {
        let w: f32 = words[3].parse().map_err(|_| format!("vertex {n}: weight {:?} is not a number", words[3]))?;
        xyz = xyz.map(|x| x / w);
    }
    if xyz.iter().all(|x| x.is_finite()) { Ok(()) } else { Err(format!("vertex {n} has a non-finite coordinate")) }
}

/// One `v`, `v/vt`, `v//vn` or `v/vt/vn` group of a face.
fn check_face_vertex(word: &str, counts: &[usize; 3]) -> Result<(), String> {
    const WHAT: [&str; 3] = ["face index", "texture index", "normal index"];
    let mut parts = word.split('/');
    for (k, what) in WHAT.iter().enumerate() {
        let Some(part) = parts.next() else { return Ok(()) };
        if part.is_empty() && k > 0 {
            continue;
        }
        let index: i64 = part.parse().map_err(|_| format!("{what} {part:?} is not an integer"))?;
        let n = counts[k] as i64;
        let valid = (1..=n).contains(&index) || (-n..=-1).contains(&index);
        if !valid {
            let kind = ["vertices", "texture coordinates", "normals"][k];
            return Err(format!("{what} {index} is out of range ({n} {kind} so far)"));
        }
    }
    if parts.next().is_some() { Err(format!("face vertex {word:?} has more than 3 parts")) } else { Ok(()) }
}
