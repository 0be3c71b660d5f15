"""Per-user default model configs (EMBEDDING, CHAT): set, show, delete.

Writes need a token that may configure models (a service `*` token, or the open loopback
mode); a user token may read its own configs, and another user's are not found (404). The
API key is write-only: responses only say `api_key_set`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, HTTPException, Path, status

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
    ModelConfigRefused,
    ModelConfigView,
    UserModelConfigs,
)

CONFLICT: dict[int | str, dict[str, object]] = {
    409: {
        "model": Problem,
        "content": {"application/problem+json": {}},
        "description": "The user's vectors have another dimension",
    }
}

router = APIRouter(
    prefix="/api/v1/users/{user_id}/model-configs",
    tags=["model configs"],
    responses=PROBLEM_RESPONSES,
)

UserId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[^\s/]+$", examples=["1001"])]
NOT_FOUND = "no such user"


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


async def _stored(call: Awaitable[ModelConfigView]) -> ModelConfigView:
    try:
        view: ModelConfigView = await call
    except DimensionChangeRefused as error:
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


@router.put("/embedding", response_model=ModelConfigOut, responses=CONFLICT)
async def set_embedding_config(
    cases: UseCasesDep,
    user_id: UserId,
    body: Annotated[
        EmbeddingConfigIn, Body(openapi_examples={"bundled model": {"value": BUNDLED_EMBEDDING}})
    ],
    caller: Annotated[Principal, Depends(principal)],
) -> ModelConfigOut:
    """Set the user's default EMBEDDING config. The model is probed first (one text,
    once): 422 naming what is wrong (`model: ... cannot be reached: ...`, `dimension: 999
    given, but ... returns 384-dimensional vectors`) when it cannot give this config's
    vectors. 409 when the user has indexed vectors and the dimension changes (delete the
    user's documents first)."""
    _may_write(caller, user_id)
    manage = await cases.model_configs()
    config = EmbeddingConfig(
        user_id, body.provider, body.model, body.dimension, body.base_url, body.api_key
    )
    return _view(await _stored(manage.set_embedding(config, clear_api_key=body.clear_api_key)))


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


@router.delete("/{kind}", response_model=Deleted, responses=CONFLICT)
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
