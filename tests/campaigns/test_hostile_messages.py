"""Hostile task messages: Hypothesis-generated bodies fed to the real consumer.

Under test, all real: `TaskConsumer` (adapters/inbound/task_consumer), the JSON wire decoding
(adapters/wire_format/json + contracts), the pipeline built by the container (validation, the
idempotency barrier, the retry rules, the stages) and the local object store
(adapters/object_storage/local) rooted in a temp folder. The rest are the test fakes of
tests/fakes/harness.py (database, indexes, models, parser).

Each body is a valid task bent in one to four ways (wrong types, missing and extra fields,
huge strings, lone surrogates, path traversal in buckets/keys/names, a retry naming another
tenant's run or no run, absurd enum values), then sent as JSON, as bad UTF-8, truncated,
or replaced by something that is not a task at all. For every one:

- the consumer returns (never raises) and settles the delivery;
- an acked delivery left a terminal run and its result in the outbox: SUCCESS, or FAILED
  with a precise code (never INTERNAL_UNKNOWN_ERROR); a dead-lettered one has a reason;
- no file outside the storage root is opened (an audit hook watches every `open` of the
  process for the canary files beside the root, and the store's resolved paths are
  checked against the root), and the other tenant's run is never touched.

300 examples in the suite; the campaign (10,000) by
`RAGLINE_CAMPAIGN=full .venv/bin/python -m pytest -q -s tests/campaigns/test_hostile_messages.py`,
which writes benchmarks/results/hostile_messages.json (figures in docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections import Counter, deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.adapters.inbound.task_consumer import SupervisedConsumer
from ragline.adapters.object_storage.local import LocalObjectStorage
from ragline.adapters.wire_format.json import JsonWireFormat
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_run import FailureCode, PipelineStatus, RetryRefusal
from tests.fakes.harness import DOCUMENT_TEXT, Harness
from tests.fakes.messaging import FakeDelivery, FakeTaskSource

FULL = os.environ.get("RAGLINE_CAMPAIGN") == "full"
EXAMPLES = 10_000 if FULL else 300
RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"

TENANT, VICTIM = 7, 99
SOURCE_BUCKET, MD_BUCKET = "uploads", "markdown"
CANARY = "CANARY-5f1c outside the storage root"

# -- watching opens ----------------------------------------------------------------------

_watched: set[str] = set()  # canary paths (resolved); an open of one is recorded
_opened: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _watched and args and isinstance(args[0], str | bytes | Path):
        name = os.fsdecode(args[0])
        try:
            resolved = str(Path(name).resolve())
        except (OSError, ValueError):
            return
        if resolved in _watched:
            _opened.append(resolved)


_hooked: list[bool] = []


def watch_opens() -> None:
    """Install the audit hook once (hooks cannot be removed; idle while _watched is empty)."""
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked.append(True)


class WatchedStorage(LocalObjectStorage):
    """The real local store, recording every path it resolves for a bucket and key."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.outside: list[str] = []
        self.resolved = 0

    def _object_path(self, bucket: str, key: str) -> Path:
        path = super()._object_path(bucket, key)
        self.resolved += 1
        if not path.resolve().is_relative_to(self.root.resolve()):
            self.outside.append(str(path))
        return path


# -- hostile messages --------------------------------------------------------------------

PATH_FIELDS = [
    "source_bucket",
    "source_object_key",
    "source_filename",
    "md_bucket",
    "md_object_key",
    "image_bucket",
    "image_prefix",
]
ENUM_FIELDS = ["trigger_mode", "pdf_parser_backend", "file_type", "docling_force_ocr"]
ALL_FIELDS = [
    "task_id",
    "original_file_id",
    "document_parse_task_id",
    "user_id",
    "dataset_id",
    *PATH_FIELDS,
    *ENUM_FIELDS,
    "is_retry",
    "previous_task_id",
]

TRAVERSALS = [
    "../../outside/canary.txt",
    "../canary.txt",
    "..",
    ".",
    "files/../../../outside/canary.txt",
    "files/../../canary.txt",
    "..\\..\\canary.txt",
    "%2e%2e/%2e%2e/canary.txt",
    "files/\x00/../../canary.txt",
    "files//doc.txt",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "file:///etc/passwd",
    "<CANARY>",  # the canary's absolute path
    "uploads/../../outside",
    ".meta",
    ".tmp",
]

