"""A valid first delivery meets the idempotency barrier and opens its run in one unit of
work; a redelivery through the same path is still settled, never run again."""

from __future__ import annotations

from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outcome import OutcomeKind
from tests.fakes.harness import Harness


async def test_a_new_task_opens_its_run_in_one_unit_of_work(h: Harness) -> None:
    pipeline = ParseTaskPipeline(h.services, stages=[])
    task = h.task()
    before = h.db.units_opened
    outcome = await pipeline.handle(task)
    assert outcome.kind is OutcomeKind.RAN
    assert h.db.units_opened - before == 1
    assert h.run(task.task_id).task_id == task.task_id
    again = await pipeline.handle(task)
    assert again.kind is OutcomeKind.INTERRUPTED  # no stage ran: the run is not terminal
    assert h.db.units_opened - before == 2
