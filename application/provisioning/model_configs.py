"""ManageModelConfigs: set, show and delete a user's default EMBEDDING and CHAT configs.

The API key is write-only: what the use case returns (`ModelConfigView`) says only whether
one is stored (`api_key_set`), never the key; storage keeps it encrypted. Setting a config
without a key keeps the stored key unless `clear_api_key` is asked.

Changing the vector space (issue 21): a user whose child chunks may have dense vectors stored
(`chunks.count_user_vectors`) keeps them in one space, that of one (provider, model, dimension).
A config naming the same space (only base_url or the key change) is stored as always. Another
model or dimension is a re-embedding: without `reembed` it is refused (ReembeddingRequired, HTTP
409, saying to pass it); with `reembed` the model is probed and a re-embedding planned
(`Reembeddings.plan`): the user's default config stays as it is until the swap's transaction
makes the target the default, so search and new runs keep one space throughout. A user without
vectors just gets the new config. The user's "current" model is the stored default, else the
settings' default (`DefaultEmbedding`), which embedded mode would provision. Deleting the
EMBEDDING config stays refused while vectors exist (the next config could then name any space).
Vectors and the config are checked in the same unit of work as the write.

An EMBEDDING config is probed before it is stored (`EmbedderResolver.probe`: one text, once):
a model that cannot be built or reached, or whose vectors have another length than
`dimension`, is refused (ModelUnusable, HTTP 422) instead of failing every run later with
LLM_CONFIG_MISSING or EMBEDDING_DIMENSION_UNSUPPORTED. The probe runs outside any unit of
work (it may wait on the network), after the dimension guard has had its say.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import attrs

from ragline.application.ports.clock import Clock
from ragline.application.ports.embedder import EmbedderUnavailable, EmbeddingDimensionMismatch
from ragline.application.ports.embedder_resolver import EmbedderResolver, UnusableEmbeddingConfig
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.application.provisioning.embedding import DefaultEmbedding
from ragline.application.reembedding import AlreadyReembedding, Reembeddings

PROVIDER_MAX, MODEL_MAX, BASE_URL_MAX, API_KEY_MAX = 64, 255, 1024, 4096


class ModelConfigRefused(ValueError):
    """The config cannot be stored (invalid field, or the dimension guard)."""


class DimensionChangeRefused(ModelConfigRefused):
    """The user has vectors of the current model (docs/design/0001-pipeline-contract.md)."""


class ReembeddingRequired(DimensionChangeRefused):
    """Another model or dimension while the user has vectors: pass `reembed` to plan the copy
    (HTTP 409, as the refusal it replaces)."""


class ReembeddingUnavailable(ModelConfigRefused):
    """The change needs a re-embedding that cannot be planned now (one is already under way,
    or this process cannot run them); HTTP 409."""


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
class EmbeddingChange:
    """What `set_embedding` did: `view` is the config stored now, or, when `reembedding_id`
    is set, the target the re-embedding will make the default at its swap."""

    view: ModelConfigView
    reembedding_id: str | None = None


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


def same_space(current: EmbeddingConfig, config: EmbeddingConfig) -> bool:
    """One vector space: the same provider, model and dimension (base_url, key may differ)."""
    return (current.provider, current.model, current.dimension) == (
        config.provider,
        config.model,
        config.dimension,
    )


def _switch(current: EmbeddingConfig, config: EmbeddingConfig) -> str:
    return (
        f"switching from {current.provider} {current.model} ({current.dimension} dimensions) "
        f"to {config.provider} {config.model} ({config.dimension})"
    )


async def _guard_vectors(uow: UnitOfWork, user_id: str, what: str) -> None:
    vectors = await uow.chunks.count_user_vectors(user_id)
    if vectors:
        raise DimensionChangeRefused(
            f"user {user_id} has {vectors} indexed chunks of the current embedding model; "
            f"{what} would leave them unsearchable (EMBEDDING_DIMENSION_UNSUPPORTED): "
            "delete the user's documents first, then change the model and ingest again"
        )


def _reembedding_required(user_id: str, vectors: int, what: str) -> ReembeddingRequired:
    return ReembeddingRequired(
        f"user {user_id} has {vectors} indexed chunks of the current embedding model; "
        f"{what} re-embeds them into a new vector space: pass reembed (HTTP: "
        '"reembed": true; CLI: --reembed) to plan it, search keeps answering from the '
        "current model until the swap"
    )


class ManageModelConfigs:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        embedders: EmbedderResolver,
        reembeddings: Reembeddings | None = None,
        *,
        clock: Clock | None = None,
        default: DefaultEmbedding | None = None,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self._uow_factory = uow_factory
        self._embedders = embedders
        self._reembeddings = reembeddings
        self._clock = clock
        self._default = default
        self._new_id = new_id

    async def _current(self, uow: UnitOfWork, user_id: str) -> EmbeddingConfig | None:
        """The user's current model: the stored default, else the settings' default."""
        stored = await uow.model_configs.default_embedding(user_id)
        if stored is not None or self._default is None:
            return stored
        try:
            return self._default.for_user(user_id)
        except UnusableEmbeddingConfig:
            return None

    async def _vectors_in_another_space(self, config: EmbeddingConfig) -> tuple[int, str, int]:
        """(vectors, what the switch is, the current dimension); vectors 0: no re-embedding."""
        async with self._uow_factory() as uow:
            current = await self._current(uow, config.user_id)
            if current is None or same_space(current, config):
                return 0, "", 0
            vectors = await uow.chunks.count_user_vectors(config.user_id)
        return vectors, _switch(current, config), current.dimension

    async def set_embedding(
        self, config: EmbeddingConfig, *, clear_api_key: bool = False, reembed: bool = False
    ) -> EmbeddingChange:
        _check(config)
        vectors, what, _ = await self._vectors_in_another_space(config)
        if vectors and not reembed:
            raise _reembedding_required(config.user_id, vectors, what)
        async with self._uow_factory() as uow:
            stored = await uow.model_configs.default_embedding(config.user_id)
        if config.api_key is None and not clear_api_key and stored is not None:
            config = attrs.evolve(config, api_key=stored.api_key)
        await self._probe(config)
        vectors, what, source_dimension = await self._vectors_in_another_space(config)
        if vectors:
            if not reembed:  # vectors landed while the model was probed
                raise _reembedding_required(config.user_id, vectors, what)
            return await self._plan(config, source_dimension)
        async with self._uow_factory() as uow:
            current = await self._current(uow, config.user_id)
            if current is not None and not same_space(current, config):
                vectors = await uow.chunks.count_user_vectors(config.user_id)
                if vectors:  # the first vectors landed since the check: refuse, do not mix
                    raise _reembedding_required(config.user_id, vectors, _switch(current, config))
            await uow.model_configs.put_default_embedding(config)
            await uow.commit()
        return EmbeddingChange(view_of(config))

    async def _plan(self, config: EmbeddingConfig, source_dimension: int) -> EmbeddingChange:
        if self._reembeddings is None or self._clock is None:
            raise ReembeddingUnavailable("this process cannot plan re-embeddings")
        try:
            item = await self._reembeddings.plan(
                self._new_id(),
                config.user_id,
                config,
                self._clock.now(),
                source_dimension=source_dimension,
            )
        except AlreadyReembedding as error:
            raise ReembeddingUnavailable(
                f"{error}: cancel it (`ragline models reembed cancel ID`) or wait for its swap"
            ) from None
        return EmbeddingChange(view_of(config), item.id)

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
