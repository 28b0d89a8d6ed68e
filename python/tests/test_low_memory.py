"""Low memory is a `MemoryError` with the world unchanged, never an abort.

Each case runs in a subprocess: a dense world is built and warmed (its
thread pool started), then the process's address space is capped at its
size plus an offset, from nothing to enough, and one call is made: a step
(the engine's buffers and the result arrays, reserved before the step
changes anything), `pairs_within`, a batch of box queries or of rays
(every frame each meets). A refused call must leave the world
as an uncapped twin is: the same call, run again once the cap is lifted,
answers as the twin's does, bit for bit. An abort (`memory allocation of N
bytes failed`) kills the subprocess: the test fails.

The hits of one query or ray are gathered by the library in a vector of
its own, which grows infallibly: small next to a batch's, but a single
query over a whole world of millions of frames could still abort (issue
37, item 1).

Linux only (`RLIMIT_AS`, `/proc/self/status`).
"""

import subprocess
import sys

import pytest

CHILD = r"""
import resource, sys
import numpy as np
import fmbgrid as fg

offset, call = int(sys.argv[1]), sys.argv[2]

def vm_size():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize")

rng = np.random.default_rng(5)
n = 6000
lo = rng.uniform(0, 12, (n, 3))
w = fg.World(3)
w.insert(fg.Frames.from_aabbs(lo, lo + rng.uniform(0.5, 2.0, (n, 3))), velocities=rng.uniform(-1, 1, (n, 3)))
w.step(0.001)  # the thread pool started, the buffers of a small step made
twin = fg.World.restore(w.snapshot())
dirs = rng.normal(size=(n, 3))
run = {
    "step": lambda world: world.step(0.05),
    "pairs_within": lambda world: world.pairs_within(1.0),
    "query_aabbs": lambda world: world.query_aabbs(lo - 1.0, lo + 3.0),
    "cast_rays_all": lambda world: world.cast_rays_all(lo, dirs, 30.0),
}[call]
hard = resource.getrlimit(resource.RLIMIT_AS)[1]
resource.setrlimit(resource.RLIMIT_AS, (vm_size() + offset, hard))
try:
    got = run(w)
    refused = None
except MemoryError as e:
    refused = str(e)
resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
want = run(twin)
if refused is not None:
    got = run(w)  # the refused call again, uncapped: as if never refused
for a, b in zip(got, want):
    assert np.array_equal(a, b, equal_nan=True), "the refusal changed the world"
print("refused" if refused else "answered", len(want[0]), refused or "")
"""

OFFSETS_MB = [0, 8, 64, 512]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")
@pytest.mark.parametrize(
    "call",
    ["step", "pairs_within", "query_aabbs", "cast_rays_all"],
)
def test_low_memory_is_a_memory_error_and_changes_nothing(call):
    outcomes = []
    for mb in OFFSETS_MB:
        p = subprocess.run(
            [sys.executable, "-c", CHILD, str(mb << 20), call], capture_output=True, text=True, timeout=120
        )
        assert p.returncode == 0, f"{call} at +{mb} MB: exit {p.returncode}\n{p.stderr[-2000:]}"
        outcome = p.stdout.split()[0]
        if outcome == "refused":
            assert "memory" in p.stdout, p.stdout
        outcomes.append(outcome)
    # The sweep spans the call: refused under the lowest caps, answered
    # under the highest.
    assert outcomes[0] == "refused" and outcomes[-1] == "answered", list(zip(OFFSETS_MB, outcomes))
