"""How to reach RabbitMQ: plain settings turned into pika connection parameters."""

from __future__ import annotations

from dataclasses import dataclass, field

import pika


@dataclass(frozen=True, slots=True)
class RabbitConnection:
    """`url` (amqp:// or amqps://) wins over the separate fields when given."""

    host: str = "127.0.0.1"
    port: int = 5672
    virtual_host: str = "/"
    username: str = "guest"
    password: str = field(default="guest", repr=False)
    url: str | None = field(default=None, repr=False)
    heartbeat_s: int = 60
    connection_attempts: int = 3
    retry_delay_s: float = 2.0
    blocked_connection_timeout_s: float = 300.0
    client_name: str = "ragline"

    def parameters(self) -> pika.connection.Parameters:
        if self.url is not None:
            parameters: pika.connection.Parameters = pika.URLParameters(self.url)
        else:
            parameters = pika.ConnectionParameters(
                host=self.host,
                port=self.port,
                virtual_host=self.virtual_host,
                credentials=pika.PlainCredentials(self.username, self.password),
            )
        parameters.heartbeat = self.heartbeat_s
        parameters.connection_attempts = self.connection_attempts
        parameters.retry_delay = self.retry_delay_s
        parameters.blocked_connection_timeout = self.blocked_connection_timeout_s
        parameters.client_properties = {"connection_name": self.client_name}
        return parameters