huge = st.sampled_from([1_000, 70_000, 600_000, 1_200_000]).map(lambda n: "x" * n)
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**200),
    st.integers(max_value=0),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "😀" * 100, "12345", "true", "null"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    huge,
)
absurd = st.one_of(
    st.sampled_from(
        ["PDF", "Mineru", "DROP TABLE parse_run", "../pdf", "pdf.exe", "", " ", "pdf ", "🙂"]
    ),
    st.text(max_size=30),
    huge,
)


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, str, Any]:
    kind = draw(
        st.sampled_from(
            ["junk", "drop", "extra", "traversal", "absurd", "other_tenant", "no_such_run"]
        )
    )
    if kind == "junk":
        return kind, draw(st.sampled_from(ALL_FIELDS)), draw(junk)
    if kind == "drop":
        return kind, draw(st.sampled_from(ALL_FIELDS)), None
    if kind == "extra":
        return kind, draw(st.text(min_size=1, max_size=20)), draw(junk)
    if kind == "traversal":
        return kind, draw(st.sampled_from(PATH_FIELDS)), draw(st.sampled_from(TRAVERSALS))
    if kind == "absurd":
        return kind, draw(st.sampled_from(ENUM_FIELDS)), draw(absurd)
    return kind, "previous_task_id", draw(st.text(max_size=12))


@st.composite
def hostile_bodies(draw: st.DrawFn) -> tuple[dict[str, Any] | None, str, bytes | None, int]:
    """(fields, encoding, raw, cut): the message's fields and how it is put on the wire."""
    encoding = draw(
        st.sampled_from(
            ["json"] * 6 + ["ascii_json", "bad_utf8", "truncated", "raw", "nan", "nested", "array"]
        )
    )
    raw = draw(st.binary(max_size=200)) if encoding == "raw" else None
    fields = None if encoding == "raw" else draw(st.lists(mutation(), min_size=1, max_size=4))
    return fields, encoding, raw, draw(st.integers(0, 10_000))  # type: ignore[return-value]


class _IdleSource(FakeTaskSource):
    """Yields its deliveries, then says so (`idle`) and waits until closed."""

    def __init__(self, deliveries: list[FakeDelivery]) -> None:
        super().__init__(deliveries)
        self.idle = asyncio.Event()

    async def _iterate(self) -> AsyncIterator[FakeDelivery]:
        async for delivery in super()._iterate():
            yield delivery
        self.idle.set()
        while not self.closed:
            await asyncio.sleep(0.01)


