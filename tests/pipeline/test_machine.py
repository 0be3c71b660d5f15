"""Hypothesis state machine at the use-case level.

Random tasks, faults injected into the fake ports at random points (stage work, storage,
the store itself, a process crash), random redeliveries, retries (also two racing), relay
passes and bad messages. After every step the stored state satisfies the invariants of
docs/design/0002-run-state-machine.md (`ragline.testing.parse_run`) and the outbox holds exactly one
result per terminal run, matching that run. Results are counted, not only looked up: every committed
outbox put is counted per task and cause (the run's terminal event, or a resend for a redelivered
terminal task), and every publish is checked against the store at the moment it happens.
tests/pipeline/test_machine_mutants.py breaks each on purpose and expects the machine to fail.
"""

from __future__ import annotations

import asyncio
import errno
import shutil
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from ragline.application.pipeline.outcome import PipelineOutcome
from ragline.application.pipeline.results import build_result
from ragline.application.pipeline.settings import PipelineSettings
from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.ports.keyword_index import KeywordIndexUnavailable, KeywordWriteFailed
from ragline.application.ports.object_storage import StorageUnavailable
from ragline.application.ports.parser import ParseEngineFailed
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.ports.vector_index import VectorIndexUnavailable
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_run import ChunkIndexStatus
from ragline.testing.parse_run import check_family, check_run
from tests.fakes.harness import Harness, decode_result, encode_task
from tests.fakes.messaging import FakeDelivery


class Crash(BaseException):
    """The process dies mid-run: nothing catches it, nothing after it runs."""


FAULTS: dict[str, Callable[[], BaseException]] = {
    "parser.parse": lambda: ParseEngineFailed("corrupt"),
    "storage.get": lambda: StorageUnavailable("503"),
    "storage.get.write": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "storage.put": lambda: StorageUnavailable("503"),
    "embedders.resolve": lambda: UnusableEmbeddingConfig("bad provider"),
    "embedder.embed": lambda: RuntimeError("model 503"),
    "vectors.upsert_dense": lambda: VectorIndexUnavailable("down"),
    "tokenizer.tokenize": lambda: ValueError("bad text"),
    "keywords.delete": lambda: KeywordWriteFailed("refused"),
    "keywords.write": lambda: KeywordIndexUnavailable("down"),
    "keywords.write.partial": lambda: KeywordWriteFailed("bulk"),
    "sparse.encode": lambda: RuntimeError("oom"),
    "vectors.upsert_sparse": lambda: VectorIndexUnavailable("down"),
    "uow.chunks.replace_lineage": lambda: PersistenceError("deadlock"),
    "uow.runs.save": lambda: PersistenceError("connection lost"),
    "uow.commit": lambda: PersistenceError("commit failed"),
    "uow.outbox.put": lambda: PersistenceError("outbox insert failed"),
    "crash": Crash,
}

faults = st.none() | st.tuples(st.sampled_from(sorted(FAULTS)), st.integers(0, 3))
file_kinds = st.sampled_from(["txt", "md", "pdf"])


