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


def test_from_trimesh_solid_tetrahedra():
    pytest.importorskip("tetgen", reason="tetgen is not installed (pip install tetgen)")
    ball = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
    solid = fg.from_trimesh(ball, solid=True)
    f = solid.frames
    assert len(f) > 20 and solid.degenerate == 0 and solid.invalid == 0
    assert np.all(f.kinds == fg.TETRAHEDRON)
    # The tetrahedra fill the ball: their volumes add up to the mesh's.
    volumes = np.abs(np.linalg.det(f.components)) / 6
    assert np.isclose(volumes.sum(), ball.volume, rtol=1e-9)
    # A small box at the centre touches the solid ball, not its surface shells.
    w = fg.World(3)
    w.insert(f, np.zeros(len(f), dtype=int), moving=False)
    shells = fg.from_trimesh(ball, thickness=0.01).frames
    w.insert(shells, np.zeros(len(shells), dtype=int), moving=False)
    probe = w.insert(fg.Frames.from_aabbs([[-0.1] * 3], [[0.1] * 3]))
    pairs = w.step(0.1).body_pairs
    assert pairs.tolist() == [[0, int(probe[0])]]


def test_from_trimesh_solid_without_tetgen_says_how(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_tetgen(name, *args, **kwargs):
        if name == "tetgen":
            raise ImportError("no tetgen")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tetgen)
    with pytest.raises(ImportError, match="pip install tetgen"):
        fg.from_trimesh(trimesh.creation.box((1, 1, 1)), solid=True)


def test_examples_run(tmp_path):
    """The matplotlib example writes its two pictures; the CollisionManager
    drop-in runs as a script."""
    import subprocess
    import sys

    examples = EXAMPLE.parent
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    out = tmp_path / "contacts.png"
    run = subprocess.run([sys.executable, str(examples / "plot_2d.py"), str(out)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "contacts between frames" in run.stdout
    assert out.stat().st_size > 10_000 and (tmp_path / "contacts_debug.png").stat().st_size > 10_000
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "('a', 'b')" in run.stdout
