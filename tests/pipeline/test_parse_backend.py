"""CLEANING picks the backend and tier explicitly and records what really parsed.

No silent substitution: mineru without a client fails (MINERU_UNAVAILABLE) or falls back as
configured, and either way the parsed-log row says which engine ran; warnings are stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.application.pipeline.settings import MineruPolicy, PipelineSettings
from ragline.application.ports.parser import NoTextLayer, PdfParserBackend
from ragline.domain.parse_batch import ParseTier
from ragline.domain.parse_run import FailureCode, PipelineStatus, Stage
from tests.fakes.harness import Harness


def _harness(tmp_path: Path, policy: MineruPolicy, mineru: bool) -> Harness:
    settings = PipelineSettings(embed_batch_size=3, sparse_batch_size=3, mineru_unavailable=policy)
    harness = Harness(tmp_path, settings, mineru=mineru)
    harness.configure_embedding()
    return harness


async def test_mineru_without_a_client_falls_back_to_auto_and_says_so(tmp_path: Path) -> None:
    h = _harness(tmp_path, MineruPolicy.FALLBACK, mineru=False)
    task = h.task("pdf", pdf_parser_backend="mineru")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    (call,) = h.parser.calls
    assert call.options.pdf_parser_backend is PdfParserBackend.AUTO
    assert call.options.tier is ParseTier.QUALITY and call.source_existed
    log = h.db.parsed_logs[task.task_id]
    assert log.parse_backend == "fake"
    assert log.parse_warnings[0] == "mineru asked for but not configured: fell back to auto"


async def test_mineru_without_a_client_fails_clearly_when_the_policy_is_fail(
    tmp_path: Path,
) -> None:
    h = _harness(tmp_path, MineruPolicy.FAIL, mineru=False)
    task = h.task("pdf", pdf_parser_backend="mineru")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failed_stage is not None and run.failed_stage.value == Stage.CLEANING.value
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.MINERU_UNAVAILABLE
    assert not FailureCode.MINERU_UNAVAILABLE.recoverable
    assert h.parser.calls == [] and h.storage.downloads == []
    assert h.db.parsed_logs[task.task_id].parse_backend is None


async def test_mineru_with_a_client_records_the_remote_backend(tmp_path: Path) -> None:
    h = _harness(tmp_path, MineruPolicy.FAIL, mineru=True)
    task = h.task("pdf", pdf_parser_backend="mineru")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.db.parsed_logs[task.task_id].parse_backend == "fake-mineru"


@pytest.mark.parametrize(
    ("backend", "tier"),
    [
        ("naive", ParseTier.BASIC),
        ("auto", ParseTier.QUALITY),
        ("opendataloader", ParseTier.QUALITY),
    ],
)
async def test_the_tier_follows_the_backend(h: Harness, backend: str, tier: ParseTier) -> None:
    task = h.task("pdf", pdf_parser_backend=backend)
    await h.pipeline.handle(task)
    (call,) = h.parser.calls
    assert call.options.pdf_parser_backend is PdfParserBackend(backend)
    assert call.options.tier is tier


async def test_parser_warnings_are_stored_with_the_backend(h: Harness) -> None:
    h.parser.warnings = ["OCR: 2 of 3 pages", "page range 1-9 cut to 1-3"]
    task = h.task("txt")
    await h.pipeline.handle(task)
    log = h.db.parsed_logs[task.task_id]
    assert (log.parse_backend, log.parse_warnings) == ("fake", tuple(h.parser.warnings))


async def test_no_text_layer_is_its_own_failure_code(h: Harness) -> None:
    h.faults.arm("parser.parse", NoTextLayer("no text layer (a scanned PDF)"))
    task = h.task("pdf", pdf_parser_backend="naive")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.NO_TEXT_LAYER
    assert not run.failure_reason.code.recoverable
    assert "scanned" in run.failure_reason.text


async def test_images_are_uploaded_under_the_task_prefix_and_linked(h: Harness) -> None:
    h.parser.images = {"images/page-1-1.png": b"\x89PNG fake", "images/docx-2.jpg": b"jpeg"}
    h.storage.buckets.add("img")
    task = h.task("pdf", pdf_parser_backend="naive", image_bucket="img", image_prefix="doc-9/")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    (call,) = h.parser.calls
    assert call.options.extract_images
    assert h.storage.data("img", "doc-9/page-1-1.png") == b"\x89PNG fake"
    assert h.storage.data("img", "doc-9/docx-2.jpg") == b"jpeg"
    markdown = (h.storage.data(task.md_bucket, task.md_object_key) or b"").decode()
    assert "![](doc-9/page-1-1.png)" in markdown and "](images/" not in markdown


async def test_without_image_fields_no_images_are_asked_for(h: Harness) -> None:
    h.parser.images = {"images/page-1-1.png": b"\x89PNG fake"}
    task = h.task("pdf", pdf_parser_backend="naive", image_bucket=None, image_prefix=None)
    await h.pipeline.handle(task)
    (call,) = h.parser.calls
    assert not call.options.extract_images
    markdown = (h.storage.data(task.md_bucket, task.md_object_key) or b"").decode()
    assert "![](" not in markdown


async def test_an_image_upload_failure_fails_cleaning_clearly(h: Harness) -> None:
    h.parser.images = {"images/page-1-1.png": b"\x89PNG fake"}
    task = h.task("pdf", pdf_parser_backend="naive", image_bucket="missing", image_prefix="p/")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.PARSED_FILE_UPLOAD_FAILED
    assert "image missing/p/page-1-1.png" in run.failure_reason.text
