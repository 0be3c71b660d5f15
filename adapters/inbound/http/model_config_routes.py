"""Per-user default model configs (EMBEDDING, CHAT): set, show, delete.

Writes need a token that may configure models (a service `*` token, or the open loopback
mode); a user token may read its own configs, and another user's are not found (404). The
API key is write-only: responses only say `api_key_set`.

Changing the EMBEDDING model or dimension of a user who has vectors is a re-embedding
(issue 21): 409 unless the body says `"reembed": true`, then 202 with the re-embedding's id
and `Location: /api/v1/reembeddings/{id}`; the config becomes the default at the swap.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Literal, TypeVar

from fastapi import APIRouter, Body, Depends, HTTPException, Path, Response, status
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES, Problem
from ragline.adapters.inbound.http.schemas import (
    BUNDLED_EMBEDDING,
    ChatConfigIn,
    Deleted,
    EmbeddingConfigIn,
    ModelConfigOut,
    UserModelConfigsOut,
)
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from ragline.application.provisioning import (
    DimensionChangeRefused,
    EmbeddingChange,
    ModelConfigRefused,
    ModelConfigView,
    ReembeddingUnavailable,
    UserModelConfigs,
)


def _conflict(description: str) -> dict[int | str, dict[str, object]]:
    return {
        409: {
            "model": Problem,
            "content": {"application/problem+json": {}},
            "description": description,
        }
    }


CONFLICT = _conflict(
    "The user has vectors of the current model: another model or dimension needs "
    "`reembed` (or a re-embedding is already under way)"
)
HAS_VECTORS = _conflict("The user has indexed vectors")


class EmbeddingChangeIn(EmbeddingConfigIn):
    """The EMBEDDING config; `reembed` allows a change of model or dimension while the user
    has vectors: the chunks are re-embedded into a new generation, swapped in when complete."""

    reembed: bool = Field(
        False, description="re-embed the user's chunks if the model or dimension changes"
    )


class ReembeddingPlanned(BaseModel):
    """The config needs a re-embedding, now planned: follow it at `Location`."""

    reembedding_id: str = Field(examples=["5f0c8d1e2b3a4c5d6e7f8091a2b3c4d5"])
    status: Literal["PLANNED"] = "PLANNED"


PLANNED: dict[int | str, dict[str, object]] = {
    202: {
        "model": ReembeddingPlanned,
        "description": "Another model or dimension with `reembed`: a re-embedding is planned "
        "(`Location: /api/v1/reembeddings/{id}`); the config becomes the default at its swap",
        "headers": {
            "Location": {
                "description": "The re-embedding: GET it for progress",
                "schema": {"type": "string"},
            }
        },
    }
}
REEMBED_EXAMPLE = {
    "provider": "openai",
    "model": "text-embedding-3-large",
    "dimension": 3072,
    "base_url": "https://api.openai.com/v1",
    "reembed": True,
}

router = APIRouter(
    prefix="/api/v1/users/{user_id}/model-configs",
    tags=["model configs"],
    responses=PROBLEM_RESPONSES,
)

UserId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[^\s/]+$", examples=["1001"])]
NOT_FOUND = "no such user"
T = TypeVar("T")


def _view(view: ModelConfigView) -> ModelConfigOut:
    return ModelConfigOut(
        kind=view.kind.value,
        user_id=view.user_id,
        provider=view.provider,
        model=view.model,
        base_url=view.base_url,
        dimension=view.dimension,
        api_key_set=view.api_key_set,
    )


def _may_write(caller: Principal, user_id: str) -> None:
    if not caller.may_configure_models:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "model configs need a service token")
    if not caller.may_see(user_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND)


async def _stored(call: Awaitable[T]) -> T:
    try:
        view: T = await call
    except (DimensionChangeRefused, ReembeddingUnavailable) as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    except ModelConfigRefused as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    return view


@router.get("", response_model=UserModelConfigsOut)
async def show_model_configs(
    cases: UseCasesDep,
    user_id: UserId,
    caller: Annotated[Principal, Depends(principal)],
) -> UserModelConfigsOut:
    """The user's default EMBEDDING and CHAT configs (null when not set), without API keys."""
    if not caller.may_see(user_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND)
    manage = await cases.model_configs()
    shown: UserModelConfigs = await manage.show(user_id)
    return UserModelConfigsOut(
        user_id=shown.user_id,
        embedding=None if shown.embedding is None else _view(shown.embedding),
        chat=None if shown.chat is None else _view(shown.chat),
    )


@router.put("/embedding", response_model=ModelConfigOut, responses={**PLANNED, **CONFLICT})
async def set_embedding_config(
    cases: UseCasesDep,
    user_id: UserId,
    body: Annotated[
        EmbeddingChangeIn,
        Body(
            openapi_examples={
                "bundled model": {"value": BUNDLED_EMBEDDING},
                "another model, re-embedding the user's chunks": {"value": REEMBED_EXAMPLE},
            }
        ),
    ],
    caller: Annotated[Principal, Depends(principal)],
) -> Response | ModelConfigOut:
    """Set the user's default EMBEDDING config. The model is probed first (one text,
    once): 422 naming what is wrong (`model: ... cannot be reached: ...`, `dimension: 999
    given, but ... returns 384-dimensional vectors`) when it cannot give this config's
    vectors. While the user has indexed vectors, another model or dimension is a
    re-embedding: 409 without `"reembed": true` (or while one is under way); with it, 202
    and the re-embedding's id (`Location: /api/v1/reembeddings/{id}`): search keeps the
    current model until the swap makes this config the default. The same model with another
    base_url or key is stored at once (200)."""
    _may_write(caller, user_id)
    manage = await cases.model_configs()
    config = EmbeddingConfig(
        user_id, body.provider, body.model, body.dimension, body.base_url, body.api_key
    )
    change: EmbeddingChange = await _stored(
        manage.set_embedding(config, clear_api_key=body.clear_api_key, reembed=body.reembed)
    )
    if change.reembedding_id is None:
        return _view(change.view)
    planned = ReembeddingPlanned(reembedding_id=change.reembedding_id)
    return JSONResponse(
        planned.model_dump(),
        status_code=status.HTTP_202_ACCEPTED,
        headers={"Location": f"/api/v1/reembeddings/{change.reembedding_id}"},
    )


@router.put("/chat", response_model=ModelConfigOut)
async def set_chat_config(
    cases: UseCasesDep,
    user_id: UserId,
    body: ChatConfigIn,
    caller: Annotated[Principal, Depends(principal)],
) -> ModelConfigOut:
    """Set the user's default CHAT config."""
    _may_write(caller, user_id)
    manage = await cases.model_configs()
    config = ChatConfig(user_id, body.provider, body.model, body.base_url, body.api_key)
    return _view(await _stored(manage.set_chat(config, clear_api_key=body.clear_api_key)))


@router.delete("/{kind}", response_model=Deleted, responses=HAS_VECTORS)
async def delete_model_config(
    cases: UseCasesDep,
    user_id: UserId,
    kind: Annotated[Literal["embedding", "chat"], Path(examples=["chat"])],
    caller: Annotated[Principal, Depends(principal)],
) -> Deleted:
    """Delete the user's default config of `kind` (`deleted: false` when there was none).
    409 for EMBEDDING while the user has indexed vectors."""
    _may_write(caller, user_id)
    manage = await cases.model_configs()
    try:
        deleted: bool = await manage.delete(user_id, ModelKind(kind.upper()))
    except DimensionChangeRefused as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    return Deleted(deleted=deleted)
