"""Tracing on OpenTelemetry: spans `ragline.run` (one per delivery) and `ragline.stage`.

`configured_tracing(exporter)` installs an SDK TracerProvider when the `otel` extra is
installed and an exporter is chosen (`RAGLINE_OTEL_EXPORTER`: `console`, or `otlp` with the
standard `OTEL_EXPORTER_OTLP_*` variables and opentelemetry-exporter-otlp installed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from opentelemetry import trace


class OpenTelemetryTracing:
    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        self._tracer = trace.get_tracer("ragline", tracer_provider=tracer_provider)

    @contextlib.contextmanager
    def span(self, name: str, attributes: Mapping[str, str | int]) -> Iterator[None]:
        with self._tracer.start_as_current_span(name, attributes=dict(attributes)):
            yield


def configured_tracing(exporter: str) -> OpenTelemetryTracing:
    """Install the SDK's TracerProvider with a batch processor for `exporter`."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )

    chosen: SpanExporter
    if exporter == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        chosen = OTLPSpanExporter()
    else:
        chosen = ConsoleSpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "ragline"}))
    provider.add_span_processor(BatchSpanProcessor(chosen))
    trace.set_tracer_provider(provider)
    return OpenTelemetryTracing(provider)
