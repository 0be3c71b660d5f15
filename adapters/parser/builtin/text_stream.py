"""txt and md parsed in blocks straight into a sink: never one str of the whole file (issue 24).

A 100 MB text file read whole is its bytes and its decoded str side by side (a str with one
non-Latin-1 character takes 2 bytes a character): 300 MB for one parse. Here the file is read
twice, a block at a time. The first pass judges it exactly as the whole-file rules do
(`text_decoding`: binary content, then the encoding: UTF-8 with an optional BOM, UTF-16 by
BOM, else GB18030 for txt; strict UTF-8 for md), so every error is the one the whole-file
parse raised, and none is found after writing began. The second pass decodes, normalises
newlines, checks line lengths and escapes block markers (txt) in pieces cut after a newline
(the rest is carried into the next piece), so every rule sees whole lines.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path

from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers_lines
from ragline.adapters.parser.builtin.text_decoding import (
    MAX_CONTROL_RATIO,
    count_controls,
    read_bounded,
    reject_long_lines,
)
from ragline.application.ports.parser import (
    InvalidFileContent,
    MarkdownSink,
    ParsedDocument,
    ParseOptions,
    UnsupportedFileType,
)

BLOCK_BYTES = 1 << 20
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_ATX_H1 = re.compile(r"^ {0,3}# +(.+?)(?: +#+)? *$", re.MULTILINE)
_TITLE_WINDOW = 1_000_000  # md: the first H1 within this many characters is the title
_TXT_HEAD = 200  # txt: the title is the first line within this many characters


def _blocks(source: Path, block: int, skip: int = 0) -> Iterator[bytes]:
    with source.open("rb") as stream:
        stream.seek(skip)
        while data := stream.read(block):
            yield data


def _starts_utf16(source: Path) -> bool:
    with source.open("rb") as stream:
        return stream.read(2) in _UTF16_BOMS


def _reject_binary(source: Path, file_type: str, block: int) -> None:
    """`text_decoding.reject_binary`, a block at a time."""
    if _starts_utf16(source):
        return
    controls = size = 0
    for data in _blocks(source, block):
        if b"\x00" in data:
            raise UnsupportedFileType(f"binary content (NUL bytes) in a .{file_type} file")
        controls += count_controls(data)
        size += len(data)
    if controls > max(8, size * MAX_CONTROL_RATIO):
        raise UnsupportedFileType(
            f"binary content ({controls} control bytes) in a .{file_type} file"
        )


def _utf8_error(source: Path, block: int) -> int | None:
    """Where UTF-8 (after an optional BOM) fails, as `bytes.decode("utf-8-sig")` reports it
    (an offset after the BOM); None when the whole file decodes."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    with source.open("rb") as stream:
        bom = len(codecs.BOM_UTF8) if stream.read(3) == codecs.BOM_UTF8 else 0
    fed = 0  # bytes given to the decoder before this block
    for data in _blocks(source, block, skip=bom):
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(data)
        except UnicodeDecodeError as exc:
            return fed - pending + exc.start
        fed += len(data)
    pending = len(decoder.getstate()[0])
    try:
        decoder.decode(b"", True)
    except UnicodeDecodeError as exc:
        return fed - pending + exc.start
    return None


def _decodes(source: Path, codec: str, block: int) -> bool:
    decoder = codecs.getincrementaldecoder(codec)("strict")
    try:
        for data in _blocks(source, block):
            decoder.decode(data)
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def text_codec(source: Path, file_type: str, block: int = BLOCK_BYTES) -> str:
    """`text_decoding.decode_text`'s choice and errors, without holding the text."""
    if _starts_utf16(source):
        if not _decodes(source, "utf-16", block):
            raise InvalidFileContent(f"invalid UTF-16 in .{file_type} file")
        return "utf-16"
    utf8_error = _utf8_error(source, block)
    if utf8_error is None:
        return "utf-8-sig"
    if not _decodes(source, "gb18030", block):
        raise InvalidFileContent(
            f"undecodable .{file_type} file: not UTF-8 (bad byte at {utf8_error}) nor GB18030"
        )
    return "gb18030"


