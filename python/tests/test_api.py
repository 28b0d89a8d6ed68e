"""The Python API on small exact cases (the Rust docs' examples), files,
pickling, and the Rust runner's own output for the same scene file."""

import copy
import csv
import os
import pathlib
import pickle
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

import fmbgrid as fg

UNIT3 = np.eye(3)


def test_frames_roundtrip_and_getters():
    f = fg.Frames([[0.0, 0, 0], [0.5, 0.5, 0.5]], [UNIT3, UNIT3], [fg.CUBOID, fg.TETRAHEDRON], [[0, 0, 0], [-4, 0, 0]])
    assert len(f) == 2 and f.dim == 3
    assert f.kinds.tolist() == [1, 0]
    assert f.aabbs[1].tolist() == [[-3.5, 0.5, 0.5], [1.5, 1.5, 1.5]]  # swept over the step
    g = pickle.loads(pickle.dumps(f))
    assert np.array_equal(g.components, f.components) and np.array_equal(g.velocities, f.velocities)
    assert fg.overlaps(f.take([0]), f.take([1])).tolist() == [True]
    hit = fg.intersect(f.take([0]), f.take([1]))
    assert abs(hit.intervals[0, 1] - 0.375) < 1e-12
    t = fg.Frames.simplices([[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]])
    assert t.components[0, 2].tolist() == [0, 0, 1]
    s = np.sqrt(0.5)
    d = fg.Frames.oriented_boxes([[0.0, 0]], [[1.0, 1]], axes=[[[s, s], [-s, s]]])
    assert abs(d.aabbs[0, 1, 0] - np.sqrt(2)) < 1e-12
    assert repr(d) == "Frames(dim=2, len=1)"


def test_queries_exact():
    a = fg.Frames.from_aabbs([[0.0, 0, 0]], [[2.0, 2, 2]])
    b = fg.Frames.from_aabbs([[1.5, 0.5, 0.5]], [[3.5, 1.5, 1.5]])
    p = fg.penetration(a, b)
    assert p.hit[0] and abs(p.depth[0] - 0.5) < 1e-12 and p.normal[0].tolist() == [1, 0, 0]
    far = fg.Frames.from_aabbs([[4.0, 0.5, 0.5]], [[5.0, 2, 2]])
    d = fg.distance(a, far)
    assert abs(d.distance[0] - 2.0) < 1e-12
    wall = fg.Frames.from_aabbs([[0.0, 0]], [[1.0, 4]])
    ball = fg.Frames([[3.0, 1]], [np.eye(2)], velocities=[[-4.0, 0]])
    c = fg.first_contact(wall, ball)
    assert abs(c.time[0] - 0.5) < 1e-12 and c.normal[0].tolist() == [1, 0] and c.depth[0] == 0
    r = fg.ray_cast(fg.Frames.from_aabbs([[2.0, -1]], [[3.0, 1]]), [[0.0, 0]], [[1.0, 0]], 10.0)
    assert r.hit[0] and r.time[0] == 2.0 and r.normal[0].tolist() == [-1, 0]


