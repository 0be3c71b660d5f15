"""Bytes <-> wire models. Decoding a task never raises: a consumer must survive any body.

A body that is not a valid ParseTask becomes a `RejectedMessage`. When a task_id can still
be read, the pipeline answers FAILED INVALID_TASK_CONTEXT for it; otherwise the message is
dead-lettered with the reason.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError

from ragline.contracts.wire.parse_result import ParseResult
from ragline.contracts.wire.parse_task import ParseTask, TaskId

DEFAULT_MAX_TASK_BYTES: Final = 1_048_576
"""A real task is well under 4 KiB; anything near this is a producer bug or an attack."""

REASON_MAX_CHARS: Final = 400
_SCAN_PREFIX_BYTES: Final = 65_536
_TASK_ID: Final = TypeAdapter[str](TaskId)
_TASK_ID_PATTERN: Final = re.compile(rb'"task_id"\s*:\s*"([^"\\\x00-\x1f]{1,256})"')
MAX_NESTING: Final = 64
"""A ParseTask is one flat object. Deeper bodies are refused before `json.loads`, whose
RecursionError would otherwise depend on how deep the caller's own stack already is: the same
body must get the same answer in the consumer and anywhere else it is decoded."""
_JSON_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


class RejectionKind(StrEnum):
    OVERSIZE = "oversize"
    INVALID_UTF8 = "invalid_utf8"
    INVALID_JSON = "invalid_json"
    NOT_AN_OBJECT = "not_an_object"
    INVALID_FIELDS = "invalid_fields"


@dataclass(frozen=True, slots=True)
class RejectedMessage:
    """A task body that cannot be processed. `reason` is `<kind>: <detail>`, short, loggable."""

    task_id: str | None
    reason: str

    @property
    def kind(self) -> RejectionKind:
        return RejectionKind(self.reason.split(":", 1)[0])


def decode_parse_task(
    body: bytes, *, max_bytes: int = DEFAULT_MAX_TASK_BYTES
) -> ParseTask | RejectedMessage:
    """Parse a task body; any failure becomes a RejectedMessage, never an exception."""
    try:
        return _decode(body, max_bytes)
    except Exception as error:  # a decoder bug must not take the consumer down either
        return RejectedMessage(task_id=None, reason=f"invalid_json: {error!r}"[:REASON_MAX_CHARS])


def encode_parse_task(task: ParseTask) -> bytes:
    """UTF-8 JSON (non-ASCII kept as is); defaults written out explicitly."""
    return task.model_dump_json().encode("utf-8")


def encode_parse_result(result: ParseResult) -> bytes:
    """UTF-8 JSON; optional fields present as null when absent."""
    return result.model_dump_json().encode("utf-8")


def decode_parse_result(body: bytes) -> ParseResult:
    """Strict parse of a result body (raises pydantic.ValidationError); for result readers."""
    return ParseResult.model_validate_json(body)


def _decode(body: bytes, max_bytes: int) -> ParseTask | RejectedMessage:
    if len(body) > max_bytes:
        detail = f"{len(body)} bytes > limit {max_bytes}"
        return _reject(_scan_task_id(body), RejectionKind.OVERSIZE, detail)
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        detail = f"byte {error.start}: {error.reason}"
        return _reject(_loose_task_id(body), RejectionKind.INVALID_UTF8, detail)
    if nested_too_deep(text):
        detail = f"nested deeper than {MAX_NESTING} levels"
        return _reject(_scan_task_id(body), RejectionKind.INVALID_JSON, detail)
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        return _reject(_scan_task_id(body), RejectionKind.INVALID_JSON, str(error))
    if not isinstance(document, dict):
        return _reject(None, RejectionKind.NOT_AN_OBJECT, type(document).__name__)
    try:
        return ParseTask.model_validate(document)
    except ValidationError as error:
        return _reject(_task_id_of(document), RejectionKind.INVALID_FIELDS, _summary(error))


def nested_too_deep(text: str) -> bool:
    """Whether arrays/objects nest deeper than MAX_NESTING (brackets inside strings ignored)."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return False
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    depth = itertools.accumulate(_BRACKET_STEP[bracket] for bracket in brackets)
    return max(depth, default=0) > MAX_NESTING


def _reject(task_id: str | None, kind: RejectionKind, detail: str) -> RejectedMessage:
    reason = f"{kind.value}: {detail}"
    if len(reason) > REASON_MAX_CHARS:
        reason = reason[: REASON_MAX_CHARS - 1] + "…"
    return RejectedMessage(task_id=task_id, reason=reason)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _task_id_of(document: dict[str, Any]) -> str | None:
    return _valid_task_id(document.get("task_id"))


def _valid_task_id(value: object) -> str | None:
    """The same rule the model applies: an id we would not accept is not reported either."""
    try:
        return _TASK_ID.validate_python(value)
    except ValidationError:
        return None


def _scan_task_id(body: bytes) -> str | None:
    """Best effort on a body we will not parse: first `"task_id": "<plain string>"`."""
    match = _TASK_ID_PATTERN.search(body[:_SCAN_PREFIX_BYTES])
    if match is None:
        return None
    try:
        value = match.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return _valid_task_id(value)


def _loose_task_id(body: bytes) -> str | None:
    """Invalid UTF-8 elsewhere in the body must not hide a readable task_id."""
    text = body.decode("utf-8", errors="replace")
    if nested_too_deep(text):
        return _scan_task_id(body)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return _scan_task_id(body)
    if isinstance(document, dict):
        task_id = _task_id_of(document)
        if task_id is not None and "\ufffd" not in task_id:
            return task_id
    return None


def _summary(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in item["loc"]) or "message"
        parts.append(f"{location}: {item['msg']}")
    return "; ".join(parts)
