"""The pipeline machine can fail: its result checks (one put per terminal event, one per
resend, nothing published before it is durable) each catch a deliberately broken pipeline.
Each test runs the real PipelineMachine against a mutant of ResultOutbox (the application's
result writer) and expects the machine to raise. docs/state-machine.md lists them.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from ragline.application.pipeline.results import ResultOutbox, build_result
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.domain.parse_run import ParseRun
from tests.fakes.harness import encode_result
from tests.pipeline.test_machine import PipelineMachine

FIND = settings(
    max_examples=200,
    stateful_step_count=15,
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def finds(match: str) -> None:
    with pytest.raises(AssertionError, match=match):
        run_state_machine_as_test(PipelineMachine, settings=FIND)


def test_the_unbroken_pipeline_passes_the_same_search() -> None:
    run_state_machine_as_test(PipelineMachine, settings=settings(FIND, max_examples=20))


def test_the_machine_finds_a_result_put_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: the terminal event's result is queued twice (one row, two puts: a dict of
    rows by task_id alone could not tell)."""
    original = ResultOutbox._put

    async def put_twice(
        self: ResultOutbox, uow: UnitOfWork, run: ParseRun, log_id: int, at: object
    ) -> None:
        await original(self, uow, run, log_id, at)  # type: ignore[arg-type]
        if run.pending_events:
            await original(self, uow, run, log_id, at)  # type: ignore[arg-type]

    monkeypatch.setattr(ResultOutbox, "_put", put_twice)
    finds(r"2 result puts as .* finished")


def test_the_machine_finds_a_publish_before_the_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: the result is published straight away, before the unit of work commits."""
    original = ResultOutbox._put
    machines: list[PipelineMachine] = []
    init = PipelineMachine.__init__

    def remember(self: PipelineMachine) -> None:
        init(self)
        machines.append(self)

    async def publish_early(
        self: ResultOutbox, uow: UnitOfWork, run: ParseRun, log_id: int, at: object
    ) -> None:
        body = encode_result(build_result(run, log_id, self.language))
        await machines[-1].h.publisher.publish(body, run.task_id)
        await original(self, uow, run, log_id, at)  # type: ignore[arg-type]

    monkeypatch.setattr(PipelineMachine, "__init__", remember)
    monkeypatch.setattr(ResultOutbox, "_put", publish_early)
    finds("published before commit")


def test_the_machine_finds_a_missing_resend(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: a redelivered terminal task is acked without resending its result."""

    async def no_resend(
        self: ResultOutbox, uow: UnitOfWork, run: ParseRun, log_id: int, at: object
    ) -> None:
        return None

    monkeypatch.setattr(ResultOutbox, "resend_result", no_resend)
    finds("no resend")


def test_the_machine_finds_a_result_never_queued(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: a run that ends FAILED is committed without its result."""
    original = ResultOutbox.queue_owed_results

    async def drop_failures(
        self: ResultOutbox, uow: UnitOfWork, run: ParseRun, log_id: int, at: object
    ) -> None:
        if run.failure_reason is None:
            await original(self, uow, run, log_id, at)  # type: ignore[arg-type]

    monkeypatch.setattr(ResultOutbox, "queue_owed_results", drop_failures)
    finds(r"0 result puts as .* finished")