def test_collide_finds_every_pair_once_as_pairwise_calls_do():
    rng = np.random.default_rng(7)
    n = 400
    for dim in (2, 3):
        origins = rng.uniform(0, 15, (n, dim))
        comps = np.eye(dim) * rng.uniform(0.3, 1.5, (n, 1, 1)) + rng.uniform(-0.3, 0.3, (n, dim, dim))
        kinds = rng.integers(0, 2, n)
        vel = np.where(rng.uniform(size=(n, 1)) < 0.5, rng.uniform(-1, 1, (n, dim)), 0.0)
        f = fg.Frames(origins, comps, kinds, vel)
        i, j = np.triu_indices(n, 1)
        every = np.stack([i, j], axis=1)
        brute = fg.intersect(f, f, every)
        r = fg.collide(f)
        assert len(r.pairs) > 20 and r.pairs.dtype == np.int64
        assert np.array_equal(r.pairs, every[brute.hit])
        assert np.array_equal(r.boxes, brute.boxes[brute.hit])
        assert np.array_equal(r.intervals, brute.intervals[brute.hit])
        # The interval alone: the same pairs and intervals.
        iv = fg.collide(f, detail="interval")
        assert np.array_equal(iv.pairs, r.pairs) and np.array_equal(iv.intervals, r.intervals)
        # Candidates: a superset of the pairs.
        cand = {tuple(p) for p in fg.collide(f, detail="candidates").pairs}
        assert {tuple(p) for p in r.pairs} <= cand
        # Across two sets: the pairs of a frame of each, as pairwise calls.
        a, b = f.take(np.arange(0, n // 2)), f.take(np.arange(n // 2, n))
        ia, ib = np.meshgrid(np.arange(n // 2), np.arange(n - n // 2), indexing="ij")
        across = np.stack([ia.ravel(), ib.ravel()], axis=1)
        hit = fg.intersect(a, b, across)
        ab = fg.collide(a, b)
        assert len(ab.pairs) > 5
        assert np.array_equal(ab.pairs, across[hit.hit]) and np.array_equal(ab.boxes, hit.boxes[hit.hit])
    with pytest.raises(fg.FmbgridError, match="detail"):
        fg.collide(f, detail="boxes")
    with pytest.raises(fg.FmbgridError, match="dimension"):
        fg.collide(f, fg.Frames.from_aabbs([[0.0, 0]], [[1.0, 1]]))
    with pytest.raises(TypeError, match="Frames"):
        fg.collide([1, 2])


def test_world_falling_box_2d():
    w = fg.World(2)
    floor = w.insert(fg.Frames.from_aabbs([[0.0, 0]], [[10.0, 1]]), moving=False, user_data=[100])
    box = w.insert(fg.Frames.from_aabbs([[0.0, 2]], [[1.0, 3]]), velocities=[[0, -30.0]], user_data=[200])
    r = w.step(0.1)
    assert len(r.pairs) == 1 and abs(r.intervals[0, 0] - 1 / 3) < 1e-12
    assert r.pairs.tolist() == [[floor[0], box[0]]]
    assert r.started.tolist() == [[0, 1]] and r.ended.shape == (0, 2)
    assert w.bodies(r.pairs[0]).user_data.tolist() == [100, 200]
    assert w.bodies(box).translations.tolist() == [[0, -3]]
    w.set_velocities(box, [0, 0])
    w.set_poses(box, [[0, 10]])
    r = w.step(0.1)
    assert len(r.pairs) == 0 and r.ended.tolist() == [[0, 1]]


def test_multi_frame_bodies_poses_filters():
    w = fg.World(3)
    frames = fg.Frames.from_aabbs([[0, 0, 0], [2, 0, 0], [0, 0, 5]], [[1, 1, 1], [3, 1, 1], [1, 1, 6]])
    h = w.insert(frames, bodies=[0, 0, 1], moving=[True, False], translations=[[0, 0, 0], [0, 0, -5]])
    assert w.bodies().frame_counts.tolist() == [2, 1]
    placed = w.frames()
    assert placed.bodies.tolist() == [h[0], h[0], h[1]] and placed.indices.tolist() == [0, 1, 0]
    assert placed.frames.origins[2].tolist() == [0, 0, 0]
    r = w.step(0.1)
    assert r.pairs.tolist() == [[h[0], h[1]]] and r.frames.tolist() == [[0, 0]]
    # Rotate the moving body a quarter turn about z: its second frame leaves.
    rot = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    w.set_poses(h[0], [0, 0, 0], rot)
    assert np.allclose(w.bodies(h[:1]).rotations[0], rot)
    # Collision filters: groups & mask exclude the pair.
    w2 = fg.World(3)
    w2.insert(frames.take([0, 2]), filters=[[1, 1], [2, 2]])
    assert len(w2.step(0.0).pairs) == 0


def test_rotation_convention():
    """rotations[k] is R with x_world = R @ x_body + t (as scipy's as_matrix)."""
    w = fg.World(3)
    quarter_z = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])  # x -> y
    h = w.insert(fg.Frames.from_aabbs([[1.0, 0, 0]], [[2.0, 1, 1]]), rotations=[quarter_z], translations=[[0, 0, 5]])
    box = w.frames().frames.aabbs[0]
    assert np.allclose(box, [[-1, 1, 5], [0, 2, 6]])
    assert np.array_equal(w.bodies(h).rotations[0], quarter_z)
    w.set_poses(h, [0, 0, 0], quarter_z.T)  # y -> x... x -> -y
    assert np.allclose(w.frames().frames.aabbs[0], [[0, -2, 0], [1, -1, 1]])


def _random_rotations(rng, n):
    """Proper rotations from random unit quaternions (x_world = R @ x)."""
    q = rng.normal(size=(n, 4))
    w, x, y, z = (q / np.linalg.norm(q, axis=1, keepdims=True)).T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], 1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], 1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], 1),
        ],
        1,
    )


