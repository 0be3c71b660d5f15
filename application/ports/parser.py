"""Parser port: turns one source file into Markdown for the CLEANING stage.

Parsing is CPU-bound and synchronous; the pipeline runs it off the event loop. The structure
tree is built later from the Markdown, so a parser's job is good Markdown: ``#`` headings,
lists, GFM pipe tables, fenced code.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from ragline.application.tasks.parse_task import (
    PdfParserBackend as PdfParserBackend,  # a task field too
)
from ragline.domain.parse_batch import PageRange, ParseTier
from ragline.domain.parse_run import FailureCode

IMAGE_FILE_TYPES: frozenset[str] = frozenset({"png", "jpg", "jpeg", "tif", "tiff"})
"""Images are read by OCR only (the quality tier), one section per image or TIFF frame."""

SUPPORTED_FILE_TYPES: frozenset[str] = (
    frozenset({"md", "markdown", "txt", "html", "htm", "docx", "pdf"})
    | frozenset({"pptx", "xlsx", "csv", "tsv", "epub", "eml"})
    | IMAGE_FILE_TYPES
)


def tier_of(backend: PdfParserBackend) -> ParseTier:
    """The tier a backend parses at: naive reads the text layer only (basic); opendataloader,
    auto and mineru are layout-aware (quality; auto and mineru also OCR scanned pages)."""
    return ParseTier.BASIC if backend is PdfParserBackend.NAIVE else ParseTier.QUALITY


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Bounds for one parse: a hostile file must fail cleanly, never hang or exhaust memory."""

    max_seconds: float = 120.0
    max_memory_bytes: int = 2 * 1024**3
    max_output_chars: int = 200_000_000
    max_line_chars: int = 1_000_000
    """A text line longer than this is not prose (minified data, a hostile single-line file):
    chunking and indexing it would only burn time, so the parse fails instead."""

    def __post_init__(self) -> None:
        if self.max_seconds <= 0:
            raise ValueError("max_seconds must be positive")
        if self.max_memory_bytes < 64 * 1024**2:
            raise ValueError("max_memory_bytes must be at least 64 MiB")
        if self.max_output_chars <= 0:
            raise ValueError("max_output_chars must be positive")
        if self.max_line_chars <= 0:
            raise ValueError("max_line_chars must be positive")


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """Per-task parse options (from settings or the task message)."""

    pdf_parser_backend: PdfParserBackend = PdfParserBackend.AUTO
    docling_force_ocr: bool = False  # quality tier: OCR every page, text layer or not
    mineru_url: str | None = None  # URL of the source object for MinerU's direct pull
    limits: ParseLimits = field(default_factory=ParseLimits)
    tier: ParseTier = ParseTier.BASIC
    page_range: PageRange | None = None
    """Parse only these pages of a paged format (PDF); None: the whole file. A non-paged
    file is page 1."""
    extract_images: bool = False
    """Return the document's images (PDF, DOCX, MinerU) in ParsedDocument.images and link
    them from the Markdown; the pipeline asks only when the task has image_bucket/prefix."""


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """What CLEANING keeps: Markdown plus a little metadata."""

    markdown: str
    title: str | None = None
    page_count: int | None = None
    warnings: list[str] = field(default_factory=list)
    backend: str = ""
    """The engine that really produced the Markdown (e.g. ``naive``, ``opendataloader``,
    ``mineru``, ``naive+ocr``); recorded on the run, never silently substituted."""
    pages: tuple[str, ...] = ()
    """Per-page Markdown of a paged format, in page order from the range's first page; empty
    for a non-paged file (then ``markdown`` is page 1)."""
    images: dict[str, bytes] = field(default_factory=dict)
    """With ``extract_images``: link target in the Markdown (``images/<name>``) -> bytes."""


class ParseError(Exception):
    """Base of parser failures; ``reason`` is short and safe to put in failure_reason;
    ``failure_code`` is the one code each kind of failure maps to, wherever it is caught."""

    failure_code: ClassVar[FailureCode] = FailureCode.PARSE_ENGINE_FAILED

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __reduce__(self) -> tuple[type[ParseError], tuple[str]]:
        return (type(self), (self.reason,))


class NoTextLayer(ParseError):
    """Maps to NO_TEXT_LAYER: the basic tier found no text at all (a scan); OCR is the
    quality tier's job, so retrying at the basic tier cannot help."""

    failure_code = FailureCode.NO_TEXT_LAYER


class UnsupportedFileType(ParseError):
    """Maps to UNSUPPORTED_FILE_TYPE: no parser for this type, or the bytes are not that type."""

    failure_code = FailureCode.UNSUPPORTED_FILE_TYPE


class InvalidFileContent(ParseError):
    """Maps to FILE_CONTENT_INVALID (not recoverable): the bytes are not a valid file of the
    type they claim (wrong magic bytes, corrupt container, truncated, encrypted, zip bomb).
    The same bytes fail the same way on every retry, so a retry loop must not be invited."""

    failure_code = FailureCode.FILE_CONTENT_INVALID


class ParseEngineFailed(ParseError):
    """Maps to PARSE_ENGINE_FAILED (recoverable): the engine failed on a file that may be fine
    (timed out, out of memory, crashed, output over a limit, engine missing)."""

    failure_code = FailureCode.PARSE_ENGINE_FAILED


class Parser(Protocol):
    def parse(self, source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
        """Parse ``source`` as ``file_type`` (lower-case extension without dot).

        Raises UnsupportedFileType, InvalidFileContent, NoTextLayer or ParseEngineFailed;
        nothing else escapes.
        """
        ...


class MarkdownSink(Protocol):
    """Where a streaming parse writes its Markdown, piece by piece, in order (a text file,
    a `io.StringIO`): a 100 MB text file need never be one str (issue 24)."""

    def write(self, piece: str, /) -> object: ...


StreamingParse = Callable[[Path, str, ParseOptions, MarkdownSink], ParsedDocument]
"""A format parser of the streaming shape: the Markdown goes to the sink, the document it
returns carries everything else (its `markdown` is empty)."""


def collected(
    parse: StreamingParse, source: Path, file_type: str, options: ParseOptions
) -> ParsedDocument:
    """The old shape of a streaming parse: its pieces joined into `markdown`."""
    sink = io.StringIO()
    document = parse(source, file_type, options, sink)
    return dataclasses.replace(document, markdown=sink.getvalue())


@dataclass(frozen=True, slots=True)
class ParsedText:
    """A parse whose text is in a file, not in memory (issue 24): UTF-8 (lone surrogates of
    a bad decode kept, `surrogatepass`), the Markdown's bytes first, then each page's.
    `document` carries everything else (its `markdown` and `pages` are empty)."""

    document: ParsedDocument
    path: Path
    sizes: tuple[int, ...]
    """Byte length of the Markdown, then of each page, in the file's order."""


@runtime_checkable
class ParsesToFile(Protocol):
    """A Parser that can write its text to a file instead of returning it (the sandbox: its
    worker writes the file, the parent never holds the text)."""

    def parse_to_file(
        self, source: Path, file_type: str, options: ParseOptions, target: Path
    ) -> ParsedText:
        """Like `Parser.parse`, the text written to `target` (which must not exist)."""
        ...
