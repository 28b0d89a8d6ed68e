//! Arbitrary bytes to `fmbgrid::mesh::parse_tetgen`, split at the first NUL
//! byte into the `.node` and `.ele` texts: it must return, never panic or
//! allocate without bound; what it accepts must make frames.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (node, ele) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    if let Ok(mesh) = fmbgrid::mesh::parse_tetgen(node, ele) {
        let _ = mesh.frames(0.01);
        let _ = (mesh.tetrahedra_volume(), mesh.aabb());
    }
});
