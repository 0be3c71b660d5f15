"""A running count of the Markdown a parser has produced, against the output limit."""

from __future__ import annotations

from ragline.application.ports.parser import ParseEngineFailed


class OutputBudget:
    """Fails the parse as soon as the Markdown would exceed the output limit, instead of
    building a huge string first and refusing it afterwards."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.used = 0

    def spend(self, chars: int, what: str) -> None:
        self.used += chars
        if self.used > self.max_chars:
            raise ParseEngineFailed(
                f"{what}: output exceeds the limit of {self.max_chars} characters"
            )
