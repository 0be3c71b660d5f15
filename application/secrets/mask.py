"""SecretMask: known credential values and credential-shaped text become `***`.

Known values are masked wherever they appear; shapes catch what no one told the mask about:
the password of a URL (`scheme://user:***@`), a bearer or basic token and an `api_key=` /
`X-Api-Key:` value. A value shorter than MIN_SECRET_LENGTH is not masked by value (no real
credential is that short, and masking it would garble every text that happens to contain
it); its shape still is.

Mask the whole text before cutting it to a length (`masked_prefix`): a key cut in half no
longer matches.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

MASK = "***"
MIN_SECRET_LENGTH = 6
SECRET_SPAN = 1024
"""The longest credential `SecretMask.prefix` masks whole across its cut."""

# Every repetition is bounded, so masking stays linear in the text (an error text is the
# remote's and may be long and hostile).
_URL_PASSWORD = re.compile(
    r"(?P<scheme>[a-zA-Z][\w+.-]{0,31}://)(?P<user>[^:/@\s]{0,256}):[^@/\s]{0,512}@"
)
_OPAQUE_VALUE = r"(?=[^\s\"',;&]{0,256}?\d)[\w.~+/=-]{8,1024}"  # with a digit: not an English word
_SCHEME_TOKEN = re.compile(rf"(?i)\b(?P<lead>(?:bearer|basic)[ \t]{{1,16}}){_OPAQUE_VALUE}")
_NAMED_KEY = re.compile(
    rf"(?i)(?P<lead>\b(?:x-)?api[-_]?key[\"']?[ \t]{{0,16}}[:=][ \t]{{0,16}}[\"']?){_OPAQUE_VALUE}"
)


class SecretMask:
    """Masks the secrets it holds (more may be added at any time) and credential shapes."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: tuple[str, ...] = ()
        self.add(*secrets)

    @classmethod
    def of(cls, *secrets: str | None) -> SecretMask:
        return cls(secrets)

    def add(self, *secrets: str | None) -> None:
        """Mask these values from now on (None, blank and short values are ignored)."""
        fresh = {
            value
            for secret in secrets
            if secret
            for value in (secret, secret.strip())
            if len(value) >= MIN_SECRET_LENGTH
        }
        if not fresh or fresh.issubset(self._secrets):
            return
        with self._lock:  # longest first: a secret holding another is masked whole
            known = set(self._secrets) | fresh
            self._secrets = tuple(sorted(known, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        text = _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
        text = _SCHEME_TOKEN.sub(lambda m: f"{m['lead']}{MASK}", text)
        return _NAMED_KEY.sub(lambda m: f"{m['lead']}{MASK}", text)

    def prefix(self, value: object, limit: int) -> str:
        """The first `limit` characters of `value` as text, masked over a window
        SECRET_SPAN longer: a secret across the cut is masked whole, never cut in half, and
        a remote's megabyte costs no more than its first few kilobytes."""
        return self(str(value)[: limit + SECRET_SPAN])[:limit]

    def __len__(self) -> int:
        return len(self._secrets)

    def __repr__(self) -> str:
        return f"SecretMask({len(self._secrets)} secrets)"


KNOWN_SECRETS = SecretMask()
"""The process's: bootstrap adds the settings' secrets and API tokens; a model config adds
its user's key when it is built (decrypted from storage or received from the API)."""


def remember_secrets(*secrets: str | None) -> None:
    """Mask these values in every text `masked` forms from now on."""
    KNOWN_SECRETS.add(*secrets)


def masked(value: object) -> str:
    """`value` as text with every known secret and credential shape masked."""
    return KNOWN_SECRETS(str(value))


def masked_prefix(value: object, limit: int) -> str:
    """`SecretMask.prefix` with every secret the process knows."""
    return KNOWN_SECRETS.prefix(value, limit)
