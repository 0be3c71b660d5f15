"""The sandbox bounds time and memory, survives crashes, and returns what in-process returns."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ragline.adapters.parsers.registry import ParserRegistry
from ragline.adapters.parsers.sandbox import SandboxedParser
from ragline.application.ports.parser import (
    ParsedDocument,
    ParseEngineFailed,
    ParseLimits,
    ParseOptions,
    PdfParserBackend,
    UnsupportedFileType,
)
from tests.adapters.parsers.conftest import NAIVE

SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "docs"


def _worker_pids(exclude: frozenset[int] = frozenset()) -> list[int]:
    """Sandbox workers: children of this process running the worker module."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"sandbox_worker" in cmdline and int(entry.name) not in exclude:
            pids.append(int(entry.name))
    return pids


def _small_md(tmp_path: Path) -> Path:
    source = tmp_path / "ok.md"
    source.write_text("# Fine\n\nStill working.\n")
    return source


def _limits(**changes: float) -> ParseOptions:
    return ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE, limits=ParseLimits(**changes))  # type: ignore[arg-type]


def test_results_equal_in_process(sandbox: SandboxedParser) -> None:
    registry = ParserRegistry()
    for source in sorted(SAMPLES.iterdir()):
        kind = source.suffix[1:]
        assert sandbox.parse(source, kind, NAIVE) == registry.parse(source, kind, NAIVE)


def test_errors_keep_their_type_across_the_process_boundary(
    sandbox: SandboxedParser, tmp_path: Path
) -> None:
    source = tmp_path / "table.xyz"
    source.write_bytes(b"PK")
    with pytest.raises(UnsupportedFileType, match=r"no parser for file type \.xyz"):
        sandbox.parse(source, "xyz", NAIVE)
    with pytest.raises(ParseEngineFailed, match="cannot read source"):
        sandbox.parse(tmp_path / "missing.txt", "txt", NAIVE)


def test_wall_clock_limit_kills_a_stuck_parse(tmp_path: Path) -> None:
    fifo = tmp_path / "never-written.txt"
    os.mkfifo(fifo)  # opening it for reading blocks forever: a parse that never ends
    with SandboxedParser(grace_seconds=0.0) as sandbox:
        with pytest.raises(ParseEngineFailed, match=r"parse timed out after 0\.5s"):
            sandbox.parse(fifo, "txt", _limits(max_seconds=0.5))
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"


def test_a_worker_killed_mid_parse_becomes_a_parse_failure(tmp_path: Path) -> None:
    fifo = tmp_path / "blocked.txt"
    os.mkfifo(fifo)
    others = frozenset(_worker_pids())  # e.g. the session sandbox's workers
    with SandboxedParser(max_workers=1) as sandbox:
        sandbox.prestart(NAIVE)
        (pid,) = _worker_pids(others)
        outcome: list[BaseException | ParsedDocument] = []

        def run() -> None:
            try:
                outcome.append(sandbox.parse(fifo, "txt", NAIVE))
            except BaseException as exc:
                outcome.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(0.2)  # the worker is now blocked opening the FIFO (or about to be)
        os.kill(pid, signal.SIGKILL)
        thread.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], ParseEngineFailed)
        assert "parser process killed (SIGKILL" in outcome[0].reason
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"
        assert _worker_pids(others) != [pid]


def test_a_worker_that_died_idle_is_replaced_silently(tmp_path: Path) -> None:
    others = frozenset(_worker_pids())
    with SandboxedParser(max_workers=1) as sandbox:
        sandbox.prestart(NAIVE)
        (pid,) = _worker_pids(others)
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"


def test_memory_limit_turns_into_a_clean_failure(
    hostile_files: dict[str, Path], tmp_path: Path
) -> None:
    with SandboxedParser(max_workers=1) as sandbox:
        with pytest.raises(ParseEngineFailed, match="out of memory"):
            sandbox.parse(
                hostile_files["single-line.txt"],
                "txt",
                _limits(max_memory_bytes=128 * 1024**2),
            )
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"


def test_output_limit(sandbox: SandboxedParser, tmp_path: Path) -> None:
    source = tmp_path / "long.txt"
    source.write_text("word " * 1000)
    with pytest.raises(ParseEngineFailed, match="output of 5000 characters exceeds the limit"):
        sandbox.parse(source, "txt", _limits(max_output_chars=1500))
    with pytest.raises(ParseEngineFailed, match="exceeds the output limit"):
        sandbox.parse(source, "txt", _limits(max_output_chars=10))  # refused before reading


def test_concurrent_parses_share_the_pool(sandbox: SandboxedParser) -> None:
    sources = sorted(SAMPLES.iterdir()) * 3
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda s: sandbox.parse(s, s.suffix[1:], NAIVE), sources))
    assert [r.markdown for r in results[: len(sources) // 3]] * 3 == [r.markdown for r in results]


def test_workers_are_recycled(tmp_path: Path) -> None:
    others = frozenset(_worker_pids())
    with SandboxedParser(max_workers=1, max_parses_per_worker=2) as sandbox:
        source = _small_md(tmp_path)
        seen = set()
        for _ in range(5):
            sandbox.parse(source, "md", NAIVE)
            seen.update(_worker_pids(others))
        assert len(seen) >= 3
