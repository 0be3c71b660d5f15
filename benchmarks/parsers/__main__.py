"""Parser benchmark: `.venv/bin/python -m benchmarks.parsers [--repeat N] [--small-files N]`.

Measures, on the sample folder (examples/docs) and generated inputs:
(1) per format: median parse time in-process and through the sandbox (warm worker), and the
    difference = sandbox overhead per file;
(2) worker cold start (spawn + imports) and the wall time of N small .md files through the
    sandbox vs in-process (the "hundreds of small files" case);
(3) a 50 MB single-line .txt: time to its verdict (refused: a line over max_line_chars) and
    the worker's peak RSS. The full hostile set: campaigns.hostile_files.
Writes benchmarks/results/parsers.json and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.parsers.processes import peak_rss_kib, worker_pids
from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import (
    ParseError,
    ParseOptions,
    Parser,
    PdfParserBackend,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "examples" / "docs"
RESULTS = ROOT / "benchmarks" / "results" / "parsers.json"
NAIVE = ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE)
ODL = ParseOptions(pdf_parser_backend=PdfParserBackend.OPENDATALOADER)


def _median_ms(parser: Parser, source: Path, options: ParseOptions, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        parser.parse(source, source.suffix[1:], options)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 3)


def per_format(sandbox: SandboxedParser, repeat: int) -> list[dict[str, Any]]:
    registry = ParserRegistry()
    rows = []
    for source in sorted(SAMPLES.iterdir()):
        inproc = _median_ms(registry, source, NAIVE, repeat)
        sandboxed = _median_ms(sandbox, source, NAIVE, repeat)
        rows.append(
            {
                "file": source.name,
                "bytes": source.stat().st_size,
                "in_process_ms": inproc,
                "sandbox_ms": sandboxed,
                "overhead_ms": round(sandboxed - inproc, 3),
            }
        )
    pdf = SAMPLES / "printing-press-history.pdf"
    rows.append(
        {
            "file": pdf.name + " (opendataloader backend)",
            "bytes": pdf.stat().st_size,
            "in_process_ms": _median_ms(registry, pdf, ODL, max(1, repeat // 10)),
            "sandbox_ms": None,
            "overhead_ms": None,
        }
    )
    return rows


def small_files(count: int, folder: Path) -> dict[str, Any]:
    sources = []
    for index in range(count):
        path = folder / f"note-{index}.md"
        path.write_text(f"# Note {index}\n\nA short note about item {index}.\n" * 5)
        sources.append(path)
    started = time.perf_counter()
    with SandboxedParser() as sandbox:
        sandbox.prestart(NAIVE)
        cold_start = time.perf_counter() - started
        started = time.perf_counter()
        for path in sources:
            sandbox.parse(path, "md", NAIVE)
        sandboxed = time.perf_counter() - started
    registry = ParserRegistry()
    started = time.perf_counter()
    for path in sources:
        registry.parse(path, "md", NAIVE)
    inproc = time.perf_counter() - started
    return {
        "files": count,
        "worker_cold_start_ms": round(cold_start * 1000, 1),
        "sandbox_total_s": round(sandboxed, 3),
        "in_process_total_s": round(inproc, 3),
        "sandbox_overhead_per_file_ms": round((sandboxed - inproc) / count * 1000, 3),
    }


def big_line(folder: Path) -> dict[str, Any]:
    path = folder / "single-line.txt"
    path.write_bytes(b"lorem ipsum dolor sit amet " * (50 * 1024**2 // 27))
    with SandboxedParser() as sandbox:
        sandbox.prestart(NAIVE)
        started = time.perf_counter()
        try:
            verdict = f"parsed, {len(sandbox.parse(path, 'txt', NAIVE).markdown)} chars"
        except ParseError as error:
            verdict = f"{type(error).__name__}: {error.reason}"
        elapsed = time.perf_counter() - started
        peaks = [peak_rss_kib(pid) for pid in worker_pids()]
    return {
        "bytes": path.stat().st_size,
        "verdict": verdict,
        "sandbox_s": round(elapsed, 3),
        "worker_peak_rss_mib": round(max(peaks) / 1024, 1) if peaks else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--small-files", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        with SandboxedParser() as sandbox:
            sandbox.prestart(NAIVE)
            formats = per_format(sandbox, args.repeat)
        result = {
            "benchmark": "parsers",
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
            "per_format": formats,
            "small_files": small_files(args.small_files, folder),
            "single_line_50mb_txt": big_line(folder),
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
