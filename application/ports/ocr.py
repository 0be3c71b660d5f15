"""PageOcr port: the text of one page image, for pages that have no usable text layer.

The quality tier calls it for scanned PDF pages and for image files; the basic tier never
does. Synchronous and CPU-bound, like the parsers that call it (inside the parse sandbox).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class OcrFailed(Exception):
    """The engine is missing or could not read the image; ``reason`` is short and safe."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PageOcr(Protocol):
    @property
    def engine(self) -> str:
        """Short name recorded as part of the parse backend (e.g. ``tesseract``)."""
        ...

    def available(self) -> bool:
        """True when the engine and its language data are installed."""
        ...

    def recognise(self, image: Path, timeout_seconds: float) -> str:
        """Plain text of the page image at ``image`` (PNG/JPEG/TIFF), lines in reading order,
        paragraphs separated by a blank line. Raises OcrFailed."""
        ...
