"""Evaluate retrieval on gold questions, per retriever, through the search use case itself.

Each question names its answer by a snippet copied from the document (a hit answers when the
snippet is in its text or its parent's, whitespace normalised) or by the doc / chunk ids that
answer it (a chunk id matches a hit or the hit's parent). HybridSearch.trace_many gives each
retriever's candidates, the fused list and the final hits, so the figures are those of the
code users run; the metric maths is the domain's (ragline.domain.evaluation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ragline.application.search.tuning import RETRIEVERS
from ragline.application.search.use_case import FUSED, HybridSearch, SearchHit, SearchTrace
from ragline.domain.evaluation import (
    POOL_DEPTHS,
    RankingScore,
    contains_snippet,
    mean_scores,
    recall_within,
    score_ranking,
)

FINAL = "final"
RANKINGS = (*RETRIEVERS, FUSED, FINAL)
BATCH = 32  # questions embedded and traced per call


class DegradedEvaluation(RuntimeError):
    """A retriever failed during the evaluation: its figures (and the fused ones) would be
    those of a degraded search, not of search."""


@attrs.frozen
class GoldQuestion:
    """One question and how to recognise its answer (exactly one of the three ways)."""

    id: str
    query: str
    snippet: str | None = None
    doc_ids: frozenset[str] = frozenset()
    chunk_ids: frozenset[str] = frozenset()

    def __attrs_post_init__(self) -> None:
        given = sum((self.snippet is not None, bool(self.doc_ids), bool(self.chunk_ids)))
        if given != 1:
            raise ValueError(
                f"question {self.id}: give exactly one of relevant_snippet, "
                "relevant_doc_ids, relevant_chunk_ids"
            )
        if self.snippet is not None and not self.snippet.strip():
            raise ValueError(f"question {self.id}: relevant_snippet is blank")
        if not self.query.strip():
            raise ValueError(f"question {self.id}: query is blank")

    @property
    def relevant(self) -> int:
        return 1 if self.snippet is not None else len(self.doc_ids or self.chunk_ids)

    @property
    def expected(self) -> str:
        if self.snippet is not None:
            return self.snippet
        return ", ".join(sorted(self.doc_ids or self.chunk_ids))

    def found(self, hits: Sequence[SearchHit]) -> list[int]:
        """1-based rank of the first hit of each relevant item found in `hits`."""
        if self.snippet is not None:
            snippet = self.snippet
            for rank, hit in enumerate(hits, start=1):
                if contains_snippet(snippet, hit.text, hit.parent_text):
                    return [rank]
            return []
        first: dict[str, int] = {}
        for rank, hit in enumerate(hits, start=1):
            if self.doc_ids:
                keys = {hit.doc_id} & self.doc_ids
            else:
                keys = {hit.chunk_id, hit.parent_id or ""} & self.chunk_ids
            for key in keys:
                first.setdefault(key, rank)
        return sorted(first.values())


@attrs.frozen
class Miss:
    """A question whose answer the final hits do not hold."""

    id: str
    query: str
    expected: str
    top_hit: SearchHit | None
    ranks: Mapping[str, int | None]  # where each ranking has it (None: not in its candidates)


@attrs.frozen
class EvaluationReport:
    questions: int
    top_k: int
    scores: Mapping[str, RankingScore]  # RANKINGS -> mean figures
    in_candidates: float  # share of questions whose answer any retriever's candidates hold
    misses: list[Miss]
    candidate_recall: Mapping[str, Mapping[int, float]] = attrs.field(factory=dict)
    """Per retriever, R@d of its candidates for each POOL_DEPTHS d the pool reaches (and the
    pool's own size): is the answer among what fusion gets to order at all."""


class EvaluateRetrieval:
    """The `ragline eval` use case."""

    def __init__(self, search: HybridSearch) -> None:
        self._search = search

    async def __call__(
        self, questions: Sequence[GoldQuestion], user_id: str, dataset_id: str, top_k: int = 10
    ) -> EvaluationReport:
        per: dict[str, list[RankingScore]] = {name: [] for name in RANKINGS}
        tuning = self._search.tuning
        depths = {
            name: sorted({d for d in POOL_DEPTHS if d < pool} | {pool})
            for name, pool in ((n, tuning.pool(n, top_k)) for n in RETRIEVERS)
        }
        within = {n: dict.fromkeys(depths[n], 0.0) for n in RETRIEVERS}
        misses: list[Miss] = []
        pooled = 0
        for start in range(0, len(questions), BATCH):
            batch = questions[start : start + BATCH]
            traces = await self._search.trace_many(
                [q.query for q in batch], user_id, dataset_id, top_k
            )
            for question, trace in zip(batch, traces, strict=True):
                if trace.degraded:
                    raise DegradedEvaluation(
                        f"{', '.join(trace.degraded)} did not answer (question {question.id}): "
                        "evaluate when every retriever answers"
                    )
                found = _found_per_ranking(question, trace)
                for name, ranks in found.items():
                    per[name].append(score_ranking(ranks, question.relevant))
                pooled += any(found[name] for name in RETRIEVERS)
                for name in RETRIEVERS:
                    for depth in depths[name]:
                        within[name][depth] += recall_within(found[name], question.relevant, depth)
                if not found[FINAL]:
                    misses.append(
                        Miss(
                            question.id,
                            question.query,
                            question.expected,
                            trace.hits[0] if trace.hits else None,
                            {n: (found[n][0] if found[n] else None) for n in RANKINGS},
                        )
                    )
        return EvaluationReport(
            questions=len(questions),
            top_k=top_k,
            scores={name: mean_scores(scores) for name, scores in per.items()},
            in_candidates=pooled / len(questions) if questions else 0.0,
            misses=misses,
            candidate_recall={
                name: {d: v / len(questions) for d, v in sums.items()}
                for name, sums in within.items()
                if questions
            },
        )


def _found_per_ranking(question: GoldQuestion, trace: SearchTrace) -> dict[str, list[int]]:
    found = {name: question.found(trace.rankings.get(name, [])) for name in (*RETRIEVERS, FUSED)}
    found[FINAL] = question.found(trace.hits)
    return found
