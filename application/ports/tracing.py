"""Tracing port: a span per run and per stage (OpenTelemetry when it is installed and
configured; `NO_TRACING` otherwise, which costs nothing)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Protocol


class Tracing(Protocol):
    def span(
        self, name: str, attributes: Mapping[str, str | int]
    ) -> contextlib.AbstractContextManager[None]:
        """A span around the block, a child of the span the block runs in."""
        ...


class NoTracing:
    def span(
        self, name: str, attributes: Mapping[str, str | int]
    ) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


NO_TRACING: Tracing = NoTracing()
