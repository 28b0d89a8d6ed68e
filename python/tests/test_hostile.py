"""Hostile input: wrong shapes, dtypes, NaN, infinities, non-contiguous and
broadcast arrays, huge counts, stale handles. Every one gives a Python
exception with the engine's message, and a refused bulk call leaves the
world exactly as it was (same snapshot bytes)."""

from fractions import Fraction

import numpy as np
import pytest

import fmbgrid as fg

BIG = fg.MAX_ROWS + 1


def boxes(n, seed=0, dim=3, spread=10.0):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0, spread, (n, dim))
    return fg.Frames.from_aabbs(lo, lo + rng.uniform(0.5, 1.5, (n, dim)))


@pytest.fixture
def world():
    w = fg.World(3)
    w.insert(boxes(20, 1), moving=False)
    h = w.insert(boxes(30, 2), velocities=np.full((30, 3), 0.5))
    w.step(0.1)
    return w, h


def unchanged(w, call, exc=ValueError, match=None):
    before = w.snapshot()
    with pytest.raises(exc, match=match):
        call()
    assert w.snapshot() == before


# --- frames ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "origins, components, match",
    [
        (np.zeros((2, 3)), np.zeros((2, 3)), "components must have shape"),
        (np.zeros((2, 4)), np.zeros((2, 4, 4)), r"shape \(N, 2\) or \(N, 3\)"),
        (np.zeros(3), np.eye(3), r"shape \(N, 2\) or \(N, 3\)"),
        (np.zeros((2, 3)), np.broadcast_to(np.eye(3), (3, 3, 3)), "components must have shape"),
        (np.array([[0, 0, np.nan]]), np.eye(3)[None], r"frame 0: origin has a non-finite coordinate \(NaN\)"),
        (np.array([[0, 0, np.inf]]), np.eye(3)[None], r"frame 0: origin has a non-finite coordinate \(inf\)"),
        (np.array([[0, 0, 1e16]]), np.eye(3)[None], "frame 0"),
        (np.zeros((1, 3)), np.zeros((1, 3, 3)), "frame 0"),
        (np.zeros((1, 3)), np.array([[[1, 0, 0], [2, 0, 0], [0, 0, 1.0]]]), "frame 0: .*degenerate"),
    ],
)
def test_bad_frames(origins, components, match):
    with pytest.raises(ValueError, match=match):
        fg.Frames(origins, components)


def test_error_is_value_error_subclass():
    assert issubclass(fg.FmbgridError, ValueError)
    with pytest.raises(fg.FmbgridError):
        fg.Frames([[0, 0, np.nan]], np.eye(3)[None])


@pytest.mark.parametrize("bad", [np.array([["a", "b", "c"]]), np.array([[1 + 1j, 0, 0]]), np.array([[None, 0, 0]])])
def test_bad_dtypes(bad):
    with pytest.raises(TypeError):
        fg.Frames(bad, np.eye(3)[None])


def test_bad_kinds():
    with pytest.raises(ValueError, match="kind"):
        fg.Frames(np.zeros((1, 3)), np.eye(3)[None], "sphere")
    with pytest.raises(ValueError, match="kinds must be 0"):
        fg.Frames(np.zeros((1, 3)), np.eye(3)[None], [7])
    with pytest.raises(ValueError, match="kinds must have shape"):
        fg.Frames(np.zeros((2, 3)), np.broadcast_to(np.eye(3), (2, 3, 3)), [1, 0, 1])


