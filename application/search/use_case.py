"""Hybrid search: dense + sparse + BM25 over a tenant's chunks, fused by weighted rank.

Only child chunks are indexed; each hit comes back with its parent's text (the context a
reader or an LLM needs), its section path and the file it came from. Every retriever is
filtered by user_id + dataset_id, and the chunk rows are read back with the same scope, so
one tenant never sees another's text. After fusion, optional steps (SearchTuning) score
parents from their children, drop duplicate texts and let a re-ranker re-order the top.

`trace_many` gives what each retriever ranked, hydrated, besides the final hits: the input
of `ragline eval`, so evaluation measures this very code rather than a copy of it.

A metadata filter (`where`) is handed to every retriever, which applies it while it ranks
(vector payload filters, keyword index filters), so each still returns its full candidate
pool when enough chunks match; the chunk rows are then read back by id in the same scope.
Nothing is filtered after fusion, so a filtered search returns top_k hits whenever top_k
chunks match.

A retriever whose engine is out of reach (its port's error: the vector index, the keyword
index, the embedding model for dense; or no answer within `retriever_timeout`) does not
cost the user the others' hits: the answer names it in `degraded` and the metrics count it.
A bug (any other exception) still raises; with no retriever answering, SearchUnavailable
(HTTP 503).

Dense answers from the user's active embedding generation (issue 21, `search.spaces`): the
default EMBEDDING config embeds the query and the active generation's space is queried, a
pair the swap moves in one transaction; sparse and BM25 are not generational.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping, Sequence

import attrs

from ragline.application.error_text import describe
from ragline.application.ports.embedder import Embedder, EmbedderError
from ragline.application.ports.embedder_resolver import EmbedderResolver, UnusableEmbeddingConfig
from ragline.application.ports.keyword_index import KeywordHit, KeywordIndex, KeywordIndexError
from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.reranker import Reranker, RerankFailed
from ragline.application.ports.sparse_encoder import SparseEncoder
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorHit, VectorIndex, VectorIndexError
from ragline.application.search.evidence import by_parent, dedupe
from ragline.application.search.feedback import rocchio
from ragline.application.search.fusion import reciprocal_rank_fusion, score_fusion
from ragline.application.search.spaces import active_model, index_of, spaces_of
from ragline.application.search.tuning import RETRIEVERS, SearchTuning
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.metadata import MetadataFilter

log = logging.getLogger(__name__)

CANDIDATES_PER_RETRIEVER = SearchTuning().candidates_per_retriever
FUSED = "fused"


OUTAGES: Mapping[str, tuple[type[Exception], ...]] = {
    "dense": (VectorIndexError, EmbedderError, UnusableEmbeddingConfig),
    "sparse": (VectorIndexError,),
    "bm25": (KeywordIndexError,),
}
"""The errors that mean a retriever cannot answer now (its engine or model), not a bug."""


class NoEmbeddingConfig(LookupError):
    """The user has no EMBEDDING configuration, so nothing of theirs can have been indexed."""


class SearchUnavailable(Exception):
    """No retriever could answer (every engine out of reach): nothing to degrade to."""

    def __init__(self, missing: Sequence[str]) -> None:
        self.missing = tuple(missing)
        super().__init__(f"no retriever answered ({', '.join(self.missing)} unavailable)")


@attrs.frozen
class SearchHit:
    chunk_id: str
    doc_id: str
    source: str
    section_path: tuple[str, ...]
    text: str
    parent_text: str | None
    score: float
    parent_id: str | None = None
    ranks: Mapping[str, int] = attrs.field(factory=dict)
    """1-based rank of the hit in each retriever's candidates (absent: not among them)."""
    fused_score: float = 0.0
    """Its score from fusion alone, before parent evidence or re-ranking."""


@attrs.frozen
class SearchAnswer:
    """One query's final hits; `degraded` names the retrievers that failed (RETRIEVERS order),
    so the hits come from the others."""

    hits: list[SearchHit]
    degraded: tuple[str, ...] = ()


@attrs.frozen
class SearchTrace:
    """One query's rankings: each retriever's and the fused candidates, then the final hits."""

    query: str
    rankings: Mapping[str, list[SearchHit]]  # "dense", "sparse", "bm25", "fused"
    hits: list[SearchHit]
    degraded: tuple[str, ...] = ()


@attrs.frozen
class _Scored:
    chunk_id: str
    parent_id: str | None
    text: str
    score: float


@attrs.frozen
class _Dense:
    """The dense side of one search: the active generation's index and its model (None
    when the model could not be had: no dense retriever then)."""

    index: VectorIndex
    embedder: Embedder | None


