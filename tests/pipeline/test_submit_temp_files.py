"""Parse requests running at once never share a temp file (found by the hostile-requests
campaign: every request builds its own SubmitParse, whose temp names counted from 0, so
concurrent POST /parses downloaded into one `submit-0` file and one request deleted it under
the others: 500)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.application.access import Caller
from ragline.application.parsing import SubmitParse
from ragline.domain.parse_batch import ParseTier
from tests.fakes.harness import SOURCE_BUCKET, Harness

SERVICE = Caller.service()


async def test_each_request_downloads_into_a_file_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = Harness(tmp_path)
    h.storage.add(SOURCE_BUCKET, "docs/a.txt", b"some words")
    held: list[Path] = []
    original = h.workspace.temp_file

    @contextlib.contextmanager
    def recording(task_id: str, suffix: str) -> Iterator[Path]:
        with original(task_id, suffix) as path:
            held.append(path)
            yield path

    monkeypatch.setattr(h.workspace, "temp_file", recording)
    first: SubmitParse = h.container.submit_parse()
    second: SubmitParse = h.container.submit_parse()  # a request each, as over HTTP
    await asyncio.gather(
        first.ref(f"{SOURCE_BUCKET}/docs/a.txt", ParseTier.BASIC, caller=SERVICE),
        second.ref(f"{SOURCE_BUCKET}/docs/a.txt", ParseTier.BASIC, caller=SERVICE),
        first.sha256_for(f"{SOURCE_BUCKET}/docs/a.txt", caller=SERVICE),
        second.sha256_for(f"{SOURCE_BUCKET}/docs/a.txt", caller=SERVICE),
    )
    assert len(held) == 4 and len(set(held)) == 4
