"""Search what was indexed: dense + sparse + BM25 fused, as `ragline search --json`."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request, status

from ragline.adapters.http.auth import Principal, principal
from ragline.adapters.http.container_calls import use_case
from ragline.adapters.http.problems import PROBLEM_JSON, PROBLEM_RESPONSES, Problem
from ragline.adapters.http.schemas import Hit, SearchAnswer, SearchRequest
from ragline.application.pipeline.errors import describe
from ragline.application.ports.embedder import EmbedderUnavailable
from ragline.application.search.use_case import NoEmbeddingConfig, SearchHit

router = APIRouter(prefix="/api/v1", tags=["search"], responses=PROBLEM_RESPONSES)

log = logging.getLogger("ragline.http")

OVERFETCH = 4
"""With a doc_ids filter, each dataset is asked for this many times top_k before filtering."""


MODEL_DOWN: dict[int | str, dict[str, Any]] = {
    503: {
        "model": Problem,
        "content": {PROBLEM_JSON: {}},
        "description": "The user's embedding model did not answer",
    }
}


@router.post("/search", response_model=SearchAnswer, responses=MODEL_DOWN)
async def search(
    request: Request, asked: SearchRequest, caller: Annotated[Principal, Depends(principal)]
) -> SearchAnswer:
    """Child hits with their parent text, section path and source, best first, from the
    caller's datasets (a user token searches its own user's data whatever `user_id` says).
    503 when the user's embedding model does not answer (the reason is logged, masked)."""
    user = caller.acting_user(asked.user_id)
    hybrid_search = await use_case(request, "hybrid_search")
    wanted = set(asked.doc_ids) if asked.doc_ids else None
    depth = asked.top_k * OVERFETCH if wanted else asked.top_k
    hits: list[Hit] = []
    for dataset in dict.fromkeys(asked.dataset_ids):
        try:
            answers: list[list[SearchHit]] = await hybrid_search.search_many(
                [asked.query], user, str(dataset), depth
            )
        except NoEmbeddingConfig:  # nothing of this user's was ever embedded
            return SearchAnswer(hits=[])
        except EmbedderUnavailable as error:  # the model server's text may name internal hosts
            log.warning("search: the embedding model did not answer: %s", describe(error))
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "the embedding model did not answer; try again later",
            ) from None
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
            for h in answers[0]
            if wanted is None or h.doc_id in wanted
        ]
    hits.sort(key=lambda h: h.score, reverse=True)
    return SearchAnswer(hits=hits[: asked.top_k])
