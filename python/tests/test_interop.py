"""trimesh interop: meshes in through `from_trimesh`, and the drop-in for
trimesh's CollisionManager loop (python/examples/trimesh_manager.py)."""

import importlib.util
import pathlib

import numpy as np
import pytest

import fmbgrid as fg

trimesh = pytest.importorskip("trimesh")

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "trimesh_manager.py"


def manager_class():
    spec = importlib.util.spec_from_file_location("trimesh_manager", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CollisionManager


def test_from_trimesh_shells():
    box = trimesh.creation.box((1, 1, 1))
    shells = fg.from_trimesh(box, 0.01)
    assert len(shells.frames) == len(box.faces) and shells.degenerate == 0
    # Each shell is a triangle of the surface plus an apex `thickness` off it.
    assert np.all(np.abs(shells.frames.aabbs) <= 0.51 + 1e-12)
    assert np.isclose(np.abs(shells.frames.aabbs).max(), 0.51)


def test_collision_manager_dropin_agrees_with_trimesh_on_names():
    Manager = manager_class()
    ours = Manager()
    try:
        theirs = trimesh.collision.CollisionManager()  # needs python-fcl
    except (ValueError, ImportError):
        theirs = None
    meshes = {
        "box": (trimesh.creation.box((1, 1, 1)), np.eye(4)),
        "ball": (trimesh.creation.icosphere(radius=0.5), trimesh.transformations.translation_matrix([0.8, 0, 0])),
        "far": (trimesh.creation.box((1, 1, 1)), trimesh.transformations.translation_matrix([5, 0, 0])),
        "tilted": (trimesh.creation.box((2, 0.2, 0.2)),
                   trimesh.transformations.rotation_matrix(0.7, [0, 0, 1], [0, 1.2, 0])
                   @ trimesh.transformations.translation_matrix([0, 1.2, 0])),
    }
    for name, (mesh, pose) in meshes.items():
        ours.add_object(name, mesh, pose)
        if theirs is not None:
            try:
                theirs.add_object(name, mesh, pose)
            except ImportError:  # trimesh's manager wants scipy too
                theirs = None
    managers = [m for m in (ours, theirs) if m is not None]

    def names():
        found = [{tuple(sorted(p)) for p in m.in_collision_internal(return_names=True)[1]} for m in managers]
        assert all(f == found[0] for f in found), found  # the same names as trimesh's (FCL's) manager
        return found[0]

    assert ("ball", "box") in names() and not any("far" in p for p in names())
    for m in managers:
        m.set_transform("far", trimesh.transformations.translation_matrix([0, 0, 0.9]))
    assert ("box", "far") in names()
    for m in managers:
        m.remove_object("ball")
    assert not any("ball" in p for p in names())
