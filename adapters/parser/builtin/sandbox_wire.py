"""The sandbox's data-only wire format: JSON both ways, never pickle.

A parser runs untrusted input; if it is subverted, whatever it sends back must stay data.
Unpickling a reply would run code in the parent, so requests and replies are JSON objects
with a fixed shape, rebuilt field by field. Every field of ParseOptions and ParsedDocument
has a codec here; a test fails when one of them gains a field this module does not carry.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
DOCUMENT_CODECS: dict[str, Codec] = {
    "markdown": (_same, str),
    "title": (_same, _same),
    "page_count": (_same, _same),
    "warnings": (list, lambda v: [str(w) for w in v]),
    "backend": (_same, str),
    "pages": (list, lambda v: tuple(str(p) for p in v)),
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


def encode_request(source: Path, file_type: str, options: ParseOptions) -> bytes:
    return _dump(
        {
            "kind": "parse",
            "source": str(source),
            "file_type": file_type,
            "options": {
                name: out(getattr(options, name)) for name, (out, _) in OPTION_CODECS.items()
            },
        }
    )


def decode_request(body: bytes) -> tuple[Path, str, ParseOptions]:
    data = json.loads(body)
    options = ParseOptions(
        **{name: back(data["options"][name]) for name, (_, back) in OPTION_CODECS.items()}
    )
    return Path(str(data["source"])), str(data["file_type"]), options


def encode_document(document: ParsedDocument) -> bytes:
    fields = {name: out(getattr(document, name)) for name, (out, _) in DOCUMENT_CODECS.items()}
    return _dump({"kind": "ok", "document": fields})


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


def decode_reply(body: bytes) -> ParsedDocument:
    """The parsed document, or the parse error the worker reported (raised)."""
    try:
        data = decode_message(body)
        kind = data["kind"]
        if kind == "ok":
            fields = data["document"]
            return ParsedDocument(
                **{name: back(fields[name]) for name, (_, back) in DOCUMENT_CODECS.items()}
            )
        error = ERROR_KINDS[kind]
        reason = str(data["reason"])[:300]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ParseEngineFailed(
            f"parser worker sent a malformed reply ({type(exc).__name__})"
        ) from None
    raise error(reason)
