"""In-memory documents view: a dataset's documents through their newest runs, the
deletion mark, the objects a live document names."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ragline.application.ports.repositories.documents import DocumentPage, StoredMetadata
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import (
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
)
from tests.fakes.repositories.base import FakeRepository, snapshot, utc


class FakeDocuments(FakeRepository):
    """The documents view over the runs this unit sees (committed and its own)."""

    def _labels(self, scope: DocumentScope) -> StoredMetadata | None:
        if scope in self.uow.pending_labels:
            return self.uow.pending_labels[scope]
        return self.db.labels.get(scope)

    async def metadata_of(self, scope: DocumentScope) -> StoredMetadata | None:
        await self.check("documents.metadata_of")
        return self._labels(scope)

    async def put_metadata(
        self, scope: DocumentScope, metadata: DocumentMetadata, *, expected_version: int
    ) -> int:
        await self.check("documents.put_metadata")
        await self.uow.lock(("labels", scope))
        stored = self._labels(scope)
        if (stored.version if stored is not None else 0) != expected_version:
            return 0
        self.uow.pending_labels[scope] = StoredMetadata(metadata, expected_version + 1)
        return 1

    def _all(self) -> list[ParseRun]:
        merged = dict(self.db.runs) | self.uow.pending_runs
        return [snapshot(r) for r in merged.values()]

    def _latest_by_document(self, user_id: str, dataset_id: str) -> dict[str, ParseRun]:
        order = self.db.run_order
        latest: dict[str, ParseRun] = {}
        for run in self._all():
            identity = run.identity
            if identity.user_id != user_id or identity.dataset_id != dataset_id:
                continue
            doc = identity.original_file_id
            best = latest.get(doc)
            if best is None or order.get(run.task_id, 0) > order.get(best.task_id, 0):
                latest[doc] = run
        return latest

    def _deleted(self, task_id: str) -> bool:
        return task_id in self.uow.pending_tombstones or task_id in self.db.document_deleted_at

    def _live_documents(self, user_id: str, dataset_id: str) -> dict[str, ParseRun]:
        latest = self._latest_by_document(user_id, dataset_id)
        return {doc: run for doc, run in latest.items() if not self._deleted(run.task_id)}

    async def latest_per_document(
        self, user_id: str, dataset_id: str, *, offset: int = 0, limit: int = 50
    ) -> DocumentPage:
        await self.check("documents.latest_per_document")
        latest = self._live_documents(user_id, dataset_id)
        docs = sorted(latest)[offset : offset + limit]
        return DocumentPage([(doc, latest[doc]) for doc in docs], len(latest))

    async def latest_for_document(
        self, user_id: str, dataset_id: str, doc_id: str
    ) -> ParseRun | None:
        await self.check("documents.latest_for_document")
        return self._live_documents(user_id, dataset_id).get(doc_id)

    async def index_owners(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> dict[str, ParseRun]:
        await self.check("documents.index_owners")
        order, wanted = self.db.run_order, set(doc_ids)
        owners: dict[str, ParseRun] = {}
        for run in self._all():
            identity = run.identity
            doc = identity.original_file_id
            if (
                identity.user_id != user_id
                or identity.dataset_id != dataset_id
                or doc not in wanted
                or not run.touched_index
                or self._deleted(run.task_id)
            ):
                continue
            best = owners.get(doc)
            if best is None or _owns_before(run, best, order):
                owners[doc] = run
        return owners

    async def mark_document_deleted(
        self, user_id: str, dataset_id: str, doc_id: str, at: datetime
    ) -> int:
        await self.check("documents.mark_document_deleted")
        at = utc(at)
        marked = 0
        for run in self._all():
            identity = run.identity
            if (identity.user_id, identity.dataset_id, identity.original_file_id) != (
                user_id,
                dataset_id,
                doc_id,
            ):
                continue
            await self.uow.lock(("run", run.task_id))
            if not self._deleted(run.task_id):
                self.uow.pending_tombstones[run.task_id] = at
                marked += 1
        return marked

    async def objects_in_use(
        self, objects: Sequence[MarkdownLocation], besides: DocumentScope
    ) -> set[MarkdownLocation]:
        await self.check("documents.objects_in_use")
        wanted = set(objects)
        logs = {**self.db.parsed_logs, **self.uow.pending_logs}
        found: set[MarkdownLocation] = set()
        for run in self._all():
            identity = run.identity
            log = logs.get(run.task_id)
            source = None if log is None else log.source
            same = (identity.user_id, identity.dataset_id, identity.original_file_id) == (
                besides.user_id,
                besides.dataset_id,
                besides.doc_id,
            )
            if same:
                converting = identity.file_type.lower() not in ("md", "markdown")
                named = [source] if converting else []
            elif self._deleted(run.task_id):
                named = []
            else:
                named = [source, run.markdown]
            found.update(o for o in named if o is not None and o in wanted)
        return found


def _owns_before(run: ParseRun, best: ParseRun, order: dict[str, int]) -> bool:
    """A SUCCESS run (the live lineage's) before any other, then the newer one."""

    def rank(r: ParseRun) -> tuple[bool, int]:
        return (r.pipeline_status is PipelineStatus.SUCCESS, order.get(r.task_id, 0))

    return rank(run) > rank(best)
