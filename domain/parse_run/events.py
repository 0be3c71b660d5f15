"""Terminal events: the application sends exactly one result notification per event.

A run records its event at the moment it becomes terminal and at no other time, so
"pull the events after the terminal state is committed, then notify" gives exactly one
notification per run (invariant 5 of docs/design/0002-run-state-machine.md). A redelivered terminal
task rebuilds its result with `terminal_result` instead; that resend is not a new event.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

import attrs

from ragline.domain.parse_run.errors import NotTerminal
from ragline.domain.parse_run.failure import FailureReason
from ragline.domain.parse_run.stage import PipelineStatus

if TYPE_CHECKING:
    from ragline.domain.parse_run.run import ParseRun

SUCCESS_MESSAGE = {"zh": "文件解析完成。", "en": "The file was parsed and indexed."}


@attrs.frozen
class RunSucceeded:
    """Every stage succeeded."""

    task_id: str
    at: datetime


@attrs.frozen
class RunFailed:
    """The run ended FAILED with this reason."""

    task_id: str
    at: datetime
    reason: FailureReason


RunEvent = RunSucceeded | RunFailed


@attrs.frozen
class TerminalResult:
    """The result fields of a terminal run, as the result message carries them."""

    task_id: str
    task_status: Literal["success", "failed"]
    finished_at: datetime
    failure_reason: str | None
    user_message: str


def terminal_result(run: ParseRun, language: str = "zh") -> TerminalResult:
    """Result fields of a terminal run; NotTerminal for a run still going."""
    if not run.pipeline_status.is_terminal or run.finished_at is None:
        raise NotTerminal(f"run {run.task_id} is {run.pipeline_status.value}")
    if run.pipeline_status is PipelineStatus.SUCCESS:
        message = SUCCESS_MESSAGE["en" if language == "en" else "zh"]
        return TerminalResult(run.task_id, "success", run.finished_at, None, message)
    reason = run.failure_reason
    if reason is None:
        raise NotTerminal(f"run {run.task_id} is FAILED without a failure reason")
    return TerminalResult(
        run.task_id, "failed", run.finished_at, reason.text, reason.code.user_message(language)
    )
