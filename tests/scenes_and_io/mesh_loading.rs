//! Mesh loading: round trips through every format, frames and volumes, and
//! refusal of malformed or hostile input (with the problem and its place).
#![cfg(feature = "mesh")]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use fmbgrid::mesh::{self, FrameReport, Location, Mesh, MeshError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------- the cube

/// Unit cube: vertex `x + 2y + 4z` at `(x, y, z)`.
fn cube_vertices() -> Vec<[f64; 3]> {
    (0..8).map(|i| [(i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64]).collect()
}

/// The cube's 12 faces, counter-clockwise seen from outside.
const CUBE_TRIANGLES: [[u32; 3]; 12] = [
    [0, 2, 3],
    [0, 3, 1],
    [4, 5, 7],
    [4, 7, 6],
    [0, 1, 5],
    [0, 5, 4],
    [2, 6, 7],
    [2, 7, 3],
    [0, 4, 6],
    [0, 6, 2],
    [1, 3, 7],
    [1, 7, 5],
];

/// The Kuhn split of the cube into 6 tetrahedra along the diagonal 0–7.
fn cube_tetrahedra() -> Vec<[u32; 4]> {
    let perms = [[1, 2, 4], [1, 4, 2], [2, 1, 4], [2, 4, 1], [4, 1, 2], [4, 2, 1]];
    perms.iter().map(|p| [0, p[0], p[0] + p[1], 7]).collect()
}

fn cube_surface() -> Mesh {
    Mesh { vertices: cube_vertices(), triangles: CUBE_TRIANGLES.to_vec(), tetrahedra: vec![] }
}

fn cube_volume() -> Mesh {
    Mesh { vertices: cube_vertices(), triangles: vec![], tetrahedra: cube_tetrahedra() }
}

/// Each triangle's corners, in order: comparable across formats that
/// renumber vertices.
fn triangle_corners(m: &Mesh) -> Vec<[[f64; 3]; 3]> {
    m.triangles.iter().map(|t| t.map(|i| m.vertices[i as usize])).collect()
}

// ---------------------------------------------------------------- writers

fn to_obj(m: &Mesh) -> String {
    let mut s = String::from("# cube\no cube\n");
    for v in &m.vertices {
        writeln!(s, "v {} {} {}", v[0], v[1], v[2]).unwrap();
    }
    for t in &m.triangles {
        writeln!(s, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1).unwrap();
    }
    s
}

fn to_stl_ascii(m: &Mesh) -> String {
    let mut s = String::from("solid cube\n");
    for t in triangle_corners(m) {
        s.push_str("  facet normal 0 0 0\n    outer loop\n");
        for v in t {
            writeln!(s, "      vertex {} {} {}", v[0], v[1], v[2]).unwrap();
        }
        s.push_str("    endloop\n  endfacet\n");
    }
    s.push_str("endsolid cube\n");
    s
}

fn to_stl_binary(m: &Mesh, header: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; 80];
    b[..header.len()].copy_from_slice(header);
    b.extend_from_slice(&(m.triangles.len() as u32).to_le_bytes());
    for t in triangle_corners(m) {
        b.extend_from_slice(&[0u8; 12]);
        for x in t.iter().flatten() {
            b.extend_from_slice(&(*x as f32).to_le_bytes());
        }
        b.extend_from_slice(&[0, 0]);
    }
    b
}

fn ply_header(format: &str, vertices: usize, faces: usize) -> String {
    format!(
        "ply\nformat {format} 1.0\ncomment cube\nelement vertex {vertices}\nproperty float x\nproperty float y\n\
         property float z\nelement face {faces}\nproperty list uchar int vertex_indices\nend_header\n"
    )
}

fn to_ply_ascii(m: &Mesh) -> String {
    let mut s = ply_header("ascii", m.vertices.len(), m.triangles.len());
    for v in &m.vertices {
        writeln!(s, "{} {} {}", v[0], v[1], v[2]).unwrap();
    }
    for t in &m.triangles {
        writeln!(s, "3 {} {} {}", t[0], t[1], t[2]).unwrap();
    }
    s
}

fn to_ply_binary(m: &Mesh) -> Vec<u8> {
    let mut b = ply_header("binary_little_endian", m.vertices.len(), m.triangles.len()).into_bytes();
    for x in m.vertices.iter().flatten() {
        b.extend_from_slice(&(*x as f32).to_le_bytes());
    }
    for t in &m.triangles {
        b.push(3);
        for i in t {
            b.extend_from_slice(&(*i as i32).to_le_bytes());
        }
    }
    b
}