def test_integer_and_strided_input_equal_float_contiguous():
    rng = np.random.default_rng(5)
    lo = rng.uniform(0, 5, (40, 3))
    comps = np.broadcast_to(np.eye(3), (40, 3, 3))  # zero strides
    big = np.zeros((80, 6))
    big[::2, ::2] = lo  # non-contiguous view
    a = fg.Frames(big[::2, ::2], comps)
    b = fg.Frames(np.ascontiguousarray(lo), np.ascontiguousarray(comps))
    assert np.array_equal(a.origins, b.origins) and np.array_equal(a.components, b.components)
    c = fg.Frames(np.arange(6).reshape(2, 3), np.broadcast_to(np.eye(3, dtype=int), (2, 3, 3)))
    assert c.origins.tolist() == [[0, 1, 2], [3, 4, 5]]
    f = np.asfortranarray(lo)
    assert np.array_equal(fg.Frames.from_aabbs(f, f + 1).aabbs, fg.Frames.from_aabbs(lo, lo + 1).aabbs)


def test_huge_counts_refused_without_allocating():
    huge = np.broadcast_to(np.zeros(3), (BIG, 3))
    with pytest.raises(ValueError, match="rows"):
        fg.Frames(huge, np.broadcast_to(np.eye(3), (BIG, 3, 3)))
    a = boxes(3)
    with pytest.raises(ValueError, match="rows"):
        fg.overlaps(a, a, np.broadcast_to(np.zeros(2, dtype=np.int64), (BIG, 2)))
    with pytest.raises(ValueError, match="rows"):
        a.take(np.broadcast_to(np.int64(0), (BIG,)))
    with pytest.raises(ValueError):
        fg.overlaps(a, a, np.broadcast_to(np.zeros(2, dtype=np.int64), (2**40, 2)))


def test_bad_pairs():
    a, b = boxes(3), boxes(4)
    with pytest.raises(ValueError, match="pairs="):
        fg.overlaps(a, b)
    with pytest.raises(ValueError, match="out of range"):
        fg.intersect(a, b, [[0, 4]])
    with pytest.raises(ValueError, match="out of range"):
        fg.intersect(a, b, [[-1, 0]])
    with pytest.raises(TypeError):
        fg.intersect(a, b, [[0.5, 1]])
    with pytest.raises(ValueError, match="2D"):
        fg.overlaps(a, boxes(3, dim=2))


# --- the world -------------------------------------------------------------------


