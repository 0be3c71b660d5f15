"""Reusable property kit for the parse-run domain (needs hypothesis; the domain does not).

from ragline.testing.parse_run import ParseRunMachine
TestMyStore = type("M", (ParseRunMachine,), {"make_store": lambda self: MyStore()}).TestCase

A store behind the UnitOfWork port can use `ragline.testing.parse_run.uow_store.
UnitOfWorkRunStore(factory, loop)` as its RunStore (it needs the application's ports).
"""

from ragline.testing.parse_run.commands import (
    Command,
    Converge,
    Fail,
    Reject,
    Skip,
    Start,
    Succeed,
    Supersede,
    expected_after,
    expected_error,
    expected_refusal,
)
from ragline.testing.parse_run.invariants import (
    InvariantViolation,
    check_durable_before_notify,
    check_events,
    check_family,
    check_run,
    check_step,
)
from ragline.testing.parse_run.machine import ChunkStatusMachine, ParseRunMachine
from ragline.testing.parse_run.store import InMemoryRunStore, RunStore
from ragline.testing.parse_run.strategies import (
    EPOCH,
    any_durations,
    commands,
    durations,
    failure_codes,
    failure_details,
    markdown_locations,
    next_move,
    reachable_runs,
    stages,
    task_identities,
)

__all__ = [
    "EPOCH",
    "ChunkStatusMachine",
    "Command",
    "Converge",
    "Fail",
    "InMemoryRunStore",
    "InvariantViolation",
    "ParseRunMachine",
    "Reject",
    "RunStore",
    "Skip",
    "Start",
    "Succeed",
    "Supersede",
    "any_durations",
    "check_durable_before_notify",
    "check_events",
    "check_family",
    "check_run",
    "check_step",
    "commands",
    "durations",
    "expected_after",
    "expected_error",
    "expected_refusal",
    "failure_codes",
    "failure_details",
    "markdown_locations",
    "next_move",
    "reachable_runs",
    "stages",
    "task_identities",
]
