"""Shared, read-only state for the end-to-end tests: the example folder ingested once."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.ragline_process import Finished, run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "docs"

TENANT2_DOC = """# Beekeeping Log

The queen bee lays up to two thousand eggs a day in spring. Worker bees build the comb from
wax and keep the brood at thirty-five degrees. A smoker calms the colony before the hive is
opened; the beekeeper lifts each frame to look for capped honey and for queen cells.
"""


@dataclass(frozen=True)
class Ingested:
    """One data dir after `ragline ingest`: user 1 / dataset 1 holds a copy of examples/docs,
    user 2 / dataset 9 holds one private note."""

    data_dir: Path
    docs: Path
    first: Finished
    tenant2_doc: Path
    tenant2: Finished


def copy_examples(target: Path) -> Path:
    shutil.copytree(EXAMPLES, target)
    return target


@pytest.fixture(scope="session")
def examples_ingested(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    """Ingested once per session; tests using it only read (search, re-ingest unchanged)."""
    root = tmp_path_factory.mktemp("e2e-shared")
    docs = copy_examples(root / "docs")
    data_dir = root / "data"
    first = run(data_dir, "ingest", str(docs))
    private = root / "tenant2"
    private.mkdir()
    note = private / "beekeeping-log.md"
    note.write_text(TENANT2_DOC, encoding="utf-8")
    tenant2 = run(data_dir, "ingest", str(private), "--user", "2", "--dataset", "9")
    return Ingested(data_dir, docs, first, note, tenant2)