def test_one_rotation_convention_everywhere():
    """`Frames.oriented_boxes(rotations=R)`, `World.insert(rotations=R)` and
    `set_poses(rotations=R)` place the same boxes bit for bit; `axes=` is
    the transpose; the third argument is keyword-only."""
    rng = np.random.default_rng(7)
    n = 50
    rot = _random_rotations(rng, n)
    centers, half = rng.uniform(-5, 5, (n, 3)), rng.uniform(0.2, 1.5, (n, 3))
    by_rotations = fg.Frames.oriented_boxes(centers, half, rotations=rot)
    by_axes = fg.Frames.oriented_boxes(centers, half, axes=rot.transpose(0, 2, 1))
    assert np.array_equal(by_rotations.components, by_axes.components)
    assert np.array_equal(by_rotations.origins, by_axes.origins)
    # The box's axes are R's columns: component j is half_j * R e_j * 2.
    assert np.allclose(by_rotations.components, 2 * half[:, :, None] * rot.transpose(0, 2, 1))
    w = fg.World(3)
    h = w.insert(fg.Frames.oriented_boxes(np.zeros((n, 3)), half), translations=centers, rotations=rot)
    assert np.allclose(w.frames().frames.aabbs, by_rotations.aabbs, rtol=0, atol=1e-12)
    w.set_poses(h, centers + 1.0, rot[::-1].copy())
    moved = fg.Frames.oriented_boxes(centers + 1.0, half, rotations=rot[::-1])
    assert np.allclose(w.frames().frames.aabbs, moved.aabbs, rtol=0, atol=1e-12)
    with pytest.raises(TypeError):
        fg.Frames.oriented_boxes(centers, half, rot)  # positional: which convention?
    with pytest.raises(ValueError, match="not both"):
        fg.Frames.oriented_boxes(centers, half, rotations=rot, axes=rot)


def test_rotations_are_checked_and_linears_take_affine_maps():
    """A rotation off by more than ROTATION_TOLERANCE (scaled, sheared, mirrored)
    is refused with the row named and nothing changed; float32 quaternions
    pass; `linears=` takes any invertible map; an unchanged row is not
    re-checked."""
    assert fg.ROTATION_TOLERANCE == 1e-6
    rng = np.random.default_rng(8)
    n = 20
    rot = _random_rotations(rng, n)
    single = _random_rotations(rng.__class__(np.random.PCG64(9)), n).astype(np.float32)
    frames = fg.Frames.from_aabbs(np.zeros((n, 3)), np.ones((n, 3)))
    w = fg.World(3)
    h = w.insert(frames, rotations=single.astype(np.float64))  # float32 data: within 1e-6
    bad = {
        "scaled": rot * 1.001,
        "sheared": rot @ np.array([[1, 1e-4, 0], [0, 1, 0], [0, 0, 1]]),
        "mirrored": rot * np.array([1, 1, -1]),
    }
    for name, m in bad.items():
        broken = rot.copy()
        broken[3] = m[3]
        with pytest.raises(ValueError, match="row 3.*not a rotation"):
            fg.World(3).insert(frames, rotations=broken)
        before = w.frames().frames.aabbs
        with pytest.raises(ValueError, match="row 3.*not a rotation"):
            w.set_poses(h, np.zeros((n, 3)), broken)
        assert np.array_equal(w.frames().frames.aabbs, before), name
        with pytest.raises(ValueError, match="rotations\\[3\\].*not a rotation"):
            fg.Frames.oriented_boxes(np.zeros((n, 3)), np.ones((n, 3)), rotations=broken)
        # The same maps as affine poses, and as parallelepipeds.
        a = fg.World(3)
        g = a.insert(frames, linears=broken)
        a.set_poses(g, np.ones((n, 3)), linears=broken)
        a.set_poses(g, np.ones((n, 3)), broken)  # unchanged rows: not re-checked
        assert len(fg.Frames.oriented_boxes(np.zeros((n, 3)), np.ones((n, 3)), axes=broken)) == n
    with pytest.raises(ValueError, match="not both"):
        w.set_poses(h, np.zeros((n, 3)), rot, linears=rot)


