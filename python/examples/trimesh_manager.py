"""A drop-in for trimesh's `CollisionManager` loop (which runs python-fcl
underneath), on fmbgrid: meshes are bodies of thin-shell frames (one per
triangle, like FCL's triangle-soup BVH they test surfaces), poses are 4x4
homogeneous matrices, and `in_collision_internal` is one step of zero
length of the world.

    python python/examples/trimesh_manager.py
"""

from __future__ import annotations

import numpy as np

import fmbgrid as fg


class CollisionManager:
    """The part of `trimesh.collision.CollisionManager` a simulation loop uses."""

    def __init__(self, thickness: float = 1e-3):
        self.world = fg.World(3)
        self.thickness = thickness
        self._handles: dict[str, int] = {}
        self._names: dict[int, str] = {}

    def add_object(self, name: str, mesh, transform: np.ndarray | None = None) -> None:
        if name in self._handles:
            self.remove_object(name)
        frames = fg.from_trimesh(mesh, self.thickness * max(mesh.scale, 1e-12)).frames
        t = np.eye(4) if transform is None else np.asarray(transform, dtype=float)
        h = self.world.insert(frames, np.zeros(len(frames), dtype=np.int64), translations=t[None, :3, 3],
                              rotations=t[None, :3, :3])
        self._handles[name] = int(h[0])
        self._names[int(h[0])] = name

    def remove_object(self, name: str) -> None:
        h = self._handles.pop(name)
        del self._names[h]
        self.world.remove([h])

    def set_transform(self, name: str, transform: np.ndarray) -> None:
        t = np.asarray(transform, dtype=float)
        self.world.set_poses([self._handles[name]], t[None, :3, 3], t[None, :3, :3])

    def set_transforms(self, names, transforms: np.ndarray) -> None:
        """All poses in one call (what the per-object loop becomes)."""
        t = np.asarray(transforms, dtype=float)
        self.world.set_poses([self._handles[n] for n in names], t[:, :3, 3], t[:, :3, :3])

    def in_collision_internal(self, return_names: bool = False):
        pairs = self.world.step(0.0).body_pairs
        hit = len(pairs) > 0
        if not return_names:
            return hit
        return hit, {tuple(sorted((self._names[int(a)], self._names[int(b)]))) for a, b in pairs}


if __name__ == "__main__":
    import trimesh

    m = CollisionManager()
    m.add_object("a", trimesh.creation.box((1, 1, 1)))
    m.add_object("b", trimesh.creation.icosphere(radius=0.5), np.eye(4) @ trimesh.transformations.translation_matrix([0.8, 0, 0]))
    m.add_object("c", trimesh.creation.box((1, 1, 1)), trimesh.transformations.translation_matrix([5, 0, 0]))
    print(m.in_collision_internal(return_names=True))  # (True, {('a', 'b')})
    m.set_transform("c", trimesh.transformations.translation_matrix([0, 0.9, 0]))
    print(m.in_collision_internal(return_names=True))  # (True, {('a', 'b'), ('a', 'c')})
