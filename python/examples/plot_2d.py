"""A 2D scene and its contacts, drawn with matplotlib (notebook-style: run it
cell by cell, or as a script that writes contacts_2d.png).

    python python/examples/plot_2d.py [out.png]
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import fmbgrid as fg  # noqa: E402

# %% A ground, 60 boxes and 60 triangles falling and drifting.
rng = np.random.default_rng(4)
n = 60
w = fg.World(2)
ground = w.insert(fg.Frames.from_aabbs([[0.0, -1.0]], [[40.0, 0.0]]), moving=False)
angles = rng.uniform(0, np.pi, n)
c, s = np.cos(angles), np.sin(angles)
rotations = np.stack([np.stack([c, -s], 1), np.stack([s, c], 1)], 1)  # R @ x: rows (c, -s), (s, c)
boxes = fg.Frames.oriented_boxes(rng.uniform([2, 0.5], [38, 14], (n, 2)), rng.uniform(0.3, 1.2, (n, 2)), rotations=rotations)
corners = rng.uniform([2, 0.5], [38, 14], (n, 1, 2)) + rng.uniform(-1.2, 1.2, (n, 3, 2))
tris = fg.Frames.simplices(corners)
h = np.concatenate([
    w.insert(boxes, velocities=rng.uniform([-2, -12], [2, -4], (n, 2))),
    w.insert(tris, velocities=rng.uniform([-2, -12], [2, -4], (n, 2))),
])

# %% One step of 1/10: every pair that meets during it, with its exact box.
placed = w.frames()  # where the step starts them
r = w.step(0.1)
print(f"{len(r.pairs)} contacts between frames, {len(r.started)} body pairs started touching")

# %% Draw the frames where the step started them, and the contact boxes.
def polygons(frames):
    o, c, k = frames.origins, frames.components, frames.kinds
    quads = np.stack([o, o + c[:, 0], o + c[:, 0] + c[:, 1], o + c[:, 1]], 1)
    tris = np.stack([o, o + c[:, 0], o + c[:, 1], o + c[:, 1]], 1)
    return np.where((k == fg.CUBOID)[:, None, None], quads, tris)

fig, ax = plt.subplots(figsize=(10, 4.5))
touching = np.isin(placed.bodies, r.body_pairs.ravel())
ax.add_collection(PolyCollection(polygons(placed.frames), facecolors=np.where(touching, "#f4a261", "#a8dadc"),
                                 edgecolors="#1d3557", linewidths=0.6))
for (lo, hi) in r.boxes:
    ax.add_patch(Rectangle(lo, *(hi - lo), fill=False, edgecolor="#e63946", linewidth=1.2))
ax.set_xlim(0, 40)
ax.set_ylim(-1.5, 16)
ax.set_aspect("equal")
ax.set_title(f"fmbgrid: {len(r.pairs)} contacts over one step (exact boxes of the swept intersections in red)")
out = sys.argv[1] if len(sys.argv) > 1 else "contacts_2d.png"
fig.savefig(out, dpi=110, bbox_inches="tight")
print(f"wrote {out}")

# %% The engine's own debug lines (World.debug_draw): frames where they are
# now (after the step), the boxes they sweep over the next step, and the
# last step's contact boxes, coloured by what they belong to.
from matplotlib.collections import LineCollection  # noqa: E402

lines = w.debug_draw(0.1)
colours = {"fixed frame": "#1d3557", "fixed frame in contact": "#e76f51", "moving frame": "#457b9d",
           "moving frame in contact": "#f4a261", "swept box": "#cccccc", "intersection box": "#e63946",
           "within tolerance": "#2a9d8f"}
fig, ax = plt.subplots(figsize=(10, 4.5))
for k, name in enumerate(fg.DEBUG_KINDS):
    pick = lines.kinds == k
    if pick.any():
        segments = np.stack([lines.starts[pick], lines.ends[pick]], 1)
        ax.add_collection(LineCollection(segments, colors=colours.get(name, "k"), linewidths=0.8, label=name))
ax.set_xlim(0, 40)
ax.set_ylim(-1.5, 16)
ax.set_aspect("equal")
ax.legend(loc="upper right", fontsize=7)
ax.set_title("fmbgrid: World.debug_draw after the step")
debug_out = out[:-4] + "_debug.png" if out.endswith(".png") else out + "_debug.png"
fig.savefig(debug_out, dpi=110, bbox_inches="tight")
print(f"wrote {debug_out}")
