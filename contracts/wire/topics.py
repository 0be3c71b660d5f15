"""Topic names, routing-key rules and dead-letter conventions shared by every bus adapter.

The defaults match the existing Java producer/consumer so it works unchanged
(`pares` is the historical spelling, kept on purpose).
"""

from __future__ import annotations

from typing import Final

DEFAULT_PARSE_TASK_TOPIC: Final = "tolink-document-pares"
"""Env `PARSE_TASK_TOPIC`. Routing key of a task message = its `file_type`."""

DEFAULT_PARSE_RESULT_TOPIC: Final = "tolink.rag.parse_result"
"""Env `PARSE_RESULT_TOPIC`. Routing key of a result message = its `task_id`."""

DEAD_LETTER_SUFFIX: Final = ".DLQ"

DEAD_LETTER_REASON_HEADER: Final = "x-dead-letter-reason"
"""Header on a dead-lettered message: why it was set aside (UTF-8 text)."""

DEAD_LETTER_ORIGIN_HEADER: Final = "x-dead-letter-origin"
"""Header on a dead-lettered message: the topic (or exchange) it was consumed from."""

DEAD_LETTER_ATTEMPTS_HEADER: Final = "x-dead-letter-attempts"
"""Header on a result the outbox relay gave up: how many publishes failed (decimal text)."""

CONTENT_TYPE: Final = "application/json"
CONTENT_ENCODING: Final = "utf-8"


def dead_letter_topic(topic: str) -> str:
    """Where messages consumed from `topic` go when they cannot be processed."""
    return f"{topic}{DEAD_LETTER_SUFFIX}"
