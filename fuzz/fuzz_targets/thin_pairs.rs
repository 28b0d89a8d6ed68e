//! Two frames decoded from the bytes, one or both made thin (a component
//! scaled by down to 1e-12, or pushed within that share of the others'
//! plane), static or moving: whatever the constructors admit, FMB must
//! agree with the exact integer separating-axis oracle of the test suite
//! outside the band of 1e-9 of the pair's scale, in both argument orders,
//! and `overlaps`, `intersect` and `overlap_interval` must agree.
#![no_main]

use fmbgrid::{Frame, FrameKind, intersect, overlap_interval, overlaps};
use libfuzzer_sys::fuzz_target;

#[allow(dead_code)] // the fuzz target reads the verdicts only
#[path = "../../tests/support/exact_sat.rs"]
mod exact_sat;

/// Reads `f64`s from the bytes, eight at a time (zero past the end).
struct Numbers<'a>(&'a [u8]);

impl Numbers<'_> {
    fn next(&mut self) -> f64 {
        let (head, rest) = self.0.split_at(self.0.len().min(8));
        self.0 = rest;
        let mut word = [0u8; 8];
        word[..head.len()].copy_from_slice(head);
        let x = f64::from_le_bytes(word);
        // Keep the numbers finite and moderate; the constructors judge the rest.
        if x.is_finite() { x % 1e6 } else { 0.0 }
    }
}

fn frame<const D: usize>(n: &mut Numbers, kind_byte: u8, thin: f64, moving: bool) -> Option<Frame<D>> {
    let kind = if kind_byte & 1 == 0 { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
    let origin: [f64; D] = std::array::from_fn(|_| n.next());
    let mut comps: [[f64; D]; D] = std::array::from_fn(|_| std::array::from_fn(|_| n.next()));
    if kind_byte & 2 == 0 {
        comps[0] = comps[0].map(|x| x * thin);
    } else {
        // A flat sliver: component 0 pushed within `thin` of the others' plane.
        let base = comps[1];
        comps[0] = std::array::from_fn(|k| base[k] * 0.5 + comps[0][k] * thin);
    }
    let velocity: [f64; D] = std::array::from_fn(|_| if moving { n.next() } else { 0.0 });
    Frame::new(kind, origin, comps).ok()?.with_velocity(velocity).ok()
}


fn check<const D: usize>(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let thin = 10f64.powf(-12.0 * f64::from(data[2]) / 255.0);
    let moving = data[3] & 1 == 1;
    let mut n = Numbers(&data[4..]);
    let (Some(a), Some(b)) = (frame::<D>(&mut n, data[0], thin, moving), frame::<D>(&mut n, data[1], 1.0, moving))
    else {
        return;
    };
    let band = 1e-9 * exact_sat::pair_scale(&a, &b);
    let inner = exact_sat::interval(&a, &b, -band);
    let outer = exact_sat::interval(&a, &b, band);
    for (x, y) in [(&a, &b), (&b, &a)] {
        let hit = intersect(x, y);
        assert_eq!(overlaps(x, y), hit.is_some());
        assert_eq!(overlap_interval(x, y), hit.map(|h| h.time));
        assert!(!(inner.is_some() && hit.is_none()), "false negative: {x:?} {y:?}");
        assert!(!(outer.is_none() && hit.is_some()), "false positive: {x:?} {y:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    if data.first().is_some_and(|b| b & 4 == 0) {
        check::<2>(data);
    } else {
        check::<3>(data);
    }
});
