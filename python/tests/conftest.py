"""Shared fixtures: the Rust API's reference answers, the repository's paths."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE = HERE.parent  # python/
REPO = PACKAGE.parent


@pytest.fixture(scope="session")
def reference(tmp_path_factory):
    """The Rust crate's answers (python/examples/reference.rs) on seeded input:
    from $FMBGRID_REFERENCE when set (CI makes it), else made now with cargo."""
    path = os.environ.get("FMBGRID_REFERENCE")
    if not path:
        if shutil.which("cargo") is None:
            pytest.skip("no cargo to build the Rust reference (set FMBGRID_REFERENCE)")
        path = str(tmp_path_factory.mktemp("ref") / "reference.json")
        subprocess.run(
            ["cargo", "run", "--quiet", "--release", "--manifest-path", str(PACKAGE / "Cargo.toml"),
             "--example", "reference", "--", path],
            check=True,
        )
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def repo():
    return REPO
