"""WireFormat port: bytes on the bus <-> the application's task and result values.

The application never sees the wire models; the adapter (`ragline.adapters.wire_format.json`,
on the schemas in `ragline.contracts.wire`) does both directions. Decoding a task never
raises: any body a consumer receives becomes a command or an `UnreadableTask`.
"""

from __future__ import annotations

from typing import Protocol

from ragline.application.tasks import ParseTaskCommand, TaskResult, UnreadableTask


class WireFormat(Protocol):
    def decode_task(self, body: bytes) -> ParseTaskCommand | UnreadableTask:
        """A task body as a command, or why it is not one (never raises)."""
        ...

    def encode_task(self, task: ParseTaskCommand) -> bytes:
        """The ParseTask message of `task` (UTF-8 JSON, defaults written out)."""
        ...

    def encode_result(self, result: TaskResult) -> bytes:
        """The ParseResult message of `result`."""
        ...

    def decode_result(self, body: bytes) -> TaskResult:
        """A result body (ValueError when it is not a valid ParseResult)."""
        ...
