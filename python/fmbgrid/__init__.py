"""fmbgrid: collision detection for 2D and 3D frames, numpy in and out.

A *frame* is an origin plus ``D`` component vectors spanning a
parallelepiped ("cuboid": any box, parallelogram or parallelepiped) or a
simplex ("tetrahedron"; a triangle in 2D), possibly translating over a time
step. A :class:`World` holds bodies made of frames; :meth:`World.step`
returns every pair of frames that intersects during the step, each with the
exact box of the intersection and the contact interval, as numpy arrays.

Everything crosses between Python and the engine as whole arrays (no Python
object per frame, body or pair), and the engine runs with the GIL released.
Handles of bodies are ``uint64`` numbers, ``generation << 32 | index``, as
the Rust ``BodyHandle`` (``#index.generation``).

Bulk calls are all or nothing: the whole input is checked before the world
changes, so a refused call (an :class:`FmbgridError`, a ``ValueError``)
leaves the world as it was.

The narrow phase and the two-frame queries (:func:`overlaps`,
:func:`intersect`, :func:`overlap_interval`, :func:`distance`,
:func:`penetration`, :func:`first_contact`, :func:`ray_cast`) run over
arrays of pairs of :class:`Frames`.

Threads: the engine's steps use a thread pool (rayon); set the environment
variable ``RAYON_NUM_THREADS`` before the first step to choose its size.
Every call releases the GIL while the engine works. A world is used by one
thread at a time: a call on a world another thread is using raises
``RuntimeError`` (already borrowed); :class:`Frames` are immutable and
shared freely.
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _fmbgrid as _native
from ._fmbgrid import MAX_COORDINATE, MAX_ROWS, ROTATION_TOLERANCE, SPIN_TOLERANCE, FmbgridError

#: What a debug line (:meth:`World.debug_draw`) belongs to: ``kinds`` index
#: this tuple (the Rust ``DebugKind::ALL`` labels, in that order).
DEBUG_KINDS: tuple = tuple(_native.DEBUG_KINDS)

__all__ = [
    "CUBOID",
    "TETRAHEDRON",
    "MAX_COORDINATE",
    "MAX_ROWS",
    "ROTATION_TOLERANCE",
    "SPIN_TOLERANCE",
    "DEBUG_KINDS",
    "FmbgridError",
    "Frames",
    "World",
    "StepResult",
    "Proximities",
    "RayHits",
    "FrameRayHits",
    "QueryHits",
    "FrameQueryHits",
    "RayHitsAll",
    "DebugLines",
    "BodyInfo",
    "PlacedFrames",
    "Intersections",
    "Intervals",
    "Distances",
    "Penetrations",
    "FirstContacts",
    "Mesh",
    "MeshFrames",
    "Scene",
    "Collisions",
    "collide",
    "overlaps",
    "intersect",
    "overlap_interval",
    "distance",
    "penetration",
    "first_contact",
    "ray_cast",
    "load_scene",
    "parse_scene",
    "load_mesh",
    "mesh_frames",
    "from_trimesh",
]

__version__ = "0.1.0"

#: Kind code of a simplex (triangle in 2D, tetrahedron in 3D).
TETRAHEDRON = 0
#: Kind code of a parallelepiped (parallelogram in 2D).
CUBOID = 1

_KIND_NAMES = {
    "cuboid": CUBOID,
    "box": CUBOID,
    "parallelepiped": CUBOID,
    "parallelogram": CUBOID,
    "tetrahedron": TETRAHEDRON,
    "triangle": TETRAHEDRON,
    "simplex": TETRAHEDRON,
}

ArrayLike = Any


# --- input conversion: exact dtypes for the native module ------------------


def _size_check(a: np.ndarray, name: str) -> None:
    if a.ndim and a.shape[0] > MAX_ROWS:
        raise FmbgridError(f"{name} has {a.shape[0]} rows: one call takes at most {MAX_ROWS}")
    if a.size > 16 * MAX_ROWS:
        raise FmbgridError(f"{name} has shape {a.shape}: too large for one call")


def _f64(x: ArrayLike, name: str) -> np.ndarray:
    """``x`` as a float64 array (a view when it is one already: strided and
    broadcast arrays are read in place, never copied)."""
    a = np.asarray(x)
    _size_check(a, name)
    if a.dtype != np.float64:
        if a.dtype.kind not in "biuf":
            raise TypeError(f"{name}: expected an array of real numbers, got dtype {a.dtype}")
        a = a.astype(np.float64)
    return a


def _real(x: Any, name: str) -> float:
    """``x`` as a float when it is a real number (any ``numbers.Real``:
    Python and numpy ints and floats, fractions; or a 0-d array of one); a
    ``TypeError`` naming ``name`` otherwise (``float()`` alone would take
    ``"0.1"``)."""
    if isinstance(x, numbers.Real):
        return float(x)
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "biuf":
        return float(x)
    raise TypeError(f"{name} must be a real number, not {type(x).__name__}")


def _int(x: ArrayLike, name: str, dtype: Any) -> np.ndarray:
    """``x`` as an integer array of ``dtype``, refusing floats, negative
    numbers and numbers that do not fit."""
    a = np.asarray(x)
    _size_check(a, name)
    if a.dtype == dtype:
        return a
    if a.size == 0 and a.dtype.kind in "fiub":
        return np.zeros(a.shape, dtype=dtype)
    if a.dtype.kind not in "iub":
        raise TypeError(f"{name}: expected an array of integers, got dtype {a.dtype}")
    info = np.iinfo(dtype)
    if a.size and a.dtype.kind != "b":
        lo, hi = a.min(), a.max()
        if lo < 0 or int(hi) > info.max:
            bad = lo if lo < 0 else hi
            raise ValueError(f"{name}: {bad} is out of range (0..{info.max})")
    return a.astype(dtype)


def _handles(x: ArrayLike) -> tuple[np.ndarray, bool]:
    """Handles as a (K,) uint64 array, and whether a single one was given."""
    a = _int(x, "handles", np.uint64)
    if a.ndim == 0:
        return a.reshape(1), True
    return a, a.shape == (1,)


def _rows(x: ArrayLike, name: str, single: bool, ndim: int) -> np.ndarray:
    """Float rows for K handles; one row for a single handle (a scalar or
    an array of one)."""
    a = _f64(x, name)
    if single and a.ndim == ndim - 1:
        return a[None]
    return a


def _ray_batch(origins: ArrayLike, directions: ArrayLike, max_time: ArrayLike) -> tuple:
    """Origins and directions as rows (one ray may be given as one row) and
    one limit per ray (a scalar applies to every ray)."""
    o = _f64(origins, "origins")
    one = o.ndim == 1
    if one:
        o = o[None]
    d = _rows(directions, "directions", one, 2)
    t = _f64(max_time, "max_time")
    if t.ndim == 0:
        t = np.full(o.shape[0] if o.ndim else 0, t)
    return o, d, t


def _linear(matrices: ArrayLike, name: str = "rotations") -> np.ndarray:
    """Matrices ``R`` (``x_world = R @ x_body``) as the engine takes a pose's
    linear part, by columns (``linear[j] = R e_j``): the transpose, as a
    view."""
    r = _f64(matrices, name)
    return np.swapaxes(r, -1, -2) if r.ndim >= 2 else r


def _pose_matrices(rotations: Optional[ArrayLike], linears: Optional[ArrayLike]) -> tuple:
    """``(linear parts by columns or None, rigid)`` from the two spellings of
    a pose's matrix: ``rotations`` (checked to be rotations) or ``linears``
    (any invertible map); not both."""
    if rotations is not None and linears is not None:
        raise ValueError("give rotations= or linears=, not both")
    if linears is not None:
        return _linear(linears, "linears"), False
    return (None if rotations is None else _linear(rotations)), True


def _kinds(kinds: Union[str, int, ArrayLike], n: int) -> np.ndarray:
    if isinstance(kinds, str):
        if kinds.lower() not in _KIND_NAMES:
            raise ValueError(f"kind {kinds!r}: expected one of {sorted(_KIND_NAMES)}")
        return np.full(n, _KIND_NAMES[kinds.lower()], dtype=np.uint8)
    a = np.asarray(kinds)
    if a.dtype.kind in "UO":
        try:
            a = np.array([_KIND_NAMES[str(k).lower()] for k in a.ravel()], dtype=np.uint8).reshape(a.shape)
        except KeyError as e:
            raise ValueError(f"kind {e.args[0]!r}: expected one of {sorted(_KIND_NAMES)}") from None
    if a.ndim == 0:
        a = np.full(n, a, dtype=a.dtype)
    a = _int(a, "kinds", np.int64)
    if a.size and (a.min() < 0 or a.max() > 1):
        raise ValueError("kinds must be 0 (TETRAHEDRON) or 1 (CUBOID)")
    return a.astype(np.uint8)


def _pairs(pairs: Optional[ArrayLike]) -> Optional[np.ndarray]:
    return None if pairs is None else _int(pairs, "pairs", np.int64)


# --- frames -----------------------------------------------------------------


class Frames:
    """An array of frames of one dimension (2 or 3), each validated once.

    ``Frames(origins (N, D), components (N, D, D), kinds="cuboid",
    velocities=None)``: frame ``i`` is ``origins[i] + sum_j X_j *
    components[i, j]`` for ``X`` in the unit cube (``"cuboid"``) or the unit
    simplex (``"tetrahedron"``/``"triangle"``), translating by
    ``velocities[i]`` over the step (the displacement between ``t = 0`` and
    ``t = 1``). ``kinds`` is one name or code for all, or an array of codes
    (:data:`CUBOID`, :data:`TETRAHEDRON`) or names.

    Raises :class:`FmbgridError` (a ``ValueError``) naming the first invalid
    frame: a number that is NaN, infinite or beyond 1e15, or degenerate
    components.
    """

    __slots__ = ("_f",)

    def __init__(
        self,
        origins: ArrayLike,
        components: ArrayLike,
        kinds: Union[str, int, ArrayLike] = "cuboid",
        velocities: Optional[ArrayLike] = None,
    ) -> None:
        o = _f64(origins, "origins")
        n = o.shape[0] if o.ndim else 0
        v = None if velocities is None else _f64(velocities, "velocities")
        self._f = _native.Frames.new(o, _f64(components, "components"), _kinds(kinds, n), v)

    @classmethod
    def _wrap(cls, native: Any) -> "Frames":
        f = cls.__new__(cls)
        f._f = native
        return f

    @classmethod
    def from_aabbs(cls, mins: ArrayLike, maxs: ArrayLike) -> "Frames":
        """Axis-aligned boxes ``[mins[i], maxs[i]]`` (each ``(N, D)``) as cuboids."""
        return cls._wrap(_native.Frames.from_aabbs(_f64(mins, "mins"), _f64(maxs, "maxs")))

    @classmethod
    def oriented_boxes(
        cls,
        centers: ArrayLike,
        half_extents: ArrayLike,
        *,
        rotations: Optional[ArrayLike] = None,
        axes: Optional[ArrayLike] = None,
    ) -> "Frames":
        """Oriented boxes: ``centers (N, D)``, positive ``half_extents (N, D)``,
        and their orientation, by keyword, one way or the other:

        * ``rotations (N, D, D)``: rotation matrices as ``World.insert`` takes
          them (``x_world = R @ x_box + center``: the box's axes are the
          columns of ``R``), checked to be rotations within 1e-6
          (``fmbgrid.ROTATION_TOLERANCE``);
        * ``axes (N, D, D)``: ``axes[i, j]`` the world direction of box ``i``'s
          ``j``-th local axis (its rows; normalised here, any non-parallel
          directions: a parallelepiped when they are not orthogonal).

        Axis-aligned with neither."""
        c = _f64(centers, "centers")
        if rotations is not None and axes is not None:
            raise ValueError("give rotations= or axes=, not both")
        h = _f64(half_extents, "half_extents")
        if rotations is not None:
            return cls._wrap(_native.Frames.oriented_boxes(c, h, _linear(rotations), True))
        if axes is None:
            d = c.shape[1] if c.ndim == 2 else 3
            axes = np.broadcast_to(np.eye(d), (c.shape[0] if c.ndim else 0, d, d))
        return cls._wrap(_native.Frames.oriented_boxes(c, h, _f64(axes, "axes"), False))

    @classmethod
    def simplices(cls, vertices: ArrayLike) -> "Frames":
        """Simplices from their vertices: ``(N, 3, 2)`` triangles or ``(N, 4, 3)``
        tetrahedra; the first vertex becomes the origin."""
        return cls._wrap(_native.Frames.simplices(_f64(vertices, "vertices")))

    @property
    def dim(self) -> int:
        """2 or 3."""
        return self._f.dim

    def __len__(self) -> int:
        return len(self._f)

    @property
    def origins(self) -> np.ndarray:
        """``(N, D)`` float64 (a new array)."""
        return self._f.get("origins")

    @property
    def components(self) -> np.ndarray:
        """``(N, D, D)`` float64: ``components[i, j]`` is frame i's j-th vector."""
        return self._f.get("components")

    @property
    def velocities(self) -> np.ndarray:
        """``(N, D)`` float64."""
        return self._f.get("velocities")

    @property
    def kinds(self) -> np.ndarray:
        """``(N,)`` uint8 codes: :data:`TETRAHEDRON` or :data:`CUBOID`."""
        return self._f.get("kinds")

    @property
    def aabbs(self) -> np.ndarray:
        """``(N, 2, D)``: each frame's box (min, max), swept over the step."""
        return self._f.get("aabbs")

    def take(self, indices: ArrayLike) -> "Frames":
        """The frames at ``indices (K,)``, in that order."""
        return Frames._wrap(self._f.take(_int(np.atleast_1d(indices), "indices", np.int64)))

    def __repr__(self) -> str:
        return f"Frames(dim={self.dim}, len={len(self)})"

    def __getstate__(self) -> dict:
        return {
            "origins": self.origins,
            "components": self.components,
            "kinds": self.kinds,
            "velocities": self.velocities,
        }

    def __setstate__(self, state: dict) -> None:
        self._f = _native.Frames.new(
            state["origins"], state["components"], state["kinds"], state["velocities"]
        )


