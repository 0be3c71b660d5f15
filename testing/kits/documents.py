"""Contract kit for the documents view (`uow.documents`): a dataset's documents through
their newest runs, the run that owns a document's index, the deletion mark, and which
objects a live document still names (never another tenant's view)."""

from __future__ import annotations

from datetime import date

import attrs

from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.ports.repositories.runs import RunQuery
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import (
    MarkdownLocation,
    Stage,
)
from ragline.testing.kits.persistence import (
    NO_TASK,
    StoreContract,
    at,
    failed_mid_run,
    inherited_retry_run,
    pending_run,
    rejected_run,
    retry_loser_run,
    run_until_failed_at,
    scope,
    succeeded_run,
    uid,
)


class DocumentRepositoryContract(StoreContract):
    """What every DocumentRepository must show; fixture `uow_factory`."""

    async def test_metadata_is_a_compare_and_set_per_document(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        mine = DocumentScope(uid("u"), "d1", "doc-a")
        theirs = attrs.evolve(mine, user_id=uid("u"))
        first = DocumentMetadata({"author": "Ann", "year": 2021, "day": date(2024, 5, 1)})
        second = DocumentMetadata({"tags": ["x", "y"], "title": "naïve 文档"})
        async with uow_factory() as uow:
            assert await uow.documents.metadata_of(mine) is None
            assert await uow.documents.put_metadata(mine, first, expected_version=0) == 1
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.documents.put_metadata(mine, second, expected_version=0) == 0
            assert await uow.documents.put_metadata(mine, second, expected_version=2) == 0
            assert await uow.documents.metadata_of(mine) == StoredMetadata(first, 1)
            assert await uow.documents.metadata_of(theirs) is None
            assert await uow.documents.put_metadata(mine, second, expected_version=1) == 1
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.documents.metadata_of(mine) == StoredMetadata(second, 2)
            assert await uow.documents.put_metadata(mine, first, expected_version=2) == 1
            # not committed: rolled back on leaving
        async with uow_factory() as uow:
            assert await uow.documents.metadata_of(mine) == StoredMetadata(second, 2)

    async def test_latest_run_per_document(self, uow_factory: UnitOfWorkFactory) -> None:
        user = uid("u")
        failed = self._run_of(failed_mid_run, user, "d1", "doc-b", 10)
        retried = self._run_of(succeeded_run, user, "d1", "doc-b", 5)  # inserted later, older clock
        only = self._run_of(succeeded_run, user, "d1", "doc-a", 20)
        elsewhere = self._run_of(succeeded_run, user, "d2", "doc-z", 30)
        stranger = self._run_of(succeeded_run, uid("u"), "d1", "doc-c", 40)
        for run in (failed, retried, only, elsewhere, stranger):
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            page = await uow.documents.latest_per_document(user, "d1")
            first = await uow.documents.latest_per_document(user, "d1", offset=0, limit=1)
            rest = await uow.documents.latest_per_document(user, "d1", offset=1, limit=5)
            latest_b = await uow.documents.latest_for_document(user, "d1", "doc-b")
            missing = await uow.documents.latest_for_document(user, "d2", "doc-b")
            empty = await uow.documents.latest_per_document(uid("u"), "d1")
        assert [(doc, run.task_id) for doc, run in page.latest] == [
            ("doc-a", only.task_id),
            ("doc-b", retried.task_id),
        ]
        assert page.total == first.total == rest.total == 2
        assert first.latest + rest.latest == page.latest
        assert latest_b == retried
        assert missing is None
        assert empty.latest == [] and empty.total == 0

    async def test_the_run_that_owns_a_document_s_index(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        """The newest SUCCESS run that got to CHUNKING (its chunk lineage is the live one),
        else the newest run that got to CHUNKING (or inherited it)."""
        user = uid("u")
        indexed = self._run_of(succeeded_run, user, "d1", "doc-b", 10)
        refused = self._run_of(retry_loser_run, user, "d1", "doc-b", 20)
        bad_upload = self._run_of(
            lambda: run_until_failed_at(Stage.CLEANING), user, "d1", "doc-b", 30
        )
        old = self._run_of(succeeded_run, user, "d1", "doc-c", 10)
        broke_it = self._run_of(failed_mid_run, user, "d1", "doc-c", 20)
        resumed = self._run_of(inherited_retry_run, user, "d1", "doc-e", 10)
        never = self._run_of(rejected_run, user, "d1", "doc-d", 10)
        stranger = self._run_of(succeeded_run, uid("u"), "d1", "doc-b", 40)
        gone = self._run_of(succeeded_run, user, "d1", "doc-f", 10)
        runs = (indexed, refused, bad_upload, old, broke_it, resumed, never, stranger, gone)
        for run in runs:
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            await uow.documents.mark_document_deleted(user, "d1", "doc-f", at(50))
            await uow.commit()
        async with uow_factory() as uow:
            docs = ["doc-b", "doc-c", "doc-d", "doc-e", "doc-f", "doc-x"]
            owners = await uow.documents.index_owners(user, "d1", docs)
            elsewhere = await uow.documents.index_owners(user, "d2", docs)
            none_asked = await uow.documents.index_owners(user, "d1", [])
        assert {doc: run.task_id for doc, run in owners.items()} == {
            "doc-b": indexed.task_id,  # a refused retry and a failed upload did not touch it
            "doc-c": old.task_id,  # a later run cut a new lineage, then failed: not live
            "doc-e": resumed.task_id,  # inherited CHUNKING: the lineage's newest run
        }
        assert owners["doc-b"] == indexed
        assert elsewhere == {} and none_asked == {}

    async def test_a_deleted_document_is_no_longer_listed_until_a_new_run(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("u")
        first = self._run_of(succeeded_run, user, "d1", "doc-b", 10)
        second = self._run_of(failed_mid_run, user, "d1", "doc-b", 20)
        kept = self._run_of(succeeded_run, user, "d1", "doc-a", 30)
        for run in (first, second, kept):
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            assert await uow.documents.mark_document_deleted(user, "d1", "doc-b", at(40)) == 2
            assert await uow.documents.mark_document_deleted(uid("u"), "d1", "doc-b", at(40)) == 0
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.documents.mark_document_deleted(user, "d1", "doc-b", at(41)) == 0
            page = await uow.documents.latest_per_document(user, "d1")
            assert [doc for doc, _ in page.latest] == ["doc-a"] and page.total == 1
            assert await uow.documents.latest_for_document(user, "d1", "doc-b") is None
            # the runs stay (history, idempotency) and their aggregate is untouched
            assert await uow.runs.get(second.task_id) == second
            listed = await uow.runs.list_page(RunQuery(user_id=user))
            assert listed.total == 3
        # a save of a marked run keeps the mark
        async with uow_factory() as uow:
            stored = await uow.runs.get(second.task_id)
            assert stored is not None
            stored.supersede(uid("retry"))
            await uow.runs.save(stored, second.version)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.documents.latest_for_document(user, "d1", "doc-b") is None
        third = self._run_of(pending_run, user, "d1", "doc-b", 50)  # uploaded again
        await self.add_run(uow_factory, third)
        async with uow_factory() as uow:
            assert await uow.documents.latest_for_document(user, "d1", "doc-b") == third
            page = await uow.documents.latest_per_document(user, "d1")
            assert [doc for doc, _ in page.latest] == ["doc-a", "doc-b"]

    async def test_objects_in_use_are_those_other_live_documents_name(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        """What a document delete may not remove: an object another live document's run
        (any tenant's) names as its source or Markdown, or that the document's own
        converting run names as its source; not its own Markdown, not a re-index run's
        source, not what only a deleted document names."""
        user, stranger = uid("u"), uid("u")

        def place(name: str) -> MarkdownLocation:
            return MarkdownLocation(uid("bucket"), f"{name}/{uid('key')}/文档")

        written, shared, theirs, own_source = place("md"), place("md"), place("s"), place("s")
        foreign, gone_md, gone_source, no_log, loose = (place(n) for n in "fgGnl")

        async def add(
            owner: str,
            doc: str,
            markdown: MarkdownLocation | None,
            source: MarkdownLocation | None,
            file_type: str = "pdf",
            log: bool = True,
        ) -> None:
            run = self._run_of(succeeded_run, owner, "d1", doc, 10)
            run.identity = attrs.evolve(run.identity, file_type=file_type)
            run.markdown = markdown
            async with uow_factory() as uow:
                await uow.runs.add(run)
                if log:
                    await uow.parsed_logs.add(run.task_id, NO_TASK, at(0), source=source)
                await uow.commit()

        await add(user, "doomed", written, own_source)  # converted: wrote `written`
        await add(user, "doomed", written, written, file_type="MD")  # its re-index
        await add(user, "kept", shared, theirs)  # another live document of the user
        await add(user, "doomed-too", shared, None, log=False)
        await add(stranger, "doomed", foreign, foreign, file_type="md")  # same doc id, not mine
        await add(user, "gone", gone_md, gone_source)
        await add(user, "other", no_log, None, log=False)
        async with uow_factory() as uow:
            assert await uow.documents.mark_document_deleted(user, "d1", "gone", at(20)) == 1
            await uow.commit()
        asked = [written, shared, theirs, own_source, foreign, gone_md, gone_source, no_log, loose]
        besides = scope(user, "d1", "doomed")
        async with uow_factory() as uow:
            in_use = await uow.documents.objects_in_use(asked, besides)
            assert await uow.documents.objects_in_use([], besides) == set()
        assert in_use == {shared, theirs, own_source, foreign, no_log}
        async with uow_factory() as uow:  # once `kept` is deleted too, its names are free
            await uow.documents.mark_document_deleted(user, "d1", "kept", at(21))
            await uow.documents.mark_document_deleted(user, "d1", "doomed-too", at(21))
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.documents.objects_in_use([shared, theirs], besides) == set()