class PipelineMachine(RuleBasedStateMachine):
    tasks = Bundle("tasks")

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="ragline-machine-"))
        # default batch sizes: fewer thread hops per run (batch-level failures have their
        # own tests in test_failures.py)
        self.h = Harness(self.tmp, PipelineSettings())
        self.h.configure_embedding()
        self.loop = asyncio.new_event_loop()
        self.crashed: dict[str, ParseTaskCommand] = {}
        self.puts_by_cause: Counter[tuple[str, str]] = Counter()  # (task_id, event|resend)
        self.early_publishes: list[str] = []  # published while not durable (must stay empty)
        publish = self.h.publisher.publish

        async def publish_checked(
            body: bytes, routing_key: str, headers: Mapping[str, str] | None = None
        ) -> None:
            if not self._durable(routing_key, body):
                self.early_publishes.append(routing_key)
            await publish(body, routing_key, headers)

        self.h.publisher.publish = publish_checked  # type: ignore[method-assign]

    def teardown(self) -> None:
        self.loop.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------------

    def _arm(self, fault: tuple[str, int] | None) -> None:
        if fault is None:
            return
        point, skip = fault
        event(f"fault armed: {point}")
        if point == "crash":
            self.h.faults.arm_after("uow.runs.save", Crash(), skip)
        else:
            self.h.faults.arm_after(point, FAULTS[point](), skip)

    def _durable(self, task_id: str, body: bytes) -> bool:
        """A result may go out only once its terminal run and outbox row are committed."""
        run, row = self.h.db.runs.get(task_id), self.h.db.outbox.get(task_id)
        return (
            run is not None
            and run.is_terminal
            and row is not None
            and row.result == decode_result(body)
        )

    def _counted(self, task_ids: list[str], act: Callable[[], Awaitable[object]]) -> None:
        """Run `act` (deliveries of `task_ids`) and attribute each committed outbox put to
        its cause: a run that became terminal owes one (event), one already terminal is
        resent at most once, an unfinished one owes none, and nobody else's count moves."""
        db = self.h.db
        was_terminal = {t: (r := db.runs.get(t)) is not None and r.is_terminal for t in task_ids}
        before = Counter(db.outbox_puts)
        try:
            self.loop.run_until_complete(act())
        finally:
            for task_id in set(before) | set(db.outbox_puts) | set(task_ids):
                moved = db.outbox_puts[task_id] - before[task_id]
                if task_id not in task_ids:
                    assert moved == 0, f"a delivery of {task_ids} put a result of {task_id}"
                    continue
                run = db.runs.get(task_id)
                if was_terminal[task_id]:
                    assert moved <= 1, f"{moved} resends of {task_id} for one delivery"
                    self.puts_by_cause[task_id, "resend"] += moved
                else:
                    terminal = run is not None and run.is_terminal
                    assert moved == int(terminal), f"{moved} result puts as {task_id} finished"
                    self.puts_by_cause[task_id, "event"] += moved

    def _deliver(self, task: ParseTaskCommand, fault: tuple[str, int] | None) -> None:
        self._arm(fault)
        delivery = FakeDelivery(encode_task(task))
        outcomes: list[object] = []

        async def process() -> None:
            outcomes.append(await self.h.consumer.process(delivery))

        resend = (run := self.h.db.runs.get(task.task_id)) is not None and run.is_terminal
        resends = self.puts_by_cause[task.task_id, "resend"]
        try:
            self._counted([task.task_id], process)
        except Crash:
            self.crashed[task.task_id] = task  # unsettled: the broker will deliver it again
            event("crash")
        else:
            assert delivery.settled
            outcome = outcomes[0]
            assert outcome is None or isinstance(outcome, PipelineOutcome)
            if resend and fault is None:  # a redelivered terminal task: its result once more
                assert self.puts_by_cause[task.task_id, "resend"] == resends + 1, "no resend"
            event(f"outcome: {outcome.kind.value if outcome else 'dead-lettered'}")
            run = self.h.db.runs.get(task.task_id)
            if run is not None and run.failure_reason is not None:
                event(f"failed: {run.failure_reason.code.value}")
        finally:
            self.h.faults.disarm()

    # -- rules --------------------------------------------------------------------------

    @initialize(target=tasks, kind=file_kinds)
    def first_task(self, kind: str) -> ParseTaskCommand:
        return self.new_task(kind, 100, None)

    @rule(target=tasks, kind=file_kinds, doc=st.sampled_from([100, 101]), fault=faults)
    def new_task(self, kind: str, doc: int, fault: tuple[str, int] | None) -> ParseTaskCommand:
        extra = {"pdf_parser_backend": "mineru"} if kind == "pdf" else {}
        task = self.h.task(
            kind,
            original_file_id=doc,
            source_object_key=f"files/doc-{doc}.{kind}",
            md_object_key=f"md/doc-{doc}.md",
            **extra,
        )
        self._deliver(task, fault)
        return task

    @rule(task=tasks, fault=faults)
    def redeliver(self, task: ParseTaskCommand, fault: tuple[str, int] | None) -> None:
        self._deliver(task, fault)

    @precondition(lambda self: bool(self.crashed))
    @rule(fault=faults)
    def broker_redelivers_after_a_crash(self, fault: tuple[str, int] | None) -> None:
        task_id = sorted(self.crashed)[0]
        task = self.crashed.pop(task_id)
        self._deliver(task, fault)

    @rule(target=tasks, previous=tasks, fault=faults)
    def retry(self, previous: ParseTaskCommand, fault: tuple[str, int] | None) -> ParseTaskCommand:
        task = self.h.retry_of(previous)
        self._deliver(task, fault)
        return task

    @rule(target=tasks, previous=tasks)
    def racing_retries(self, previous: ParseTaskCommand):  # type: ignore[no-untyped-def]
        a, b = self.h.retry_of(previous), self.h.retry_of(previous)
        deliveries = [FakeDelivery(encode_task(t)) for t in (a, b)]

        async def both() -> None:
            await asyncio.gather(*(self.h.consumer.process(d) for d in deliveries))

        self._counted([a.task_id, b.task_id], both)
        assert all(d.settled for d in deliveries)
        winners = [
            t for t in (a, b) if self.h.db.runs[previous.task_id].superseded_by_task_id == t.task_id
        ]
        assert len(winners) <= 1
        return multiple(a, b)

    @rule(publisher_failures=st.integers(0, 3))
    def relay(self, publisher_failures: int) -> None:
        if publisher_failures:
            self.h.publisher.fail_next(publisher_failures)
        self.loop.run_until_complete(self.h.relay.relay_once())
        self.h.faults.disarm()

    @rule(task=consumes(tasks))
    def forget(self, task: ParseTaskCommand) -> None:
        """Keep the bundle small so retries and redeliveries hit the same runs often."""

    @rule(with_task_id=st.booleans())
    def bad_message(self, with_task_id: bool) -> None:
        self.h.counter += 1
        body = (
            b'{"task_id": "bad-%d", "user_id": "x"}' % self.h.counter
            if with_task_id
            else b"not json at all"
        )
        delivery = FakeDelivery(body)

        async def process() -> None:
            await self.h.consumer.process(delivery)

        self._counted([f"bad-{self.h.counter}"], process)
        assert delivery.acked is with_task_id and delivery.settled

    # -- invariants ---------------------------------------------------------------------

    @invariant()
    def runs_satisfy_spec_section_4(self) -> None:
        for run in self.h.db.runs.values():
            check_run(run)
        check_family(self.h.db.runs)

    @invariant()
    def exactly_one_result_per_terminal_run(self) -> None:
        runs, outbox = self.h.db.runs, self.h.db.outbox
        assert set(outbox) == {tid for tid, run in runs.items() if run.is_terminal}
        for task_id, row in outbox.items():
            run = runs[task_id]
            log = self.h.db.parsed_logs[task_id]
            assert row.result == build_result(run, log.id)
            assert row.routing_key == task_id

    @invariant()
    def results_counted_per_cause(self) -> None:
        """One put for the terminal event of each terminal run (none for the others), plus
        one per resend; the committed puts are exactly those."""
        runs, puts = self.h.db.runs, self.h.db.outbox_puts
        for task_id in set(runs) | set(puts):
            run = runs.get(task_id)
            events = self.puts_by_cause[task_id, "event"]
            assert events == int(run is not None and run.is_terminal), f"{events} for {task_id}"
            resends = self.puts_by_cause[task_id, "resend"]
            assert puts[task_id] == events + resends, f"uncounted puts of {task_id}"

    @invariant()
    def nothing_published_before_it_was_durable(self) -> None:
        assert self.early_publishes == [], f"published before commit: {self.early_publishes}"

    @invariant()
    def only_stored_terminal_results_were_published(self) -> None:
        for task_id, body in self.h.publisher.published:
            run = self.h.db.runs[task_id]
            assert run.is_terminal
            log = self.h.db.parsed_logs[task_id]
            assert decode_result(body) == build_result(run, log.id)

    @invariant()
    def nothing_held_or_left_behind(self) -> None:
        assert self.h.db.locked == 0
        assert self.h.workspace.leftovers() == []

    @invariant()
    def chunk_rows_are_coherent(self) -> None:
        for doc in self.h.db.chunks.values():
            ids = set(doc)
            for chunk in doc.values():
                if chunk.is_parent:
                    assert chunk.dense_status is None and chunk.sparse_status is None
                else:
                    assert chunk.parent_id in ids
                    if chunk.sparse_status is ChunkIndexStatus.SUCCESS:
                        assert chunk.dense_status is ChunkIndexStatus.SUCCESS

    @invariant()
    def successful_runs_left_a_fully_indexed_document(self) -> None:
        """The newest run of a document, when SUCCESS, left every child indexed."""
        newest: dict[str, str] = {}
        for task_id, run in self.h.db.runs.items():
            if run.started_at is not None:
                newest[run.identity.original_file_id] = task_id
        for task_id in newest.values():
            run = self.h.db.runs[task_id]
            if run.pipeline_status.value != "SUCCESS":
                continue
            for scope, doc in self.h.db.chunks.items():
                if scope.doc_id != run.identity.original_file_id:
                    continue
                kids = [c for c in doc.values() if not c.is_parent]
                assert {c.dense_status for c in kids} == {ChunkIndexStatus.SUCCESS}
                assert {c.sparse_status for c in kids} == {ChunkIndexStatus.SUCCESS}
                assert {k.chunk_id for k in kids} <= set(self.h.keywords.docs)


_profile = settings.default
PipelineMachine.TestCase.settings = settings(
    _profile,
    max_examples=min(_profile.max_examples, 60) if _profile.max_examples <= 200 else 500,
    stateful_step_count=15,
    deadline=None,
)
TestPipelineMachine = PipelineMachine.TestCase
