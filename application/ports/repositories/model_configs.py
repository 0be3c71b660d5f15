"""A user's default models (EMBEDDING, CHAT), their API keys kept secret."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

import attrs

from ragline.application.secrets import remember_secrets


@attrs.frozen
class EmbeddingConfig:
    """A user's default EMBEDDING model. `api_key` is plaintext here only: storage keeps it
    encrypted at rest and it is never logged (`repr=False`); a config holding one teaches the
    process's secret mask that key, so no text ragline forms can carry it."""

    user_id: str
    provider: str
    model: str
    dimension: int
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        remember_secrets(self.api_key)


class ModelKind(StrEnum):
    EMBEDDING = "EMBEDDING"
    CHAT = "CHAT"


@attrs.frozen
class ChatConfig:
    """A user's default CHAT model (no dimension). `api_key` as in EmbeddingConfig."""

    user_id: str
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        remember_secrets(self.api_key)


class ModelConfigRepository(Protocol):
    async def default_embedding(self, user_id: str) -> EmbeddingConfig | None: ...

    async def put_default_embedding(self, config: EmbeddingConfig) -> None:
        """Insert or replace the user's default EMBEDDING config."""
        ...

    async def default_chat(self, user_id: str) -> ChatConfig | None: ...

    async def put_default_chat(self, config: ChatConfig) -> None:
        """Insert or replace the user's default CHAT config."""
        ...

    async def delete_default(self, user_id: str, kind: ModelKind) -> bool:
        """Delete the user's default config of `kind`; True iff a row was deleted."""
        ...
