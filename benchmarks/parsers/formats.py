"""Throughput of the slide, sheet, table, e-book and mail parsers, through the sandbox:
`.venv/bin/python -m benchmarks.parsers.formats [--rows N] [--slides N] [--chapters N]`.

Each format gets a generated input and a fresh worker, so the worker's peak RSS (VmHWM) is
that format's: units per second (rows, slides, chapters, messages) and the peak against the
idle worker's. The 200k-row sheet is the issue's memory case: it must stay far under the
sandbox's memory bound (2 GiB by default). Writes benchmarks/results/parser_formats.json.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import tempfile
import time
import zipfile
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
from ebooklib import epub

from benchmarks.parsers.processes import peak_rss_kib, worker_pids
from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import ParseLimits, ParseOptions

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "parser_formats.json"
OPTIONS = ParseOptions(limits=ParseLimits(max_seconds=600))
CITIES = ["Lyon", "Oslo", "Kyoto", "Quito", "Accra", "Perth"]


def _row(n: int) -> list[Any]:
    return [n, f"SKU-{n:07d}", CITIES[n % len(CITIES)], n % 97, round(n * 0.37, 2)]


def make_xlsx(path: Path, rows: int) -> None:
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Orders")
    sheet.append(["Order", "SKU", "City", "Qty", "Amount"])
    for n in range(rows):
        sheet.append(_row(n))
    book.save(path)


def make_delimited(path: Path, rows: int, delimiter: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(["Order", "SKU", "City", "Qty", "Amount"])
        writer.writerows(_row(n) for n in range(rows))


def make_pptx(path: Path, slides: int) -> None:
    deck = pptx.Presentation()
    for n in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide topic {n}"
        body = slide.placeholders[1].text_frame
        body.text = f"First point of slide {n} about throughput"
        for k in range(4):
            body.add_paragraph().text = f"Point {k} with a few more words on slide {n}"
        slide.notes_slide.notes_text_frame.text = f"Speaker notes for slide {n}."
    deck.save(str(path))


def make_epub(path: Path, chapters: int) -> None:
    book = epub.EpubBook()
    book.set_identifier("urn:ragline:bench")
    book.set_title("Benchmark book")
    items = []
    paragraph = "<p>" + "A sentence of an ordinary chapter in a long book. " * 12 + "</p>"
    for n in range(chapters):
        item = epub.EpubHtml(title=f"Chapter {n}", file_name=f"c{n}.xhtml")
        item.content = f"<html><body><h1>Chapter {n}</h1><h2>Part</h2>{paragraph * 6}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = items
    epub.write_epub(str(path), book)


def make_eml(path: Path) -> None:
    message = EmailMessage()
    message["From"] = "a@example.org"
    message["To"] = "b@example.org"
    message["Subject"] = "Weekly figures"
    message.set_content("Hello,\n\nthe weekly figures are attached.\n" * 20)
    report = docx.Document()
    report.add_heading("Figures", 1)
    for n in range(50):
        report.add_paragraph(f"Paragraph {n} of the attached report.")
    buffer = io.BytesIO()
    report.save(buffer)
    message.add_attachment(buffer.getvalue(), maintype="application", subtype="octet-stream",
                           filename="report.docx")  # fmt: skip
    table = io.StringIO()
    csv.writer(table).writerows([_row(n) for n in range(500)])
    message.add_attachment(table.getvalue().encode(), maintype="text", subtype="csv",
                           filename="figures.csv")  # fmt: skip
    path.write_bytes(bytes(message))


def _largest_ratio(path: Path) -> float:
    with zipfile.ZipFile(path) as archive:
        return max(i.file_size / max(i.compress_size, 1) for i in archive.infolist())


def measure(path: Path, kind: str, units: int, unit: str, repeat: int = 1) -> dict[str, Any]:
    with SandboxedParser(max_workers=1) as sandbox:
        sandbox.prestart(OPTIONS)
        idle = max(peak_rss_kib(pid) for pid in worker_pids())
        started = time.perf_counter()
        for _ in range(repeat):
            parsed = sandbox.parse(path, kind, OPTIONS)
        elapsed = (time.perf_counter() - started) / repeat
        peak = max(peak_rss_kib(pid) for pid in worker_pids())
    row: dict[str, Any] = {
        "format": kind,
        "input": f"{units} {unit}",
        "bytes": path.stat().st_size,
        "markdown_chars": len(parsed.markdown),
        "seconds": round(elapsed, 3),
        f"{unit}_per_second": round(units / elapsed, 1),
        "worker_idle_rss_mib": round(idle / 1024, 1),
        "worker_peak_rss_mib": round(peak / 1024, 1),
    }
    if zipfile.is_zipfile(path):
        row["largest_zip_ratio"] = round(_largest_ratio(path), 1)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--slides", type=int, default=200)
    parser.add_argument("--chapters", type=int, default=200)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        cases = [
            ("xlsx", lambda p: make_xlsx(p, args.rows), args.rows, "rows", 1),
            ("csv", lambda p: make_delimited(p, args.rows, ","), args.rows, "rows", 1),
            ("tsv", lambda p: make_delimited(p, args.rows, "\t"), args.rows, "rows", 1),
            ("pptx", lambda p: make_pptx(p, args.slides), args.slides, "slides", 1),
            ("epub", lambda p: make_epub(p, args.chapters), args.chapters, "chapters", 1),
            ("eml", make_eml, 1, "messages", 20),
        ]
        for kind, make, units, unit, repeat in cases:
            path = folder / f"input.{kind}"
            make(path)
            rows.append(measure(path, kind, units, unit, repeat))
            print(json.dumps(rows[-1]))
    result = {
        "benchmark": "parser_formats",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "memory_bound_mib": OPTIONS.limits.max_memory_bytes // 1024**2,
        "formats": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
