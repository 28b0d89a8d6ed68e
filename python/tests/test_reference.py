"""Every answer equal to the Rust API's on the same input, bit for bit.

The reference answers come from python/src/reference.rs, which calls the
Rust crate directly on seeded random frames and a seeded world (none of
the bindings' code).
"""

import numpy as np
import pytest

import fmbgrid as fg


def bits(x):
    """The float64 bits (so that -0.0 != 0.0 and NaN == NaN)."""
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64)).view(np.uint64)


def same(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.array_equal(bits(a), bits(b))


def frames(d):
    return fg.Frames(d["origins"], d["components"], np.array(d["kinds"]), d["velocities"])


def rows(items, key, width):
    """A column of optional results: NaN where the Rust answer is None."""
    out = []
    for it in items:
        if it is None:
            out.append([np.nan] * width)
        else:
            v = it[key] if key else it
            out.append(np.ravel(v).tolist())
    return np.array(out, dtype=np.float64).reshape(len(items), width)


@pytest.mark.parametrize("dim", [2, 3])
def test_narrow_phase_bit_for_bit(reference, dim):
    ref = reference[f"narrow_{dim}d"]
    a, b = frames(ref["a"]), frames(ref["b"])
    n = len(a)
    assert n == len(ref["overlaps"]) > 100

    assert fg.overlaps(a, b).tolist() == ref["overlaps"]

    hit = fg.intersect(a, b)
    assert hit.hit.tolist() == [x is not None for x in ref["intersect"]]
    same(hit.boxes.reshape(n, -1), rows(ref["intersect"], "box", 2 * dim))
    same(hit.intervals, rows(ref["intersect"], "time", 2))
    # Some pairs of each kind: the test means something.
    assert 0.2 * n < hit.hit.sum() < 0.9 * n

    iv = fg.overlap_interval(a, b)
    assert iv.hit.tolist() == [x is not None for x in ref["overlap_interval"]]
    same(iv.intervals, rows(ref["overlap_interval"], None, 2))

    d = fg.distance(a, b)
    same(d.distance, [x["distance"] for x in ref["distance"]])
    same(d.on_a, [x["on_a"] for x in ref["distance"]])
    same(d.on_b, [x["on_b"] for x in ref["distance"]])

    p = fg.penetration(a, b)
    assert p.hit.tolist() == [x is not None for x in ref["penetration"]]
    same(p.depth, rows(ref["penetration"], "depth", 1).ravel())
    same(p.normal, rows(ref["penetration"], "normal", dim))

    c = fg.first_contact(a, b)
    assert c.hit.tolist() == [x is not None for x in ref["first_contact"]]
    same(c.time, rows(ref["first_contact"], "time", 1).ravel())
    same(c.normal, rows(ref["first_contact"], "normal", dim))
    same(c.point, rows(ref["first_contact"], "point", dim))
    same(c.depth, rows(ref["first_contact"], "depth", 1).ravel())

    r = fg.ray_cast(a, ref["ray_origins"], ref["ray_directions"], 10.0)
    assert r.hit.tolist() == [x is not None for x in ref["ray_cast"]]
    same(r.time, rows(ref["ray_cast"], "time", 1).ravel())
    same(r.normal, rows(ref["ray_cast"], "normal", dim))


def test_narrow_phase_pairs_argument(reference):
    ref = reference["narrow_3d"]
    a, b = frames(ref["a"]), frames(ref["b"])
    n = len(a)
    # The pairs (i, i) given explicitly, reversed order: same answers.
    idx = np.arange(n)[::-1]
    pairs = np.stack([idx, idx], axis=1)
    got = fg.intersect(a, b, pairs)
    want = fg.intersect(a, b)
    same(got.boxes, want.boxes[::-1])
    # Symmetric, bit for bit (the Rust API's promise).
    swapped = fg.intersect(b, a)
    same(swapped.boxes, want.boxes)
    same(swapped.intervals, want.intervals)


def build_world(ref, detail="exact_box"):
    w = fg.World(3, detail=detail)
    bodies = ref["bodies"]
    h = w.insert(
        frames(ref["frames"]),
        np.array(ref["bodies_of_frames"]),
        moving=np.array([b["moving"] for b in bodies]),
        velocities=[b["velocity"] for b in bodies],
        translations=[b["translation"] for b in bodies],
        # The Rust pose's linear part by columns: R is its transpose.
        rotations=np.array([b["rotation"] for b in bodies]).transpose(0, 2, 1),
        user_data=np.arange(len(bodies)),
    )
    return w, h


def test_world_steps_bit_for_bit(reference):
    ref = reference["world_3d"]
    w, h = build_world(ref)
    index = {int(x): k for k, x in enumerate(h)}
    total = 0
    for s in ref["steps"]:
        r = w.step(s["dt"])
        m = len(s["pairs"])
        total += m
        got_pairs = np.vectorize(index.__getitem__, otypes=[np.int64])(r.pairs) if m else np.zeros((0, 2))
        assert got_pairs.tolist() == s["pairs"]
        assert r.frames.tolist() == s["frames"]
        same(r.boxes, np.array(s["boxes"]).reshape(m, 2, 3))
        same(r.intervals, np.array(s["intervals"]).reshape(m, 2))
        started = [p for kind, p in s["events"] if kind == "started"]
        ended = [p for kind, p in s["events"] if kind == "ended"]
        assert [[index[int(a)], index[int(b)]] for a, b in r.started] == started
        assert [[index[int(a)], index[int(b)]] for a, b in r.ended] == ended
    assert total > 50
    info = w.bodies(h)
    same(info.translations, ref["final_translations"])
    assert info.user_data.tolist() == list(range(len(h)))


def test_world_queries_bit_for_bit(reference):
    ref = reference["world_3d"]
    w, h = build_world(ref)
    index = {int(x): k for k, x in enumerate(h)}
    p = w.pairs_within(0.25)
    want = ref["pairs_within_0.25"]
    assert len(p.pairs) == len(want) > 10
    assert [[index[int(a)], index[int(b)]] for a, b in p.pairs] == [x["pair"] for x in want]
    assert p.frames.tolist() == [x["frames"] for x in want]
    same(p.distances, [x["distance"] for x in want])
    same(p.on_a, [x["on_a"] for x in want])
    same(p.on_b, [x["on_b"] for x in want])

    rays = ref["rays"]
    r = w.cast_rays([x["origin"] for x in rays], [x["direction"] for x in rays], 20.0)
    assert r.hit.tolist() == [x["hit"] is not None for x in rays]
    assert r.hit.any()
    for k, x in enumerate(rays):
        if x["hit"] is not None:
            assert index[int(r.bodies[k])] == x["hit"]["body"]
            assert r.frames[k] == x["hit"]["frame"]
            same(r.times[k], x["hit"]["time"])
            same(r.normals[k], x["hit"]["normal"])


def test_snapshot_steps_bit_for_bit(reference):
    ref = reference["world_3d"]
    w, _ = build_world(ref)
    w.step(0.1)
    copy = fg.World.restore(w.snapshot())
    for _ in range(4):
        a, b = w.step(0.1), copy.step(0.1)
        for x, y in zip(a, b):
            assert x.dtype == y.dtype
            assert np.array_equal(x.view(np.uint64) if x.dtype == np.float64 else x,
                                  y.view(np.uint64) if y.dtype == np.float64 else y)


def ids(index, bodies, frames):
    """(body index, frame) rows of a query's answer, as the reference lists them."""
    return [[index[int(b)], int(f)] for b, f in zip(bodies, frames)]


def per_query(hits, count):
    """Rows of a batch answer split by query (rows come by query)."""
    assert np.all(np.diff(hits.query) >= 0)
    bounds = np.searchsorted(hits.query, np.arange(count + 1))
    return [slice(bounds[q], bounds[q + 1]) for q in range(count)]


def test_world_batch_queries_bit_for_bit(reference):
    ref = reference["world_3d"]
    q = ref["queries"]
    w, h = build_world(ref)
    index = {int(x): k for k, x in enumerate(h)}

    hits = w.query_aabbs(q["aabb_mins"], q["aabb_maxs"])
    parts = per_query(hits, len(q["aabb_hits"]))
    assert [ids(index, hits.bodies[s], hits.frames[s]) for s in parts] == q["aabb_hits"]
    assert sum(map(len, q["aabb_hits"])) > 20

    hits = w.query_points(q["points"])
    parts = per_query(hits, len(q["point_hits"]))
    assert [ids(index, hits.bodies[s], hits.frames[s]) for s in parts] == q["point_hits"]
    assert sum(map(len, q["point_hits"])) > 5

    hits = w.query_frames(frames(q["probes"]))
    parts = per_query(hits, len(q["probe_hits"]))
    want = q["probe_hits"]
    assert [ids(index, hits.bodies[s], hits.frames[s]) for s in parts] == [[x["id"] for x in p] for p in want]
    flat = [x for p in want for x in p]
    assert len(flat) > 10
    same(hits.boxes, np.array([x["box"] for x in flat]).reshape(len(flat), 2, 3))
    same(hits.intervals, np.array([x["time"] for x in flat]).reshape(len(flat), 2))

    rays = ref["rays"]
    hits = w.cast_rays_all([x["origin"] for x in rays], [x["direction"] for x in rays], 20.0)
    parts = per_query(fg.QueryHits(hits.ray, hits.bodies, hits.frames), len(rays))
    want = q["rays_all"]
    assert [ids(index, hits.bodies[s], hits.frames[s]) for s in parts] == [[x["id"] for x in r] for r in want]
    flat = [x for r in want for x in r]
    assert len(flat) > len([r for r in rays if r["hit"]])  # some rays meet several frames
    same(hits.times, [x["time"] for x in flat])
    same(hits.normals, np.array([x["normal"] for x in flat]).reshape(len(flat), 3))


def run_steps(ref):
    w, h = build_world(ref)
    for s in ref["steps"]:
        w.step(s["dt"])
    return w, h


def test_contact_geometry_and_debug_lines_bit_for_bit(reference):
    ref = reference["world_3d"]
    w, _ = run_steps(ref)
    want = ref["contact_geometry"]
    g = w.contact_geometry()
    assert len(g.hit) == len(w.contacts().pairs) == len(want) > 5
    assert g.hit.tolist() == [x is not None for x in want]
    same(g.time, rows(want, "time", 1).ravel())
    same(g.normal, rows(want, "normal", 3))
    same(g.point, rows(want, "point", 3))
    same(g.depth, rows(want, "depth", 1).ravel())
    # Some rows only, in any order.
    pick = np.array([len(want) - 1, 0, 2])
    some = w.contact_geometry(pick)
    same(some.normal, g.normal[pick])

    lines = w.debug_draw(0.1)
    want = ref["debug_lines"]
    assert len(lines.kinds) == len(want) > 100
    same(lines.starts, [x[0] for x in want])
    same(lines.ends, [x[1] for x in want])
    assert lines.kinds.tolist() == [x[2] for x in want]
    assert {fg.DEBUG_KINDS[k] for k in lines.kinds} >= {"intersection box", "swept box"}
    # Without the contacts: no intersection boxes, no frame "in contact".
    quiet = w.debug_draw(0.1, contacts=False)
    assert fg.DEBUG_KINDS.index("intersection box") not in quiet.kinds.tolist()


def test_set_poses_then_step_bit_for_bit(reference):
    ref = reference["world_3d"]
    w, h = run_steps(ref)
    index = {int(x): k for k, x in enumerate(h)}
    r = ref["reposed"]
    # Rotations as matrices acting on column vectors: the columns' transpose.
    rot = np.array(r["rotation_columns"]).transpose(0, 2, 1)
    w.set_poses(h[r["bodies"]], r["translations"], rot)
    s = w.step(0.1)
    m = len(r["pairs"])
    assert m > 10
    assert [[index[int(a)], index[int(b)]] for a, b in s.pairs] == r["pairs"]
    assert s.frames.tolist() == r["frames"]
    same(s.boxes, np.array(r["boxes"]).reshape(m, 2, 3))
    same(s.intervals, np.array(r["intervals"]).reshape(m, 2))


def test_exact_boxes_on_demand_bit_for_bit(reference):
    ref = reference["world_3d"]
    want = ref["interval_step"]
    w, _ = build_world(ref, detail="interval")
    s = w.step(0.1)
    m = len(want["boxes"])
    assert len(s.boxes) == m > 10
    same(s.boxes, np.array(want["boxes"]).reshape(m, 2, 3))
    same(s.intervals, np.array(want["intervals"]).reshape(m, 2))
    boxes = w.exact_boxes(np.arange(m) % 2 == 0)
    same(boxes, np.array(want["exact_boxes"]).reshape(m, 2, 3))
    same(w.contacts().boxes, boxes)
    # The rows asked for changed (exact boxes are smaller), the others not.
    assert not np.array_equal(boxes[::2], s.boxes[::2])
    same(boxes[1::2], s.boxes[1::2])