class Campaign:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.storage = WatchedStorage(tmp / "store")
        self.h = Harness(tmp, storage=self.storage)
        self.h.configure_embedding(TENANT)
        self.h.configure_embedding(VICTIM)
        self.loop = asyncio.new_event_loop()
        self.wire = JsonWireFormat()
        self.count = 0
        self.codes: Counter[str] = Counter()
        self.crashes: list[str] = []
        self.opened_outside: list[str] = []
        self.recent: deque[bytes] = deque(maxlen=200)
        self.canaries = [tmp / "canary.txt", tmp / "outside" / "canary.txt"]
        for canary in self.canaries:
            canary.parent.mkdir(parents=True, exist_ok=True)
            canary.write_text(CANARY)
        self.loop.run_until_complete(self._seed())
        self.victim = self.h.db.runs["victim-1"]

    async def _seed(self) -> None:
        for bucket in (SOURCE_BUCKET, MD_BUCKET):
            await self.storage.ensure_bucket(bucket)
        await self.storage.put_bytes(SOURCE_BUCKET, "files/doc.txt", DOCUMENT_TEXT.encode())
        # the other tenant's FAILED, retryable run (its source is missing)
        victim = self.base("victim-1") | {"user_id": VICTIM, "source_object_key": "gone.txt"}
        delivery = FakeDelivery(json.dumps(victim).encode())
        await self.h.consumer.process(delivery)
        run = self.h.db.runs["victim-1"]
        assert run.pipeline_status is PipelineStatus.FAILED and delivery.acked

    def base(self, task_id: str) -> dict[str, Any]:
        return {
            "task_id": task_id,
            "original_file_id": 100,
            "document_parse_task_id": 500,
            "user_id": TENANT,
            "dataset_id": 3,
            "file_type": "txt",
            "source_bucket": SOURCE_BUCKET,
            "source_object_key": "files/doc.txt",
            "source_filename": "doc.txt",
            "md_bucket": MD_BUCKET,
            "md_object_key": "md/doc.md",
        }

    def body(self, drawn: tuple[dict[str, Any] | None, str, bytes | None, int]) -> bytes:
        mutations, encoding, raw, cut = drawn
        if raw is not None:
            return raw
        fields = self.base(f"h-{self.count}")
        for kind, name, value in mutations or []:
            if kind == "drop":
                fields.pop(name, None)
            elif kind in ("other_tenant", "no_such_run"):
                fields |= {"is_retry": True, "trigger_mode": "manual_retry"}
                fields[name] = "victim-1" if kind == "other_tenant" else f"missing-{value}"
            else:
                if value == "<CANARY>":
                    value = str(self.canaries[0])
                fields[name] = value
        if encoding == "nan":
            fields["original_file_id"] = float("nan")
        if encoding == "nested":  # far deeper than any parser should follow
            depth = 1 + cut % 5000
            return b"[" * depth + json.dumps(fields).encode() + b"]" * depth
        if encoding == "array":
            return json.dumps([fields]).encode()
        text = json.dumps(fields, ensure_ascii=encoding == "ascii_json")
        data = text.encode("utf-8", "surrogatepass")
        if encoding == "bad_utf8":
            at = cut % (len(data) + 1)
            return data[:at] + b"\xff\xfe\xc3" + data[at:]
        if encoding == "truncated":
            return data[: cut % max(len(data), 1)]
        return data

    def feed(self, body: bytes) -> None:
        self.count += 1
        self.recent.append(body)
        decoded = self.wire.decode_task(body)
        delivery = FakeDelivery(body)
        try:
            self.loop.run_until_complete(self.h.consumer.process(delivery))
        except BaseException as error:  # the consumer died: the campaign's first figure
            self.crashes.append(f"{type(error).__name__}: {error}"[:300])
            raise
        assert delivery.settled, "a delivery was left unsettled"
        if delivery.dead_letter_reason is not None:
            reason = delivery.dead_letter_reason
            assert reason.strip(), "dead-lettered without a reason"
            assert not reason.startswith(FailureCode.INTERNAL_UNKNOWN_ERROR.value), reason
            self.codes[f"dead-letter {reason.split(':', 1)[0]}"] += 1
            return
        task_id = decoded.task_id
        assert task_id is not None, "acked a body without a task_id"
        run = self.h.db.runs[task_id]
        assert run.is_terminal, f"{task_id} acked but {run.pipeline_status.value}"
        result = self.h.result(task_id)
        assert result.task_id == task_id
        if run.failure_reason is None:
            self.codes["SUCCESS"] += 1
        else:
            code = run.failure_reason.code
            assert code is not FailureCode.INTERNAL_UNKNOWN_ERROR, run.failure_reason.text
            if "InvalidObjectKey" in run.failure_reason.text:  # the message's own coordinates
                assert code is FailureCode.INVALID_TASK_CONTEXT, run.failure_reason.text
            self.codes[code.value] += 1
        if (
            isinstance(decoded, ParseTaskCommand)
            and decoded.is_retry
            and decoded.previous_task_id == "victim-1"
            and decoded.user_id != VICTIM
        ):
            assert run.failure_reason is not None  # refused: never another tenant's run
            assert run.failure_reason.code in (
                FailureCode.RETRY_VALIDATION_FAILED,  # as for a run that does not exist
                FailureCode.INVALID_TASK_CONTEXT,  # the message itself is invalid
            ), run.failure_reason.text
            if run.failure_reason.code is FailureCode.RETRY_VALIDATION_FAILED:
                assert run.failure_reason.detail == RetryRefusal.PREVIOUS_NOT_FOUND.value, (
                    "a retry of another tenant's run said more than 'not found'"
                )
            assert run.retry_of_task_id is None or run.stages == {
                s: st for s, st in run.stages.items() if not st.inherited
            }, "a refused retry inherited the other tenant's stages"

    def replay_supervised(self) -> None:
        """The last bodies once more through the worker's supervised loop (as redeliveries):
        it settles every one and is still consuming afterwards, not ended by any of them."""
        deliveries = [FakeDelivery(body) for body in self.recent]
        source = _IdleSource(deliveries)
        supervised = SupervisedConsumer(self.h.pipeline, self.wire, lambda: source)

        async def run() -> None:
            stop = asyncio.Event()
            running = asyncio.create_task(supervised.run(stop))
            await asyncio.wait_for(source.idle.wait(), 300)
            assert not running.done(), "the supervised consumer ended"
            stop.set()
            await supervised.close()
            await asyncio.wait_for(running, 30)

        self.loop.run_until_complete(run())
        assert all(d.settled for d in deliveries)
        assert supervised.reconnects == 0

    def check_contained(self) -> None:
        self.opened_outside = list(_opened)
        _watched.clear()  # the check below reads the canaries itself
        assert _opened == [], f"files outside the storage root were opened: {_opened}"
        assert self.storage.outside == [], f"resolved outside the root: {self.storage.outside}"
        assert self.h.db.runs["victim-1"] == self.victim, "the other tenant's run was touched"
        assert all(c.read_text() == CANARY for c in self.canaries)


