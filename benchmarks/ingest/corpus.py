"""Ingest corpora: CPython 3.11 library pages as Markdown files, and generated prose.

Pages are converted one by one with the chunking benchmark's html2text conversion (same
settings, cached under benchmarks/.cache/ingest-pages/), so ragline and LlamaIndex read the
very same Markdown files. The prose file is deterministic (seeded), with ordinary lines and
paragraphs, for the peak-memory run.
"""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks.chunking.corpus import CACHE, HTML_ROOT, _convert

PAGES = CACHE / "ingest-pages"
PROSE = CACHE / "ingest-prose"
_VOCABULARY = (
    "the data pipeline parses each file into markdown then splits it into parent blocks and "
    "child chunks which are embedded indexed and stored so that hybrid search can find them "
    "again quickly with dense sparse and keyword retrieval fused by reciprocal rank while the "
    "worker records every stage of every run and retries what failed without redoing work"
)
_WORDS = _VOCABULARY.split()


def library_pages(max_chars: int) -> list[Path]:
    """The first pages of library/ (sorted by name) until `max_chars` of Markdown."""
    files = sorted((HTML_ROOT / "library").glob("*.html"))
    if not files:
        raise SystemExit("no CPython docs: `apt-get install -y python3.11-doc`")
    chosen: list[Path] = []
    total = 0
    for html in files:
        if total >= max_chars:
            break
        out = PAGES / f"{html.stem}.md"
        text = _convert([html], out, "python3.11-doc")
        if text.strip():
            chosen.append(out)
            total += len(text)
    return chosen


def prose_file(megabytes: int) -> Path:
    """A `megabytes` MB plain-text file: sentences of 8-20 words, lines under 100 chars,
    paragraphs of 3-8 lines (generated once, then reused)."""
    path = PROSE / f"prose-{megabytes}mb.txt"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(megabytes)
    target = megabytes * 1_000_000
    written = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            lines = []
            for _ in range(rng.randint(3, 8)):
                words = rng.choices(_WORDS, k=rng.randint(8, 16))
                lines.append(" ".join(words).capitalize() + ".")
            block = "\n".join(lines) + "\n\n"
            out.write(block)
            written += len(block)
    return path
