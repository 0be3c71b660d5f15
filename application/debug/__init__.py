"""The debug use cases of docs/design/0005-wire-contract.md: extract Markdown synchronously, submit
a parse task, publish a raw task message as the admin side would."""

from ragline.application.debug.extract import ExtractedMarkdown, ExtractionFailed, ExtractMarkdown
from ragline.application.debug.submit import PublishTaskMessage, SubmitTask

__all__ = [
    "ExtractMarkdown",
    "ExtractedMarkdown",
    "ExtractionFailed",
    "PublishTaskMessage",
    "SubmitTask",
]