fn to_tetgen(m: &Mesh, base: u32) -> (String, String) {
    let mut node = format!("# cube\n{} 3 0 0\n", m.vertices.len());
    for (i, v) in m.vertices.iter().enumerate() {
        writeln!(node, "{} {} {} {}", i as u32 + base, v[0], v[1], v[2]).unwrap();
    }
    let mut ele = format!("{} 4 0\n", m.tetrahedra.len());
    for (i, t) in m.tetrahedra.iter().enumerate() {
        let t = t.map(|k| k + base);
        writeln!(ele, "{} {} {} {} {}  # a comment", i as u32 + base, t[0], t[1], t[2], t[3]).unwrap();
    }
    (node, ele)
}

/// Gmsh 4.1 ASCII with both triangles and tetrahedra; node tags are
/// `tag(i)` for vertex `i`.
fn to_msh(m: &Mesh, tag: impl Fn(usize) -> usize) -> String {
    let n = m.vertices.len();
    let tags: Vec<usize> = (0..n).map(&tag).collect();
    let (min, max) = (tags.iter().min().unwrap(), tags.iter().max().unwrap());
    let mut s = format!("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 {n} {min} {max}\n3 1 0 {n}\n");
    for t in &tags {
        writeln!(s, "{t}").unwrap();
    }
    for v in &m.vertices {
        writeln!(s, "{} {} {}", v[0], v[1], v[2]).unwrap();
    }
    let (nt, nk) = (m.triangles.len(), m.tetrahedra.len());
    write!(s, "$EndNodes\n$Elements\n2 {} 1 {}\n2 1 2 {nt}\n", nt + nk, nt + nk).unwrap();
    for (e, t) in m.triangles.iter().enumerate() {
        writeln!(s, "{} {} {} {}", e + 1, tags[t[0] as usize], tags[t[1] as usize], tags[t[2] as usize]).unwrap();
    }
    writeln!(s, "3 1 4 {nk}").unwrap();
    for (e, t) in m.tetrahedra.iter().enumerate() {
        let t = t.map(|i| tags[i as usize]);
        writeln!(s, "{} {} {} {} {}", nt + e + 1, t[0], t[1], t[2], t[3]).unwrap();
    }
    s.push_str("$EndElements\n");
    s
}

