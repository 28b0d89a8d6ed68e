//! STL, ASCII or binary, through `stl_io` (which merges bit-identical
//! vertices, so a closed STL surface comes back connected).

use std::borrow::Cow;

use super::{MAX_ELEMENTS, Mesh, MeshError, validated};

/// Size of a binary STL header (80 bytes of text, then the `u32` count).
const HEADER: usize = 84;
/// Size of one binary STL triangle record.
const RECORD: usize = 50;

/// Parses an STL file, ASCII or binary.
///
/// The format is told by the size: a file of exactly `84 + 50 n` bytes,
/// where `n` is its binary triangle count, is binary even if its header
/// starts with `solid` (as many exporters write); otherwise a file starting
/// with `solid ` is ASCII, and anything else binary. The facet normals are
/// ignored.
///
/// # Errors
/// [`MeshError`]: for binary files, a triangle count the file is too short
/// for (at byte 80); for ASCII files, the parser's message (`stl_io` gives
/// no line); a non-finite coordinate, with the triangle.
///
/// ```
/// let stl = b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
/// let mesh = fmbgrid::mesh::parse_stl(stl)?;
/// assert_eq!((mesh.vertices.len(), mesh.triangles.len()), (3, 1));
/// let mut binary = vec![0u8; 84];
/// binary[80..84].copy_from_slice(&1_000_000_000u32.to_le_bytes());
/// let err = fmbgrid::mesh::parse_stl(&binary).unwrap_err();
/// assert!(err.to_string().starts_with("byte 80: binary STL claims 1000000000 triangles"));
/// # Ok::<(), fmbgrid::mesh::MeshError>(())
/// ```
pub fn parse_stl(bytes: &[u8]) -> Result<Mesh, MeshError> {
    let input = binary_or_ascii(bytes)?;
    if input.starts_with(b"solid ") {
        // `stl_io` reports ASCII errors without a line: find it first.
        check_ascii(&input)?;
    }
    let indexed = stl_io::read_stl(&mut std::io::Cursor::new(input.as_ref()))
        .map_err(|e| MeshError::new(format!("invalid STL: {e}")))?;
    let vertices = indexed.vertices.iter().map(|v| v.0.map(f64::from)).collect();
    let mut triangles = Vec::with_capacity(indexed.faces.len());
    for (t, face) in indexed.faces.iter().enumerate() {
        // stl_io's indices are into its own vertex list, below 3 × the number
        // of triangles, which the size checks keep far below u32::MAX.
        let v = face.vertices.map(|i| u32::try_from(i).unwrap_or(u32::MAX));
        triangles.push(v);
        if !face.vertices.iter().all(|&i| indexed.vertices.get(i).is_some_and(|p| p.0.iter().all(|x| x.is_finite()))) {
            return Err(MeshError::new(format!("triangle {t} has a non-finite vertex coordinate")));
        }
    }
    validated(Mesh { vertices, triangles, tetrahedra: Vec::new() })
}

/// Decides the format and returns the bytes for `stl_io`: a binary file
/// whose header starts with `solid ` gets that word blanked in a copy, so
/// that `stl_io`, which decides on the first word alone, reads it as binary.
fn binary_or_ascii(bytes: &[u8]) -> Result<Cow<'_, [u8]>, MeshError> {
    // `stl_io` wants "solid" followed by a space; "solid" alone on its line
    // is common too.
    if bytes.starts_with(b"solid\n") || bytes.starts_with(b"solid\r\n") {
        let mut copy = b"solid ".to_vec();
        copy.extend_from_slice(&bytes[5..]);
        return Ok(Cow::Owned(copy));
    }
    let ascii_start = bytes.starts_with(b"solid ");
    let claimed = bytes.get(80..HEADER).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize);
    let needed = claimed.map(|n| HEADER as u64 + RECORD as u64 * n as u64);
    if ascii_start {
        if needed == Some(bytes.len() as u64) {
            let mut copy = bytes.to_vec();
            copy[..5].copy_from_slice(b"SOLID");
            return Ok(Cow::Owned(copy));
        }
        return Ok(Cow::Borrowed(bytes));
    }
    let (Some(n), Some(needed)) = (claimed, needed) else {
        return Err(MeshError::new(format!(
            "not an STL file: {} bytes, too short for a binary header, and no \"solid \" start",
            bytes.len()
        )));
    };
    if needed > bytes.len() as u64 || n > MAX_ELEMENTS {
        let problem = format!(
            "binary STL claims {n} triangles, needing {needed} bytes, but the file has {} (limit {MAX_ELEMENTS} triangles)",
            bytes.len()
        );
        return Err(MeshError::at_byte(80, problem));
    }
    Ok(Cow::Borrowed(bytes))
}

/// Checks an ASCII STL line by line, so that an error names its line:
/// known keywords only, three numbers after `vertex` and `facet normal`,
/// three vertices per `outer loop`.
fn check_ascii(bytes: &[u8]) -> Result<(), MeshError> {
    let mut in_loop: Option<usize> = None; // vertices so far in the loop
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let err = |problem: String| MeshError::at_line(i + 1, problem);
        let text = std::str::from_utf8(raw).map_err(|_| err("not UTF-8 text".into()))?;
        let words: Vec<&str> = text.split_whitespace().collect();
        let numbers = |what: &str, w: &[&str]| -> Result<(), MeshError> {
            if w.len() != 3 {
                return Err(err(format!("{what} needs 3 numbers, found {}", w.len())));
            }
            match w.iter().find(|x| x.parse::<f32>().is_err()) {
                Some(x) => Err(err(format!("{what}: {x:?} is not a number"))),
                None => Ok(()),
            }
        };
        match words.as_slice() {
            [] | ["solid", ..] | ["endsolid", ..] | ["endfacet"] => {}
            ["facet", "normal", rest @ ..] => numbers("facet normal", rest)?,
            ["outer", "loop"] => in_loop = Some(0),
            ["vertex", rest @ ..] => {
                numbers("vertex", rest)?;
                match &mut in_loop {
                    Some(n) if *n < 3 => *n += 1,
                    Some(_) => return Err(err("a facet's loop has more than 3 vertices".into())),
                    None => return Err(err("`vertex` outside an `outer loop`".into())),
                }
            }
            ["endloop"] => {
                if in_loop != Some(3) {
                    return Err(err(format!("a facet's loop has {} vertices, 3 are needed", in_loop.unwrap_or(0))));
                }
                in_loop = None;
            }
            [word, ..] => {
                let word: String = word.chars().take(24).collect();
                return Err(err(format!("`{word}` is not an ASCII STL keyword")));
            }
        }
    }
    Ok(())
}
