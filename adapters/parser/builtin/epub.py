"""epub -> Markdown with ebooklib: chapters in spine order, headings from the chapter HTML.

Each spine document goes through the HTML parser's tree walk, so its h1–h6 are the section
headings, exactly as for an .html file. A chapter with no heading of its own gets its table-of-
contents title as a `#` heading, so its text does not fall under the previous chapter. The
navigation document is skipped (it repeats the titles). ebooklib parses the package XML with
entity resolution off; the zip guard runs before it opens the archive.
"""

from __future__ import annotations

import posixpath
import warnings as python_warnings
import zipfile
from pathlib import Path
from typing import Any

from ebooklib import ITEM_DOCUMENT, epub
from selectolax.lexbor import LexborHTMLParser

from ragline.adapters.parser.builtin.html import MAX_NESTING, html_to_markdown, nesting_depth
from ragline.adapters.parser.builtin.output_budget import OutputBudget
from ragline.adapters.parser.builtin.zip_guard import ZipBudget, check_zip
from ragline.application.ports.parser import ParsedDocument, ParseEngineFailed, ParseOptions

MAX_CHAPTERS = 10_000
MAX_TOC_ENTRIES = 100_000


def parse_epub(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    limits = options.limits
    check_zip(source, ZipBudget(min(512 * 1024**2, limits.max_memory_bytes // 4)), file_type)
    try:
        with python_warnings.catch_warnings():
            python_warnings.simplefilter("ignore")
            book = epub.read_epub(str(source), {"ignore_ncx": False})
    except (epub.EpubException, zipfile.BadZipFile, KeyError, IndexError) as exc:
        raise ParseEngineFailed(f"not a valid {file_type} book ({exc})"[:300]) from None
    spine = [entry[0] if isinstance(entry, tuple) else entry for entry in book.spine]
    if len(spine) > MAX_CHAPTERS:
        raise ParseEngineFailed(f"book has {len(spine)} spine items (limit {MAX_CHAPTERS})")
    titles = _toc_titles(book.toc)
    budget = OutputBudget(limits.max_output_chars)
    out: list[str] = []
    warnings: list[str] = []
    for idref in spine:
        item = book.get_item_with_id(idref)
        if item is None:
            warnings.append(f"spine item {idref!r} is not in the manifest")
            continue
        if isinstance(item, epub.EpubNav) or item.get_type() != ITEM_DOCUMENT:
            continue
        # The raw bytes from the archive: EpubHtml.get_content() re-renders the chapter
        # through lxml, which silently truncates deep trees and rewrites the markup.
        raw = getattr(item, "content", None)
        data = raw if isinstance(raw, bytes) else item.get_content()
        if nesting_depth(data, MAX_NESTING) > MAX_NESTING:
            raise ParseEngineFailed(
                f"chapter {item.get_name()!r}: HTML nesting deeper than {MAX_NESTING} elements"
            )
        text = data.decode("utf-8", errors="replace")
        markdown, first_heading = html_to_markdown(LexborHTMLParser(text))
        if not markdown.strip():
            continue
        if first_heading is None or not markdown.startswith("#"):
            title = titles.get(item.get_name())
            if title:
                markdown = f"# {title}\n\n{markdown}"
        budget.spend(len(markdown) + 1, file_type)
        out.append(markdown)
    metadata = book.get_metadata("DC", "title")
    title = str(metadata[0][0]).strip() if metadata and metadata[0] else ""
    markdown = "\n".join(out)
    if not markdown.strip():
        warnings.append("empty document")
    return ParsedDocument(markdown=markdown, title=title or None, warnings=warnings)


def _entries(value: Any) -> list[Any]:
    """ebooklib gives a list of entries, or (for a one-entry NCX) the bare entry."""
    return list(value) if isinstance(value, list) else [value]


def _toc_titles(toc: Any) -> dict[str, str]:
    """href (without fragment) -> the first table-of-contents title pointing at it."""
    titles: dict[str, str] = {}
    stack: list[Any] = list(reversed(_entries(toc)))
    seen = 0
    while stack and seen < MAX_TOC_ENTRIES:
        entry = stack.pop()
        seen += 1
        if isinstance(entry, tuple) and len(entry) == 2:
            section, children = entry
            stack.extend(reversed(_entries(children)))
            entry = section
        href = getattr(entry, "href", None)
        title = " ".join(str(getattr(entry, "title", "") or "").split())
        if href and title:
            titles.setdefault(posixpath.normpath(str(href).split("#", 1)[0]), title)
    return titles
