"""Fixtures: a Harness of fakes with the default user's embedding configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.harness import Harness


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    return harness
