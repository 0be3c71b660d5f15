"""Every in-memory fake runs the contract kit of the port it fakes.

The pipeline tests (tests/pipeline) and the fault-injecting state machine run on these
fakes; a fake that failed its kit would prove nothing about the real adapters. A fake
leaves out only a capability mixin it honestly lacks, named in its class docstring; the
real adapters' kit classes (tests/adapters/**, tests/contracts/**) combine every mixin.
As eventsourcing runs its persistence test cases on the POPO recorders
(tests/persistence_tests/test_popo.py). The ParseRun properties (`ParseRunMachine`) run on
the fake unit of work too, through the same `UnitOfWorkRunStore` the SQL backends use.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from ragline.contracts.wire import dead_letter_topic
from ragline.testing.kits.chunks import ChunkRepositoryContract
from ragline.testing.kits.documents import DocumentRepositoryContract
from ragline.testing.kits.embedder import EmbedderContract
from ragline.testing.kits.keyword_index import KeywordIndexContract
from ragline.testing.kits.messaging import MessagingContract, MessagingHarness
from ragline.testing.kits.model_configs import ModelConfigRepositoryContract
from ragline.testing.kits.object_storage import ObjectStorageContract
from ragline.testing.kits.outbox import OutboxRepositoryContract
from ragline.testing.kits.parse_batches import ParseBatchContract
from ragline.testing.kits.parsed_logs import ParsedLogRepositoryContract
from ragline.testing.kits.runs import ParseRunRepositoryContract
from ragline.testing.kits.unit_of_work import UnavailableDatabaseContract, UnitOfWorkContract
from ragline.testing.kits.vector_index import FilteredTopKContract, VectorIndexContract
from ragline.testing.parse_run import ParseRunMachine, RunStore
from ragline.testing.parse_run.uow_store import UnitOfWorkRunStore
from tests.fakes.indexes import FakeKeywordIndex, FakeVectorIndex
from tests.fakes.messaging import FakeBus, FakeBusSource, FakePublisher
from tests.fakes.models import FakeEmbedder
from tests.fakes.storage import FakeObjectStorage
from tests.fakes.unit_of_work import FakeDatabase


class FakeStore:
    """FakeDatabase as the UnitOfWorkFactory of every persistence kit. Row locks with
    read-committed visibility, so the retry race really interleaves
    (`serializes_transactions` stays False)."""

    @pytest.fixture
    def uow_factory(self) -> FakeDatabase:
        return FakeDatabase()


class TestFakeUnitOfWork(FakeStore, UnitOfWorkContract, UnavailableDatabaseContract):
    @pytest.fixture
    def unavailable_uow_factory(self) -> FakeDatabase:
        away = FakeDatabase()
        away.answering = False
        return away


class TestFakeRuns(FakeStore, ParseRunRepositoryContract):
    pass


class TestFakeDocuments(FakeStore, DocumentRepositoryContract):
    pass


class TestFakeParsedLogs(FakeStore, ParsedLogRepositoryContract):
    pass


class TestFakeChunks(FakeStore, ChunkRepositoryContract):
    pass


class TestFakeModelConfigs(FakeStore, ModelConfigRepositoryContract):
    """Leaves out `EncryptedApiKeysContract`: the fake keeps API keys in plain text and has
    no secret, so there is nothing to encrypt with and no wrong key to fail on."""


class TestFakeOutbox(FakeStore, OutboxRepositoryContract):
    pass


class TestFakeParseBatches(FakeStore, ParseBatchContract):
    pass


class TestFakeVectorIndex(VectorIndexContract, FilteredTopKContract):
    """Leaves out `IdfSparseRankingContract`: sparse scores are the plain dot product of the
    weights; the fake keeps no document frequencies."""

    @pytest.fixture
    async def vector_index(self) -> AsyncIterator[FakeVectorIndex]:
        yield FakeVectorIndex()


class TestFakeKeywordIndex(KeywordIndexContract):
    """The whole kit. (Its scores count the query terms' occurrences, not BM25; the kit
    asks for the ranking that both give.)"""

    @pytest.fixture
    async def keyword_index(self) -> AsyncIterator[FakeKeywordIndex]:
        yield FakeKeywordIndex()


class TestFakeObjectStorage(ObjectStorageContract):
    """Leaves out `PresignedUrlContract`: the fake's presigned URLs name
    `fake-storage.invalid`, which nothing serves; the pipeline only passes them on."""

    @pytest.fixture
    def storage(self) -> FakeObjectStorage:
        return FakeObjectStorage()


class FakeBusHarness(MessagingHarness):
    task_topic = "tasks"
    result_topic = "results"

    def __init__(self, bus: FakeBus) -> None:
        self.bus = bus

    async def task_source(self) -> FakeBusSource:
        return self.bus.source(self.task_topic, "workers")

    async def task_publisher(self) -> FakePublisher:
        return self.bus.publisher(self.task_topic)

    async def result_publisher(self) -> FakePublisher:
        return self.bus.publisher(self.result_topic)

    async def result_reader(self) -> FakeBusSource:
        return self.bus.source(self.result_topic, "reader")

    async def dead_letter_reader(self) -> FakeBusSource:
        return self.bus.source(dead_letter_topic(self.task_topic), "ops")


class TestFakeBus(MessagingContract):
    """FakeBus joining FakeBusSource, FakeDelivery and FakePublisher: the whole kit."""

    receive_timeout = 5.0

    @pytest.fixture
    async def harness(self) -> AsyncIterator[MessagingHarness]:
        yield FakeBusHarness(FakeBus())


class TestFakeEmbedder(EmbedderContract):
    """Leaves out `SemanticSimilarityContract`: the fake's vectors are hashes of the text
    (deterministic unit vectors), they carry no meaning."""

    @pytest.fixture
    def embedder(self) -> FakeEmbedder:
        return FakeEmbedder(8)


class FakeUnitOfWorkRunMachine(ParseRunMachine):
    """The ParseRun properties on FakeDatabase's run repository (a fresh one per example)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        super().__init__()

    def make_store(self) -> RunStore:
        return UnitOfWorkRunStore(FakeDatabase(), self.loop)


def test_parse_run_machine_on_the_fake_unit_of_work() -> None:
    loop = asyncio.new_event_loop()
    try:
        run_state_machine_as_test(
            lambda: FakeUnitOfWorkRunMachine(loop),
            settings=settings(max_examples=50, stateful_step_count=30),
        )
    finally:
        loop.close()
