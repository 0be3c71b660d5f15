"""Resume from every stage (invariants 6-7 of docs/design/0002-run-state-machine.md): a retry after
a failure at stage S inherits exactly the stages before S, redoes S and the rest; dense/sparse redo
only chunks not yet SUCCESS; keyword indexing always rebuilds the whole document."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ragline.application.pipeline.outcome import OutcomeKind
from ragline.application.ports.keyword_index import KeywordWriteFailed
from ragline.application.tasks import ParseTaskCommand, TaskStatus
from ragline.domain.parse_run import (
    ChunkIndexStatus,
    PipelineStatus,
    Stage,
    StageStatus,
)
from ragline.testing.parse_run import check_family, check_run
from tests.fakes.harness import Harness

FAULTS: dict[Stage, Callable[[Harness], None]] = {
    Stage.CLEANING: lambda h: h.faults.arm("parser.parse", RuntimeError("parser down")),
    Stage.CHUNKING: lambda h: h.faults.arm("uow.chunks.replace_lineage", RuntimeError("x")),
    Stage.VECTORIZING: lambda h: h.faults.arm_after("embedder.embed", RuntimeError("503"), 2),
    Stage.PRETOKENIZE: lambda h: h.faults.arm("tokenizer.tokenize", ValueError("bad")),
    Stage.KEYWORD_INDEXING: lambda h: h.faults.arm("keywords.write", KeywordWriteFailed("x")),
    Stage.SPARSE_VECTORIZING: lambda h: h.faults.arm_after("sparse.encode", RuntimeError("x"), 1),
}


async def _fail_then_retry(h: Harness, stage: Stage) -> tuple[ParseTaskCommand, ParseTaskCommand]:
    FAULTS[stage](h)
    first = h.task("txt")
    await h.pipeline.handle(first)
    assert h.run(first.task_id).recover_from_stage is stage
    h.faults.disarm()
    retry = h.retry_of(first)
    outcome = await h.pipeline.handle(retry)
    assert outcome.kind is OutcomeKind.RAN
    return first, retry


@pytest.mark.parametrize("stage", list(Stage), ids=lambda s: s.value)
async def test_retry_resumes_from_the_failed_stage(h: Harness, stage: Stage) -> None:
    FAULTS[stage](h)
    first = h.task("txt")
    await h.pipeline.handle(first)
    old = h.run(first.task_id)
    parse_calls_before = len(h.parser.calls)
    kids_before = {c.chunk_id: c for c in h.db.chunks_of(h.scope(first)) if not c.is_parent}
    embedded_before = len(h.embedders.embedded)
    sparse_before = len(h.sparse.encoded)
    deletes_before = h.keywords.deletes
    h.faults.disarm()

    retry = h.retry_of(first)
    await h.pipeline.handle(retry)
    new = h.run(retry.task_id)
    check_run(new)
    check_family(h.db.runs)
    assert new.pipeline_status is PipelineStatus.SUCCESS
    assert h.run(first.task_id).superseded_by_task_id == retry.task_id
    assert new.retry_of_task_id == first.task_id
    for s in Stage:
        inherited = s.position < stage.position
        assert new.stages[s].inherited is inherited, s
        if inherited:
            assert new.stages[s].duration_ms == old.stages[s].duration_ms
    # CLEANING is redone only when it is where the run failed
    assert (len(h.parser.calls) > parse_calls_before) is (stage is Stage.CLEANING)
    kids = [c for c in h.db.chunks_of(h.scope(retry)) if not c.is_parent]
    assert {c.dense_status for c in kids} == {ChunkIndexStatus.SUCCESS}
    assert {c.sparse_status for c in kids} == {ChunkIndexStatus.SUCCESS}
    redone = {c.chunk_id for c in kids} if stage.position <= Stage.CHUNKING.position else set()
    dense_todo = redone or {
        k for k, c in kids_before.items() if c.dense_status is not ChunkIndexStatus.SUCCESS
    }
    sparse_todo = redone or {
        k for k, c in kids_before.items() if c.sparse_status is not ChunkIndexStatus.SUCCESS
    }
    assert len(h.embedders.embedded) - embedded_before == len(dense_todo)
    assert len(h.sparse.encoded) - sparse_before == len(sparse_todo)
    # keyword indexing writes the lineage by chunk id (no document delete first); whatever
    # the failed run left of another lineage went at the swap: the index is the lineage
    assert h.keywords.deletes == deletes_before
    assert set(h.keywords.docs) == {c.chunk_id for c in kids}
    where = h.scope(retry)
    assert set(h.vectors.points) == {(where.user_id, where.dataset_id, c.chunk_id) for c in kids}
    assert h.result(retry.task_id).task_status is TaskStatus.SUCCESS
    assert h.result(first.task_id).task_status is TaskStatus.FAILED  # untouched
    assert h.workspace.leftovers() == []


async def test_resume_from_chunking_rereads_the_stored_markdown(h: Harness) -> None:
    first, retry = await _fail_then_retry(h, Stage.CHUNKING)
    assert len(h.parser.calls) == 1
    md_reads = [d for d in h.storage.downloads if d[1] == first.md_object_key]
    assert len(md_reads) == 1
    assert h.run(retry.task_id).markdown == h.run(first.task_id).markdown
    assert {c.task_id for c in h.db.chunks_of(h.scope(retry))} == {retry.task_id}


async def test_resume_of_a_markdown_source_rereads_the_source(h: Harness) -> None:
    h.faults.arm("uow.chunks.replace_lineage", RuntimeError("db hiccup"))
    first = h.task("md", content="# A\n\nalpha beta\n\n# B\n\ngamma delta epsilon")
    await h.pipeline.handle(first)
    h.faults.disarm()
    retry = h.retry_of(first)
    await h.pipeline.handle(retry)
    assert h.run(retry.task_id).pipeline_status is PipelineStatus.SUCCESS
    sources = [d[1] for d in h.storage.downloads if d[0] == first.source_bucket]
    assert sources == [first.source_object_key] * 2  # (the parse cache reads its own bucket)


async def test_skipped_chunking_reloads_the_persisted_chunk_set(h: Harness) -> None:
    first, retry = await _fail_then_retry(h, Stage.VECTORIZING)
    kids = [c for c in h.db.chunks_of(h.scope(first)) if not c.is_parent]
    # not rebuilt: the retry continues (adopts) the lineage the first run cut
    assert {c.task_id for c in kids} == {retry.task_id}
    assert set(h.keywords.docs) == {c.chunk_id for c in kids}


async def test_chunks_left_indexing_by_a_crash_are_redone(h: Harness) -> None:
    class Crash(BaseException):
        """Stands for the process dying: nothing catches it."""

    h.faults.arm_after("embedder.embed", Crash(), 1)
    first = h.task("txt")
    with pytest.raises(Crash):
        await h.pipeline.handle(first)
    kids = [c for c in h.db.chunks_of(h.scope(first)) if not c.is_parent]
    assert ChunkIndexStatus.INDEXING in {c.dense_status for c in kids}
    outcome = await h.pipeline.handle(first)  # redelivery
    assert outcome.kind is OutcomeKind.INTERRUPTED
    retry = h.retry_of(first)
    await h.pipeline.handle(retry)
    assert h.run(retry.task_id).pipeline_status is PipelineStatus.SUCCESS
    kids = [c for c in h.db.chunks_of(h.scope(first)) if not c.is_parent]
    assert {c.dense_status for c in kids} == {ChunkIndexStatus.SUCCESS}
    assert len(h.embedders.embedded) == len(kids)  # 3 before the crash + the rest, no repeat


async def test_retry_of_a_retry_inherits_along_the_chain(h: Harness) -> None:
    FAULTS[Stage.VECTORIZING](h)
    first = h.task()
    await h.pipeline.handle(first)
    h.faults.disarm()
    FAULTS[Stage.KEYWORD_INDEXING](h)
    second = h.retry_of(first)
    await h.pipeline.handle(second)
    assert h.run(second.task_id).recover_from_stage is Stage.KEYWORD_INDEXING
    h.faults.disarm()
    third = h.retry_of(second)
    await h.pipeline.handle(third)
    run = h.run(third.task_id)
    assert run.pipeline_status is PipelineStatus.SUCCESS
    inherited = [s for s, st in run.stages.items() if st.inherited]
    assert inherited == list(Stage)[:4]
    assert run.stages[Stage.KEYWORD_INDEXING].status is StageStatus.SUCCESS
    check_family(h.db.runs)
