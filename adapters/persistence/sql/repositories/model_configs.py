"""model_config: per-user model settings; the API key is stored only as a Fernet token."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Select, bindparam, delete, select, true, update
from sqlalchemy.exc import IntegrityError

from ragline.adapters.persistence.sql.api_keys import ApiKeyCipher, SecretKeyError
from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.tables import model_config
from ragline.application.ports.repositories.errors import ConcurrentUpdate
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)

EMBEDDING = ModelKind.EMBEDDING.value
CHAT = ModelKind.CHAT.value


def _default_of(kind: str) -> Select[Any]:
    return (
        select(model_config)
        .where(model_config.c.user_id == bindparam("b_user_id", type_=model_config.c.user_id.type))
        .where(model_config.c.kind == kind)
        .where(model_config.c.is_default == true())
    )


# read by every task's VECTORIZING: built once, with a bound parameter
_DEFAULT = {EMBEDDING: _default_of(EMBEDDING), CHAT: _default_of(CHAT)}


class SqlModelConfigRepository:
    def __init__(self, slot: ConnectionSlot, cipher: ApiKeyCipher | None) -> None:
        self._slot = slot
        self._cipher = cipher

    def _cipher_or_fail(self) -> ApiKeyCipher:
        if self._cipher is None:
            raise SecretKeyError("no API key encryption key is configured")
        return self._cipher

    def _key(self, token: str | None) -> str | None:
        return None if token is None else self._cipher_or_fail().decrypt(token)

    async def _default_row(self, user_id: str, kind: str) -> Mapping[Any, Any] | None:
        with store_errors(f"model_config default {kind}"):
            result = await self._slot.conn.execute(_DEFAULT[kind], {"b_user_id": user_id})
            row = result.first()
        return None if row is None else row._mapping

    async def default_embedding(self, user_id: str) -> EmbeddingConfig | None:
        m = await self._default_row(user_id, EMBEDDING)
        if m is None:
            return None
        return EmbeddingConfig(
            user_id=m["user_id"],
            provider=m["provider"],
            model=m["model"],
            dimension=int(m["dimension"]),
            base_url=m["base_url"],
            api_key=self._key(m["api_key_encrypted"]),
        )

    async def default_chat(self, user_id: str) -> ChatConfig | None:
        m = await self._default_row(user_id, CHAT)
        if m is None:
            return None
        return ChatConfig(
            user_id=m["user_id"],
            provider=m["provider"],
            model=m["model"],
            base_url=m["base_url"],
            api_key=self._key(m["api_key_encrypted"]),
        )

    async def put_default_embedding(self, config: EmbeddingConfig) -> None:
        await self._put_default(
            config.user_id,
            EMBEDDING,
            config.provider,
            config.model,
            config.base_url,
            config.api_key,
            config.dimension,
        )

    async def put_default_chat(self, config: ChatConfig) -> None:
        await self._put_default(
            config.user_id, CHAT, config.provider, config.model, config.base_url, config.api_key
        )

    async def _put_default(
        self,
        user_id: str,
        kind: str,
        provider: str,
        model: str,
        base_url: str | None,
        api_key: str | None,
        dimension: int | None = None,
    ) -> None:
        token = None if api_key is None else self._cipher_or_fail().encrypt(api_key)
        values: dict[str, Any] = {
            "provider": provider,
            "model": model,
            "base_url": base_url,
            "api_key_encrypted": token,
            "dimension": dimension,
        }
        conn = self._slot.conn
        with store_errors(f"model_config put_default {kind}"):
            result = await conn.execute(
                update(model_config)
                .where(model_config.c.user_id == user_id)
                .where(model_config.c.kind == kind)
                .where(model_config.c.is_default == true())
                .values(**values)
            )
            if result.rowcount == 1:
                return
            try:
                async with conn.begin_nested():
                    await conn.execute(
                        model_config.insert().values(
                            user_id=user_id, kind=kind, is_default=True, **values
                        )
                    )
            except IntegrityError as error:
                raise ConcurrentUpdate(
                    f"another default {kind} config for user {user_id} was written at the same time"
                ) from error

    async def delete_default(self, user_id: str, kind: ModelKind) -> bool:
        with store_errors(f"model_config delete_default {kind.value}"):
            result = await self._slot.conn.execute(
                delete(model_config)
                .where(model_config.c.user_id == user_id)
                .where(model_config.c.kind == kind.value)
                .where(model_config.c.is_default == true())
            )
        return result.rowcount == 1
