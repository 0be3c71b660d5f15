"""txt and md parsed in pieces (issue 24) say exactly what the whole-file rules say."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.text_decoding import decode_text, normalise_newlines
from ragline.adapters.parser.builtin.text_stream import stream_markdown, stream_text
from ragline.application.ports.parser import InvalidFileContent, ParseLimits, ParseOptions

OPTIONS = ParseOptions()
# what makes the rules interesting: line starts, CR/LF pairs, markers, wide characters
TEXT = st.text(alphabet=st.sampled_from(list("ab #>-*=|<_[`~1.) \t\r\n茶😀\x00")), max_size=400)
H1 = re.compile(r"^ {0,3}# +(.+?)(?: +#+)? *$", re.MULTILINE)


def _whole_txt(data: bytes) -> tuple[str, str | None]:
    """The whole-file txt parse (before issue 24): one str of the file."""
    text, _codec = decode_text(data, "txt")
    text = normalise_newlines(text).replace("\x00", "")
    head = text.lstrip()[:200].split("\n", 1)
    title = head[0].strip() if len(head) == 2 and len(head[0]) <= 120 else None
    return escape_block_markers(text), title


@settings(max_examples=300, deadline=None)
@given(text=TEXT, block=st.integers(1, 9), bom=st.booleans())
def test_txt_in_pieces_is_the_whole_file_parse(
    tmp_path_factory: pytest.TempPathFactory, text: str, block: int, bom: bool
) -> None:
    data = ("\ufeff" if bom else "").encode() + text.replace("\x00", "").encode("utf-8")
    source = tmp_path_factory.mktemp("t") / "doc.txt"
    source.write_bytes(data)
    sink = io.StringIO()
    document = stream_text(source, "txt", OPTIONS, sink, block=block)
    markdown, title = _whole_txt(data)
    assert sink.getvalue() == markdown
    assert document.title == title
    assert ("empty document" in document.warnings) == (not markdown.strip())


@settings(max_examples=200, deadline=None)
@given(text=TEXT, block=st.integers(1, 9))
def test_utf16_and_gb18030_txt_in_pieces_is_the_whole_file_parse(
    tmp_path_factory: pytest.TempPathFactory, text: str, block: int
) -> None:
    folder = tmp_path_factory.mktemp("t")
    for codec, data in (
        ("utf-16", text.encode("utf-16")),
        ("gb18030", "茶".encode("gb18030") + text.replace("\x00", "").encode("gb18030")),
    ):
        source = folder / f"{codec}.txt"
        source.write_bytes(data)
        sink = io.StringIO()
        document = stream_text(source, "txt", OPTIONS, sink, block=block)
        assert sink.getvalue() == _whole_txt(data)[0]
        assert f"decoded as {codec}" in document.warnings


@settings(max_examples=200, deadline=None)
@given(text=TEXT, block=st.integers(1, 9))
def test_md_in_pieces_is_the_source(
    tmp_path_factory: pytest.TempPathFactory, text: str, block: int
) -> None:
    text = text.replace("\x00", "")
    source = tmp_path_factory.mktemp("t") / "doc.md"
    source.write_bytes(text.encode("utf-8"))
    sink = io.StringIO()
    document = stream_markdown(source, "md", OPTIONS, sink, block=block)
    assert sink.getvalue() == text
    match = H1.search(text, 0, 1_000_000)
    assert document.title == (match.group(1).strip() if match else None)


@pytest.mark.parametrize("block", [1, 2, 3, 5, 1 << 20])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_the_bad_byte_offset_is_the_whole_file_one(tmp_path: Path, block: int, bom: bytes) -> None:
    data = bom + "# 标题\n\n正文".encode() + b"\xff" + b"tail"
    source = tmp_path / "bad.md"
    source.write_bytes(data)
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        expected = exc.start
    with pytest.raises(InvalidFileContent, match=rf"at byte {expected}$"):
        stream_markdown(source, "md", OPTIONS, io.StringIO(), block=block)


def test_a_long_line_fails_before_it_is_carried_whole(tmp_path: Path) -> None:
    source = tmp_path / "line.txt"
    source.write_text("short\n" + "x" * 5_000, encoding="utf-8")
    options = ParseOptions(limits=ParseLimits(max_line_chars=1_000))
    with pytest.raises(Exception, match="line longer than 1000"):
        stream_text(source, "txt", options, io.StringIO(), block=64)
