"""Refused moves of a re-embedding: each names the rule it would have broken
(docs/state-machine.md, "The re-embedding machine")."""

from __future__ import annotations

from typing import ClassVar


class ReembeddingError(Exception):
    """An illegal move on a re-embedding, its generations or a copy batch; nothing changed."""

    rule: ClassVar[str] = "a rule of the re-embedding machine"

    def __init__(self, detail: str) -> None:
        super().__init__(f"{detail} (breaks {self.rule})")
        self.detail = detail


class IllegalReembeddingMove(ReembeddingError):
    """The move is not allowed from the re-embedding's status."""

    rule = "R1: PLANNED -> COPYING -> READY -> SWAPPED, CANCELLED/FAILED from any active status"


class NotCaughtUp(ReembeddingError):
    """READY or SWAPPED was asked while a chunk of a SUCCESS lineage had no new vector."""

    rule = "R2: the swap happens only when every SUCCESS chunk has a vector in the new generation"


class IllegalGenerationMove(ReembeddingError):
    """A shadow was opened beside another, or a swap/drop named a generation not shadowed."""

    rule = "R3: one active generation, at most one shadow, and only the shadow becomes active"


class IllegalCopyBatchMove(ReembeddingError):
    """A copy batch was claimed under a live lease, or finished by a claim that lost it."""

    rule = "R4: one live claim per copy batch; a late answer from a lost claim is refused"
