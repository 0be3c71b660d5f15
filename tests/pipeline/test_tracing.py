"""OpenTelemetry: one `ragline.run` span per delivery, a `ragline.stage` child per stage."""

from __future__ import annotations

from pathlib import Path

import attrs
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragline.adapters.inbound.task_consumer import TaskConsumer
from ragline.adapters.tracing.otel import OpenTelemetryTracing
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from tests.fakes.harness import Harness


async def test_a_run_is_one_span_with_a_child_per_stage(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    h = Harness(tmp_path)
    h.configure_embedding()
    services = attrs.evolve(h.services, tracing=OpenTelemetryTracing(provider))
    consumer = TaskConsumer(ParseTaskPipeline(services), h.wire)
    task = h.task()
    await consumer.process(h.delivery(task))
    spans = exporter.get_finished_spans()
    [run] = [s for s in spans if s.name == "ragline.run"]
    stages = [s for s in spans if s.name == "ragline.stage"]
    assert run.attributes is not None and run.attributes["ragline.task_id"] == task.task_id
    assert run.attributes["ragline.user_id"] == str(task.user_id)
    assert [s.attributes["ragline.stage"] for s in stages if s.attributes] == [
        "CLEANING",
        "CHUNKING",
        "VECTORIZING",
        "PRETOKENIZE",
        "KEYWORD_INDEXING",
        "SPARSE_VECTORIZING",
    ]
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in stages)