def test_insert_all_or_nothing(world):
    w, _ = world
    n = len(w)
    good = boxes(5, 9)
    # The 4th body's velocity is NaN: nothing is inserted.
    v = np.zeros((5, 3))
    v[3, 1] = np.nan
    unchanged(w, lambda: w.insert(good, velocities=v), match="row 3: velocity is NaN")
    unchanged(w, lambda: w.insert(good, velocities=np.ones((4, 3))), match="velocities must have shape")
    unchanged(w, lambda: w.insert(good, moving=False, velocities=np.ones((5, 3))), match="fixed body cannot have a velocity")
    unchanged(w, lambda: w.insert(good, bodies=[0, 0, 2, 2, 2]), match="row 1: a body needs at least one frame")
    unchanged(w, lambda: w.insert(good, bodies=[0, 0, 9, 1, 1]), match="bodies")
    unchanged(w, lambda: w.insert(good, bodies=[0, 0, -1, 1, 1]), match=r"bodies\[2\] = -1")
    rot = np.broadcast_to(np.eye(3), (5, 3, 3)).copy()
    rot[2] = [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    unchanged(w, lambda: w.insert(good, rotations=rot), match="row 2: degenerate pose")
    far = np.zeros((5, 3))
    far[4] = [1e15, 0, 0]
    unchanged(w, lambda: w.insert(good, translations=far), match="row 4: frame 0 of the body")
    unchanged(w, lambda: w.insert(boxes(2, dim=2)), match="2D")
    unchanged(w, lambda: w.insert(good, user_data=[-1, 0, 0, 0, 0]), match="out of range")
    unchanged(w, lambda: w.insert(good, moving=["yes"] * 5), exc=TypeError)
    assert len(w) == n


def test_bulk_updates_all_or_nothing(world):
    w, h = world
    fixed = w.handles()[:20]
    v = np.ones((len(h), 3))
    v[-1, 0] = np.inf
    unchanged(w, lambda: w.set_velocities(h, v), match=r"row 29 \(body \d+\): velocity is inf")
    mixed = np.concatenate([h[:3], fixed[:1]])
    unchanged(w, lambda: w.set_velocities(mixed, np.ones((4, 3))), match="is fixed")
    unchanged(w, lambda: w.set_velocities(h, np.ones((len(h), 2))), match="shape")
    t = np.zeros((len(h), 3))
    t[7, 2] = np.nan
    unchanged(w, lambda: w.set_poses(h, t), match=r"row 7 \(body \d+\): pose translation is NaN")
    rot = np.broadcast_to(np.eye(3), (len(h), 3, 3)).copy()
    rot[5] = 0
    unchanged(w, lambda: w.set_poses(h, np.zeros((len(h), 3)), rot), match=r"row 5 \(body \d+\)")
    unchanged(w, lambda: w.set_angular_velocities(h, np.full((len(h), 3), np.nan)), match=r"row 0 \(body \d+\): angular velocity is NaN")
    stale = h.copy()
    stale[4] += 1 << 32  # another generation
    unchanged(w, lambda: w.set_velocities(stale, np.ones((len(h), 3))), match=r"row 4 \(body \d+\): stale")
    unchanged(w, lambda: w.remove(np.concatenate([h[:5], h[:1]])), match="listed twice")
    unchanged(w, lambda: w.remove(stale), match="stale")
    unchanged(w, lambda: w.remove([-1]), match="out of range")
    unchanged(w, lambda: w.remove([1.5]), exc=TypeError)
    unchanged(w, lambda: w.step(-1.0), match="time step")
    unchanged(w, lambda: w.step(float("nan")), match="time step")
    unchanged(w, lambda: w.pairs_within(-1.0), match="tolerance")
    unchanged(w, lambda: w.cast_rays([[0, 0, 0]], [[0, 0, 0]]), match="ray 0: the ray direction is zero")
    unchanged(w, lambda: w.cast_rays([[0, 0, np.nan]], [[1, 0, 0]]), match="ray 0")
    huge = np.broadcast_to(np.uint64(h[0]), (BIG,))
    unchanged(w, lambda: w.remove(huge), match="rows")
    unchanged(w, lambda: w.set_velocities(huge, np.broadcast_to(np.ones(3), (BIG, 3))), match="rows")


def test_removed_handles_go_stale(world):
    w, h = world
    w.remove(h[:2])
    with pytest.raises(ValueError, match="stale"):
        w.set_velocities(h[:1], [[1, 0, 0]])
    with pytest.raises(ValueError, match="stale"):
        w.bodies(h[1:2])
    # A new body reuses the slot with a new generation: the old handle stays stale.
    new = w.insert(boxes(1, 3))
    assert int(new[0]) & 0xFFFFFFFF in (int(h[0]) & 0xFFFFFFFF, int(h[1]) & 0xFFFFFFFF)
    assert int(new[0]) >> 32 == 1
    with pytest.raises(ValueError, match="stale"):
        w.remove(h[:2])


def test_bad_config():
    with pytest.raises(ValueError, match="dim"):
        fg.World(4)
    with pytest.raises(ValueError, match="detail"):
        fg.World(3, detail="fast")
    with pytest.raises(ValueError, match="cell_size"):
        fg.World(3, cell_size=-1.0)
    with pytest.raises(ValueError, match="runaway"):
        fg.World(3, runaway="explode")


def test_bad_snapshots():
    with pytest.raises(ValueError, match="snapshot"):
        fg.World.restore(b"garbage")
    w = fg.World(2)
    w.insert(boxes(3, dim=2))
    s = w.snapshot()
    with pytest.raises(ValueError, match="snapshot"):
        fg.World.restore(s[:-10])
    with pytest.raises(ValueError, match="snapshot"):
        fg.World.restore(s.replace(b'"generation":0', b'"generation":7', 1))
    with pytest.raises(ValueError):
        fg.World.restore(b"fmbgrid-snapshot 3\n" + s.split(b"\n", 1)[1])


def test_bad_files(tmp_path):
    with pytest.raises(ValueError, match="nope.obj"):
        fg.load_mesh(tmp_path / "nope.obj")
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nf 1 2 3\n")
    with pytest.raises(ValueError, match="line 2: face index 2 is out of range"):
        fg.load_mesh(bad)
    with pytest.raises(ValueError, match="half_extents\\[1\\] is NaN"):
        fg.parse_scene('dimension = 2\ndt = 0.1\n[[body]]\nshape = "box"\nhalf_extents = [1.0, nan]\n')
    with pytest.raises(ValueError, match="thickness"):
        fg.mesh_frames(np.eye(3), [[0, 1, 2]])
    # Beyond the coordinates' range: said so, not counted as degenerate.
    for thickness in [1e300, -0.1, float("nan")]:
        with pytest.raises(ValueError, match=r"thickness .* must be a number from 0 to 1e15"):
            fg.mesh_frames(np.eye(3), [[0, 1, 2]], thickness=thickness)
    with pytest.raises(ValueError, match="triangles must have shape"):
        fg.mesh_frames(np.eye(3), [[0, 1]], thickness=0.1)


def test_set_poses_refused_frame_names_the_row(world):
    w, h = world
    t = w.bodies(h).translations
    t[11] = [1e15, 0, 0]  # a valid pose that carries the body's frame out of range
    unchanged(w, lambda: w.set_poses(h, t), match=r"row 11 \(body \d+\): frame 0 of the body: .*magnitude")
    # Listed twice, the bad pose second: refused all the same.
    twice = np.concatenate([h, h[:1]])
    t2 = np.concatenate([w.bodies(h).translations, [[0, 0, -1e15]]])
    unchanged(w, lambda: w.set_poses(twice, t2), match=r"row 30 \(body \d+\): frame 0 of the body")
    unchanged(w, lambda: w.set_poses(h, t[:, :2]), match="translations must have shape")
    unchanged(w, lambda: w.set_poses(h, t, np.zeros((len(h), 2, 2))), match="rotations must have shape")
    unchanged(w, lambda: w.set_poses(h, t.astype(complex)), exc=TypeError)


def test_set_user_data_refused(world):
    w, h = world
    unchanged(w, lambda: w.set_user_data(h, np.arange(len(h) - 1)), match="data must have shape")
    unchanged(w, lambda: w.set_user_data(h, -np.ones(len(h), dtype=int)), match="out of range")
    unchanged(w, lambda: w.set_user_data(h, np.full(len(h), 0.5)), exc=TypeError)
    stale = h.copy()
    stale[2] += 1 << 32
    unchanged(w, lambda: w.set_user_data(stale, np.arange(len(h))), match=r"row 2 \(body \d+\): stale")


def test_strided_world_input_equals_contiguous(world):
    w, h = world
    t = w.bodies(h).translations + 0.25
    rot = np.broadcast_to(np.eye(3), (len(h), 3, 3))  # zero strides
    wide = np.zeros((len(h), 6))
    wide[:, ::2] = t  # non-contiguous
    a = fg.World.restore(w.snapshot())
    a.set_poses(h[::-1][::-1], wide[:, ::2], rot)
    b = fg.World.restore(w.snapshot())
    b.set_poses(np.ascontiguousarray(h), np.ascontiguousarray(t), np.ascontiguousarray(rot))
    assert a.snapshot() == b.snapshot()
    ra, rb = a.step(0.1), b.step(0.1)
    assert all(np.array_equal(x, y) for x, y in zip(ra, rb))


def rotations(n, seed=3):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        1,
    )


