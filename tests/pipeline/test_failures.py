"""One use-case test per failure path of docs/design/0001-pipeline-contract.md: each code, at its
stage, stored and announced once; the failure leaves the chunk rows in the state the next retry
expects."""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from ragline.application.ports.keyword_index import KeywordIndexUnavailable, KeywordWriteFailed
from ragline.application.ports.object_storage import StorageUnavailable
from ragline.application.ports.parser import (
    InvalidFileContent,
    ParseEngineFailed,
    UnsupportedFileType,
)
from ragline.application.ports.vector_index import VectorIndexUnavailable
from ragline.application.tasks import ParseTaskCommand, TaskStatus
from ragline.domain.parse_run import (
    ChunkIndexStatus,
    FailureCode,
    FailurePoint,
    PipelineStatus,
    Stage,
    StageStatus,
)
from ragline.testing.parse_run import check_run
from tests.fakes.harness import DIMENSION, MD_BUCKET, Harness

C = FailureCode
PENDING, SUCCESS, FAILED = (
    ChunkIndexStatus.PENDING,
    ChunkIndexStatus.SUCCESS,
    ChunkIndexStatus.FAILED,
)


@dataclass
class Case:
    code: FailureCode
    point: FailurePoint
    setup: Callable[[Harness], ParseTaskCommand]
    check: Callable[[Harness, ParseTaskCommand], None] | None = None


def faulted(
    point: str, error: BaseException, skip: int = 0, file_type: str = "txt"
) -> Callable[[Harness], ParseTaskCommand]:
    """A setup arming `point` to raise `error` after `skip` calls, for a fresh task."""

    def setup(h: Harness) -> ParseTaskCommand:
        h.faults.arm_after(point, error, skip)
        return h.task(file_type)

    return setup


def configured(change: Callable[[Harness], object]) -> Callable[[Harness], ParseTaskCommand]:
    """A setup changing the fakes' configuration first."""

    def setup(h: Harness) -> ParseTaskCommand:
        change(h)
        return h.task()

    return setup


def _children(h: Harness, task: ParseTaskCommand):  # type: ignore[no-untyped-def]
    return [c for c in h.db.chunks_of(h.scope(task)) if not c.is_parent]


def no_chunk_moved(h: Harness, task: ParseTaskCommand) -> None:
    kids = _children(h, task)
    assert kids and {c.dense_status for c in kids} == {PENDING}
    assert h.vectors.dense == {}


def second_batch_failed(h: Harness, task: ParseTaskCommand) -> None:
    statuses = [c.dense_status for c in _children(h, task)]
    # batches of 3: first SUCCESS, second FAILED (the in-flight one), the rest untouched
    assert statuses[:3] == [SUCCESS] * 3
    assert statuses[3:6] == [FAILED] * 3
    assert set(statuses[6:]) == {PENDING}


def nothing_keyword_indexed(h: Harness, task: ParseTaskCommand) -> None:
    assert h.keywords.docs == {}


def sparse_batch_failed(h: Harness, task: ParseTaskCommand) -> None:
    kids = _children(h, task)
    assert {c.dense_status for c in kids} == {SUCCESS}
    assert [c.sparse_status for c in kids][:3] == [FAILED] * 3
    assert len(h.keywords.docs) == len(kids)


def disk_full(h: Harness) -> ParseTaskCommand:
    h.faults.arm("storage.get.write", OSError(errno.ENOSPC, "No space left on device"))
    return h.task("txt")


def dimension_mismatch_in_output(h: Harness) -> ParseTaskCommand:
    h.embedders.output_dimension = DIMENSION + 1
    return h.task("txt")


def no_md_bucket(h: Harness) -> ParseTaskCommand:
    h.storage.buckets.discard(MD_BUCKET)
    return h.task("txt")


