"""The run store the state machine drives: a Protocol plus a dict-backed reference.

A service with its own persistence subclasses `ParseRunMachine` and returns its store from
`make_store()`; the same rules and invariants then run against real storage.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from ragline.domain.parse_run import ParseRun


class RunStore(Protocol):
    """What the machine needs from persistence; every write is a compare-and-set."""

    def add(self, run: ParseRun) -> bool:
        """Insert a new run; False when its task_id exists (unique key)."""
        ...

    def get(self, task_id: str) -> ParseRun | None:
        """A fresh copy of the stored run (no pending events), or None."""
        ...

    def save(self, run: ParseRun, expected_version: int) -> bool:
        """Write `run` if the stored version is still `expected_version`; False otherwise."""
        ...

    def supersede_and_add(self, previous: ParseRun, new_run: ParseRun) -> bool:
        """One transaction: store `previous` (already superseded in memory) only if its row
        has superseded_by_task_id IS NULL, and insert `new_run`; False and no change when
        the row was already superseded."""
        ...

    def task_ids(self) -> list[str]:
        """Every stored task_id."""
        ...


def _detached(run: ParseRun) -> ParseRun:
    """A copy sharing only immutable parts, without pending events (like a stored row)."""
    return attrs.evolve(run, stages=dict(run.stages))


class InMemoryRunStore:
    """Reference RunStore over a dict; copies on the way in and out like a database."""

    def __init__(self) -> None:
        self._rows: dict[str, ParseRun] = {}

    def add(self, run: ParseRun) -> bool:
        if run.task_id in self._rows:
            return False
        self._rows[run.task_id] = _detached(run)
        return True

    def get(self, task_id: str) -> ParseRun | None:
        row = self._rows.get(task_id)
        return None if row is None else _detached(row)

    def save(self, run: ParseRun, expected_version: int) -> bool:
        row = self._rows.get(run.task_id)
        if row is None or row.version != expected_version:
            return False
        self._rows[run.task_id] = _detached(run)
        return True

    def supersede_and_add(self, previous: ParseRun, new_run: ParseRun) -> bool:
        row = self._rows.get(previous.task_id)
        if row is None or row.superseded_by_task_id is not None or new_run.task_id in self._rows:
            return False
        self._rows[previous.task_id] = _detached(previous)
        self._rows[new_run.task_id] = _detached(new_run)
        return True

    def task_ids(self) -> list[str]:
        return list(self._rows)