def test_rotation_layouts_equal(world):
    """Rotations C-contiguous, transposed in memory, strided, reversed and
    broadcast give the same world, bit for bit, each set twice (the second
    time the poses are those the first call took)."""
    w, h = world
    t = w.bodies(h).translations + 0.25
    rot = rotations(len(h))
    wide = np.zeros((len(h), 3, 6))
    wide[:, :, ::2] = rot
    layouts = [
        rot,
        np.swapaxes(np.ascontiguousarray(np.swapaxes(rot, 1, 2)), 1, 2),  # columns contiguous
        wide[:, :, ::2],
        np.ascontiguousarray(rot[::-1])[::-1],
    ]
    snaps = []
    for r in layouts:
        a = fg.World.restore(w.snapshot())
        for _ in range(2):
            a.set_poses(h, t, r)
        snaps.append(a.snapshot())
    assert all(x == snaps[0] for x in snaps)
    one = np.broadcast_to(rot[0], rot.shape)
    a, b = fg.World.restore(w.snapshot()), fg.World.restore(w.snapshot())
    a.set_poses(h, t, one)
    b.set_poses(h, t, np.ascontiguousarray(one))
    assert a.snapshot() == b.snapshot()


def test_set_poses_again_after_moving_and_refused(world):
    """A pose set before is set again after the body moved away from it
    (a step, another pose); a bad pose after a good one is refused."""
    w, h = world
    t = w.bodies(h).translations + 0.25
    rot = rotations(len(h))
    w.set_poses(h, t, rot)
    w.step(0.1)  # the bodies move (velocity 0.5)
    assert not np.array_equal(w.bodies(h).translations, t)
    w.set_poses(h, t, rot)
    assert np.array_equal(w.bodies(h).translations, t)
    w.set_poses(h, t + 1, rot)
    w.set_poses(h, t, rot)
    assert np.array_equal(w.bodies(h).translations, t)
    bad = rot.copy()
    bad[3, :, 0] = bad[3, :, 1]  # singular
    unchanged(w, lambda: w.set_poses(h, t, bad), match=r"row 3 \(body \d+\)")
    nan = t.copy()
    nan[4, 1] = np.nan
    unchanged(w, lambda: w.set_poses(h, nan, rot), match=r"row 4 \(body \d+\): pose translation is NaN")


