"""The crash hook fires exactly at its point and passage, and is off by default."""

from __future__ import annotations

import threading

import pytest

from ragline.adapters.tracing.crash_points import CrashingTracing, CrashPoint
from ragline.application.ports.tracing import NO_TRACING
from ragline.bootstrap.factories import tracing
from ragline.bootstrap.settings import Settings


class Kills:
    def __init__(self) -> None:
        self.count = 0
        self.fired = threading.Event()

    def __call__(self) -> None:
        self.count += 1
        self.fired.set()


def _stage(hook: CrashingTracing, stage: str, kills: Kills) -> list[int]:
    """Kill counts seen at entry and at exit of one stage span."""
    seen = []
    with hook.span("ragline.stage", {"ragline.stage": stage}):
        seen.append(kills.count)
    seen.append(kills.count)
    return seen


def test_a_stage_point_fires_at_its_nth_entry_only() -> None:
    kills = Kills()
    hook = CrashingTracing(NO_TRACING, CrashPoint("CHUNKING", nth=2), kill=kills)
    assert _stage(hook, "CLEANING", kills) == [0, 0]
    assert _stage(hook, "CHUNKING", kills) == [0, 0]  # first passage
    assert _stage(hook, "CHUNKING", kills) == [1, 1]  # second: at entry, before the work
    assert _stage(hook, "CHUNKING", kills) == [1, 1]


def test_a_delay_fires_inside_the_stage() -> None:
    kills = Kills()
    hook = CrashingTracing(NO_TRACING, CrashPoint("VECTORIZING", delay_ms=5), kill=kills)
    with hook.span("ragline.stage", {"ragline.stage": "VECTORIZING"}):
        assert kills.fired.wait(10)  # the timer fires while the stage is still open
    assert kills.count == 1


def test_after_commit_fires_as_the_last_stage_closes() -> None:
    kills = Kills()
    hook = CrashingTracing(NO_TRACING, CrashPoint("after-commit"), kill=kills)
    assert _stage(hook, "KEYWORD_INDEXING", kills) == [0, 0]
    assert _stage(hook, "SPARSE_VECTORIZING", kills) == [0, 1]
    with hook.span("ragline.run", {}):
        pass
    assert kills.count == 1


def test_unknown_points_are_refused_and_the_hook_is_off_by_default(tmp_path: object) -> None:
    with pytest.raises(ValueError, match="unknown crash point"):
        CrashPoint("SOMEWHERE")
    assert tracing(Settings(_env_file=None)) is NO_TRACING  # type: ignore[call-arg]
    hooked = tracing(Settings(_env_file=None, test_crash_at="CLEANING"))  # type: ignore[call-arg]
    assert isinstance(hooked, CrashingTracing)
