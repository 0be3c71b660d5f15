"""How to reach the Kafka cluster: servers and security, passed through to aiokafka."""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiokafka.helpers import create_ssl_context


@dataclass(frozen=True, slots=True)
class KafkaConnection:
    """Settings shared by producers and consumers.

    The existing deployment uses SASL_PLAINTEXT + PLAIN; production should use SASL_SSL.
    `extra` is passed to aiokafka unchanged (e.g. `sasl_oauth_token_provider`).
    """

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_plain_username: str | None = None
    sasl_plain_password: str | None = field(default=None, repr=False)
    ssl_context: ssl.SSLContext | None = None
    client_id: str = "ragline"
    request_timeout_ms: int = 40_000
    extra: Mapping[str, Any] = field(default_factory=dict)

    def client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap_servers,
            "security_protocol": self.security_protocol,
            "client_id": self.client_id,
            "request_timeout_ms": self.request_timeout_ms,
        }
        if self.sasl_mechanism is not None:
            kwargs["sasl_mechanism"] = self.sasl_mechanism
            kwargs["sasl_plain_username"] = self.sasl_plain_username
            kwargs["sasl_plain_password"] = self.sasl_plain_password
        if self.ssl_context is not None:
            kwargs["ssl_context"] = self.ssl_context
        elif self.security_protocol in ("SSL", "SASL_SSL"):
            kwargs["ssl_context"] = create_ssl_context()
        kwargs.update(self.extra)
        return kwargs
