//! A simulation loop: balls of boxes bounce between two walls; each step
//! prints the body pairs that started or stopped touching. The contacts
//! come through `World::step_into`, into a buffer of the loop's own, so the
//! loop changes velocities while it reads them (no copy, and no
//! allocation once the buffers have grown).
//!
//! Run: `cargo run --example simulation_loop`.

use fmbgrid::{Body, ContactEvent, Frame2, Pose2, World2, WorldConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World2::new(WorldConfig::default());
    let left = world.insert(Body::fixed(vec![Frame2::from_aabb([-1.0, 0.0], [0.0, 10.0])?]))?;
    let right = world.insert(Body::fixed(vec![Frame2::from_aabb([20.0, 0.0], [21.0, 10.0])?]))?;
    let square = Frame2::from_aabb([-0.5, -0.5], [0.5, 0.5])?;
    let mut movers = Vec::new();
    for i in 0..4 {
        let y = 1.0 + 2.0 * f64::from(i);
        let speed = 4.0 + f64::from(i);
        let h = world.insert(
            Body::moving(vec![square])
                .with_pose(Pose2::from_angle(0.2 * f64::from(i), [10.0, y])?)
                .with_velocity([speed, 0.0]),
        )?;
        movers.push(h);
    }
    let name = |h| match h {
        h if h == left => "left wall".to_string(),
        h if h == right => "right wall".to_string(),
        h => format!("square {}", movers.iter().position(|m| *m == h).unwrap_or(usize::MAX)),
    };
    let dt = 1.0 / 30.0;
    let mut contacts = Vec::new();
    for step in 1..=240 {
        world.step_into(dt, &mut contacts)?;
        for event in world.events() {
            match *event {
                ContactEvent::Started(a, b) => println!("step {step:3}: {} touches {}", name(a), name(b)),
                ContactEvent::Ended(a, b) => println!("step {step:3}: {} leaves {}", name(a), name(b)),
            }
        }
        // Bounce: reverse the squares that touch a wall during this step.
        for c in &contacts {
            let (a, b) = (c.a.body, c.b.body);
            let (wall, mover) = if a == left || a == right { (a, b) } else { (b, a) };
            if wall != left && wall != right {
                continue; // two squares: they pass through each other
            }
            let v = world.body(mover)?.velocity();
            let away = if wall == left { v[0].abs() } else { -v[0].abs() };
            world.set_velocity(mover, [away, v[1]])?;
        }
    }
    Ok(())
}
