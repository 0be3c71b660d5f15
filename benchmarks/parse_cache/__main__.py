"""Parse-cache benchmark (issue 11): `.venv/bin/python -m benchmarks.parse_cache [--pdfs N]
[--pages P] [--rounds R]`.

From outside, as a user would check it: `ragline ingest CORPUS --json` on a fresh data dir,
then `ragline ingest CORPUS --force --json` (an unchanged corpus re-run through the whole
pipeline: new runs, every stage again), and the sum of each file's CLEANING ms of the two
(`stage_ms.CLEANING` in the JSON summary). Target: forced / first <= 0.05. For contrast the
same forced re-ingest with the cache switched off (`RAGLINE_PARSE_CACHE=false`).

Corpus: examples/docs plus N generated PDFs of P text pages each (fpdf2). Writes
benchmarks/results/parse_cache.json and prints the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.chunking.__main__ import _machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "parse_cache.json"
RAGLINE = Path(sys.executable).with_name("ragline")
TOPICS = ("tea", "bread", "presses", "stars", "rivers", "bridges", "clocks", "maps")


def make_corpus(folder: Path, pdfs: int, pages: int) -> Path:
    from fpdf import FPDF

    shutil.copytree(ROOT / "examples" / "docs", folder)
    for i in range(pdfs):
        topic = TOPICS[i % len(TOPICS)]
        pdf = FPDF()
        pdf.set_font("helvetica", size=11)
        for page in range(1, pages + 1):
            pdf.add_page()
            pdf.set_font("helvetica", style="B", size=15)
            pdf.set_x(10)
            pdf.multi_cell(180, 9, f"{topic.title()} report {i}, section {page}")
            pdf.set_font("helvetica", size=11)
            for k in range(8):
                pdf.set_x(10)
                pdf.multi_cell(
                    180,
                    6,
                    f"Paragraph {k} of section {page} in report {i} about {topic}: measured "
                    f"value {i * 1000 + page * 10 + k} was recorded on day {k + page} and "
                    f"compared with the reference series {i}-{page}-{k} for consistency.",
                )
        pdf.output(str(folder / f"report-{i:02d}-{topic}.pdf"))
    return folder


def ingest(corpus: Path, data_dir: Path, *extra: str, cache: bool = True) -> dict[str, Any]:
    env = {**os.environ, "RAGLINE_PARSE_CACHE": "true" if cache else "false"}
    done = subprocess.run(
        [str(RAGLINE), "ingest", str(corpus), "--data-dir", str(data_dir), "--json", *extra],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def cleaning_ms(summary: dict[str, Any]) -> int:
    return sum(int(f["stage_ms"].get("CLEANING", 0)) for f in summary["files"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdfs", type=int, default=12)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragline-parse-cache-") as tmp:
        corpus = make_corpus(Path(tmp) / "corpus", args.pdfs, args.pages)
        files = len(list(corpus.iterdir()))
        for round_no in range(args.rounds):
            data = Path(tmp) / f"data-{round_no}"
            first = ingest(corpus, data)
            forced = ingest(corpus, data, "--force")
            uncached = ingest(corpus, data, "--force", cache=False)
            figures = {
                "first_cleaning_ms": cleaning_ms(first),
                "forced_cleaning_ms": cleaning_ms(forced),
                "forced_without_cache_cleaning_ms": cleaning_ms(uncached),
                "ingested": [first["ingested"], forced["ingested"], uncached["ingested"]],
                "failed": [first["failed"], forced["failed"], uncached["failed"]],
            }
            figures["ratio"] = round(
                figures["forced_cleaning_ms"] / max(1, figures["first_cleaning_ms"]), 4
            )
            rounds.append(figures)
            print(json.dumps(figures))
    ratios = [r["ratio"] for r in rounds]
    result = {
        "machine": _machine(),
        "corpus": {"files": files, "generated_pdfs": args.pdfs, "pages_per_pdf": args.pages},
        "rounds": rounds,
        "ratio_median": statistics.median(ratios),
        "target": 0.05,
        "met": max(ratios) <= 0.05,
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"forced / first CLEANING: {ratios} (target <= 0.05) -> {RESULTS}")


if __name__ == "__main__":
    main()
