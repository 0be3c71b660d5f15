"""One API-key encryption key per deployment, not per data dir (issue 12, hole 8).

Outside embedded SQLite the key must be configured (every host shares the database, so every
host must share the key); two keys rotate (the first encrypts, both decrypt); `doctor` says
which source is in force and never shows the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from ragline.adapters.persistence.sql.api_keys import SecretKeyError, SecretKeyMissing, resolve_keys
from ragline.bootstrap import factories
from ragline.bootstrap.settings import Settings

PG = "postgresql://postgres@127.0.0.1:5432/test"


def _settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(data_dir=tmp_path / "data", _env_file=None, **values)  # type: ignore[arg-type]


async def test_a_shared_database_without_a_key_refuses_to_start(tmp_path: Path) -> None:
    settings = _settings(tmp_path, database_url=PG)
    starting = factories.unit_of_work_factory(settings, clock=None)  # type: ignore[arg-type]
    with pytest.raises(SecretKeyMissing) as refused:
        await anext(starting)
    assert "RAGLINE_SECRET_KEY" in str(refused.value)
    assert "RAGLINE_SECRET_KEY_FILE" in str(refused.value)
    assert not (tmp_path / "data" / "secret.key").exists(), "a per-host key was generated"
    assert settings.secret_key_source.startswith("MISSING")


def test_embedded_sqlite_generates_one_key_in_the_data_dir(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    keys = resolve_keys(None, None, settings.embedded_key_file)
    assert (tmp_path / "data" / "secret.key").read_bytes().strip() == keys.keys[0]
    assert resolve_keys(None, None, settings.embedded_key_file).keys == keys.keys
    assert "secret.key" in settings.secret_key_source


def test_rotation_decrypts_with_either_and_encrypts_with_the_first(tmp_path: Path) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    before = resolve_keys(old, None, None).cipher()
    token_old = before.encrypt("sk-user-key")
    rotated = resolve_keys(f"{new},{old}", None, None)
    assert rotated.source == "RAGLINE_SECRET_KEY (2 keys: the first encrypts, all decrypt)"
    assert rotated.cipher().decrypt(token_old) == "sk-user-key"
    token_new = rotated.cipher().encrypt("sk-user-key")
    assert resolve_keys(new, None, None).cipher().decrypt(token_new) == "sk-user-key"
    with pytest.raises(SecretKeyError):
        before.decrypt(token_new)  # written with the new key only


def test_a_key_file_rotates_the_same_way(tmp_path: Path) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    key_file = tmp_path / "ragline.keys"
    key_file.write_text(f"# newest first\n{new}\n{old}\n", encoding="ascii")
    token_old = resolve_keys(old, None, None).cipher().encrypt("x")
    keys = resolve_keys(None, key_file, None)
    assert keys.keys == (new.encode(), old.encode())
    assert keys.cipher().decrypt(token_old) == "x"
    settings = _settings(tmp_path, database_url=PG, secret_key_file=key_file)
    assert settings.secret_key_source == f"RAGLINE_SECRET_KEY_FILE ({key_file})"
    with pytest.raises(SecretKeyMissing, match=r"RAGLINE_SECRET_KEY_FILE=.* cannot be read"):
        resolve_keys(None, tmp_path / "missing.keys", None)


def test_the_source_shown_never_contains_the_key(tmp_path: Path) -> None:
    key = Fernet.generate_key().decode()
    settings = _settings(tmp_path, database_url=PG, secret_key=key)
    assert key not in settings.secret_key_source
    assert settings.secret_key_source == "RAGLINE_SECRET_KEY (1 key)"


def test_parsers_are_told_to_hide_the_key_file_in_force(tmp_path: Path) -> None:
    key_file = tmp_path / "k"
    assert key_file in _settings(tmp_path, secret_key_file=key_file).files_parsers_must_not_read
    embedded = _settings(tmp_path).files_parsers_must_not_read
    assert tmp_path / "data" in embedded  # the whole data dir, secret.key included
