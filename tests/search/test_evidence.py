"""Steps after fusion: parent-level evidence and dedupe."""

import attrs
import pytest

from ragline.application.search.evidence import by_parent, dedupe


@attrs.frozen
class Hit:
    chunk_id: str
    parent_id: str | None
    text: str
    score: float


def test_one_hit_per_parent_its_best_child() -> None:
    hits = [Hit("c1", "p1", "a", 0.9), Hit("c2", "p2", "b", 0.8), Hit("c3", "p1", "c", 0.7)]
    assert [h.chunk_id for h in by_parent(hits)] == ["c1", "c2"]
    assert by_parent(hits)[0].score == 0.9


def test_siblings_lift_their_parent_over_a_lone_better_child() -> None:
    hits = [
        Hit("lone", "p1", "a", 0.50),
        Hit("s1", "p2", "b", 0.45),
        Hit("s2", "p2", "c", 0.40),
        Hit("s3", "p2", "d", 0.30),
    ]
    merged = by_parent(hits, sibling_bonus=0.1)
    assert [h.chunk_id for h in merged] == ["s1", "lone"]
    assert merged[0].score == pytest.approx(0.45 + 0.1 * (0.40 + 0.30))
    assert [h.chunk_id for h in by_parent(hits)] == ["lone", "s1"]  # no bonus: best child wins


def test_hits_without_parent_stand_alone() -> None:
    hits = [Hit("a", None, "x", 0.5), Hit("b", None, "y", 0.4)]
    assert [h.chunk_id for h in by_parent(hits)] == ["a", "b"]


def test_dedupe_keeps_the_better_of_two_same_texts() -> None:
    hits = [Hit("a", "p1", "Run  apt\nupdate", 0.9), Hit("b", "p2", "run apt update", 0.8)]
    hits.append(Hit("c", "p3", "something else", 0.7))
    assert [h.chunk_id for h in dedupe(hits)] == ["a", "c"]
