"""model_config: per-user model settings; the API key is stored only as a Fernet token."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select, true, update
from sqlalchemy.exc import IntegrityError

from ragline.adapters.sql.api_keys import ApiKeyCipher, SecretKeyError
from ragline.adapters.sql.connection import ConnectionSlot
from ragline.adapters.sql.errors import store_errors
from ragline.adapters.sql.tables import model_config
from ragline.application.ports.unit_of_work import ConcurrentUpdate, EmbeddingConfig

EMBEDDING = "EMBEDDING"

# read by every task's VECTORIZING: built once, with a bound parameter
_DEFAULT_EMBEDDING = (
    select(model_config)
    .where(model_config.c.user_id == bindparam("b_user_id", type_=model_config.c.user_id.type))
    .where(model_config.c.kind == EMBEDDING)
    .where(model_config.c.is_default == true())
)


class SqlModelConfigRepository:
    def __init__(self, slot: ConnectionSlot, cipher: ApiKeyCipher | None) -> None:
        self._slot = slot
        self._cipher = cipher

    def _cipher_or_fail(self) -> ApiKeyCipher:
        if self._cipher is None:
            raise SecretKeyError("no API key encryption key is configured")
        return self._cipher

    async def default_embedding(self, user_id: str) -> EmbeddingConfig | None:
        with store_errors("model_config default_embedding"):
            result = await self._slot.conn.execute(_DEFAULT_EMBEDDING, {"b_user_id": user_id})
            row = result.first()
        if row is None:
            return None
        m = row._mapping
        token = m["api_key_encrypted"]
        return EmbeddingConfig(
            user_id=m["user_id"],
            provider=m["provider"],
            model=m["model"],
            dimension=int(m["dimension"]),
            base_url=m["base_url"],
            api_key=None if token is None else self._cipher_or_fail().decrypt(token),
        )

    async def put_default_embedding(self, config: EmbeddingConfig) -> None:
        token = None if config.api_key is None else self._cipher_or_fail().encrypt(config.api_key)
        values: dict[str, Any] = {
            "provider": config.provider,
            "model": config.model,
            "base_url": config.base_url,
            "api_key_encrypted": token,
            "dimension": config.dimension,
        }
        conn = self._slot.conn
        with store_errors("model_config put_default_embedding"):
            result = await conn.execute(
                update(model_config)
                .where(model_config.c.user_id == config.user_id)
                .where(model_config.c.kind == EMBEDDING)
                .where(model_config.c.is_default == true())
                .values(**values)
            )
            if result.rowcount == 1:
                return
            try:
                async with conn.begin_nested():
                    await conn.execute(
                        model_config.insert().values(
                            user_id=config.user_id, kind=EMBEDDING, is_default=True, **values
                        )
                    )
            except IntegrityError as error:
                raise ConcurrentUpdate(
                    f"another default EMBEDDING config for user {config.user_id} "
                    "was written at the same time"
                ) from error