def test_set_poses_rows_reordered_fewer_more(world):
    """Calls whose rows are other bodies, fewer or more than the previous
    call's give the world that one call with those rows gives."""
    w, h = world
    t = w.bodies(h).translations + 0.25
    rot = rotations(len(h))
    calls = [
        (h, t, rot),
        (h[::-1], t[::-1] + 1, rot[::-1]),
        (h[:7], t[:7], rot[:7]),
        (np.concatenate([h, h[:3]]), np.concatenate([t + 2, t[:3]]), np.concatenate([rot, rot[:3]])),
        (h[5:9], t[5:9] - 1, None),
        (h, t, rot),
    ]
    a = fg.World.restore(w.snapshot())
    for c in calls:
        a.set_poses(*c)
        b = fg.World.restore(w.snapshot())
        b.set_poses(*c)
        assert np.array_equal(a.bodies(h).translations, b.bodies(h).translations)
        assert np.array_equal(a.bodies(h).rotations, b.bodies(h).rotations)
        w = b


def test_set_velocities_slot_reused_by_fixed_body():
    w = fg.World(3)
    old = w.insert(boxes(1, 4))
    w.remove(old)
    new = w.insert(boxes(1, 5), moving=False)
    assert new[0] & 0xFFFFFFFF == old[0] & 0xFFFFFFFF  # the same slot
    unchanged(w, lambda: w.set_velocities(new, [[1, 0, 0]]), match="is fixed")
    unchanged(w, lambda: w.set_velocities(old, [[1, 0, 0]]), match="stale")
    assert new[0] >> 32 == (old[0] >> 32) + 1  # the next generation
    moving = w.insert(boxes(1, 5))  # on the fixed body
    w.set_velocities(moving, [[1, 0, 0]])
    assert np.array_equal(w.bodies(moving).velocities, [[1.0, 0, 0]])
    r = w.step(0.1)
    assert r.body_pairs.tolist() == [[new[0], moving[0]]]
    assert r.started.tolist() == [[new[0], moving[0]]]


