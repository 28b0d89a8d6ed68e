//! Gmsh `.msh` (format 4.1, ASCII or binary), through `mshio`.

use std::collections::HashMap;

use mshio::mshfile::ElementType;

use super::{MAX_VERTICES, Mesh, MeshError, finite_point, validated};

/// Parses a Gmsh mesh (format 4.1, ASCII or binary): all its nodes, and its
/// 3-node triangles (element type 2) and 4-node tetrahedra (type 4). Other
/// elements (points, lines, quadrangles, higher orders) are ignored.
///
/// # Errors
/// [`MeshError`] with the byte where `mshio` failed and its description;
/// an empty `$Nodes` or `$Elements` section; a non-finite coordinate; an
/// element naming a node that does not exist.
///
/// ```
/// let msh = b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n\
/// $Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n\
/// $Elements\n1 1 1 1\n3 1 4 1\n1 1 2 3 4\n$EndElements\n";
/// let mesh = fmbgrid::mesh::parse_msh(msh)?;
/// assert_eq!(mesh.tetrahedra, [[0, 1, 2, 3]]);
/// let err = fmbgrid::mesh::parse_msh(b"$MeshFormat\n9.9 0 8\n$EndMeshFormat\n").unwrap_err();
/// assert!(err.to_string().contains("unsupported format version"), "{err}");
/// # Ok::<(), fmbgrid::mesh::MeshError>(())
/// ```
pub fn parse_msh(bytes: &[u8]) -> Result<Mesh, MeshError> {
    check_data_size(bytes)?;
    check_sections_not_empty(bytes)?;
    let msh = mshio::parse_msh_bytes(bytes).map_err(|e| {
        let Some((rest, _)) = e.backtrace.first() else { return MeshError::new("invalid MSH file") };
        // `rest` is the unparsed tail of the input where parsing stopped.
        let at = bytes.len().saturating_sub(rest.len()) as u64;
        let what: Vec<String> =
            e.filter_msh_errors().map(|(_, kind)| kind.to_string().trim_end_matches('.').to_string()).collect();
        let what =
            if what.is_empty() { "the file ends early or a section is malformed".to_string() } else { what.join("; ") };
        MeshError::at_byte(at, format!("invalid MSH file: {what}"))
    })?;
    let mut mesh = Mesh::default();
    // Node tag → vertex index. Sparse tags come with their map; dense ones
    // (mshio drops them) run from `min_node_tag` in file order.
    let mut tags: HashMap<u64, u32> = HashMap::new();
    let mut dense_from = None;
    if let Some(nodes) = &msh.data.nodes {
        for block in &nodes.node_blocks {
            if mesh.vertices.len() + block.nodes.len() > MAX_VERTICES {
                return Err(MeshError::new(format!("more than {MAX_VERTICES} nodes")));
            }
            let offset = mesh.vertices.len() as u32;
            match &block.node_tags {
                Some(map) => tags.extend(map.iter().map(|(&t, &i)| (t, offset + i as u32))),
                None => dense_from = Some(nodes.min_node_tag),
            }
            for (k, n) in block.nodes.iter().enumerate() {
                let p = finite_point([n.x, n.y, n.z])
                    .map_err(|e| MeshError::new(format!("node {} of block {}: {e}", k, block.entity_tag)))?;
                mesh.vertices.push(p);
            }
        }
    }
    let n = mesh.vertices.len();
    let index = |tag: u64| match dense_from {
        Some(min) => tag.checked_sub(min).and_then(|i| u32::try_from(i).ok()).filter(|&i| (i as usize) < n),
        None => tags.get(&tag).copied(),
    };
    if let Some(elements) = &msh.data.elements {
        let nodes_of = |e: &mshio::mshfile::Element<u64>| -> Result<Vec<u32>, MeshError> {
            let unknown = |t: &u64| MeshError::new(format!("element {} names unknown node {t}", e.element_tag));
            e.nodes.iter().map(|t| index(*t).ok_or_else(|| unknown(t))).collect()
        };
        let kept =
            elements.element_blocks.iter().filter(|b| matches!(b.element_type, ElementType::Tri3 | ElementType::Tet4));
        for block in kept {
            for e in &block.elements {
                match nodes_of(e)?[..] {
                    [a, b, c] => mesh.triangles.push([a, b, c]),
                    [a, b, c, d] => mesh.tetrahedra.push([a, b, c, d]),
                    _ => return Err(MeshError::new(format!("element {} has a wrong node count", e.element_tag))),
                }
            }
        }
    }
    // The element cap: mshio holds the file's elements already, so checking
    // once at the end bounds nothing less.
    validated(mesh)
}

