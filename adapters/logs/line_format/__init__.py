"""Log lines as text or one JSON object per line (`RAGLINE_LOG_FORMAT=json`), secrets never
included: every line passes the application's secret mask (each configured secret, each
user's model key the process has held, passwords inside URLs, bearer tokens become `***`),
whatever logged it — a library's line too."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from ragline.application.pipeline.log_context import LogContextFilter
from ragline.application.secrets import SecretMask, masked

JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s"
CHATTY = ("pika", "aiokafka", "alembic", "httpx", "uvicorn.access", "elastic_transport")


def redacted(value: object, secrets: Iterable[str] = ()) -> str:
    """`value` as text with the given secret values and every secret the process knows
    (`masked`) masked."""
    return masked(SecretMask(secrets)(str(value)))


class TextFormatter(logging.Formatter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")
        self._mask = SecretMask(secrets)

    def format(self, record: logging.LogRecord) -> str:
        return masked(self._mask(super().format(record)))


class JsonLineFormatter(JsonFormatter):
    """One JSON object per line; task_id, user_id, dataset_id, stage and duration_ms appear
    as fields when the pipeline bound them."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__(JSON_FIELDS, rename_fields={"levelname": "level", "name": "logger"})
        self._mask = SecretMask(secrets)

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        return {
            key: masked(self._mask(value)) if isinstance(value, str) else value
            for key, value in log_data.items()
            if key != "color_message"  # uvicorn's ANSI copy of the message
        }


def configure_logging(log_format: str, secrets: Iterable[str], level: int = logging.INFO) -> None:
    """Root logging for a long-running command (worker, serve): one handler on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    kept = list(secrets)
    handler.setFormatter(JsonLineFormatter(kept) if log_format == "json" else TextFormatter(kept))
    handler.addFilter(LogContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
