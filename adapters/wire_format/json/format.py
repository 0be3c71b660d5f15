"""JsonWireFormat: the ParseTask / ParseResult JSON messages <-> the application's values.

The only place that converts between the pydantic wire models and the application's attrs
values. The two enum vocabularies (wire schema, application) are the same strings; a test
holds them equal.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import attrs

from ragline.application.ports.parser import PdfParserBackend
from ragline.application.tasks import (
    ParseTaskCommand,
    TaskIssuer,
    TaskResult,
    TaskStatus,
    TriggerMode,
    UnreadableTask,
    body_text,
)
from ragline.contracts import wire
from ragline.domain.metadata import DocumentMetadata

_SALVAGED_IDS = ("original_file_id", "document_parse_task_id", "user_id", "dataset_id")


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    """Enum members as their values: each side spells its vocabularies with its own enums."""
    return {k: v.value if isinstance(v, StrEnum) else v for k, v in fields.items()}


def command_of(task: wire.ParseTask) -> ParseTaskCommand:
    """The command of a decoded task. The wire model bounds the metadata as the domain
    does; should the two ever disagree, MetadataError (a ValueError) is raised here."""
    fields = _plain(task.model_dump())
    fields["trigger_mode"] = TriggerMode(fields["trigger_mode"])
    fields["issued_by"] = TaskIssuer(fields["issued_by"])
    fields["pdf_parser_backend"] = PdfParserBackend(fields["pdf_parser_backend"])
    if fields.get("metadata") is not None:
        fields["metadata"] = DocumentMetadata.from_plain(fields["metadata"])
    return ParseTaskCommand(**fields)


def task_message(task: ParseTaskCommand) -> wire.ParseTask:
    """The wire model of a command (validated: a command the schema refuses raises)."""
    fields = _plain(attrs.asdict(task, recurse=False))
    if task.metadata is not None:
        fields["metadata"] = task.metadata.as_plain()
    return wire.ParseTask.model_validate(fields)


def result_message(result: TaskResult) -> wire.ParseResult:
    return wire.ParseResult.model_validate(_plain(attrs.asdict(result)))


def result_of(message: wire.ParseResult) -> TaskResult:
    fields = _plain(message.model_dump())
    fields["task_status"] = TaskStatus(fields["task_status"])
    return TaskResult(**fields)


def unreadable(rejected: wire.RejectedMessage, body: bytes) -> UnreadableTask:
    """What can still be said of a body that is not a valid ParseTask: best-effort ids from
    its JSON (so a FAILED result names the file), and the start of the body."""
    fields: dict[str, Any] = {}
    try:
        document = json.loads(body.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        document = None
    if isinstance(document, dict):
        for name in _SALVAGED_IDS:
            value = document.get(name)
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            if wire.LONG_MIN <= value <= wire.LONG_MAX:  # a result can carry it
                fields[name] = value
        file_type = document.get("file_type")
        if isinstance(file_type, str):
            fields["file_type"] = file_type[:32]
    return UnreadableTask(
        task_id=rejected.task_id,
        reason=rejected.reason,
        body_text=body_text(body),
        **fields,
    )


def decode_task(
    body: bytes, max_bytes: int = wire.DEFAULT_MAX_TASK_BYTES
) -> ParseTaskCommand | UnreadableTask:
    """A task body as a command, or why it is not one (never raises): the one decoding of
    a received task, done at the edge that received it."""
    decoded = wire.decode_parse_task(body, max_bytes=max_bytes)
    if isinstance(decoded, wire.RejectedMessage):
        return unreadable(decoded, body)
    return command_of(decoded)


class JsonWireFormat:
    """The JSON schemas in contracts/ (the Java producer's format), both ways: the task
    consumer decodes with it (`TaskDecoder`); the outbound publishers write with the same
    functions; tests and tools read what went out with `decode_result`."""

    def __init__(self, max_task_bytes: int = wire.DEFAULT_MAX_TASK_BYTES) -> None:
        self.max_task_bytes = max_task_bytes

    def decode_task(self, body: bytes) -> ParseTaskCommand | UnreadableTask:
        decoded = wire.decode_parse_task(body, max_bytes=self.max_task_bytes)
        if isinstance(decoded, wire.RejectedMessage):
            return unreadable(decoded, body)
        return command_of(decoded)

    def encode_task(self, task: ParseTaskCommand) -> bytes:
        return wire.encode_parse_task(task_message(task))

    def encode_result(self, result: TaskResult) -> bytes:
        return wire.encode_parse_result(result_message(result))

    def decode_result(self, body: bytes) -> TaskResult:
        return result_of(wire.decode_parse_result(body))
