//! TetGen `.node` / `.ele` files, parsed by hand (the format is a few
//! whitespace-separated numbers per line).
//!
//! `.node`: a header `<points> <dimension = 3> <attributes> <markers 0|1>`,
//! then `<index> <x> <y> <z> [attributes] [marker]` per point. `.ele`: a
//! header `<tetrahedra> <nodes per element = 4|10> <region attribute 0|1>`,
//! then `<index> <n1> <n2> <n3> <n4> [...]` per element. `#` starts a
//! comment; blank lines are skipped. Points are numbered from 0 or 1 (the
//! first point's index decides) and consecutively; attributes, markers and
//! the extra nodes of 10-node elements are ignored.

use super::{MAX_ELEMENTS, MAX_VERTICES, Mesh, MeshError, finite_point};

/// Parses a TetGen mesh from the contents of its `.node` and `.ele` files.
///
/// # Errors
/// [`MeshError`] with the line of the problem and, as its `file`, `.node` or
/// `.ele` for the input at fault.
///
/// ```
/// let node = b"# unit tetrahedron\n4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n";
/// let ele = b"1 4 0\n1 1 2 3 4\n";
/// let mesh = fmbgrid::mesh::parse_tetgen(node, ele)?;
/// assert_eq!(mesh.tetrahedra, [[0, 1, 2, 3]]);
/// let bad = fmbgrid::mesh::parse_tetgen(node, b"1 4 0\n1 1 2 3 5\n").unwrap_err();
/// assert_eq!(bad.to_string(), ".ele:line 2: vertex index 5 is out of range (4 points numbered from 1)");
/// # Ok::<(), fmbgrid::mesh::MeshError>(())
/// ```
pub fn parse_tetgen(node: &[u8], ele: &[u8]) -> Result<Mesh, MeshError> {
    let (vertices, base) = parse_node(node).map_err(|e| e.in_file(".node"))?;
    let tetrahedra = parse_ele(ele, vertices.len(), base).map_err(|e| e.in_file(".ele"))?;
    Ok(Mesh { vertices, triangles: Vec::new(), tetrahedra })
}

/// Shortest possible text of one record of `tokens` numbers: one digit and
/// one separator each. Claimed counts are checked against it before
/// anything is allocated.
const fn min_record_bytes(tokens: usize) -> usize {
    2 * tokens
}

/// The non-blank lines of a text file, comments removed, with their
/// 1-based line numbers.
fn records(bytes: &[u8]) -> impl Iterator<Item = (usize, Result<Vec<&str>, MeshError>)> {
    bytes.split(|&b| b == b'\n').enumerate().filter_map(|(i, raw)| {
        let line = i + 1;
        let raw = raw.split(|&b| b == b'#').next().unwrap_or_default();
        match std::str::from_utf8(raw) {
            Err(_) => Some((line, Err(MeshError::at_line(line, "not UTF-8 text")))),
            Ok(s) => {
                let tokens: Vec<&str> = s.split_ascii_whitespace().collect();
                (!tokens.is_empty()).then_some((line, Ok(tokens)))
            }
        }
    })
}

fn number<T: std::str::FromStr>(line: usize, tokens: &[&str], i: usize, what: &str) -> Result<T, MeshError> {
    let token = tokens.get(i).ok_or_else(|| MeshError::at_line(line, format!("missing {what}")))?;
    token.parse().map_err(|_| MeshError::at_line(line, format!("{what} {token:?} is not a valid number")))
}

/// Reads the header line and the claimed count, checked against the input
/// size and `limit`.
fn header<'a>(
    recs: &mut impl Iterator<Item = (usize, Result<Vec<&'a str>, MeshError>)>,
    input_len: usize,
    record_tokens: usize,
    what: &str,
    limit: usize,
) -> Result<(usize, usize, Vec<&'a str>), MeshError> {
    let (line, tokens) = recs.next().ok_or_else(|| MeshError::new("empty file: no header line"))?;
    let tokens = tokens?;
    let count: u64 = number(line, &tokens, 0, &format!("number of {what}"))?;
    let fits = usize::try_from(count).ok().filter(|&c| c <= limit && c <= input_len / min_record_bytes(record_tokens));
    let count = fits.ok_or_else(|| {
        MeshError::at_line(
            line,
            format!("header claims {count} {what}, more than the {input_len} bytes of input can hold (or above the limit of {limit})"),
        )
    })?;
    Ok((line, count, tokens))
}

/// The points of a `.node` file, in order, and the index of the first one
/// (0 or 1), which fixes the numbering of the `.ele` file.
pub(crate) fn parse_node(bytes: &[u8]) -> Result<(Vec<[f64; 3]>, u64), MeshError> {
    let mut recs = records(bytes);
    let (head_line, count, head) = header(&mut recs, bytes.len(), 4, "points", MAX_VERTICES)?;
    if let Some(dim) = head.get(1).filter(|&&d| d != "3") {
        return Err(MeshError::at_line(head_line, format!("dimension {dim}: only 3D meshes are supported")));
    }
    let mut points = Vec::with_capacity(count);
    let mut base = 0;
    for (line, tokens) in recs.by_ref().take(count) {
        let tokens = tokens?;
        let index: u64 = number(line, &tokens, 0, "point index")?;
        if points.is_empty() {
            if index > 1 {
                return Err(MeshError::at_line(line, format!("first point has index {index}: expected 0 or 1")));
            }
            base = index;
        }
        if index != base + points.len() as u64 {
            let expected = base + points.len() as u64;
            return Err(MeshError::at_line(line, format!("point index {index} out of sequence (expected {expected})")));
        }
        let p = [number(line, &tokens, 1, "x")?, number(line, &tokens, 2, "y")?, number(line, &tokens, 3, "z")?];
        let p = finite_point(p).map_err(|e| MeshError::at_line(line, format!("point {index}: {e}")))?;
        points.push(p);
    }
    if points.len() < count {
        return Err(MeshError::new(format!("truncated: header claims {count} points, found {}", points.len())));
    }
    Ok((points, base))
}

/// The tetrahedra of an `.ele` file, as 0-based indices into `n` points
/// numbered from `base`.
pub(crate) fn parse_ele(bytes: &[u8], n: usize, base: u64) -> Result<Vec<[u32; 4]>, MeshError> {
    let mut recs = records(bytes);
    let (head_line, count, head) = header(&mut recs, bytes.len(), 5, "tetrahedra", MAX_ELEMENTS)?;
    if let Some(per) = head.get(1).filter(|&&p| p != "4" && p != "10") {
        let problem = format!("{per} nodes per element: only 4 and 10 are supported");
        return Err(MeshError::at_line(head_line, problem));
    }
    let mut tets = Vec::with_capacity(count);
    for (line, tokens) in recs.by_ref().take(count) {
        let tokens = tokens?;
        let _: u64 = number(line, &tokens, 0, "element index")?;
        let mut raw = [0u64; 4];
        for (k, r) in raw.iter_mut().enumerate() {
            *r = number(line, &tokens, k + 1, "vertex index")?;
        }
        let mut tet = [0u32; 4];
        for (t, &r) in tet.iter_mut().zip(&raw) {
            *t = r.checked_sub(base).and_then(|i| u32::try_from(i).ok()).filter(|&i| (i as usize) < n).ok_or_else(
                || {
                    let problem = format!("vertex index {r} is out of range ({n} points numbered from {base})");
                    MeshError::at_line(line, problem)
                },
            )?;
        }
        tets.push(tet);
    }
    if tets.len() < count {
        return Err(MeshError::new(format!("truncated: header claims {count} tetrahedra, found {}", tets.len())));
    }
    Ok(tets)
}
