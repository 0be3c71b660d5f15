"""Who holds which bytes, and what the readers of the parse cache then show (issue 18): every
path that learns a source's sha256 for a user records that user as a holder, and ReadParse
and SubmitParse answer a tenant only for held sha256s — unheld is unknown, word for word.
The fakes' store, the real use cases; over HTTP: tests/parse_cache/test_visibility.py."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import pytest

from ragline.application.access import Caller
from ragline.application.parsing import ParseCacheSettings, ReadParse, SubmitParse, UnknownDocument
from ragline.domain.parse_batch import PageRange, ParseTier
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import DOCUMENT_TEXT, SOURCE_BUCKET, Harness

OWNER, OTHER = Caller.tenant(7), Caller.tenant(8)
SERVICE = Caller.service()
SHA = hashlib.sha256(DOCUMENT_TEXT.encode()).hexdigest()
TIER = ParseTier.QUALITY  # CLEANING's tier of a txt (backend auto)


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path, parse_cache=ParseCacheSettings(poll=timedelta(0)))
    for user in (7, 8):
        harness.configure_embedding(user)
    return harness


def reader(h: Harness) -> ReadParse:
    read: ReadParse = h.container.read_parse()
    return read


def submit(h: Harness) -> SubmitParse:
    found: SubmitParse = h.container.submit_parse()
    return found


async def unknown_message(h: Harness, sha256: str, caller: Caller) -> str:
    with pytest.raises(UnknownDocument) as refused:
        await submit(h).ref(sha256, TIER, caller=caller)
    return str(refused.value).replace(sha256, "<sha256>")


async def test_a_run_makes_its_user_a_holder_and_no_one_else(h: Harness) -> None:
    task = h.task("txt")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.db.parse_holdings == {("7", SHA)}
    (batch,) = h.db.parse_batches.values()
    assert batch.tier is TIER
    read = reader(h)
    assert await read.batches([batch.id], caller=OWNER) == [batch]
    assert await read.batches([batch.id], caller=OTHER) == []
    assert await read.batches([batch.id], caller=SERVICE) == [batch]
    assert await read.coverage(SHA, TIER, None, caller=OTHER) is None
    assert await read.coverage(SHA, TIER, PageRange(1, 1), caller=OTHER) is None
    assert await read.coverage(SHA, TIER, None, caller=OWNER) is not None
    assert (await read.markdown(SHA, TIER, PageRange(1, 1), caller=OWNER)).markdown
    # a parse request by sha256: unheld reads word for word like never seen
    never = await unknown_message(h, "f" * 64, OTHER)
    assert await unknown_message(h, SHA, OTHER) == never
    assert (await submit(h).ref(SHA, TIER, caller=OWNER)).response.wait_parse_ids == ()


async def test_a_cached_stored_version_makes_the_new_runs_user_a_holder(h: Harness) -> None:
    await h.pipeline.handle(h.task("txt"))
    assert await reader(h).known(SHA, TIER, caller=OTHER) == []
    gets = h.faults.hits["storage.get"]
    # the service names the same stored object for another user: read from the cache only
    again = h.task("txt", user_id=8, original_file_id=200, md_object_key="md/8/doc.md")
    await h.pipeline.handle(again)
    assert h.run(again.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.faults.hits["storage.get"] - gets == 1  # the batch's pages, not the source
    assert h.db.parse_holdings == {("7", SHA), ("8", SHA)}
    assert await reader(h).known(SHA, TIER, caller=OTHER) != []


async def test_a_parse_request_naming_an_object_makes_the_caller_a_holder(h: Harness) -> None:
    await h.pipeline.handle(h.task("txt"))
    h.storage.add(SOURCE_BUCKET, "8/copy.txt", DOCUMENT_TEXT.encode())
    assert await reader(h).known(SHA, TIER, caller=OTHER) == []
    submitted = await submit(h).ref(f"{SOURCE_BUCKET}/8/copy.txt", TIER, caller=OTHER)
    assert submitted.response.sha256 == SHA and submitted.response.wait_parse_ids == ()
    assert ("8", SHA) in h.db.parse_holdings
    assert await reader(h).known(SHA, TIER, caller=OTHER) != []


async def test_identifying_an_object_for_a_tenant_makes_it_a_holder(h: Harness) -> None:
    await h.pipeline.handle(h.task("txt"))
    h.storage.add(SOURCE_BUCKET, "8/copy.txt", DOCUMENT_TEXT.encode())
    sha256 = await submit(h).sha256_for(f"{SOURCE_BUCKET}/8/copy.txt", caller=OTHER)
    assert sha256 == SHA and ("8", SHA) in h.db.parse_holdings
    assert await reader(h).coverage(SHA, TIER, None, caller=OTHER) is not None
    # naming a sha256 proves nothing: it is not recorded
    assert await submit(h).sha256_for("a" * 64, caller=OTHER) == "a" * 64
    assert ("8", "a" * 64) not in h.db.parse_holdings


async def test_the_service_and_the_operator_record_no_holder(h: Harness, tmp_path: Path) -> None:
    h.storage.add(SOURCE_BUCKET, "shared/doc.txt", DOCUMENT_TEXT.encode())
    await submit(h).ref(f"{SOURCE_BUCKET}/shared/doc.txt", TIER, caller=SERVICE)
    await submit(h).sha256_for(f"{SOURCE_BUCKET}/shared/doc.txt", caller=SERVICE)
    local = tmp_path / "local.txt"
    local.write_text("A file the operator parses with `ragline parse`.", encoding="utf-8")
    await submit(h).file(local, TIER, holder=None)
    assert h.db.parse_batches and h.db.parse_holdings == set()
    assert await reader(h).known(SHA, TIER, caller=OWNER) == []
    assert await reader(h).known(SHA, TIER, caller=SERVICE) != []


async def test_a_held_sha256_whose_object_is_gone_names_no_object(h: Harness) -> None:
    await h.pipeline.handle(h.task("txt"))
    await h.pipeline.handle(
        h.task("txt", user_id=8, original_file_id=200, source_object_key="8/doc.txt")
    )
    for key in ("files/doc-100.txt", "8/doc.txt"):
        await h.storage.delete(SOURCE_BUCKET, key)
    with pytest.raises(UnknownDocument) as gone:
        await submit(h).ref(SHA, TIER, force=True, caller=OWNER)
    assert "doc" not in str(gone.value) and SOURCE_BUCKET not in str(gone.value)
