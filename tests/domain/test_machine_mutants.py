"""The shipped ParseRunMachine can fail: each docs/design/0002-run-state-machine.md check it makes
is shown to catch a deliberately broken variant (a mutant) of what it checks. Each test runs the
real machine on the mutant and expects the named invariant to be violated. docs/state-machine.md
lists mutant -> invariant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from ragline.domain.parse_run import (
    MarkdownLocation,
    ParseRun,
    RunEvent,
    Stage,
    StageState,
    StageStatus,
)
from ragline.testing.parse_run import InvariantViolation, ParseRunMachine

# Enough examples for Hypothesis to reach each bug; no shrinking (the failure is the point).
FIND = settings(
    max_examples=400,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def finds(machine: type[ParseRunMachine], match: str, examples: int = 400) -> None:
    with pytest.raises(InvariantViolation, match=match):
        run_state_machine_as_test(machine, settings=settings(FIND, max_examples=examples))


class PublishesBeforeSaving(ParseRunMachine):
    """The application sends a run's events first and commits it second."""

    def persist_then_publish(self, write: Callable[[], bool], run: ParseRun, cause: str) -> None:
        self.publish(run, cause)
        assert write()


class PublishesTwice(ParseRunMachine):
    """Every terminal event goes out twice (a retried publish that had succeeded)."""

    def notify(self, event: RunEvent, run: ParseRun, cause: str) -> None:
        super().notify(event, run, cause)
        super().notify(event, run, cause)


class NeverPublishes(ParseRunMachine):
    """A redelivered, interrupted run converges FAILED but nobody is told."""

    def publish(self, run: ParseRun, cause: str) -> None:
        if cause == "converge":
            run.pull_events()
            return
        super().publish(run, cause)


def test_the_machine_finds_a_publish_before_the_save() -> None:
    finds(PublishesBeforeSaving, r"invariant 5: .* notified before")


def test_the_machine_finds_a_result_published_twice() -> None:
    finds(PublishesTwice, r"invariant 5: 2 terminal events")


def test_the_machine_finds_a_terminal_run_never_announced() -> None:
    finds(NeverPublishes, r"invariant 5: 0 terminal events")


class InvariantsOnly(ParseRunMachine):
    """The domain checked by the invariants of docs/design/0002-run-state-machine.md alone, without
    the command model."""

    compare_with_model = False


@pytest.fixture
def succeed_starts_a_pending_stage(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Domain mutant: succeed_stage accepts a PENDING stage, starting it on the way, so a
    retry whose only unfinished stage is the last goes PENDING -> SUCCESS in one command."""
    original = ParseRun.succeed_stage

    def succeed_stage(
        self: ParseRun,
        stage: Stage,
        at: object,
        duration_ms: int,
        markdown: MarkdownLocation | None = None,
    ) -> None:
        startable = (
            self.stages[stage].status is StageStatus.PENDING
            and not self.is_terminal
            and all(self.stages[s].status is StageStatus.SUCCESS for s in stage.earlier)
            and duration_ms >= 0
            and (stage is Stage.CLEANING) == (markdown is not None)
        )
        if startable:
            self.stages[stage] = StageState(StageStatus.PROCESSING, started_at=at)  # type: ignore[arg-type]
            self._begin(at)  # type: ignore[arg-type]
        original(self, stage, at, duration_ms, markdown)  # type: ignore[arg-type]

    monkeypatch.setattr(ParseRun, "succeed_stage", succeed_stage)
    yield


@pytest.mark.usefixtures("succeed_starts_a_pending_stage")
def test_the_invariants_alone_find_pending_to_success() -> None:
    finds(InvariantsOnly, r"invariant 2: PENDING -> SUCCESS without passing PROCESSING", 4000)


@pytest.mark.usefixtures("succeed_starts_a_pending_stage")
def test_the_model_finds_pending_to_success_too() -> None:
    with pytest.raises(AssertionError, match="accepted, want"):
        run_state_machine_as_test(ParseRunMachine, settings=FIND)


@pytest.fixture
def retry_forgets_an_inherited_stage(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Domain mutant: derive_retry does not inherit the last SUCCESS stage."""
    original = ParseRun.derive_retry

    def derive_retry(self: ParseRun, new_task_id: str, at: object) -> ParseRun:
        run = original(self, new_task_id, at)  # type: ignore[arg-type]
        done = [s for s, st in run.stages.items() if st.inherited]
        if len(done) > 1:
            run.stages[done[-1]] = StageState(StageStatus.PENDING)
            run = attrs.evolve(run, stages=dict(run.stages))
        return run

    monkeypatch.setattr(ParseRun, "derive_retry", derive_retry)
    yield


@pytest.mark.usefixtures("retry_forgets_an_inherited_stage")
def test_the_invariants_alone_find_a_lost_inheritance() -> None:
    finds(InvariantsOnly, r"invariant 6: .* SUCCESS not inherited")
