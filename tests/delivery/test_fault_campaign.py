"""The fault campaign, reduced: each dependency goes away once, at a different stage
(`python -m campaigns.faults` runs every stage x every dependency)."""

from __future__ import annotations

from pathlib import Path

from campaigns.faults.campaign import run_campaign, run_campaign_with_backlogs
from ragline.domain.parse_run import Stage

CELLS = [
    ("storage", Stage.CLEANING),
    ("database", Stage.CHUNKING),
    ("vectors", Stage.VECTORIZING),
    ("keywords", Stage.PRETOKENIZE),
    ("broker", Stage.KEYWORD_INDEXING),
]


async def test_each_dependency_going_away_fails_the_run_precisely_and_a_retry_heals_it(
    tmp_path: Path,
) -> None:
    results = await run_campaign(CELLS, tmp_path)
    outcomes = {(r.dependency, r.stage): r.outcome for r in results}
    assert [r.problems for r in results] == [[] for _ in CELLS], outcomes
    assert outcomes == {
        ("storage", "CLEANING"): "PARSE_ENGINE_FAILED @ CLEANING",
        ("database", "CHUNKING"): "INTERRUPTED_TASK @ CHUNKING",
        ("vectors", "VECTORIZING"): "VECTORIZING_FAILED @ VECTORIZING",
        ("keywords", "PRETOKENIZE"): "KEYWORD_INDEXING_FAILED @ KEYWORD_INDEXING",
        ("broker", "KEYWORD_INDEXING"): "SUCCESS, result PENDING → SENT",
    }
    vectors = next(r for r in results if r.dependency == "vectors")
    assert vectors.inherited == ["CLEANING", "CHUNKING"]  # the retry redid only the rest
    assert vectors.redone == [
        "VECTORIZING",
        "PRETOKENIZE",
        "KEYWORD_INDEXING",
        "SPARSE_VECTORIZING",
    ]
    assert all(r.control_untouched for r in results)


async def test_a_backlog_queued_during_an_outage_is_answered_after_it_and_never_dead_lettered(
    tmp_path: Path,
) -> None:
    """Issue 19 item 1, CI-size: 12 queued tasks, a 2 s outage, a real worker on RabbitMQ.
    Before the fix the database outage dead-lettered the whole backlog."""
    _, backlogs = await run_campaign_with_backlogs(
        [], ["database", "storage"], tmp_path, backlog_tasks=12, outage_seconds=2.0
    )
    by_dependency = {b.dependency: b for b in backlogs}
    assert [b.problems for b in backlogs] == [[], []], {b.dependency: b.outcome for b in backlogs}
    database = by_dependency["database"]
    assert (database.answered, database.succeeded, database.dead_lettered) == (12, 12, 0)
    assert database.held >= 1, "no consumer held the backlog"
    storage = by_dependency["storage"]
    assert (storage.answered, storage.dead_lettered) == (12, 0)
