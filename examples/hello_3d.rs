//! The shortest 3D use: a box and a tetrahedron crossing, their exact
//! intersection box.
//!
//! Run: `cargo run --example hello_3d`.

use fmbgrid::{Body, Frame3, Pose3, World3, WorldConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let mut world = World3::new(WorldConfig::default());
    world.insert(Body::fixed(vec![Frame3::cuboid([0.0; 3], unit)?]))?;
    let tet = Body::moving(vec![Frame3::tetrahedron([0.0; 3], unit)?])
        .with_pose(Pose3::from_axis_angle([0.0, 0.0, 1.0], 0.3, [2.0, 0.2, 0.2])?)
        .with_velocity([-3.0, 0.0, 0.0]);
    world.insert(tet)?;
    let contacts = world.step(1.0)?;
    println!("{} contact(s)", contacts.len());
    for c in contacts {
        println!("t in [{:.3}, {:.3}], box {:?} .. {:?}", c.time[0], c.time[1], c.aabb.min, c.aabb.max);
    }
    Ok(())
}
