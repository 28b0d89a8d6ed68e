#!/usr/bin/env python3
"""Check a TetGen .node/.ele pair: counts, total volume, smallest tetrahedron volume,
smallest dihedral angle, orientation, and (optionally) that its boundary faces are
exactly the triangles of a surface OBJ.  Reads local files only.

    python3 assets/tools/check_tets.py assets/meshes/bunny_6k [assets/meshes/bunny.obj]
"""
import math
import sys
from collections import Counter


def read_tetgen(stem):
    def rows(path):
        out = []
        for line in open(path):
            line = line.split("#", 1)[0].split()
            if line:
                out.append(line)
        return out
    n = rows(stem + ".node")
    nv, dim = int(n[0][0]), int(n[0][1])
    assert dim == 3
    first = int(n[1][0])
    pos = {int(r[0]): tuple(float(x) for x in r[1:4]) for r in n[1:1 + nv]}
    e = rows(stem + ".ele")
    ne, per = int(e[0][0]), int(e[0][1])
    assert per == 4
    tets = [tuple(int(x) for x in r[1:5]) for r in e[1:1 + ne]]
    return first, pos, tets


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def dihedrals(p):
    # angle at each of the 6 edges between the two faces that share it
    out = []
    for i, j, k, l in ((0, 1, 2, 3), (0, 2, 1, 3), (0, 3, 1, 2), (1, 2, 0, 3), (1, 3, 0, 2), (2, 3, 0, 1)):
        e = sub(p[j], p[i])
        n1 = cross(e, sub(p[k], p[i]))
        n2 = cross(e, sub(p[l], p[i]))
        c = dot(n1, n2) / math.sqrt(dot(n1, n1) * dot(n2, n2))
        out.append(math.degrees(math.acos(max(-1.0, min(1.0, c)))))
    return out


def main():
    stem = sys.argv[1]
    first, pos, tets = read_tetgen(stem)
    total, vmin, dmin, dmax, neg = 0.0, float("inf"), 180.0, 0.0, 0
    faces = Counter()
    for t in tets:
        p = [pos[i] for i in t]
        v = dot(sub(p[1], p[0]), cross(sub(p[2], p[0]), sub(p[3], p[0]))) / 6.0
        if v < 0:
            neg += 1
        total += abs(v)
        vmin = min(vmin, abs(v))
        d = dihedrals(p)
        dmin, dmax = min(dmin, min(d)), max(dmax, max(d))
        for f in ((t[0], t[1], t[2]), (t[0], t[1], t[3]), (t[0], t[2], t[3]), (t[1], t[2], t[3])):
            faces[tuple(sorted(f))] += 1
    boundary = {f for f, c in faces.items() if c == 1}
    print("%s: nodes %d (numbered from %d) tets %d volume %.6f min-tet-volume %.3e "
          "dihedral %.2f..%.2f deg, negatively oriented %d, boundary faces %d"
          % (stem, len(pos), first, len(tets), total, vmin, dmin, dmax, neg, len(boundary)))
    if len(sys.argv) > 2:
        verts, tris = [], []
        for line in open(sys.argv[2]):
            s = line.split()
            if s and s[0] == "v":
                verts.append(tuple(float(x) for x in s[1:4]))
            elif s and s[0] == "f":
                tris.append(tuple(int(x.split("/")[0]) - 1 for x in s[1:4]))
        key = {}
        for i, p in pos.items():
            key[tuple(round(x, 6) for x in p)] = i
        surf = set()
        for t in tris:
            ids = [key.get(tuple(round(x, 6) for x in verts[i])) for i in t]
            if None in ids:
                surf = None
                break
            surf.add(tuple(sorted(ids)))
        if surf is None:
            print("boundary differs from %s (a surface vertex is not a node)" % sys.argv[2])
        else:
            print("boundary == %s triangles: %s" % (sys.argv[2], surf == boundary))


if __name__ == "__main__":
    main()