/// Gmsh 4.1 binary (little endian, 8-byte `size_t`) with only tetrahedra;
/// node tags `i + 1`.
fn to_msh_binary(m: &Mesh) -> Vec<u8> {
    let size = |b: &mut Vec<u8>, v: usize| b.extend_from_slice(&(v as u64).to_le_bytes());
    let int = |b: &mut Vec<u8>, v: i32| b.extend_from_slice(&v.to_le_bytes());
    let mut b = b"$MeshFormat\n4.1 1 8\n".to_vec();
    int(&mut b, 1);
    b.extend_from_slice(b"\n$EndMeshFormat\n$Nodes\n");
    let n = m.vertices.len();
    for v in [1, n, 1, n] {
        size(&mut b, v);
    }
    for v in [3, 1, 0] {
        int(&mut b, v);
    }
    size(&mut b, n);
    for i in 0..n {
        size(&mut b, i + 1);
    }
    for x in m.vertices.iter().flatten() {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.extend_from_slice(b"\n$EndNodes\n$Elements\n");
    let k = m.tetrahedra.len();
    for v in [1, k, 1, k] {
        size(&mut b, v);
    }
    for v in [3, 1, 4] {
        int(&mut b, v);
    }
    size(&mut b, k);
    for (e, t) in m.tetrahedra.iter().enumerate() {
        size(&mut b, e + 1);
        for &i in t {
            size(&mut b, i as usize + 1);
        }
    }
    b.extend_from_slice(b"\n$EndElements\n");
    b
}

// ---------------------------------------------------------------- round trips

fn assert_same_surface(parsed: &Mesh, expected: &Mesh) {
    assert_eq!(parsed.triangles.len(), expected.triangles.len());
    assert_eq!(triangle_corners(parsed), triangle_corners(expected));
    assert!((parsed.enclosed_volume() - 1.0).abs() < 1e-12, "{}", parsed.enclosed_volume());
}

#[test]
fn obj_round_trip() {
    let cube = cube_surface();
    let parsed = mesh::parse_obj(to_obj(&cube).as_bytes()).unwrap();
    assert_eq!(parsed.vertices.len(), 8);
    assert_same_surface(&parsed, &cube);
    // Quads are split in two, groups concatenated, normals and texture
    // coordinates ignored.
    let quads =
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\ng a\nf 1/1/1 2/1/1 3/1/1 4/1/1\ng b\nf -4 -2 -1\n";
    let parsed = mesh::parse_obj(quads.as_bytes()).unwrap();
    assert_eq!(parsed.triangles.len(), 3);
    assert_eq!(parsed.vertices.len(), 4 + 3);
}

#[test]
fn stl_round_trips_ascii_binary_and_solid_headed_binary() {
    let cube = cube_surface();
    for bytes in
        [to_stl_ascii(&cube).into_bytes(), to_stl_binary(&cube, b"binary"), to_stl_binary(&cube, b"solid cube")]
    {
        let parsed = mesh::parse_stl(&bytes).unwrap();
        assert_eq!(parsed.vertices.len(), 8, "identical vertices are merged");
        assert_same_surface(&parsed, &cube);
    }
    let no_name = to_stl_ascii(&cube).replacen("solid cube", "solid", 1);
    assert_eq!(mesh::parse_stl(no_name.as_bytes()).unwrap().triangles.len(), 12);
}

#[test]
fn ply_round_trips_ascii_and_binary() {
    let cube = cube_surface();
    for bytes in [to_ply_ascii(&cube).into_bytes(), to_ply_binary(&cube)] {
        let parsed = mesh::parse_ply(&bytes).unwrap();
        assert_eq!(parsed, cube);
    }
    let quad = format!("{}0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n", ply_header("ascii", 4, 1));
    assert_eq!(mesh::parse_ply(quad.as_bytes()).unwrap().triangles, [[0, 1, 2], [0, 2, 3]]);
}

#[test]
fn tetgen_round_trips_from_0_and_1() {
    let cube = cube_volume();
    for base in [0, 1] {
        let (node, ele) = to_tetgen(&cube, base);
        let parsed = mesh::parse_tetgen(node.as_bytes(), ele.as_bytes()).unwrap();
        assert_eq!(parsed, cube);
        assert!((parsed.tetrahedra_volume() - 1.0).abs() < 1e-15);
    }
}

#[test]
fn msh_round_trips_with_dense_and_sparse_tags() {
    let cube = Mesh { triangles: CUBE_TRIANGLES.to_vec(), ..cube_volume() };
    for tag in [|i: usize| i + 1, |i: usize| 10 * i + 7] {
        let parsed = mesh::parse_msh(to_msh(&cube, tag).as_bytes()).unwrap();
        assert_eq!(parsed, cube);
        assert!((parsed.tetrahedra_volume() - parsed.enclosed_volume()).abs() < 1e-12);
    }
}

#[test]
fn msh_binary_round_trip_and_empty_sections() {
    let cube = cube_volume();
    let bytes = to_msh_binary(&cube);
    assert_eq!(mesh::parse_msh(&bytes).unwrap(), cube);
    // Zero nodes (the second size_t after "$Nodes\n") is refused up front.
    let at = bytes.windows(7).position(|w| w == b"$Nodes\n").unwrap() + 7 + 8;
    let mut empty = bytes.clone();
    empty[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    assert_err(mesh::parse_msh(&empty), &["$Nodes section declares no entries"]);
    let mut nan = bytes.clone();
    let first_x = bytes.windows(7).position(|w| w == b"$Nodes\n").unwrap() + 7 + 32 + 12 + 8 + 8 * 8;
    nan[first_x..first_x + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    assert_err(mesh::parse_msh(&nan), &["non-finite"]);
    assert_err(mesh::parse_msh(&bytes[..bytes.len() - 30]), &["invalid MSH"]);
}

#[test]
fn load_picks_the_parser_by_extension_and_names_the_file() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("load_by_extension");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cube = cube_surface();
    let files: [(&str, Vec<u8>); 3] = [
        ("cube.OBJ", to_obj(&cube).into_bytes()),
        ("cube.stl", to_stl_binary(&cube, b"")),
        ("cube.ply", to_ply_ascii(&cube).into_bytes()),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
        assert_eq!(mesh::load(dir.join(name)).unwrap().triangles.len(), 12, "{name}");
    }
    let (node, ele) = to_tetgen(&cube_volume(), 1);
    std::fs::write(dir.join("cube.node"), node).unwrap();
    std::fs::write(dir.join("cube.ele"), ele).unwrap();
    // Either file of the pair loads both, as the mesh written.
    assert_eq!(mesh::load(dir.join("cube.node")).unwrap(), cube_volume());
    assert_eq!(mesh::load(dir.join("cube.ele")).unwrap(), cube_volume());
    std::fs::write(dir.join("cube.msh"), to_msh(&cube_volume(), |i| i + 1)).unwrap();
    assert_eq!(mesh::load(dir.join("cube.msh")).unwrap().tetrahedra.len(), 6);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- frames

fn det(c: [[f64; 3]; 3]) -> f64 {
    c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) - c[0][1] * (c[1][0] * c[2][2] - c[1][2] * c[2][0])
        + c[0][2] * (c[1][0] * c[2][1] - c[1][1] * c[2][0])
}

#[test]
fn cube_split_into_six_tetrahedra_has_frame_volume_one() {
    let cube = cube_volume();
    let (frames, report) = cube.tetrahedron_frames();
    assert_eq!(report, FrameReport { frames: 6, degenerate: 0, invalid: 0 });
    let volume: f64 = frames.iter().map(|f| det(f.components()).abs() / 6.0).sum();
    assert!((volume - 1.0).abs() < 1e-15, "{volume}");
    assert_eq!(cube.frames(0.1).1, report, "tetrahedra win over the shell");
    let aabb = cube.aabb().unwrap();
    assert_eq!((aabb.min, aabb.max), ([0.0; 3], [1.0; 3]));
}

#[test]
fn shell_frames_one_per_non_degenerate_triangle() {
    let mut cube = cube_surface();
    let (frames, report) = cube.shell_frames(0.01);
    assert_eq!(report, FrameReport { frames: 12, degenerate: 0, invalid: 0 });
    // Each shell tetrahedron has volume area × thickness / 3, outside the cube.
    let volume: f64 = frames.iter().map(|f| det(f.components()).abs() / 6.0).sum();
    assert!((volume - 6.0 * 0.01 / 3.0).abs() < 1e-12, "{volume}");
    for f in &frames {
        let apex = f.vertices().nth(3).unwrap();
        assert!(apex.iter().any(|&x| !(0.0..=1.0).contains(&x)), "apex {apex:?} points outwards");
    }
    cube.triangles.extend([[0, 0, 1], [0, 1, 3 - 2], [0, 1, 8], [99, 0, 1]]);
    cube.vertices.push([2.0, 0.0, 0.0]); // vertex 8: colinear with 0 and 1
    let (frames, report) = cube.shell_frames(0.01);
    assert_eq!(report, FrameReport { frames: 12, degenerate: 3, invalid: 1 });
    assert_eq!(frames.len(), 12);
    for thickness in [0.0, f64::NAN, f64::INFINITY] {
        assert_eq!(cube_surface().shell_frames(thickness).1.degenerate, 12, "{thickness}");
    }
}

#[test]
fn degenerate_and_invalid_tetrahedra_are_counted_not_panicking() {
    let mut m = cube_volume();
    m.tetrahedra.extend([[0, 0, 1, 2], [0, 1, 2, 3], [0, 1, 7, 8], [u32::MAX, 0, 1, 2]]);
    m.vertices.push([f64::NAN, 0.0, 0.0]);
    let (frames, report) = m.tetrahedron_frames();
    assert_eq!(report, FrameReport { frames: 6, degenerate: 3, invalid: 1 });
    assert_eq!(frames.len(), 6);
    assert!(m.tetrahedra_volume().is_nan(), "a hand-made NaN vertex shows in the volume");
    assert_eq!(Mesh::default().frames(1.0), (vec![], FrameReport::default()));
    assert_eq!(Mesh::default().enclosed_volume(), 0.0);
}

#[test]
fn enclosed_volume_changes_sign_with_orientation() {
    let mut cube = cube_surface();
    for t in &mut cube.triangles {
        t.swap(1, 2);
    }
    assert!((cube.enclosed_volume() + 1.0).abs() < 1e-12);
}

// ---------------------------------------------------------------- malformed input

/// Asserts an error whose Display contains every `needle`.
#[track_caller]
fn assert_err(result: Result<Mesh, MeshError>, needles: &[&str]) -> MeshError {
    let err = result.expect_err("malformed input must be refused");
    let text = err.to_string();
    for needle in needles {
        assert!(text.contains(needle), "{text:?} should contain {needle:?}");
    }
    err
}

#[test]
fn malformed_obj() {
    assert_err(mesh::parse_obj(b"v 0 0 0\nv 1 0\n"), &["line 2", "needs 3 coordinates"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\nv 1 inf 0\n"), &["line 2", "non-finite"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n"), &["line 4", "face index 4 is out of range"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\nf 1 1 -2\n"), &["line 2", "out of range"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\nf 1 1 0\n"), &["line 2", "face index 0"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\nf 1/9223372036854775807 1 1\n"), &["line 2", "texture index"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\nf 1 1 99999999999999999999999\n"), &["line 2", "not an integer"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\nf 1 1\n"), &["line 2", "at least 3"]);
    assert_err(mesh::parse_obj(b"v 0 0 0\n\xff\xfe\x00garbage\n"), &["line 2", "UTF-8"]);
    assert_err(mesh::parse_obj(b"v 1 2 3 0\n"), &["line 1", "non-finite"]);
}

#[test]
fn malformed_stl() {
    let cube = to_stl_binary(&cube_surface(), b"");
    assert_err(mesh::parse_stl(&cube[..cube.len() - 10]), &["byte 80", "claims 12 triangles"]);
    let mut huge = cube.clone();
    huge[80..84].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_err(mesh::parse_stl(&huge), &["byte 80", "4294967295 triangles"]);
    assert_err(mesh::parse_stl(b"\x01\x02garbage"), &["not an STL file"]);
    let mut nan = cube.clone();
    nan[84 + 12..84 + 16].copy_from_slice(&f32::NAN.to_le_bytes());
    assert_err(mesh::parse_stl(&nan), &["triangle 0", "non-finite"]);
    let ascii = to_stl_ascii(&cube_surface());
    assert_err(mesh::parse_stl(&ascii.as_bytes()[..ascii.len() / 2]), &["invalid STL"]);
    assert_err(mesh::parse_stl(ascii.replacen("vertex 0 0 0", "vertex 0 nan 0", 1).as_bytes()), &["NaN"]);
}

#[test]
fn malformed_ply() {
    let cube = to_ply_ascii(&cube_surface());
    let e = assert_err(
        mesh::parse_ply(cube.replace("element vertex 8", "element vertex 1000000000000").as_bytes()),
        &["1000000000012 elements"],
    );
    assert!(e.problem.contains("bytes of input"));
    let truncated = &cube.as_bytes()[..cube.len() - 20];
    assert_err(mesh::parse_ply(truncated), &["invalid PLY"]);
    assert_err(mesh::parse_ply(cube.replacen("1 1 0\n", "1 NaN 0\n", 1).as_bytes()), &["line 14", "invalid PLY"]);
    // Header: 10 lines; vertex k on line 11 + k; face k on line 19 + k.
    assert_err(mesh::parse_ply(cube.replacen("1 1 0\n", "1 1e99 0\n", 1).as_bytes()), &["line 14", "non-finite"]);
    assert_err(mesh::parse_ply(cube.replacen("3 0 2 3", "3 0 2 8", 1).as_bytes()), &["line 19", "8 is out of range"]);
    assert_err(mesh::parse_ply(cube.replacen("3 0 2 3", "3 0 -2 3", 1).as_bytes()), &["line 19", "negative"]);
    assert_err(mesh::parse_ply(cube.replacen("3 0 2 3", "2 0 2", 1).as_bytes()), &["line 19", "at least 3"]);
    assert_err(mesh::parse_ply(cube.replacen("property float y\n", "", 1).as_bytes()), &["no numeric y"]);
    assert_err(mesh::parse_ply(cube.replacen("format ascii", "format cuneiform", 1).as_bytes()), &["line 2"]);
    let mut binary = to_ply_binary(&cube_surface());
    binary.truncate(binary.len() - 3);
    assert_err(mesh::parse_ply(&binary), &["invalid PLY"]);
}

#[test]
fn malformed_tetgen() {
    let (node, ele) = to_tetgen(&cube_volume(), 1);
    let parse = |n: &str, e: &str| mesh::parse_tetgen(n.as_bytes(), e.as_bytes());
    assert_err(
        parse(&node.replacen("8 3 0 0", "1000000000000 3 0 0", 1), &ele),
        &[".node:line 2", "header claims 1000000000000 points"],
    );
    assert_err(parse(&node, &ele.replacen("6 4 0", "1000000000000 4 0", 1)), &[".ele:line 1", "1000000000000"]);
    assert_err(parse(&node.replacen("8 3 0 0", "9 3 0 0", 1), &ele), &[".node", "truncated", "9 points"]);
    assert_err(parse(&node, &ele.replacen("6 4 0", "7 4 0", 1)), &[".ele", "truncated"]);
    assert_err(parse(&node.replacen("2 1 0 0", "2 1 nan 0", 1), &ele), &[".node:line 4", "point 2", "non-finite"]);
    assert_err(parse(&node.replacen("2 1 0 0", "2 1 0", 1), &ele), &[".node:line 4", "missing z"]);
    assert_err(parse(&node.replacen("3 0 1 0", "4 0 1 0", 1), &ele), &[".node:line 5", "out of sequence"]);
    assert_err(parse(&node.replacen("8 3 0 0", "8 2 0 0", 1), &ele), &[".node:line 2", "dimension 2"]);
    assert_err(parse(&node, &ele.replacen("1 1 2 4 8", "1 1 2 4 9", 1)), &[".ele:line 2", "vertex index 9"]);
    assert_err(parse(&node, &ele.replacen("1 1 2 4 8", "1 0 2 4 8", 1)), &[".ele:line 2", "vertex index 0"]);
    assert_err(parse(&node, &ele.replacen("6 4 0", "6 3 0", 1)), &[".ele:line 1", "3 nodes per element"]);
    assert_err(parse("", &ele), &[".node", "empty file"]);
    assert_err(mesh::parse_tetgen(b"\x00\xff\x13garbage\n", b""), &[".node:line 1", "UTF-8"]);
}

#[test]
fn malformed_msh() {
    let cube = to_msh(&cube_volume(), |i| i + 1);
    assert_err(mesh::parse_msh(&cube.as_bytes()[..cube.len() - 40]), &["byte ", "invalid MSH"]);
    assert_err(
        mesh::parse_msh(cube.replacen("\n1 8 1 8\n", "\n1 0 1 8\n", 1).as_bytes()),
        &["$Nodes section declares no entries"],
    );
    assert_err(mesh::parse_msh(cube.replacen("\n2 6 1 6\n", "\n2 0 1 6\n", 1).as_bytes()), &["$Elements section"]);
    assert_err(
        mesh::parse_msh(cube.replacen("\n3 1 4 6\n1 1 2 4 8", "\n3 1 4 6\n1 1 2 4 99", 1).as_bytes()),
        &["unknown node 99"],
    );
    let huge = cube.replacen("\n3 1 4 6\n", "\n3 1 4 1000000000000\n", 1);
    assert_err(mesh::parse_msh(huge.as_bytes()), &["invalid MSH"]);
    assert_err(mesh::parse_msh(b"\x00\x01\x02 binary garbage"), &["invalid MSH"]);
    // Sizes mshio would panic on are refused first.
    for format in ["4.1 1 7", "4.1 0 99999999999999999999999", "4.1\n1\n3"] {
        let bytes = format!("$MeshFormat\n{format}\n\x01\0\0\0\n$EndMeshFormat\n");
        assert_err(mesh::parse_msh(bytes.as_bytes()), &["byte 0", "unsupported data size"]);
    }
    // Gmsh 2.2 files are refused with the reason.
    assert_err(mesh::parse_msh(b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"), &["unsupported format version"]);
}

#[test]
fn fixture_files_are_refused_with_file_and_place() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mesh");
    let cases: [(&str, &[&str]); 10] = [
        ("huge_count.node", &["huge_count.node:line 2", "1000000000000 points"]),
        ("huge_count.ele", &["huge_count.node:line 2"]),
        ("missing_ele.node", &["missing_ele.ele", "cannot read"]),
        ("bad_index.ele", &["bad_index.ele:line 3", "vertex index 5 is out of range"]),
        ("nan.obj", &["nan.obj:line 3", "vertex 3 has a non-finite coordinate"]),
        ("out_of_range.ply", &["out_of_range.ply:line 13", "vertex index 3 is out of range"]),
        ("garbage.stl", &["garbage.stl: byte 80", "claims 2147483647 triangles"]),
        ("zero_nodes.msh", &["zero_nodes.msh: byte 35", "$Nodes section declares no entries"]),
        ("truncated.msh", &["truncated.msh: byte ", "invalid MSH"]),
        ("unknown.xyz", &["unknown.xyz", "unknown mesh extension"]),
    ];
    for (file, needles) in cases {
        let err = assert_err(mesh::load(dir.join(file)), needles);
        assert!(err.file.is_some(), "{file}");
    }
    assert_err(mesh::load(dir.join("garbage.ply")), &["garbage.ply: invalid PLY"]);
    let err = mesh::load(dir.join("bad_index.ele")).unwrap_err();
    assert_eq!(err.location, Some(Location::Line(3)));
}

// ---------------------------------------------------------------- robustness smoke test

/// Random mutations of valid files (bytes flipped, inserted, cut) must give
/// a mesh or an error, never a panic. The real fuzzing lives in `fuzz/`.
#[test]
fn mutated_inputs_never_panic() {
    let surface = cube_surface();
    let volume = Mesh { triangles: CUBE_TRIANGLES.to_vec(), ..cube_volume() };
    let (node, ele) = to_tetgen(&volume, 1);
    let seeds: [(&str, Vec<u8>); 8] = [
        ("obj", to_obj(&surface).into_bytes()),
        ("stl", to_stl_ascii(&surface).into_bytes()),
        ("stl", to_stl_binary(&surface, b"solid x")),
        ("ply", to_ply_ascii(&surface).into_bytes()),
        ("ply", to_ply_binary(&surface)),
        ("msh", to_msh(&volume, |i| 3 * i + 1).into_bytes()),
        ("msh", to_msh_binary(&volume)),
        ("tetgen", [node.as_bytes(), b"\0", ele.as_bytes()].concat()),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let noise = b"0123456789 -.#\n\0\xffeE+nainf/$";
    for (format, seed) in &seeds {
        for _ in 0..300 {
            let mut bytes = seed.clone();
            for _ in 0..rng.random_range(1..6) {
                let at = rng.random_range(0..bytes.len());
                match rng.random_range(0..4) {
                    0 => bytes[at] = noise[rng.random_range(0..noise.len())],
                    1 => bytes.insert(at, noise[rng.random_range(0..noise.len())]),
                    2 => bytes[at] = rng.random(),
                    _ => bytes.truncate(at.max(1)),
                }
            }
            let result = match *format {
                "obj" => mesh::parse_obj(&bytes),
                "stl" => mesh::parse_stl(&bytes),
                "ply" => mesh::parse_ply(&bytes),
                "msh" => mesh::parse_msh(&bytes),
                _ => {
                    let mut parts = bytes.splitn(2, |&b| b == 0);
                    mesh::parse_tetgen(parts.next().unwrap_or_default(), parts.next().unwrap_or_default())
                }
            };
            if let Ok(m) = result {
                // Whatever is accepted keeps the promises.
                assert!(m.vertices.iter().flatten().all(|x| x.is_finite()));
                let n = m.vertices.len() as u32;
                assert!(m.triangles.iter().flatten().chain(m.tetrahedra.iter().flatten()).all(|&i| i < n));
                let _ = m.frames(0.01);
            }
        }
    }
}

// ---------------------------------------------------------------- shipped assets

/// The boundary of a tetrahedral mesh (faces used once), oriented outwards.
fn boundary(m: &Mesh) -> Vec<[u32; 3]> {
    let mut faces: HashMap<[u32; 3], (usize, [u32; 3])> = HashMap::new();
    for t in &m.tetrahedra {
        let p = t.map(|i| m.vertices[i as usize]);
        let d = |a: [f64; 3]| [a[0] - p[0][0], a[1] - p[0][1], a[2] - p[0][2]];
        let positive = det([d(p[1]), d(p[2]), d(p[3])]) > 0.0;
        for f in [[t[1], t[2], t[3]], [t[0], t[3], t[2]], [t[0], t[1], t[3]], [t[0], t[2], t[1]]] {
            let f = if positive { f } else { [f[0], f[2], f[1]] };
            let mut key = f;
            key.sort_unstable();
            faces.entry(key).or_insert((0, f)).0 += 1;
        }
    }
    faces.into_values().filter(|(n, _)| *n == 1).map(|(_, f)| f).collect()
}

#[test]
fn boundary_helper_matches_on_the_cube() {
    let cube = cube_volume();
    let shell = Mesh { triangles: boundary(&cube), ..cube.clone() };
    assert_eq!(shell.triangles.len(), 12);
    assert!((shell.enclosed_volume() - cube.tetrahedra_volume()).abs() < 1e-15);
}

/// Expected (vertices, triangles, tetrahedra) of the shipped meshes, from
/// `assets/README.md`.
const ASSET_COUNTS: [(&str, usize, usize, usize); 13] = [
    ("bunny.obj", 1839, 3674, 0),
    ("bunny.stl", 1839, 3674, 0),
    ("bunny.ply", 1839, 3674, 0),
    ("bunny_6k.node", 2004, 0, 5902),
    ("bunny_6k.ele", 2004, 0, 5902),
    ("bunny_47k.node", 8305, 0, 47093),
    ("bunny_47k.ele", 8305, 0, 47093),
    ("cube.obj", 8, 12, 0),
    ("icosphere.obj", 162, 320, 0),
    ("icosphere.node", 178, 0, 480),
    ("icosphere.ele", 178, 0, 480),
    ("cube_tets.node", 8, 0, 5),
    ("cube_tets.ele", 8, 0, 5),
];

/// The bunny surface's volume (`assets/README.md`), which both bunny tet
/// meshes keep.
const BUNNY_VOLUME: f64 = 194.288372;

/// Loads every mesh in `assets/meshes/`: counts; every element makes a
/// frame; a tet mesh's volume equals the volume enclosed by its boundary
/// within 1e-9, and the bunny's that of the surface (within 1e-6: OBJ, STL and PLY store f32).
#[test]
fn shipped_assets_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/meshes");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let known = ["obj", "stl", "ply", "msh", "node", "ele"];
    let mut loaded = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
        if !known.contains(&ext.as_str()) {
            continue;
        }
        let m = mesh::load(&path).unwrap_or_else(|e| panic!("{e}"));
        loaded += 1;
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let counts = (m.vertices.len(), m.triangles.len(), m.tetrahedra.len());
        let Some(&(_, v, t, k)) = ASSET_COUNTS.iter().find(|c| c.0 == name) else {
            panic!("{name}: no counts listed in ASSET_COUNTS");
        };
        assert_eq!(counts, (v, t, k), "{name}");
        let size = m.aabb().map_or(1.0, |b| b.extent().into_iter().fold(0.0, f64::max));
        let (frames, report) = m.frames(1e-3 * size);
        assert_eq!(report, FrameReport { frames: frames.len(), degenerate: 0, invalid: 0 }, "{name}");
        if m.tetrahedra.is_empty() {
            assert_eq!(frames.len(), m.triangles.len(), "{name}");
            if name.starts_with("bunny") {
                let v = m.enclosed_volume();
                assert!((v - BUNNY_VOLUME).abs() <= 1e-6 * BUNNY_VOLUME, "{name}: {v}");
            }
        } else {
            assert_eq!(frames.len(), m.tetrahedra.len(), "{name}");
            let volume = m.tetrahedra_volume();
            let shell = Mesh { triangles: boundary(&m), ..m.clone() };
            let enclosed = shell.enclosed_volume();
            assert!((volume - enclosed).abs() <= 1e-9 * volume, "{name}: {volume} vs {enclosed}");
            if name.starts_with("bunny") {
                assert_eq!(shell.triangles.len(), 3674, "{name}: the boundary is the bunny surface");
                assert!((volume - BUNNY_VOLUME).abs() <= 1e-9 * BUNNY_VOLUME, "{name}: {volume}");
            } else if name.starts_with("icosphere") {
                let surface = mesh::load(dir.join("icosphere.obj")).unwrap().enclosed_volume();
                assert!((volume - surface).abs() <= 1e-9 * surface, "{name}: {volume} vs {surface}");
            } else {
                assert!((volume - 1.0).abs() < 1e-12, "{name}: {volume}");
            }
        }
        eprintln!("{name}: {counts:?} {report:?}");
    }
    assert!(loaded > 0, "{} holds no mesh", dir.display());
}

/// A closed surface with its TetGen tetrahedralisation beside it loads as
/// one solid; a missing or mismatched tetrahedralisation is refused, naming
/// the files.
#[test]
fn load_solid_takes_the_tetrahedralisation_beside_a_surface() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/meshes");
    let solid = mesh::load_solid(dir.join("icosphere.obj")).unwrap();
    assert_eq!((solid.vertices.len(), solid.triangles.len(), solid.tetrahedra.len()), (162 + 178, 320, 480));
    let (volume, enclosed) = (solid.tetrahedra_volume(), solid.enclosed_volume());
    assert!((volume - enclosed).abs() <= 1e-9 * enclosed, "{volume} vs {enclosed}");
    let (frames, report) = solid.frames(0.0);
    assert_eq!((frames.len(), report), (480, FrameReport { frames: 480, degenerate: 0, invalid: 0 }));
    // Every tetrahedron lies inside the sphere's box.
    let b = solid.aabb().unwrap();
    assert!(frames.iter().all(|f| (0..3).all(|k| f.aabb().min[k] >= b.min[k] && f.aabb().max[k] <= b.max[k])));

    let missing = mesh::load_solid(dir.join("cube.obj")).unwrap_err().to_string();
    assert!(missing.contains("cube.obj") && missing.contains("cube.ele"), "{missing}");

    // The sphere's tetrahedra beside the cube's surface: refused by volume.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("load_solid");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(dir.join("cube.obj"), tmp.join("cube.obj")).unwrap();
    std::fs::copy(dir.join("icosphere.node"), tmp.join("cube.node")).unwrap();
    std::fs::copy(dir.join("icosphere.ele"), tmp.join("cube.ele")).unwrap();
    let wrong = mesh::load_solid(tmp.join("cube.obj")).unwrap_err().to_string();
    assert!(wrong.contains("does not fill the surface"), "{wrong}");
    // An open surface (the cube without one triangle) is refused too.
    let text = std::fs::read_to_string(dir.join("cube.obj")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let last_face = lines.iter().rposition(|l| l.starts_with("f ")).unwrap();
    let open: Vec<&str> = lines.iter().enumerate().filter(|&(i, _)| i != last_face).map(|(_, l)| *l).collect();
    std::fs::write(tmp.join("cube.obj"), open.join("\n")).unwrap();
    std::fs::copy(dir.join("cube_tets.node"), tmp.join("cube.node")).unwrap();
    std::fs::copy(dir.join("cube_tets.ele"), tmp.join("cube.ele")).unwrap();
    let open = mesh::load_solid(tmp.join("cube.obj")).unwrap_err().to_string();
    assert!(open.contains("does not fill the surface"), "{open}");
    // ... and the closed cube with its own tetrahedra is accepted.
    std::fs::copy(dir.join("cube.obj"), tmp.join("cube.obj")).unwrap();
    assert_eq!(mesh::load_solid(tmp.join("cube.obj")).unwrap().tetrahedra.len(), 5);
    // The right tetrahedra, moved by 10 along x: same volume, refused by box.
    std::fs::copy(dir.join("icosphere.obj"), tmp.join("sphere.obj")).unwrap();
    std::fs::copy(dir.join("icosphere.ele"), tmp.join("sphere.ele")).unwrap();
    let node = std::fs::read_to_string(dir.join("icosphere.node")).unwrap();
    let moved: Vec<String> = node
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if i == 0 || f.len() < 4 || line.starts_with('#') {
                return line.to_string();
            }
            let x: f64 = f[1].parse().unwrap();
            format!("{} {} {} {}", f[0], x + 10.0, f[2], f[3])
        })
        .collect();
    std::fs::write(tmp.join("sphere.node"), moved.join("\n")).unwrap();
    let shifted = mesh::load_solid(tmp.join("sphere.obj")).unwrap_err().to_string();
    assert!(shifted.contains("does not fill the surface: its box"), "{shifted}");
    // A volume mesh is not a surface to fill.
    let volume = mesh::load_solid(dir.join("bunny_6k.ele")).unwrap_err().to_string();
    assert!(volume.contains("already has tetrahedra"), "{volume}");
}
