"""Parser test fixtures: a warm sandbox shared by the module tests, generated hostile files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import ParseOptions, PdfParserBackend
from ragline.testing.files.hostile import write_hostile_files

NAIVE = ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE)


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxedParser]:
    with SandboxedParser(max_workers=2, grace_seconds=1.0) as parser:
        yield parser


@pytest.fixture
def registry() -> ParserRegistry:
    return ParserRegistry()


@pytest.fixture(scope="session")
def hostile_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_hostile_files(tmp_path_factory.mktemp("hostile"))


def block_tokens(markdown: str) -> list[str]:
    """Block token types as a GFM-ish renderer sees them (tables enabled)."""
    parser = MarkdownIt("commonmark").enable("table")
    return [t.type for t in parser.parse(markdown) if t.nesting >= 0 and t.block]


def headings(markdown: str) -> list[tuple[int, str]]:
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(markdown)
    return [
        (int(tok.tag[1]), tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open"
    ]
