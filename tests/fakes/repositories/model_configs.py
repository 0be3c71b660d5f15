"""In-memory default model configs (API keys in plain text: no secret to encrypt with)."""

from __future__ import annotations

from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from tests.fakes.repositories.base import FakeRepository


class FakeModelConfigs(FakeRepository):
    """Pending writes are keyed by (kind, user_id); a pending None is a delete."""

    def _get(self, kind: ModelKind, user_id: str) -> EmbeddingConfig | ChatConfig | None:
        pending = self.uow.pending_configs
        if (kind, user_id) in pending:
            return pending[kind, user_id]
        committed = self.db.configs if kind is ModelKind.EMBEDDING else self.db.chat_configs
        return committed.get(user_id)

    async def default_embedding(self, user_id: str) -> EmbeddingConfig | None:
        await self.check("model_configs.default_embedding")
        found = self._get(ModelKind.EMBEDDING, user_id)
        assert found is None or isinstance(found, EmbeddingConfig)
        return found

    async def put_default_embedding(self, config: EmbeddingConfig) -> None:
        await self.check("model_configs.put_default_embedding")
        await self.uow.lock(("config", ModelKind.EMBEDDING, config.user_id))
        self.uow.pending_configs[ModelKind.EMBEDDING, config.user_id] = config

    async def default_chat(self, user_id: str) -> ChatConfig | None:
        await self.check("model_configs.default_chat")
        found = self._get(ModelKind.CHAT, user_id)
        assert found is None or isinstance(found, ChatConfig)
        return found

    async def put_default_chat(self, config: ChatConfig) -> None:
        await self.check("model_configs.put_default_chat")
        await self.uow.lock(("config", ModelKind.CHAT, config.user_id))
        self.uow.pending_configs[ModelKind.CHAT, config.user_id] = config

    async def delete_default(self, user_id: str, kind: ModelKind) -> bool:
        await self.check("model_configs.delete_default")
        await self.uow.lock(("config", kind, user_id))
        existed = self._get(kind, user_id) is not None
        self.uow.pending_configs[kind, user_id] = None
        return existed
