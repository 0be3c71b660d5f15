"""A parser that turns plain text into Markdown, recording how it was called."""

from __future__ import annotations

from pathlib import Path

import attrs

from ragline.application.ports.parser import ParsedDocument, ParseOptions, PdfParserBackend
from tests.fakes.faults import Faults


@attrs.define
class ParseCall:
    source: Path
    file_type: str
    options: ParseOptions
    source_existed: bool


class FakeParser:
    """Markdown = a title plus the source text; MinerU (direct pull) returns `remote_markdown`."""

    def __init__(self, faults: Faults | None = None, remote_markdown: str | None = None) -> None:
        self.faults = faults or Faults()
        self.remote_markdown = remote_markdown or (
            "# Remote\n\nThe remote parser read this PDF from a presigned URL.\n"
        )
        self.calls: list[ParseCall] = []
        self.warnings: list[str] = []
        self.images: dict[str, bytes] = {}  # returned (with links) when options ask for them

    def parse(self, source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
        self.calls.append(ParseCall(source, file_type, options, source.exists()))
        self.faults.check("parser.parse")
        if options.pdf_parser_backend is PdfParserBackend.MINERU and file_type == "pdf":
            assert options.mineru_url is not None, "direct pull needs a URL"
            return ParsedDocument(self.remote_markdown, backend="fake-mineru")
        text = source.read_text(encoding="utf-8", errors="replace")
        if file_type in ("md", "markdown"):  # like the real Markdown parser: validate only
            return ParsedDocument(text, backend="fake-markdown")
        if file_type == "pdf" and PAGE_BREAK in text:  # a paged file: per-page Markdown
            every = [
                f"## Page {n}\n\n{body.strip()}\n"
                for n, body in enumerate(text.split(PAGE_BREAK), 1)
            ]
            wanted = options.page_range
            pages = every if wanted is None else every[wanted.first - 1 : wanted.last]
            return ParsedDocument(
                "\n".join(pages), page_count=len(every), pages=tuple(pages), backend="fake"
            )
        images = dict(self.images) if options.extract_images else {}
        links = "".join(f"\n![]({target})\n" for target in images)
        return ParsedDocument(
            f"# Document\n\n{text}\n{links}",
            warnings=list(self.warnings),
            backend="fake",
            images=images,
        )


PAGE_BREAK = "\f"


class FakePageCounter:
    """A "pdf" of the fakes is text whose pages are separated by form feeds."""

    def __init__(self) -> None:
        self.calls = 0

    def count(self, source: Path, file_type: str) -> int:
        self.calls += 1
        if file_type != "pdf":
            return 1
        return source.read_text(encoding="utf-8", errors="replace").count(PAGE_BREAK) + 1
