"""`ragline search` while Elasticsearch is down (a real noida-db stopped mid-test): the hits
of the other retrievers on stdout, `degraded` in the JSON, the missing retriever on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry
from ragline.testing.services.fixtures import start_noida, stop_process


def test_search_names_the_missing_retriever_on_stderr(tmp_path: Path) -> None:
    proc, url = start_noida(tmp_path / "noida", tmp_path / "noida.log")
    try:
        env = {"RAGLINE_KEYWORD_INDEX": "elasticsearch", "RAGLINE_ELASTICSEARCH_URL": url}
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "tea.md").write_text("# Tea\n\nGreen tea wants water at 80 degrees.\n")
        data = ["--data-dir", str(tmp_path / "data")]

        def ragline(*args: str) -> tuple[int, str, str]:
            result = CliRunner().invoke(build_cli(_entry), [*args, *data], env=env)
            return result.exit_code, result.stdout, result.stderr

        code, out, err = ragline("ingest", str(docs))
        assert code == 0, out + err
        code, out, err = ragline("search", "green tea water", "--json")
        assert code == 0, out + err
        assert json.loads(out)["degraded"] == [] and "degraded" not in err

        stop_process(proc)
        code, out, err = ragline("search", "green tea water", "--json")
        assert code == 0, out + err
        answer = json.loads(out)  # stdout is the answer alone
        assert answer["degraded"] == ["bm25"] and answer["hits"]
        assert "search degraded: bm25 unavailable" in err
        code, out, err = ragline("search", "green tea water")
        assert code == 0 and "Green tea" in out
        assert "search degraded: bm25 unavailable" in err
    finally:
        stop_process(proc)
