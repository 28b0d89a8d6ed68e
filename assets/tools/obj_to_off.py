#!/usr/bin/env python3
"""Convert a triangle OBJ (v / f lines only) to OFF, TetGen's input format:

    python3 assets/tools/obj_to_off.py assets/meshes/icosphere.obj /tmp/assets_work/icosphere.off

Vertex coordinates are copied as written; faces are renumbered from 0.
"""
import sys


def main(src, dst):
    vertices, faces = [], []
    with open(src) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                vertices.append(parts[1:4])
            elif parts[0] == "f":
                faces.append([int(p.split("/")[0]) - 1 for p in parts[1:4]])
    with open(dst, "w", newline="\n") as out:
        out.write("OFF\n%d %d 0\n" % (len(vertices), len(faces)))
        for v in vertices:
            out.write(" ".join(v) + "\n")
        for a, b, c in faces:
            out.write("3 %d %d %d\n" % (a, b, c))
    print("vertices %d triangles %d" % (len(vertices), len(faces)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
