"""Ingest local files through the real pipeline: one parse task per file, results awaited.

Each file is uploaded to object storage and announced with a ParseTask on the task topic,
as a business system would; the worker (in the same process on embedded defaults, or
anywhere else) runs the stages. Ingest learns how each ended from its run in the
database, never from the result topic: its tasks are ragline's own work (`issued_by:
ragline`), answered to no producer (docs/wire-contracts.md), and no reader queue of ours
sits on the result topic making every result routable. What happens to a file depends on
what the store already knows about it:

- never seen (or changed: a new sha256 gives a new task_id) -> a new task;
- its latest run succeeded -> skipped (unless `force`);
- its latest run failed -> a retry task (`is_retry`, `previous_task_id`), which inherits
  every stage that succeeded;
- its latest run was interrupted (Ctrl-C, crash) -> the same task is delivered again, the
  pipeline converges it to FAILED INTERRUPTED_TASK, and a retry resumes it.

Ingest is the operator's (the CLI): its tasks go through the reference rule as the service's
(docs/security.md) before the file is uploaded, so a configuration that would have ragline
write into the parse cache's area is refused up front (ReferenceRefused), not file by file.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from ragline.application.access import Caller, ReferencePolicy
from ragline.application.ingest.identity import FileIdentity, SourceFile, identify
from ragline.application.pipeline.results import build_result
from ragline.application.ports.clock import Clock
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.parser import PdfParserBackend
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.task_messages import TaskPublisher
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.tasks import (
    ParseTaskCommand,
    TaskIssuer,
    TaskResult,
    TaskStatus,
    TriggerMode,
)
from ragline.domain.parse_run import ParseRun, PipelineStatus, Stage, StageStatus


class FileAction(enum.Enum):
    """What ingest decided for one file."""

    NEW = "new"
    RETRY = "retry"
    RESUME = "resume"
    SKIPPED = "skipped"


@attrs.frozen
class FileOutcome:
    """How one file ended."""

    source: SourceFile
    action: FileAction
    task_id: str | None
    status: str  # success | failed | skipped
    chunks: int = 0
    stage_ms: Mapping[Stage, int] = attrs.field(factory=dict)
    failure_reason: str | None = None


@attrs.frozen
class IngestSummary:
    outcomes: tuple[FileOutcome, ...]

    @property
    def failed(self) -> tuple[FileOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "failed")


class IngestObserver(Protocol):
    """Progress callbacks for a front end (the CLI draws bars from these)."""

    def file_submitted(self, source: SourceFile, action: FileAction, task_id: str) -> None: ...

    def stage_changed(self, task_id: str, stage: Stage, status: StageStatus) -> None: ...

    def file_finished(self, outcome: FileOutcome) -> None: ...


@attrs.define
class _Pending:
    source: SourceFile
    identity: FileIdentity
    action: FileAction
    task: ParseTaskCommand
    then_retry: bool = False
    seen: dict[Stage, StageStatus] = attrs.field(factory=dict)


@attrs.frozen
class _Ended:
    """A pending task whose run has ended, as the poll read it: its result, the run, and
    the document's chunk count (read in the same unit of work, so settling reads nothing)."""

    item: _Pending
    result: TaskResult
    run: ParseRun
    chunks: int


