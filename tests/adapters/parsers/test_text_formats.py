"""md passthrough validation and txt decoding/escaping."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.adapters.parser.builtin.plaintext import escape_block_markers
from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.application.ports.parser import (
    InvalidFileContent,
    UnsupportedFileType,
)
from tests.adapters.parsers.conftest import NAIVE, block_tokens


def test_markdown_is_passed_through_unchanged(registry: ParserRegistry, tmp_path: Path) -> None:
    text = "# Tea\n\nSome *text* with `code`.\n\n| a | b |\n| - | - |\n| 1 | 2 |\n"
    source = tmp_path / "doc.md"
    source.write_text(text, encoding="utf-8")
    parsed = registry.parse(source, "md", NAIVE)
    assert parsed.markdown == text
    assert parsed.title == "Tea"
    assert parsed.warnings == []


def test_markdown_bom_is_allowed(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "bom.markdown"
    source.write_bytes("\ufeff# 茶道\n\n正文。\n".encode())
    parsed = registry.parse(source, "markdown", NAIVE)
    assert parsed.markdown == "# 茶道\n\n正文。\n"
    assert parsed.title == "茶道"


def test_markdown_must_be_utf8(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "legacy.md"
    source.write_bytes("# 标题\n\n正文\n".encode("gb18030"))
    with pytest.raises(InvalidFileContent, match=r"invalid UTF-8 in \.md file at byte 2"):
        registry.parse(source, "md", NAIVE)


@pytest.mark.parametrize(
    "payload",
    [b"\x00\x01\x02binary" * 10, bytes(range(1, 32)) * 40 + b"text"],
    ids=["nul-bytes", "control-bytes"],
)
def test_binary_renamed_to_md_is_not_markdown(
    registry: ParserRegistry, tmp_path: Path, payload: bytes
) -> None:
    source = tmp_path / "image.md"
    source.write_bytes(payload)
    with pytest.raises(UnsupportedFileType, match="binary content"):
        registry.parse(source, "md", NAIVE)


def test_txt_falls_back_to_gb18030(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "old.txt"
    source.write_bytes("太极拳简介\r\n\r\n太极拳是中国传统武术。\r\n".encode("gb18030"))
    parsed = registry.parse(source, "txt", NAIVE)
    assert parsed.markdown == "太极拳简介\n\n太极拳是中国传统武术。\n"
    assert parsed.warnings == ["decoded as gb18030"]
    assert parsed.title == "太极拳简介"


def test_txt_utf16_with_bom(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "wide.txt"
    source.write_bytes("Notes\nline two\n".encode("utf-16"))
    assert registry.parse(source, "txt", NAIVE).markdown == "Notes\nline two\n"


def test_txt_undecodable_fails_clearly(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "bad.txt"
    source.write_bytes(b"ok \x81\x20\xff\xfe end")
    with pytest.raises(InvalidFileContent, match=r"not UTF-8 .* nor GB18030"):
        registry.parse(source, "txt", NAIVE)


def test_txt_block_markers_do_not_become_structure(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    text = "# not a heading\n- not a list\n1. not ordered\n> not a quote\n```\nnot code\n---\n"
    source = tmp_path / "plain.txt"
    source.write_text(text, encoding="utf-8")
    parsed = registry.parse(source, "txt", NAIVE)
    assert set(block_tokens(parsed.markdown)) == {"paragraph_open", "inline"}
    assert parsed.markdown.replace("\\", "") == text


_MARKERS = st.sampled_from("#>-*+=|<`~ 1.)[]:")
_LINE = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | _MARKERS, max_size=30)


@given(st.lists(_LINE, max_size=8))
def test_escaped_text_renders_as_paragraphs_only(lines: list[str]) -> None:
    text = "\n".join(line.lstrip() for line in lines)  # 4+ leading spaces: indented code
    tokens = set(block_tokens(escape_block_markers(text)))
    assert tokens <= {"paragraph_open", "inline"}
