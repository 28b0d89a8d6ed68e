//! Arbitrary bytes to `fmbgrid::mesh::parse_ply`: it must return, never
//! panic or allocate without bound; what it accepts must make frames.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mesh) = fmbgrid::mesh::parse_ply(data) {
        let _ = mesh.frames(0.01);
        let _ = (mesh.tetrahedra_volume(), mesh.enclosed_volume(), mesh.aabb());
    }
});