# --- results ------------------------------------------------------------------


class StepResult(NamedTuple):
    """What :meth:`World.step` found: ``M`` contacts between frames, each
    pair once, the first frame the smaller in the engine's order (slot
    index ``handle & 0xFFFFFFFF``, then generation, then frame index), in
    the engine's deterministic order (the same whatever the thread count)."""

    #: ``(M, 2)`` uint64: the two bodies' handles.
    pairs: np.ndarray
    #: ``(M, 2)`` uint32: each frame's index in its body.
    frames: np.ndarray
    #: ``(M, 2, D)`` float64: the exact box (min, max) of the intersection,
    #: swept over the contact interval.
    boxes: np.ndarray
    #: ``(M, 2)`` float64: ``[t_enter, t_exit]`` as fractions of the step.
    intervals: np.ndarray
    #: ``(P, 2)`` uint64: the pairs of bodies in contact, sorted, each once.
    body_pairs: np.ndarray
    #: ``(S, 2)`` uint64: body pairs that started touching in this step.
    started: np.ndarray
    #: ``(E, 2)`` uint64: body pairs that stopped touching in this step.
    ended: np.ndarray


class Proximities(NamedTuple):
    """Pairs of frames at most ``delta`` apart (:meth:`World.pairs_within`)."""

    pairs: np.ndarray  #: ``(P, 2)`` uint64 handles
    frames: np.ndarray  #: ``(P, 2)`` uint32 frame indices
    distances: np.ndarray  #: ``(P,)``; 0 for frames that touch or overlap
    on_a: np.ndarray  #: ``(P, D)``: a point of the first frame closest to the second
    on_b: np.ndarray  #: ``(P, D)``


