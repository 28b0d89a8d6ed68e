"""The uniform scene from Python: fmbgrid's Python API against the Rust step
on the same world (the Python layer's overhead), and against coal,
python-fcl and pybullet when they are installed, each timed for what a
user waits for: setting the poses, the collision, reading the pairs back.

The scene: N oriented boxes, half extents uniform in 0.5-1.5, uniformly
random orientations, uniformly placed in a cube of 88 units^3 per box,
velocity components uniform in -3..3, seeded (numpy's PCG64). One thread
(RAYON_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1 unless set).

* static: every engine tests the end poses; fmbgrid's bodies are moving
  bodies with zero velocity (fixed bodies are never paired), and its step
  is `set_poses` (all bodies, from arrays) + `step` + the pair arrays,
  run twice: with the exact boxes (the default) and with
  `detail="interval"` (the pairs and their contact intervals, no box: what
  the peers compute);
* moving: fmbgrid's step is `set_velocities` (all) + `step` (every pair
  that meets during the step, swept, with the exact box and interval) +
  the pair arrays; the peers test end poses (set + collide + read), so
  their moving figure is their static one at new poses.

fmbgrid's Python loop is set against the same loop in Rust
(`World.time_steps`) on a copy of the same world: the same poses or
velocities set, the step, the body pairs read as indices (see
`fmbgrid_loop`). Every loop, fmbgrid's and the peers', is set up and warmed
up first; then all take turns, round by round (`--steps` rounds, each
stepping every loop once), so that the load of a shared machine weighs on
each alike: the ratios are printed as ratios of medians and as medians of
the rounds' ratios.

    python python/bench/uniform.py --n 100000 --steps 5
    python python/bench/uniform.py --n 20000 --peers coal,fcl,pybullet

Writes rows to benches/results/<machine>/python_bench.csv (columns in
benches/results/README.md) and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import platform
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
# numpy's BLAS threads would spin on the other core after numpy's work
# (one core of two on the reference machine): one thread, as for the engine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import fmbgrid as fg  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
# The rows' machine, commit and date columns, as every benchmark writes them.
sys.path.insert(0, str(REPO / "benches" / "support"))
from stamp import commit, machine, today  # noqa: E402
DT = 1 / 60
HEADER = [
    "machine", "commit", "date", "bench", "scene", "n", "threads", "engine", "includes",
    "median_ms", "set_ms", "collide_ms", "read_ms", "pairs", "ratio_to_fmbgrid",
]


def uniform(n: int, seed: int):
    rng = np.random.default_rng(seed)
    side = (88.0 * n) ** (1 / 3)
    centers = rng.uniform(0, side, (n, 3))
    half = rng.uniform(0.5, 1.5, (n, 3))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    rot = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        1,
    )
    vel = rng.uniform(-3, 3, (n, 3))
    return centers, half, rot, q, vel


def median_ms(xs) -> float:
    return float(np.median(np.asarray(xs)) * 1e3)


def fmbgrid_world(centers, half, rot, vel, detail="exact_box"):
    w = fg.World(3, detail=detail)
    frames = fg.Frames.oriented_boxes(np.zeros_like(centers), half)
    h = w.insert(frames, velocities=vel, translations=centers, rotations=rot)
    return w, h


class Timed:
    """One loop's timed steps, round by round: set, collide and read times
    (seconds) and the pairs of the last step."""

    def __init__(self):
        self.set, self.collide, self.read = [], [], []
        self.pair_set = set()

    def add(self, t0, t1, t2, t3, pair_set=None):
        self.set.append(t1 - t0)
        self.collide.append(t2 - t1)
        self.read.append(t3 - t2)
        if pair_set is not None:
            self.pair_set = pair_set

    def totals(self):
        return np.add(np.add(self.set, self.collide), self.read)

    def result(self):
        return {"set": median_ms(self.set), "collide": median_ms(self.collide), "read": median_ms(self.read),
                "total": median_ms(self.totals()), "pairs": len(self.pair_set), "pair_set": self.pair_set}


def fmbgrid_loop(scene, moving, detail="exact_box"):
    """Three copies of one world, each warmed up by two steps of its own loop:
    the Rust step alone, the Rust twin of the Python loop (one
    World::set_poses with every body / set_velocity on every body, then the
    step, then the body pairs read as indices), the Python loop. Returns
    `(round, result)`: each call of `round` makes two steps of each world and
    times the second (`time_steps` reads every body before its first step,
    which would warm the cache for it), so the three worlds are at the same
    state in every timed step and do the same work in it (the moving scene's
    bodies move)."""
    centers, half, rot, _, vel = scene
    v = vel if moving else np.zeros_like(vel)
    w0, h = fmbgrid_world(centers, half, rot, v, detail)
    w0.step(DT)  # the grid, the cell size
    saved = w0.snapshot()
    also = "velocities" if moving else "poses"
    rust_world = fg.World.restore(saved)
    twin = fg.World.restore(saved)
    w = fg.World.restore(saved)
    timed, rust, rust_loop = Timed(), [], []

    def python_step():
        t0 = time.perf_counter()
        if moving:
            w.set_velocities(h, v)
        else:
            w.set_poses(h, centers, rot)
        t1 = time.perf_counter()
        r = w.step(DT)
        t2 = time.perf_counter()
        # The pairs as a user reads them: the (P, 2) handle array, and
        # as indices into the user's own arrays (handle = index here).
        pairs_idx = (r.body_pairs & 0xFFFFFFFF).astype(np.int64)
        t3 = time.perf_counter()
        return (t0, t1, t2, t3), pairs_idx

    rust_world.time_steps(DT, 2)
    twin.time_steps(DT, 2, also)
    for _ in range(2):
        python_step()
    last = []

    def one_round():
        rust.append(rust_world.time_steps(DT, 2)[1])
        rust_loop.append(twin.time_steps(DT, 2, also)[1])
        python_step()
        times, pairs_idx = python_step()
        timed.add(*times)
        last[:] = [pairs_idx]

    def result():
        pairs_idx = last[0]
        out = timed.result()
        out.update({
            "rust": median_ms(rust),
            "rust_loop": median_ms(rust_loop),
            "python": out["total"],
            "totals": timed.totals(),
            "pairs": len(pairs_idx),
            # The overhead round by round (the Python loop over its Rust twin
            # timed just before it): on a loaded machine, steadier than the
            # ratio of the two medians.
            "paired": float(np.median(np.divide(timed.totals(), rust_loop))) - 1,
            "pair_set": {(int(a), int(b)) for a, b in pairs_idx} if not moving else None,
        })
        return out

    return one_round, result


def collide_loop(scene, detail="exact_box"):
    """`fg.collide` in one call, frames made from the arrays each time (as a
    static loop sets every pose): `(round, result)` as `fmbgrid_loop`."""
    centers, half, rot, _, _ = scene
    # The boxes' axes as rows (`axes=`, the transpose of the rotations the
    # world takes), so that making the frames checks no rotation: as the
    # static loop, whose unchanged poses are not checked either.
    axes = np.ascontiguousarray(np.transpose(rot, (0, 2, 1)))
    timed = Timed()

    def step(record=True):
        t0 = time.perf_counter()
        frames = fg.Frames.oriented_boxes(centers, half, axes=axes)
        t1 = time.perf_counter()
        r = fg.collide(frames, detail=detail)
        t2 = time.perf_counter()
        pairs = r.pairs
        t3 = time.perf_counter()
        if record:
            timed.add(t0, t1, t2, t3, {(int(a), int(b)) for a, b in pairs})

    step(record=False)
    return step, timed.result


def coal_loop(scene, timed):
    """coal's loop (poses set + update + collide + pairs read) as a step
    function recording into `timed`, after one untimed step."""
    import coal

    centers, half, rot, _, _ = scene
    n = len(centers)
    geoms = [coal.Box(*(2 * half[k])) for k in range(n)]
    objs = [coal.CollisionObject(g, coal.Transform3s(rot[k], centers[k])) for k, g in enumerate(geoms)]
    manager = coal.DynamicAABBTreeCollisionManager()
    for o in objs:
        manager.registerObject(o)
    manager.setup()
    index = {g.id(): k for k, g in enumerate(geoms)}

    def step(record=True):
        t0 = time.perf_counter()
        for k, o in enumerate(objs):
            o.setTransform(coal.Transform3s(rot[k], centers[k]))
        t1 = time.perf_counter()
        manager.update()
        callback = coal.CollisionCallBackDefault()
        callback.data.request.num_max_contacts = 10**8
        manager.collide(callback)
        t2 = time.perf_counter()
        found = set()
        for c in callback.data.result.getContacts():
            i, j = index[c.o1.id()], index[c.o2.id()]
            found.add((min(i, j), max(i, j)))
        t3 = time.perf_counter()
        if record:
            timed.add(t0, t1, t2, t3, found)

    step(record=False)
    return step, lambda: None


def fcl_loop(scene, timed):
    """python-fcl's loop, as [`coal_loop`]'s."""
    import fcl

    centers, half, rot, _, _ = scene
    n = len(centers)
    geoms = [fcl.Box(*(2 * half[k])) for k in range(n)]
    objs = [fcl.CollisionObject(g, fcl.Transform(rot[k], centers[k])) for k, g in enumerate(geoms)]
    manager = fcl.DynamicAABBTreeCollisionManager()
    manager.registerObjects(objs)
    manager.setup()
    index = {id(g): k for k, g in enumerate(geoms)}

    def step(record=True):
        t0 = time.perf_counter()
        for k, o in enumerate(objs):
            o.setTransform(fcl.Transform(rot[k], centers[k]))
        t1 = time.perf_counter()
        manager.update()
        data = fcl.CollisionData(request=fcl.CollisionRequest(num_max_contacts=10**8, enable_contact=True))
        manager.collide(data, fcl.defaultCollisionCallback)
        t2 = time.perf_counter()
        found = set()
        for c in data.result.contacts:
            i, j = index[id(c.o1)], index[id(c.o2)]
            found.add((min(i, j), max(i, j)))
        t3 = time.perf_counter()
        if record:
            timed.add(t0, t1, t2, t3, found)

    step(record=False)
    return step, lambda: None


def pybullet_loop(scene, timed):
    """pybullet's loop (poses reset + performCollisionDetection + contact
    points read), as [`coal_loop`]'s; the second function disconnects."""
    import pybullet as p

    centers, half, _, quat, _ = scene
    n = len(centers)
    client = p.connect(p.DIRECT)
    # Mass 1 (pybullet reports no contact between bodies of mass 0), no
    # physics step: collision detection only.
    xyzw = np.concatenate([quat[:, 1:], quat[:, :1]], axis=1)  # (w, x, y, z) -> (x, y, z, w)
    bodies = []
    for k in range(n):
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half[k].tolist(), physicsClientId=client)
        bodies.append(p.createMultiBody(1.0, shape, -1, centers[k].tolist(), xyzw[k].tolist(),
                                        physicsClientId=client))

    def step(record=True):
        t0 = time.perf_counter()
        for k, b in enumerate(bodies):
            p.resetBasePositionAndOrientation(b, centers[k].tolist(), xyzw[k].tolist(), physicsClientId=client)
        t1 = time.perf_counter()
        p.performCollisionDetection(physicsClientId=client)
        t2 = time.perf_counter()
        found = set()
        for c in p.getContactPoints(physicsClientId=client):
            if c[8] < 0:  # contactDistance: negative = penetrating
                i, j = c[1], c[2]
                found.add((min(i, j), max(i, j)))
        t3 = time.perf_counter()
        if record:
            timed.add(t0, t1, t2, t3, found)

    step(record=False)
    return step, lambda: p.disconnect(client)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--peers", default="coal,fcl,pybullet", help="comma-separated: coal, fcl, pybullet (or none)")
    ap.add_argument("--csv", default=None, help="default: benches/results/<machine>/python_bench.csv")
    args = ap.parse_args()

    scene = uniform(args.n, args.seed)
    threads = int(os.environ["RAYON_NUM_THREADS"])
    rows = []

    def row(scene_name, engine, includes, median, set_ms="", col="", read="", pairs="", ratio=""):
        fmt = lambda x: f"{x:.3f}" if isinstance(x, float) else str(x)  # noqa: E731
        rows.append([machine(), commit(), today(),
                     "python_uniform", scene_name, args.n, threads, engine, includes, fmt(median), fmt(set_ms),
                     fmt(col), fmt(read), pairs, fmt(ratio)])

    # Every loop is set up (and warmed up) first, then all are timed in
    # turns, round by round: each round steps fmbgrid's three loops and then
    # each peer once, so that a shared machine's load weighs on each alike
    # and the ratios are measured side by side.
    # The static scene twice: with the exact boxes (the default), and with
    # `detail="interval"`, the pairs and their contact intervals only, which
    # is what the peers compute.
    configs = (("static", False, "exact_box"), ("static", False, "interval"), ("moving", True, "exact_box"))
    loops = {}
    for name, moving, detail in configs:
        key = name if detail == "exact_box" else f"{name}-{detail}"
        loops[key] = fmbgrid_loop(scene, moving, detail)
    one_call = {detail: collide_loop(scene, detail) for detail in ("exact_box", "interval")}
    makers = {"coal": coal_loop, "fcl": fcl_loop, "pybullet": pybullet_loop}
    peers = {}
    for peer in [p for p in args.peers.split(",") if p and p != "none"]:
        timed, t = Timed(), time.perf_counter()
        try:
            step, close = makers[peer](scene, timed)
        except ImportError:
            print(f"{peer}: not installed, skipped", flush=True)
            continue
        peers[peer] = (timed, step, close, time.perf_counter() - t)
    try:
        for _ in range(args.steps):
            for one_round, _ in loops.values():
                one_round()
            for one_round, _ in one_call.values():
                one_round()
            for _, step, _, _ in peers.values():
                step()
    finally:
        for _, _, close, _ in peers.values():
            close()

    results = {}
    for name, moving, detail in configs:
        key = name if detail == "exact_box" else f"{name}-{detail}"
        r = results[key] = loops[key][1]()
        setter, rust_setter = ("set_velocities", "World::set_velocity per body") if moving else (
            "set_poses", "World::set_poses (all bodies)")
        suffix = "" if detail == "exact_box" else f"; detail={detail}"
        overhead = r["python"] / r["rust_loop"] - 1
        row(name, "fmbgrid rust", f"World::step alone, in Rust{suffix}", r["rust"], pairs=r["pairs"],
            ratio=r["rust"] / r["python"])
        row(name, "fmbgrid rust", f"{rust_setter} + step + pairs read, in Rust{suffix}", r["rust_loop"],
            pairs=r["pairs"],
            ratio=r["rust_loop"] / r["python"])
        row(name, "fmbgrid python", f"{setter} (all bodies, arrays) + step + pairs read{suffix}",
            r["python"], r["set"], r["collide"], r["read"], r["pairs"], 1.0)
        print(f"{key:7} fmbgrid: Rust step {r['rust']:.1f} ms; Rust {rust_setter} + step + read {r['rust_loop']:.1f} ms; "
              f"Python {setter} {r['set']:.1f} + step {r['collide']:.1f} + read {r['read']:.2f} = {r['python']:.1f} ms "
              f"({r['python'] / r['rust'] - 1:+.1%} over the Rust step alone, {overhead:+.1%} over the Rust loop, "
              f"{r['paired']:+.1%} round by round), "
              f"{r['pairs']} pairs", flush=True)

    base, pairs_only = results["static"], results["static-interval"]
    for detail, (_, result) in one_call.items():
        r = result()
        loop = base if detail == "exact_box" else pairs_only
        same = r["pair_set"] == loop["pair_set"]
        row("static", "fmbgrid python", f"Frames.oriented_boxes + collide (one call) + pairs read; detail={detail}",
            r["total"], r["set"], r["collide"], r["read"], r["pairs"], r["total"] / loop["python"])
        print(f"static  fmbgrid collide ({detail}): frames {r['set']:.1f} + collide {r['collide']:.1f} + read "
              f"{r['read']:.2f} = {r['total']:.1f} ms ({r['total'] / loop['python']:.2f}x the Python static loop "
              f"of the same detail), {r['pairs']} pairs, "
              f"{'same pairs as the world' if same else 'PAIRS DIFFER from the world'}", flush=True)
    for peer, (timed, _, _, setup) in peers.items():
        r = timed.result()
        same = r["pair_set"] == base["pair_set"]
        diff = len(r["pair_set"] ^ base["pair_set"])
        # Round by round: each peer's step over fmbgrid's of the same round.
        paired = {k: float(np.median(np.divide(timed.totals(), results[k]["totals"])))
                  for k in ("static", "static-interval", "moving")}
        row("static", peer, "poses set + collide (end poses) + pairs read", r["total"], r["set"], r["collide"],
            r["read"], r["pairs"], r["total"] / base["python"])
        print(f"static  {peer}: set {r['set']:.1f} + collide {r['collide']:.1f} + read {r['read']:.1f} = "
              f"{r['total']:.1f} ms ({r['total'] / base['python']:.1f}x fmbgrid's Python static step; "
              f"{r['total'] / pairs_only['python']:.1f}x with detail=interval, "
              f"{r['total'] / results['moving']['python']:.1f}x its moving step; round by round "
              f"{paired['static']:.1f}x, {paired['static-interval']:.1f}x, {paired['moving']:.1f}x), "
              f"{r['pairs']} pairs, "
              f"{'same pairs as fmbgrid' if same else f'{diff} pairs differ from fmbgrid'}; "
              f"set-up {setup:.0f} s", flush=True)

    out = pathlib.Path(args.csv) if args.csv else REPO / "benches" / "results" / machine() / "python_bench.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with open(out, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(HEADER)
        w.writerows(rows)
    print(f"wrote {len(rows)} rows to {out} (python {platform.python_version()}, fmbgrid {fg.__version__})")


if __name__ == "__main__":
    sys.exit(main())
