"""Hypothesis state machines over the parse-run domain, reusable on any RunStore.

`ParseRunMachine` drives random starts, successes, failures, illegal moves, racing
redeliveries and chains of (racing) retries through a store, and checks
docs/design/0002-run-state-machine.md after every step. Run it as `TestX =
ParseRunMachine.TestCase`, or subclass it and override `make_store()` to run it on your own
persistence.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import ClassVar

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from ragline.domain.parse_run import (
    CHUNK_STATUS_MOVES,
    FIRST_STAGE,
    LAST_STAGE,
    STAGE_ORDER,
    ChunkIndexStatus,
    ChunkStatusMove,
    DomainError,
    FailureCode,
    IllegalChunkStatusMove,
    MarkdownLocation,
    ParseRun,
    RetryNotAllowed,
    RetryRefusal,
    RunEvent,
    RunFailed,
    Stage,
    StageStatus,
    TaskIdentity,
    needs_indexing,
    retry_refusal,
    terminal_result,
)
from ragline.testing.parse_run.commands import (
    Command,
    Converge,
    Fail,
    Reject,
    Skip,
    Start,
    Succeed,
    Supersede,
    expected_after,
    expected_error,
    expected_refusal,
)
from ragline.testing.parse_run.invariants import (
    check_durable_before_notify,
    check_events,
    check_family,
    check_run,
    check_step,
)
from ragline.testing.parse_run.store import InMemoryRunStore, RunStore
from ragline.testing.parse_run.strategies import (
    EPOCH,
    commands,
    durations,
    failure_codes,
    failure_details,
    markdown_locations,
    next_move,
    stages,
)

SUCCESS = StageStatus.SUCCESS


class ParseRunMachine(RuleBasedStateMachine):
    """Random workloads on a store of runs, with every invariant of
    docs/design/0002-run-state-machine.md after each step.

    The machine plays the application too: `persist_then_publish` is its commit-then-notify
    order, and every notification is counted per task and cause ("open", "command",
    "converge" for terminal events, "resend" for a redelivered terminal task), with the
    store checked at the moment it goes out. tests/domain/test_machine_mutants.py breaks
    that order, the counts and the domain on purpose and expects the machine to fail.
    """

    runs = Bundle("runs")
    # Compare every command with the independent model (commands.py). The mutant tests
    # turn it off to show that the invariants of docs/design/0002-run-state-machine.md alone find a
    # broken domain.
    compare_with_model: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.store = self.make_store()
        self.tick = 0
        self.ids = 0
        self.announced: dict[str, list[RunEvent]] = {}
        self.notified: Counter[tuple[str, str]] = Counter()  # (task_id, cause) -> count
        self.failed: list[str] = []

    def make_store(self) -> RunStore:
        """The store under test; override to run the machine on real persistence."""
        return InMemoryRunStore()

    # -- helpers --------------------------------------------------------------------------

    def now(self) -> datetime:
        self.tick += 1
        return EPOCH + timedelta(seconds=self.tick)

    def fresh_id(self) -> str:
        self.ids += 1
        return f"task-{self.ids}"

    def load(self, task_id: str) -> ParseRun:
        run = self.store.get(task_id)
        assert run is not None, f"{task_id} vanished from the store"
        assert run.pending_events == (), "a loaded run carries unsent events"
        return run

    def persist_then_publish(self, write: Callable[[], bool], run: ParseRun, cause: str) -> None:
        """The application's order (invariant 5 of docs/design/0002-run-state-machine.md): commit
        the run, then send its events."""
        assert write(), f"{cause}: the store refused the write of {run.task_id}"
        self.publish(run, cause)

    def publish(self, run: ParseRun, cause: str) -> None:
        """Send the run's events, checking the store as each goes out (not after)."""
        for event in run.pull_events():
            self.notify(event, run, cause)

    def notify(self, event: RunEvent, run: ParseRun, cause: str) -> None:
        stored = self.store.get(event.task_id)
        check_durable_before_notify(stored, run)
        assert stored is not None
        self.notified[event.task_id, cause] += 1
        self.announced.setdefault(event.task_id, []).append(event)
        if isinstance(event, RunFailed) and stored.stages[FIRST_STAGE].status is SUCCESS:
            self.failed.append(event.task_id)

    def create(self, run: ParseRun) -> str:
        self.persist_then_publish(lambda: self.store.add(run), run, "open")
        assert not self.store.add(run), "task_id must be unique"
        return run.task_id

    def perform(self, task_id: str, command: Command) -> None:
        """Apply `command` to the stored run and compare with the model, then commit."""
        before = self.load(task_id)
        run = self.load(task_id)
        model = self.compare_with_model
        want_error = expected_error(before, command) if model else None
        at = self.now()
        try:
            command.apply(run, at)
        except (DomainError, ValueError) as error:
            if model:
                assert type(error) is want_error, f"{command}: raised {error!r}, want {want_error}"
            if isinstance(error, DomainError):
                assert error.rule in str(error), "the error names its rule"
            assert run == before and run.pending_events == (), "failed command changed the run"
            return
        last = isinstance(command, Succeed | Skip) and command.stage is LAST_STAGE
        check_step(before, run, last_stage_finished=last)
        if model:
            assert want_error is None, f"{command} accepted, want {want_error}"
            want, events = expected_after(before, command, at)
            assert run == want, f"{command}:\n got  {run}\n want {want}"
            assert list(run.pending_events) == events, f"{command}: events {run.pending_events}"
        if isinstance(command, Supersede):
            return  # the store supersedes only through supersede_and_add (see retry)
        self.persist_then_publish(lambda: self.store.save(run, before.version), run, "command")
        assert not self.store.save(before, before.version), "stale write accepted"
        assert not self.store.save(run, before.version), "a replayed write was accepted"

    # -- rules ----------------------------------------------------------------------------

    def open_fresh(self) -> str:
        identity = TaskIdentity(self.fresh_id(), "file-1", "dpt-1", "user-1", "ds-1", "pdf")
        run = ParseRun.open(identity, self.now())
        assert run.pending_events == ()
        return self.create(run)

    @initialize(target=runs)
    def first_run(self) -> str:
        return self.open_fresh()

    @rule(target=runs)
    def open_run(self) -> str:
        return self.open_fresh()

    @rule(task_id=runs, command=commands(st.sampled_from(["task-1", "task-2", "task-x"])))
    def any_command(self, task_id: str, command: Command) -> None:
        self.perform(task_id, command)

    @rule(
        task_id=runs,
        succeed=st.integers(0, 6).map(bool),
        code=failure_codes(),
        detail=failure_details(),
        duration=durations(),
    )
    def advance(
        self, task_id: str, succeed: bool, code: FailureCode, detail: str, duration: int
    ) -> None:
        """The well-behaved next move (mostly successes), so runs get deep and finish."""
        run = self.load(task_id)
        move = next_move(run, succeed, code, detail, duration)
        if move is not None:
            self.perform(task_id, move)

    @rule(
        task_id=runs,
        moves=st.integers(1, 14),
        fail_at=st.integers(1, 16),
        code=failure_codes(),
        duration=durations(),
    )
    def run_pipeline(
        self, task_id: str, moves: int, fail_at: int, code: FailureCode, duration: int
    ) -> None:
        """Several well-behaved moves in a row (failing at move `fail_at`, if reached), so
        runs reach the last stage and retries resume deep; invariants after each move."""
        for index in range(moves):
            move = next_move(self.load(task_id), index != fail_at, code, "boom", duration)
            if move is None:
                return
            self.perform(task_id, move)
            self.spec_section_4_holds()

    @rule(target=runs, stop=stages(), interrupt=st.booleans(), code=failure_codes())
    def deep_failure(self, stop: Stage, interrupt: bool, code: FailureCode) -> str:
        """A fresh run that succeeds up to `stop` and fails there (or is interrupted)."""
        task_id = self.open_fresh()
        for _ in range(2 * stop.position + 1):
            move = next_move(self.load(task_id), True, code, "boom", 1)
            assert move is not None
            self.perform(task_id, move)
        self.perform(task_id, Converge("redelivered") if interrupt else Fail(stop, code, "x", 2))
        return task_id

    @rule(task_id=runs, duration=durations())
    def finish(self, task_id: str, duration: int) -> None:
        """Drive a run to its end with successes only: SUCCESS must be reached often."""
        for _ in range(14):
            move = next_move(
                self.load(task_id), True, FailureCode.INTERNAL_UNKNOWN_ERROR, "", duration
            )
            if move is None:
                return
            self.perform(task_id, move)

    @rule(task_id=runs, wrong_markdown=markdown_locations(), code=failure_codes())
    def misuse(self, task_id: str, wrong_markdown: MarkdownLocation, code: FailureCode) -> None:
        """Illegal moves aimed at the run's current position (random ones rarely hit it)."""
        run = self.load(task_id)
        for stage, state in run.stages_in_order():
            if state.status is StageStatus.PROCESSING:
                markdown = None if stage is Stage.CLEANING else wrong_markdown
                self.perform(task_id, Succeed(stage, 1, markdown))
                self.perform(task_id, Succeed(stage, -1, markdown))
                self.perform(task_id, Start(stage))
                self.perform(task_id, Skip(stage))
                self.perform(task_id, Reject(code, "late"))
                if not stage.is_last:
                    self.perform(task_id, Start(STAGE_ORDER[stage.position + 1]))
            elif state.status is StageStatus.SUCCESS:
                self.perform(task_id, Start(stage))
                if not state.inherited:
                    self.perform(task_id, Skip(stage))
            elif state.status is StageStatus.PENDING:  # the next stage: success without start
                markdown = wrong_markdown if stage is Stage.CLEANING else None
                self.perform(task_id, Succeed(stage, 1, markdown))
                break

    @rule(task_id=runs, racing=st.booleans())
    def redeliver(self, task_id: str, racing: bool) -> None:
        """Redelivery: a terminal run is only re-announced; an unfinished one converges."""
        first = self.load(task_id)
        second = self.load(task_id)
        loaded_version = second.version
        if first.is_terminal:
            result = terminal_result(first)
            assert result.task_status == ("success" if first.failure_reason is None else "failed")
            assert self.load(task_id) == first, "resending changed the run"
            self.notified[task_id, "resend"] += 1
            return
        at = self.now()
        first.converge_interrupted(at)
        check_step(second, first, last_stage_finished=False)
        self.persist_then_publish(lambda: self.store.save(first, second.version), first, "converge")
        if racing:  # the same message delivered twice at once: the slower one loses the CAS
            second.converge_interrupted(self.now())
            assert not self.store.save(second, loaded_version), "racing redelivery won twice"

    @rule(target=runs, previous_id=runs, attempts=st.integers(1, 3))
    def retry(self, previous_id: str, attempts: int) -> object:
        """Retry any run (most are not eligible and get a RETRY_VALIDATION run)."""
        return multiple(*self.attempt_retries(previous_id, attempts))

    def attempt_retries(self, previous_id: str, attempts: int) -> list[str]:
        """`attempts` retries of one run read the same snapshot; the CAS picks one winner."""
        snapshot = self.load(previous_id)
        assert retry_refusal(snapshot, previous_id) is RetryRefusal.SAME_TASK_ID
        created: list[str] = []
        winners = 0
        for _ in range(attempts):
            new_id = self.fresh_id()
            at = self.now()
            refusal = retry_refusal(snapshot, new_id)
            assert refusal is expected_refusal(snapshot, new_id), f"refusal {refusal}"
            previous = copy.deepcopy(snapshot)
            try:
                previous.derive_retry(new_id, at)
            except RetryNotAllowed:
                pass
            else:
                raise AssertionError("derived a retry before superseding")
            if refusal is None:
                previous.supersede(new_id)
                retry_run = previous.derive_retry(new_id, at)
                assert retry_run.pending_events == ()
                if self.store.supersede_and_add(previous, retry_run):
                    winners += 1
                    created.append(new_id)
                    continue
                refusal = RetryRefusal.CONCURRENT_SUPERSEDE
            else:
                try:
                    previous.supersede(new_id)
                except RetryNotAllowed:
                    pass
                else:
                    raise AssertionError(f"supersede accepted a refused retry ({refusal})")
            identity = attrs.evolve(snapshot.identity, task_id=new_id)
            created.append(self.create(ParseRun.retry_loser(identity, previous_id, refusal, at)))
        eligible = retry_refusal(snapshot, "task-new") is None
        assert winners == (1 if eligible else 0), f"{winners} winners, eligible={eligible}"
        after = self.load(previous_id)
        if not eligible:
            assert after == snapshot, "a refused retry touched the previous run"
        else:
            assert after.superseded_by_task_id == created[0], "the first attempt won"
            assert attrs.evolve(after, superseded_by_task_id=None, version=snapshot.version) == (
                snapshot
            ), "superseding changed more than superseded_by_task_id"
        return created

    @precondition(lambda self: bool(self.failed))
    @rule(target=runs, back=st.integers(0, 3), attempts=st.integers(1, 3))
    def retry_failed(self, back: int, attempts: int) -> object:
        """Retry a recent failure that got past CLEANING: makes deep resumed chains likely."""
        previous_id = self.failed[-1 - back % len(self.failed)]
        return multiple(*self.attempt_retries(previous_id, attempts))

    @rule(target=runs, code=failure_codes(), detail=failure_details())
    def reject_new(self, code: FailureCode, detail: str) -> str:
        """A message that fails validation: its fresh run is rejected before any stage."""
        task_id = self.open_fresh()
        self.perform(task_id, Reject(code, detail))
        return task_id

    @rule(target=runs)
    def retry_unknown(self) -> str:
        """A retry naming a run that does not exist fails on its own, touching nothing."""
        new_id = self.fresh_id()
        identity = TaskIdentity(new_id, "file-1", "dpt-1", "user-1", "ds-1", "pdf")
        refusal = retry_refusal(None, new_id)
        assert refusal is RetryRefusal.PREVIOUS_NOT_FOUND
        return self.create(ParseRun.retry_loser(identity, "task-missing", refusal, self.now()))

    # -- invariants -----------------------------------------------------------------------

    @invariant()
    def spec_section_4_holds(self) -> None:
        runs = {task_id: self.load(task_id) for task_id in self.store.task_ids()}
        for task_id, run in runs.items():
            check_run(run)
            in_order = [(stage, run.stages[stage]) for stage in STAGE_ORDER]
            assert list(run.stages_in_order()) == in_order
            unfinished = [s for s, st_ in in_order if st_.status is not SUCCESS]
            assert run.next_stage is (unfinished[0] if unfinished else None)
            assert run.is_terminal is run.pipeline_status.is_terminal
            check_events(run, self.announced.get(task_id, []))
            events = sum(n for (tid, cause), n in self.notified.items() if tid == task_id)
            resends = self.notified[task_id, "resend"]
            assert events - resends == len(self.announced.get(task_id, [])), "uncounted event"
        check_family(runs)


