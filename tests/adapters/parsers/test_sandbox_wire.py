"""The sandbox speaks JSON: every field crosses, and nothing else (no pickle) is accepted."""

from __future__ import annotations

import dataclasses
import pickle  # nosec B403: builds the hostile payload the codec must refuse
from pathlib import Path

import pytest

from ragline.adapters.parser.builtin.sandbox_wire import (
    DOCUMENT_CODECS,
    OPTION_CODECS,
    TEXT_FIELDS,
    decode_reply,
    decode_request,
    encode_document,
    encode_error,
    encode_request,
    write_text,
)
from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParsedDocument,
    ParseEngineFailed,
    ParseLimits,
    ParseOptions,
    PdfParserBackend,
    UnsupportedFileType,
)
from ragline.domain.parse_batch import PageRange, ParseTier


def test_every_field_has_a_codec() -> None:
    """A field added to the port without a codec here would be silently dropped."""
    assert set(OPTION_CODECS) == {f.name for f in dataclasses.fields(ParseOptions)}
    assert not set(DOCUMENT_CODECS) & set(TEXT_FIELDS)
    assert set(DOCUMENT_CODECS) | set(TEXT_FIELDS) == {
        f.name for f in dataclasses.fields(ParsedDocument)
    }


def test_options_round_trip_with_every_field_set() -> None:
    options = ParseOptions(
        pdf_parser_backend=PdfParserBackend.NAIVE,
        docling_force_ocr=True,
        mineru_url="http://example/x.pdf",
        limits=ParseLimits(
            max_seconds=7, max_memory_bytes=128 * 1024**2, max_output_chars=9, max_line_chars=11
        ),
        tier=ParseTier.QUALITY,
        page_range=PageRange(3, 5),
        extract_images=True,
    )
    request = encode_request(Path("/x/a.pdf"), "pdf", options, Path("/t/1.txt"))
    assert decode_request(request) == (Path("/x/a.pdf"), "pdf", options, Path("/t/1.txt"))


def test_document_round_trips_with_every_field_set(tmp_path: Path) -> None:
    document = ParsedDocument(
        markdown="# T\n\ud800 lone surrogate kept, 标题 \U0001f375",
        title="T",
        page_count=2,
        warnings=["w"],
        backend="naive",
        pages=("p1 \U0001f375", "", "p3"),
        images={"images/p1-1.png": b"\x89PNG\r\n\x1a\n\x00\xff"},
    )
    text_file = tmp_path / "text"
    reply = encode_document(document, write_text(text_file, document))
    assert decode_reply(reply, text_file) == document


def test_the_reply_carries_where_the_text_is_not_the_text(tmp_path: Path) -> None:
    """Issue 24: a document's text as a JSON string in the reply was held four times over
    on its way; the reply's size must not grow with the document."""
    text_file = tmp_path / "text"
    page = "Steep green tea at 80 degrees. 标题\n" * 2_000
    document = ParsedDocument(markdown=page * 2, pages=(page, page), title="Tea")
    reply = encode_document(document, write_text(text_file, document))
    assert len(reply) < 300
    assert b"Steep green tea" not in reply
    assert text_file.stat().st_size > 4 * len(page)


def test_sizes_that_do_not_describe_the_text_file_are_a_malformed_reply(tmp_path: Path) -> None:
    text_file = tmp_path / "text"
    document = ParsedDocument(markdown="tea", pages=("a", "b"))
    sizes = write_text(text_file, document)
    for wrong in ([sizes[0] + 1, *sizes[1:]], [], [-1, 5], ["3", 1, 1]):
        with pytest.raises(ParseEngineFailed, match="malformed reply"):
            decode_reply(encode_document(document, wrong), text_file)
    with pytest.raises(ParseEngineFailed, match="malformed reply"):
        decode_reply(encode_document(document, sizes), tmp_path / "missing")


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("no_text", NoTextLayer),
        ("unsupported", UnsupportedFileType),
        ("invalid", InvalidFileContent),
        ("engine", ParseEngineFailed),
    ],
)
def test_errors_keep_their_type(kind: str, error: type[Exception]) -> None:
    with pytest.raises(error, match="why"):
        decode_reply(encode_error(kind, "why"), Path("/nonexistent"))


class _Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("unpickled!",))


def test_a_pickle_reply_is_refused_not_unpickled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(ParseEngineFailed, match="malformed reply"):
        decode_reply(pickle.dumps(_Boom()), tmp_path / "text")
    assert "unpickled!" not in capsys.readouterr().out
    with pytest.raises(ParseEngineFailed, match="malformed reply"):
        decode_reply(b'{"kind": "ok", "document": {"markdown": "x"}}', tmp_path / "text")
