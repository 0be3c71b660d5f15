"""Task-context validation: a message inconsistent with itself, or naming an object no
producer may name (docs/security.md), is FAILED INVALID_TASK_CONTEXT before any stage runs
(docs/design/0001-pipeline-contract.md)."""

from __future__ import annotations

from pathlib import PurePosixPath

from ragline.application.access import Caller, ReferencePolicy, ReferenceRefused
from ragline.application.tasks import ParseTaskCommand, TaskIssuer
from ragline.application.tasks.parse_task import is_markdown_source

_ALIASES = {"markdown": "md", "htm": "html"}


def _kind(extension: str) -> str:
    extension = extension.lower().lstrip(".")
    return _ALIASES.get(extension, extension)


def _extension(name: str) -> str | None:
    suffix = PurePosixPath(name.replace("\\", "/")).suffix
    return suffix[1:] if len(suffix) > 1 else None


def invalid_context(task: ParseTaskCommand) -> str | None:
    """Why the task cannot be processed as given, or None when it is consistent."""
    for name in ("original_file_id", "document_parse_task_id", "user_id", "dataset_id"):
        value: int = getattr(task, name)
        if value <= 0:
            return f"{name} must be a positive id, got {value}"
    file_type = task.file_type.strip()
    if not file_type or file_type != task.file_type or "." in file_type or "/" in file_type:
        return f"file_type {task.file_type!r} is not a bare extension"
    if not task.source_bucket.strip() or not task.source_object_key.strip():
        return "source_bucket and source_object_key must not be blank"
    if not is_markdown_source(task) and (
        not task.md_bucket.strip() or not task.md_object_key.strip()
    ):
        return "md_bucket and md_object_key are required unless the source is Markdown"
    named = [("source_object_key", task.source_object_key)]
    if task.issued_by is TaskIssuer.PRODUCER:  # a re-index keeps the uploaded file's name
        named.insert(0, ("source_filename", task.source_filename))
    for field, name in named:
        extension = _extension(name)
        if extension is not None and _kind(extension) != _kind(file_type):
            return (
                f"file_type {file_type!r} does not match the extension of {field} ({extension!r})"
            )
    return None


def refused_reference(task: ParseTaskCommand, references: ReferencePolicy) -> str | None:
    """Why the task names an object the broker's producers may not (`<field>: <reason>`):
    a message from any producer is the service's (it may name any object), but never the
    parse cache's area as a target, nor its own source as its Markdown."""
    try:
        references.check_task(Caller.service(), task)
    except ReferenceRefused as refused:
        return str(refused)
    return None
