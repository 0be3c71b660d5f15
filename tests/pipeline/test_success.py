"""The happy paths: every source kind reaches SUCCESS with one result and a clean workspace."""

from __future__ import annotations

from ragline.application.pipeline.outcome import OutcomeKind
from ragline.application.tasks import TaskStatus
from ragline.domain.parse_run import (
    ChunkIndexStatus,
    MarkdownLocation,
    PipelineStatus,
    StageStatus,
)
from ragline.testing.parse_run import check_run
from tests.fakes.harness import MD_BUCKET, Harness


async def test_txt_runs_all_six_stages_to_success(h: Harness) -> None:
    task = h.task("txt")
    outcome = await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert outcome.kind is OutcomeKind.RAN
    assert run.pipeline_status is PipelineStatus.SUCCESS
    assert all(st.status is StageStatus.SUCCESS for st in run.stages.values())
    check_run(run)
    chunks = h.db.chunks_of(h.scope(task))
    children = [c for c in chunks if not c.is_parent]
    assert children and len(children) < len(chunks)
    assert {c.dense_status for c in children} == {ChunkIndexStatus.SUCCESS}
    assert {c.sparse_status for c in children} == {ChunkIndexStatus.SUCCESS}
    assert {c.dense_status for c in chunks if c.is_parent} == {None}
    ids = {c.chunk_id for c in children}
    assert set(h.vectors.dense) == ids == set(h.vectors.sparse) == set(h.keywords.docs)
    result = h.result(task.task_id)
    assert result.task_status is TaskStatus.SUCCESS
    assert result.failure_reason is None
    assert result.document_parsed_log_id == h.db.parsed_logs[task.task_id].id
    assert (result.user_id, result.dataset_id, result.original_file_id) == (7, 3, 100)
    assert result.parse_finished_at == run.finished_at
    assert h.storage.data(MD_BUCKET, task.md_object_key) is not None
    log = h.db.parsed_logs[task.task_id]
    assert (log.parsed_bucket, log.parsed_object_key) == (MD_BUCKET, task.md_object_key)
    assert h.workspace.leftovers() == []
    assert len(h.db.outbox) == 1


async def test_markdown_source_is_passed_through_not_converted_nor_copied(h: Harness) -> None:
    task = h.task("md", content="# Title\n\nSome body text here.\n\n## Two\n\nMore words.")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.pipeline_status is PipelineStatus.SUCCESS
    assert [call.file_type for call in h.parser.calls] == ["md"]  # validated, not converted
    assert h.storage.data(MD_BUCKET, task.md_object_key) is None  # not copied
    assert run.markdown == MarkdownLocation(task.source_bucket, task.source_object_key)
    log = h.db.parsed_logs[task.task_id]
    assert (log.parsed_bucket, log.parsed_object_key) == (
        task.source_bucket,
        task.source_object_key,
    )
    chunk = h.db.chunks_of(h.scope(task))[0]
    source = task.source_object_key
    text = h.storage.data(task.source_bucket, source)
    assert text is not None
    assert text.decode()[chunk.span_start : chunk.span_end] == chunk.text  # source coordinates


async def test_pdf_with_mineru_is_not_downloaded_the_parser_gets_a_url(h: Harness) -> None:
    task = h.task("pdf", pdf_parser_backend="mineru")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.storage.downloads == []
    assert h.storage.presigned == [(task.source_bucket, task.source_object_key)]
    (call,) = h.parser.calls
    assert call.options.mineru_url is not None and task.source_object_key in call.options.mineru_url
    assert not call.source_existed


async def test_pdf_with_a_local_backend_is_streamed_to_a_temp_file(h: Harness) -> None:
    task = h.task("pdf", pdf_parser_backend="naive")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    (call,) = h.parser.calls
    assert call.source_existed and call.source.parent == h.workspace.folder
    assert call.options.mineru_url is None
    assert h.workspace.leftovers() == []


async def test_chunk_ids_are_deterministic_per_lineage(h: Harness, tmp_path) -> None:  # type: ignore[no-untyped-def]
    task = h.task("txt")
    await h.pipeline.handle(task)
    other = Harness(tmp_path / "other")
    other.configure_embedding()
    same = other.task("txt", task_id=task.task_id)
    await other.pipeline.handle(same)
    again = Harness(tmp_path / "again")
    again.configure_embedding()
    later = again.task("txt", task_id="another")
    await again.pipeline.handle(later)
    first = [c.chunk_id for c in h.db.chunks_of(h.scope(task))]
    second = [c.chunk_id for c in other.db.chunks_of(other.scope(same))]
    third = [c.chunk_id for c in again.db.chunks_of(again.scope(later))]
    assert first == second and len(set(first)) == len(first)
    assert not set(first) & set(third)  # two versions never share a chunk id


async def test_every_stage_status_write_went_through_a_version_cas(h: Harness) -> None:
    task = h.task("txt")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    # open (0) + 6 starts + 6 successes = 12 accepted commands, saved in 7 compare-and-sets:
    # the start of CLEANING, then each success together with the next stage's start
    assert run.version == 12
    assert h.faults.hits["uow.runs.save"] == 7


async def test_a_one_page_document_is_read_twice_and_tokenized_once(h: Harness) -> None:
    """PRETOKENIZE reuses the page VECTORIZING read; SPARSE_VECTORIZING reuses its tokens."""
    task = h.task("txt")
    await h.pipeline.handle(task)
    children = [c for c in h.db.chunks_of(h.scope(task)) if not c.is_parent]
    assert h.faults.hits["uow.chunks.list_children"] == 2  # VECTORIZING, SPARSE_VECTORIZING
    assert h.faults.hits["tokenizer.tokenize"] == len(children)
    tokenized = [" ".join(h.tokenizer.tokenize(c.text)) for c in children]
    assert sorted(h.sparse.encoded) == sorted(tokenized)  # encoded from PRETOKENIZE's tokens


async def test_a_resumed_sparse_stage_tokenizes_for_itself(h: Harness) -> None:
    h.faults.arm("sparse.encode", RuntimeError("oom"))
    task = h.task("txt")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.FAILED
    h.faults.disarm("sparse.encode")
    retry = h.retry_of(task)
    await h.pipeline.handle(retry)
    assert h.run(retry.task_id).pipeline_status is PipelineStatus.SUCCESS
    children = [c for c in h.db.chunks_of(h.scope(task)) if not c.is_parent]
    assert sorted(h.sparse.encoded) == sorted(c.text for c in children)  # from the texts