/// `mshio` 0.4 unwraps the parsed `size_t` size of the format line (a
/// number too large panics) and panics on a binary size other than 1, 2, 4,
/// 8 or 16: refuse anything but Gmsh's 4 and 8 first. The format line is
/// `version file-type size`, with any single whitespace between them.
fn check_data_size(bytes: &[u8]) -> Result<(), MeshError> {
    let Some(rest) = bytes.strip_prefix(b"$MeshFormat") else { return Ok(()) };
    let head = &rest[..rest.len().min(64)];
    let size = head.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty()).nth(2);
    if let Some(size) = size
        && size.iter().all(u8::is_ascii_digit)
        && size != b"4"
        && size != b"8"
    {
        let size = String::from_utf8_lossy(size);
        return Err(MeshError::at_byte(0, format!("$MeshFormat: unsupported data size {size} (expected 4 or 8)")));
    }
    Ok(())
}

/// `mshio` 0.4 computes `num_nodes - 1` (and `num_elements - 1`) unchecked,
/// which overflows, and panics in debug builds, when a `$Nodes` or
/// `$Elements` section declares zero entries: refuse those first.
fn check_sections_not_empty(bytes: &[u8]) -> Result<(), MeshError> {
    let binary = binary_layout(bytes);
    for marker in [&b"$Nodes"[..], b"$Elements"] {
        let mut from = 0;
        while let Some(pos) = find(&bytes[from..], marker).map(|p| p + from) {
            from = pos + marker.len();
            let rest = &bytes[from..];
            let body = match rest {
                [b'\n', body @ ..] | [b'\r', b'\n', body @ ..] => body,
                _ => continue,
            };
            let count = match binary {
                Some((size, little)) => body.get(size..2 * size).map(|b| read_uint(b, little)),
                None => ascii_second_number(body),
            };
            if count == Some(0) {
                let section = String::from_utf8_lossy(marker);
                return Err(MeshError::at_byte(pos as u64, format!("{section} section declares no entries")));
            }
        }
    }
    Ok(())
}

/// For a binary file, the size of its `size_t` and whether it is little
/// endian (from the `int` 1 after the format line); `None` for ASCII.
fn binary_layout(bytes: &[u8]) -> Option<(usize, bool)> {
    let start = find(bytes, b"$MeshFormat")?;
    let rest = &bytes[start..];
    let line_end = rest.iter().position(|&b| b == b'\n')?;
    let after = &rest[line_end + 1..];
    let format_end = after.iter().position(|&b| b == b'\n')?;
    let format = std::str::from_utf8(&after[..format_end]).ok()?;
    let mut words = format.split_ascii_whitespace().skip(1);
    let (file_type, size) = (words.next()?, words.next()?.parse::<usize>().ok()?);
    if file_type != "1" || !(size == 4 || size == 8) {
        return None;
    }
    let one = after.get(format_end + 1..format_end + 5)?;
    Some((size, one == 1i32.to_le_bytes()))
}

fn read_uint(b: &[u8], little: bool) -> u64 {
    let fold = |acc: u64, &x: &u8| (acc << 8) | u64::from(x);
    if little { b.iter().rev().fold(0, fold) } else { b.iter().fold(0, fold) }
}

fn ascii_second_number(body: &[u8]) -> Option<u64> {
    let text = body.get(..body.len().min(256))?;
    let text = String::from_utf8_lossy(text);
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
