"""Parse-cache benchmark (issue 11): `.venv/bin/python -m benchmarks.parse_cache [--pdfs N]
[--pages P] [--rounds R]`.

What `ragline ingest CORPUS --json` and then `ragline ingest CORPUS --force --json` report
(an unchanged corpus re-run through the whole pipeline: new runs, every stage again): the sum
of each file's CLEANING ms (`stage_ms.CLEANING` of the JSON summary, the same FileOutcome the
CLI prints). Run in-process through the same use case (`IngestFiles`, a worker alongside, a
fresh data dir, one task in flight so each stage's ms is its own) with a constant embedder,
so the model's minutes do not hide the figure.
Target: forced / first <= 0.05. For contrast the same forced re-ingest with the cache off
(`RAGLINE_PARSE_CACHE=false`), and the same three runs on examples/docs alone (`--pdfs 0`).

Corpus: examples/docs plus N generated PDFs of P text pages each (fpdf2). Writes
benchmarks/results/parse_cache.json and prints the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_facts

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "parse_cache.json"
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


def ingest(
    corpus: Path, data_dir: Path, *, force: bool = False, cache: bool = True
) -> dict[str, Any]:
    return asyncio.run(_ingest(corpus, data_dir, force, cache))


async def _ingest(corpus: Path, data_dir: Path, force: bool, cache: bool) -> dict[str, Any]:
    from dependency_injector import providers

    from benchmarks.ingest.ragline_run import DATASET, USER, QuietObserver
    from ragline.adapters.inbound.cli.ingest import summary_json
    from ragline.adapters.inbound.cli.walk import find_sources
    from ragline.application.health import obtain
    from ragline.bootstrap.container import container_for
    from ragline.bootstrap.entry import shut_down
    from ragline.testing.services.constant_embedder import ConstantResolver

    # one task at a time: a stage's ms is then its own work, not a share of the others'
    container = container_for(data_dir, parse_cache=cache, ingest_workers=1)
    container.embedders.override(providers.Object(ConstantResolver()))
    try:
        await (await obtain(container.provision_embedding))(USER)
        ingest_files = await obtain(container.ingest_files)
        async with (await obtain(container.worker)).running():
            summary = await ingest_files(
                find_sources([corpus]), USER, DATASET, QuietObserver(), force=force
            )
    finally:
        await shut_down(container)
    found: dict[str, Any] = summary_json(summary)
    return found


def cleaning_ms(summary: dict[str, Any]) -> int:
    return sum(int(f["stage_ms"].get("CLEANING", 0)) for f in summary["files"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdfs", type=int, default=12)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragline-parse-cache-") as tmp:
        corpus = make_corpus(Path(tmp) / "corpus", args.pdfs, args.pages)
        files = len(list(corpus.iterdir()))
        for round_no in range(args.rounds):
            data = Path(tmp) / f"data-{round_no}"
            first = ingest(corpus, data)
            forced = ingest(corpus, data, force=True)
            uncached = ingest(corpus, data, force=True, cache=False)
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
        "machine": machine_facts(),
        "corpus": {"files": files, "generated_pdfs": args.pdfs, "pages_per_pdf": args.pages},
        "rounds": rounds,
        "ratio_median": statistics.median(ratios),
        "target": 0.05,
        "met": max(ratios) <= 0.05,
    }
    name = f"examples+{args.pdfs}x{args.pages}-page-pdfs" if args.pdfs else "examples"
    stored = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    stored[name] = result
    RESULTS.write_text(json.dumps(stored, indent=2) + "\n", encoding="utf-8")
    print(f"forced / first CLEANING: {ratios} (target <= 0.05) -> {RESULTS}")


if __name__ == "__main__":
    main()
