//! Reference answers of the Rust API, for the Python tests' bit-for-bit
//! comparisons (`python/tests/test_reference.py`): seeded random frames and
//! a seeded world, their inputs and the Rust crate's answers, as JSON
//! (every number written so that it reads back bit for bit; `null` for
//! "no answer"). This calls the crate directly, none of the bindings'
//! code; it ships in the module (`fmbgrid._fmbgrid._reference_answers`)
//! so that the tests compare with the very build they test, without
//! compiling anything else.

use fmbgrid::query::{distance, first_contact, penetration, ray_cast};
use fmbgrid::scene::SplitMix64;
use fmbgrid::{
    Aabb, Body, ContactDetail, ContactEvent, DebugKind, Frame, FrameKind, Pose, World, WorldConfig, intersect,
    overlap_interval, overlaps,
};
use serde_json::{Value, json};

fn vector<const D: usize>(rng: &mut SplitMix64, lo: f64, hi: f64) -> [f64; D] {
    std::array::from_fn(|_| rng.range(lo, hi))
}

/// A random valid frame near the origin, moving or not.
fn frame<const D: usize>(rng: &mut SplitMix64, spread: f64, moving: bool) -> Frame<D> {
    loop {
        let kind = if rng.next_f64() < 0.5 { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
        let origin = vector::<D>(rng, 0.0, spread);
        let comps: [[f64; D]; D] = std::array::from_fn(|_| vector::<D>(rng, -1.5, 1.5));
        let Ok(f) = Frame::new(kind, origin, comps) else { continue };
        if !moving {
            return f;
        }
        if let Ok(f) = f.with_velocity(vector::<D>(rng, -1.5, 1.5)) {
            return f;
        }
    }
}

fn frames_json<const D: usize>(f: &[Frame<D>]) -> Value {
    json!({
        "origins": f.iter().map(|f| f.origin().to_vec()).collect::<Vec<_>>(),
        "components": f.iter().map(|f| f.components().iter().map(|c| c.to_vec()).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "kinds": f.iter().map(|f| u8::from(f.kind() == FrameKind::Cuboid)).collect::<Vec<_>>(),
        "velocities": f.iter().map(|f| f.velocity().to_vec()).collect::<Vec<_>>(),
    })
}

fn narrow<const D: usize>(seed: u64, n: usize) -> Value {
    let mut rng = SplitMix64::new(seed);
    let a: Vec<Frame<D>> = (0..n).map(|i| frame(&mut rng, 2.0, i % 2 == 0)).collect();
    let b: Vec<Frame<D>> = (0..n).map(|i| frame(&mut rng, 2.0, i % 3 == 0)).collect();
    let pairs = a.iter().zip(&b);
    let rays: Vec<([f64; D], [f64; D])> =
        (0..n).map(|_| (vector(&mut rng, -3.0, 5.0), vector(&mut rng, -1.0, 1.0))).collect();
    json!({
        "a": frames_json(&a),
        "b": frames_json(&b),
        "overlaps": pairs.clone().map(|(x, y)| overlaps(x, y)).collect::<Vec<_>>(),
        "intersect": pairs.clone().map(|(x, y)| intersect(x, y).map(|h| {
            json!({"box": [h.aabb.min.to_vec(), h.aabb.max.to_vec()], "time": h.time.to_vec()})
        })).collect::<Vec<_>>(),
        "overlap_interval": pairs.clone().map(|(x, y)| overlap_interval(x, y).map(|t| t.to_vec())).collect::<Vec<_>>(),
        "distance": pairs.clone().map(|(x, y)| {
            let d = distance(x, y);
            json!({"distance": d.distance, "on_a": d.on_a.to_vec(), "on_b": d.on_b.to_vec()})
        }).collect::<Vec<_>>(),
        "penetration": pairs.clone().map(|(x, y)| penetration(x, y).map(|p| json!({"depth": p.depth, "normal": p.normal.to_vec()}))).collect::<Vec<_>>(),
        "first_contact": pairs.clone().map(|(x, y)| first_contact(x, y).map(|c| {
            json!({"time": c.time, "normal": c.normal.to_vec(), "point": c.point.to_vec(), "depth": c.depth})
        })).collect::<Vec<_>>(),
        "ray_origins": rays.iter().map(|r| r.0.to_vec()).collect::<Vec<_>>(),
        "ray_directions": rays.iter().map(|r| r.1.to_vec()).collect::<Vec<_>>(),
        "ray_cast": a.iter().zip(&rays).map(|(f, r)| {
            // Rays are against frame a[i] at rest: the Python side does the same.
            let rest = Frame::new(f.kind(), f.origin(), f.components()).expect("valid");
            ray_cast(&rest, r.0, r.1, 10.0).expect("valid ray").map(|h| json!({"time": h.time, "normal": h.normal.to_vec()}))
        }).collect::<Vec<_>>(),
    })
}

fn pair(w: &World<3>, ids: &[fmbgrid::BodyHandle], a: fmbgrid::BodyHandle, b: fmbgrid::BodyHandle) -> Value {
    let _ = w;
    let pos = |h| ids.iter().position(|&x| x == h).expect("known body");
    json!([pos(a), pos(b)])
}

/// A world of `n` random bodies (some of two frames, some fixed, some
/// rotated), stepped `steps` times; bodies named by insertion order. Its
/// queries before the steps; after them, the last step's contact geometry
/// and debug lines, then a step after re-posing some bodies with
/// `World::set_poses`; and the first step of the same world with interval
/// contacts, with exact boxes asked for every other contact.
fn world(seed: u64, n: usize, steps: usize) -> Value {
    let mut rng = SplitMix64::new(seed);
    let mut w = World::<3>::new(WorldConfig::default());
    let mut coarse = World::<3>::new(WorldConfig::default().with_contact_detail(ContactDetail::Interval));
    let mut bodies = Vec::new();
    let mut ids = Vec::new();
    let (mut frames, mut body_of) = (Vec::new(), Vec::new());
    for k in 0..n {
        let count = if k % 5 == 0 { 2 } else { 1 };
        let list: Vec<Frame<3>> = (0..count).map(|_| frame(&mut rng, 1.0, false)).collect();
        let moving = k % 4 != 0;
        let translation = vector::<3>(&mut rng, 0.0, 9.0);
        let pose = if k % 3 == 0 {
            Pose::from_axis_angle(vector(&mut rng, -1.0, 1.0), rng.range(0.0, 3.0), translation).expect("pose")
        } else {
            Pose::from_translation(translation).expect("pose")
        };
        let velocity = if moving { vector::<3>(&mut rng, -4.0, 4.0) } else { [0.0; 3] };
        let body = if moving { Body::moving(list.clone()).with_velocity(velocity) } else { Body::fixed(list.clone()) };
        let body = body.with_pose(pose).with_user_data(k as u64);
        coarse.insert(body.clone()).expect("insert");
        let h = w.insert(body).expect("insert");
        ids.push(h);
        for f in &list {
            frames.push(*f);
            body_of.push(k);
        }
        bodies.push(json!({
            "moving": moving,
            "velocity": velocity.to_vec(),
            "translation": pose.translation().to_vec(),
            "rotation": pose.linear().iter().map(|c| c.to_vec()).collect::<Vec<_>>(),
        }));
    }
    let within = w.pairs_within(0.25).expect("pairs_within").to_vec();
    let within: Vec<Value> = within
        .iter()
        .map(|p| {
            json!({"pair": pair(&w, &ids, p.a.body, p.b.body), "frames": [p.a.index, p.b.index],
                   "distance": p.distance, "on_a": p.on_a.to_vec(), "on_b": p.on_b.to_vec()})
        })
        .collect();
    let mut rays = Vec::new();
    for _ in 0..50 {
        let (o, d) = (vector::<3>(&mut rng, -2.0, 11.0), vector::<3>(&mut rng, -1.0, 1.0));
        let hit = w.cast_ray(o, d, 20.0).expect("ray");
        rays.push(json!({"origin": o.to_vec(), "direction": d.to_vec(), "hit": hit.map(|(id, h)| {
            json!({"body": ids.iter().position(|&x| x == id.body), "frame": id.index, "time": h.time, "normal": h.normal.to_vec()})
        })}));
    }
    let id = |f: fmbgrid::FrameId| json!([ids.iter().position(|&x| x == f.body), f.index]);
    let rays_all: Vec<Value> = rays
        .iter()
        .map(|r| {
            let o: [f64; 3] = serde_json::from_value(r["origin"].clone()).expect("origin");
            let d: [f64; 3] = serde_json::from_value(r["direction"].clone()).expect("direction");
            let hits = w.cast_ray_all(o, d, 20.0).expect("ray");
            json!(
                hits.iter()
                    .map(|(f, h)| json!({"id": id(*f), "time": h.time, "normal": h.normal.to_vec()}))
                    .collect::<Vec<_>>()
            )
        })
        .collect();
    let boxes: Vec<(Aabb<3>, Vec<Value>)> = (0..40)
        .map(|_| {
            let lo = vector::<3>(&mut rng, -1.0, 10.0);
            let size = vector::<3>(&mut rng, -0.5, 2.5);
            let aabb = Aabb { min: lo, max: std::array::from_fn(|k| lo[k] + size[k]) };
            (aabb, w.query_aabb(&aabb).into_iter().map(id).collect())
        })
        .collect();
    let points: Vec<([f64; 3], Vec<Value>)> = (0..60)
        .map(|_| {
            let p = vector::<3>(&mut rng, 0.0, 10.0);
            (p, w.query_point(p).expect("point").into_iter().map(id).collect())
        })
        .collect();
    let probes: Vec<Frame<3>> = (0..30).map(|i| frame(&mut rng, 10.0, i % 2 == 0)).collect();
    let probe_hits: Vec<Value> = probes
        .iter()
        .map(|f| {
            json!(w.query_frame(f).iter().map(|(x, h)| json!({"id": id(*x), "box": [h.aabb.min.to_vec(), h.aabb.max.to_vec()], "time": h.time.to_vec()})).collect::<Vec<_>>())
        })
        .collect();
    let queries = json!({
        "rays_all": rays_all,
        "aabb_mins": boxes.iter().map(|b| b.0.min.to_vec()).collect::<Vec<_>>(),
        "aabb_maxs": boxes.iter().map(|b| b.0.max.to_vec()).collect::<Vec<_>>(),
        "aabb_hits": boxes.iter().map(|b| json!(b.1)).collect::<Vec<_>>(),
        "points": points.iter().map(|p| p.0.to_vec()).collect::<Vec<_>>(),
        "point_hits": points.iter().map(|p| json!(p.1)).collect::<Vec<_>>(),
        "probes": frames_json(&probes),
        "probe_hits": probe_hits,
    });
    let coarse_contacts = coarse.step(0.1).expect("step").to_vec();
    let exact =
        coarse.exact_boxes(|c| coarse_contacts.iter().position(|x| x == c).is_some_and(|i| i % 2 == 0)).expect("exact");
    let coarse_json = json!({
        "intervals": coarse_contacts.iter().map(|c| c.time.to_vec()).collect::<Vec<_>>(),
        "boxes": coarse_contacts.iter().map(|c| json!([c.aabb.min.to_vec(), c.aabb.max.to_vec()])).collect::<Vec<_>>(),
        "exact_boxes": exact.iter().map(|c| json!([c.aabb.min.to_vec(), c.aabb.max.to_vec()])).collect::<Vec<_>>(),
    });
    let mut out_steps = Vec::new();
    for s in 0..steps {
        let dt = 0.1;
        let contacts = w.step(dt).expect("step").to_vec();
        let events: Vec<Value> = w
            .events()
            .iter()
            .map(|e| match *e {
                ContactEvent::Started(a, b) => json!(["started", pair(&w, &ids, a, b)]),
                ContactEvent::Ended(a, b) => json!(["ended", pair(&w, &ids, a, b)]),
            })
            .collect();
        out_steps.push(json!({
            "step": s,
            "dt": dt,
            "pairs": contacts.iter().map(|c| pair(&w, &ids, c.a.body, c.b.body)).collect::<Vec<_>>(),
            "frames": contacts.iter().map(|c| json!([c.a.index, c.b.index])).collect::<Vec<_>>(),
            "boxes": contacts.iter().map(|c| json!([c.aabb.min.to_vec(), c.aabb.max.to_vec()])).collect::<Vec<_>>(),
            "intervals": contacts.iter().map(|c| c.time.to_vec()).collect::<Vec<_>>(),
            "events": events,
        }));
    }
    let geometry: Vec<Option<Value>> = w
        .contacts()
        .iter()
        .map(|c| {
            w.contact_geometry(c).expect("geometry").map(
                |g| json!({"time": g.time, "normal": g.normal.to_vec(), "point": g.point.to_vec(), "depth": g.depth}),
            )
        })
        .collect();
    let mut lines = Vec::new();
    w.debug_draw(w.contacts(), 0.1, |l| {
        let kind = DebugKind::ALL.iter().position(|&k| k == l.kind);
        lines.push(json!([l.from.to_vec(), l.to.to_vec(), kind]));
    })
    .expect("debug_draw");
    let translations: Vec<Value> =
        ids.iter().map(|&h| json!(w.body(h).expect("live").pose().translation().to_vec())).collect();
    // Every seventh body re-posed (fixed ones too), one of them twice.
    let mut poses = Vec::new();
    for k in (0..n).step_by(7).chain([7]) {
        let t = vector::<3>(&mut rng, 0.0, 9.0);
        let p = Pose::from_axis_angle(vector(&mut rng, -1.0, 1.0), rng.range(0.0, 3.0), t).expect("pose");
        poses.push((k, p));
    }
    w.set_poses(&poses.iter().map(|&(k, p)| (ids[k], p)).collect::<Vec<_>>()).expect("set_poses");
    let after = w.step(0.1).expect("step").to_vec();
    let reposed = json!({
        "bodies": poses.iter().map(|p| p.0).collect::<Vec<_>>(),
        "translations": poses.iter().map(|p| p.1.translation().to_vec()).collect::<Vec<_>>(),
        "rotation_columns": poses.iter().map(|p| p.1.linear().iter().map(|c| c.to_vec()).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "pairs": after.iter().map(|c| pair(&w, &ids, c.a.body, c.b.body)).collect::<Vec<_>>(),
        "frames": after.iter().map(|c| json!([c.a.index, c.b.index])).collect::<Vec<_>>(),
        "boxes": after.iter().map(|c| json!([c.aabb.min.to_vec(), c.aabb.max.to_vec()])).collect::<Vec<_>>(),
        "intervals": after.iter().map(|c| c.time.to_vec()).collect::<Vec<_>>(),
    });
    json!({
        "frames": frames_json(&frames),
        "bodies_of_frames": body_of,
        "bodies": bodies,
        "pairs_within_0.25": within,
        "rays": rays,
        "steps": out_steps,
        "final_translations": translations,
        "queries": queries,
        "interval_step": coarse_json,
        "contact_geometry": geometry,
        "debug_lines": lines,
        "reposed": reposed,
    })
}

/// The reference answers as JSON text (see the module docs).
#[pyo3::pyfunction]
pub(crate) fn _reference_answers(py: pyo3::Python<'_>) -> String {
    py.detach(|| {
        json!({
            "narrow_2d": narrow::<2>(2, 400),
            "narrow_3d": narrow::<3>(3, 400),
            "world_3d": world(7, 300, 6),
        })
        .to_string()
    })
}
