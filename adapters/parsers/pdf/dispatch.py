"""Choose the PDF backend for one parse: mineru (remote), opendataloader, naive, auto."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ragline.adapters.parsers.pdf.naive import parse_pdf_naive
from ragline.adapters.parsers.pdf.opendataloader import jar_path, parse_pdf_opendataloader
from ragline.adapters.parsers.pdf.text_layer import open_pdf
from ragline.application.ports.parser import (
    ParsedDocument,
    ParseEngineFailed,
    ParseOptions,
    PdfParserBackend,
)


def resolve_backend(requested: PdfParserBackend) -> PdfParserBackend:
    if requested is PdfParserBackend.AUTO:
        return PdfParserBackend.OPENDATALOADER if jar_path() else PdfParserBackend.NAIVE
    return requested


def parse_pdf(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    warnings: list[str] = []
    if options.docling_force_ocr:
        warnings.append("docling_force_ocr ignored: no OCR engine is configured")
    backend = resolve_backend(PdfParserBackend(options.pdf_parser_backend))
    if backend is PdfParserBackend.MINERU:
        raise ParseEngineFailed(
            "mineru backend: no MinerU service client is configured"
            if options.mineru_url
            else "mineru backend not configured (no mineru_url)"
        )
    limits = options.limits
    if backend is PdfParserBackend.NAIVE:
        parsed = parse_pdf_naive(source, limits.max_output_chars)
    else:
        document = open_pdf(source)  # same encrypted/corrupt verdicts as naive, before the JVM
        try:
            page_count = len(document)
        finally:
            document.close()
        with tempfile.TemporaryDirectory(prefix="ragline-odl-") as temp_dir:
            parsed = parse_pdf_opendataloader(source, limits, Path(temp_dir))
        parsed = ParsedDocument(
            markdown=parsed.markdown, title=parsed.title, page_count=page_count,
            warnings=parsed.warnings,
        )  # fmt: skip
    parsed.warnings[:0] = [*warnings, f"pdf backend: {backend.value}"]
    return parsed
