"""Synthetic-but-realistic chunks and queries for the search benchmark.

Child texts are ~500-character passages cut from the CPython docs (as converted by
benchmarks/chunking). The docs give about 20k such passages; later rounds reuse them with
their words rotated (same vocabulary and length, different text and order), so term
statistics stay those of real documentation. Queries are section headings of the docs.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from benchmarks.chunking.corpus import CPYTHON_MD, cpython_markdown

_HEADING = re.compile(r"^#{1,4}\s+(.{12,80})$", re.M)
_NOISE = re.compile(r"[`*_\[\]#¶]|\s+\(\)|\s{2,}")


def passages(count: int, size: int = 500) -> list[str]:
    """`count` unique child texts of up to `size` characters."""
    text = cpython_markdown() if not CPYTHON_MD.exists() else CPYTHON_MD.read_text("utf-8")
    base: list[str] = []
    current = ""
    for paragraph in (p.strip() for p in text.split("\n\n")):
        while len(paragraph) > size:
            base.append(paragraph[:size])
            paragraph = paragraph[size:]
        if current and len(current) + len(paragraph) > size:
            base.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
    base = [p for p in dict.fromkeys(base) if len(p) >= size // 3]
    out = list(base)
    round_ = 1
    while len(out) < count:
        for passage in base:
            words = passage.split()
            shift = (round_ * 7) % max(1, len(words))
            out.append(" ".join(words[shift:] + words[:shift]))
            if len(out) >= count:
                break
        round_ += 1
    return out[:count]


def queries(count: int, seed: int = 5) -> list[str]:
    """Section headings of the docs, cleaned, sampled with a fixed seed."""
    text = CPYTHON_MD.read_text("utf-8") if CPYTHON_MD.exists() else cpython_markdown()
    headings = sorted({_NOISE.sub(" ", h).strip() for h in _HEADING.findall(text)})
    headings = [h for h in headings if len(h.split()) >= 2]
    return random.Random(seed).sample(headings, count)


def corpus_path() -> Path:
    return CPYTHON_MD
