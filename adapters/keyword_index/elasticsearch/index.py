"""KeywordIndex on Elasticsearch 8/9 (async client), using documented APIs only.

Index layout: `text` is analysed by a whitespace-only analyzer (no lower-casing, no stemming),
so the terms are exactly the PRETOKENIZE plan's tokens; chunk_id, doc_id, user_id, dataset_id
and parent_id are `keyword` fields; `payload` is kept in `_source` but not indexed; `meta`
holds the document's metadata in the flat form, each field typed by its name's prefix
through dynamic templates (`s_*` keyword, `n_*` double, `d_*` long: epoch days), so a search
filter is a bool filter clause beside the scope's. Every distinct metadata key adds one
field to the mapping (Elasticsearch bounds a mapping at 1000 fields by default). The
document `_id` is a digest of (user_id, dataset_id, chunk_id), so rewriting a chunk replaces it.

Writes: bulk requests of at most `bulk_size` actions, then one refresh so the data is
searchable on return. Elasticsearch has no multi-document transaction: if part of a write
fails, the documents this call did write are deleted again (best effort) before
KeywordWriteFailed is raised. Deletes: delete_by_query on the scope and doc_id, refreshed.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from elasticsearch import ApiError, AsyncElasticsearch, NotFoundError, TransportError

from ragline.application.ports.keyword_index import (
    KeywordDoc,
    KeywordHit,
    KeywordIndexUnavailable,
    KeywordWriteFailed,
)
from ragline.domain.metadata import (
    AllOf,
    AnyOf,
    DocumentMetadata,
    Eq,
    Exists,
    In,
    MetadataFilter,
)

_ERRORS = (TransportError, ApiError)  # connection errors and timeouts are TransportErrors
MAX_QUERY_TERMS = 1024  # well under the default indices.query.bool.max_clause_count

SETTINGS: dict[str, Any] = {
    "analysis": {"analyzer": {"ragline_whitespace": {"type": "custom", "tokenizer": "whitespace"}}}
}
MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "chunk_id": {"type": "keyword"},
        "doc_id": {"type": "keyword"},
        "user_id": {"type": "keyword"},
        "dataset_id": {"type": "keyword"},
        "parent_id": {"type": "keyword"},
        "text": {"type": "text", "analyzer": "ragline_whitespace"},
        "payload": {"type": "object", "enabled": False},
        "meta": {"type": "object", "dynamic": True},
    },
    "dynamic_templates": [
        {"meta_strings": {"path_match": "meta.s_*", "mapping": {"type": "keyword"}}},
        {"meta_numbers": {"path_match": "meta.n_*", "mapping": {"type": "double"}}},
        {"meta_days": {"path_match": "meta.d_*", "mapping": {"type": "long"}}},
    ],
}


class ElasticsearchKeywordIndex:
    """KeywordIndex in one Elasticsearch index (created on first use if missing)."""

    def __init__(
        self,
        url: str | Sequence[str] | None = None,
        index: str = "ragline_chunks",
        *,
        api_key: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        verify_certs: bool = True,
        request_timeout: float = 30.0,
        bulk_size: int = 500,
        number_of_shards: int = 1,
        number_of_replicas: int | None = None,
        client: AsyncElasticsearch | None = None,
    ) -> None:
        if client is None and url is None:
            raise ValueError("give an Elasticsearch url or a client")
        self._owns_client = client is None
        self._client = client or AsyncElasticsearch(
            url if isinstance(url, str) else list(url or []),
            api_key=api_key,
            basic_auth=basic_auth,
            verify_certs=verify_certs,
            request_timeout=request_timeout,
            max_retries=2,
            retry_on_timeout=True,
        )
        self._index = index
        self._bulk_size = bulk_size
        self._settings: dict[str, Any] = {**SETTINGS, "number_of_shards": number_of_shards}
        if number_of_replicas is not None:
            self._settings["number_of_replicas"] = number_of_replicas
        self._ready = False

    async def ensure_index(self) -> None:
        """Create the index with its mapping if it does not exist (safe to race)."""
        if self._ready:
            return
        try:
            if await self._client.indices.exists(index=self._index):
                # an index from before metadata filters gains the `meta` mapping (additive)
                await self._client.indices.put_mapping(
                    index=self._index,
                    properties={"meta": MAPPINGS["properties"]["meta"]},
                    dynamic_templates=MAPPINGS["dynamic_templates"],
                )
            else:
                try:
                    await self._client.indices.create(
                        index=self._index, settings=self._settings, mappings=MAPPINGS
                    )
                except ApiError as exc:
                    if "resource_already_exists_exception" not in str(exc.error):
                        raise
        except _ERRORS as exc:
            raise KeywordIndexUnavailable(f"elasticsearch index {self._index}: {exc}") from exc
        self._ready = True

    async def write(self, docs: Sequence[KeywordDoc]) -> None:
        if not docs:
            return
        await self.ensure_index()
        written: list[str] = []
        try:
            for start in range(0, len(docs), self._bulk_size):
                batch = docs[start : start + self._bulk_size]
                operations: list[Mapping[str, Any]] = []
                for doc in batch:
                    operations.append({"index": {"_index": self._index, "_id": _doc_id(doc)}})
                    operations.append(_source(doc))
                response = await self._client.bulk(operations=operations)
                items = response["items"]
                written.extend(
                    item["index"]["_id"] for item in items if item["index"].get("status", 500) < 300
                )
                errors = [item["index"]["error"] for item in items if "error" in item["index"]]
                if response["errors"] or errors:
                    raise KeywordWriteFailed(f"bulk write refused: {errors[:1]}")
            await self._client.indices.refresh(index=self._index)
        except KeywordWriteFailed:
            await self._undo(written)
            raise
        except _ERRORS as exc:
            await self._undo(written)
            raise KeywordWriteFailed(f"elasticsearch bulk write: {exc}") from exc

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> int:
        await self.ensure_index()
        try:
            response = await self._client.delete_by_query(
                index=self._index,
                query={"bool": {"filter": _scope(user_id, dataset_id, doc_id=doc_id)}},
                refresh=True,
                conflicts="proceed",
            )
        except _ERRORS as exc:
            raise KeywordWriteFailed(f"elasticsearch delete_by_query: {exc}") from exc
        if response.get("failures"):
            raise KeywordWriteFailed(f"delete_by_query failures: {response['failures'][:1]}")
        return int(response.get("deleted", 0))

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        await self.ensure_index()
        try:
            response = await self._client.update_by_query(
                index=self._index,
                query={"bool": {"filter": _scope(user_id, dataset_id, doc_id=doc_id)}},
                script={
                    "source": "ctx._source.meta = params.meta",
                    "lang": "painless",
                    "params": {"meta": metadata.indexed()},
                },
                refresh=True,
            )
        except _ERRORS as exc:
            raise KeywordWriteFailed(f"elasticsearch update_by_query: {exc}") from exc
        if response.get("failures"):
            raise KeywordWriteFailed(f"update_by_query failures: {response['failures'][:1]}")

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return
        await self.ensure_index()
        try:
            response = await self._client.delete_by_query(
                index=self._index,
                query={
                    "bool": {"filter": [*_scope(user_id, dataset_id), {"terms": {"chunk_id": ids}}]}
                },
                refresh=True,
                conflicts="proceed",
            )
        except _ERRORS as exc:
            raise KeywordWriteFailed(f"elasticsearch delete_by_query: {exc}") from exc
        if response.get("failures"):
            raise KeywordWriteFailed(f"delete_by_query failures: {response['failures'][:1]}")

    async def retire_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        """At once: a delete_by_query costs no more now than later."""
        await self.delete_chunks(user_id, dataset_id, chunk_ids)

    async def search(
        self,
        user_id: str,
        dataset_id: str,
        tokens: Sequence[str],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[KeywordHit]:
        terms = list(dict.fromkeys(t for t in tokens if t))[:MAX_QUERY_TERMS]
        if not terms or limit <= 0:
            return []
        scope = _scope(user_id, dataset_id)
        if where is not None:
            scope.append(meta_clause(where))
        query = {
            "bool": {
                "filter": scope,
                "should": [{"term": {"text": term}} for term in terms],
                "minimum_should_match": 1,
            }
        }
        try:
            response = await self._client.search(
                index=self._index,
                query=query,
                size=limit,
                source={"includes": ["chunk_id", "doc_id", "payload"]},
                track_total_hits=False,
            )
        except NotFoundError:
            return []  # nothing written yet
        except _ERRORS as exc:
            raise KeywordIndexUnavailable(f"elasticsearch search: {exc}") from exc
        return [
            KeywordHit(
                chunk_id=hit["_source"]["chunk_id"],
                doc_id=hit["_source"]["doc_id"],
                score=float(hit["_score"]),
                payload=hit["_source"].get("payload") or {},
            )
            for hit in response["hits"]["hits"]
        ]

    async def close(self) -> None:
        if self._owns_client:
            await self._client.close()

    async def _undo(self, ids: list[str]) -> None:
        """Best effort: remove what a failed write did put in, so the call is all-or-nothing."""
        if not ids:
            return
        with contextlib.suppress(*_ERRORS):
            # Deletes by _id are real-time: they also catch documents not yet refreshed.
            for start in range(0, len(ids), self._bulk_size):
                await self._client.bulk(
                    operations=[
                        {"delete": {"_index": self._index, "_id": doc_id}}
                        for doc_id in ids[start : start + self._bulk_size]
                    ]
                )
            await self._client.indices.refresh(index=self._index)


def _doc_id(doc: KeywordDoc) -> str:
    key = "\x1f".join((doc.user_id, doc.dataset_id, doc.chunk_id)).encode("utf-8")
    return hashlib.blake2b(key, digest_size=20).hexdigest()


def _source(doc: KeywordDoc) -> dict[str, Any]:
    return {
        "chunk_id": doc.chunk_id,
        "doc_id": doc.doc_id,
        "user_id": doc.user_id,
        "dataset_id": doc.dataset_id,
        "parent_id": doc.parent_id,
        "text": " ".join(doc.tokens),
        "payload": dict(doc.payload),
        "meta": doc.metadata.indexed(),
    }


def _scope(user_id: str, dataset_id: str, **more: str) -> list[dict[str, Any]]:
    fields = {"user_id": user_id, "dataset_id": dataset_id, **more}
    return [{"term": {field: value}} for field, value in fields.items()]


def meta_clause(where: MetadataFilter) -> dict[str, Any]:
    """`where` as a query clause on the `meta` fields (used in filter context: no score)."""
    if isinstance(where, AllOf):
        return {"bool": {"filter": [meta_clause(part) for part in where.parts]}}
    if isinstance(where, AnyOf):
        parts = [meta_clause(part) for part in where.parts]
        return {"bool": {"should": parts, "minimum_should_match": 1}}
    if isinstance(where, Exists):
        present = [{"exists": {"field": f"meta.{f}"}} for f in where.fields]
        return {"bool": {"should": present, "minimum_should_match": 1}}
    if isinstance(where, In):
        return {"terms": {f"meta.{where.field}": list(where.values)}}
    if isinstance(where, Eq):
        return {"term": {f"meta.{where.field}": where.target}}
    bounds = dict(zip(("gte", "gt", "lte", "lt"), where.indexed(), strict=True))
    return {"range": {f"meta.{where.field}": {k: v for k, v in bounds.items() if v is not None}}}
