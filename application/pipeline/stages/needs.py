"""What a stage may use, as read-only protocols: each stage declares its `...Needs` from these
(and only these), so mypy refuses a stage reaching for a port it did not declare.
`StageServices` (bootstrap builds one) meets every stage's needs.
"""

from __future__ import annotations

from typing import Protocol

from ragline.application.pipeline.settings import PipelineSettings
from ragline.application.ports.clock import Clock
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.metrics import PipelineMetrics
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.tracing import Tracing
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.workspace import Workspace


class HasUnitOfWork(Protocol):
    @property
    def uow(self) -> UnitOfWorkFactory: ...


class HasSettings(Protocol):
    @property
    def settings(self) -> PipelineSettings: ...


class HasObjects(Protocol):
    """Objects read through the task's temp workspace (markdown_io)."""

    @property
    def storage(self) -> ObjectStorage: ...

    @property
    def workspace(self) -> Workspace: ...


class HasVectors(Protocol):
    @property
    def vectors(self) -> VectorIndex: ...


class HasTokenizer(HasUnitOfWork, HasSettings, Protocol):
    """What building the keyword plan uses (PRETOKENIZE, and KEYWORD_INDEXING's rebuild)."""

    @property
    def tokenizer(self) -> Tokenizer: ...

    @property
    def workspace(self) -> Workspace: ...


class TemplateNeeds(HasUnitOfWork, HasSettings, HasVectors, Protocol):
    """What the Stage template itself uses: saves, times, the result outbox, telemetry, and
    the indexes the lineage swap at SUCCESS removes the old version from."""

    @property
    def keywords(self) -> KeywordIndex: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def metrics(self) -> PipelineMetrics: ...

    @property
    def tracing(self) -> Tracing: ...
