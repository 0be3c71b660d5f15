"""API keys encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`).

The keys come from the caller (`resolve_keys`: RAGLINE_SECRET_KEY, a key file, or, for an
embedded SQLite data dir only, `<data_dir>/secret.key` made on first start). Several hosts
sharing one database must share the key, so outside embedded SQLite a key must be
configured. Neither the key nor a plaintext is ever put in a log line, an exception message
or a repr. Older keys may be kept for reading while a new one encrypts
(key rotation: `ApiKeyCipher(new, previous=[old])`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from ragline.application.ports.misconfiguration import Misconfiguration
from ragline.application.ports.repositories.errors import PersistenceError


class SecretKeyError(PersistenceError):
    """A stored secret cannot be read or written with the configured key."""


class ApiKeyCipher:
    """Encrypts and decrypts API keys; the first key encrypts, every key decrypts."""

    def __init__(self, key: str | bytes, previous: Sequence[str | bytes] = ()) -> None:
        try:
            fernets = [Fernet(k) for k in (key, *previous)]
        except (ValueError, TypeError):
            raise SecretKeyError(
                "the API key encryption key is not a valid Fernet key "
                "(32 url-safe base64-encoded bytes; make one with ApiKeyCipher.generate_key())"
            ) from None
        self._fernet = MultiFernet(fernets)

    def __repr__(self) -> str:
        return "ApiKeyCipher(<key hidden>)"

    @staticmethod
    def generate_key() -> bytes:
        """A new random key."""
        return Fernet.generate_key()

    def encrypt(self, plaintext: str) -> str:
        """The token stored in place of `plaintext`."""
        return self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def decrypt(self, token: str) -> str:
        """The plaintext of a stored token; SecretKeyError when no configured key opens it."""
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError):
            raise SecretKeyError(
                "a stored API key cannot be decrypted with the configured key "
                "(wrong key, rotated without keeping the old one, or corrupted value)"
            ) from None


def load_or_create_key_file(path: Path) -> bytes:
    """The key stored at `path`, creating it (mode 0600) with a fresh key when missing."""
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as out:
        out.write(key + b"\n")
    return key


class SecretKeyMissing(SecretKeyError, Misconfiguration):
    """No key is configured where one must be (a shared database)."""


@dataclass(frozen=True)
class KeySet:
    """The keys in force (the first encrypts, every one decrypts) and where they came from,
    in words for `ragline doctor` (never the keys)."""

    keys: tuple[bytes, ...]
    source: str

    def cipher(self) -> ApiKeyCipher:
        return ApiKeyCipher(self.keys[0], previous=self.keys[1:])


def _split(text: str) -> tuple[bytes, ...]:
    """Keys separated by commas or newlines; blank entries and `#` comment lines ignored."""
    parts = [p.strip() for line in text.splitlines() for p in line.split(",")]
    return tuple(p.encode("ascii") for p in parts if p and not p.startswith("#"))


def resolve_keys(env_keys: str | None, key_file: Path | None, embedded_file: Path | None) -> KeySet:
    """RAGLINE_SECRET_KEY (comma-separated for rotation: new first), else the key file (one
    key a line, new first), else the embedded data dir's generated file, else an error
    naming the settings. `embedded_file` is given only for embedded SQLite."""
    if env_keys is not None and env_keys.strip():
        keys = _split(env_keys)
        return KeySet(keys, f"RAGLINE_SECRET_KEY ({_count(keys)})")
    if key_file is not None:
        try:
            keys = _split(key_file.read_text(encoding="ascii"))
        except (OSError, UnicodeError) as exc:
            raise SecretKeyMissing(
                f"RAGLINE_SECRET_KEY_FILE={key_file} cannot be read "
                f"({type(exc).__name__}: {getattr(exc, 'strerror', None) or exc})"
            ) from None
        if not keys:
            raise SecretKeyMissing(f"RAGLINE_SECRET_KEY_FILE={key_file} holds no key")
        return KeySet(keys, f"RAGLINE_SECRET_KEY_FILE {key_file} ({_count(keys)})")
    if embedded_file is not None:
        key = load_or_create_key_file(embedded_file)
        return KeySet((key,), f"{embedded_file} (embedded SQLite data dir, generated once)")
    raise SecretKeyMissing(
        "a shared database needs a shared API key encryption key: set RAGLINE_SECRET_KEY "
        "(a Fernet key; make one with `python -c 'from cryptography.fernet import Fernet; "
        "print(Fernet.generate_key().decode())'`) or RAGLINE_SECRET_KEY_FILE (a file holding "
        "it), the same on every host"
    )


def _count(keys: tuple[bytes, ...]) -> str:
    if len(keys) == 1:
        return "1 key"
    return f"{len(keys)} keys: the first encrypts, all decrypt"