def test_hostile_messages_never_kill_the_consumer(tmp_path: Path) -> None:
    watch_opens()
    campaign = Campaign(tmp_path)
    _watched.update(str(c.resolve()) for c in campaign.canaries)
    campaign.loop.run_until_complete(asyncio.to_thread(campaign.canaries[1].read_bytes))
    assert _opened == [str(campaign.canaries[1].resolve())], "the hook must see every open"
    _opened.clear()
    started = time.perf_counter()  # a figure for the report, never asserted

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(drawn=hostile_bodies())
    def one_message(drawn: tuple[dict[str, Any] | None, str, bytes | None, int]) -> None:
        campaign.feed(campaign.body(drawn))

    try:
        one_message()
        campaign.replay_supervised()
        campaign.check_contained()
    finally:
        _watched.clear()
        campaign.loop.close()
    seconds = time.perf_counter() - started
    figures = {
        "messages": campaign.count,
        "consumer_crashes": len(campaign.crashes),
        "paths_resolved_by_the_store": campaign.storage.resolved,
        "opens_outside_the_root": len(campaign.opened_outside),
        "outcomes": dict(sorted(campaign.codes.items(), key=lambda kv: -kv[1])),
        "seconds": round(seconds, 1),
    }
    print(json.dumps(figures, indent=2))
    assert campaign.count >= EXAMPLES * 0.9  # Hypothesis ran (nearly) every example
    assert sum(campaign.codes.values()) == campaign.count
    if FULL:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "hostile_messages.json").write_text(json.dumps(figures, indent=2) + "\n")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("source_bucket", "../outside"),
        ("source_object_key", "files/../../outside/canary.txt"),
        ("source_object_key", "/etc/passwd"),
        ("md_bucket", ".."),
        ("md_object_key", "../../outside/canary.txt"),
    ],
)
def test_coordinates_the_store_refuses_fail_as_invalid_task_context(
    tmp_path: Path, field: str, value: str
) -> None:
    """Found by the campaign: a traversal in a bucket or key was refused by the store (no
    file outside was touched) but failed as PARSE_ENGINE_FAILED / PARSED_FILE_UPLOAD_FAILED,
    which the docs call recoverable by retry; a retry can never fix the message."""
    campaign = Campaign(tmp_path)
    try:
        fields = campaign.base("refused-1") | {field: value}
        delivery = FakeDelivery(json.dumps(fields).encode())
        campaign.loop.run_until_complete(campaign.h.consumer.process(delivery))
    finally:
        campaign.loop.close()
    run = campaign.h.db.runs["refused-1"]
    assert delivery.acked and run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INVALID_TASK_CONTEXT, run.failure_reason.text
    assert not run.failure_reason.code.recoverable
    assert campaign.h.result("refused-1").task_status.value == "failed"
