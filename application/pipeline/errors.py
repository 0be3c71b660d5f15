"""How a stage says "I failed with this code": the template turns it into fail_stage.

Both ways a failure reason is formed — `describe(error)` and a `StageFailure` detail — mask
every known secret first (docs/security.md, Secrets): a reason is stored, published in the
result message and logged, so it must never carry a credential a remote answer echoed.
"""

from __future__ import annotations

from ragline.application.secrets import masked_prefix
from ragline.domain.parse_run import FailureCode

KEPT = 4096
"""How much of an error's text is kept, masked (`masked_prefix`): a reason holds 512
characters, and masking a remote's megabyte would cost seconds."""


class StageFailure(Exception):
    """A stage's work failed for a known reason; `detail` (masked) goes after `CODE:`."""

    def __init__(self, code: FailureCode, detail: str) -> None:
        detail = masked_prefix(detail, KEPT)
        super().__init__(f"{code.value}:{detail}")
        self.code = code
        self.detail = detail


def describe(error: BaseException) -> str:
    """A short, single-line description of an error for failure_reason and logs, with every
    known secret masked (adapters mask their own credentials too; this is the safeguard)."""
    text = masked_prefix(error, KEPT).replace("\n", " ").strip()
    name = type(error).__name__
    return f"{name}: {text}" if text else name
