"""fmbgrid's static loop alone (uniform.py's scene and world): `set_poses`
with every body at its pose, then `step`, timed in CPU time of this
process (time.process_time), which moves less than wall time on a shared
machine; the medians of `--steps` steps. For comparing two builds of the
bindings in turns, e.g. the installed one and another on PYTHONPATH:

    RAYON_NUM_THREADS=1 python python/bench/static_loop.py --n 100000 --steps 9
    RAYON_NUM_THREADS=1 PYTHONPATH=/tmp/base_pkg python python/bench/static_loop.py --n 100000 --steps 9
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from uniform import DT, fmbgrid_world, uniform  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--steps", type=int, default=9)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    centers, half, rot, _, vel = uniform(args.n, args.seed)
    w, h = fmbgrid_world(centers, half, rot, np.zeros_like(vel))
    w.step(DT)
    set_t, step_t = [], []
    for _ in range(args.steps):
        t0 = time.process_time()
        w.set_poses(h, centers, rot)
        t1 = time.process_time()
        w.step(DT)
        t2 = time.process_time()
        set_t.append(t1 - t0)
        step_t.append(t2 - t1)
    s, t = np.median(set_t) * 1e3, np.median(step_t) * 1e3
    print(f"n {args.n}: set_poses {s:.1f} ms + step {t:.1f} ms = {s + t:.1f} ms (CPU time, medians of {args.steps})")


if __name__ == "__main__":
    sys.exit(main())
