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


def build_world(ref):
    w = fg.World(3)
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
