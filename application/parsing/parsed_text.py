"""A parse's text in a file, not in memory (issue 24): what a batch writes to the parse cache.

The sandboxed parser's worker writes the file itself (the parent never holds the text);
any other Parser (MinerU, the in-process registry, a test's) is asked in the old shape and
its document written out a slice at a time. Either way the page store copies the file into
the batch's object a block at a time.
"""

from __future__ import annotations

import codecs
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import attrs

from ragline.application.ports.parser import (
    ParsedText,
    ParseOptions,
    Parser,
    ParsesToFile,
)

ENCODING, ERRORS = "utf-8", "surrogatepass"  # lone surrogates (a bad decode) survive
SLICE_CHARS = 1 << 20
BLOCK_BYTES = 1 << 20


def parse_to_file(
    parser: Parser, source: Path, file_type: str, options: ParseOptions, target: Path
) -> ParsedText:
    """Parse `source`; its text is in `target` (which must not exist) when this returns."""
    if isinstance(parser, ParsesToFile):
        return parser.parse_to_file(source, file_type, options, target)
    document = parser.parse(source, file_type, options)
    sizes = []
    with target.open("xb") as out:
        for part in (document.markdown, *document.pages):
            size = 0
            for start in range(0, len(part), SLICE_CHARS):
                size += out.write(part[start : start + SLICE_CHARS].encode(ENCODING, ERRORS))
            sizes.append(size)
    bare = dataclasses.replace(document, markdown="", pages=())
    return ParsedText(bare, target, tuple(sizes))


@attrs.frozen
class TextPart:
    """One part of a ParsedText's file: `size` bytes from `offset`."""

    offset: int
    size: int


def parts(parsed: ParsedText) -> tuple[TextPart, list[TextPart]]:
    """The Markdown's part and each page's."""
    found, offset = [], 0
    for size in parsed.sizes:
        found.append(TextPart(offset, size))
        offset += size
    return found[0], found[1:]


def read_pieces(path: Path, part: TextPart, block: int = BLOCK_BYTES) -> Iterator[str]:
    """The part's text, decoded a block at a time (never a character cut in two)."""
    decoder = codecs.getincrementaldecoder(ENCODING)(ERRORS)
    left = part.size
    with path.open("rb") as stream:
        stream.seek(part.offset)
        while left > 0:
            data = stream.read(min(block, left))
            if not data:
                raise ValueError(f"{path.name}: the text file ends inside a part")
            left -= len(data)
            if piece := decoder.decode(data):
                yield piece
    if tail := decoder.decode(b"", True):
        yield tail