@attrs.frozen
class _Candidates:
    scored: Mapping[str, list[tuple[str, float]]]  # retriever -> (chunk id, score), best first
    fused: list[tuple[str, float]]
    parents: Mapping[str, str | None] = attrs.field(factory=dict)
    """Parent ids the vector points carry (BM25 hits carry none)."""
    missing: tuple[str, ...] = ()
    """The retrievers that failed (their lists are empty)."""

    @property
    def ids(self) -> dict[str, list[str]]:
        return {name: [i for i, _ in hits] for name, hits in self.scored.items()}


class HybridSearch:
    """The `ragline search` use case. The embedder is the tenant's dense model (resolved by
    the caller from the user's EMBEDDING config, the same one indexing used)."""

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        vectors: VectorIndex,
        keywords: KeywordIndex,
        tokenizer: Tokenizer,
        sparse: SparseEncoder,
        embedders: EmbedderResolver,
        tuning: SearchTuning | None = None,
        reranker: Reranker | None = None,
        metrics: PipelineMetrics = NO_METRICS,
    ) -> None:
        self._uow_factory = uow_factory
        self._vectors = vectors
        self._spaces = spaces_of(vectors)
        self._keywords = keywords
        self._tokenizer = tokenizer
        self._sparse = sparse
        self._embedders = embedders
        self.tuning = tuning or SearchTuning()
        self._reranker = reranker
        self._metrics = metrics

    async def search_many(
        self,
        queries: Sequence[str],
        user_id: str,
        dataset_id: str,
        top_k: int,
        where: MetadataFilter | None = None,
    ) -> list[SearchAnswer]:
        """Answer `queries` in order, among the chunks `where` keeps; the dense model embeds
        them in one batch."""
        dense, vectors = await self._embed(queries, user_id)
        answers: list[SearchAnswer] = []
        for query, vector in zip(queries, vectors, strict=True):
            candidates = await self._candidates(
                query, (dense, vector), user_id, dataset_id, top_k, where
            )
            hits = await self._final(query, candidates, user_id, dataset_id, top_k)
            answers.append(SearchAnswer(hits, candidates.missing))
        return answers

    async def trace_many(
        self,
        queries: Sequence[str],
        user_id: str,
        dataset_id: str,
        top_k: int,
        where: MetadataFilter | None = None,
    ) -> list[SearchTrace]:
        """`search_many`, keeping every retriever's hydrated candidates (for evaluation)."""
        dense, vectors = await self._embed(queries, user_id)
        traces: list[SearchTrace] = []
        for query, vector in zip(queries, vectors, strict=True):
            candidates = await self._candidates(
                query, (dense, vector), user_id, dataset_id, top_k, where
            )
            pool = {i for ids in candidates.ids.values() for i in ids}
            hydrated = {
                h.chunk_id: h
                for h in await self._hydrate(
                    [(i, 0.0) for i in sorted(pool)], candidates, user_id, dataset_id
                )
            }
            rankings = {
                name: [attrs.evolve(hydrated[i], score=s) for i, s in hits if i in hydrated]
                for name, hits in candidates.scored.items()
            }
            rankings[FUSED] = [
                attrs.evolve(hydrated[i], score=s) for i, s in candidates.fused if i in hydrated
            ]
            final = await self._final(query, candidates, user_id, dataset_id, top_k)
            traces.append(SearchTrace(query, rankings, final, candidates.missing))
        return traces

    async def _embed(
        self, queries: Sequence[str], user_id: str
    ) -> tuple[_Dense, list[list[float] | None]]:
        """The index of the user's active generation (with its model) and the query vectors
        of that model; `None` each when the dense model or that index cannot be had or
        reached."""
        async with self._uow_factory() as uow:
            config, generation = await active_model(uow, user_id)
        if config is None:
            raise NoEmbeddingConfig(f"user {user_id} has no default EMBEDDING model")
        try:
            dense = await index_of(self._vectors, self._spaces, generation, config.dimension)
            embedder = await self._embedders.resolve(config)
            vectors = await asyncio.to_thread(embedder.embed_queries, list(queries))
            return _Dense(dense, embedder), list(vectors)
        except OUTAGES["dense"] as error:
            log.warning("search without the dense retriever: %s", error)
            return _Dense(self._vectors, None), [None] * len(queries)

    async def _candidates(
        self,
        query: str,
        dense: tuple[_Dense, list[float] | None],
        user_id: str,
        dataset_id: str,
        top_k: int,
        where: MetadataFilter | None = None,
    ) -> _Candidates:
        if not query.strip():
            return _Candidates({name: [] for name in RETRIEVERS}, [])
        tuning = self.tuning
        pool = {name: tuning.pool(name, top_k) for name in RETRIEVERS}
        sparse_query = self._sparse.encode_query(query)
        tokens = self._tokenizer.tokenize(query)
        calls: dict[str, Awaitable[Sequence[VectorHit | KeywordHit]]] = {
            "sparse": self._vectors.query_sparse(
                user_id, dataset_id, sparse_query, pool["sparse"], where
            ),
            "bm25": self._keywords.search(user_id, dataset_id, tokens, pool["bm25"], where),
        }
        model, vector = dense
        if vector is not None:
            calls["dense"] = self._dense(model, vector, user_id, dataset_id, pool["dense"], where)
        deadline = tuning.retriever_timeout
        answered = await asyncio.gather(
            *(asyncio.wait_for(call, deadline) for call in calls.values()), return_exceptions=True
        )
        found: dict[str, Sequence[VectorHit | KeywordHit]] = {}
        for name, result in zip(calls, answered, strict=True):
            if isinstance(result, TimeoutError):
                log.warning("search without the %s retriever: no answer in %s s", name, deadline)
            elif isinstance(result, OUTAGES[name]):
                log.warning("search without the %s retriever: %s", name, result)
            elif isinstance(result, BaseException):
                raise result
            else:
                found[name] = result
        missing = tuple(name for name in RETRIEVERS if name not in found)
        self._report(missing)
        scored = {name: [(h.chunk_id, h.score) for h in found.get(name, ())] for name in RETRIEVERS}
        parents = {
            h.chunk_id: h.payload.parent_id
            for name in ("dense", "sparse")
            for h in found.get(name, ())
            if isinstance(h, VectorHit)
        }
        return _Candidates(scored, fuse(scored, tuning), parents, missing)

    async def _dense(
        self,
        model: _Dense,
        vector: list[float],
        user_id: str,
        dataset_id: str,
        pool: int,
        where: MetadataFilter | None,
    ) -> list[VectorHit]:
        """The dense candidates; with feedback on, those of a second search whose query
        vector is moved towards the first search's best passages (`feedback.rocchio`)."""
        hits = await model.index.query_dense(user_id, dataset_id, vector, pool, where)
        depth = self.tuning.dense_feedback
        if not depth or model.embedder is None or not hits:
            return hits
        top = [h.chunk_id for h in hits[:depth]]
        async with self._uow_factory() as uow:
            texts = [c.text for c in await uow.chunks.get_many(user_id, dataset_id, top)]
        try:
            # the passages' own vectors: the model's cache holds them since VECTORIZING
            passages = await asyncio.to_thread(model.embedder.embed_documents, texts)
        except EmbedderError as error:  # feedback is a refinement: keep the first answer
            log.warning("dense feedback skipped: %s", describe(error))
            return hits
        moved = rocchio(vector, passages, self.tuning.feedback_weight)
        return await model.index.query_dense(user_id, dataset_id, moved, pool, where)

    def _report(self, missing: tuple[str, ...]) -> None:
        if len(missing) == len(RETRIEVERS):
            self._metrics.search_answered("unavailable", missing)
            raise SearchUnavailable(missing)
        self._metrics.search_answered("degraded" if missing else "complete", missing)

    async def _final(
        self, query: str, candidates: _Candidates, user_id: str, dataset_id: str, top_k: int
    ) -> list[SearchHit]:
        """The fused candidates through the configured steps, cut to top_k."""
        tuning = self.tuning
        steps = tuning.parent_evidence or tuning.dedupe
        reranker = self._reranker if tuning.rerank_depth > 0 else None
        reranking = reranker is not None
        if not steps and not reranking:
            return await self._hydrate(candidates.fused[:top_k], candidates, user_id, dataset_id)
        ordered = candidates.fused
        if steps:
            ordered = await self._after_fusion(candidates, user_id, dataset_id)
        depth = max(top_k, tuning.rerank_depth) if reranking else top_k
        hits = await self._hydrate(ordered[:depth], candidates, user_id, dataset_id)
        if reranker is not None:
            hits = await self._rerank(reranker, query, hits, depth)
        return hits[:top_k]

    async def _after_fusion(
        self, candidates: _Candidates, user_id: str, dataset_id: str
    ) -> list[tuple[str, float]]:
        """Parent evidence and dedupe over every fused candidate. Parent ids come from the
        vector points; only BM25-only candidates (or every one, for dedupe's texts) are read
        from the chunk rows."""
        fused, known = candidates.fused, candidates.parents
        dedupe_texts = self.tuning.dedupe
        wanted = [i for i, _ in fused if dedupe_texts or i not in known]
        rows: dict[str, ChunkRecord] = {}
        if wanted:
            async with self._uow_factory() as uow:
                rows = {
                    c.chunk_id: c for c in await uow.chunks.get_many(user_id, dataset_id, wanted)
                }
        hits = []
        for i, score in fused:
            row = rows.get(i)
            if row is not None:
                hits.append(_Scored(i, row.parent_id, row.text, score))
            elif i in known and not dedupe_texts:
                hits.append(_Scored(i, known[i], "", score))
        if self.tuning.parent_evidence:
            hits = by_parent(hits, self.tuning.sibling_bonus)
        if self.tuning.dedupe:
            hits = dedupe(hits)
        return [(h.chunk_id, h.score) for h in hits]

    async def _rerank(
        self, reranker: Reranker, query: str, hits: list[SearchHit], depth: int
    ) -> list[SearchHit]:
        head, tail = hits[:depth], hits[depth:]
        passages = [h.parent_text or h.text for h in head]
        try:
            order = await asyncio.to_thread(reranker.rerank, query, passages)
        except RerankFailed as error:  # a failing model never costs the user their hits
            log.warning("re-ranking failed, keeping the fused order: %s", describe(error))
            return hits
        picked = list(dict.fromkeys(i for i in order if 0 <= i < len(head)))
        picked += [i for i in range(len(head)) if i not in set(picked)]
        # the i-th place keeps the i-th best score: scores still fall down the list
        scores = sorted((h.score for h in head), reverse=True)
        reordered = [attrs.evolve(head[i], score=scores[place]) for place, i in enumerate(picked)]
        return reordered + tail

    async def _hydrate(
        self,
        fused: Sequence[tuple[str, float]],
        candidates: _Candidates,
        user_id: str,
        dataset_id: str,
    ) -> list[SearchHit]:
        if not fused:
            return []
        fused_scores = dict(candidates.fused)
        ranks = {
            name: {i: rank for rank, i in enumerate(ids, start=1)}
            for name, ids in candidates.ids.items()
        }
        async with self._uow_factory() as uow:
            children = {
                c.chunk_id: c
                for c in await uow.chunks.get_many(user_id, dataset_id, [i for i, _ in fused])
            }
            parent_ids = sorted({c.parent_id for c in children.values() if c.parent_id})
            parents = {
                p.chunk_id: p for p in await uow.chunks.get_many(user_id, dataset_id, parent_ids)
            }
            sources = await self._sources(uow, {c.task_id for c in children.values()})
        hits = []
        for chunk_id, score in fused:
            child = children.get(chunk_id)
            if child is None:  # indexed but since replaced: never show text we cannot vouch for
                continue
            parent = parents.get(child.parent_id) if child.parent_id else None
            hits.append(
                _hit(
                    child,
                    parent,
                    sources.get(child.task_id, ""),
                    score,
                    {name: r[chunk_id] for name, r in ranks.items() if chunk_id in r},
                    fused_scores.get(chunk_id, 0.0),
                )
            )
        return hits

    @staticmethod
    async def _sources(uow: UnitOfWork, task_ids: set[str]) -> dict[str, str]:
        names: dict[str, str] = {}
        for task_id in task_ids:
            log_row = await uow.parsed_logs.get(task_id)
            if log_row is not None and isinstance(log_row.task, ParseTaskCommand):
                names[task_id] = log_row.task.source_filename
        return names


def fuse(
    scored: Mapping[str, Sequence[tuple[str, float]]], tuning: SearchTuning
) -> list[tuple[str, float]]:
    """The retrievers' lists as one ranking, by the tuning's fusion and weights; each list is
    scaled over its own candidates (docs/retrieval.md: a common window measured worse)."""
    if tuning.fusion in ("score", "zscore"):
        return score_fusion(scored, weights=tuning.weights, standard=tuning.fusion == "zscore")
    ids = {name: [i for i, _ in hits] for name, hits in scored.items()}
    return reciprocal_rank_fusion(ids, k=tuning.rrf_k, weights=tuning.weights)


def _hit(
    child: ChunkRecord,
    parent: ChunkRecord | None,
    source: str,
    score: float,
    ranks: Mapping[str, int],
    fused_score: float,
) -> SearchHit:
    return SearchHit(
        chunk_id=child.chunk_id,
        doc_id=child.scope.doc_id,
        source=source,
        section_path=child.section_path,
        text=child.text,
        parent_text=parent.text if parent is not None else None,
        score=score,
        parent_id=child.parent_id,
        ranks=ranks,
        fused_score=fused_score,
    )
