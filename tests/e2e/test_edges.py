"""The CLI's edges: searching before anything was ingested, a path that does not exist."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.ragline_process import run


def test_search_on_a_fresh_data_dir_answers_no_hits_per_query(tmp_path: Path) -> None:
    lines = [{"id": "first", "query": "how to brew green tea"}, {"id": 7, "query": "太极拳"}]
    batch = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n\n"
    done = run(tmp_path / "data", "search", "--batch", "-", stdin_text=batch)
    assert done.returncode == 0, done.explain()
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers == [
        {"id": "first", "hits": [], "degraded": []},
        {"id": "7", "hits": [], "degraded": []},
    ]


def test_ingest_of_a_missing_path_exits_2_and_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    done = run(tmp_path / "data", "ingest", str(missing))
    assert done.returncode == 2, done.explain()
    assert "no such file or folder" in done.stderr, done.explain()
