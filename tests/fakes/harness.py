"""Every fake wired into the real container (providers overridden), plus task builders.

The pipeline, consumer and relay under test come from `ragline.bootstrap.container`, the
same providers the CLI and the worker use; only the ports are overridden with fakes.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from dependency_injector import providers

from ragline.adapters.inbound.task_consumer import TaskConsumer
from ragline.adapters.wire_format.json import JsonResultPublisher, JsonWireFormat, command_of
from ragline.application.access import ReferencePolicy
from ragline.application.parsing import ParseCacheSettings
from ragline.application.pipeline.chunker import PlanChunker
from ragline.application.pipeline.context import document_scope
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outbox_relay import OutboxRelay, RelayPolicy
from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.settings import PipelineSettings
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.tasks import ParseTaskCommand, TaskResult
from ragline.application.workspace import Workspace
from ragline.bootstrap.container import Container
from ragline.contracts.wire import ParseTask
from ragline.domain.chunking import ChunkPlan, ChunkStep, Pipeline, StepParams, Strategy
from ragline.domain.parse_run import ParseRun
from tests.fakes.clock import FakeClock
from tests.fakes.faults import Faults
from tests.fakes.indexes import FakeKeywordIndex, FakeVectorIndex
from tests.fakes.messaging import FakeDelivery, FakePublisher
from tests.fakes.models import (
    FakeEmbedderResolver,
    FakeSparseEncoder,
    FakeTokenizer,
)
from tests.fakes.parsing import FakePageCounter, FakeParser
from tests.fakes.storage import FakeObjectStorage
from tests.fakes.unit_of_work import FakeDatabase

DIMENSION = 8
SOURCE_BUCKET = "uploads"
MD_BUCKET = "markdown"

# Small sizes so a short test document yields several parents and children.
SMALL_PLAN = ChunkPlan(
    "small",
    (
        ChunkStep(Pipeline.PARENT, 1, Strategy.RECURSIVE, StepParams(160, 0), id="p1"),
        ChunkStep(Pipeline.CHILD, 1, Strategy.RECURSIVE, StepParams(60, 0), id="c1"),
    ),
)

DOCUMENT_TEXT = "\n\n".join(
    f"Paragraph {i} talks about topic {i} with words alpha beta gamma delta {i}." for i in range(8)
)


class Harness:
    def __init__(
        self,
        tmp: Path,
        settings: PipelineSettings | None = None,
        parse_cache: ParseCacheSettings | None = None,
        mineru: bool = True,
        storage: ObjectStorage | None = None,
    ) -> None:
        """`storage` replaces the fake object store in the container (a real adapter)."""
        self.faults = Faults()
        self.db = FakeDatabase(self.faults)
        self.clock = FakeClock()
        self.storage = FakeObjectStorage(self.faults)
        self.storage.buckets.add(MD_BUCKET)
        self.parser = FakeParser(self.faults)
        self.page_counter = FakePageCounter()
        self.embedders = FakeEmbedderResolver(self.faults)
        self.vectors = FakeVectorIndex(self.faults)
        self.keywords = FakeKeywordIndex(self.faults)
        self.tokenizer = FakeTokenizer(self.faults)
        self.sparse = FakeSparseEncoder(self.faults)
        self.workspace = Workspace(tmp / "work")
        self.publisher = FakePublisher(self.faults)
        self.settings = settings or PipelineSettings(embed_batch_size=3, sparse_batch_size=3)
        self.wire = JsonWireFormat()
        self.container = container = Container()
        for name, fake in {
            "uow_factory": self.db,
            "clock": self.clock,
            "storage": self.storage if storage is None else storage,
            "parser": self.parser,
            "page_counter": self.page_counter,
            # the fake answers mineru (direct pull) too; mineru=False: no MinerU client
            "mineru_parser": self.parser if mineru else None,
            "chunker": PlanChunker(SMALL_PLAN),
            "embedders": self.embedders,
            "vectors": self.vectors,
            "keywords": self.keywords,
            "tokenizer": self.tokenizer,
            "sparse": self.sparse,
            "workspace": self.workspace,
            "wire_format": self.wire,
            "pipeline_settings": self.settings,
            "parse_cache_settings": parse_cache or ParseCacheSettings(poll=timedelta(0)),
            "batch_owner": "harness",
        }.items():
            getattr(container, name).override(providers.Object(fake))
        container.relay.override(
            providers.Singleton(
                OutboxRelay,
                self.db,
                JsonResultPublisher(self.publisher),
                self.clock,
                RelayPolicy(max_attempts=3, batch_size=50),
            )
        )
        self.references: ReferencePolicy = container.reference_policy()
        self.services: StageServices = container.stage_services()
        self.pipeline: ParseTaskPipeline = container.pipeline()
        self.consumer = TaskConsumer(self.pipeline, self.wire)
        self.relay: OutboxRelay = container.relay()
        self.counter = 0

    # -- setup ------------------------------------------------------------------------

    def configure_embedding(self, user_id: int = 7, dimension: int = DIMENSION, **kw: Any) -> None:
        config = EmbeddingConfig(
            user_id=str(user_id),
            provider=kw.pop("provider", "fake"),
            model=kw.pop("model", "fake-model"),
            dimension=dimension,
            api_key="secret-key",
        )
        self.db.configs[str(user_id)] = config

    def task(self, file_type: str = "txt", **overrides: Any) -> ParseTaskCommand:
        """A valid task whose source object exists (unless `upload=False`)."""
        self.counter += 1
        upload = overrides.pop("upload", True)
        content = overrides.pop("content", DOCUMENT_TEXT)
        fields: dict[str, Any] = {
            "task_id": f"task-{self.counter}",
            "original_file_id": 100,
            "document_parse_task_id": 500 + self.counter,
            "user_id": 7,
            "dataset_id": 3,
            "file_type": file_type,
            "source_bucket": SOURCE_BUCKET,
            "source_object_key": f"files/doc-100.{file_type}",
            "source_filename": f"doc.{file_type}",
            "md_bucket": MD_BUCKET,
            "md_object_key": "md/doc-100.md",
        }
        fields.update(overrides)
        task = command_of(ParseTask.model_validate(fields))  # as the consumer decodes it
        if upload:
            self.storage.add(task.source_bucket, task.source_object_key, content.encode("utf-8"))
        return task

    def retry_of(self, previous: ParseTaskCommand, **overrides: Any) -> ParseTaskCommand:
        self.counter += 1
        fields = ParseTask.model_validate_json(self.wire.encode_task(previous)).model_dump(
            mode="json"
        )
        fields.update(
            task_id=f"task-{self.counter}",
            is_retry=True,
            previous_task_id=previous.task_id,
            trigger_mode="manual_retry",
        )
        fields.update(overrides)
        return command_of(ParseTask.model_validate(fields))

    # -- reading ----------------------------------------------------------------------

    def run(self, task_id: str) -> ParseRun:
        return self.db.runs[task_id]

    def scope(self, task: ParseTaskCommand) -> DocumentScope:
        return document_scope(task)

    def result(self, task_id: str) -> TaskResult:
        return self.db.outbox[task_id].result

    def delivery(self, task: ParseTaskCommand) -> FakeDelivery:
        return FakeDelivery(self.wire.encode_task(task), task.file_type)


WIRE = JsonWireFormat()
encode_task = WIRE.encode_task
decode_result = WIRE.decode_result
encode_result = WIRE.encode_result