class RayHits(NamedTuple):
    """The first frame each ray meets (:meth:`World.cast_rays`); rays that
    meet nothing have ``hit`` False, ``bodies`` 2**64-1, ``frames`` 2**32-1,
    ``times`` inf and NaN normals."""

    hit: np.ndarray
    bodies: np.ndarray
    frames: np.ndarray
    times: np.ndarray
    normals: np.ndarray


class QueryHits(NamedTuple):
    """Frames found by a batch of queries (:meth:`World.query_aabbs`,
    :meth:`World.query_points`): one row per (query, frame), by query, each
    query's frames sorted by (slot index, generation, frame index)."""

    query: np.ndarray  #: ``(K,)`` int64: the query's row in the input
    bodies: np.ndarray  #: ``(K,)`` uint64 handles
    frames: np.ndarray  #: ``(K,)`` uint32 frame indices in their bodies


class FrameQueryHits(NamedTuple):
    """Frames meeting each probe frame (:meth:`World.query_frames`)."""

    query: np.ndarray  #: ``(K,)`` int64: the probe's index
    bodies: np.ndarray  #: ``(K,)`` uint64 handles
    frames: np.ndarray  #: ``(K,)`` uint32
    boxes: np.ndarray  #: ``(K, 2, D)``: the exact box of the intersection
    intervals: np.ndarray  #: ``(K, 2)``: contact interval (fractions of the probe's step)


