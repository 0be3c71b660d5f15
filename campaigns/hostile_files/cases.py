"""One hostile file through a fresh sandbox, and what is wrong with its outcome: the
campaign's per-case code, shared by `python -m campaigns.hostile_files` and its reduced run in
tests/adapters/parsers/test_hostile.py."""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Any

from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParseEngineFailed,
    ParseError,
    ParseOptions,
    UnsupportedFileType,
)

SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "docs"
VERDICT_OF: dict[type[ParseError], str] = {
    UnsupportedFileType: "unsupported",
    InvalidFileContent: "invalid",
    NoTextLayer: "no_text",
    ParseEngineFailed: "engine",
}
CODE_OF = {
    "unsupported": "UNSUPPORTED_FILE_TYPE",
    "invalid": "FILE_CONTENT_INVALID",
    "no_text": "NO_TEXT_LAYER",
    "engine": "PARSE_ENGINE_FAILED",
    "ok": "-",
}


def run_case(source: Path, options: ParseOptions | None = None) -> dict[str, Any]:
    """One hostile file through a fresh sandbox, then a good file through the same one."""
    options = options or ParseOptions()
    with SandboxedParser() as sandbox:
        sandbox.prestart(options)
        started = time.perf_counter()
        try:
            parsed = sandbox.parse(source, source.suffix[1:], options)
            verdict, reason = "ok", "; ".join(parsed.warnings)
        except ParseError as error:
            verdict, reason = VERDICT_OF[type(error)], error.reason
        seconds = time.perf_counter() - started
        good = sandbox.parse(SAMPLES / "tea-brewing-guide.md", "md", options)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the reaped worker(s)
    return {
        "file": source.name,
        "bytes": source.stat().st_size,
        "verdict": verdict,
        "code": CODE_OF[verdict],
        "reason": reason[:160],
        "seconds": round(seconds, 3),
        "worker_peak_rss_mib": round(peak_kib / 1024, 1),
        "next_file_parsed": bool(good.title),
        "limits": {
            "max_seconds": options.limits.max_seconds,
            "max_memory_mib": options.limits.max_memory_bytes // 1024**2,
        },
    }


def judge(row: dict[str, Any], expected: str) -> list[str]:
    """What is wrong with a case's outcome (empty: it failed alone, within its limits)."""
    problems = []
    if row["verdict"] != expected:
        problems.append(f"verdict {row['verdict']}, expected {expected}")
    if row["seconds"] > row["limits"]["max_seconds"]:
        problems.append(f"took {row['seconds']} s, over the {row['limits']['max_seconds']} s")
    if row["worker_peak_rss_mib"] > row["limits"]["max_memory_mib"]:
        problems.append(f"peak RSS {row['worker_peak_rss_mib']} MiB over the limit")
    if not row["next_file_parsed"]:
        problems.append("the next file did not parse")
    return problems
