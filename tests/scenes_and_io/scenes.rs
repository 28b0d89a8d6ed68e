//! Scene files, the runner's core and the exporters.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};

use fmbgrid::ContactDetail;
use fmbgrid::export::{self, Exporter};
use fmbgrid::scene::{RunOptions, Scene, SceneError, Summary, run};

fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes")
}

fn shipped(name: &str) -> Scene {
    Scene::load(scenes_dir().join(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// A fresh folder in the tests' scratch directory for a test's files.
fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-scenes").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn parse_err(text: &str) -> String {
    Scene::parse(text, ".").map(|_| ()).unwrap_err().to_string()
}

#[test]
fn every_shipped_scene_parses() {
    let mut names: Vec<String> = std::fs::read_dir(scenes_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    for required in
        ["bunny_rain.toml", "boxes_100k.toml", "boxes_2d.toml", "default.toml", "dragons_pass.toml", "tets_mixed.toml"]
    {
        assert!(names.iter().any(|n| n == required), "{required} missing from {names:?}");
    }
    for n in &names {
        let scene = shipped(n);
        assert!(scene.body_count() > 0, "{n}");
        assert!(scene.steps() > 0, "{n}");
    }
    let big = shipped("boxes_100k.toml");
    assert_eq!((big.dimension(), big.body_count()), (3, 100_000));
    assert_eq!(shipped("boxes_2d.toml").dimension(), 2);
    assert_eq!(shipped("bunny_rain.toml").asset_count(), 1);
    assert_eq!(shipped("dragons_pass.toml").asset_count(), 2);
}

#[test]
fn small_scenes_build() {
    let (world, report) = shipped("default.toml").build_3d_report().unwrap();
    assert_eq!((world.len(), report.frames), (417, 417));
    let world = shipped("boxes_2d.toml").build_2d().unwrap();
    assert_eq!(world.len(), 2004);
    let world = shipped("tets_mixed.toml").build_3d().unwrap();
    assert_eq!(world.len(), 10_000);
    // Wrong dimension is refused.
    let wrong = shipped("boxes_2d.toml").build_3d().unwrap_err();
    assert!(matches!(wrong, SceneError::Invalid { .. }), "{wrong:?}");
    assert!(wrong.to_string().contains("this is a 2D scene"), "{wrong}");
}

/// Elements in a mesh file, counted from the text alone (independent of the
/// loaders): `f` lines of an OBJ, the header count of a TetGen `.ele`.
fn elements_in(asset: &str) -> usize {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/meshes").join(asset)).unwrap();
    if asset.ends_with(".obj") {
        text.lines().filter(|l| l.starts_with("f ")).count()
    } else {
        let header = text.lines().find(|l| !l.trim_start().starts_with('#')).unwrap();
        header.split_whitespace().next().unwrap().parse().unwrap()
    }
}

/// The mesh scenes build with one frame per element (or a skipped element
/// in the report), and step: no pair within a body, none while the bodies
/// are apart, many once they overlap.
#[test]
fn mesh_scenes_build_and_step() {
    let (mut world, report) = shipped("dragons_pass.toml").build_3d_report().unwrap();
    let tets = elements_in("bunny_47k.ele");
    assert_eq!((report.bodies, report.frames + report.degenerate + report.invalid), (2, 2 * tets));
    assert_eq!(world.len(), report.bodies);
    let dt = shipped("dragons_pass.toml").dt();
    assert!(world.step(dt).unwrap().is_empty(), "the bunnies start apart");
    // They meet between steps 39 and 41 (0.133 units a step, closing at
    // 8 units/s); by step 44 many tetrahedra overlap.
    let mut last = 0;
    for _ in 1..44 {
        let contacts = world.step(dt).unwrap();
        assert!(contacts.iter().all(|c| c.a.body != c.b.body), "a body's own frames paired");
        last = contacts.len();
    }
    assert!(last > 100, "only {last} pairs at step 44");

    let (mut world, report) = shipped("bunny_rain.toml").build_3d_report().unwrap();
    let triangles = elements_in("bunny.obj");
    assert_eq!(report.bodies, 1 + 144 + 32);
    assert_eq!(report.frames + report.degenerate + report.invalid, 1 + 144 + 32 * triangles);
    for _ in 0..3 {
        assert!(world.step(0.016).unwrap().iter().all(|c| c.a.body != c.b.body));
    }

    let (mut world, report) = shipped("boxes_100k.toml").build_3d_report().unwrap();
    assert_eq!((report.bodies, report.frames), (100_000, 100_000));
    assert!(!world.step(0.016).unwrap().is_empty());
}

#[test]
fn assets_resolve_relative_to_the_scene() {
    let text = "dimension = 3\ndt = 0.1\n[[body]]\nasset = \"../meshes/cube.obj\"\nthickness = 0.01\nscale = 2.0\n\
                grid = { count = [2, 1, 1], spacing = [3.0, 0.0, 0.0] }\n";
    let scene = Scene::parse(text, scenes_dir()).unwrap();
    let (world, report) = scene.build_3d_report().unwrap();
    assert_eq!(world.len(), 2);
    assert_eq!(report.frames, 24, "{report:?}"); // 12 thin shells per cube
    let missing = Scene::parse("dimension = 3\ndt = 0.1\n\n[[body]]\nasset = \"nope.obj\"\n", scenes_dir()).unwrap();
    let err = missing.build_3d().unwrap_err().to_string();
    assert!(err.starts_with("<string>:5:1: body 0: asset "), "{err}");
    assert!(err.contains("nope.obj"), "{err}");
}

/// A surface asset is thin shells with `thickness`, its tetrahedralisation
/// beside it without; without either it is refused, as is a `thickness` on
/// a volume mesh.
#[test]
fn surface_assets_are_shells_or_solids() {
    let body = |asset: &str, extra: &str| {
        let text = format!("dimension = 3\ndt = 0.1\n[[body]]\nasset = \"../meshes/{asset}\"\n{extra}");
        Scene::parse(&text, scenes_dir()).unwrap().build_3d_report()
    };
    let (_, shells) = body("icosphere.obj", "thickness = 0.01\n").unwrap();
    assert_eq!(shells.frames, 320);
    let (_, solid) = body("icosphere.obj", "").unwrap();
    assert_eq!(solid.frames, elements_in("icosphere.ele"));
    let bare = body("cube.obj", "").unwrap_err().to_string();
    assert!(bare.contains("needs a `thickness`") && bare.contains("cube.ele"), "{bare}");
    let thick = body("bunny_6k.ele", "thickness = 0.01\n").unwrap_err().to_string();
    assert!(thick.contains("only applies to surface meshes"), "{thick}");
}

#[test]
fn scatter_is_deterministic() {
    let scene = shipped("default.toml");
    let frames = |w: &fmbgrid::World3| {
        w.bodies().map(|(h, _)| w.frame(fmbgrid::FrameId { body: h, index: 0 }).unwrap().origin()).collect::<Vec<_>>()
    };
    assert_eq!(frames(&scene.build_3d().unwrap()), frames(&scene.build_3d().unwrap()));
}

#[test]
fn malformed_scenes_name_the_line() {
    // TOML syntax.
    let e = parse_err("dimension = 3\ndt = 0.1\n[[body]\nshape = \"box\"\n");
    assert!(e.starts_with("<string>:3:8: "), "{e}");
    // Unknown key, on its line.
    let e = parse_err("dimension = 3\ndt = 0.1\n[[body]]\nshape = \"box\"\nhalf_extent = [1.0, 1.0, 1.0]\n");
    assert!(e.starts_with("<string>:5:1: unknown field `half_extent`"), "{e}");
    // Unknown key at the top.
    let e = parse_err("dimension = 3\ndt = 0.1\ngravity = 9.8\n");
    assert!(e.starts_with("<string>:3:1: unknown field `gravity`"), "{e}");
    // Wrong type.
    let e = parse_err("dimension = 3\ndt = \"fast\"\n");
    assert!(e.starts_with("<string>:2:6: "), "{e}");
    // Unknown shape.
    let e = parse_err("dimension = 3\ndt = 0.1\n[[body]]\nshape = \"sphere\"\n");
    assert!(e.starts_with("<string>:4:9: unknown variant `sphere`"), "{e}");
    // Bad numbers, with the body's index, on the line of the key named.
    let e = parse_err(
        "dimension = 3\ndt = 0.1\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0, 1.0]\n\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, -1.0, 1.0]\n",
    );
    assert_eq!(e, "<string>:9:1: body 1: half_extents must be positive and finite, got -1");
    let e = parse_err(
        "dimension = 3\ndt = 0.1\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0, 1.0]\nvelocity = [inf, 0.0, 0.0]\n",
    );
    assert_eq!(e, "<string>:6:1: body 0: velocity[0] is inf: it must be a finite number of magnitude at most 1e15");
    let e = parse_err("dimension = 3\ndt = 0.1\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\n");
    assert_eq!(e, "<string>:5:1: body 0: half_extents needs 3 numbers, got 2");
    let e = parse_err(
        "dimension = 2\ndt = 0.1\n[[body]]\nshape = \"tetrahedron\"\nvertices = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]\n",
    );
    assert!(e.contains("body 0: shape Tetrahedron does not exist in 2D"), "{e}");
    let e = parse_err(
        "dimension = 3\ndt = 0.1\n[[body]]\nshape = \"tetrahedron\"\nvertices = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]]\n",
    );
    assert!(e.starts_with("<string>:5:1: body 0: vertices: degenerate frame"), "{e}");
    let e = parse_err(
        "dimension = 3\ndt = 0.1\n[[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0, 1.0]\nmotion = \"fixed\"\nvelocity = [1.0, 0.0, 0.0]\n",
    );
    assert!(e.contains("a fixed body cannot have a velocity"), "{e}");
    let e = parse_err("dimension = 3\ndt = 0.1\n[[body]]\nshape = \"box\"\nasset = \"a.obj\"\n");
    assert!(e.contains("either `shape` or `asset`"), "{e}");
    let e = parse_err(
        "dimension = 3\ndt = 0.1\n[[body]]\nshape = \"aabb\"\nmin = [0.0, 0.0, 0.0]\nmax = [1.0, 1.0, 1.0]\nscatter = { count = 3, min = [0.0, 0.0, 0.0], max = [1.0, -1.0, 1.0] }\n",
    );
    assert!(e.contains("scatter.min[1] = 0 is above scatter.max[1] = -1"), "{e}");
    // Scene-level values, on the key's line.
    assert_eq!(parse_err("\ndimension = 4\ndt = 0.1\n"), "<string>:2:1: dimension must be 2 or 3, got 4");
    assert_eq!(parse_err("dimension = 2\ndt = -0.1\n"), "<string>:2:1: dt must be finite and non-negative, got -0.1");
    assert_eq!(
        parse_err("dimension = 2\ndt = 0.1\ncell_size = nan\n"),
        "<string>:3:1: cell_size must be positive and finite, got NaN"
    );
    // A missing file names it.
    let missing = Scene::load("no/such/scene.toml").unwrap_err();
    assert!(matches!(missing, SceneError::Io { .. }));
    assert!(missing.to_string().starts_with("no/such/scene.toml: "), "{missing}");
}

#[test]
fn runner_core_runs_the_default_scene() {
    let scene = shipped("default.toml");
    let summary: Summary =
        run(&scene, &RunOptions { steps: Some(20), snapshot_steps: vec![], ..RunOptions::default() }, &mut ()).unwrap();
    assert_eq!((summary.steps, summary.bodies, summary.frames, summary.dimension), (20, 417, 417, 3));
    assert!(summary.pairs_mean > 0.0 && summary.pairs_max >= summary.pairs_mean as usize);
    assert!(summary.ms_min <= summary.ms_median && summary.ms_median <= summary.ms_max);
    assert!(summary.cell_size > 0.0);
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["bodies"], 417);
}

/// Width and height from a PNG's IHDR.
/// Each contact detail runs: the same pairs decided by FMB with or without
/// the exact box, and at least as many broad-phase candidates.
#[test]
fn runner_core_runs_each_contact_detail() {
    let scene = shipped("default.toml");
    let with = |detail| {
        let options = RunOptions { steps: Some(20), detail, ..RunOptions::default() };
        run(&scene, &options, &mut ()).unwrap()
    };
    let (exact, interval, candidates) =
        (with(ContactDetail::ExactBox), with(ContactDetail::Interval), with(ContactDetail::Candidates));
    assert_eq!((exact.detail.as_str(), interval.detail.as_str()), ("ExactBox", "Interval"));
    assert_eq!(candidates.detail, "Candidates");
    assert!(exact.pairs_max > 0, "the default scene collides");
    assert_eq!((interval.pairs_mean, interval.pairs_max), (exact.pairs_mean, exact.pairs_max));
    assert!(
        candidates.pairs_mean > exact.pairs_mean,
        "{} candidates, {} contacts",
        candidates.pairs_mean,
        exact.pairs_mean
    );
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn export_2d_writes_svg_and_png() {
    let scene = Scene::parse(
        "name = \"two squares\"\ndimension = 2\ndt = 0.1\nsteps = 3\n\
         [[body]]\nshape = \"aabb\"\nmin = [0.0, 0.0]\nmax = [2.0, 2.0]\nmotion = \"fixed\"\n\
         [[body]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0]\nposition = [2.5, 1.0]\nrotation = [0.3]\n\
         [[body]]\nshape = \"triangle\"\nvertices = [[10.0, 0.0], [11.0, 0.0], [10.0, 1.0]]\n",
        ".",
    )
    .unwrap();
    let dir = out_dir("export_2d");
    let mut exporter = Exporter::new(&dir);
    run(&scene, &RunOptions { steps: None, snapshot_steps: vec![1, 3], ..RunOptions::default() }, &mut exporter)
        .unwrap();
    assert_eq!(exporter.written().len(), 4);
    let svg = std::fs::read_to_string(dir.join("two_squares_step00003.svg")).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    // The drawing, then the title, legend and scale bar in group `key`.
    let (drawing, key) = svg.split_once("<g id=\"key\"").unwrap();
    assert_eq!(drawing.matches("<polygon").count(), 3);
    // Of the two touching squares, the moving one is filled red; the fixed
    // one stays grey (a touched ground must not turn red): the box says where.
    assert_eq!(drawing.matches("fill=\"#e4572e\"").count(), 1);
    assert_eq!(drawing.matches("fill=\"#eeeeee\"").count(), 1);
    assert_eq!(drawing.matches("<rect x=").count(), 1); // one intersection box
    assert!(key.contains(">two squares, step 3: 3 bodies, 3 frames, 1 contacts</text>"), "{key}");
    for entry in ["fixed frame in contact", "moving frame", "moving frame in contact", "intersection box"] {
        assert!(key.contains(&format!(">{entry}</text>")), "no legend entry {entry:?}: {key}");
    }
    assert!(!key.contains(">fixed frame</text>"), "a legend entry for what is not drawn");
    assert!(key.contains(" units</text>"), "no scale bar: {key}");
    let png = std::fs::read(dir.join("two_squares_step00001.png")).unwrap();
    assert_eq!(png_size(&png), export::PNG_SIZE);
}

#[test]
fn export_3d_writes_ply_and_png() {
    let scene = shipped("default.toml");
    let dir = out_dir("export_3d");
    let mut exporter = Exporter::new(&dir);
    let summary =
        run(&scene, &RunOptions { steps: Some(5), snapshot_steps: vec![5], ..RunOptions::default() }, &mut exporter)
            .unwrap();
    assert_eq!(exporter.written().len(), 2);
    let ply = std::fs::read_to_string(dir.join("default_step00005.ply")).unwrap();
    let header: Vec<&str> = ply.lines().take_while(|l| *l != "end_header").collect();
    assert_eq!(&header[..2], ["ply", "format ascii 1.0"]);
    let count = |element: &str| -> usize {
        let prefix = format!("element {element} ");
        header.iter().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap().parse().unwrap()
    };
    let (vertices, faces, edges) = (count("vertex"), count("face"), count("edge"));
    // 17 boxes (the ground and the crates) and 400 tetrahedra; 12 edges per contact box.
    let contacts = edges / 12;
    assert!(contacts > 0 && contacts <= summary.pairs_max);
    assert_eq!(vertices, 17 * 8 + 400 * 4 + 8 * contacts);
    assert_eq!(faces, 17 * 12 + 400 * 4);
    let body = ply.lines().skip(header.len() + 1).collect::<Vec<_>>();
    assert_eq!(body.len(), vertices + faces + edges);
    assert!(body[..vertices].iter().any(|l| l.ends_with(" 228 87 46")), "no red (colliding) vertex");
    assert!(body[vertices..vertices + faces].iter().all(|l| l.starts_with("3 ")));
    let png = std::fs::read(dir.join("default_step00005.png")).unwrap();
    assert_eq!(png_size(&png), export::PNG_SIZE);
    // The picture decodes and is not blank.
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    assert!(buf.chunks(3).any(|p| p != [255, 255, 255]));
}

/// A scene's `tolerance` and the runner's override: the summary counts the
/// pairs `World::pairs_within` finds before each step (checked against the
/// world stepped by hand), the pictures draw their witness segments, and a
/// bad tolerance is refused with its key named.
#[test]
fn tolerance_pairs_are_counted_and_drawn() {
    let text = "name = \"near\"\ndimension = 2\ndt = 0.1\nsteps = 6\ntolerance = 0.5\n\
         [[body]]\nshape = \"aabb\"\nmin = [0.0, 0.0]\nmax = [10.0, 1.0]\nmotion = \"fixed\"\n\
         [[body]]\nshape = \"aabb\"\nmin = [2.0, 1.25]\nmax = [3.0, 2.0]\nvelocity = [0.0, 1.0]\n";
    let scene = Scene::parse(text, ".").unwrap();
    assert_eq!(scene.tolerance(), Some(0.5));
    // Rising from 0.25 above the floor by 0.1 a step: 0.25, 0.35, 0.45
    // are within 0.5, then 0.55, 0.65, 0.75 are not.
    let dir = out_dir("tolerance");
    let mut exporter = Exporter::new(&dir);
    let summary = run(&scene, &RunOptions { snapshot_steps: vec![1], ..RunOptions::default() }, &mut exporter).unwrap();
    assert_eq!((summary.tolerance, summary.within_max, summary.within_mean), (Some(0.5), 1, 0.5));
    let svg = std::fs::read_to_string(dir.join("near_step00001.svg")).unwrap();
    let (drawing, key) = svg.split_once("<g id=\"key\"").unwrap();
    assert_eq!(drawing.matches("<line ").count(), 1);
    assert!(key.contains(">within tolerance</text>") && key.contains("1 pairs within tolerance</text>"), "{key}");
    let tight = run(&scene, &RunOptions { tolerance: Some(0.1), ..RunOptions::default() }, &mut ()).unwrap();
    assert_eq!((tight.tolerance, tight.within_max), (Some(0.1), 0));
    // A shipped scene: the summary against the world stepped by hand.
    let boxes = shipped("boxes_2d.toml");
    let delta = 0.2;
    let summary =
        run(&boxes, &RunOptions { steps: Some(10), tolerance: Some(delta), ..RunOptions::default() }, &mut ()).unwrap();
    let mut world = boxes.build_2d().unwrap();
    let (mut total, mut max) = (0, 0);
    for _ in 0..10 {
        let n = world.pairs_within(delta).unwrap().len();
        (total, max) = (total + n, max.max(n));
        world.step(boxes.dt()).unwrap();
    }
    assert!(max > 0);
    assert_eq!((summary.within_max, summary.within_mean), (max, total as f64 / 10.0));
    for bad in ["-1.0", "nan", "inf"] {
        let e = parse_err(&format!("dimension = 2\ndt = 0.1\ntolerance = {bad}\n"));
        assert!(e.contains("tolerance"), "{e}");
    }
}

/// The 3D picture with a tolerance: each pair closer than it adds its two
/// closest points and one green edge to the PLY, as many as the world
/// finds before that step.
#[test]
fn tolerance_pairs_in_the_ply() {
    let scene = shipped("default.toml");
    let dir = out_dir("tolerance_3d");
    let mut exporter = Exporter::new(&dir);
    let delta = 0.3;
    let options =
        RunOptions { steps: Some(5), snapshot_steps: vec![5], tolerance: Some(delta), ..RunOptions::default() };
    run(&scene, &options, &mut exporter).unwrap();
    let mut world = scene.build_3d().unwrap();
    for _ in 0..4 {
        world.step(scene.dt()).unwrap();
    }
    let near = world.pairs_within(delta).unwrap().len();
    assert!(near > 0);
    let ply = std::fs::read_to_string(dir.join("default_step00005.ply")).unwrap();
    let header: Vec<&str> = ply.lines().take_while(|l| *l != "end_header").collect();
    let count = |element: &str| -> usize {
        let prefix = format!("element {element} ");
        header.iter().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap().parse().unwrap()
    };
    let green = ply.lines().skip(header.len() + 1).filter(|l| l.ends_with(" 20 150 60")).count();
    // Two green vertices and one green edge per pair, among the edges.
    assert_eq!(green, 3 * near);
    assert!(count("edge") >= near);
}