def test_queries_refuse_bad_input(world):
    w, h = world
    # Read-only: a refused query changes nothing either.
    unchanged(w, lambda: w.query_aabbs([[0, 0, np.nan]], [[1, 1, 1]]), match="box 0: box corner")
    unchanged(w, lambda: w.query_aabbs([[0, 0, 0]], [[np.inf, 1, 1]]), match="box 0")
    unchanged(w, lambda: w.query_aabbs(np.zeros((3, 3)), np.ones((2, 3))), match="maxs must have shape")
    unchanged(w, lambda: w.query_aabbs(np.zeros((3, 2)), np.ones((3, 2))), match="mins must have shape")
    unchanged(w, lambda: w.query_aabbs([["a", "b", "c"]], [[1, 1, 1]]), exc=TypeError)
    unchanged(w, lambda: w.query_points([[0, np.nan, 0]]), match="point 0")
    unchanged(w, lambda: w.query_points(np.zeros((2, 2, 3))), match="points must have shape")
    unchanged(w, lambda: w.query_frames(boxes(2, dim=2)), match="2D")
    unchanged(w, lambda: w.query_frames(np.zeros((2, 3))), exc=TypeError)
    unchanged(w, lambda: w.cast_rays_all([[0, 0, 0]], [[0, 0, 0]]), match="ray 0: the ray direction is zero")
    unchanged(w, lambda: w.cast_rays_all([[0, 0, 0]], [[1, 0, 0]], -1.0), match="ray 0")
    unchanged(w, lambda: w.cast_rays_all(np.zeros((2, 3)), np.ones((3, 3))), match="directions must have shape")
    unchanged(w, lambda: w.debug_draw(float("nan")), match="time step")
    unchanged(w, lambda: w.debug_draw(-1.0), match="time step")
    huge = np.broadcast_to(np.zeros(3), (BIG, 3))
    unchanged(w, lambda: w.query_points(huge), match="rows")
    unchanged(w, lambda: w.query_aabbs(huge, huge), match="rows")
    unchanged(w, lambda: w.cast_rays_all(huge, huge, 1.0), match="rows")
    # A box with min > max finds nothing; an empty batch finds nothing.
    assert len(w.query_aabbs([[5, 5, 5]], [[4, 6, 6]]).query) == 0
    assert len(w.query_points(np.zeros((0, 3))).query) == 0


def test_contact_queries_refuse_bad_input(world):
    w, h = world
    m = len(w.contacts().pairs)
    assert m > 0
    unchanged(w, lambda: w.contact_geometry([m]), match=rf"rows\[0\] = {m}")
    unchanged(w, lambda: w.contact_geometry([-1]), match=r"rows\[0\] = -1")
    unchanged(w, lambda: w.contact_geometry([0.5]), exc=TypeError)
    unchanged(w, lambda: w.exact_boxes(np.ones(m + 1, dtype=bool)), match="select must have shape")
    unchanged(w, lambda: w.exact_boxes(np.ones(m)), exc=TypeError)
    # After a change of the world the last step's contacts are outdated.
    w.set_poses(h[:1], w.bodies(h[:1]).translations + 1)
    unchanged(w, lambda: w.contact_geometry(), match="outdated|changed")
    d = fg.World(3, detail="interval")
    d.insert(boxes(30, 4))
    d.step(0.1)
    d.insert(boxes(1, 5))
    unchanged(d, lambda: d.exact_boxes(), match="outdated|changed")