CASES: dict[str, Case] = {
    "invalid: extension differs from file_type": Case(
        C.INVALID_TASK_CONTEXT,
        FailurePoint.TASK_VALIDATION,
        lambda h: h.task("pdf", source_filename="report.docx"),
    ),
    "invalid: md keys missing for a converted type": Case(
        C.INVALID_TASK_CONTEXT,
        FailurePoint.TASK_VALIDATION,
        lambda h: h.task("docx", md_object_key=""),
    ),
    "invalid: non-positive id": Case(
        C.INVALID_TASK_CONTEXT, FailurePoint.TASK_VALIDATION, lambda h: h.task(user_id=0)
    ),
    "source missing": Case(
        C.SOURCE_FILE_NOT_FOUND, FailurePoint.CLEANING, lambda h: h.task(upload=False)
    ),
    "markdown source missing": Case(
        C.SOURCE_FILE_NOT_FOUND, FailurePoint.CLEANING, lambda h: h.task("md", upload=False)
    ),
    "mineru source missing": Case(
        C.SOURCE_FILE_NOT_FOUND,
        FailurePoint.CLEANING,
        lambda h: h.task("pdf", pdf_parser_backend="mineru", upload=False),
    ),
    "unknown file type": Case(
        C.UNSUPPORTED_FILE_TYPE,
        FailurePoint.CLEANING,
        lambda h: h.task("xyz"),
    ),
    "parser says unsupported": Case(
        C.UNSUPPORTED_FILE_TYPE,
        FailurePoint.CLEANING,
        faulted("parser.parse", UnsupportedFileType("not a docx"), file_type="docx"),
    ),
    "temp disk full": Case(C.TEMP_DISK_FULL, FailurePoint.CLEANING, disk_full),
    "parse engine failed": Case(
        C.PARSE_ENGINE_FAILED,
        FailurePoint.CLEANING,
        faulted("parser.parse", ParseEngineFailed("parse timed out after 120s")),
    ),
    "file content invalid": Case(
        C.FILE_CONTENT_INVALID,
        FailurePoint.CLEANING,
        faulted("parser.parse", InvalidFileContent("not a PDF (no %PDF- header)")),
    ),
    "parser crashed": Case(
        C.PARSE_ENGINE_FAILED,
        FailurePoint.CLEANING,
        faulted("parser.parse", RuntimeError("segfault-ish")),
    ),
    "markdown upload failed": Case(
        C.PARSED_FILE_UPLOAD_FAILED,
        FailurePoint.CLEANING,
        faulted("storage.put", StorageUnavailable("503")),
    ),
    "markdown bucket missing": Case(
        C.PARSED_FILE_UPLOAD_FAILED, FailurePoint.CLEANING, no_md_bucket
    ),
    "empty document": Case(
        C.CHUNKING_FAILED, FailurePoint.CHUNKING, lambda h: h.task("md", content="  \n\n \n")
    ),
    "no embedding config": Case(
        C.LLM_CONFIG_MISSING,
        FailurePoint.VECTORIZING,
        configured(lambda h: h.db.configs.clear()),
        no_chunk_moved,
    ),
    "unusable embedding config": Case(
        C.LLM_CONFIG_MISSING,
        FailurePoint.VECTORIZING,
        configured(lambda h: h.configure_embedding(provider="unknown")),
        no_chunk_moved,
    ),
    "model dimension differs from config": Case(
        C.EMBEDDING_DIMENSION_UNSUPPORTED,
        FailurePoint.VECTORIZING,
        configured(lambda h: setattr(h.embedders, "model_dimension", DIMENSION * 2)),
        no_chunk_moved,
    ),
    "collection has another dimension": Case(
        C.EMBEDDING_DIMENSION_UNSUPPORTED,
        FailurePoint.VECTORIZING,
        configured(lambda h: setattr(h.vectors, "dimension", DIMENSION * 2)),
        no_chunk_moved,
    ),
    "vectors of the wrong length": Case(
        C.EMBEDDING_DIMENSION_UNSUPPORTED,
        FailurePoint.VECTORIZING,
        dimension_mismatch_in_output,
    ),
    "embedding failed on the second batch": Case(
        C.VECTORIZING_FAILED,
        FailurePoint.VECTORIZING,
        faulted("embedder.embed", RuntimeError("503"), 1),
        second_batch_failed,
    ),
    "dense upsert failed": Case(
        C.VECTORIZING_FAILED,
        FailurePoint.VECTORIZING,
        faulted("vectors.upsert_dense", VectorIndexUnavailable("x"), 1),
        second_batch_failed,
    ),
    "tokenizer failed": Case(
        C.PRETOKENIZE_FAILED,
        FailurePoint.PRETOKENIZE,
        faulted("tokenizer.tokenize", ValueError("bad"), 2),
        nothing_keyword_indexed,
    ),
    "keyword index unavailable": Case(
        C.KEYWORD_INDEX_UNAVAILABLE,
        FailurePoint.KEYWORD_INDEXING,
        faulted("keywords.write", KeywordIndexUnavailable("down")),
        nothing_keyword_indexed,
    ),
    "keyword write failed half way (cleaned up)": Case(
        C.KEYWORD_INDEXING_FAILED,
        FailurePoint.KEYWORD_INDEXING,
        faulted("keywords.write.partial", KeywordWriteFailed("bulk error")),
        nothing_keyword_indexed,
    ),
    "sparse encoding failed": Case(
        C.SPARSE_VECTORIZING_FAILED,
        FailurePoint.SPARSE_VECTORIZING,
        faulted("sparse.encode", RuntimeError("oom")),
        sparse_batch_failed,
    ),
    "sparse upsert failed": Case(
        C.SPARSE_VECTORIZING_FAILED,
        FailurePoint.SPARSE_VECTORIZING,
        faulted("vectors.upsert_sparse", VectorIndexUnavailable("x")),
        sparse_batch_failed,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_failure_path(h: Harness, name: str) -> None:
    case = CASES[name]
    task = case.setup(h)
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    check_run(run)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failure_reason is not None and run.failure_reason.code is case.code
    assert run.failed_stage is case.point
    stage = case.point.stage
    if stage is not None:
        assert run.stages[stage].status is StageStatus.FAILED
        assert run.recover_from_stage is stage
        assert all(run.stages[s].status is StageStatus.SUCCESS for s in stage.earlier)
        assert all(
            run.stages[s].status is StageStatus.PENDING
            for s in Stage
            if s.position > stage.position
        )
    else:
        assert all(st.status is StageStatus.PENDING for st in run.stages.values())
    result = h.result(task.task_id)
    assert result.task_status is TaskStatus.FAILED
    assert result.failure_reason == run.failure_reason.text
    assert result.user_message == case.code.user_message("zh")
    assert len(h.db.outbox) == 1
    assert h.workspace.leftovers() == []
    assert h.db.locked == 0
    if case.check is not None:
        case.check(h, task)


def test_every_stage_failure_code_has_a_test() -> None:
    covered = {case.code for case in CASES.values()}
    stage_codes = {
        C.SOURCE_FILE_NOT_FOUND,
        C.UNSUPPORTED_FILE_TYPE,
        C.TEMP_DISK_FULL,
        C.PARSE_ENGINE_FAILED,
        C.PARSED_FILE_UPLOAD_FAILED,
        C.CHUNKING_FAILED,
        C.LLM_CONFIG_MISSING,
        C.EMBEDDING_DIMENSION_UNSUPPORTED,
        C.VECTORIZING_FAILED,
        C.PRETOKENIZE_FAILED,
        # KEYWORD_DELETE_FAILED: no stage deletes before it writes since the chunk lineage
        # (the old version goes at the swap); the code stays in the contract, unused
        C.KEYWORD_INDEX_UNAVAILABLE,
        C.KEYWORD_INDEXING_FAILED,
        C.SPARSE_VECTORIZING_FAILED,
        C.INVALID_TASK_CONTEXT,
    }
    assert stage_codes <= covered
    assert {case.point for case in CASES.values()} >= {FailurePoint.of(s) for s in Stage}
