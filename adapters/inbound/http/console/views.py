"""What the console's templates draw, computed from the use cases' answers: a run's stages
as a timeline, failures grouped by code, a parent chunk's text cut at its children's spans.

Pure functions over the application's own types, so the pages' arithmetic is tested
without a browser.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from datetime import datetime

import attrs

from ragline.application.secrets import masked
from ragline.domain.parse_run import ParseRun


@attrs.frozen
class Bar:
    """One stage on the run's time axis, in percent of the run's span."""

    stage: str
    status: str
    left: float
    width: float
    duration_ms: int | None
    inherited: bool
    started_at: datetime | None


def timeline(run: ParseRun) -> list[Bar]:
    """The stages in order, placed by their start and length between the run's creation and
    the last stage's end (a stage that never started has width 0 at its left neighbour's
    end)."""
    states = list(run.stages_in_order())
    start = run.created_at
    ends = [s.finished_at for _, s in states if s.finished_at is not None]
    end = max([*ends, run.finished_at or start, start])
    span = max((end - start).total_seconds(), 1e-3)
    bars: list[Bar] = []
    cursor = 0.0
    for stage, state in states:
        if state.started_at is not None and not state.inherited:
            left = max(0.0, (state.started_at - start).total_seconds() / span * 100)
            finished = state.finished_at or end
            width = max(0.5, (finished - state.started_at).total_seconds() / span * 100)
            cursor = min(100.0, left + width)
        else:
            left, width = cursor, 0.0
        bars.append(
            Bar(
                stage=stage.value,
                status=state.status.value,
                left=round(min(left, 100.0), 2),
                width=round(min(width, 100.0 - min(left, 100.0)), 2),
                duration_ms=state.duration_ms,
                inherited=state.inherited,
                started_at=state.started_at,
            )
        )
    return bars


@attrs.frozen
class FailureGroup:
    """The failed runs of one failure code, newest first, with the code's user messages."""

    code: str
    user_message_en: str
    user_message_zh: str
    runs: list[ParseRun]

    def reason(self, run: ParseRun) -> str:
        """The run's own failure text, secrets masked."""
        return masked(run.failure_reason.text) if run.failure_reason else ""


def failure_groups(runs: Iterable[ParseRun]) -> list[FailureGroup]:
    """Failed runs by failure code, the most frequent code first (then by code)."""
    grouped: dict[str, list[ParseRun]] = {}
    messages: dict[str, tuple[str, str]] = {}
    for run in runs:
        reason = run.failure_reason
        if reason is None:
            continue
        code = reason.code.value
        grouped.setdefault(code, []).append(run)
        messages[code] = (reason.code.user_message("en"), reason.code.user_message("zh"))
    order = sorted(grouped, key=lambda c: (-len(grouped[c]), c))
    return [FailureGroup(c, *messages[c], grouped[c]) for c in order]


@attrs.frozen
class Piece:
    """A run of a parent's text; `chunk_ids` are the children whose spans cover it."""

    text: str
    chunk_ids: tuple[str, ...] = ()
    shade: int = 0
    """Which of two highlight colours (alternating per child), so neighbours stand apart."""
    anchor: str | None = None
    """The child whose span starts here (the page's `#chunk-<id>` target)."""


@attrs.frozen
class Span:
    chunk_id: str
    start: int
    end: int


def highlighted(text: str, text_start: int, spans: Sequence[Span]) -> list[Piece]:
    """`text` (which starts at `text_start` in the Markdown) cut at every span boundary; each
    piece names the spans covering it. Spans outside the text are clipped away."""
    inside = [
        (max(s.start - text_start, 0), min(s.end - text_start, len(text)), i, s.chunk_id)
        for i, s in enumerate(spans)
        if s.end > text_start and s.start < text_start + len(text)
    ]
    cuts = sorted({0, len(text), *(a for a, _, _, _ in inside), *(b for _, b, _, _ in inside)})
    pieces: list[Piece] = []
    anchored: set[str] = set()
    for left, right in itertools.pairwise(cuts):
        if right <= left:
            continue
        covering = [(i, cid) for a, b, i, cid in inside if a <= left and right <= b]
        shade = covering[0][0] % 2 if covering else 0
        anchor = next((cid for a, _, _, cid in inside if a == left and cid not in anchored), None)
        if anchor is not None:
            anchored.add(anchor)
        pieces.append(Piece(text[left:right], tuple(cid for _, cid in covering), shade, anchor))
    return pieces
