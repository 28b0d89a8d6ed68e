"""Shared fixtures: the Rust API's reference answers, the repository's paths."""

import json
import pathlib

import pytest

from fmbgrid import _fmbgrid

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent


@pytest.fixture(scope="session")
def reference():
    """The Rust crate's answers on seeded input (python/src/reference.rs: the
    crate's API called directly, none of the bindings' code)."""
    return json.loads(_fmbgrid._reference_answers())


@pytest.fixture(scope="session")
def repo():
    return REPO
