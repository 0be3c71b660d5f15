"""Secrets: no text ragline shows carries a credential it sends (docs/security.md, Secrets).

A remote answer may echo what it was sent: a model server that repeats the Authorization
header in its 401, a client library that puts a URL with its password into an error. Two
layers keep credentials out of failure reasons, result messages, logs, metrics and problem
bodies: the adapter that sends a credential masks it in every error it raises
(`SecretMask.of(key)`), and every text ragline forms from an error passes `masked`, which
masks every credential this process was configured with or has held in clear (settings'
secrets, URL passwords, API tokens, each user's model key), and anything shaped like one.
"""

from ragline.application.secrets.mask import (
    KNOWN_SECRETS,
    MASK,
    MIN_SECRET_LENGTH,
    SECRET_SPAN,
    SecretMask,
    masked,
    masked_prefix,
    remember_secrets,
)

__all__ = [
    "KNOWN_SECRETS",
    "MASK",
    "MIN_SECRET_LENGTH",
    "SECRET_SPAN",
    "SecretMask",
    "masked",
    "masked_prefix",
    "remember_secrets",
]
