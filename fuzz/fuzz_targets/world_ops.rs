//! Fuzz target: hostile sequences of `World` calls, decoded from the
//! fuzzer's bytes and checked by the same driver as `tests/world/hostile.rs`
//! (`tests/support/world/hostile.rs`): no panic, refused calls change
//! nothing, every step equals the brute force.
//!
//! `cargo fuzz run world_ops` (see `fuzz/README.md`).
#![no_main]

// `support::world` takes its generator and vector helpers from its
// sibling `support::math`: both are included, side by side.
#[path = "../../tests/support/math.rs"]
#[allow(dead_code)]
mod math;
#[path = "../../tests/support/world/mod.rs"]
#[allow(dead_code, unused_imports)]
mod world_support;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use world_support::hostile::{FrameSpec, MAX_COPIES, Num, Op, PoseSpec, SPECIAL, Vec3, run};

fn num(u: &mut Unstructured) -> Result<Num> {
    Ok(match u.int_in_range(0..=15u8)? {
        0 => Num::Special(u.int_in_range(0..=(SPECIAL.len() - 1) as u8)?),
        1 => Num::Bits(u.arbitrary()?),
        _ => Num::Small(u.int_in_range(-48..=48i16)?),
    })
}

fn vec3(u: &mut Unstructured) -> Result<Vec3> {
    Ok([num(u)?, num(u)?, num(u)?])
}

fn frame(u: &mut Unstructured) -> Result<FrameSpec> {
    let simplex = u.arbitrary()?;
    let origin = vec3(u)?;
    let components = if u.ratio(1, 4)? {
        [vec3(u)?, vec3(u)?, vec3(u)?]
    } else {
        let mut c = [[Num::Small(0); 3]; 3];
        for (i, row) in c.iter_mut().enumerate() {
            row[i] = Num::Small(u.int_in_range(1..=48)?);
        }
        c
    };
    Ok(FrameSpec { simplex, origin, components })
}

fn pose(u: &mut Unstructured) -> Result<PoseSpec> {
    let linear = if u.ratio(1, 3)? {
        [vec3(u)?, vec3(u)?, vec3(u)?]
    } else {
        std::array::from_fn(|i| std::array::from_fn(|k| Num::Small(if i == k { 16 } else { 0 })))
    };
    Ok(PoseSpec { linear, translation: vec3(u)? })
}

fn op(u: &mut Unstructured) -> Result<Op> {
    Ok(match u.int_in_range(0..=9u8)? {
        0..=2 => {
            let n = u.int_in_range(0..=3usize)?;
            let frames = (0..n).map(|_| frame(u)).collect::<Result<_>>()?;
            let copies = if u.ratio(1, 8)? { u.int_in_range(2..=MAX_COPIES)? } else { 1 };
            let pose = if u.arbitrary()? { Some(pose(u)?) } else { None };
            Op::Insert { fixed: u.ratio(1, 3)?, frames, copies, pose, velocity: vec3(u)? }
        }
        3 => Op::Remove(u.int_in_range(0..=63)?),
        4 => Op::SetPose(u.int_in_range(0..=63)?, pose(u)?),
        5 => Op::SetVelocity(u.int_in_range(0..=63)?, vec3(u)?),
        6 | 7 => Op::Step(num(u)?),
        8 => Op::QueryAabb(vec3(u)?, vec3(u)?),
        _ => {
            if u.arbitrary()? {
                Op::QueryFrame(frame(u)?)
            } else {
                Op::Clear
            }
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(dim3) = u.arbitrary::<bool>() else { return };
    let Ok(refuse) = u.arbitrary::<bool>() else { return };
    let mut ops = Vec::new();
    while ops.len() < 48 {
        match op(&mut u) {
            Ok(o) => ops.push(o),
            Err(_) => break,
        }
    }
    let r = if dim3 { run::<3>(refuse, &ops) } else { run::<2>(refuse, &ops) };
    if let Err(e) = r {
        panic!("{e}");
    }
});
