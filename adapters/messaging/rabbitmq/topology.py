"""Exchanges and queues, declared idempotently (durable) by whoever connects first.

Tasks: topic exchange `<task topic>` -> durable queue bound by routing keys (file types,
"#" = all). Dead letters: topic exchange `<exchange>.DLQ` -> durable queue `<queue>.DLQ`
bound with "#"; the task queue also names that exchange as its x-dead-letter-exchange, so
messages the broker itself rejects or expires land there too.
Results: topic exchange `<result topic>`; consumers bind their own queues by task id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pika.adapters.blocking_connection import BlockingChannel
from pika.exchange_type import ExchangeType

from ragline.contracts.wire.topics import dead_letter_topic


def declare_exchange(channel: BlockingChannel, exchange: str) -> None:
    channel.exchange_declare(exchange, exchange_type=ExchangeType.topic, durable=True)


@dataclass(frozen=True, slots=True)
class QueueTopology:
    exchange: str
    queue: str
    binding_keys: Sequence[str] = ("#",)
    with_dead_letters: bool = True
    dead_letter_exchange: str | None = None
    dead_letter_queue: str | None = None
    queue_arguments: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dlx(self) -> str:
        return self.dead_letter_exchange or dead_letter_topic(self.exchange)

    @property
    def dlq(self) -> str:
        return self.dead_letter_queue or dead_letter_topic(self.queue)

    def declare(self, channel: BlockingChannel) -> None:
        declare_exchange(channel, self.exchange)
        arguments = dict(self.queue_arguments)
        if self.with_dead_letters:
            declare_exchange(channel, self.dlx)
            channel.queue_declare(self.dlq, durable=True)
            channel.queue_bind(self.dlq, self.dlx, routing_key="#")
            arguments.setdefault("x-dead-letter-exchange", self.dlx)
        channel.queue_declare(self.queue, durable=True, arguments=arguments or None)
        for key in self.binding_keys:
            channel.queue_bind(self.queue, self.exchange, routing_key=key)
