"""A file counted past MAX_PAGE pages is refused by the parse cache before any batch is
planned (issue 18: a range is bounded before anything is allocated per page)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ragline.application.parsing import ParseCacheSettings, SubmitParse
from ragline.application.ports.parser import InvalidFileContent
from ragline.domain.parse_batch import MAX_PAGE, ParseTier
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness


def too_many(source: Path, file_type: str) -> int:
    return MAX_PAGE + 1


async def test_a_file_of_too_many_pages_is_refused_before_planning(tmp_path: Path) -> None:
    h = Harness(tmp_path, parse_cache=ParseCacheSettings(poll=timedelta(0)))
    h.page_counter.count = too_many  # type: ignore[method-assign]
    submit: SubmitParse = h.container.submit_parse()
    source = tmp_path / "huge.pdf"
    source.write_text("page one")
    with pytest.raises(InvalidFileContent, match=f"more than the {MAX_PAGE}"):
        await submit.file(source, ParseTier.BASIC, holder=None)
    assert h.db.parse_batches == {}


async def test_cleaning_leaves_such_a_file_to_the_parser_without_batches(tmp_path: Path) -> None:
    h = Harness(tmp_path, parse_cache=ParseCacheSettings(poll=timedelta(0)))
    h.configure_embedding()
    h.page_counter.count = too_many  # type: ignore[method-assign]
    task = h.task("pdf", content="one page", pdf_parser_backend="naive")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS  # the parser decided
    assert h.db.parse_batches == {}
