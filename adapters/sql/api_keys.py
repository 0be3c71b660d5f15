"""API keys encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`).

The key comes from the caller (settings, or a key file in the data dir via
`load_or_create_key_file`). Neither the key nor a plaintext is ever put in a log line, an
exception message or a repr. Older keys may be kept for reading while a new one encrypts
(key rotation: `ApiKeyCipher(new, previous=[old])`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from ragline.application.ports.unit_of_work import PersistenceError


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
