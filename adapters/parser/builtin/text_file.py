"""The parsed text's file: the Markdown, then each page, UTF-8, written piece by piece.

What the sandbox worker writes for the parent (and the in-process registry for a caller that
wants the text in a file): a 100 MB text is never one bytes object, only slices of it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from ragline.application.ports.parser import ParseEngineFailed

SLICE = 1 << 20  # characters encoded at a time: no second whole copy of a part as bytes
ENCODING, ERRORS = "utf-8", "surrogatepass"  # lone surrogates (a bad decode) survive


class TextFile:
    """The request's text file, written part by part: the Markdown (a streaming parse writes
    it in pieces), then each page; `sizes` is each part's byte length. Created on the first
    write (it must not exist); a write that fails is ParseEngineFailed."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._out: BinaryIO | None = None
        self._size = 0
        self.sizes: list[int] = []

    def write(self, piece: str) -> None:
        try:
            if self._out is None:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                self._out = os.fdopen(os.open(self._path, flags, 0o600), "wb")
            for start in range(0, len(piece), SLICE):
                self._size += self._out.write(piece[start : start + SLICE].encode(ENCODING, ERRORS))
        except OSError as exc:
            raise ParseEngineFailed(f"cannot write the parsed text: {exc.strerror}") from None

    def end_part(self) -> None:
        self.write("")  # an empty part still makes the file
        self.sizes.append(self._size)
        self._size = 0

    def close(self) -> None:
        if self._out is not None:
            try:
                self._out.close()
            except OSError as exc:
                raise ParseEngineFailed(f"cannot write the parsed text: {exc.strerror}") from None
