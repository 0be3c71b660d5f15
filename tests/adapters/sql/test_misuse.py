"""Misuse of the SQL adapter fails loudly and early (SQLite is enough: no backend logic)."""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import attrs
import pytest

from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    SecretKeyError,
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
    load_or_create_key_file,
    upgrade_to_head,
)
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.domain.parse_run import ParseRun, Stage
from ragline.testing.kits.persistence import chunk_set, identity, scope, uid


@pytest.fixture
async def factory(tmp_path: Path) -> AsyncIterator[SqlUnitOfWorkFactory]:
    url = f"sqlite:///{tmp_path / 'misuse.db'}"
    upgrade_to_head(url)
    made = create_unit_of_work_factory(url)  # no cipher configured
    yield made
    await made.dispose()


async def test_naive_datetimes_are_refused(factory: SqlUnitOfWorkFactory) -> None:
    run = ParseRun.open(identity(), datetime(2026, 1, 1))
    async with factory() as uow:
        with pytest.raises(PersistenceError):
            await uow.runs.add(run)


async def test_save_must_carry_a_newer_version(factory: SqlUnitOfWorkFactory) -> None:
    run = ParseRun.open(identity(), datetime.fromisoformat("2026-01-01T00:00:00+00:00"))
    async with factory() as uow:
        await uow.runs.add(run)
        with pytest.raises(ValueError, match="not newer"):
            await uow.runs.save(run, run.version)
        run.start_stage(Stage.CLEANING, run.created_at)
        await uow.runs.save(run, 0)


async def test_chunks_of_another_document_are_refused(factory: SqlUnitOfWorkFactory) -> None:
    mine, other = scope(), scope()
    async with factory() as uow:
        with pytest.raises(ValueError, match="outside"):
            await uow.chunks.replace_document(mine, chunk_set(other, uid()))


async def test_repositories_outside_the_block_fail(factory: SqlUnitOfWorkFactory) -> None:
    uow = factory()
    with pytest.raises(PersistenceError, match="not open"):
        await uow.runs.get("x")
    async with uow:
        pass
    with pytest.raises(PersistenceError, match="single-use"):
        async with uow:
            pass


async def test_api_keys_need_a_configured_secret(factory: SqlUnitOfWorkFactory) -> None:
    with_key = EmbeddingConfig(uid("user"), "openai", "m", 8, None, "sk-secret")
    without_key = attrs.evolve(with_key, user_id=uid("user"), api_key=None)
    async with factory() as uow:
        with pytest.raises(SecretKeyError, match="no API key encryption key"):
            await uow.model_configs.put_default_embedding(with_key)
        await uow.model_configs.put_default_embedding(without_key)
        assert await uow.model_configs.default_embedding(without_key.user_id) == without_key


def test_cipher_round_trip_rotation_and_hidden_repr() -> None:
    old, new = ApiKeyCipher.generate_key(), ApiKeyCipher.generate_key()
    token = ApiKeyCipher(old).encrypt("sk-密钥")
    rotated = ApiKeyCipher(new, previous=[old])
    assert rotated.decrypt(token) == "sk-密钥"
    assert ApiKeyCipher(new).decrypt(rotated.encrypt("sk-x")) == "sk-x"
    with pytest.raises(SecretKeyError, match="cannot be decrypted"):
        ApiKeyCipher(new).decrypt(token)
    assert old.decode() not in repr(ApiKeyCipher(old))
    with pytest.raises(SecretKeyError, match="not a valid Fernet key"):
        ApiKeyCipher("too-short")


def test_key_file_is_created_private_and_then_reused(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret.key"
    key = load_or_create_key_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_key_file(path) == key
    ApiKeyCipher(key)  # a valid key
