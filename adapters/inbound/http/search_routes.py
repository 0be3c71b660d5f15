"""Search what was indexed: dense + sparse + BM25 fused, as `ragline search --json`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, status

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES, UNAVAILABLE_RESPONSE
from ragline.adapters.inbound.http.schemas import Hit, SearchAnswer, SearchRequest
from ragline.application.search.tuning import RETRIEVERS
from ragline.application.search.use_case import NoEmbeddingConfig
from ragline.domain.metadata import MetadataError, MetadataFilter, filter_from_plain

router = APIRouter(
    prefix="/api/v1", tags=["search"], responses={**PROBLEM_RESPONSES, **UNAVAILABLE_RESPONSE}
)

OVERFETCH = 4
"""With a doc_ids filter, each dataset is asked for this many times top_k before filtering."""


@router.post("/search", response_model=SearchAnswer)
async def search(
    cases: UseCasesDep,
    asked: SearchRequest,
    caller: Annotated[Principal, Depends(principal)],
) -> SearchAnswer:
    """Child hits with their parent text, section path and source, best first, from the
    caller's datasets (a user token searches its own user's data whatever `user_id` says).
    A retriever whose engine is down is left out and named in `degraded`; with none
    answering, 503. `filter` keeps only chunks of documents whose metadata matches, inside
    every retriever (422 when it is malformed)."""
    user = caller.acting_user(asked.user_id)
    where: MetadataFilter | None = None
    if asked.filter is not None:
        try:
            where = filter_from_plain(asked.filter)
        except MetadataError as error:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    hybrid_search = await cases.hybrid_search()
    wanted = set(asked.doc_ids) if asked.doc_ids else None
    depth = asked.top_k * OVERFETCH if wanted else asked.top_k
    hits: list[Hit] = []
    degraded: set[str] = set()
    for dataset in dict.fromkeys(asked.dataset_ids):
        try:  # SearchUnavailable: a 503 problem (problems.install)
            [answer] = await hybrid_search.search_many(
                [asked.query], user, str(dataset), depth, where
            )
        except NoEmbeddingConfig:  # nothing of this user's was ever embedded
            return SearchAnswer(hits=[])
        degraded.update(answer.degraded)
        hits += [
            Hit(
                chunk_id=h.chunk_id,
                doc_id=h.doc_id,
                dataset_id=str(dataset),
                source=h.source,
                section_path=list(h.section_path),
                text=h.text,
                parent_text=h.parent_text,
                score=h.score,
            )
            for h in answer.hits
            if wanted is None or h.doc_id in wanted
        ]
    hits.sort(key=lambda h: h.score, reverse=True)
    return SearchAnswer(
        hits=hits[: asked.top_k], degraded=[name for name in RETRIEVERS if name in degraded]
    )
