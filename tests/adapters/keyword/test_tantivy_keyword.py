"""TantivyKeywordIndex: the KeywordIndex kit plus persistence and the single-writer rule."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import tantivy

from ragline.adapters.keyword_index.tantivy import TantivyKeywordIndex
from ragline.adapters.keyword_index.tantivy.index import SCHEMA_VERSION, build_schema
from ragline.application.ports.keyword_index import (
    KeywordIndex,
    KeywordIndexUnavailable,
)
from ragline.testing.kits.keyword_index import (
    KeywordIndexContract,
    MetadataFilterContract,
    doc,
    ids,
)


class TestTantivyKeywordIndex(KeywordIndexContract, MetadataFilterContract):
    @pytest.fixture
    async def keyword_index(self, tmp_path: Path) -> AsyncIterator[KeywordIndex]:
        yield TantivyKeywordIndex(tmp_path / "keyword")


class TestTantivySchema2Index(KeywordIndexContract, MetadataFilterContract):
    """An index folder written before schema 3 (chunk ids as text terms) keeps working."""

    @pytest.fixture
    async def keyword_index(self, tmp_path: Path) -> AsyncIterator[KeywordIndex]:
        (tmp_path / "keyword").mkdir()
        tantivy.Index(build_schema(2), path=str(tmp_path / "keyword"))
        index = TantivyKeywordIndex(tmp_path / "keyword")
        assert index.schema_version == 2
        yield index


async def test_a_new_index_keeps_chunk_ids_out_of_the_term_dictionary(tmp_path: Path) -> None:
    index = TantivyKeywordIndex(tmp_path / "kw")
    await index.write([doc("c1", "words", parent_id="p1")])
    assert index.schema_version == SCHEMA_VERSION == 3
    await index.close()
    searcher = tantivy.Index.open(str(tmp_path / "kw")).searcher()
    stored = searcher.doc(searcher.search(tantivy.Query.all_query(), 1).hits[0][1]).to_dict()
    assert stored["chunk_id"] == [b"c1"] and stored["parent_id"] == [b"p1"]
    reopened = TantivyKeywordIndex(tmp_path / "kw")
    assert reopened.schema_version == 3
    assert ids(await reopened.search("user-1", "dataset-1", ["words"], 10)) == ["c1"]
    await reopened.close()


async def test_index_survives_reopening(tmp_path: Path) -> None:
    first = TantivyKeywordIndex(tmp_path / "kw")
    await first.write([doc("c1", "persistent words")])
    await first.close()
    second = TantivyKeywordIndex(tmp_path / "kw")
    assert ids(await second.search("user-1", "dataset-1", ["persistent"], 10)) == ["c1"]
    await second.close()


async def test_a_reader_sees_another_instances_commits(tmp_path: Path) -> None:
    writer = TantivyKeywordIndex(tmp_path / "kw")
    reader = TantivyKeywordIndex(tmp_path / "kw")
    assert await reader.search("user-1", "dataset-1", ["fresh"], 10) == []
    await writer.write([doc("c1", "fresh words")])
    assert ids(await reader.search("user-1", "dataset-1", ["fresh"], 10)) == ["c1"]
    await writer.close()
    await reader.close()


async def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    first = TantivyKeywordIndex(tmp_path / "kw")
    second = TantivyKeywordIndex(tmp_path / "kw")
    await first.write([doc("c1", "one")])
    with pytest.raises(KeywordIndexUnavailable):
        await second.write([doc("c2", "two")])
    await first.close()
    await second.write([doc("c2", "two")])  # lock released by close()
    assert ids(await second.search("user-1", "dataset-1", ["one", "two"], 10)) != []
    await second.close()


async def test_closed_index_refuses_writes(tmp_path: Path) -> None:
    index = TantivyKeywordIndex(tmp_path / "kw")
    await index.close()
    with pytest.raises(KeywordIndexUnavailable):
        await index.write([doc("c1", "x")])


async def test_concurrent_writes_are_serialised(tmp_path: Path) -> None:
    index = TantivyKeywordIndex(tmp_path / "kw")
    batches = [[doc(f"c{n}-{i}", "parallel", doc_id=f"d{n}") for i in range(5)] for n in range(6)]
    await asyncio.gather(*(index.write(batch) for batch in batches))
    assert len(await index.search("user-1", "dataset-1", ["parallel"], 100)) == 30
    await index.close()


def test_one_adapter_serves_successive_event_loops(tmp_path: Path) -> None:
    index = TantivyKeywordIndex(tmp_path / "kw")
    asyncio.run(index.write([doc("c1", "first loop")]))
    asyncio.run(index.write([doc("c2", "second loop")]))
    assert len(asyncio.run(index.search("user-1", "dataset-1", ["loop"], 10))) == 2
    asyncio.run(index.close())


async def test_deleting_an_unindexed_document_skips_the_queue(tmp_path: Path) -> None:
    """Once this process holds the writer, a delete with nothing committed to remove is
    answered from the last commit; one that finds documents still goes through the queue."""
    index = TantivyKeywordIndex(tmp_path / "kw")
    await index.write([doc("c1", "kept words", doc_id="d1")])
    committer = index._committer
    queued = committer.submit

    def refuse(change: object) -> None:
        raise AssertionError("queued")

    committer.submit = refuse  # type: ignore[method-assign]
    assert await index.delete_document("user-1", "dataset-1", "never-written") == 0
    with pytest.raises(KeywordIndexUnavailable, match="queued"):
        await index.delete_document("user-1", "dataset-1", "d1")
    committer.submit = queued  # type: ignore[method-assign]
    assert await index.delete_document("user-1", "dataset-1", "d1") == 1
    assert await index.search("user-1", "dataset-1", ["kept"], 10) == []
    await index.close()


def _commits(index: TantivyKeywordIndex) -> list[int]:
    """Count the index's commits from here on (the reload after each one)."""
    count = [0]
    reload = index._committer._after_commit

    def counted() -> None:
        count[0] += 1
        reload()

    index._committer._after_commit = counted
    return count


