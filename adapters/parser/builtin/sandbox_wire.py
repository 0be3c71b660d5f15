"""The sandbox's data-only wire format: JSON both ways, never pickle.

A parser runs untrusted input; if it is subverted, whatever it sends back must stay data.
Unpickling a reply would run code in the parent, so requests and replies are JSON objects
with a fixed shape, rebuilt field by field. Every field of ParseOptions and ParsedDocument
has a codec here, or travels in the text file (TEXT_FIELDS); a test fails when one of them
gains a field this module does not carry.

The document's text does not travel in the reply (issue 24): a 100 MB Markdown as one JSON
string was held four times over (the worker's str, its JSON, the bytes sent, the parent's
JSON and str). The worker writes the Markdown and the pages, UTF-8, into the file the
request names (chosen by the parent, so a subverted parser cannot make it read another), and
the reply carries their byte lengths only; the parent reads each part once.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragline.adapters.parser.builtin.text_file import ENCODING, ERRORS, TextFile
from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParsedDocument,
    ParseEngineFailed,
    ParseError,
    ParseLimits,
    ParseOptions,
    PdfParserBackend,
    UnsupportedFileType,
)
from ragline.domain.parse_batch import PageRange, ParseTier

Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]


def _same(value: Any) -> Any:
    return value


def _limits_out(limits: ParseLimits) -> dict[str, Any]:
    return {f.name: getattr(limits, f.name) for f in dataclasses.fields(limits)}


def _limits_in(data: dict[str, Any]) -> ParseLimits:
    return ParseLimits(**{f.name: data[f.name] for f in dataclasses.fields(ParseLimits)})


def _range_out(page_range: PageRange | None) -> list[int] | None:
    return None if page_range is None else [page_range.first, page_range.last]


def _range_in(data: list[int] | None) -> PageRange | None:
    return None if data is None else PageRange(int(data[0]), int(data[1]))


OPTION_CODECS: dict[str, Codec] = {
    "pdf_parser_backend": (lambda v: v.value, PdfParserBackend),
    "docling_force_ocr": (_same, bool),
    "mineru_url": (_same, _same),
    "limits": (_limits_out, _limits_in),
    "tier": (lambda v: v.value, ParseTier),
    "page_range": (_range_out, _range_in),
    "extract_images": (_same, bool),
}
TEXT_FIELDS = ("markdown", "pages")
"""The document's text: written to the request's text file, never carried in the reply."""
DOCUMENT_CODECS: dict[str, Codec] = {
    "title": (_same, _same),
    "page_count": (_same, _same),
    "warnings": (list, lambda v: [str(w) for w in v]),
    "backend": (_same, str),
    "images": (
        lambda v: {str(k): base64.b64encode(b).decode("ascii") for k, b in v.items()},
        lambda v: {str(k): base64.b64decode(b, validate=True) for k, b in v.items()},
    ),
}
ERROR_KINDS: dict[str, type[ParseError]] = {
    "unsupported": UnsupportedFileType,
    "invalid": InvalidFileContent,
    "no_text": NoTextLayer,
    "engine": ParseEngineFailed,
}


def _dump(message: dict[str, Any]) -> bytes:
    # ensure_ascii keeps lone surrogates (a badly decoded file) representable
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def encode_request(source: Path, file_type: str, options: ParseOptions, text_file: Path) -> bytes:
    """`text_file`: where the worker writes the document's text (it must not exist)."""
    return _dump(
        {
            "kind": "parse",
            "source": str(source),
            "file_type": file_type,
            "options": {
                name: out(getattr(options, name)) for name, (out, _) in OPTION_CODECS.items()
            },
            "text_file": str(text_file),
        }
    )


def decode_request(body: bytes) -> tuple[Path, str, ParseOptions, Path]:
    data = json.loads(body)
    options = ParseOptions(
        **{name: back(data["options"][name]) for name, (_, back) in OPTION_CODECS.items()}
    )
    source, text_file = Path(str(data["source"])), Path(str(data["text_file"]))
    return source, str(data["file_type"]), options, text_file


def write_text(text_file: Path, document: ParsedDocument) -> list[int]:
    """The Markdown, then each page, into a new file; the byte length of each part."""
    out = TextFile(text_file)
    try:
        for part in (document.markdown, *document.pages):
            out.write(part)
            out.end_part()
    finally:
        out.close()
    return out.sizes


def encode_document(document: ParsedDocument, text_sizes: Sequence[int]) -> bytes:
    """The reply for a document whose text `write_text` wrote (`text_sizes`: its result)."""
    fields = {name: out(getattr(document, name)) for name, (out, _) in DOCUMENT_CODECS.items()}
    return _dump({"kind": "ok", "document": fields, "text_sizes": list(text_sizes)})


def checked_sizes(text_file: Path, sizes: object) -> tuple[int, ...]:
    """The parts' byte lengths; ValueError when they do not describe the file."""
    if not isinstance(sizes, list) or not sizes or any(type(s) is not int or s < 0 for s in sizes):
        raise ValueError("text sizes are not byte counts")
    if text_file.stat().st_size != sum(sizes):
        raise ValueError("text sizes do not add up to the text file")
    return tuple(sizes)


def read_text(text_file: Path, sizes: Sequence[int]) -> list[str]:
    """The parts `write_text` wrote; ValueError when the sizes do not describe the file."""
    if not sizes or any(type(s) is not int or s < 0 for s in sizes):
        raise ValueError("text sizes are not byte counts")
    with text_file.open("rb") as stream:
        if os.fstat(stream.fileno()).st_size != sum(sizes):
            raise ValueError("text sizes do not add up to the text file")
        return [stream.read(size).decode(ENCODING, ERRORS) for size in sizes]


def encode_error(kind: str, reason: str) -> bytes:
    if kind not in ERROR_KINDS:
        raise ValueError(f"unknown error kind {kind!r}")
    return _dump({"kind": kind, "reason": reason})


def encode_control(kind: str, **fields: Any) -> bytes:
    """Messages that are not parse replies (the worker's start-up handshake)."""
    return _dump({"kind": kind, **fields})


def decode_message(body: bytes) -> dict[str, Any]:
    data = json.loads(body)
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ValueError("sandbox message is not an object with a kind")
    return data


def decode_reply(body: bytes, text_file: Path) -> ParsedDocument:
    """The parsed document (its text read from `text_file`, the one the request named), or
    the parse error the worker reported (raised)."""
    document, sizes = decode_reply_sizes(body, text_file)
    try:
        markdown, *pages = read_text(text_file, sizes)
    except (ValueError, OSError) as exc:
        raise ParseEngineFailed(
            f"parser worker sent a malformed reply ({type(exc).__name__})"
        ) from None
    return dataclasses.replace(document, markdown=markdown, pages=tuple(pages))


def decode_reply_sizes(body: bytes, text_file: Path) -> tuple[ParsedDocument, tuple[int, ...]]:
    """The document without its text (`markdown` and `pages` empty) and the byte length of
    each part of `text_file` (checked against the file), or the parse error the worker
    reported (raised)."""
    try:
        data = decode_message(body)
        kind = data["kind"]
        if kind == "ok":
            fields = data["document"]
            kept = {name: back(fields[name]) for name, (_, back) in DOCUMENT_CODECS.items()}
            sizes = checked_sizes(text_file, data["text_sizes"])
            return ParsedDocument(markdown="", **kept), sizes
        error = ERROR_KINDS[kind]
        reason = str(data["reason"])[:300]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, OSError) as exc:
        raise ParseEngineFailed(
            f"parser worker sent a malformed reply ({type(exc).__name__})"
        ) from None
    raise error(reason)
