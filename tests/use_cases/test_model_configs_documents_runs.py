"""Model configs, documents (list, delete) and the paged runs listing, on the fakes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import attrs
import pytest

from ragline.adapters.wire_format.json import JsonTaskPublisher
from ragline.application.access import Caller
from ragline.application.documents import (
    DeleteDocument,
    DocumentBusy,
    DocumentNotFound,
    ListDocuments,
    NotReindexable,
    ReindexDocument,
    next_reindex_task_id,
)
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from ragline.application.ports.repositories.runs import RunQuery
from ragline.application.provisioning import (
    DimensionChangeRefused,
    ManageModelConfigs,
    ModelConfigRefused,
    ReembeddingRequired,
)
from ragline.application.runs import ListRuns
from ragline.domain.parse_run import ParseRun, PipelineStatus
from tests.fakes.harness import DIMENSION, MD_BUCKET, Harness
from tests.fakes.messaging import FakePublisher

OPERATOR = Caller.service()


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    return harness


def _deleter(h: Harness) -> DeleteDocument:
    return DeleteDocument(h.db, h.vectors, h.keywords, h.storage, h.clock, h.references)


# -- model configs ----------------------------------------------------------------------


async def test_set_show_and_delete_both_kinds_without_ever_showing_the_key(h: Harness) -> None:
    manage = ManageModelConfigs(h.db, h.embedders)
    change = await manage.set_embedding(
        EmbeddingConfig("u1", "openai", "text-embedding-3-small", 1536, "https://x/v1", "sk-1")
    )
    view = change.view
    assert change.reembedding_id is None
    assert view.api_key_set and view.dimension == 1536 and "sk-1" not in repr(view)
    await manage.set_chat(ChatConfig("u1", "openai", "gpt-4o-mini", None, "sk-chat"))
    shown = await manage.show("u1")
    assert shown.embedding is not None and shown.chat is not None
    assert shown.chat.kind is ModelKind.CHAT and shown.chat.dimension is None
    assert "sk-" not in repr(shown)
    assert h.db.chat_configs["u1"].api_key == "sk-chat"
    # no key given: the stored one is kept; clear_api_key removes it
    await manage.set_chat(ChatConfig("u1", "openai", "gpt-4o", None, None))
    assert h.db.chat_configs["u1"].api_key == "sk-chat"
    view = await manage.set_chat(ChatConfig("u1", "openai", "gpt-4o"), clear_api_key=True)
    assert not view.api_key_set and h.db.chat_configs["u1"].api_key is None
    assert await manage.delete("u1", ModelKind.CHAT) is True
    assert await manage.delete("u1", ModelKind.CHAT) is False
    assert (await manage.show("u1")).chat is None
    assert await manage.delete("u1", ModelKind.EMBEDDING) is True
    assert (await manage.show("u1")).embedding is None
    assert (await manage.show("nobody")).embedding is None


@pytest.mark.parametrize(
    "config",
    [
        EmbeddingConfig("u1", "", "m", 8),
        EmbeddingConfig("u1", "openai", "m", 0),
        EmbeddingConfig("u1", "openai", " m", 8),
        EmbeddingConfig("u1", "openai", "m" * 256, 8),
        EmbeddingConfig("", "openai", "m", 8),
    ],
)
async def test_invalid_configs_are_refused(h: Harness, config: EmbeddingConfig) -> None:
    with pytest.raises(ModelConfigRefused):
        await ManageModelConfigs(h.db, h.embedders).set_embedding(config)


async def test_another_model_needs_reembed_while_the_user_has_vectors(h: Harness) -> None:
    manage = ManageModelConfigs(h.db, h.embedders)
    # no vectors yet: the model and dimension may change freely
    await manage.set_embedding(EmbeddingConfig("7", "fake", "fake-model", DIMENSION * 2))
    await manage.set_embedding(EmbeddingConfig("7", "fake", "fake-model", DIMENSION))
    task = h.task()
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    for other in (
        EmbeddingConfig("7", "fake", "bigger", DIMENSION * 2),
        EmbeddingConfig("7", "fake", "fake-model-2", DIMENSION),  # one dimension, two spaces
    ):
        with pytest.raises(ReembeddingRequired, match="pass reembed") as refused:
            await manage.set_embedding(other)
        assert isinstance(refused.value, ModelConfigRefused)
    with pytest.raises(DimensionChangeRefused):
        await manage.delete("7", ModelKind.EMBEDDING)
    assert h.db.configs["7"].model == "fake-model"
    # the same space (only base_url or the key change) is stored at once; so is any CHAT change
    same = EmbeddingConfig("7", "fake", "fake-model", DIMENSION, "http://elsewhere/v1", "sk-2")
    assert (await manage.set_embedding(same)).reembedding_id is None
    assert h.db.configs["7"] == same
    await manage.set_chat(ChatConfig("7", "openai", "gpt-4o"))
    # after the user's documents are deleted, the model may change without a re-embedding
    await _deleter(h)("7", "3", "100")
    await manage.set_embedding(EmbeddingConfig("7", "fake", "bigger", DIMENSION * 2))
    assert h.db.configs["7"].dimension == DIMENSION * 2


# -- documents --------------------------------------------------------------------------


async def test_list_documents_with_their_latest_run_and_chunk_counts(h: Harness) -> None:
    a = h.task(original_file_id=100, md_object_key="md/100.md")
    b = h.task(  # its source is missing: CLEANING fails
        original_file_id=200, md_object_key="md/200.md", source_object_key="f/200.txt", upload=False
    )
    other_dataset = h.task(original_file_id=300, dataset_id=4)
    for task in (a, b, other_dataset):
        await h.pipeline.handle(task)
    listing = await ListDocuments(h.db)("7", "3")
    assert listing.total == 2 and [d.doc_id for d in listing.documents] == ["100", "200"]
    first, second = listing.documents
    assert first.latest_run.pipeline_status is PipelineStatus.SUCCESS
    assert first.chunks.children > 0 and first.chunks.parents > 0
    assert first.chunks.dense_indexed == first.chunks.sparse_indexed == first.chunks.children
    assert second.latest_run.pipeline_status is PipelineStatus.FAILED
    assert second.chunks.children == 0
    page2 = await ListDocuments(h.db)("7", "3", page=2, page_size=1)
    assert [d.doc_id for d in page2.documents] == ["200"] and page2.total == 2
    assert (await ListDocuments(h.db)("8", "3")).total == 0  # another user sees nothing
    with pytest.raises(ValueError):
        await ListDocuments(h.db)("7", "3", page=0)


async def test_delete_a_document_leaves_nothing_behind(h: Harness) -> None:
    task = h.task()
    kept = h.task(original_file_id=101, md_object_key="md/doc-101.md")
    await h.pipeline.handle(task)
    await h.pipeline.handle(kept)
    scope = h.scope(task)
    assert h.db.chunks_of(scope) and h.keywords.of_document("7", "3", "100")
    assert h.storage.data(MD_BUCKET, task.md_object_key) is not None
    deleted = await _deleter(h)("7", "3", "100")
    assert deleted.chunks > 0 and deleted.keyword_docs > 0 and deleted.markdown_deleted
    assert h.db.chunks_of(scope) == []
    assert h.keywords.of_document("7", "3", "100") == []
    assert not [p for p in h.vectors.points.values() if p.payload.doc_id == "100"]
    assert h.storage.data(MD_BUCKET, task.md_object_key) is None
    assert h.storage.data(task.source_bucket, task.source_object_key) is not None  # the source
    # the other document is untouched; the deleted one is no longer listed
    assert h.db.chunks_of(h.scope(kept)) and h.keywords.of_document("7", "3", "101")
    listing = await ListDocuments(h.db)("7", "3")
    assert [d.doc_id for d in listing.documents] == ["101"]
    # the run stays (history and the idempotency barrier)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    with pytest.raises(DocumentNotFound):
        await _deleter(h)("7", "3", "100")


async def test_markdown_sources_are_never_deleted(h: Harness) -> None:
    task = h.task("md")
    await h.pipeline.handle(task)
    deleted = await _deleter(h)("7", "3", "100")
    assert not deleted.markdown_deleted
    assert h.storage.data(task.source_bucket, task.source_object_key) is not None


@pytest.mark.parametrize(
    "fault",
    ["keywords.delete", "vectors.delete_document", "storage.delete", "uow.commit"],
)
async def test_a_delete_that_fails_midway_finishes_when_repeated(h: Harness, fault: str) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    h.faults.arm(fault, RuntimeError(f"{fault} broke"))
    with pytest.raises(RuntimeError):
        await _deleter(h)("7", "3", "100")
    # still listed, so a caller sees it is not gone and repeats
    assert [d.doc_id for d in (await ListDocuments(h.db)("7", "3")).documents] == ["100"]
    h.faults.disarm()
    await _deleter(h)("7", "3", "100")
    assert h.db.chunks_of(h.scope(task)) == []
    assert h.keywords.of_document("7", "3", "100") == []
    assert not h.vectors.points
    assert h.storage.data(MD_BUCKET, task.md_object_key) is None
    assert (await ListDocuments(h.db)("7", "3")).total == 0


async def test_other_tenants_and_running_documents(h: Harness) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    with pytest.raises(DocumentNotFound):
        await _deleter(h)("8", "3", "100")  # another user: not found
    with pytest.raises(DocumentNotFound):
        await _deleter(h)("7", "4", "100")
    assert h.db.chunks_of(h.scope(task))
    run: ParseRun = h.db.runs[task.task_id]
    h.db.runs[task.task_id] = _as_processing(run)
    with pytest.raises(DocumentBusy):
        await _deleter(h)("7", "3", "100")


def _as_processing(run: ParseRun) -> ParseRun:
    return attrs.evolve(run, pipeline_status=PipelineStatus.PROCESSING, finished_at=None)


# -- runs -------------------------------------------------------------------------------


async def test_runs_are_paged_and_scoped(h: Harness) -> None:
    mine = [h.task(original_file_id=100 + i, md_object_key=f"md/{i}.md") for i in range(3)]
    theirs = h.task(user_id=8)
    h.configure_embedding(user_id=8)
    for task in [*mine, theirs]:
        await h.pipeline.handle(task)
        h.clock.advance(timedelta(seconds=1))
    list_runs = ListRuns(h.db)
    page = await list_runs.page(RunQuery(user_id="7"), page=1, page_size=2)
    assert page.total == 3 and [r.task_id for r in page.runs] == [
        mine[2].task_id,
        mine[1].task_id,
    ]
    rest = await list_runs.page(RunQuery(user_id="7"), page=2, page_size=2)
    assert [r.task_id for r in rest.runs] == [mine[0].task_id]
    assert (await list_runs.page(RunQuery(status=PipelineStatus.FAILED))).total == 0
    scoped = await list_runs(None, 10, user_id="8")
    assert [r.task_id for r in scoped] == [theirs.task_id]
    assert await list_runs(theirs.task_id, user_id="7") == []
    assert await list_runs(theirs.task_id, dataset_id="4") == []
    assert len(await list_runs(None, 10)) == 4
    with pytest.raises(ValueError):
        await list_runs.page(RunQuery(), page_size=0)


# -- re-index ---------------------------------------------------------------------------


def _reindexer(h: Harness, tasks: FakePublisher) -> ReindexDocument:
    return ReindexDocument(h.db, JsonTaskPublisher(tasks), h.references)


async def _reindex_and_run(h: Harness, doc: str = "100") -> str:
    tasks = FakePublisher()
    published = await _reindexer(h, tasks)(OPERATOR, "7", "3", doc)
    [(routing_key, body)] = tasks.published
    assert routing_key == "md"
    task = h.wire.decode_task(body)
    assert task == published
    await h.pipeline.handle(published)
    return published.task_id


def test_the_reindex_id_rule_counts_up_one_chain() -> None:
    assert next_reindex_task_id("t") == "t-x1"
    assert next_reindex_task_id("t-x1") == "t-x2"
    assert next_reindex_task_id("t-r1") == "t-r1-x1"


async def test_reindex_rechunks_the_stored_markdown_without_reparsing(h: Harness) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    stored_md = h.storage.data(MD_BUCKET, task.md_object_key)
    assert stored_md is not None
    old = h.db.chunks_of(h.scope(task))
    before = {c.chunk_id for c in old}
    h.storage.objects.pop((task.source_bucket, task.source_object_key))  # the source is gone
    task_id = await _reindex_and_run(h)
    assert task_id == f"{task.task_id}-x1"
    run = h.run(task_id)
    assert run.pipeline_status is PipelineStatus.SUCCESS, run.failure_reason
    assert run.identity.original_file_id == "100" and run.identity.file_type == "md"
    # read as Markdown (validated, not converted) from the stored object, not the source
    assert h.parser.calls[-1].file_type == "md"
    assert h.storage.data(MD_BUCKET, task.md_object_key) == stored_md  # not rewritten
    after = h.db.chunks_of(h.scope(task))
    # same Markdown, same plan: the same chunks, in a new lineage (ids of its own); the
    # old lineage is gone from the table and from the keyword index
    assert [c.text for c in after] == [c.text for c in old]
    assert not {c.chunk_id for c in after} & before
    assert {c.task_id for c in after} == {task_id}
    assert len(h.keywords.of_document("7", "3", "100")) == len([c for c in after if c.parent_id])
    # listed with its newest run; a second re-index chains on
    listing = await ListDocuments(h.db)("7", "3")
    assert [d.latest_run.task_id for d in listing.documents] == [task_id]
    assert await _reindex_and_run(h) == f"{task.task_id}-x2"
    # deleting afterwards still removes the converted Markdown (the md run's source)
    deleted = await _deleter(h)("7", "3", "100")
    assert deleted.markdown_deleted and h.storage.data(MD_BUCKET, task.md_object_key) is None
    assert h.db.chunks_of(h.scope(task)) == [] and not h.vectors.points


async def test_reindex_is_refused_without_markdown_for_others_and_while_running(
    h: Harness,
) -> None:
    failed = h.task(upload=False)  # CLEANING fails: no Markdown stored
    await h.pipeline.handle(failed)
    with pytest.raises(NotReindexable):
        await _reindexer(h, FakePublisher())(OPERATOR, "7", "3", "100")
    with pytest.raises(DocumentNotFound):
        await _reindexer(h, FakePublisher())(OPERATOR, "8", "3", "100")
    h.db.runs[failed.task_id] = _as_processing(h.db.runs[failed.task_id])
    with pytest.raises(DocumentBusy):
        await _reindexer(h, FakePublisher())(OPERATOR, "7", "3", "100")