def test_contact_geometry_refuses_turning_pairs():
    w = fg.World(2)
    h = w.insert(fg.Frames.from_aabbs([[0, 0], [0.5, 0.5]], [[1, 1], [1.5, 1.5]]))
    w.set_angular_velocities(h[1:], [1.0])
    w.step(0.1)
    assert len(w.contacts().pairs) == 1
    unchanged(w, lambda: w.contact_geometry(), match=r"contact 0 \(rows\[0\]\): .*spins")


def test_frame_constructors_and_ray_cast_refuse_bad_input():
    with pytest.raises(ValueError, match="frame 1"):
        fg.Frames.from_aabbs([[0, 0, 0], [0, 0, np.nan]], [[1, 1, 1], [1, 1, 1]])
    with pytest.raises(ValueError, match="maxs must have shape|shape"):
        fg.Frames.from_aabbs(np.zeros((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError):
        fg.Frames.oriented_boxes([[0, 0, 0]], [[1, -1, 1]])
    with pytest.raises(ValueError):
        fg.Frames.oriented_boxes([[0, 0, 0]], [[1, 1, 1]], axes=np.zeros((1, 3, 3)))
    with pytest.raises(ValueError, match="vertices must have shape|shape"):
        fg.Frames.simplices(np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="frame 0"):
        fg.Frames.simplices(np.zeros((1, 4, 3)))
    a = boxes(3)
    with pytest.raises(ValueError, match="ray 1: .*non-finite"):
        fg.ray_cast(a, [[0, 0, 0], [0, np.nan, 0], [0, 0, 0]], np.ones((3, 3)))
    with pytest.raises(ValueError, match="ray 0"):
        fg.ray_cast(a, np.zeros((3, 3)), np.ones((3, 3)), -1.0)
    with pytest.raises(ValueError, match="shape"):
        fg.ray_cast(a, np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="out of range"):
        a.take([3])


@pytest.mark.parametrize(
    "steps, exc, match",
    [
        (-1, ValueError, r"steps = -1: expected an integer from 0 to 2\*\*63 - 1"),
        (2**64, ValueError, r"steps = 18446744073709551616"),
        (2.5, ValueError, r"steps = 2.5"),
        ("3", ValueError, r"steps = 3"),
        # Room for the step times is reserved first: 8 TB and a capacity
        # overflow are a MemoryError, not an abort or a PanicException.
        (2**40, MemoryError, "the step times"),
        (2**61, MemoryError, "the step times"),
    ],
)
def test_time_steps_refuses_bad_counts(world, steps, exc, match):
    w, _ = world
    unchanged(w, lambda: w.time_steps(0.1, steps), exc, match)


@pytest.mark.parametrize("bad", ["0.1", b"0.1", 1j, [0.1], np.array([0.1, 0.2]), None])
def test_scalar_arguments_must_be_real_numbers(world, bad):
    """A string, bytes, a complex, a list or an array for ``dt``, ``delta``
    or ``thickness`` is a TypeError naming it (``float()`` would take
    ``"0.1"``), and the world is unchanged."""
    w, _ = world
    unchanged(w, lambda: w.step(bad), TypeError, r"dt must be a real number")
    unchanged(w, lambda: w.time_steps(bad, 1), TypeError, r"dt must be a real number")
    unchanged(w, lambda: w.pairs_within(bad), TypeError, r"delta must be a real number")
    unchanged(w, lambda: w.debug_draw(bad), TypeError, r"dt must be a real number")
    tri = np.array([[0, 1, 2]], dtype=np.uint32)
    vertices = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    with pytest.raises(TypeError, match=r"thickness must be a real number"):
        fg.mesh_frames(vertices, triangles=tri, thickness=bad)


def test_real_scalar_arguments_of_every_kind_are_taken(world):
    """Python and numpy integers and floats, and 0-d arrays, are real numbers."""
    w, _ = world
    for dt in [0, 1, 0.05, np.float32(0.05), np.int64(0), np.array(0.05), Fraction(1, 20), True]:
        w.step(dt)
