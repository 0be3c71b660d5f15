"""ManageModelConfigs: set, show and delete a user's default EMBEDDING and CHAT configs.

The API key is write-only: what the use case returns (`ModelConfigView`) says only whether
one is stored (`api_key_set`), never the key; storage keeps it encrypted. Setting a config
without a key keeps the stored key unless `clear_api_key` is asked.

The dimension guard (docs/design/0001-pipeline-contract.md: a model whose output dimension differs
from the collection's fails with EMBEDDING_DIMENSION_UNSUPPORTED): a user whose child chunks may
have dense vectors stored (`chunks.count_user_vectors`) cannot switch the EMBEDDING config to
another dimension, nor delete it (the next config could then name any dimension): their vectors were
written with the current dimension, and search and every resumed run would embed with the new one.
Delete the user's documents first (DeleteDocument), then change the model and ingest again.
Vectors and the config are checked in the same unit of work as the write.

An EMBEDDING config is probed before it is stored (`EmbedderResolver.probe`: one text, once):
a model that cannot be built or reached, or whose vectors have another length than
`dimension`, is refused (ModelUnusable, HTTP 422) instead of failing every run later with
LLM_CONFIG_MISSING or EMBEDDING_DIMENSION_UNSUPPORTED. The probe runs outside any unit of
work (it may wait on the network), after the dimension guard has had its say.
"""

from __future__ import annotations

import attrs

from ragline.application.ports.embedder import EmbedderUnavailable, EmbeddingDimensionMismatch
from ragline.application.ports.embedder_resolver import EmbedderResolver, UnusableEmbeddingConfig
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory

PROVIDER_MAX, MODEL_MAX, BASE_URL_MAX, API_KEY_MAX = 64, 255, 1024, 4096


class ModelConfigRefused(ValueError):
    """The config cannot be stored (invalid field, or the dimension guard)."""


class DimensionChangeRefused(ModelConfigRefused):
    """The user has vectors of the current dimension (docs/design/0001-pipeline-contract.md)."""


class ModelUnusable(ModelConfigRefused):
    """The probe of the model failed: `field` is `dimension` (the model returns vectors of
    another length) or `model` (it cannot be built or reached as configured)."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


@attrs.frozen
class ModelConfigView:
    """A stored config as it may be shown: never the API key."""

    kind: ModelKind
    user_id: str
    provider: str
    model: str
    base_url: str | None
    dimension: int | None
    api_key_set: bool


@attrs.frozen
class UserModelConfigs:
    user_id: str
    embedding: ModelConfigView | None
    chat: ModelConfigView | None


def view_of(config: EmbeddingConfig | ChatConfig) -> ModelConfigView:
    if isinstance(config, EmbeddingConfig):
        kind, dimension = ModelKind.EMBEDDING, config.dimension
    else:
        kind, dimension = ModelKind.CHAT, None
    return ModelConfigView(
        kind,
        config.user_id,
        config.provider,
        config.model,
        config.base_url,
        dimension,
        bool(config.api_key),
    )


def _check_text(name: str, value: str | None, limit: int, *, required: bool) -> None:
    if value is None or value == "":
        if required:
            raise ModelConfigRefused(f"{name} is required")
        return
    if value != value.strip() or len(value) > limit:
        raise ModelConfigRefused(f"{name} must be at most {limit} characters, no outer spaces")


def _check(config: EmbeddingConfig | ChatConfig) -> None:
    _check_text("user_id", config.user_id, 64, required=True)
    _check_text("provider", config.provider, PROVIDER_MAX, required=True)
    _check_text("model", config.model, MODEL_MAX, required=True)
    _check_text("base_url", config.base_url, BASE_URL_MAX, required=False)
    if config.api_key is not None and len(config.api_key) > API_KEY_MAX:
        raise ModelConfigRefused(f"api_key must be at most {API_KEY_MAX} characters")
    if isinstance(config, EmbeddingConfig) and not 1 <= config.dimension <= 65536:
        raise ModelConfigRefused("dimension must be between 1 and 65536")


def _switch(current: EmbeddingConfig, config: EmbeddingConfig) -> str:
    return f"switching from dimension {current.dimension} to {config.dimension}"


async def _guard_vectors(uow: UnitOfWork, user_id: str, what: str) -> None:
    vectors = await uow.chunks.count_user_vectors(user_id)
    if vectors:
        raise DimensionChangeRefused(
            f"user {user_id} has {vectors} indexed chunks of the current embedding dimension; "
            f"{what} would leave them unsearchable (EMBEDDING_DIMENSION_UNSUPPORTED): "
            "delete the user's documents first, then change the model and ingest again"
        )


class ManageModelConfigs:
    def __init__(self, uow_factory: UnitOfWorkFactory, embedders: EmbedderResolver) -> None:
        self._uow_factory = uow_factory
        self._embedders = embedders

    async def set_embedding(
        self, config: EmbeddingConfig, *, clear_api_key: bool = False
    ) -> ModelConfigView:
        _check(config)
        async with self._uow_factory() as uow:
            current = await uow.model_configs.default_embedding(config.user_id)
            if current is not None and current.dimension != config.dimension:
                await _guard_vectors(uow, config.user_id, _switch(current, config))
        if config.api_key is None and not clear_api_key and current is not None:
            config = attrs.evolve(config, api_key=current.api_key)
        await self._probe(config)
        async with self._uow_factory() as uow:
            current = await uow.model_configs.default_embedding(config.user_id)
            if current is not None and current.dimension != config.dimension:
                await _guard_vectors(uow, config.user_id, _switch(current, config))
            await uow.model_configs.put_default_embedding(config)
            await uow.commit()
        return view_of(config)

    async def _probe(self, config: EmbeddingConfig) -> None:
        """Refuse a model that cannot give this config's vectors (what is wrong, no key)."""
        try:
            dimension = await self._embedders.probe(config)
        except EmbeddingDimensionMismatch as error:  # a model that checks its own output
            dimension = error.actual
        except UnusableEmbeddingConfig as error:
            raise ModelUnusable("model", f"{config.provider} {config.model}: {error}") from None
        except EmbedderUnavailable as error:
            raise ModelUnusable(
                "model", f"{config.provider} {config.model} cannot be reached: {error}"
            ) from None
        if dimension != config.dimension:
            raise ModelUnusable(
                "dimension",
                f"{config.dimension} given, but {config.provider} {config.model} returns "
                f"{dimension}-dimensional vectors",
            )

    async def set_chat(self, config: ChatConfig, *, clear_api_key: bool = False) -> ModelConfigView:
        _check(config)
        async with self._uow_factory() as uow:
            current = await uow.model_configs.default_chat(config.user_id)
            if config.api_key is None and not clear_api_key and current is not None:
                config = attrs.evolve(config, api_key=current.api_key)
            await uow.model_configs.put_default_chat(config)
            await uow.commit()
        return view_of(config)

    async def show(self, user_id: str) -> UserModelConfigs:
        async with self._uow_factory() as uow:
            embedding = await uow.model_configs.default_embedding(user_id)
            chat = await uow.model_configs.default_chat(user_id)
        return UserModelConfigs(
            user_id,
            None if embedding is None else view_of(embedding),
            None if chat is None else view_of(chat),
        )

    async def delete(self, user_id: str, kind: ModelKind) -> bool:
        """True iff a config was deleted (deleting a missing one is not an error)."""
        async with self._uow_factory() as uow:
            if kind is ModelKind.EMBEDDING:
                await _guard_vectors(uow, user_id, "deleting the EMBEDDING config")
            deleted = await uow.model_configs.delete_default(user_id, kind)
            await uow.commit()
        return deleted
