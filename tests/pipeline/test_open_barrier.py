"""A valid first delivery meets the idempotency barrier and opens its run in one unit of
work; a redelivery through the same path is still settled, never run again."""

from __future__ import annotations

import attrs

from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outcome import OutcomeKind
from tests.fakes.harness import Harness
from tests.fakes.unit_of_work import FakeUnitOfWork


class Counting:
    def __init__(self, h: Harness) -> None:
        self.h = h
        self.opened = 0

    def __call__(self) -> FakeUnitOfWork:
        self.opened += 1
        return self.h.db()


async def test_a_new_task_opens_its_run_in_one_unit_of_work(h: Harness) -> None:
    counting = Counting(h)
    services = attrs.evolve(h.services, uow=counting)
    pipeline = ParseTaskPipeline(services, stages=[])
    task = h.task()
    outcome = await pipeline.handle(task)
    assert outcome.kind is OutcomeKind.RAN
    assert counting.opened == 1
    assert h.run(task.task_id).task_id == task.task_id
    again = await pipeline.handle(task)
    assert again.kind is OutcomeKind.INTERRUPTED  # no stage ran: the run is not terminal
    assert counting.opened == 2