class IngestFiles:
    """The `ragline ingest` use case."""

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        storage: ObjectStorage,
        tasks: TaskPublisher,
        clock: Clock,
        *,
        source_bucket: str,
        md_bucket: str,
        references: ReferencePolicy,
        pdf_backend: PdfParserBackend = PdfParserBackend.AUTO,
        poll_seconds: float = 0.2,
        poll_window: int = 16,
    ) -> None:
        self._uow_factory = uow_factory
        self._storage = storage
        self._tasks = tasks
        self._clock = clock
        self._source_bucket = source_bucket
        self._md_bucket = md_bucket
        self._references = references
        self._pdf_backend = pdf_backend
        self._poll_seconds = poll_seconds
        self._poll_window = poll_window

    async def __call__(
        self,
        files: Sequence[SourceFile],
        user_id: str,
        dataset_id: str,
        observer: IngestObserver,
        *,
        force: bool = False,
    ) -> IngestSummary:
        await self._storage.ensure_bucket(self._source_bucket)
        await self._storage.ensure_bucket(self._md_bucket)
        nonce = str(int(self._clock.now().timestamp() * 1000)) if force else ""
        outcomes: list[FileOutcome] = []
        pending: dict[str, _Pending] = {}
        for source in files:
            identity = identify(source, user_id, dataset_id, nonce)
            submitted = await self._submit(source, identity, user_id, dataset_id, pending)
            if isinstance(submitted, FileOutcome):
                outcomes.append(submitted)
                observer.file_finished(submitted)
            else:
                observer.file_submitted(source, submitted.action, submitted.task.task_id)
        outcomes += await self._await_outcomes(pending, observer)
        order = {source.path: i for i, source in enumerate(files)}
        outcomes.sort(key=lambda o: order[o.source.path])
        return IngestSummary(tuple(outcomes))

    # -- submitting ----------------------------------------------------------------------

    async def _submit(
        self,
        source: SourceFile,
        identity: FileIdentity,
        user_id: str,
        dataset_id: str,
        pending: dict[str, _Pending],
    ) -> FileOutcome | _Pending:
        """Skip the file (its outcome) or publish its task (the pending item)."""
        head, hops = await self._latest_run(identity.base_task_id)
        task = self._task(source, identity, user_id, dataset_id)
        self._references.check_task(Caller.service(), task)  # before the upload
        if head is None:
            await self._storage.put_file(
                self._source_bucket, identity.source_object_key, Path(source.path)
            )
            return await self._publish(pending, _Pending(source, identity, FileAction.NEW, task))
        if head.pipeline_status is PipelineStatus.SUCCESS:
            return FileOutcome(source, FileAction.SKIPPED, head.task_id, "skipped")
        if head.pipeline_status is PipelineStatus.FAILED:
            retry = task.retry_of(head.task_id)
            item = _Pending(source, identity, FileAction.RETRY, retry)
            return await self._publish(pending, item)
        # Interrupted: deliver the same task again so the pipeline converges it, then retry.
        again = task.with_task_id(head.task_id) if hops else task
        resume = _Pending(source, identity, FileAction.RESUME, again, then_retry=True)
        return await self._publish(pending, resume)

    async def _latest_run(self, base_task_id: str) -> tuple[ParseRun | None, int]:
        """The newest run of a file's retry chain, and how many retries led to it."""
        async with self._uow_factory() as uow:
            run = await uow.runs.get(base_task_id)
            hops = 0
            while run is not None and run.superseded_by_task_id is not None:
                successor = await uow.runs.get(run.superseded_by_task_id)
                if successor is None:
                    break
                run, hops = successor, hops + 1
            return run, hops

    def _task(
        self, source: SourceFile, identity: FileIdentity, user_id: str, dataset_id: str
    ) -> ParseTaskCommand:
        return ParseTaskCommand(
            task_id=identity.base_task_id,
            original_file_id=identity.original_file_id,
            document_parse_task_id=identity.document_parse_task_id,
            user_id=int(user_id),
            dataset_id=int(dataset_id),
            file_type=source.file_type,
            source_bucket=self._source_bucket,
            source_object_key=identity.source_object_key,
            source_filename=source.relative_name,
            md_bucket=self._md_bucket,
            md_object_key=identity.md_object_key,
            trigger_mode=TriggerMode.UPLOAD_AUTO,
            pdf_parser_backend=self._pdf_backend,
            issued_by=TaskIssuer.RAGLINE,
        )

    async def _publish(self, pending: dict[str, _Pending], item: _Pending) -> _Pending:
        pending[item.task.task_id] = item
        await self._tasks.publish(item.task)
        return item

    # -- waiting -------------------------------------------------------------------------

    async def _await_outcomes(
        self, pending: dict[str, _Pending], observer: IngestObserver
    ) -> list[FileOutcome]:
        """Poll the pending runs until each has ended (a FAILED resume is retried first).
        A poll that found runs ended is followed by the next at once: the window has moved
        on to runs that may have ended meanwhile, and waiting `poll_seconds` per window
        capped an ingest at `poll_window` files per tick (issue 24: 183 pages finished by
        the pipeline in 6 s were reported over 13 s)."""
        outcomes: list[FileOutcome] = []
        moved = False
        while pending:
            if not moved:
                await asyncio.sleep(self._poll_seconds)
            ended = await self._poll_once(pending, observer)
            moved = bool(ended)
            for each in ended:
                pending.pop(each.result.task_id, None)
                outcome = await self._settle(each, pending, observer)
                if outcome is not None:
                    outcomes.append(outcome)
                    observer.file_finished(outcome)
        return outcomes

    async def _settle(
        self, ended: _Ended, pending: dict[str, _Pending], observer: IngestObserver
    ) -> FileOutcome | None:
        item, result, run = ended.item, ended.result, ended.run
        if item.then_retry and result.task_status == TaskStatus.FAILED:
            retry = item.task.retry_of(item.task.task_id)
            follow = _Pending(item.source, item.identity, FileAction.RESUME, retry)
            await self._publish(pending, follow)
            observer.file_submitted(item.source, FileAction.RESUME, retry.task_id)
            return None
        stage_ms = {
            stage: state.duration_ms
            for stage, state in run.stages_in_order()
            if state.duration_ms is not None and not state.inherited
        }
        return FileOutcome(
            item.source,
            item.action,
            result.task_id,
            str(result.task_status),
            ended.chunks if result.task_status == TaskStatus.SUCCESS else 0,
            stage_ms,
            result.failure_reason,
        )

    async def _poll_once(
        self, pending: dict[str, _Pending], observer: IngestObserver
    ) -> list[_Ended]:
        """Report the stage changes of the `poll_window` oldest pending tasks, and return
        those whose run has ended, with its result. Tasks are consumed in about the order
        they were published, so those are the ones being worked on; the others get their
        turn as these end, and every task's final stage states are reported when it is
        settled (`_settle`). Reading every pending run each tick made one long transaction
        per tick that the workers queued behind."""
        window = list(itertools.islice(pending.items(), self._poll_window))
        ended: list[_Ended] = []
        if not window:
            return ended
        async with self._uow_factory() as uow:
            for task_id, item in window:
                run = await uow.runs.get(task_id)
                if run is None:
                    continue
                _report_stages(task_id, item, run, observer)
                if run.is_terminal:
                    parsed = await uow.parsed_logs.get(task_id)
                    result = build_result(run, parsed.id if parsed else 0)
                    chunks = 0
                    if result.task_status == TaskStatus.SUCCESS:
                        task = item.task
                        scope = DocumentScope(
                            str(task.user_id), str(task.dataset_id), str(task.original_file_id)
                        )
                        chunks = await uow.chunks.count_document(scope)
                    ended.append(_Ended(item, result, run, chunks))
        return ended


def _report_stages(task_id: str, item: _Pending, run: ParseRun, observer: IngestObserver) -> None:
    """Tell the observer about every stage whose status changed since it was last told."""
    for stage, state in run.stages_in_order():
        if item.seen.get(stage) is not state.status:
            item.seen[stage] = state.status
            observer.stage_changed(task_id, stage, state.status)
