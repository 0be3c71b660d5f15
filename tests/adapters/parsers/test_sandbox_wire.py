"""The sandbox speaks JSON: every field crosses, and nothing else (no pickle) is accepted."""

from __future__ import annotations

import dataclasses
import pickle  # nosec B403: builds the hostile payload the codec must refuse
from pathlib import Path

import pytest

from ragline.adapters.parser.builtin.sandbox_wire import (
    DOCUMENT_CODECS,
    OPTION_CODECS,
    decode_reply,
    decode_request,
    encode_document,
    encode_error,
    encode_request,
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
    assert set(DOCUMENT_CODECS) == {f.name for f in dataclasses.fields(ParsedDocument)}


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
    assert decode_request(encode_request(Path("/x/a.pdf"), "pdf", options)) == (
        Path("/x/a.pdf"),
        "pdf",
        options,
    )


def test_document_round_trips_with_every_field_set() -> None:
    document = ParsedDocument(
        markdown="# T\n\ud800 lone surrogate kept",
        title="T",
        page_count=2,
        warnings=["w"],
        backend="naive",
        pages=("p1", "p2"),
        images={"images/p1-1.png": b"\x89PNG\r\n\x1a\n\x00\xff"},
    )
    assert decode_reply(encode_document(document)) == document


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
        decode_reply(encode_error(kind, "why"))


class _Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("unpickled!",))


def test_a_pickle_reply_is_refused_not_unpickled(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ParseEngineFailed, match="malformed reply"):
        decode_reply(pickle.dumps(_Boom()))
    assert "unpickled!" not in capsys.readouterr().out
    with pytest.raises(ParseEngineFailed, match="malformed reply"):
        decode_reply(b'{"kind": "ok", "document": {"markdown": "x"}}')