class RayHitsAll(NamedTuple):
    """Every frame each ray meets (:meth:`World.cast_rays_all`), by ray, each
    ray's hits by time."""

    ray: np.ndarray  #: ``(K,)`` int64: the ray's row
    bodies: np.ndarray  #: ``(K,)`` uint64
    frames: np.ndarray  #: ``(K,)`` uint32
    times: np.ndarray  #: ``(K,)``: ray parameter of the entry point
    normals: np.ndarray  #: ``(K, D)``: outward normal of the face entered


class DebugLines(NamedTuple):
    """Segments to draw (:meth:`World.debug_draw`); ``DEBUG_KINDS[kinds[l]]``
    names what segment ``l`` belongs to."""

    starts: np.ndarray  #: ``(L, D)``
    ends: np.ndarray  #: ``(L, D)``
    kinds: np.ndarray  #: ``(L,)`` uint8


class BodyInfo(NamedTuple):
    """Bodies' state (:meth:`World.bodies`)."""

    translations: np.ndarray  #: ``(K, D)``
    rotations: np.ndarray  #: ``(K, D, D)``: the poses' linear parts
    velocities: np.ndarray  #: ``(K, D)``
    moving: np.ndarray  #: ``(K,)`` bool
    user_data: np.ndarray  #: ``(K,)`` uint64
    frame_counts: np.ndarray  #: ``(K,)`` uint32


class PlacedFrames(NamedTuple):
    """Every frame of a world where it is now (:meth:`World.frames`)."""

    frames: Frames
    bodies: np.ndarray  #: ``(N,)`` uint64 handles
    indices: np.ndarray  #: ``(N,)`` uint32: index in the body


# --- the world -----------------------------------------------------------------


def _restore(data: bytes) -> "World":
    return World.restore(data)


