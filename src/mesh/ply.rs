//! PLY (ASCII, binary little- or big-endian), through `ply-rs-bw`.

use std::io::{BufReader, Cursor};

use ply_rs_bw::parser::{Parser, Reader};
use ply_rs_bw::ply::{DefaultElement, Encoding, Header, Property};

use super::{MAX_ELEMENTS, MAX_VERTICES, Mesh, MeshError, finite_point, validated, vertex_index};

/// Parses a PLY file: the `x`, `y`, `z` properties of its `vertex` element
/// and the `vertex_indices` (or `vertex_index`) lists of its `face` element,
/// polygons triangulated as fans. Other elements and properties are ignored.
///
/// # Errors
/// [`MeshError`] with the line for ASCII files (the header, the parser's
/// errors, and bad vertices or faces) or for the parser's errors in binary
/// files; an element count the input is too short for; a missing
/// coordinate, a non-finite one, or a face index out of range.
///
/// ```
/// let ply = b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n\
/// element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
/// let mesh = fmbgrid::mesh::parse_ply(ply)?;
/// assert_eq!(mesh.triangles, [[0, 1, 2]]);
/// let bad = String::from_utf8_lossy(ply).replace("3 0 1 2", "3 0 1 7");
/// let err = fmbgrid::mesh::parse_ply(bad.as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "line 13: face 0: vertex index 7 is out of range (3 vertices)");
/// # Ok::<(), fmbgrid::mesh::MeshError>(())
/// ```
pub fn parse_ply(bytes: &[u8]) -> Result<Mesh, MeshError> {
    let parser = Parser::<DefaultElement>::new();
    let mut reader = Reader::new(BufReader::new(Cursor::new(bytes)));
    let header = parser.read_header(&mut reader).map_err(wrap)?;
    let header_lines = header_line_count(bytes);
    check_counts(&header, bytes.len())?;
    let payload = parser.read_payload(&mut reader, &header).map_err(wrap)?;
    // Line of the `k`-th item of element group `group` (ASCII files only):
    // one item per line, groups in header order.
    let ascii = header.encoding == Encoding::Ascii;
    let counts: Vec<usize> = header.elements.values().map(|e| e.count).collect();
    let line_of =
        |group: usize, k: usize| ascii.then(|| header_lines + counts.iter().take(group).sum::<usize>() + k + 1);
    let err = |group: usize, k: usize, problem: String| match line_of(group, k) {
        Some(line) => MeshError::at_line(line, problem),
        None => MeshError::new(problem),
    };

    let mut mesh = Mesh::default();
    if let Some((group, _, vertices)) = payload.get_full("vertex") {
        mesh.vertices.reserve(vertices.len());
        for (k, v) in vertices.iter().enumerate() {
            let coord = |name: &str| {
                v.get(name).and_then(scalar).ok_or_else(|| err(group, k, format!("vertex {k} has no numeric {name}")))
            };
            let p = finite_point([coord("x")?, coord("y")?, coord("z")?])
                .map_err(|e| err(group, k, format!("vertex {k}: {e}")))?;
            mesh.vertices.push(p);
        }
    }
    if let Some((group, _, faces)) = payload.get_full("face") {
        let n = mesh.vertices.len();
        for (k, f) in faces.iter().enumerate() {
            let list = f.get("vertex_indices").or_else(|| f.get("vertex_index"));
            let ids = list.and_then(index_list).ok_or_else(|| err(group, k, format!("face {k} has no index list")))?;
            if ids.len() < 3 {
                return Err(err(group, k, format!("face {k} has {} vertices, at least 3 are needed", ids.len())));
            }
            let ids: Vec<u32> = ids
                .into_iter()
                .map(|i| {
                    u64::try_from(i)
                        .map_err(|_| format!("vertex index {i} is negative"))
                        .and_then(|i| vertex_index(i, n))
                })
                .collect::<Result<_, _>>()
                .map_err(|e| err(group, k, format!("face {k}: {e}")))?;
            if mesh.triangles.len() + ids.len() - 2 > MAX_ELEMENTS {
                return Err(err(group, k, format!("more than {MAX_ELEMENTS} triangles")));
            }
            mesh.triangles.extend(ids.windows(2).skip(1).map(|w| [ids[0], w[0], w[1]]));
        }
    }
    validated(mesh)
}

fn wrap(e: ply_rs_bw::parser::ParseError) -> MeshError {
    // The crate's message repeats "Line N: " and spans lines: keep one line.
    let message = e.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
    match e.line() {
        Some(line) => {
            let bare = message.strip_prefix(&format!("Line {line}: ")).unwrap_or(&message);
            MeshError::at_line(line, format!("invalid PLY: {bare}"))
        }
        None => MeshError::new(format!("invalid PLY: {message}")),
    }
}

/// Number of lines up to and including `end_header`.
fn header_line_count(bytes: &[u8]) -> usize {
    let mut lines = 0;
    for line in bytes.split(|&b| b == b'\n') {
        lines += 1;
        if line.trim_ascii() == b"end_header" {
            break;
        }
    }
    lines
}

/// Refuses element counts the input cannot hold (every element takes at
/// least one byte in any encoding) or beyond the limits, before the payload
/// is read.
fn check_counts(header: &Header, len: usize) -> Result<(), MeshError> {
    let total = header.elements.values().try_fold(0usize, |sum, e| sum.checked_add(e.count));
    let problem = match total {
        Some(total) if total <= len => return check_limits(header),
        Some(total) => format!("header claims {total} elements, more than the {len} bytes of input can hold"),
        None => "header element counts overflow".to_string(),
    };
    Err(MeshError::new(problem))
}

fn check_limits(header: &Header) -> Result<(), MeshError> {
    let count = |name: &str| header.elements.get(name).map_or(0, |e| e.count);
    if count("vertex") > MAX_VERTICES || count("face") > MAX_ELEMENTS {
        return Err(MeshError::new(format!(
            "header claims {} vertices and {} faces (limits {MAX_VERTICES} and {MAX_ELEMENTS})",
            count("vertex"),
            count("face")
        )));
    }
    Ok(())
}

fn scalar(p: &Property) -> Option<f64> {
    Some(match *p {
        Property::Char(v) => v.into(),
        Property::UChar(v) => v.into(),
        Property::Short(v) => v.into(),
        Property::UShort(v) => v.into(),
        Property::Int(v) => v.into(),
        Property::UInt(v) => v.into(),
        Property::Float(v) => v.into(),
        Property::Double(v) => v,
        _ => return None,
    })
}

fn index_list(p: &Property) -> Option<Vec<i64>> {
    Some(match p {
        Property::ListChar(v) => v.iter().map(|&i| i.into()).collect(),
        Property::ListUChar(v) => v.iter().map(|&i| i.into()).collect(),
        Property::ListShort(v) => v.iter().map(|&i| i.into()).collect(),
        Property::ListUShort(v) => v.iter().map(|&i| i.into()).collect(),
        Property::ListInt(v) => v.iter().map(|&i| i.into()).collect(),
        Property::ListUInt(v) => v.iter().map(|&i| i.into()).collect(),
        _ => return None,
    })
}
