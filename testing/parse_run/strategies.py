"""Hypothesis strategies for the parse-run domain, for this project and for reusers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from ragline.domain.parse_run import (
    STAGE_ORDER,
    FailureCode,
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
    Stage,
    StageStatus,
    TaskIdentity,
)
from ragline.testing.parse_run.commands import (
    Command,
    Converge,
    Fail,
    Reject,
    Skip,
    Start,
    Succeed,
    Supersede,
    expected_error,
)

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def stages() -> st.SearchStrategy[Stage]:
    """Any of the stages."""
    return st.sampled_from(STAGE_ORDER)


def failure_codes() -> st.SearchStrategy[FailureCode]:
    """Any docs/design/0001-pipeline-contract.md failure code."""
    return st.sampled_from(list(FailureCode))


def failure_details() -> st.SearchStrategy[str]:
    """Short, long (over the 512 limit) and astral-plane details, including ':'s."""
    pieces = st.text(max_size=4) | st.sampled_from(["😀", "a:b", "解析", "\ud83d\ude00"])
    long = st.builds(lambda piece, n: piece * n, pieces, st.integers(100, 600))
    return st.one_of(st.text(max_size=30), long)


def durations() -> st.SearchStrategy[int]:
    """Stage durations in milliseconds (0 and 1 often: boundaries matter)."""
    return st.sampled_from([0, 1]) | st.integers(min_value=0, max_value=10**7)


def any_durations() -> st.SearchStrategy[int]:
    """Durations a buggy caller might pass, negatives included."""
    return st.integers(min_value=-2, max_value=2) | durations()


def markdown_locations() -> st.SearchStrategy[MarkdownLocation]:
    """Where a run's Markdown might live."""
    name = st.text(st.characters(min_codepoint=0x61, max_codepoint=0x7A), min_size=1, max_size=8)
    return st.builds(MarkdownLocation, name, name.map(lambda key: f"md/{key}.md"))


def task_identities(task_id: str | None = None) -> st.SearchStrategy[TaskIdentity]:
    """Task identities; pass `task_id` to fix the unique id."""
    ident = st.text(st.characters(min_codepoint=0x30, max_codepoint=0x39), min_size=1, max_size=6)
    return st.builds(
        TaskIdentity,
        st.just(task_id) if task_id is not None else ident.map(lambda x: f"task-{x}"),
        ident,
        ident,
        ident,
        ident,
        st.sampled_from(["pdf", "docx", "md", "markdown", "html", "txt"]),
    )


def commands(supersede_ids: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Command]:
    """Any command with any arguments: most are illegal in a given state, on purpose."""
    ids = supersede_ids if supersede_ids is not None else st.just("task-other")
    return st.one_of(
        st.builds(Start, stages()),
        st.builds(Succeed, stages(), any_durations(), st.none() | markdown_locations()),
        st.builds(Fail, stages(), failure_codes(), failure_details(), st.none() | durations()),
        st.builds(Skip, stages()),
        st.builds(Reject, failure_codes(), failure_details()),
        st.builds(Converge, st.text(max_size=20)),
        st.builds(Supersede, ids),
    )


def next_move(
    run: ParseRun, succeed: bool, code: FailureCode, detail: str, duration: int
) -> Command | None:
    """The move a well-behaved pipeline makes next, or None when the run is terminal."""
    if run.is_terminal:
        return None
    for stage in STAGE_ORDER:
        state = run.stages[stage]
        if state.status is StageStatus.PROCESSING:
            if not succeed:
                return Fail(stage, code, detail, duration)
            markdown = MarkdownLocation("md", f"{run.task_id}.md")
            return Succeed(stage, duration, markdown if stage is Stage.CLEANING else None)
        if state.status is StageStatus.PENDING:
            return Start(stage)
        if state.inherited and (run.pipeline_status is PipelineStatus.PENDING or stage.is_last):
            return Skip(stage)
    return None


@st.composite
def reachable_runs(draw: st.DrawFn, max_moves: int = 14) -> ParseRun:
    """A run reached from `open` by legal moves, sometimes a retry of a failed run.

    Use it to round-trip runs through a repository: every field combination it yields is
    one the domain can produce. Pending events are pulled.
    """
    tick = 0

    def now() -> datetime:
        nonlocal tick
        tick += 1
        return EPOCH + timedelta(seconds=tick)

    run = ParseRun.open(draw(task_identities()), now())
    for generation in range(draw(st.integers(0, 2)) + 1):
        for _ in range(draw(st.integers(0, max_moves))):
            move = next_move(
                run,
                draw(st.integers(0, 5)) > 0,
                draw(failure_codes()),
                draw(failure_details()),
                draw(durations()),
            )
            if draw(st.integers(0, 20)) == 0:
                move = Converge("redelivered")
            if move is None or expected_error(run, move) is not None:
                break
            move.apply(run, now())
        if draw(st.booleans()) and expected_error(run, Supersede("x")) is None:
            new_id = f"{run.task_id}-r{generation}"
            run.supersede(new_id)
            run = run.derive_retry(new_id, now())
    run.pull_events()
    return run
