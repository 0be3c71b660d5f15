"""Contract kit for the KeywordIndex port.

Subclass once per adapter and provide the `keyword_index` fixture: a fresh, empty index
(own directory or own index name) on a real engine. The kit closes it after each test.

    class TestMyKeywordIndex(KeywordIndexContract):
        @pytest.fixture
        async def keyword_index(self) -> AsyncIterator[KeywordIndex]:
            index = MyKeywordIndex(...)
            yield index

`MetadataFilterContract` (a capability mixin beside `KeywordIndexContract`): `search`'s
metadata filter is applied inside the engine (every operator; a filtered search still fills
its limit when enough chunks match), `relabel_document`, and never across tenants.

Tokens are given directly (the index never re-analyses them), in the shape the PRETOKENIZE
plan produces: lower-case words and jieba words, no whitespace inside a token.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import attrs
import pytest

from ragline.application.ports.keyword_index import KeywordDoc, KeywordHit, KeywordIndex
from ragline.domain.metadata import DocumentMetadata, Eq, Exists, MetadataFilter
from ragline.testing.kits.metadata_cases import CASES, LABELS

USER, DATASET = "user-1", "dataset-1"


def doc(
    chunk_id: str,
    tokens: str,
    doc_id: str = "doc-1",
    user_id: str = USER,
    dataset_id: str = DATASET,
    parent_id: str | None = "parent-1",
    **payload: str,
) -> KeywordDoc:
    return KeywordDoc(
        chunk_id=chunk_id,
        doc_id=doc_id,
        user_id=user_id,
        dataset_id=dataset_id,
        parent_id=parent_id,
        tokens=tokens.split(),
        payload=payload,
    )


def ids(hits: Sequence[KeywordHit]) -> list[str]:
    return [hit.chunk_id for hit in hits]


class KeywordIndexContract:
    """The behaviour every KeywordIndex adapter must show."""

    @pytest.fixture
    async def keyword_index(self) -> AsyncIterator[KeywordIndex]:
        raise NotImplementedError("subclass and yield a fresh adapter under test")
        yield  # pragma: no cover

    @pytest.fixture
    async def index(self, keyword_index: KeywordIndex) -> AsyncIterator[KeywordIndex]:
        yield keyword_index
        await keyword_index.close()

    async def test_search_on_an_empty_index_finds_nothing(self, index: KeywordIndex) -> None:
        assert await index.search(USER, DATASET, ["anything"], 10) == []

    async def test_write_then_search_chinese_and_english(self, index: KeywordIndex) -> None:
        await index.write(
            [
                doc("c1", "北京 大学 北京大学 招生 简章", title="招生"),
                doc("c2", "the quick brown fox jumps", title="fox"),
                doc("c3", "北京 天气 weather report", title="天气"),
            ]
        )
        assert ids(await index.search(USER, DATASET, ["北京大学"], 10)) == ["c1"]
        assert ids(await index.search(USER, DATASET, ["fox"], 10)) == ["c2"]
        assert sorted(ids(await index.search(USER, DATASET, ["北京"], 10))) == ["c1", "c3"]
        [hit] = await index.search(USER, DATASET, ["weather"], 10)
        assert hit.doc_id == "doc-1"
        assert hit.score > 0
        assert dict(hit.payload) == {"title": "天气"}

    async def test_search_matches_any_query_token(self, index: KeywordIndex) -> None:
        await index.write([doc("c1", "alpha beta"), doc("c2", "gamma delta")])
        hits = await index.search(USER, DATASET, ["beta", "delta", "missing"], 10)
        assert sorted(ids(hits)) == ["c1", "c2"]

    async def test_tokens_match_exactly_without_reanalysis(self, index: KeywordIndex) -> None:
        await index.write([doc("c1", "running data-set c++ e.g")])
        for token in ["running", "data-set", "c++", "e.g"]:
            assert ids(await index.search(USER, DATASET, [token], 10)) == ["c1"], token
        for token in ["run", "data", "Running", "eg"]:
            assert await index.search(USER, DATASET, [token], 10) == [], token

    async def test_more_matches_rank_first(self, index: KeywordIndex) -> None:
        await index.write(
            [
                doc("one", "retrieval filler filler filler filler filler"),
                doc("three", "retrieval augmented generation filler filler filler"),
                doc("two", "retrieval augmented filler filler filler filler"),
                doc("none", "unrelated words only filler filler filler"),
            ]
        )
        hits = await index.search(USER, DATASET, ["retrieval", "augmented", "generation"], 10)
        assert ids(hits) == ["three", "two", "one"]
        assert hits[0].score > hits[1].score > hits[2].score > 0

    async def test_limit_keeps_the_best_hits(self, index: KeywordIndex) -> None:
        await index.write(
            [doc(f"c{n}", " ".join(["term"] * n + ["pad"] * (9 - n))) for n in range(1, 8)]
        )
        hits = await index.search(USER, DATASET, ["term"], 3)
        assert ids(hits) == ["c7", "c6", "c5"]
        assert await index.search(USER, DATASET, ["term"], 0) == []

    async def test_empty_query_gives_no_hits(self, index: KeywordIndex) -> None:
        await index.write([doc("c1", "alpha beta")])
        assert await index.search(USER, DATASET, [], 10) == []
        assert await index.search(USER, DATASET, ["missing"], 10) == []

    async def test_scopes_are_isolated(self, index: KeywordIndex) -> None:
        await index.write(
            [
                doc("c1", "shared secret", user_id="alice", dataset_id="d1", owner="alice/d1"),
                doc("c1", "shared secret", user_id="alice", dataset_id="d2", owner="alice/d2"),
                doc("c1", "shared secret", user_id="bob", dataset_id="d1", owner="bob/d1"),
            ]
        )
        for user, dataset in [("alice", "d1"), ("alice", "d2"), ("bob", "d1")]:
            [hit] = await index.search(user, dataset, ["secret"], 10)
            assert hit.payload["owner"] == f"{user}/{dataset}"
        assert await index.search("bob", "d2", ["secret"], 10) == []
        assert await index.search("carol", "d1", ["secret"], 10) == []

    async def test_delete_document_removes_only_that_document(self, index: KeywordIndex) -> None:
        await index.write(
            [
                doc("a1", "common alpha", doc_id="A"),
                doc("a2", "common alpha two", doc_id="A"),
                doc("b1", "common beta", doc_id="B"),
                doc("a9", "common other scope", doc_id="A", user_id="other"),
            ]
        )
        assert await index.delete_document(USER, DATASET, "A") == 2
        assert ids(await index.search(USER, DATASET, ["common"], 10)) == ["b1"]
        assert ids(await index.search("other", DATASET, ["common"], 10)) == ["a9"]
        assert await index.delete_document(USER, DATASET, "A") == 0
        assert await index.delete_document(USER, DATASET, "never-written") == 0

    async def test_delete_chunks_removes_only_those(self, index: KeywordIndex) -> None:
        await index.write(
            [
                doc("a1", "common alpha"),
                doc("a2", "common alpha two"),
                doc("a1", "common other scope", user_id="other"),
            ]
        )
        await index.delete_chunks(USER, DATASET, ["a1", "never-written"])
        assert ids(await index.search(USER, DATASET, ["common"], 10)) == ["a2"]
        assert ids(await index.search("other", DATASET, ["common"], 10)) == ["a1"]
        await index.delete_chunks(USER, DATASET, ["a1"])  # again: no error

    async def test_retired_chunks_are_gone_after_the_next_write(self, index: KeywordIndex) -> None:
        await index.write(
            [
                doc("a1", "common alpha"),
                doc("a2", "common alpha two"),
                doc("a1", "common other scope", user_id="other"),
            ]
        )
        await index.retire_chunks(USER, DATASET, ["a1", "never-written"])
        await index.write([doc("b1", "common beta")])
        assert sorted(ids(await index.search(USER, DATASET, ["common"], 10))) == ["a2", "b1"]
        assert ids(await index.search("other", DATASET, ["common"], 10)) == ["a1"]
        await index.retire_chunks(USER, DATASET, [])  # nothing: no error

    async def test_a_retired_chunk_written_again_stays(self, index: KeywordIndex) -> None:
        """A retire queued before a write of the same chunk never removes the new entry."""
        await index.write([doc("a1", "old words")])
        await index.retire_chunks(USER, DATASET, ["a1"])
        await index.write([doc("a1", "new words")])
        assert ids(await index.search(USER, DATASET, ["new"], 10)) == ["a1"]
        assert await index.search(USER, DATASET, ["old"], 10) == []

    async def test_rewrite_after_delete(self, index: KeywordIndex) -> None:
        await index.write([doc("c1", "old words", doc_id="A"), doc("c2", "old text", doc_id="A")])
        assert await index.delete_document(USER, DATASET, "A") == 2
        await index.write([doc("c3", "new words", doc_id="A")])
        assert await index.search(USER, DATASET, ["old"], 10) == []
        assert ids(await index.search(USER, DATASET, ["words"], 10)) == ["c3"]

    async def test_rewriting_the_same_chunk_ids_is_idempotent(self, index: KeywordIndex) -> None:
        batch = [doc("c1", "alpha beta", v="1"), doc("c2", "alpha gamma", v="1")]
        await index.write(batch)
        await index.write(batch)
        assert sorted(ids(await index.search(USER, DATASET, ["alpha"], 10))) == ["c1", "c2"]
        await index.write([doc("c1", "delta", v="2")])
        assert ids(await index.search(USER, DATASET, ["alpha"], 10)) == ["c2"]
        [hit] = await index.search(USER, DATASET, ["delta"], 10)
        assert (hit.chunk_id, hit.payload["v"]) == ("c1", "2")
        assert await index.delete_document(USER, DATASET, "doc-1") == 2

    async def test_duplicate_chunk_ids_in_one_write_keep_the_last(
        self, index: KeywordIndex
    ) -> None:
        await index.write([doc("c1", "first"), doc("c1", "second")])
        assert await index.search(USER, DATASET, ["first"], 10) == []
        assert ids(await index.search(USER, DATASET, ["second"], 10)) == ["c1"]

    async def test_writing_nothing_is_a_no_op(self, index: KeywordIndex) -> None:
        await index.write([])
        assert await index.search(USER, DATASET, ["x"], 10) == []

    async def test_a_chunk_without_tokens_is_stored_but_never_matches(
        self, index: KeywordIndex
    ) -> None:
        await index.write([doc("c1", "", doc_id="A"), doc("c2", "word", doc_id="A")])
        assert ids(await index.search(USER, DATASET, ["word"], 10)) == ["c2"]
        assert await index.delete_document(USER, DATASET, "A") == 2

    async def test_unicode_payload_and_ids_roundtrip(self, index: KeywordIndex) -> None:
        payload = {"section_path": "第一章 / 1.2 节", "source": "报告 2024.pdf", "empty": ""}
        await index.write([doc("块-1", "检索", doc_id="文档-1", parent_id=None, **payload)])
        [hit] = await index.search(USER, DATASET, ["检索"], 10)
        assert (hit.chunk_id, hit.doc_id, dict(hit.payload)) == ("块-1", "文档-1", payload)

    async def test_many_chunks_in_one_write(self, index: KeywordIndex) -> None:
        await index.write([doc(f"c{i}", f"bulk token{i}", doc_id="big") for i in range(1500)])
        assert ids(await index.search(USER, DATASET, ["token1234"], 10)) == ["c1234"]
        assert len(await index.search(USER, DATASET, ["bulk"], 2000)) == 1500
        assert await index.delete_document(USER, DATASET, "big") == 1500


def labelled(chunk_id: str, tokens: str, doc_id: str, **kw: str) -> KeywordDoc:
    return attrs.evolve(doc(chunk_id, tokens, doc_id=doc_id, **kw), metadata=LABELS[doc_id])


class MetadataFilterContract:
    """Capability: `where` is applied while the engine ranks; `relabel_document` replaces a
    document's metadata. Needs the `index` fixture of `KeywordIndexContract`."""

    async def _corpus(self, index: KeywordIndex) -> None:
        await index.write(
            [
                labelled(f"{doc_id}#{k}", "tea " * (n + k + 1) + "water", doc_id)
                for n, doc_id in enumerate(LABELS)
                for k in range(2)
            ]
        )

    @pytest.mark.parametrize(("name", "where", "kept"), CASES, ids=[c[0] for c in CASES])
    async def test_every_operator_inside_the_search(
        self, index: KeywordIndex, name: str, where: MetadataFilter, kept: set[str]
    ) -> None:
        await self._corpus(index)
        hits = await index.search(USER, DATASET, ["tea"], 50, where)
        assert {h.doc_id for h in hits} == kept, name
        assert len(hits) == 2 * len(kept)

    async def test_a_rare_match_still_fills_the_limit(self, index: KeywordIndex) -> None:
        """300 chunks, 12 of them Ann's and all weaker matches: the top 10 are all hers."""
        ann = DocumentMetadata({"author": "Ann"})
        await index.write(
            [
                attrs.evolve(
                    doc(f"c{i:03}", "tea" if i % 25 == 0 else "tea tea tea green", doc_id=f"d{i}"),
                    metadata=ann if i % 25 == 0 else DocumentMetadata(),
                )
                for i in range(300)
            ]
        )
        hits = await index.search(USER, DATASET, ["tea", "green"], 10, Eq("author", "Ann"))
        assert len(hits) == 10
        assert all(int(h.chunk_id[1:]) % 25 == 0 for h in hits)

    async def test_relabel_replaces_a_documents_metadata(self, index: KeywordIndex) -> None:
        await self._corpus(index)
        await index.relabel_document(USER, DATASET, "ann-2019", DocumentMetadata({"author": "Dee"}))
        ann = await index.search(USER, DATASET, ["tea"], 50, Eq("author", "Ann"))
        assert {h.doc_id for h in ann} == {"ann-2021"}
        dee = await index.search(USER, DATASET, ["water"], 50, Eq("author", "Dee"))
        assert sorted(ids(dee)) == ["ann-2019#0", "ann-2019#1"]  # tokens kept
        published = await index.search(USER, DATASET, ["tea"], 50, Exists("published"))
        assert {h.doc_id for h in published} == {"bob-2020"}
        assert await index.search(USER, DATASET, ["tea"], 50) != []
        await index.relabel_document(USER, DATASET, "no-such-doc", DocumentMetadata())

    async def test_a_filter_never_reaches_another_tenant(self, index: KeywordIndex) -> None:
        await self._corpus(index)
        await index.write(
            [
                labelled("theirs", "tea", "ann-2019", user_id="user-2"),
                labelled("other-ds", "tea", "ann-2019", dataset_id="dataset-2"),
            ]
        )
        for where in (Exists("author"), Eq("author", "Ann")):
            hits = await index.search(USER, DATASET, ["tea"], 50, where)
            assert "theirs" not in ids(hits) and "other-ds" not in ids(hits)
        assert ids(await index.search("user-2", DATASET, ["tea"], 50, Exists("author"))) == [
            "theirs"
        ]
