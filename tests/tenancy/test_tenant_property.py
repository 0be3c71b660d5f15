"""No tenant sees or touches another's data: a Hypothesis property over random users,
datasets and documents.

The stack is the real one on embedded defaults (the container of `ragline serve`: SQLite,
local objects, in-process bus with the app's worker, the embedded vector index, Tantivy, the
HTTP app with tenant tokens); only the dense model is a deterministic fake (tenancy does not
depend on it, and the bundled model would make each example slow). Documents are ingested
through the HTTP API, as a business system would submit them, and the world grows from
example to example, so every check runs against many other tenants' data; doc ids overlap
across tenants on purpose. Each document's text carries a marker of its owner (so chunk ids
differ between tenants) and words every tenant shares (so a leaky filter would show).

After each example, for every (user, dataset) of the world:
- the three retrievers' raw results (dense, sparse, BM25: not only the fused list) hold
  only that tenant's chunks, also when the query is another tenant's marker;
- search over HTTP with the user's token returns only its documents, whatever user_id the
  body names;
- the runs listing with the user's token has only its runs; another tenant's run, its
  retry and its document are 404 for it;
- retry messages naming another tenant's run are refused, the run untouched;
- a delete by one tenant leaves every other tenant's chunks, points and keyword docs.

CI size: 12 examples; `RAGLINE_CAMPAIGN=full` runs 100.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.adapters.http import ApiTokens, create_app
from ragline.application.health import obtain
from ragline.bootstrap.container import Container, container_for
from tests.fakes.models import FakeEmbedderResolver
from tests.http.conftest import bearer, finished_run

FULL = os.environ.get("RAGLINE_CAMPAIGN") == "full"
SERVICE = "service-token-tenancy-0123456789"
USERS = ["1001", "2002", "3003"]
TOKENS = {f"user-{u}-token-0123456789abcdef": u for u in USERS}
TOKEN_OF = {u: t for t, u in TOKENS.items()}
DATASETS = ["1", "2"]
DOC_IDS = [1, 2, 3]
SHARED = ["tea", "water", "leaf", "brew", "kettle", "green", "steep", "cup"]
BUCKET = "uploads"


def marker(user: str, dataset: str, doc: int) -> str:
    return f"owner{user}x{dataset}x{doc}"


class World:
    """The running app and what has been ingested into it, by tenant."""

    def __init__(self, tmp: Path) -> None:
        self.data_dir = tmp / "data"
        self.container: Container = container_for(self.data_dir)
        self.container.embedders.override(providers.Object(FakeEmbedderResolver()))
        tokens = ApiTokens.parse(json.dumps({SERVICE: "*", **TOKENS}))
        self.client = TestClient(create_app(self.container, tokens, max_body_bytes=2_000_000))
        self.tasks = 0
        self.runs: dict[str, tuple[str, str, int]] = {}  # task_id -> (user, dataset, doc)
        self.failed: dict[str, tuple[str, str, int]] = {}

    def start(self) -> None:
        self.client.__enter__()
        for user in USERS:
            response = self.client.put(
                f"/api/v1/users/{user}/model-configs/embedding",
                json={"provider": "fake", "model": "fake-8", "dimension": 8},
                headers=bearer(SERVICE),
            )
            assert response.status_code == 200, response.text
        self.call(self._bucket)

    async def _bucket(self) -> None:
        storage = await obtain(self.container.storage)
        await storage.ensure_bucket(BUCKET)

    def call(self, func: Any, *args: Any) -> Any:
        """Run `func` on the app's event loop (where its adapters live)."""
        return self.client.portal.call(func, *args)

    def ingest(self, user: str, dataset: str, doc: int, words: list[str], upload: bool) -> None:
        self.tasks += 1
        task_id = f"tenancy-{self.tasks}"
        key = f"files/{task_id}.txt"
        text = " ".join([marker(user, dataset, doc), *words, marker(user, dataset, doc)])

        async def put() -> None:
            storage = await obtain(self.container.storage)
            await storage.put_bytes(BUCKET, key, text.encode())

        if upload:
            self.call(put)
        task = {
            "task_id": task_id,
            "original_file_id": doc,
            "document_parse_task_id": self.tasks,
            "user_id": int(user),
            "dataset_id": int(dataset),
            "file_type": "txt",
            "source_bucket": BUCKET,
            "source_object_key": key,
            "source_filename": f"{marker(user, dataset, doc)}.txt",
            "md_bucket": BUCKET,
            "md_object_key": f"md/{task_id}.md",
        }
        response = self.client.post(
            "/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE)
        )
        assert response.status_code == 202, response.text
        run = finished_run(self.client, task_id, SERVICE)
        self.runs[task_id] = (user, dataset, doc)
        if run["pipeline_status"] == "FAILED":
            self.failed[task_id] = (user, dataset, doc)

    # -- what the stores hold --------------------------------------------------------

    def owners(self) -> dict[str, set[tuple[str, str, str]]]:
        """chunk_id -> every (user, dataset, doc) row holding it, straight from SQLite."""
        found: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
        with sqlite3.connect(self.data_dir / "ragline.db") as db:
            for chunk_id, user, dataset, doc in db.execute(
                "SELECT chunk_id, user_id, dataset_id, doc_id FROM chunk"
            ):
                found[chunk_id].add((user, dataset, doc))
        return found

    def raw(self, user: str, dataset: str, query: str) -> dict[str, list[str]]:
        """What each retriever returns for one tenant, before fusion."""

        async def ask() -> dict[str, list[str]]:
            c = self.container
            vectors, keywords = await obtain(c.vectors), await obtain(c.keywords)
            tokenizer, sparse = c.tokenizer(), c.sparse()
            embedder = await c.embedders().resolve(await self._config(user))
            dense = await vectors.query_dense(user, dataset, embedder.embed_query(query), 500)
            sparse_hits = await vectors.query_sparse(user, dataset, sparse.encode_query(query), 500)
            bm25 = await keywords.search(user, dataset, tokenizer.tokenize(query), 500)
            return {
                "dense": [h.chunk_id for h in dense],
                "sparse": [h.chunk_id for h in sparse_hits],
                "bm25": [h.chunk_id for h in bm25],
            }

        result: dict[str, list[str]] = self.call(ask)
        return result

    async def _config(self, user: str) -> Any:
        async with (await obtain(self.container.uow_factory))() as uow:
            return await uow.model_configs.default_embedding(user)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    made = World(tmp_path_factory.mktemp("tenancy"))
    made.start()
    try:
        yield made
    finally:
        made.client.__exit__(None, None, None)


