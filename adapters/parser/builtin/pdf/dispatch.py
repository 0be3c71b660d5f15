"""Choose the PDF engine for one parse from the backend and the tier; never substitute.

| backend | tier | engine (ParsedDocument.backend) |
|---|---|---|
| naive | (basic) | pdfium text layer (`naive`); no text at all -> NoTextLayer |
| opendataloader | (quality, no OCR) | the Java CLI (`opendataloader`); without Java it fails |
| auto | basic | as naive |
| auto | quality | opendataloader when every page has text and Java exists, else the
  naive layout plus OCR of each page without a usable text layer (`naive+tesseract`) |
| mineru | — | not here: the MinerU client (adapters/parser/mineru) parses it; the pipeline routes |
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from ragline.adapters.parser.builtin.pdf.images import with_images
from ragline.adapters.parser.builtin.pdf.naive import pages_of, parse_pdf_naive
from ragline.adapters.parser.builtin.pdf.opendataloader import parse_pdf_opendataloader
from ragline.adapters.parser.builtin.pdf.quality import parse_pdf_quality
from ragline.adapters.parser.builtin.pdf.text_layer import open_pdf
from ragline.application.ports.ocr import PageOcr
from ragline.application.ports.parser import (
    ParsedDocument,
    ParseEngineFailed,
    ParseOptions,
    PdfParserBackend,
)
from ragline.domain.parse_batch import ParseTier


def parse_pdf(
    source: Path, file_type: str, options: ParseOptions, ocr: PageOcr | None = None
) -> ParsedDocument:
    backend = PdfParserBackend(options.pdf_parser_backend)
    if backend is PdfParserBackend.MINERU:
        raise ParseEngineFailed(
            "mineru backend: the MinerU client parses these, not the local parsers"
        )
    limits = options.limits
    if backend is PdfParserBackend.NAIVE or (
        backend is PdfParserBackend.AUTO and options.tier is ParseTier.BASIC
    ):
        parsed = parse_pdf_naive(source, limits.max_output_chars, options.page_range)
        if options.docling_force_ocr:
            parsed.warnings.append("docling_force_ocr ignored: the basic tier never OCRs")
    elif backend is PdfParserBackend.OPENDATALOADER:
        parsed = _opendataloader(source, options)
    else:
        parsed = parse_pdf_quality(source, options, ocr)
    parsed.warnings.insert(0, f"pdf backend: {parsed.backend}")
    if options.extract_images and parsed.pages:
        parsed = _images(source, parsed, options)
    return parsed


def _images(source: Path, parsed: ParsedDocument, options: ParseOptions) -> ParsedDocument:
    """Link each page's images at the end of that page; `markdown` stays the joined pages."""
    first = options.page_range.first if options.page_range else 1
    indices = range(first - 1, first - 1 + len(parsed.pages))
    document = open_pdf(source)
    try:
        linked, images = with_images(
            document, dict(zip(indices, parsed.pages, strict=True)), indices
        )
    finally:
        document.close()
    if not images:
        return parsed
    pages = tuple(linked.get(index, "") for index in indices)
    return dataclasses.replace(
        parsed,
        markdown="\n".join(page for page in pages if page),
        pages=pages,
        images=images,
        warnings=[*parsed.warnings, f"images: {len(images)}"],
    )


def _opendataloader(source: Path, options: ParseOptions) -> ParsedDocument:
    document = open_pdf(source)  # same encrypted/corrupt verdicts as naive, before the JVM
    try:
        page_count = len(document)
    finally:
        document.close()
    pages, warnings = pages_of(options.page_range, page_count)
    with tempfile.TemporaryDirectory(prefix="ragline-odl-") as temp_dir:
        parsed = parse_pdf_opendataloader(source, options.limits, Path(temp_dir), pages)
    return ParsedDocument(
        markdown=parsed.markdown, title=parsed.title, page_count=page_count,
        warnings=[*warnings, *parsed.warnings], backend=parsed.backend, pages=parsed.pages,
    )  # fmt: skip
