"""How a stage says "I failed with this code": the template turns it into fail_stage."""

from __future__ import annotations

from ragline.domain.parse_run import FailureCode


class StageFailure(Exception):
    """A stage's work failed for a known reason; `detail` goes after `CODE:`."""

    def __init__(self, code: FailureCode, detail: str) -> None:
        super().__init__(f"{code.value}:{detail}")
        self.code = code
        self.detail = detail


def describe(error: BaseException) -> str:
    """A short, single-line description of an error for failure_reason (no secrets: ports
    raise their own messages, and API keys never reach an exception text)."""
    text = str(error).replace("\n", " ").strip()
    name = type(error).__name__
    return f"{name}: {text}" if text else name