async def test_a_retire_rides_in_the_next_writes_commit(tmp_path: Path) -> None:
    """What makes a forced re-ingest's lineage swap cheap: no commit of its own."""
    index = TantivyKeywordIndex(tmp_path / "kw")
    await index.write([doc("old-1", "old words"), doc("old-2", "old words")])
    commits = _commits(index)
    await index.retire_chunks("user-1", "dataset-1", ["old-1", "old-2"])
    assert commits[0] == 0  # deferred: nothing committed yet
    await index.write([doc("new-1", "new words")])
    assert commits[0] == 1
    assert ids(await index.search("user-1", "dataset-1", ["words"], 10)) == ["new-1"]
    await index.close()


async def test_a_retire_with_no_write_after_it_is_committed_by_its_timer(tmp_path: Path) -> None:
    index = TantivyKeywordIndex(tmp_path / "kw")
    await index.write([doc("old-1", "old words")])
    await index.retire_chunks("user-1", "dataset-1", ["old-1"])
    for _ in range(600):  # the timer fires within 2 s; wait on the outcome, up to 60 s
        if not await index.search("user-1", "dataset-1", ["old"], 10):
            break
        await asyncio.sleep(0.1)
    assert await index.search("user-1", "dataset-1", ["old"], 10) == []
    await index.close()


async def test_close_commits_a_pending_retire(tmp_path: Path) -> None:
    index = TantivyKeywordIndex(tmp_path / "kw")
    await index.write([doc("old-1", "old words"), doc("kept", "kept words")])
    await index.retire_chunks("user-1", "dataset-1", ["old-1"])
    await index.close()
    reopened = TantivyKeywordIndex(tmp_path / "kw")
    assert ids(await reopened.search("user-1", "dataset-1", ["old", "kept"], 10)) == ["kept"]
    await reopened.close()