tenants = st.tuples(st.sampled_from(USERS), st.sampled_from(DATASETS), st.sampled_from(DOC_IDS))
documents = st.lists(
    st.tuples(
        tenants,
        st.lists(st.sampled_from(SHARED), min_size=2, max_size=8),
        st.integers(0, 5).map(bool),  # False: no source uploaded -> a FAILED run to retry
    ),
    min_size=1,
    max_size=4,
)


def check_isolation(world: World, query: str) -> None:
    owners = world.owners()
    everyone = {(u, d) for (u, d, _) in world.runs.values()}
    for user, dataset in sorted(everyone):
        others = [(u, d, doc) for (u, d, doc) in world.runs.values() if (u, d) != (user, dataset)]
        for text in [query, *(marker(*o) for o in others[:3])]:
            for retriever, ids in world.raw(user, dataset, text).items():
                for chunk_id in ids:
                    held = {(u, d) for (u, d, _) in owners.get(chunk_id, set())}
                    assert (user, dataset) in held, (
                        f"{retriever} for {user}/{dataset} returned {chunk_id} of {held}"
                    )
        # over HTTP, with the user's token (the body names another user on purpose)
        other_user = next(u for u in USERS if u != user)
        response = world.client.post(
            "/api/v1/search",
            json={
                "query": query,
                "dataset_ids": [int(dataset)],
                "top_k": 50,
                "user_id": other_user,
            },
            headers=bearer(TOKEN_OF[user]),
        )
        assert response.status_code == 200, response.text
        for hit in response.json()["hits"]:
            held = {(u, d) for (u, d, _) in owners.get(hit["chunk_id"], set())}
            assert (user, dataset) in held, f"search for {user}/{dataset} returned {hit}"
            assert marker(user, dataset, int(hit["doc_id"])) in hit["text"]
    for user in USERS:
        token = bearer(TOKEN_OF[user])
        listing = world.client.get("/api/v1/runs?page_size=200", headers=token).json()
        assert {r["user_id"] for r in listing["runs"]} <= {user}, listing
        for task_id, (owner, _dataset, _doc) in world.runs.items():
            if owner == user:
                continue
            assert world.client.get(f"/api/v1/runs/{task_id}", headers=token).status_code == 404
        for task_id, (owner, _dataset, _doc) in list(world.failed.items())[-3:]:
            if owner == user:
                continue
            answer = world.client.post(f"/api/v1/runs/{task_id}/retry", headers=token)
            assert answer.status_code == 404, answer.text