_ALLOWED_CHUNK_MOVES: dict[str, tuple[frozenset[ChunkIndexStatus], ChunkIndexStatus]] = {
    "BEGIN_INDEXING": (
        frozenset({ChunkIndexStatus.PENDING, ChunkIndexStatus.FAILED}),
        ChunkIndexStatus.INDEXING,
    ),
    "COMPLETE": (frozenset({ChunkIndexStatus.INDEXING}), ChunkIndexStatus.SUCCESS),
    "FAIL": (frozenset({ChunkIndexStatus.INDEXING}), ChunkIndexStatus.FAILED),
}


class ChunkStatusMachine(RuleBasedStateMachine):
    """Random compare-and-set moves on a few chunks: SUCCESS is never left or re-entered."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks = dict.fromkeys(range(4), ChunkIndexStatus.PENDING)
        self.done: set[int] = set()

    @rule(chunk=st.integers(0, 3), move=st.sampled_from(CHUNK_STATUS_MOVES))
    def apply_move(self, chunk: int, move: ChunkStatusMove) -> None:
        allowed, to = _ALLOWED_CHUNK_MOVES[move.name]
        assert (move.allowed_from, move.to) == (allowed, to), f"{move.name} changed its rule"
        current = self.chunks[chunk]
        assert move.permits(current) is (current in allowed)
        try:
            new = move.apply(current)
        except IllegalChunkStatusMove:
            assert current not in allowed
            return
        assert current in allowed and new is to
        assert not (current is ChunkIndexStatus.SUCCESS and new is ChunkIndexStatus.SUCCESS)
        self.chunks[chunk] = new
        if new is ChunkIndexStatus.SUCCESS:
            self.done.add(chunk)

    @invariant()
    def success_is_final(self) -> None:
        for chunk in self.done:
            assert self.chunks[chunk] is ChunkIndexStatus.SUCCESS, "a SUCCESS chunk was redone"
        for status in ChunkIndexStatus:
            assert needs_indexing(status) is (status is not ChunkIndexStatus.SUCCESS)


__all__ = ["ChunkStatusMachine", "ParseRunMachine"]
