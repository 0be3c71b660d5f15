"""DefaultEmbedding and ProvisionEmbedding: the model embedded mode provisions per user.

A business deployment stores per-user configs (an OpenAI-compatible provider with an
encrypted API key); a laptop has none, so the first `ragline ingest` of a user stores the
default the settings name. Nothing else provisions: a worker or the HTTP API answers a user
without a config LLM_CONFIG_MISSING (docs/design/0001-pipeline-contract.md: EMBEDDING is required,
no system fallback on the write path), so the business side asks its user to configure a model.
"""

from __future__ import annotations

import attrs

from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.unit_of_work import UnitOfWorkFactory


@attrs.frozen
class DefaultEmbedding:
    """The EMBEDDING config a user without one gets. `api_key` is never shown."""

    provider: str
    model: str | None
    dimension: int
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)

    def for_user(self, user_id: str) -> EmbeddingConfig:
        if self.provider == "openai" and not (self.base_url and self.model):
            raise UnusableEmbeddingConfig(
                "RAGLINE_EMBEDDER=openai needs RAGLINE_EMBEDDING_BASE_URL and _MODEL"
            )
        if not self.model:
            raise UnusableEmbeddingConfig(f"the {self.provider} embedder names no model")
        return EmbeddingConfig(
            user_id, self.provider, self.model, self.dimension, self.base_url, self.api_key
        )


class ProvisionEmbedding:
    """Store the default EMBEDDING config for a user who has none (an existing config, even
    one naming another model, is kept)."""

    def __init__(self, uow_factory: UnitOfWorkFactory, default: DefaultEmbedding) -> None:
        self._uow_factory = uow_factory
        self._default = default

    async def __call__(self, user_id: str) -> None:
        async with self._uow_factory() as uow:
            if await uow.model_configs.default_embedding(user_id) is None:
                await uow.model_configs.put_default_embedding(self._default.for_user(user_id))
                await uow.commit()
