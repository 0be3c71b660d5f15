"""Hole 4 of issue 12: an internal failure must not leave a run PROCESSING for ever.

When the store fails mid-run and the consumer's best-effort INTERNAL_UNKNOWN_ERROR write
fails too, the message is dead-lettered and the run stays PROCESSING with no result. The
running pipeline touches a heartbeat; the worker's stale-run sweep ends every unfinished
run whose heartbeat is older than `stale_after` (FAILED INTERRUPTED_TASK, result owed).
"""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

from ragline.application.pipeline.settings import PipelineSettings
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.tasks import TaskStatus
from ragline.domain.parse_run import FailureCode, PipelineStatus, Stage
from tests.fakes.harness import Harness, encode_task
from tests.fakes.messaging import FakeDelivery


async def _stuck_run(h: Harness) -> str:
    """A run left PROCESSING: the store fails mid-run, then the fallback's save fails."""
    h.faults.arm_after("uow.runs.save", PersistenceError("connection lost"), 3)
    h.faults.arm("uow.runs.save", PersistenceError("still down"))  # fail_internal's save
    task = h.task()
    delivery = FakeDelivery(encode_task(task))
    assert await h.consumer.process(delivery) is None
    assert delivery.dead_letter_reason is not None  # no redelivery will come
    assert h.run(task.task_id).pipeline_status is PipelineStatus.PROCESSING
    assert task.task_id not in h.db.outbox
    return task.task_id


async def test_the_sweep_ends_a_run_whose_failure_could_not_be_recorded(h: Harness) -> None:
    task_id = await _stuck_run(h)
    assert await h.pipeline.converge_stale() == []  # not stale yet: it may still be running
    h.clock.advance(h.settings.stale_after)
    assert await h.pipeline.converge_stale() == [task_id]
    run = h.run(task_id)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INTERRUPTED_TASK
    assert run.recover_from_stage is not None  # a retry resumes it
    result = h.result(task_id)
    assert result.task_status is TaskStatus.FAILED
    assert (await h.relay.relay_once()).sent == 1
    assert await h.pipeline.converge_stale() == []  # once


async def test_a_heartbeat_keeps_a_run_from_the_sweep(h: Harness) -> None:
    task_id = await _stuck_run(h)
    h.clock.advance(h.settings.stale_after - timedelta(seconds=1))
    async with h.db() as uow:  # its worker is alive and says so
        assert await uow.runs.heartbeat(task_id, h.clock.now())
        await uow.commit()
    h.clock.advance(timedelta(seconds=2))
    assert await h.pipeline.converge_stale() == []
    h.clock.advance(h.settings.stale_after)
    assert await h.pipeline.converge_stale() == [task_id]


async def test_two_sweeps_at_once_converge_each_run_once(h: Harness) -> None:
    stuck = {await _stuck_run(h) for _ in range(4)}
    h.clock.advance(h.settings.stale_after * 2)
    first, second = await asyncio.gather(h.pipeline.converge_stale(), h.pipeline.converge_stale())
    assert not set(first) & set(second)
    assert set(first) | set(second) == stuck
    assert all(h.run(t).pipeline_status is PipelineStatus.FAILED for t in stuck)


async def test_the_worker_sweep_runs_at_start_up(h: Harness) -> None:
    task_id = await _stuck_run(h)
    h.clock.advance(h.settings.stale_after)
    stop = asyncio.Event()
    sweeping = asyncio.create_task(h.pipeline.sweep_until(stop))
    for _ in range(500):
        if h.run(task_id).is_terminal:
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(sweeping, 5)
    assert h.run(task_id).pipeline_status is PipelineStatus.FAILED


async def test_a_running_run_touches_its_heartbeat(tmp_path: Path) -> None:
    settings = PipelineSettings(
        embed_batch_size=3,
        sparse_batch_size=3,
        heartbeat_interval=timedelta(milliseconds=5),
        stale_after=timedelta(seconds=1),
    )
    h = Harness(tmp_path, settings)
    h.configure_embedding()
    release = threading.Event()
    parse = h.parser.parse

    def slow_parse(*args: Any) -> Any:  # a long parse, on the stage's worker thread
        assert release.wait(30)
        return parse(*args)

    h.parser.parse = slow_parse  # type: ignore[method-assign]
    task = h.task()
    running = asyncio.create_task(h.pipeline.handle(task))
    for _ in range(3000):
        if h.faults.hits["uow.runs.heartbeat"] >= 2 and task.task_id in h.db.heartbeats:
            break
        await asyncio.sleep(0.01)
    assert h.run(task.task_id).status_of(Stage.CLEANING).value == "PROCESSING"
    assert task.task_id in h.db.heartbeats  # touched while the parse was still going
    release.set()
    await asyncio.wait_for(running, 30)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
