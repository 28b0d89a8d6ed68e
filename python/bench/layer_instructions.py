"""The Python layer's instructions over the same loop in Rust, for
callgrind: `K` steps of uniform.py's static loop (`set_poses` with every
body at its pose, `step`, the body pairs read as indices) through the
Python API (`python`), or of its Rust twin (`twin`: `World.time_steps`
with `World::set_poses` of every body, the step and the body pairs read,
in Rust), after the same set-up. Run it under callgrind at two values of
`K`; the difference over the extra steps is the cost of a warm step:

    for mode in python twin; do for k in 4 9; do
      valgrind --tool=callgrind --callgrind-out-file=$mode.$k \\
        python python/bench/layer_instructions.py $mode 20000 interval $k
    done; done
    # (summary of mode.9 - summary of mode.4) / 5, per mode
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("RAYON_NUM_THREADS", "1")
# numpy's BLAS threads spin for a while after the scene's set-up, and
# callgrind counts their instructions too.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from uniform import DT, fg, fmbgrid_world, uniform  # noqa: E402


def main() -> None:
    if len(sys.argv) != 5 or sys.argv[1] not in ("python", "twin"):
        sys.exit("usage: layer_instructions.py python|twin N DETAIL K")
    mode, n, detail, k = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    centers, half, rot, _, vel = uniform(n, 42)  # uniform.py's default seed
    w0, h = fmbgrid_world(centers, half, rot, np.zeros_like(vel), detail)
    w0.step(DT)  # the grid, the cell size
    w = fg.World.restore(w0.snapshot())
    # Two warm-up steps, then K, as uniform.py times them.
    if mode == "python":
        for _ in range(2 + k):
            w.set_poses(h, centers, rot)
            r = w.step(DT)
            (r.body_pairs & 0xFFFFFFFF).astype(np.int64)
    else:
        w.time_steps(DT, 2 + k, "poses")


if __name__ == "__main__":
    main()
