"""Fixtures: the fake Harness (as tests/pipeline) and the HTTP client (as tests/http)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.harness import Harness
from tests.http.conftest import client  # noqa: F401 (a fixture)


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    return harness