class World:
    """Bodies of frames, stepped in time.

    ``World(dim=3, cell_size=None, detail="exact_box", runaway="park",
    spin_tolerance=None)``:

    * ``cell_size``: the grid's base cell size (chosen from the frames when
      None);
    * ``detail``: what each contact carries: ``"exact_box"`` (the exact box
      and interval), ``"interval"`` (the exact interval, the swept boxes'
      overlap as box) or ``"candidates"`` (the broad phase's pairs);
    * ``runaway``: ``"park"`` stops a body whose step would leave the
      supported range (see :meth:`parked`), ``"refuse"`` fails the step.
    """

    __slots__ = ("_w",)

    def __init__(
        self,
        dim: int = 3,
        *,
        cell_size: Optional[float] = None,
        detail: str = "exact_box",
        runaway: str = "park",
        spin_tolerance: Optional[float] = None,
    ) -> None:
        self._w = _native.World(dim, cell_size, detail, runaway, spin_tolerance)

    @classmethod
    def _wrap(cls, native: Any) -> "World":
        w = cls.__new__(cls)
        w._w = native
        return w

    @property
    def dim(self) -> int:
        """2 or 3."""
        return self._w.dim

    def __len__(self) -> int:
        """The number of bodies."""
        return len(self._w)

    @property
    def config(self) -> dict:
        """The settings, as given to the constructor."""
        c, d, r, s = self._w.config()
        return {"cell_size": c, "detail": d, "runaway": r, "spin_tolerance": s}

    @property
    def cell_size(self) -> float:
        """The grid's base cell size in use (chosen at the last step when automatic)."""
        return self._w.cell_size()

    def insert(
        self,
        frames: Frames,
        bodies: Optional[ArrayLike] = None,
        *,
        moving: Union[bool, ArrayLike] = True,
        velocities: Optional[ArrayLike] = None,
        translations: Optional[ArrayLike] = None,
        rotations: Optional[ArrayLike] = None,
        linears: Optional[ArrayLike] = None,
        user_data: Optional[ArrayLike] = None,
        filters: Optional[ArrayLike] = None,
    ) -> np.ndarray:
        """Inserts bodies made of ``frames`` and returns their handles, ``(B,)`` uint64.

        * ``bodies (N,)``: the body (``0..B``) of each frame; every body needs
          a frame, frames keep their order within a body. Default: one body
          per frame.
        * ``moving``: True/False for all, or ``(B,)`` bools. Fixed bodies never
          move and are never paired with each other.
        * ``velocities (B, D)``: moving bodies' velocities (units per unit time).
        * ``translations (B, D)``, ``rotations (B, D, D)``: the bodies' poses
          (``x_world = rotations[k] @ x_body + translations[k]``); frames are in
          body coordinates. Default: identity. Rotations are checked to be
          rotations within 1e-6 (``fmbgrid.ROTATION_TOLERANCE``: a float32
          quaternion's matrix passes, a scaled, sheared or mirrored one does
          not); ``linears (B, D, D)`` instead takes any invertible map, in
          the same convention.
        * ``user_data (B,)`` uint64; ``filters (B, 2)`` uint32: collision
          ``(groups, mask)``.

        The frames' own velocities are ignored (the bodies' move them). All or
        nothing: on an error nothing is inserted.
        """
        if not isinstance(frames, Frames):
            raise TypeError("frames must be an fmbgrid.Frames")
        b = None if bodies is None else _int(bodies, "bodies", np.int64)
        m = np.asarray(moving)
        if m.dtype != np.bool_:
            if m.dtype.kind not in "iu":
                raise TypeError(f"moving: expected bools, got dtype {m.dtype}")
            m = m != 0
        linear, rigid = _pose_matrices(rotations, linears)
        return self._w.insert(
            frames._f,
            b,
            m,
            None if velocities is None else _f64(velocities, "velocities"),
            None if translations is None else _f64(translations, "translations"),
            linear,
            None if user_data is None else _int(user_data, "user_data", np.uint64),
            None if filters is None else _int(filters, "filters", np.uint32),
            rigid,
        )

    def remove(self, handles: ArrayLike) -> None:
        """Removes bodies (all or none: a stale or repeated handle removes nothing)."""
        h, _ = _handles(handles)
        self._w.remove(h)

    def set_velocities(self, handles: ArrayLike, velocities: ArrayLike) -> None:
        """Sets moving bodies' velocities, ``(K, D)``, from the next step on."""
        h, one = _handles(handles)
        self._w.set_velocities(h, _rows(velocities, "velocities", one, 2))

    def set_angular_velocities(self, handles: ArrayLike, omegas: ArrayLike) -> None:
        """Sets angular velocities (radians per unit time about each body's
        translation): ``(K,)`` in 2D, ``(K, 3)`` rotation vectors in 3D. A
        turning body's contacts come from enclosures (see the guide)."""
        h, one = _handles(handles)
        o = _f64(omegas, "omegas")
        if one and o.ndim == (0 if self.dim == 2 else 1):
            o = o[None]
        self._w.set_angular_velocities(h, o)

    def set_poses(
        self,
        handles: ArrayLike,
        translations: ArrayLike,
        rotations: Optional[ArrayLike] = None,
        *,
        linears: Optional[ArrayLike] = None,
    ) -> None:
        """Moves bodies to new poses, effective at the start of the next step:
        ``translations (K, D)`` and ``rotations (K, D, D)`` (each body keeps its
        rotation when None), checked as ``insert`` checks them, or
        ``linears (K, D, D)`` for affine maps. One call of the Rust ``World::set_poses``: every
        handle is checked and every frame placed before anything changes (a
        refused call changes nothing); a body listed twice ends at its last
        pose; a moving body whose pose and frames come out unchanged, bit for
        bit, is left alone (so a loop that sets every pose each step, most
        unchanged, keeps the step's memory of pairs found apart)."""
        h, one = _handles(handles)
        if rotations is not None:
            rotations = _rows(rotations, "rotations", one, 3)
        if linears is not None:
            linears = _rows(linears, "linears", one, 3)
        r, rigid = _pose_matrices(rotations, linears)
        self._w.set_poses(h, _rows(translations, "translations", one, 2), r, rigid)

    def set_user_data(self, handles: ArrayLike, data: ArrayLike) -> None:
        """Sets the bodies' user data, ``(K,)`` uint64."""
        h, _ = _handles(handles)
        self._w.set_user_data(h, np.atleast_1d(_int(data, "data", np.uint64)))

    def handles(self) -> np.ndarray:
        """The live bodies' handles, ``(B,)`` uint64, in slot order."""
        return self._w.handles()

    def bodies(self, handles: Optional[ArrayLike] = None) -> BodyInfo:
        """Poses, velocities, motion, user data and frame counts of ``handles`` (all bodies when None)."""
        h = self.handles() if handles is None else _handles(handles)[0]
        t, r, v, m, u, c = self._w.bodies_info(h)
        return BodyInfo(t, np.ascontiguousarray(np.swapaxes(r, -1, -2)), v, m, u, c)

    def frames(self) -> PlacedFrames:
        """Every frame, placed where it is now, with its body and index."""
        f, b, i = self._w.frames()
        return PlacedFrames(Frames._wrap(f), b, i)

    def step(self, dt: float) -> StepResult:
        """Finds every pair of frames that intersects at some instant of the
        next ``dt`` time units, then advances the moving bodies by
        ``velocity * dt``. The GIL is released while the engine works."""
        return StepResult(*self._w.step(_real(dt, "dt")))

    def time_steps(self, dt: float, steps: int, also: str = "") -> np.ndarray:
        """Runs ``steps`` steps in the engine alone (nothing is returned to
        Python but the time): the seconds of each, to measure the Python
        layer's overhead against. ``also="poses"`` sets every body's pose
        (to the one it has) before each step with one Rust
        ``World::set_poses``, ``"velocities"`` every moving body's velocity
        with ``World::set_velocity``, as a Python loop calling
        :meth:`set_poses` or :meth:`set_velocities` with all bodies does;
        with either, each step's body pairs are then read as slot indices
        (as ``(body_pairs & 0xFFFFFFFF)`` reads them in Python)."""
        return np.array(self._w.time_steps(_real(dt, "dt"), steps, also))

    def parked(self) -> np.ndarray:
        """Bodies the last step parked (runaways), ``(K,)`` uint64."""
        return self._w.parked()

    def pairs_within(self, delta: float) -> Proximities:
        """Every pair of frames at most ``delta`` apart where they are now, with
        the distance and a closest point on each."""
        return Proximities(*self._w.pairs_within(_real(delta, "delta")))

    def cast_rays(self, origins: ArrayLike, directions: ArrayLike, max_time: ArrayLike = MAX_COORDINATE) -> RayHits:
        """The first frame each ray ``origins[k] + s * directions[k]``,
        ``0 <= s <= max_time``, meets (frames at rest where they are now)."""
        return RayHits(*self._w.cast_rays(*_ray_batch(origins, directions, max_time)))

    def cast_rays_all(
        self, origins: ArrayLike, directions: ArrayLike, max_time: ArrayLike = MAX_COORDINATE
    ) -> RayHitsAll:
        """Every frame each ray ``origins[k] + s * directions[k]``,
        ``0 <= s <= max_time``, meets (frames at rest where they are now),
        with the entry time and normal: rows by ray, each ray's by time."""
        return RayHitsAll(*self._w.cast_rays_all(*_ray_batch(origins, directions, max_time)))

    def query_aabbs(self, mins: ArrayLike, maxs: ArrayLike) -> QueryHits:
        """The frames whose boxes (at rest, where they are now) overlap each
        box ``[mins[q], maxs[q]]`` (``(Q, D)`` each, or ``(D,)`` for one box;
        closed test; a box with ``min > max`` on some axis finds nothing).
        Uses the grid: about a microsecond a small box after a step."""
        lo, hi = _f64(mins, "mins"), _f64(maxs, "maxs")
        if lo.ndim == 1 and hi.ndim == 1:
            lo, hi = lo[None], hi[None]
        return QueryHits(*self._w.query_aabbs(lo, hi))

    def query_points(self, points: ArrayLike) -> QueryHits:
        """The frames (at rest, where they are now) that contain each point of
        ``points (Q, D)`` (or ``(D,)``), boundary included."""
        p = _f64(points, "points")
        if p.ndim == 1:
            p = p[None]
        return QueryHits(*self._w.query_points(p))

    def query_frames(self, frames: "Frames") -> FrameQueryHits:
        """The frames of the world (at rest, where they are now) that each
        probe of ``frames`` (moving by its velocity, or not) intersects, with
        the exact box and interval of each intersection."""
        if not isinstance(frames, Frames):
            raise TypeError("frames must be an fmbgrid.Frames")
        return FrameQueryHits(*self._w.query_frames(frames._f))

    def contacts(self) -> StepResult:
        """The last step's result again (with the boxes :meth:`exact_boxes`
        refined since); empty before the first step."""
        return StepResult(*self._w.last_step())

    def exact_boxes(self, select: Optional[ArrayLike] = None) -> np.ndarray:
        """For a world with ``detail="interval"`` or ``"candidates"``: the
        exact boxes of the last step's contacts selected by ``select (M,)``
        bools (all when None), computed now, as ``detail="exact_box"`` would
        have reported them. Returns every contact's box, ``(M, 2, D)``, and
        :meth:`contacts` reports them from then on.

        Raises :class:`FmbgridError` when bodies were inserted, removed or
        re-posed since the step."""
        m = None
        if select is not None:
            m = np.asarray(select)
            if m.dtype != np.bool_:
                raise TypeError(f"select: expected bools, got dtype {m.dtype}")
            _size_check(m, "select")
        return self._w.exact_boxes(m)

    def contact_geometry(self, rows: Optional[ArrayLike] = None) -> FirstContacts:
        """When (fraction of the step), where and along which normal (from
        the contact's first frame towards its second) the frames of the last
        step's contacts at ``rows (K,)`` (all when None) first touched, and
        the depth for frames overlapping from the step's start; ``hit``
        False (NaN numbers) for a pair within round-off of touching.

        Raises :class:`FmbgridError` when the world changed since the step,
        or for a pair of which a body turned during the step."""
        r = None if rows is None else _int(np.atleast_1d(rows), "rows", np.int64)
        return FirstContacts(*self._w.contact_geometry(r))

    def debug_draw(self, dt: float = 0.0, contacts: bool = True) -> DebugLines:
        """The segments a debug view shows: every frame's edges where it is
        now (tagged by motion, and whether a contact of the last step names
        it), the box each moving frame sweeps over a step of ``dt``, and
        (with ``contacts``) each contact's box of the last step. Plot them
        with matplotlib's ``LineCollection`` (2D) or ``Line3DCollection``."""
        return DebugLines(*self._w.debug_draw(_real(dt, "dt"), bool(contacts)))

    def snapshot(self) -> bytes:
        """The world as bytes; :meth:`restore` gives a world that steps bit
        for bit as this one would (same contacts, order, events, handles)."""
        return b"fmbgrid-snapshot %d\n" % self.dim + bytes(self._w.snapshot())

    @classmethod
    def restore(cls, data: bytes) -> "World":
        """The world a :meth:`snapshot` was taken of."""
        data = bytes(data)
        head, _, body = data.partition(b"\n")
        parts = head.split()
        if len(parts) != 2 or parts[0] != b"fmbgrid-snapshot" or parts[1] not in (b"2", b"3"):
            raise FmbgridError("bad world snapshot: not an fmbgrid snapshot")
        return cls._wrap(_native.World.restore(int(parts[1]), body))

    def __reduce__(self) -> tuple:
        return (_restore, (self.snapshot(),))

    def __copy__(self) -> "World":
        return World.restore(self.snapshot())

    def __deepcopy__(self, memo: dict) -> "World":
        return World.restore(self.snapshot())

    def clear(self) -> None:
        """Removes every body."""
        self._w.clear()

    def __repr__(self) -> str:
        return f"World(dim={self.dim}, bodies={len(self)})"


