#!/usr/bin/env python3
"""Convert a local copy of the npm `bunny` package (index.js) to OBJ, binary STL,
ASCII PLY and OFF.  Reads local files only; downloads nothing.

Usage (from the repository root, after `npm pack bunny && tar xzf bunny-1.0.1.tgz`
in a scratch directory):

    python3 assets/tools/npm_to_obj.py /path/to/package/index.js assets/meshes/bunny

writes assets/meshes/bunny.obj, bunny.stl, bunny.ply; add --off to also write
bunny.off (TetGen input; not committed).  It prints the vertex and triangle
counts and the boundary / non-manifold edge counts and signed volume.
"""
import json
import re
import struct
import sys
from collections import Counter


def load_npm_js(path):
    text = open(path, encoding="utf-8").read()
    arrays = {}
    for name in ("positions", "cells"):
        m = re.search(r"exports\.%s\s*=\s*(\[.*?\]\])" % name, text, re.S)
        if not m:
            sys.exit("no exports.%s in %s" % (name, path))
        arrays[name] = json.loads(m.group(1))
    return arrays["positions"], arrays["cells"]


def check(pos, tris):
    und = Counter()
    directed = Counter()
    for t in tris:
        for i in range(3):
            a, b = t[i], t[(i + 1) % 3]
            und[(min(a, b), max(a, b))] += 1
            directed[(a, b)] += 1
    boundary = sum(1 for c in und.values() if c == 1)
    nonmanifold = sum(1 for c in und.values() if c > 2)
    misoriented = sum(1 for c in directed.values() if c > 1)
    vol = 0.0
    for a, b, c in tris:
        (ax, ay, az), (bx, by, bz), (cx, cy, cz) = pos[a], pos[b], pos[c]
        vol += (ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)) / 6.0
    return boundary, nonmanifold, misoriented, vol


def normal(p, q, r):
    ux, uy, uz = q[0] - p[0], q[1] - p[1], q[2] - p[2]
    vx, vy, vz = r[0] - p[0], r[1] - p[1], r[2] - p[2]
    n = (uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx)
    l = (n[0] ** 2 + n[1] ** 2 + n[2] ** 2) ** 0.5
    return tuple(x / l for x in n) if l > 0 else (0.0, 0.0, 0.0)


def write_obj(path, pos, tris, header):
    with open(path, "w", newline="\n") as f:
        for line in header:
            f.write("# %s\n" % line)
        for x, y, z in pos:
            f.write("v %.6f %.6f %.6f\n" % (x, y, z))
        for a, b, c in tris:
            f.write("f %d %d %d\n" % (a + 1, b + 1, c + 1))


def write_stl(path, pos, tris, header):
    with open(path, "wb") as f:
        f.write(header.encode("ascii")[:80].ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for a, b, c in tris:
            p, q, r = pos[a], pos[b], pos[c]
            f.write(struct.pack("<12fH", *normal(p, q, r), *p, *q, *r, 0))


def write_ply(path, pos, tris, header):
    with open(path, "w", newline="\n") as f:
        f.write("ply\nformat ascii 1.0\n")
        for line in header:
            f.write("comment %s\n" % line)
        f.write("element vertex %d\nproperty float x\nproperty float y\nproperty float z\n" % len(pos))
        f.write("element face %d\nproperty list uchar int vertex_indices\nend_header\n" % len(tris))
        for x, y, z in pos:
            f.write("%.6f %.6f %.6f\n" % (x, y, z))
        for a, b, c in tris:
            f.write("3 %d %d %d\n" % (a, b, c))


def write_off(path, pos, tris):
    with open(path, "w", newline="\n") as f:
        f.write("OFF\n%d %d 0\n" % (len(pos), len(tris)))
        for x, y, z in pos:
            f.write("%.6f %.6f %.6f\n" % (x, y, z))
        for a, b, c in tris:
            f.write("3 %d %d %d\n" % (a, b, c))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    src, stem = args
    pos, tris = load_npm_js(src)
    boundary, nonmanifold, misoriented, vol = check(pos, tris)
    print("vertices %d triangles %d boundary-edges %d non-manifold-edges %d "
          "misoriented-edges %d signed-volume %.6f" % (len(pos), len(tris), boundary, nonmanifold, misoriented, vol))
    header = ["Stanford bunny, from npm package bunny 1.0.1 (Mikola Lysenko, license: Public Domain)",
              "Original scan: Stanford 3D Scanning Repository. Converted by assets/tools/npm_to_obj.py"]
    write_obj(stem + ".obj", pos, tris, header)
    write_stl(stem + ".stl", pos, tris, "Stanford bunny, npm bunny 1.0.1 (Public Domain), binary STL")
    write_ply(stem + ".ply", pos, tris, header)
    if "--off" in sys.argv:
        write_off(stem + ".off", pos, tris)


if __name__ == "__main__":
    main()
