"""Log lines as text or one JSON object per line (`RAGLINE_LOG_FORMAT=json`), secrets never
included: passwords inside URLs and every configured secret value become `***`."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from ragline.application.pipeline.log_context import LogContextFilter

_URL_PASSWORD = re.compile(r"(?P<scheme>[a-zA-Z][\w+.-]*://)(?P<user>[^:/@\s]*):[^@/\s]*@")
MASK = "***"
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s"
CHATTY = ("pika", "aiokafka", "alembic", "httpx", "uvicorn.access", "elastic_transport")


def redacted(value: object, secrets: Iterable[str] = ()) -> str:
    """`value` as text with URL passwords and the given secret values masked."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", str(value))
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


class _Redacting(logging.Formatter):
    secrets: tuple[str, ...] = ()

    def format(self, record: logging.LogRecord) -> str:
        return redacted(super().format(record), self.secrets)


class TextFormatter(_Redacting):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")
        self.secrets = tuple(s for s in secrets if s)


class JsonLineFormatter(JsonFormatter):
    """One JSON object per line; task_id, user_id, dataset_id, stage and duration_ms appear
    as fields when the pipeline bound them."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__(JSON_FIELDS, rename_fields={"levelname": "level", "name": "logger"})
        self.secrets = tuple(s for s in secrets if s)

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        return {
            key: redacted(value, self.secrets) if isinstance(value, str) else value
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
