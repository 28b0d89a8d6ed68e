//! The shortest 2D use: a fixed floor, a falling square, one step.
//!
//! Run: `cargo run --example hello_2d`.

use fmbgrid::{Body, Frame2, World2, WorldConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World2::new(WorldConfig::default());
    world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0])?]))?;
    world.insert(Body::moving(vec![Frame2::from_aabb([4.0, 2.0], [5.0, 3.0])?]).with_velocity([0.0, -20.0]))?;
    for c in world.step(0.1)? {
        println!(
            "frames {:?} and {:?} meet from t = {:.3} to {:.3} of the step, inside {:?}..{:?}",
            c.a, c.b, c.time[0], c.time[1], c.aabb.min, c.aabb.max
        );
    }
    Ok(())
}