# --- the narrow phase over arrays of pairs --------------------------------------


class Collisions(NamedTuple):
    pairs: np.ndarray  #: ``(P, 2)`` int64: rows ``(i, j)`` of the frames given, sorted
    boxes: np.ndarray  #: ``(P, 2, D)``: the exact boxes (``"exact_box"``), else the swept boxes' overlaps
    intervals: np.ndarray  #: ``(P, 2)``: the contact intervals (``[0, 1]`` in ``"candidates"``)


class Intersections(NamedTuple):
    hit: np.ndarray  #: ``(M,)`` bool
    boxes: np.ndarray  #: ``(M, 2, D)``; NaN where no hit
    intervals: np.ndarray  #: ``(M, 2)``; NaN where no hit


class Intervals(NamedTuple):
    hit: np.ndarray  #: ``(M,)`` bool
    intervals: np.ndarray  #: ``(M, 2)``; NaN where no hit


class Distances(NamedTuple):
    distance: np.ndarray  #: ``(M,)``
    on_a: np.ndarray  #: ``(M, D)``
    on_b: np.ndarray  #: ``(M, D)``


class Penetrations(NamedTuple):
    hit: np.ndarray  #: ``(M,)`` bool
    depth: np.ndarray  #: ``(M,)``; NaN where no hit
    normal: np.ndarray  #: ``(M, D)``: unit, from a towards b