def _normalised(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _pieces(
    source: Path, codec: str, block: int, *, newlines: bool, max_line: int, file_type: str
) -> Iterator[str]:
    """The decoded text in pieces of whole lines (each ends after a newline; the last one is
    the rest). `newlines`: CR LF and lone CR become LF. A line longer than `max_line` fails
    as soon as it is seen (it is never carried whole)."""
    decoder = codecs.getincrementaldecoder(codec)("strict")
    carry = ""
    for data in _blocks(source, block):
        text = carry + decoder.decode(data)
        tail = ""
        if newlines:
            if text.endswith("\r"):  # its LF may start the next block
                text, tail = text[:-1], "\r"
            text = _normalised(text)
        cut = text.rfind("\n") + 1
        carry = text[cut:] + tail
        if len(carry) > max_line and len(carry.replace("\x00", "")) > max_line:
            reject_long_lines(carry, max_line, file_type)  # no newline in it: raises
        if cut:
            yield text[:cut]
    rest = carry + decoder.decode(b"", True)
    if newlines:
        rest = _normalised(rest)
    if rest:
        yield rest


def stream_text(
    source: Path,
    file_type: str,
    options: ParseOptions,
    sink: MarkdownSink,
    *,
    block: int = BLOCK_BYTES,
) -> ParsedDocument:
    """txt: decoded, newlines normalised, NULs dropped, block markers escaped, written to
    `sink` in pieces; the document returned has everything but the Markdown (empty)."""
    limits = options.limits
    read_bounded(source.stat().st_size, limits.max_output_chars, file_type)
    _reject_binary(source, file_type, block)
    codec = text_codec(source, file_type, block)
    head, blank = "", True
    pieces = _pieces(
        source, codec, block, newlines=True, max_line=limits.max_line_chars, file_type=file_type
    )
    for raw in pieces:
        piece = raw.replace("\x00", "")
        reject_long_lines(piece, limits.max_line_chars, file_type)
        if len(head) < _TXT_HEAD:
            head = (head + piece).lstrip()[:_TXT_HEAD]
        blank = blank and not piece.strip()
        # every piece starts a line (the one before ended with a newline; the first starts
        # the file), so "\n" before it lets the line-start patterns see its first line
        sink.write(escape_block_markers_lines("\n" + piece)[1:])
    warnings = [] if codec == "utf-8-sig" else [f"decoded as {codec}"]
    if blank:
        warnings.append("empty document")
    first = head.split("\n", 1)
    title = first[0].strip() if len(first) == 2 and len(first[0]) <= 120 else None
    return ParsedDocument(markdown="", title=title, warnings=warnings)


def stream_markdown(
    source: Path,
    file_type: str,
    options: ParseOptions,
    sink: MarkdownSink,
    *,
    block: int = BLOCK_BYTES,
) -> ParsedDocument:
    """md: the source validated (UTF-8, not binary, sane lines) and written to `sink`
    unchanged, in pieces; the document returned has everything but the Markdown (empty)."""
    limits = options.limits
    read_bounded(source.stat().st_size, limits.max_output_chars, file_type)
    _reject_binary(source, file_type, block)
    error = _utf8_error(source, block)
    if error is not None:
        raise InvalidFileContent(f"invalid UTF-8 in .{file_type} file at byte {error}")
    window, blank = "", True
    pieces = _pieces(
        source,
        "utf-8-sig",
        block,
        newlines=False,
        max_line=limits.max_line_chars,
        file_type=file_type,
    )
    for piece in pieces:
        reject_long_lines(piece, limits.max_line_chars, file_type)
        if len(window) < _TITLE_WINDOW:
            window += piece[: _TITLE_WINDOW - len(window)]
        blank = blank and not piece.strip()
        sink.write(piece)
    match = _ATX_H1.search(window, 0, _TITLE_WINDOW)
    return ParsedDocument(
        markdown="",
        title=match.group(1).strip() if match else None,
        warnings=["empty document"] if blank else [],
    )
