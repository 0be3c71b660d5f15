"""OCR engine benchmark: `.venv/bin/python -m benchmarks.ocr [--repeat N]`.

Renders scanned pages (Chinese, English, mixed; clean, small print, blurred+rotated) with a
CJK font, OCRs them with tesseract (chi_sim+eng, the CLI) and rapidocr-onnxruntime, and
reports per engine: character accuracy (1 - edit distance / reference length, whitespace
ignored) and pages/s (warm engine, median of N runs). Then the chosen path end to end: a
scanned 2-page PDF (zh + en) through the sandboxed parser at the quality tier (pdfium
render at 200 dpi + tesseract), pages/s. Writes benchmarks/results/ocr.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image, ImageFilter

from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import ParseOptions
from ragline.domain.parse_batch import ParseTier
from ragline.testing.files.scanned import EN_LINES, ZH_LINES, make_scanned_pdf, render_page

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "ocr.json"
MIXED = (
    "第三章 Data pipelines 数据管道",
    "每个 stage 都记录 duration_ms",
    "版本 2.4 发布于 2026 年",
)


def _pages() -> dict[str, tuple[Image.Image, str]]:
    small_zh = render_page(ZH_LINES, size=24)
    noisy = render_page(EN_LINES + ZH_LINES[:2]).rotate(1.5, fillcolor=255)
    noisy = noisy.filter(ImageFilter.GaussianBlur(1.2))
    return {
        "zh-clean": (render_page(ZH_LINES), "".join(ZH_LINES)),
        "en-clean": (render_page(EN_LINES), "".join(EN_LINES)),
        "mixed": (render_page(MIXED), "".join(MIXED)),
        "zh-small-24px": (small_zh, "".join(ZH_LINES)),
        "blur-rotated": (noisy, "".join(EN_LINES + ZH_LINES[:2])),
    }


def _distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def accuracy(text: str, reference: str) -> float:
    got = "".join(text.split())
    want = "".join(reference.split())
    return max(0.0, 1 - _distance(got, want) / len(want))


def tesseract(image: Image.Image, workdir: Path) -> str:
    path = workdir / "page.png"
    image.save(path)
    done = subprocess.run(
        ["tesseract", str(path), "-", "-l", "chi_sim+eng", "--psm", "3"],
        capture_output=True, text=True, check=True, env={**os.environ, "OMP_THREAD_LIMIT": "1"},
    )  # fmt: skip
    return done.stdout


def _rapidocr() -> Callable[[Image.Image, Path], str]:
    import numpy as np
    from rapidocr_onnxruntime import RapidOCR  # type: ignore[import-untyped]

    engine = RapidOCR()

    def run(image: Image.Image, _workdir: Path) -> str:
        result, _elapse = engine(np.asarray(image.convert("RGB")))
        return "\n".join(item[1] for item in result or [])

    return run


def measure(repeat: int, workdir: Path) -> dict[str, Any]:
    pages = _pages()
    engines: dict[str, Callable[[Image.Image, Path], str]] = {
        "tesseract-5 chi_sim+eng": tesseract,
        "rapidocr-onnxruntime (PP-OCRv4)": _rapidocr(),
    }
    out: dict[str, Any] = {}
    for name, engine in engines.items():
        engine(pages["en-clean"][0], workdir)  # warm-up
        rows = {}
        seconds = []
        for page, (image, reference) in pages.items():
            times = []
            text = ""
            for _ in range(repeat):
                started = time.perf_counter()
                text = engine(image, workdir)
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            seconds.append(median)
            rows[page] = {
                "accuracy": round(accuracy(text, reference), 4),
                "seconds": round(median, 3),
            }
        out[name] = {
            "pages": rows,
            "mean_accuracy": round(statistics.mean(r["accuracy"] for r in rows.values()), 4),
            "pages_per_second": round(len(seconds) / sum(seconds), 3),
        }
    return out


def quality_tier_pdf(repeat: int, workdir: Path) -> dict[str, Any]:
    source = make_scanned_pdf(workdir / "scanned.pdf")
    options = ParseOptions(tier=ParseTier.QUALITY)
    with SandboxedParser(max_workers=1) as sandbox:
        parsed = sandbox.parse(source, "pdf", options)  # warm-up (worker start)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            parsed = sandbox.parse(source, "pdf", options)
            times.append(time.perf_counter() - started)
    median = statistics.median(times)
    reference = "".join(ZH_LINES) + "".join(EN_LINES)
    return {
        "file": "scanned 2-page PDF (zh page + en page), sandboxed, quality tier",
        "backend": parsed.backend,
        "accuracy": round(accuracy(parsed.markdown, reference), 4),
        "seconds": round(median, 3),
        "pages_per_second": round(2 / median, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    workdir = Path("/tmp") / f"ragline-ocr-bench-{os.getpid()}"
    workdir.mkdir(exist_ok=True)
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_1min": round(os.getloadavg()[0], 1),
        },
        "page_size_px": "1240x1754 (A4 at 150 dpi)",
        "engines": measure(args.repeat, workdir),
        "quality_tier_pdf": quality_tier_pdf(args.repeat, workdir),
    }
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
