"""The fields every pipeline log line carries (task_id, user_id, dataset_id, stage).

Bound with `log_fields(...)` for the duration of a delivery or a stage (a contextvar, so
concurrent consumers on one event loop each keep their own); `LogContextFilter` copies them
onto every record, where a JSON formatter writes them as fields.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_FIELDS: ContextVar[dict[str, str]] = ContextVar("ragline_log_fields", default={})  # noqa: B039


@contextmanager
def log_fields(**fields: str) -> Iterator[None]:
    token = _FIELDS.set({**_FIELDS.get(), **fields})
    try:
        yield
    finally:
        _FIELDS.reset(token)


class LogContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in _FIELDS.get().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True