class FirstContacts(NamedTuple):
    hit: np.ndarray  #: ``(M,)`` bool
    time: np.ndarray  #: ``(M,)``: fraction of the step
    normal: np.ndarray  #: ``(M, D)``
    point: np.ndarray  #: ``(M, D)``
    depth: np.ndarray  #: ``(M,)``


def _check(a: Frames, b: Frames) -> None:
    if not isinstance(a, Frames) or not isinstance(b, Frames):
        raise TypeError("a and b must be fmbgrid.Frames")


def collide(a: Frames, b: Optional[Frames] = None, *, detail: str = "exact_box") -> Collisions:
    """Every pair of frames of ``a`` whose interiors meet over the step (each
    frame moving by its own velocity), or with ``b`` every pair of a frame of
    ``a`` and a frame of ``b``, in one call, without a :class:`World`: the
    rows ``(i, j)`` (``i < j`` within one set; ``i`` of ``a`` and ``j`` of
    ``b`` across two), sorted, with each intersection's exact box and
    contact interval (``detail="exact_box"``), the interval alone
    (``"interval"``: the boxes are the swept boxes' overlaps) or the pairs of
    overlapping swept boxes (``"candidates"``); as a world holding each frame
    as a body reports them. Raises ``MemoryError`` when the pairs do not fit
    in memory."""
    if not isinstance(a, Frames) or (b is not None and not isinstance(b, Frames)):
        raise TypeError("a and b must be fmbgrid.Frames")
    return Collisions(*_native.collide_frames(a._f, None if b is None else b._f, detail))


def overlaps(a: Frames, b: Frames, pairs: Optional[ArrayLike] = None) -> np.ndarray:
    """Whether the interiors of ``a[i]`` and ``b[j]`` meet (at some instant of
    the step when they move), for each pair ``(i, j)`` of ``pairs (M, 2)``, or
    elementwise (``i == j``) when ``pairs`` is None. ``(M,)`` bool."""
    _check(a, b)
    return _native.overlaps_pairs(a._f, b._f, _pairs(pairs))


def intersect(a: Frames, b: Frames, pairs: Optional[ArrayLike] = None) -> Intersections:
    """The exact box of each pair's intersection (swept over the contact
    interval) and the contact interval; see :func:`overlaps` for ``pairs``."""
    _check(a, b)
    return Intersections(*_native.intersect_pairs(a._f, b._f, _pairs(pairs)))


def overlap_interval(a: Frames, b: Frames, pairs: Optional[ArrayLike] = None) -> Intervals:
    """Each pair's contact interval alone (:func:`intersect`'s, bit for bit)."""
    _check(a, b)
    return Intervals(*_native.overlap_interval_pairs(a._f, b._f, _pairs(pairs)))


def distance(a: Frames, b: Frames, pairs: Optional[ArrayLike] = None) -> Distances:
    """Each pair's Euclidean distance at the start of the step (0 when they
    touch or overlap) and a closest point on each."""
    _check(a, b)
    return Distances(*_native.distance_pairs(a._f, b._f, _pairs(pairs)))


def penetration(a: Frames, b: Frames, pairs: Optional[ArrayLike] = None) -> Penetrations:
    """How deep each overlapping pair interpenetrates at the start of the step,
    and the unit normal from a towards b that separates them fastest."""
    _check(a, b)
    return Penetrations(*_native.penetration_pairs(a._f, b._f, _pairs(pairs)))