def test_pairs_within_and_rays():
    w = fg.World(2)
    w.insert(fg.Frames.from_aabbs([[0.0, 0]], [[10.0, 1]]), moving=False)
    w.insert(fg.Frames.from_aabbs([[2.0, 1.25]], [[3.0, 2]]))
    assert len(w.pairs_within(0.1).pairs) == 0
    near = w.pairs_within(0.5)
    assert len(near.distances) == 1 and abs(near.distances[0] - 0.25) < 1e-12
    hits = w.cast_rays([[5.0, 5], [-5.0, 5]], [[0, -1.0], [0, 1.0]], 100.0)
    assert hits.hit.tolist() == [True, False]
    assert hits.times[0] == 4.0 and hits.normals[0].tolist() == [0, 1]
    assert hits.bodies[1] == np.iinfo(np.uint64).max


def test_detail_modes_and_config():
    w = fg.World(3, detail="candidates", cell_size=2.0)
    assert w.config == {"cell_size": 2.0, "detail": "candidates", "runaway": "park", "spin_tolerance": None}
    w.insert(fg.Frames.from_aabbs([[0, 0, 0], [0.5, 0.5, 0.5]], [[1, 1, 1], [2, 2, 2]]))
    r = w.step(0.1)
    assert len(r.pairs) == 1 and r.intervals.tolist() == [[0, 1]]
    assert w.cell_size == 2.0


def test_pickle_copy_and_snapshot_continue_bit_for_bit():
    rng = np.random.default_rng(3)
    lo = rng.uniform(0, 8, (200, 3))
    w = fg.World(3)
    h = w.insert(fg.Frames.from_aabbs(lo, lo + 1), velocities=rng.uniform(-2, 2, (200, 3)))
    w.step(0.1)
    w.remove(h[::7])
    clones = [pickle.loads(pickle.dumps(w)), copy.copy(w), copy.deepcopy(w), fg.World.restore(w.snapshot())]
    for _ in range(5):
        want = w.step(0.1)
        for c in clones:
            got = c.step(0.1)
            for x, y in zip(want, got):
                assert np.array_equal(x, y)
    assert len(want.pairs) > 0
    assert np.array_equal(clones[0].handles(), w.handles())