def cross_tenant_retry(world: World) -> None:
    """A retry message naming another tenant's FAILED run: refused, that run untouched."""
    for task_id, (owner, dataset, doc) in list(world.failed.items())[-2:]:
        before = world.client.get(f"/api/v1/runs/{task_id}", headers=bearer(SERVICE)).json()
        intruder = next(u for u in USERS if u != owner)
        world.tasks += 1
        retry_id = f"tenancy-{world.tasks}"
        task = {
            "task_id": retry_id,
            "original_file_id": doc,
            "document_parse_task_id": world.tasks,
            "user_id": int(intruder),
            "dataset_id": int(dataset),
            "file_type": "txt",
            "source_bucket": BUCKET,
            "source_object_key": f"files/{task_id}.txt",
            "source_filename": "x.txt",
            "md_bucket": BUCKET,
            "md_object_key": f"md/{retry_id}.md",
            "is_retry": True,
            "previous_task_id": task_id,
            "trigger_mode": "manual_retry",
        }
        sent = world.client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE))
        assert sent.status_code == 202, sent.text
        run = finished_run(world.client, retry_id, SERVICE)
        assert run["pipeline_status"] == "FAILED", run
        world.runs[retry_id] = (intruder, dataset, doc)
        after = world.client.get(f"/api/v1/runs/{task_id}", headers=bearer(SERVICE)).json()
        assert after == before, "another tenant's retry touched the run"


def delete_leaves_others(world: World, user: str, dataset: str, doc: int) -> None:
    owners_before = world.owners()
    others_before = {
        c: {o for o in held if (o[0], o[1]) != (user, dataset)} for c, held in owners_before.items()
    }
    response = world.client.delete(
        f"/api/v1/documents/{doc}?dataset_id={dataset}", headers=bearer(TOKEN_OF[user])
    )
    assert response.status_code in (200, 404), response.text
    owners_after = world.owners()
    for chunk_id, held in others_before.items():
        assert held <= owners_after.get(chunk_id, set()), f"{user}'s delete removed {held}"
    for u, d, o in {o for held in others_before.values() for o in held}:
        words = world.raw(u, d, marker(u, d, int(o)))
        assert words["bm25"], f"{user}'s delete emptied {u}/{d}/{o} in BM25"
        assert words["sparse"], f"{user}'s delete emptied {u}/{d}/{o} in the sparse index"


def test_no_tenant_sees_or_touches_another(world: World) -> None:
    started = time.perf_counter()

    @settings(
        max_examples=100 if FULL else 12,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        docs=documents,
        query=st.lists(st.sampled_from(SHARED), min_size=1, max_size=3).map(" ".join),
        deleter=tenants,
    )
    def example(
        docs: list[tuple[tuple[str, str, int], list[str], bool]],
        query: str,
        deleter: tuple[str, str, int],
    ) -> None:
        for (user, dataset, doc), words, upload in docs:
            world.ingest(user, dataset, doc, words, upload)
        check_isolation(world, query)
        cross_tenant_retry(world)
        delete_leaves_others(world, *deleter)

    example()
    print(f"tenancy: {world.tasks} tasks in {time.perf_counter() - started:.0f} s")


def test_the_property_finds_a_leaky_retriever(tmp_path: Path) -> None:
    """Mutant: the dense index answers a tenant from every tenant's points. The property
    must fail on it (so it is not satisfied by an empty or unchecked answer)."""
    leaky = World(tmp_path)
    leaky.start()
    try:

        async def break_dense() -> None:
            vectors = await obtain(leaky.container.vectors)
            honest = vectors.query_dense

            async def everyone(user: str, dataset: str, vector: Any, limit: int) -> Any:
                hits = []
                for u in USERS:
                    for d in DATASETS:
                        hits += await honest(u, d, vector, limit)
                return sorted(hits, key=lambda h: -h.score)[:limit]

            vectors.query_dense = everyone

        leaky.call(break_dense)
        leaky.ingest("1001", "1", 1, ["tea", "water"], True)
        leaky.ingest("2002", "1", 1, ["tea", "leaf"], True)
        with pytest.raises(AssertionError, match="dense for 1001/1 returned"):
            check_isolation(leaky, "tea")
    finally:
        leaky.client.__exit__(None, None, None)
