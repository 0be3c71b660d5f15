"""`ragline search --filter`: the conditions reach every retriever (only the labelled
document's hits, however many others match better), repeated options all hold, and a
malformed condition is a usage error saying how to write one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.application.access import Caller
from ragline.bootstrap.cli import _entry
from ragline.domain.metadata import DocumentMetadata


def test_search_filter_keeps_only_matching_documents(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "green.md").write_text("# Green tea\n\nGreen tea wants water at 80 degrees.\n")
    (docs / "black.md").write_text("# Black tea\n\nBlack tea wants boiling water.\n")
    data = ["--data-dir", str(tmp_path / "data")]

    def ragline(*args: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(build_cli(_entry), [*args, *data])
        return result.exit_code, result.stdout, result.stderr

    code, out, err = ragline("ingest", str(docs))
    assert code == 0, out + err
    code, out, err = ragline("search", "tea water", "--json", "--top-k", "10")
    assert code == 0, out + err
    by_source = {hit["source"]: hit["doc_id"] for hit in json.loads(out)["hits"]}
    assert set(by_source) == {"green.md", "black.md"}

    async def label() -> None:
        entry = _entry(tmp_path / "data")
        try:
            set_metadata = await entry.use_cases.set_document_metadata()
            labels = DocumentMetadata({"colour": "black", "year": 2021})
            await set_metadata(Caller.service(), "1", "1", by_source["black.md"], labels)
        finally:
            await entry.close()

    asyncio.run(label())

    def sources(*filters: str) -> set[str]:
        options = [part for text in filters for part in ("--filter", text)]
        code, out, err = ragline("search", "green tea water", "--json", *options)
        assert code == 0, out + err
        return {hit["source"] for hit in json.loads(out)["hits"]}

    assert sources("colour=black") == {"black.md"}
    assert sources("colour=black", "year>=2021") == {"black.md"}
    assert sources("colour=black", "year>2021") == set()
    assert sources("colour=green or year<2030") == {"black.md"}
    assert sources("colour?") == {"black.md"}
    code, out, err = ragline("search", "tea", "--filter", "colour!=black")
    assert code == 2 and "not supported" in out + err
    code, out, err = ragline("search", "tea", "--filter", "Colour=x")
    assert code == 2 and "key=value" in out + err
