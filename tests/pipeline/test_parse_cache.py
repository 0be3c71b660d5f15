"""CLEANING asks the parse cache first; batch workers claim, parse page ranges and take over
lapsed leases (the fakes' store, parser and page counter; the real use cases)."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import pytest

from ragline.application.access import Caller
from ragline.application.parsing import (
    LocalSource,
    ParseBatchRunner,
    ParseCacheSettings,
    ReadParse,
    SubmitParse,
    batch_pages,
)
from ragline.application.ports.object_storage import StorageUnavailable
from ragline.application.ports.parser import ParsedDocument, ParseEngineFailed
from ragline.application.ports.repositories.parse_batches import NewParseBatch
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_batch import (
    BatchStatus,
    PageRange,
    ParseTier,
    RequestStatus,
    SourceRef,
)
from ragline.domain.parse_run import FailureCode, PipelineStatus, Stage, StageStatus
from tests.fakes.harness import MD_BUCKET, Harness

PAGED = "\f".join(f"page {n} text about tea number {n}" for n in range(1, 6))


def harness(tmp_path: Path, **cache: object) -> Harness:
    h = Harness(tmp_path, parse_cache=ParseCacheSettings(poll=timedelta(0), **cache))  # type: ignore[arg-type]
    h.configure_embedding()
    return h


def markdown_of(h: Harness, task: ParseTaskCommand) -> str:
    data = h.storage.data(MD_BUCKET, task.md_object_key)
    assert data is not None
    return data.decode("utf-8")


async def test_identical_bytes_are_parsed_once(tmp_path: Path) -> None:
    h = harness(tmp_path)
    first = h.task("txt")
    await h.pipeline.handle(first)
    again = h.task("txt", original_file_id=200, md_object_key="md/doc-200.md")
    await h.pipeline.handle(again)
    assert h.run(first.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.run(again.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert len(h.parser.calls) == 1
    assert markdown_of(h, again) == markdown_of(h, first)
    assert len(h.db.parse_batches) == 1


async def test_a_task_shaped_like_the_seeds_bypasses_the_cache(tmp_path: Path) -> None:
    """The seed's tasks set image_bucket and image_prefix: whatever the file type, each one
    parses its source again and plans no batch (docs/parse-cache.md says so)."""
    h = harness(tmp_path)
    images = {"image_bucket": MD_BUCKET, "image_prefix": "images/doc-100/"}
    first = h.task("txt", **images)
    await h.pipeline.handle(first)
    again = h.task("txt", original_file_id=200, md_object_key="md/doc-200.md", **images)
    await h.pipeline.handle(again)
    assert h.run(again.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert len(h.parser.calls) == 2
    assert len(h.db.parse_batches) == 0


async def test_other_bytes_or_another_tier_parse_again(tmp_path: Path) -> None:
    h = harness(tmp_path)
    await h.pipeline.handle(h.task("pdf", content=PAGED, pdf_parser_backend="naive"))
    await h.pipeline.handle(h.task("pdf", content=PAGED, pdf_parser_backend="auto"))
    await h.pipeline.handle(h.task("pdf", content=PAGED + " changed", pdf_parser_backend="naive"))
    assert len(h.parser.calls) == 3
    tiers = sorted({b.tier for b in h.db.parse_batches.values()})
    assert tiers == [ParseTier.BASIC, ParseTier.QUALITY]


async def test_a_large_pdf_splits_into_batches_and_reads_back_in_order(tmp_path: Path) -> None:
    h = harness(tmp_path, pages_per_batch=2)
    task = h.task("pdf", content=PAGED, pdf_parser_backend="naive")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    ranges = sorted(str(b.page_range) for b in h.db.parse_batches.values())
    assert ranges == ["1-2", "3-4", "5-5"]
    assert [str(c.options.page_range) for c in h.parser.calls] == ["1-2", "3-4", "5-5"]
    markdown = markdown_of(h, task)
    positions = [markdown.index(f"## Page {n}") for n in range(1, 6)]
    assert positions == sorted(positions)
    assert markdown.count("## Page") == 5


async def test_a_failed_batch_fails_cleaning_with_its_code_and_a_retry_parses_again(
    tmp_path: Path,
) -> None:
    h = harness(tmp_path)
    h.faults.arm("parser.parse", ParseEngineFailed("encrypted PDF"))
    task = h.task("pdf", content=PAGED, pdf_parser_backend="naive")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.PARSE_ENGINE_FAILED
    assert "encrypted PDF" in run.failure_reason.text
    (failed,) = h.db.parse_batches.values()
    assert failed.status is BatchStatus.FAILED and failed.error_msg == "encrypted PDF"
    retry = h.retry_of(task)
    await h.pipeline.handle(retry)
    assert h.run(retry.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert len(h.parser.calls) == 2  # a failure is not cached


async def test_a_retry_from_cleaning_reuses_the_done_batches(tmp_path: Path) -> None:
    h = harness(tmp_path)
    task = h.task("docx")
    original = h.storage.put_bytes
    failed_once = False

    async def markdown_upload_fails_once(bucket, key, data, content_type="x"):  # type: ignore[no-untyped-def]
        nonlocal failed_once
        if bucket == MD_BUCKET and not failed_once:
            failed_once = True
            raise StorageUnavailable("bucket offline")
        return await original(bucket, key, data, content_type)

    h.storage.put_bytes = markdown_upload_fails_once  # type: ignore[method-assign]
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.failed_stage is not None and run.status_of(Stage.CLEANING) is StageStatus.FAILED
    retry = h.retry_of(task)
    await h.pipeline.handle(retry)
    assert h.run(retry.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert len(h.parser.calls) == 1


async def test_markdown_passthrough_skips_the_cache_and_is_never_copied(tmp_path: Path) -> None:
    """Validating Markdown costs less than the cache's plan, claim and copy (issue 24)."""
    h = harness(tmp_path)
    text = "\ufeff# Title\n\n  Body text here.\n\n\n"
    first = h.task("md", content=text)
    await h.pipeline.handle(first)
    again = h.task("md", content=text, upload=False)
    await h.pipeline.handle(again)
    assert h.run(again.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert len(h.parser.calls) == 2 and len(h.db.parse_batches) == 0
    assert h.storage.data(MD_BUCKET, again.md_object_key) is None  # passthrough: no copy
    sources = {first.source_object_key, again.source_object_key}
    assert {key for _, key in h.storage.objects} == sources  # nor into the cache
    # the chunks of both runs carry the same source coordinates
    spans = [(c.span_start, c.span_end) for c in h.db.chunks_of(h.scope(again))]
    assert spans and all(0 <= a <= b <= len(text) for a, b in spans)


# -- the batch runner ------------------------------------------------------------------------


def runner_of(h: Harness, owner: str) -> ParseBatchRunner:
    base: ParseBatchRunner = h.container.parse_batch_runner()
    return ParseBatchRunner(
        h.db,
        h.storage,
        h.parser,
        h.workspace,
        h.clock,
        h.container.page_store(),
        base.settings,
        owner,
    )


async def submit_paged(h: Harness, tmp_path: Path, pages: str = PAGED) -> tuple[list[int], Path]:
    source = tmp_path / "paged.pdf"
    source.write_text(pages, encoding="utf-8")
    submit: SubmitParse = h.container.submit_parse()
    submitted, _ = await submit.file(source, ParseTier.BASIC, holder=None)
    return list(submitted.response.wait_parse_ids), source


async def test_two_workers_share_the_batches_of_one_file(tmp_path: Path) -> None:
    h = harness(tmp_path, pages_per_batch=1)
    ids, _ = await submit_paged(h, tmp_path)
    assert len(ids) == 5
    one, two = runner_of(h, "w1"), runner_of(h, "w2")
    ended = await asyncio.gather(one.run_ids(ids), two.run_ids(ids))
    assert all(e.status is RequestStatus.DONE for e in ended)
    owners = {b.owner for b in h.db.parse_batches.values()}
    assert all(b.claims == 1 for b in h.db.parse_batches.values())  # none parsed twice
    assert len(h.parser.calls) == 5 and owners <= {"w1", "w2"}
    reader: ReadParse = h.container.read_parse()
    digest = next(iter(h.db.parse_batches.values())).sha256
    cached = await reader.markdown(
        digest, ParseTier.BASIC, PageRange(1, 5), caller=Caller.service()
    )
    assert [p.splitlines()[0] for p in cached.pages] == [f"## Page {n}" for n in range(1, 6)]


async def test_a_dead_workers_claim_is_taken_over_after_the_lease(tmp_path: Path) -> None:
    h = harness(tmp_path, lease=timedelta(seconds=30))
    ids, _ = await submit_paged(h, tmp_path)
    dead = runner_of(h, "dead")
    claimed = await dead.claim(ids)  # ... and the process dies: nothing more happens
    assert claimed is not None
    alive = runner_of(h, "alive")
    assert await alive.run_one(ids) is None  # the lease holds
    h.clock.advance(timedelta(seconds=31))
    ended = await alive.run_ids(ids)
    assert ended.status is RequestStatus.DONE
    (batch,) = h.db.parse_batches.values()
    assert batch.owner == "alive" and batch.claims == 2
    async with h.db() as uow:  # the dead worker's late answer is refused
        assert not await uow.parse_batches.finish(batch.id, "dead", 1, h.clock.now(), "x")


async def test_a_batch_whose_source_is_gone_fails_with_source_file_not_found(
    tmp_path: Path,
) -> None:
    h = harness(tmp_path)
    async with h.db() as uow:
        batch = await uow.parse_batches.add(
            NewParseBatch(
                "f" * 64,
                ParseTier.BASIC,
                PageRange(1, 1),
                0,
                SourceRef("uploads", "gone.txt", "txt"),
                h.clock.now(),
            )
        )
        await uow.commit()
    ended = await runner_of(h, "w").run_ids([batch.id])
    assert ended.status is RequestStatus.FAILED
    assert ended.failed[0].error_code == FailureCode.SOURCE_FILE_NOT_FOUND.value
    assert "may still be readable" in ended.message


async def test_a_stopped_worker_gives_its_batch_back(tmp_path: Path) -> None:
    h = harness(tmp_path)
    ids, _ = await submit_paged(h, tmp_path)
    original = h.parser.parse

    def slow_parse(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        return original(*args, **kwargs)

    h.parser.parse = slow_parse  # type: ignore[method-assign]
    running = asyncio.create_task(runner_of(h, "w1").run_ids(ids))
    while not any(b.status is BatchStatus.PARSING for b in h.db.parse_batches.values()):
        await asyncio.sleep(0.01)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    (batch,) = h.db.parse_batches.values()
    assert batch.status is BatchStatus.PENDING and batch.owner is None


def test_batch_pages_from_what_the_parser_returned() -> None:
    three = PageRange(3, 5)
    assert batch_pages(ParsedDocument("x", pages=("a", "b", "c")), three) == ["a", "b", "c"]
    every = ParsedDocument("x", pages=tuple("abcdefg"), page_count=7)
    assert batch_pages(every, three) == ["c", "d", "e"]  # the parser ignored the range
    assert batch_pages(ParsedDocument("whole", page_count=7), three) == ["", "", ""]
    assert batch_pages(ParsedDocument("whole", page_count=7), PageRange(1, 3)) == ["whole", "", ""]
    assert batch_pages(ParsedDocument("one"), PageRange(1, 1)) == ["one"]
    assert LocalSource("a", Path("x")).sha256 == "a"


async def test_background_loops_parse_what_is_submitted_and_stop_cleanly(tmp_path: Path) -> None:
    h = harness(tmp_path, pages_per_batch=2)
    runner = runner_of(h, "loop")
    async with runner.running(2):
        ids, _ = await submit_paged(h, tmp_path)
        for _ in range(500):
            if all(h.db.parse_batches[i].status is BatchStatus.DONE for i in ids):
                break
            await asyncio.sleep(0.01)
    assert all(h.db.parse_batches[i].status is BatchStatus.DONE for i in ids)
    assert {h.db.parse_batches[i].owner for i in ids} == {"loop"}
    async with runner.running(0):  # no loops: nothing claims
        more, _ = await submit_paged(h, tmp_path, PAGED + "\fa sixth page")
    assert all(h.db.parse_batches[i].status is BatchStatus.PENDING for i in more)


async def test_a_rerun_of_an_unchanged_file_downloads_and_writes_nothing(tmp_path: Path) -> None:
    h = harness(tmp_path)
    first = h.task("pdf", content=PAGED, pdf_parser_backend="naive")
    await h.pipeline.handle(first)
    gets, puts = h.faults.hits["storage.get"], h.faults.hits["storage.put"]
    again = h.task("pdf", content=PAGED, pdf_parser_backend="naive", upload=False)
    await h.pipeline.handle(again)  # same source object, same Markdown object: a forced re-run
    assert h.run(again.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert len(h.parser.calls) == 1
    assert h.faults.hits["storage.get"] - gets == 1  # the batch object only, not the source
    assert h.faults.hits["storage.put"] == puts  # the Markdown there is already these bytes
    assert markdown_of(h, again) == markdown_of(h, first)


async def test_a_changed_object_under_the_same_key_is_downloaded_and_parsed(
    tmp_path: Path,
) -> None:
    h = harness(tmp_path)
    await h.pipeline.handle(h.task("txt"))
    changed = h.task("txt", content="Entirely different words now.")  # same key, new bytes
    await h.pipeline.handle(changed)
    assert len(h.parser.calls) == 2
    assert "Entirely different words" in markdown_of(h, changed)


def test_holds_compares_the_stores_own_digests() -> None:
    import hashlib

    from ragline.application.pipeline.markdown_bytes import SLICE_CHARS
    from ragline.application.pipeline.parse_cache import holds

    text = "# 标题\n"
    data = text.encode()
    assert holds(hashlib.sha256(data).hexdigest(), len(data), text)
    assert holds(f'"{hashlib.md5(data).hexdigest()}"', len(data), text)
    assert not holds(hashlib.sha256(data).hexdigest(), len(data) + 1, text)
    assert not holds("0123abcd-2", len(data), text)  # a multipart S3 tag: write again
    long = "标题 tea " * (SLICE_CHARS // 3)  # several slices: hashed across their seams
    data = long.encode()
    assert holds(hashlib.sha256(data).hexdigest(), len(data), long)
    assert not holds(hashlib.sha256(data).hexdigest(), len(data), long[:-1] + "x")


async def test_a_file_whose_pages_cannot_be_counted_is_left_to_the_parser(
    tmp_path: Path,
) -> None:
    h = harness(tmp_path)

    def cannot_count(source: Path, file_type: str) -> int:
        raise ParseEngineFailed("not a PDF")

    h.page_counter.count = cannot_count  # type: ignore[method-assign]
    task = h.task("pdf", content=PAGED, pdf_parser_backend="naive")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS  # the parser decided
    assert len(h.parser.calls) == 1 and h.db.parse_batches == {}


def test_a_page_object_is_written_slice_by_slice_as_json_dumps_writes_it(tmp_path: Path) -> None:
    """Issue 24: the page object is streamed (no whole-text JSON str and bytes), byte for byte
    the JSON it was before, across slice seams, non-ASCII, quotes and a lone surrogate."""
    import json

    from ragline.application.parsing import page_store

    long = 'tea "绿茶" \\ \n\ud800 \U0001f375 ' * (page_store._SLICE // 7)
    pages = [long, "", "short"]
    path = tmp_path / "pages.json"
    page_store._write(path, 3, pages)
    assert path.read_bytes() == json.dumps({"first": 3, "pages": pages}).encode("ascii")
    assert page_store._read(path) == {3: long, 4: "", 5: "short"}
