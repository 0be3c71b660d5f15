"""No error a caller reads shows a filesystem path of the server (issue 18: failure reasons
and problems showed the embedded vectors file, temp files and workspace paths).

Errors are worded without paths where they are raised (the embedded vector index, Tantivy,
the local store, the parser registry, OSErrors in `describe`); `without_paths` is the last
guard on every problem detail, stage failure, batch error and /readyz detail."""

from __future__ import annotations

import errno
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.adapters.vector_index.embedded.store import FILE_NAME
from ragline.application.error_text import describe, without_paths
from ragline.application.ports.parser import ParseEngineFailed, ParseOptions
from ragline.application.ports.vector_index import VectorIndexUnavailable
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from ragline.domain.parse_run import FailureCode, PipelineStatus
from tests.fakes.harness import Harness


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("[Errno 2] No such file or directory: '/tmp/abc/x.docx'", "directory: '…/x.docx'"),
        ("database /srv/ragline/data/ragline.db is locked", "database …/ragline.db is"),
        ("see /etc/passwd", "see …/passwd"),
        ("mineru POST /api/v4/extract/task: HTTP 500", "POST /api/v4/extract/task:"),
        ("http://127.0.0.1:9/tmp/x", "http://127.0.0.1:9/tmp/x"),
        ("bucket raw/tmp/report.pdf", "raw/tmp/report.pdf"),
        ("pages 1/2", "pages 1/2"),
    ],
)
def test_paths_into_this_machine_are_cut_and_other_slashes_kept(text: str, shown: str) -> None:
    assert shown in without_paths(text)
    assert "/tmp/abc" not in without_paths(text) and "/srv/" not in without_paths(text)


def test_an_os_error_is_described_without_its_file() -> None:
    error = OSError(errno.ENOSPC, "No space left on device", "/tmp/ragline/tmp/f.md")
    assert describe(error) == "OSError: [Errno 28] No space left on device"
    wrapped = RuntimeError("writing /var/lib/ragline/markdown/x.md failed")
    assert describe(wrapped) == "RuntimeError: writing …/x.md failed"


async def test_the_embedded_vector_index_does_not_name_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "vectors"
    folder.mkdir()
    (folder / FILE_NAME).write_bytes(b"not a database" * 100)
    index = EmbeddedVectorIndex(folder)
    with pytest.raises(VectorIndexUnavailable) as raised:
        await index.ensure_collection(8)
    assert str(tmp_path) not in str(raised.value)
    assert "embedded vector index" in str(raised.value)


def test_a_parser_error_names_the_file_not_its_path(tmp_path: Path) -> None:
    source = tmp_path / "deep" / "extract-1.md"
    source.parent.mkdir()
    source.write_text("# x")

    def failing(path: Path, kind: str, options: ParseOptions) -> None:
        raise ValueError(f"Package not found at '{path}'")

    registry = ParserRegistry({"md": failing})  # type: ignore[dict-item]
    with pytest.raises(ParseEngineFailed) as raised:
        registry.parse(source, "md", ParseOptions())
    assert str(tmp_path) not in raised.value.reason
    assert "extract-1.md" in raised.value.reason


async def test_a_stage_failure_reason_carries_no_path(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.configure_embedding()
    h.faults.arm("keywords.write", RuntimeError(f"cannot write {tmp_path}/keyword/seg.idx"))
    task = h.task("txt")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failure_reason is not None
    assert str(tmp_path) not in run.failure_reason.text and "seg.idx" in run.failure_reason.text
    assert run.failure_reason.code is not FailureCode.INTERNAL_UNKNOWN_ERROR


@pytest.fixture
def broken_vectors(tmp_path: Path) -> Iterator[TestClient]:
    """Embedded defaults whose vectors file is not a database."""
    container = container_for(tmp_path / "data")
    vectors = container.settings().data_dir / "vectors"
    vectors.mkdir(parents=True)
    (vectors / FILE_NAME).write_bytes(b"not a database" * 100)
    app = create_app(entry_for(container), ApiTokens.parse(None))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        yield client


def test_readyz_names_no_path(broken_vectors: TestClient, tmp_path: Path) -> None:
    answer = broken_vectors.get("/readyz")
    assert answer.status_code == 503
    checks = {c["part"]: c for c in answer.json()["checks"]}
    assert not checks["vector index"]["ok"], checks
    assert str(tmp_path) not in json.dumps(answer.json())
