"""A document's Markdown as UTF-8, a slice at a time: hashing or writing a 100 MB Markdown
must not make a second whole copy of it as bytes (issue 24)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

SLICE_CHARS = 1 << 20


def utf8_slices(markdown: str) -> Iterator[bytes]:
    """The UTF-8 of `markdown`, in order (a str has no surrogate pairs to cut in two)."""
    for start in range(0, len(markdown), SLICE_CHARS):
        yield markdown[start : start + SLICE_CHARS].encode("utf-8")


def write_utf8(markdown: str, path: Path) -> int:
    """`markdown` into `path` as UTF-8; the byte count."""
    size = 0
    with path.open("wb") as out:
        for block in utf8_slices(markdown):
            size += out.write(block)
    return size
