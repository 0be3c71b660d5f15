"""What stages hand each other: typed outputs, declared inputs (Haystack's sockets, in line).

A stage declares the one output type it `gives` (or None) and the outputs of earlier stages
it `takes`; the template stores what `run` returns and lets a stage read only what it
declared. Every input is optional by design: a resumed run skips inherited stages, and a
killed process loses memory, so each `Takes` says how the stage re-derives it from what is
stored (Markdown coordinates, chunk rows) when it is absent. `check_wiring` refuses a stage
list in which a stage takes what no earlier stage gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar, runtime_checkable

import attrs

T = TypeVar("T")


@runtime_checkable
class Discardable(Protocol):
    """An output holding something outside memory (a spooled file) to let go of."""

    def discard(self) -> None: ...


@attrs.frozen
class Takes:
    """One declared input: an earlier stage's output type, and what the stage does without
    it (the producer was inherited by a retry, or this is another process)."""

    output: type
    when_absent: str


class UndeclaredInput(LookupError):
    """A stage asked for an output it did not declare in `takes`."""


@attrs.define
class StageOutputs:
    """The outputs of this run's stages so far, one per type, in memory only."""

    _held: dict[type, object] = attrs.field(factory=dict)

    def put(self, output: object) -> None:
        self._held[type(output)] = output

    def view(self, takes: Sequence[Takes]) -> StageInputs:
        """What one stage may read: only the types it declared."""
        return StageInputs(self, frozenset(t.output for t in takes))

    def read(self, kind: type[T], remove: bool) -> T | None:
        found = self._held.pop(kind, None) if remove else self._held.get(kind)
        return found if isinstance(found, kind) else None

    def discard(self) -> None:
        """Let every held output go (whenever the run ends), spooled files included."""
        for output in self._held.values():
            if isinstance(output, Discardable):
                output.discard()
        self._held.clear()


@attrs.frozen
class StageInputs:
    """One stage's view of the outputs: `get` reads, `take` reads and lets go."""

    outputs: StageOutputs
    declared: frozenset[type]

    def _check(self, kind: type) -> None:
        if kind not in self.declared:
            raise UndeclaredInput(f"{kind.__name__} is not among this stage's declared inputs")

    def get(self, kind: type[T]) -> T | None:
        self._check(kind)
        return self.outputs.read(kind, remove=False)

    def take(self, kind: type[T]) -> T | None:
        """The output, removed so memory does not hold it for the stages after this one."""
        self._check(kind)
        return self.outputs.read(kind, remove=True)


def check_wiring(stages: Sequence[tuple[str, type | None, Sequence[Takes]]]) -> None:
    """ValueError when a stage takes what no earlier stage gives (a typo, or a reorder).
    `stages`: each stage's name, the type it gives and what it takes, in order."""
    given: set[type] = set()
    for name, gives, takes in stages:
        for wanted in takes:
            if wanted.output not in given:
                raise ValueError(
                    f"{name} takes {wanted.output.__name__}, which no earlier stage gives"
                )
        if gives is not None:
            given.add(gives)
