"""In-process dispatch by file type. Runs parsers in the calling process: use it directly only
for trusted input or inside the sandbox worker; the pipeline gets the SandboxedParser."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from ragline.adapters.ocr.tesseract import TesseractOcr
from ragline.adapters.parser.builtin.content_check import check_content
from ragline.adapters.parser.builtin.delimited import parse_delimited
from ragline.adapters.parser.builtin.docx import parse_docx
from ragline.adapters.parser.builtin.eml import EmailParser
from ragline.adapters.parser.builtin.epub import parse_epub
from ragline.adapters.parser.builtin.html import parse_html
from ragline.adapters.parser.builtin.image import parse_image
from ragline.adapters.parser.builtin.markdown import parse_markdown
from ragline.adapters.parser.builtin.pdf.dispatch import parse_pdf
from ragline.adapters.parser.builtin.plaintext import parse_text
from ragline.adapters.parser.builtin.pptx import parse_pptx
from ragline.adapters.parser.builtin.text_file import TextFile
from ragline.adapters.parser.builtin.text_stream import stream_markdown, stream_text
from ragline.adapters.parser.builtin.xlsx import parse_xlsx
from ragline.application.ports.ocr import PageOcr
from ragline.application.ports.parser import (
    IMAGE_FILE_TYPES,
    MarkdownSink,
    ParsedDocument,
    ParsedText,
    ParseEngineFailed,
    ParseError,
    ParseOptions,
    StreamingParse,
    UnsupportedFileType,
)

FormatParser = Callable[[Path, str, ParseOptions], ParsedDocument]

STREAMING_FORMATS: Mapping[str, StreamingParse] = {
    "md": stream_markdown,
    "markdown": stream_markdown,
    "txt": stream_text,
}
"""The text-like formats, parsed in pieces into a sink by `parse_into` (their entries in
DEFAULT_FORMATS are the same parsers in the old shape)."""


def _parse_attachment(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    """An email attachment, by its type, through the same registry (and so the same limits)."""
    return ParserRegistry().parse(source, file_type, options)


DEFAULT_FORMATS: Mapping[str, FormatParser] = {
    "md": parse_markdown,
    "markdown": parse_markdown,
    "txt": parse_text,
    "html": parse_html,
    "htm": parse_html,
    "docx": parse_docx,
    "pdf": parse_pdf,
    "pptx": parse_pptx,
    "xlsx": parse_xlsx,
    "csv": parse_delimited,
    "tsv": parse_delimited,
    "epub": parse_epub,
    "eml": EmailParser(_parse_attachment),
}


def with_ocr(ocr: PageOcr) -> dict[str, FormatParser]:
    """DEFAULT_FORMATS with the PDF parser's OCR and the image formats bound to `ocr`."""
    formats = dict(DEFAULT_FORMATS)
    formats["pdf"] = partial(parse_pdf, ocr=ocr)
    formats.update({kind: partial(parse_image, ocr=ocr) for kind in IMAGE_FILE_TYPES})
    return formats


def normalise_file_type(file_type: str) -> str:
    return file_type.strip().lower().lstrip(".")


class ParserRegistry:
    """The Parser port, in-process: one format parser per file type, output limit enforced."""

    def __init__(self, formats: Mapping[str, FormatParser] | None = None) -> None:
        """Without `formats`: every format, OCR by tesseract (chi_sim+eng)."""
        self._formats = dict(formats) if formats is not None else with_ocr(TesseractOcr())

    @property
    def file_types(self) -> frozenset[str]:
        return frozenset(self._formats)

    def parse(self, source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
        kind, parser = self._parser_of(file_type)
        parsed = self._guarded(source, kind, options, lambda: parser(source, kind, options))
        self._within_output(len(parsed.markdown), options)
        return self._with_backend(parsed, kind)

    def parse_into(
        self, source: Path, file_type: str, options: ParseOptions, sink: MarkdownSink
    ) -> ParsedDocument:
        """`parse`, the Markdown written to `sink` (the document returned: everything else,
        `markdown` empty). txt and md stream into it in pieces (never one str of the file);
        the other formats are parsed in the old shape and their Markdown written whole."""
        kind, parser = self._parser_of(file_type)
        streaming = STREAMING_FORMATS.get(kind) if parser is DEFAULT_FORMATS.get(kind) else None
        if streaming is None:
            parsed = self.parse(source, file_type, options)
            sink.write(parsed.markdown)
            return dataclasses.replace(parsed, markdown="")
        counted = _CountingSink(sink)
        parsed = self._guarded(
            source, kind, options, lambda: streaming(source, kind, options, counted)
        )
        self._within_output(counted.chars, options)
        return self._with_backend(parsed, kind)

    def parse_to_file(
        self, source: Path, file_type: str, options: ParseOptions, target: Path
    ) -> ParsedText:
        """`parse_into` a new file at `target`: the Markdown, then each page (ParsedText)."""
        out = TextFile(target)
        try:
            document = self.parse_into(source, file_type, options, out)
            out.end_part()
            for page in document.pages:
                out.write(page)
                out.end_part()
        finally:
            out.close()
        return ParsedText(dataclasses.replace(document, pages=()), target, tuple(out.sizes))

    def _parser_of(self, file_type: str) -> tuple[str, FormatParser]:
        kind = normalise_file_type(file_type)
        parser = self._formats.get(kind)
        if parser is None:
            shown = f".{kind}" if kind else "(no extension)"
            raise UnsupportedFileType(f"no parser for file type {shown}")
        return kind, parser

    @staticmethod
    def _guarded(
        source: Path, kind: str, options: ParseOptions, parse: Callable[[], ParsedDocument]
    ) -> ParsedDocument:
        """Run a format parser: whatever it raises becomes a ParseError."""
        try:
            check_content(source, kind)
            return parse()
        except ParseError:
            raise
        except MemoryError:
            raise ParseEngineFailed(
                f"out of memory (limit {options.limits.max_memory_bytes // 1024**2} MiB)"
            ) from None
        except RecursionError:
            raise ParseEngineFailed("document nesting too deep") from None
        except OSError as exc:
            raise ParseEngineFailed(f"cannot read source: {exc.strerror or exc}") from None
        except Exception as exc:  # its text may name the (temporary) source file: not shown
            text = str(exc).replace(str(source), source.name)
            raise ParseEngineFailed(
                f"{kind} parser error: {type(exc).__name__}: {text}"[:300]
            ) from None

    @staticmethod
    def _within_output(chars: int, options: ParseOptions) -> None:
        if chars > options.limits.max_output_chars:
            raise ParseEngineFailed(
                f"output of {chars} characters exceeds the limit "
                f"of {options.limits.max_output_chars}"
            )

    @staticmethod
    def _with_backend(parsed: ParsedDocument, kind: str) -> ParsedDocument:
        if not parsed.backend:  # a format parser without engines of its own: its format
            parsed = dataclasses.replace(parsed, backend=kind)
        return parsed


class _CountingSink:
    """Passes pieces on and counts their characters (the output limit)."""

    def __init__(self, sink: MarkdownSink) -> None:
        self._sink = sink
        self.chars = 0

    def write(self, piece: str) -> None:
        self.chars += len(piece)
        self._sink.write(piece)