def test_set_poses_unchanged_skip_changes_no_answer():
    """set_poses leaves a moving body whose pose and frames would not change
    alone; listing every body twice forces World::set_pose on each: the
    steps agree bit for bit."""
    rng = np.random.default_rng(8)
    n = 400
    lo = rng.uniform(0, 10, (n, 3))
    rot = np.linalg.qr(rng.normal(size=(n, 3, 3)))[0]
    t = rng.uniform(0, 10, (n, 3))
    a = fg.World(3)
    h = a.insert(fg.Frames.from_aabbs(lo * 0.1, lo * 0.1 + 1), translations=t, rotations=rot,
                 velocities=np.where(np.arange(n)[:, None] % 3 == 0, 0.5, 0.0) * np.ones(3))
    a.set_angular_velocities(h[1::7], np.tile([0.0, 0.0, 2.0], (len(h[1::7]), 1)))  # some turn
    b = fg.World.restore(a.snapshot())
    for step in range(4):
        info = a.bodies(h)
        t2, r2 = info.translations.copy(), info.rotations.copy()
        t2[::5] += 0.01  # some move, most do not
        a.set_poses(h, t2, r2)
        b.set_poses(np.concatenate([h, h]), np.concatenate([t2, t2]), np.concatenate([r2, r2]))
        ra, rb = a.step(0.1), b.step(0.1)
        assert len(ra.pairs) > 0
        for x, y in zip(ra, rb):
            assert np.array_equal(x.view(np.uint64) if x.dtype == np.float64 else x,
                                  y.view(np.uint64) if y.dtype == np.float64 else y)
    assert a.snapshot() == b.snapshot()


def test_unchanged_poses_answer_as_changed_ones():
    """The static loop: every pose set each step, unchanged. set_poses
    finds the bodies unchanged without placing their frames; worlds whose
    bodies are carried away and back (in one call, or in two) place every
    frame anew: the steps, the pairs and the world agree bit for bit."""
    rng = np.random.default_rng(22)
    n = 600
    half = rng.uniform(0.5, 1.5, (n, 3))
    rot = np.linalg.qr(rng.normal(size=(n, 3, 3)))[0]
    t = rng.uniform(0, 18, (n, 3))
    vel = np.where(np.arange(n)[:, None] % 4 == 0, 0.3, 0.0) * np.ones(3)  # a quarter move
    a = fg.World(3)
    frames = fg.Frames.oriented_boxes(np.zeros((n, 3)), half)
    h = a.insert(frames, velocities=vel, translations=t, rotations=rot)
    a.step(1 / 60)
    b, c = fg.World.restore(a.snapshot()), fg.World.restore(a.snapshot())
    away = t + 100.0
    for step in range(4):
        info = a.bodies(h)
        t2, r2 = info.translations.copy(), info.rotations.copy()
        a.set_poses(h, t2, r2)
        b.set_poses(np.concatenate([h, h]), np.concatenate([away, t2]), np.concatenate([r2, r2]))
        c.set_poses(h, away, r2)
        c.set_poses(h, t2, r2)
        results = [w.step(1 / 60) for w in (a, b, c)]
        assert len(results[0].pairs) > 50
        for other in results[1:]:
            for x, y in zip(results[0], other):
                assert np.array_equal(x.view(np.uint64) if x.dtype == np.float64 else x,
                                      y.view(np.uint64) if y.dtype == np.float64 else y)
    assert a.snapshot() == b.snapshot() == c.snapshot()


def test_angular_velocity_and_parked():
    w = fg.World(2, runaway="park")
    h = w.insert(fg.Frames.from_aabbs([[0.0, 0], [0.5, -3]], [[1.0, 1], [0.6, -2]]))
    w.set_angular_velocities(h[:1], [3.0])
    w.step(0.1)
    far = w.insert(fg.Frames.from_aabbs([[0.0, 0]], [[1e-3, 1e-3]]), velocities=[[1e14, 0]])
    w.step(1.0)
    assert w.parked().tolist() == far.tolist()


def test_meshes(repo):
    meshes = repo / "assets" / "meshes"
    cube = fg.load_mesh(meshes / "cube.obj")
    assert cube.triangles.shape[1] == 3 and cube.tetrahedra.shape == (0, 4)
    shells = fg.mesh_frames(cube.vertices, cube.triangles, thickness=0.01)
    assert len(shells.frames) == len(cube.triangles) and shells.degenerate == 0
    sphere = fg.load_mesh(meshes / "icosphere.obj", solid=True)
    assert (len(sphere.triangles), len(sphere.tetrahedra)) == (320, 480)
    solid = fg.mesh_frames(sphere.vertices, sphere.triangles, sphere.tetrahedra)
    assert len(solid.frames) == 480

    class FakeTrimesh:  # trimesh.Trimesh's two attributes
        vertices = cube.vertices
        faces = cube.triangles.astype(np.int64)

    assert len(fg.from_trimesh(FakeTrimesh(), 0.01).frames) == len(cube.triangles)
    w = fg.World(3)
    h = w.insert(solid.frames, np.zeros(480, dtype=int), moving=False)
    probe = w.insert(fg.Frames.from_aabbs([[-0.1, -0.1, -0.1]], [[0.1, 0.1, 0.1]]))
    r = w.step(0.0)
    assert set(r.body_pairs.ravel().tolist()) == {int(h[0]), int(probe[0])}


