"""Ingest progress: each poll reads only the oldest pending runs (one short unit of work,
not one read per file in flight), and a file's final stage states are reported when its
run ends, whether or not a poll saw them; a poll hands back the runs that ended."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

import ragline.application.ingest.use_case as use_case_module
from ragline.application.access import ReferencePolicy
from ragline.application.ingest.use_case import FileAction, FileOutcome, IngestFiles, _Pending
from ragline.domain.parse_run import STAGE_ORDER, MarkdownLocation, ParseRun, Stage, StageStatus
from ragline.testing.kits.persistence import identity
from tests.fakes.unit_of_work import FakeDatabase

AT = datetime(2026, 1, 1, tzinfo=UTC)


class Recorder:
    def __init__(self) -> None:
        self.changes: list[tuple[str, Stage, StageStatus]] = []

    def file_submitted(self, source: Any, action: FileAction, task_id: str) -> None:
        pass

    def stage_changed(self, task_id: str, stage: Stage, status: StageStatus) -> None:
        self.changes.append((task_id, stage, status))

    def file_finished(self, outcome: FileOutcome) -> None:
        pass


def _use_case(db: FakeDatabase, window: int) -> IngestFiles:
    unused: Any = None
    return IngestFiles(
        db,
        unused,
        unused,
        unused,
        source_bucket="s",
        md_bucket="m",
        references=ReferencePolicy.of(["s", "m"]),
        poll_window=window,
    )


def _pending() -> _Pending:
    unused: Any = None
    return _Pending(unused, unused, FileAction.NEW, unused)


def _started(task_id: str) -> ParseRun:
    run = ParseRun.open(identity(task_id), AT)
    run.start_stage(Stage.CLEANING, AT)
    return run


async def test_a_poll_reads_only_the_oldest_pending_runs() -> None:
    db = FakeDatabase()
    ids = [f"t{i}" for i in range(5)]
    for task_id in ids:
        db.runs[task_id] = _started(task_id)
    pending = {task_id: _pending() for task_id in ids}
    observer = Recorder()
    await _use_case(db, window=2)._poll_once(pending, observer)
    assert {task_id for task_id, _, _ in observer.changes} == {"t0", "t1"}
    assert ("t0", Stage.CLEANING, StageStatus.PROCESSING) in observer.changes
    observer.changes.clear()
    await _use_case(db, window=2)._poll_once(pending, observer)
    assert observer.changes == []  # nothing changed since the last poll


async def test_the_final_stage_states_are_reported_when_the_result_arrives() -> None:
    db = FakeDatabase()
    run = ParseRun.open(attrs.evolve(identity("t0", user_id="1"), dataset_id="1"), AT)
    run.start_stage(Stage.CLEANING, AT)
    db.runs["t0"] = run
    item = _pending()
    item.task = SimpleNamespace(user_id=1, dataset_id=1, original_file_id=1, task_id="t0")
    observer = Recorder()
    use_case = _use_case(db, window=4)
    assert await use_case._poll_once({"t0": item}, observer) == []  # saw CLEANING PROCESSING
    run.succeed_stage(Stage.CLEANING, AT, 1, MarkdownLocation("m", "k"))
    for stage in STAGE_ORDER[1:]:
        run.start_stage(stage, AT)
        run.succeed_stage(stage, AT, 1, None)
    observer.changes.clear()
    ended = await use_case._poll_once({"t0": item}, observer)
    assert [(stage, status) for _, stage, status in observer.changes] == [
        (stage, StageStatus.SUCCESS) for stage in STAGE_ORDER
    ]
    outcome = await use_case._settle(ended[0], {}, observer)
    assert outcome is not None and outcome.status == "success"


def _ended(task_id: str) -> ParseRun:
    """A run that succeeded, with the wire's integer ids (its result is built)."""
    run = ParseRun.open(attrs.evolve(identity(task_id, user_id="1"), dataset_id="1"), AT)
    run.start_stage(Stage.CLEANING, AT)
    run.succeed_stage(Stage.CLEANING, AT, 1, MarkdownLocation("m", "k"))
    for stage in STAGE_ORDER[1:]:
        run.start_stage(stage, AT)
        run.succeed_stage(stage, AT, 1, None)
    return run


async def test_a_poll_that_found_runs_ended_is_followed_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ten ended runs, a window of two: one wait, then five polls back to back (and the
    empty one that ends the loop is not needed: nothing is pending). Waiting between
    windows capped an ingest at `poll_window` files per `poll_seconds`."""
    db = FakeDatabase()
    pending: dict[str, _Pending] = {}
    for i in range(10):
        task_id = f"t{i}"
        db.runs[task_id] = _ended(task_id)
        item = _pending()
        item.task = SimpleNamespace(user_id=1, dataset_id=1, original_file_id=i, task_id=task_id)
        pending[task_id] = item
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def counted(seconds: float) -> None:
        waits.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(use_case_module.asyncio, "sleep", counted)
    outcomes = await _use_case(db, window=2)._await_outcomes(pending, Recorder())
    assert sorted(o.task_id for o in outcomes) == sorted(f"t{i}" for i in range(10))
    assert [w for w in waits if w] == [0.2]  # others: the fake store yielding (sleep 0)
