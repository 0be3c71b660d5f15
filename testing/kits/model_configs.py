"""Contract kit for the model-config repository (`uow.model_configs`).

- `ModelConfigRepositoryContract`: default EMBEDDING and CHAT configs round-trip, are
  replaced and deleted. Fixture: `uow_factory`.
- `EncryptedApiKeysContract`: API keys are stored encrypted and a wrong secret fails
  clearly. Fixtures: `uow_factory`, `other_key_uow_factory` (the SAME database, another
  secret), `stored_api_key` (async user_id -> the raw stored api-key column)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import pytest

from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.testing.kits.persistence import (
    StoreContract,
    uid,
)

StoredApiKey = Callable[[str], Awaitable[str | None]]


class ModelConfigRepositoryContract(StoreContract):
    """What every ModelConfigRepository must show; fixture `uow_factory`."""

    async def test_default_embedding_round_trip_and_replace(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("user")
        first = EmbeddingConfig(
            user,
            "openai",
            "text-embedding-3-small",
            1536,
            "https://api.example.com/v1",
            "sk-first-秘密",
        )
        second = EmbeddingConfig(user, "local", "bge-m3", 1024, None, None)
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) is None
            await uow.model_configs.put_default_embedding(first)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) == first
            await uow.model_configs.put_default_embedding(second)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) == second
            assert await uow.model_configs.default_embedding(uid("user")) is None
        assert "sk-first" not in repr(first)

    async def test_default_chat_round_trip_replace_and_delete(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("user")
        chat = ChatConfig(user, "openai", "gpt-4o-mini", "https://api.example.com/v1", "sk-聊天")
        embedding = EmbeddingConfig(user, "openai", "text-embedding-3-small", 1536, None, "sk-e")
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) is None
            await uow.model_configs.put_default_chat(chat)
            await uow.model_configs.put_default_embedding(embedding)
            await uow.commit()
        replaced = ChatConfig(user, "local", "qwen2.5-7b", None, None)
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == chat
            assert await uow.model_configs.default_embedding(user) == embedding
            await uow.model_configs.put_default_chat(replaced)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == replaced
            assert await uow.model_configs.delete_default(user, ModelKind.CHAT) is True
            if not self.serializes_transactions:  # uncommitted: another unit still sees it
                async with uow_factory() as other:
                    assert await other.model_configs.default_chat(user) == replaced
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) is None
            assert await uow.model_configs.default_embedding(user) == embedding
            assert await uow.model_configs.delete_default(user, ModelKind.CHAT) is False
            assert await uow.model_configs.delete_default(user, ModelKind.EMBEDDING) is True
            await uow.rollback()  # the delete is undone
            assert await uow.model_configs.default_embedding(user) == embedding
            assert await uow.model_configs.delete_default(user, ModelKind.EMBEDDING) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) is None
            await uow.model_configs.put_default_chat(chat)  # a deleted default can come back
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == chat
        assert "sk-" not in repr(chat)


class EncryptedApiKeysContract(StoreContract):
    """Capability: API keys are encrypted at rest, and units of work holding a different
    secret fail clearly instead of returning garbage. Needs `uow_factory` (from the base
    contract) plus the two fixtures below."""

    @pytest.fixture
    def other_key_uow_factory(self) -> UnitOfWorkFactory:
        raise NotImplementedError("subclass: same database, a different API-key secret")

    @pytest.fixture
    def stored_api_key(self) -> StoredApiKey:
        raise NotImplementedError("subclass: read the raw stored api-key column")

    async def test_api_key_is_encrypted_at_rest_and_a_wrong_key_fails_clearly(
        self,
        uow_factory: UnitOfWorkFactory,
        other_key_uow_factory: UnitOfWorkFactory,
        stored_api_key: StoredApiKey,
    ) -> None:
        user = uid("user")
        plaintext = "sk-live-" + uuid.uuid4().hex
        config = EmbeddingConfig(user, "openai", "text-embedding-3-large", 3072, None, plaintext)
        async with uow_factory() as uow:
            await uow.model_configs.put_default_embedding(config)
            await uow.commit()
        raw = await stored_api_key(user)
        assert raw is not None and raw != ""
        assert plaintext not in raw
        assert plaintext[8:] not in raw
        async with other_key_uow_factory() as uow:
            with pytest.raises(PersistenceError) as raised:
                await uow.model_configs.default_embedding(user)
        assert plaintext not in str(raised.value)
        assert "key" in str(raised.value).lower()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) == config

    async def test_chat_api_key_is_encrypted_at_rest_too(
        self,
        uow_factory: UnitOfWorkFactory,
        other_key_uow_factory: UnitOfWorkFactory,
        stored_api_key: StoredApiKey,
    ) -> None:
        user = uid("user")
        plaintext = "sk-chat-" + uuid.uuid4().hex
        config = ChatConfig(user, "openai", "gpt-4o", None, plaintext)
        async with uow_factory() as uow:
            await uow.model_configs.put_default_chat(config)
            await uow.commit()
        raw = await stored_api_key(user)
        assert raw is not None and plaintext not in raw and plaintext[8:] not in raw
        async with other_key_uow_factory() as uow:
            with pytest.raises(PersistenceError) as raised:
                await uow.model_configs.default_chat(user)
        assert plaintext not in str(raised.value)
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == config