def first_contact(a: Frames, b: Frames, pairs: Optional[ArrayLike] = None) -> FirstContacts:
    """When (fraction of the step), where and along which normal each pair of
    moving frames first touches."""
    _check(a, b)
    return FirstContacts(*_native.first_contact_pairs(a._f, b._f, _pairs(pairs)))


class FrameRayHits(NamedTuple):
    hit: np.ndarray  #: ``(R,)`` bool
    time: np.ndarray  #: ``(R,)``: ray parameter of the entry point; NaN where no hit
    normal: np.ndarray  #: ``(R, D)``: outward normal of the face entered


def ray_cast(frames: Frames, origins: ArrayLike, directions: ArrayLike, max_time: ArrayLike = MAX_COORDINATE) -> FrameRayHits:
    """Ray ``k`` (``origins[k] + s * directions[k]``, ``0 <= s <= max_time``)
    against frame ``k`` (at rest). A zero direction is allowed here, as in
    Rust's ``query::ray_cast``: the ray is then the point ``origins[k]``,
    which hits at ``0`` when inside the frame (:meth:`World.cast_rays`
    refuses it: a world's ray walks its grid along the direction)."""
    o = _f64(origins, "origins")
    t = _f64(max_time, "max_time")
    if t.ndim == 0:
        t = np.full(len(frames), t)
    return FrameRayHits(*_native.ray_cast_frames(frames._f, o, _f64(directions, "directions"), t))


# --- files ---------------------------------------------------------------------


class Scene(NamedTuple):
    """A scene file's world and settings (:func:`load_scene`)."""

    world: World
    name: str
    dimension: int
    dt: float
    steps: int
    reverse_every: Optional[int]
    tolerance: Optional[float]
    bodies: int


def _scene(native: tuple) -> Scene:
    w, info = native
    return Scene(
        World._wrap(w),
        info["name"],
        info["dimension"],
        info["dt"],
        info["steps"],
        info["reverse_every"],
        info["tolerance"],
        info["bodies"],
    )


def load_scene(path: Union[str, "Any"]) -> Scene:
    """Builds the world of a scene file (TOML, as ``fmbgrid run`` reads it):
    the same world, bit for bit, as the Rust runner's."""
    return _scene(_native.load_scene(str(path)))


def parse_scene(text: str, base_dir: Union[str, "Any"] = ".") -> Scene:
    """:func:`load_scene` from TOML text (assets relative to ``base_dir``)."""
    return _scene(_native.parse_scene(text, str(base_dir)))


class Mesh(NamedTuple):
    vertices: np.ndarray  #: ``(V, 3)`` float64
    triangles: np.ndarray  #: ``(T, 3)`` uint32
    tetrahedra: np.ndarray  #: ``(E, 4)`` uint32


def load_mesh(path: Union[str, "Any"], solid: bool = False) -> Mesh:
    """Reads a mesh file (OBJ, STL, PLY, Gmsh ``.msh``, TetGen ``.node``/``.ele``).
    With ``solid``, a closed surface and its tetrahedralisation
    ``stem.node``/``stem.ele`` beside it."""
    return Mesh(*_native.load_mesh(str(path), bool(solid)))


class MeshFrames(NamedTuple):
    frames: Frames
    degenerate: int  #: elements too flat to be frames, left out
    invalid: int  #: elements with an out-of-range vertex index, left out


def mesh_frames(
    vertices: ArrayLike,
    triangles: Optional[ArrayLike] = None,
    tetrahedra: Optional[ArrayLike] = None,
    thickness: float = 0.0,
) -> MeshFrames:
    """Frames of a mesh: one tetrahedron per element of ``tetrahedra`` when
    there are any, else one thin shell (a tetrahedron of height
    ``thickness`` on the outer side) per triangle. Insert them as one body:
    ``world.insert(frames, np.zeros(len(frames), dtype=int))``."""
    tri = None if triangles is None else _int(triangles, "triangles", np.uint32)
    tet = None if tetrahedra is None else _int(tetrahedra, "tetrahedra", np.uint32)
    f, degenerate, invalid = _native.mesh_frames(_f64(vertices, "vertices"), tri, tet, _real(thickness, "thickness"))
    return MeshFrames(Frames._wrap(f), degenerate, invalid)


def from_trimesh(mesh: Any, thickness: float = 0.0, solid: bool = False) -> MeshFrames:
    """Frames of a ``trimesh.Trimesh`` (anything with ``vertices`` and ``faces``).

    * ``solid=False``: thin shells of ``thickness`` over its triangles (the
      surface; a body inside it touches nothing).
    * ``solid=True``: the tetrahedra of its volume, from the ``tetgen``
      package (``pip install tetgen``; a wheel for CPython on Linux, macOS
      and Windows; TetGen itself is AGPL-licensed). The mesh must be a
      closed surface.
    """
    vertices = np.asarray(mesh.vertices, dtype=np.float64)
    faces = np.asarray(mesh.faces)
    if not solid:
        return mesh_frames(vertices, faces, None, thickness)
    try:
        import tetgen
    except ImportError:
        raise ImportError(
            "from_trimesh(solid=True) tetrahedralises the mesh with the tetgen package: pip install tetgen"
        ) from None
    # (nodes, elements) first, whatever else the version returns after them.
    out = tetgen.TetGen(vertices, faces.astype(np.int32)).tetrahedralize()
    nodes, elements = np.asarray(out[0], dtype=np.float64), np.asarray(out[1])
    return mesh_frames(nodes, None, elements[:, :4], 0.0)
