"""Bytes -> text for md/txt: UTF-8 (BOM allowed), a legacy fallback, binary detection."""

from __future__ import annotations

import codecs
import re

from ragline.application.ports.parser import (
    InvalidFileContent,
    ParseEngineFailed,
    UnsupportedFileType,
)

# C0 controls other than \t \n \v \f \r and ESC are never in real text; NUL marks binary.
_CONTROL_BYTES = bytes(b for b in range(0x20) if b not in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B))
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)
MAX_CONTROL_RATIO = 0.001
_NEWLINES = re.compile(r"\r\n?")


def reject_binary(data: bytes, file_type: str) -> None:
    """A binary file renamed to a text extension is not that type: UnsupportedFileType."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return
    if b"\x00" in data:
        raise UnsupportedFileType(f"binary content (NUL bytes) in a .{file_type} file")
    controls = count_controls(data)
    if controls > max(8, len(data) * MAX_CONTROL_RATIO):
        raise UnsupportedFileType(
            f"binary content ({controls} control bytes) in a .{file_type} file"
        )


def count_controls(data: bytes) -> int:
    """How many C0 control bytes (other than whitespace and ESC) `data` holds."""
    return len(data.translate(None, _NOT_CONTROL))


def decode_utf8(data: bytes, file_type: str) -> str:
    """Strict UTF-8 with an optional BOM; the error names the first bad byte offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidFileContent(
            f"invalid UTF-8 in .{file_type} file at byte {exc.start}"
        ) from None


def decode_text(data: bytes, file_type: str) -> tuple[str, str]:
    """UTF-8 (BOM allowed), UTF-16 by BOM, else GB18030 (Chinese legacy). Returns (text, codec)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise InvalidFileContent(f"invalid UTF-16 in .{file_type} file") from None
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        utf8_error = exc.start
    try:
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError:
        raise InvalidFileContent(
            f"undecodable .{file_type} file: not UTF-8 (bad byte at {utf8_error}) nor GB18030"
        ) from None


def normalise_newlines(text: str) -> str:
    return _NEWLINES.sub("\n", text) if "\r" in text else text


def read_bounded(data_size: int, max_output_chars: int, file_type: str) -> None:
    """Fail before reading a text file that cannot fit the output limit (>= 1 char per 4 bytes)."""
    if data_size > max_output_chars * 4:
        raise ParseEngineFailed(
            f".{file_type} file of {data_size} bytes exceeds the output limit "
            f"of {max_output_chars} characters"
        )


def reject_long_lines(text: str, max_line_chars: int, file_type: str) -> None:
    """Fail on a line longer than `max_line_chars`.

    Jumps window by window to the last newline inside it, so a 100 MB text costs about
    len(text) / max_line_chars C-level scans, whatever its line count.
    """
    position, end = 0, len(text)
    while end - position > max_line_chars:
        newline = text.rfind("\n", position, position + max_line_chars + 1)
        if newline == -1:
            raise ParseEngineFailed(
                f".{file_type} file has a line longer than {max_line_chars} characters "
                "(not prose: minified or hostile input)"
            )
        position = newline + 1
