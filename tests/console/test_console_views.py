"""What the console draws, without a browser: spans cut a parent's text into highlighted
pieces (overlaps and clipping included), failures group by code, stages lie on one axis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ragline.adapters.inbound.http.console.views import Span, failure_groups, highlighted, timeline
from ragline.domain.parse_run import FailureCode, ParseRun, Stage, TaskIdentity

T0 = datetime(2026, 12, 2, tzinfo=UTC)


def test_pieces_cover_the_text_exactly_and_name_the_spans_over_them() -> None:
    text = "0123456789"
    pieces = highlighted(text, 100, [Span("a", 100, 104), Span("b", 103, 108), Span("x", 50, 60)])
    assert "".join(p.text for p in pieces) == text
    assert [(p.text, p.chunk_ids) for p in pieces] == [
        ("012", ("a",)),
        ("3", ("a", "b")),
        ("4567", ("b",)),
        ("89", ()),
    ]
    assert [p.anchor for p in pieces] == ["a", "b", None, None]
    assert pieces[0].shade != pieces[2].shade  # neighbours in different colours
    clipped = highlighted(text, 100, [Span("c", 95, 102)])
    assert [(p.text, p.chunk_ids) for p in clipped] == [("01", ("c",)), ("23456789", ())]


def _run(task_id: str) -> ParseRun:
    return ParseRun.open(TaskIdentity(task_id, "f1", "dpt1", "u1", "d1", "md"), T0)


def _failed(task_id: str, code: FailureCode) -> ParseRun:
    run = _run(task_id)
    run.start_stage(Stage.CLEANING, T0 + timedelta(seconds=1))
    run.fail_stage(Stage.CLEANING, code, f"{task_id} broke", T0 + timedelta(seconds=3), 2000)
    return run


def test_failures_group_by_code_most_frequent_first() -> None:
    parse, missing = FailureCode.PARSE_ENGINE_FAILED, FailureCode.SOURCE_FILE_NOT_FOUND
    runs = [_failed("a", parse), _failed("b", missing), _failed("c", parse)]
    groups = failure_groups([*runs, _run("not-failed")])
    assert [(g.code, [r.task_id for r in g.runs]) for g in groups] == [
        ("PARSE_ENGINE_FAILED", ["a", "c"]),
        ("SOURCE_FILE_NOT_FOUND", ["b"]),
    ]
    assert groups[1].user_message_en == FailureCode.SOURCE_FILE_NOT_FOUND.user_message("en")
    assert groups[0].reason(runs[0]) == "PARSE_ENGINE_FAILED:a broke"


def test_a_run_that_never_started_has_every_stage_at_zero_width() -> None:
    bars = timeline(_run("fresh"))
    assert bars and all(b.width == 0 and b.left == 0 for b in bars)
    assert [b.status for b in bars] == ["PENDING"] * len(bars)


def test_a_stage_lies_where_and_as_long_as_it_ran() -> None:
    run = _failed("t", FailureCode.PARSE_ENGINE_FAILED)  # created at 0 s, CLEANING from 1 s to 3 s
    cleaning, *rest = timeline(run)
    assert (cleaning.stage, cleaning.status) == ("CLEANING", "FAILED")
    assert (cleaning.left, cleaning.width, cleaning.duration_ms) == (33.33, 66.67, 2000)
    assert all(b.width == 0 and b.left == 100 for b in rest)  # never started: after it
