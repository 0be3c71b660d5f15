"""StoredTask: what a run's parsed log keeps of the task it was opened for.

A valid task is kept as the task itself; a body that was no valid task as the reason it
was refused and the start of the body (for the operator). The store writes and reads them
as plain records (`task_record`, `stored_task`), so no use case decodes a message twice:
a retry or a re-index reads the stored task back as a value, never the wire format.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

import attrs

from ragline.application.tasks.parse_task import (
    BODY_TEXT_KEEP,
    ParseTaskCommand,
    PdfParserBackend,
    TaskIssuer,
    TriggerMode,
)
from ragline.domain.metadata import DocumentMetadata

_ENUMS: dict[str, type[StrEnum]] = {
    "trigger_mode": TriggerMode,
    "pdf_parser_backend": PdfParserBackend,
    "issued_by": TaskIssuer,
}
_FIELDS = tuple(field.name for field in attrs.fields(ParseTaskCommand))


@attrs.frozen(kw_only=True)
class RejectedBody:
    """A message that was no valid task: why, and the start of its body."""

    reason: str
    body_text: str = ""


StoredTask = ParseTaskCommand | RejectedBody


def task_record(stored: StoredTask) -> dict[str, object]:
    """The plain record of a stored task: a task's fields by name (enums as their values,
    every default written out), or `{"rejected": reason, "body": text}`."""
    if isinstance(stored, RejectedBody):
        return {"rejected": stored.reason, "body": stored.body_text}
    record: dict[str, object] = {
        name: value.value if isinstance(value, StrEnum) else value
        for name, value in attrs.asdict(stored, recurse=False).items()
    }
    if stored.metadata is not None:
        record["metadata"] = stored.metadata.as_plain()
    return record


def stored_task(record: object) -> StoredTask:
    """The stored task of a record `task_record` wrote (or an older row of the same
    shape); a record that is neither reads as a RejectedBody saying so."""
    if not isinstance(record, Mapping):
        return RejectedBody(reason="unreadable stored task: not an object")
    if "rejected" in record:
        return RejectedBody(reason=str(record["rejected"]), body_text=str(record.get("body", "")))
    fields = {name: record[name] for name in _FIELDS if name in record}
    try:
        for name, enum in _ENUMS.items():
            if name in fields:
                fields[name] = enum(fields[name])
        if fields.get("metadata") is not None:
            fields["metadata"] = DocumentMetadata.from_plain(fields["metadata"])
        return ParseTaskCommand(**fields)
    except (TypeError, ValueError) as error:  # MetadataError is a ValueError
        text = repr(dict(record))[:BODY_TEXT_KEEP]
        return RejectedBody(reason=f"unreadable stored task: {error}", body_text=text)
