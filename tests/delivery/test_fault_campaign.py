"""The fault campaign, reduced: each dependency goes away once, at a different stage
(`python -m campaigns.faults` runs every stage x every dependency)."""

from __future__ import annotations

from pathlib import Path

from campaigns.faults.campaign import run_campaign
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
        ("keywords", "PRETOKENIZE"): "KEYWORD_DELETE_FAILED @ KEYWORD_INDEXING",
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