def test_scenes(repo):
    s = fg.load_scene(repo / "assets" / "scenes" / "default.toml")
    assert s.dimension in (2, 3) and s.dt > 0 and len(s.world) == s.bodies
    r = s.world.step(s.dt)
    assert r.boxes.shape[1:] == (2, s.dimension)
    t = fg.parse_scene('dimension = 2\ndt = 0.1\n[[body]]\nshape = "aabb"\nmin = [0.0, 0.0]\nmax = [10.0, 1.0]\n'
                       'motion = "fixed"\n[[body]]\nshape = "box"\nhalf_extents = [0.5, 0.5]\nposition = [5.0, 1.8]\n'
                       'velocity = [0.0, -10.0]\n')
    assert len(t.world.step(t.dt).pairs) == 1


def runner():
    exe = os.environ.get("FMBGRID_CLI")
    if exe and pathlib.Path(exe).is_file():
        return exe
    return None


@pytest.mark.parametrize("scene", ["tets_mixed.toml", "boxes_2d.toml"])
def test_scene_contacts_equal_rust_runner(repo, tmp_path, scene):
    """`fmbgrid run SCENE --contacts FILE.csv` and the same scene stepped from
    Python: the same contacts, in the same order, bit for bit."""
    exe = runner()
    if exe is None:
        pytest.skip("set FMBGRID_CLI to the `fmbgrid` runner binary (CI does)")
    path = repo / "assets" / "scenes" / scene
    steps = 5
    out = tmp_path / "contacts.csv"
    subprocess.run([exe, "run", str(path), "--steps", str(steps), "--threads", "1", "--quiet", "--contacts", str(out)],
                   check=True, capture_output=True)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    s = fg.load_scene(path)
    handles = s.world.handles()
    index = {int(h): k for k, h in enumerate(handles)}
    d = s.dimension
    got = []
    for step in range(steps):
        # The runner reverses velocities every `reverse_every` steps; 5 steps stay before that.
        assert s.reverse_every is None or s.reverse_every > steps
        r = s.world.step(s.dt)
        for k in range(len(r.pairs)):
            got.append((step + 1, index[int(r.pairs[k, 0])], int(r.frames[k, 0]), index[int(r.pairs[k, 1])],
                        int(r.frames[k, 1]), *r.boxes[k].ravel().tolist(), *r.intervals[k].tolist()))
    keys = list(rows[0].keys()) if rows else []
    want = [tuple(int(x[k]) if i < 5 else float(x[k]) for i, k in enumerate(keys)) for x in rows]
    assert len(want) == len(got) > 0
    for a, b in zip(want, got):
        assert a[:5] == b[:5]
        assert np.array_equal(np.array(a[5:]).view(np.uint64), np.array(b[5:]).view(np.uint64))
    assert len(keys) == 5 + 2 * d + 2


def test_gil_released_during_step():
    """Another Python thread runs while the engine steps."""
    rng = np.random.default_rng(0)
    n = 60000
    lo = rng.uniform(0, (88 * n) ** (1 / 3), (n, 3))
    w = fg.World(3)
    w.insert(fg.Frames.from_aabbs(lo, lo + rng.uniform(1, 3, (n, 3))), velocities=rng.uniform(-3, 3, (n, 3)))
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    start = len(ticks)
    w.step(1 / 60)
    w.step(1 / 60)
    during = len(ticks) - start
    done.set()
    t.join()
    assert during > 3
