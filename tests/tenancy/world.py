"""The tenant campaign's world: the real app of `ragline serve` on embedded defaults, the
documents each tenant owns, and what the store holds (every object by owner, the parse cache's
batches) so that every action's footprint and every answer can be checked against its owner.

Each tenant's bytes carry its marker (`owner<user>x…`), so a foreign marker in a tenant's
chunks, Markdown or answers is another tenant's byte read into it; each tenant's sha256s are
its own (the marker makes its bytes unique), so a foreign sha256 or batch id in an answer is
another tenant's cache entry learned.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sqlite3
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import attrs
import docx
import httpx
from dependency_injector import providers
from fastapi.testclient import TestClient
from PIL import Image

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.adapters.inbound.http.console.session import COOKIE as CONSOLE_COOKIE
from ragline.adapters.inbound.http.console.session import cookie_value as console_cookie
from ragline.application.health import obtain
from ragline.bootstrap.container import Container, container_for
from ragline.bootstrap.entry import entry_for
from ragline.domain.metadata import MetadataFilter
from tests.fakes.models import FakeEmbedderResolver
from tests.http.conftest import bearer

SERVICE = "service-token-tenancy-0123456789"
USERS = ["1001", "2002", "3003"]
TOKENS = {f"user-{u}-token-0123456789abcdef": u for u in USERS}
TOKEN_OF = {u: t for t, u in TOKENS.items()}
DATASETS = ["1", "2"]
DOC_IDS = [1, 2, 3]
SHARED = ["tea", "water", "leaf", "brew", "kettle", "green", "steep", "cup"]
SOURCES, MARKDOWN = "sources", "markdown"  # the default tenant buckets (source, markdown)
TENANT_BUCKETS = (SOURCES, MARKDOWN)
CACHE, CACHE_PREFIX = "parse-cache", "v1"
SERVICE_AREA = "service"
"""Owner of an object outside every tenant's prefix and the cache (none in this world)."""

FOREIGN_MARKER = re.compile(r"owner(\d{4})x")
SHA = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
CACHE_SHA = re.compile(r"/([0-9a-f]{64})(?:/|\.)")


def marker(user: str, dataset: str, doc: int) -> str:
    return f"owner{user}x{dataset}x{doc}"


@attrs.define
class Doc:
    """One ingested task of a tenant: where its bytes are and what ragline wrote."""

    task_id: str
    user: str
    dataset: str
    doc: int
    file_type: str
    source_key: str
    md_key: str
    sha256: str | None  # None: no source uploaded (the run failed)
    status: str = ""
    image_prefix: str | None = None


class Violation(AssertionError):
    """A property of the campaign does not hold (the message says which and how)."""


def docx_bytes(text: str, colour: tuple[int, int, int]) -> bytes:
    picture = io.BytesIO()
    Image.new("RGB", (24, 16), colour).save(picture, format="PNG")
    picture.seek(0)
    document = docx.Document()
    document.add_paragraph(text)
    document.add_picture(picture)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


class World:
    """The running app and what has been ingested into it, by tenant."""

    def __init__(self, tmp: Path) -> None:
        self.data_dir = tmp / "data"
        self.objects = self.data_dir / "objects"
        # the app's re-embedding loop looks once at start: a planned one stays PLANNED
        self.container: Container = container_for(self.data_dir, reembed_poll_seconds=3600)
        self.container.embedders.override(providers.Object(FakeEmbedderResolver()))
        tokens = ApiTokens.parse(json.dumps({SERVICE: "*", **TOKENS}))
        self.client = TestClient(
            create_app(entry_for(self.container), tokens, max_body_bytes=2_000_000)
        )
        self.tasks = 0
        self.docs: dict[str, Doc] = {}
        self.held: dict[str, set[str]] = defaultdict(set)
        self._owners: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
        """user -> sha256s it ever held (holdings are never removed)."""
        self.must_see: dict[str, set[str]] = defaultdict(set)
        """user -> sha256s of its successful runs and parse requests: their batches are its."""
        self.actions: dict[str, int] = defaultdict(int)
        self.ingests: dict[str, int] = defaultdict(int)
        """entry point -> legitimate ingests through it."""
        self.checks = 0
        self.reembeddings = 0
        """Re-embeddings the campaign planned (each gets a new id)."""
        self.before: dict[tuple[str, str], str] = {}
        self._hashes: dict[str, tuple[tuple[int, int, int], str, frozenset[str]]] = {}
        self._markers: dict[tuple[str, str], frozenset[str]] = {}
        """(bucket, key) -> the owners whose markers the object holds, as last looked at."""

    def start(self) -> None:
        self.client.__enter__()
        for user in USERS:
            response = self.client.put(
                f"/api/v1/users/{user}/model-configs/embedding",
                json={"provider": "fake", "model": "fake-8", "dimension": 8},
                headers=bearer(SERVICE),
            )
            assert response.status_code == 200, response.text
        self.call(self._buckets)
        self.before = self.snapshot()

    def stop(self) -> None:
        self.client.__exit__(None, None, None)

    async def _buckets(self) -> None:
        storage = await obtain(self.container.storage)
        for bucket in (*TENANT_BUCKETS, CACHE):
            await storage.ensure_bucket(bucket)

    def call(self, func: Any, *args: Any) -> Any:
        """Run `func` on the app's event loop (where its adapters live)."""
        return self.client.portal.call(func, *args)

    def next_task_id(self) -> str:
        self.tasks += 1
        return f"tenancy-{self.tasks}"

    # -- requests, each answer to a tenant checked ---------------------------------------

    def as_tenant(self, user: str, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """A request with `user`'s token; its answer must hold nothing of another tenant."""
        named = set(SHA.findall(json.dumps([url, kwargs.get("json"), kwargs.get("params")])))
        response = self.client.request(method, url, headers=bearer(TOKEN_OF[user]), **kwargs)
        self.actions[f"{method} {url.split('?')[0]}"] += 1
        self.check_answer(user, f"{method} {url}", response, named)
        return response

    def in_console(self, user: str, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """A console request from `user`'s logged-in browser (the session cookie holding its
        token, as /console/login sets it); checked as every answer to a tenant is."""
        cookie = {"Cookie": f"{CONSOLE_COOKIE}={console_cookie(TOKEN_OF[user])}"}
        response = self.client.request(method, url, headers=cookie, **kwargs)
        self.actions[f"{method} {url.split('?')[0]}"] += 1
        self.check_answer(user, f"{method} {url}", response, set())
        return response

    def as_service(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.client.request(method, url, headers=bearer(SERVICE), **kwargs)

    def finished(self, task_id: str, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            response = self.as_service("GET", f"/api/v1/runs/{task_id}")
            if response.status_code == 200 and response.json()["finished_at"] is not None:
                run: dict[str, Any] = response.json()
                return run
            time.sleep(0.05)
        raise AssertionError(f"run {task_id} did not finish in {timeout} s")

    def run_of(self, task_id: str) -> dict[str, Any] | None:
        response = self.as_service("GET", f"/api/v1/runs/{task_id}")
        return response.json() if response.status_code == 200 else None

    # -- ingesting ------------------------------------------------------------------------

    def put(self, bucket: str, key: str, data: bytes) -> None:
        async def put() -> None:
            storage = await obtain(self.container.storage)
            await storage.put_bytes(bucket, key, data)

        self.call(put)

    def task(self, doc: Doc, **override: Any) -> dict[str, Any]:
        """The wire task of `doc` (a ParseTask as the business back end sends it)."""
        body: dict[str, Any] = {
            "task_id": doc.task_id,
            "original_file_id": doc.doc,
            "document_parse_task_id": int(doc.task_id.rsplit("-", 1)[-1]),
            "user_id": int(doc.user),
            "dataset_id": int(doc.dataset),
            "file_type": doc.file_type,
            "source_bucket": SOURCES,
            "source_object_key": doc.source_key,
            "source_filename": f"{marker(doc.user, doc.dataset, doc.doc)}.{doc.file_type}",
            "md_bucket": MARKDOWN,
            "md_object_key": doc.md_key,
            # every document carries the same shared label and its owner's: a metadata
            # filter that leaked across tenants would match another tenant's chunks
            "metadata": {"owner": doc.user, "shared": "tea", "doc": doc.doc},
        }
        if doc.image_prefix:
            body.update(image_bucket=MARKDOWN, image_prefix=doc.image_prefix)
        body.update(override)
        return body

    def new_doc(
        self, user: str, dataset: str, doc: int, words: list[str], upload: bool, kind: str
    ) -> Doc:
        """A document of `user` with its source in `user`'s prefix (uploaded or not)."""
        task_id = self.next_task_id()
        text = " ".join([marker(user, dataset, doc), *words, marker(user, dataset, doc)])
        data = text.encode()
        image_prefix = None
        if kind == "docx":
            colour = (int(user) % 251, int(dataset) * 60, doc * 70)
            data = docx_bytes(text, colour)
            image_prefix = f"{user}/images/{task_id}/"
        made = Doc(
            task_id=task_id,
            user=user,
            dataset=dataset,
            doc=doc,
            file_type=kind,
            source_key=f"{user}/files/{task_id}.{kind}",
            md_key=f"{user}/md/{task_id}.md",
            sha256=hashlib.sha256(data).hexdigest() if upload else None,
            image_prefix=image_prefix,
        )
        if upload:
            self.put(SOURCES, made.source_key, data)
            self.held[user].add(hashlib.sha256(data).hexdigest())
        return made

    def ingest(self, doc: Doc, via: str) -> dict[str, Any]:
        """Submit `doc`'s task — over HTTP with the tenant's token or the service token, or
        as a message on the broker — and wait for its run; a legitimate action, so its
        footprint must lie in the tenant's own area."""
        task = self.task(doc)
        if via == "broker":
            self.publish(task)
        else:
            answer = (
                self.as_tenant(doc.user, "POST", "/api/v1/parser/task/submit", json=task)
                if via == "tenant"
                else self.as_service("POST", "/api/v1/parser/task/submit", json=task)
            )
            assert answer.status_code == 202, answer.text
        run = self.finished(doc.task_id)
        doc.status = run["pipeline_status"]
        self.docs[doc.task_id] = doc
        self.ingests[f"{via} {doc.file_type}"] += 1
        self.settle(doc.user, f"ingest {doc.task_id} via {via}")
        if doc.sha256 is not None:
            assert doc.status == "SUCCESS", run
            self.must_see[doc.user].add(doc.sha256)
        return run

    def hold_markdown_of(self, user: str, run: dict[str, Any]) -> None:
        """A re-index reads the document's stored Markdown through the cache: those bytes
        are the tenant's own (they are in its prefix), so their cache entry is too."""
        listed = self.as_service("GET", f"/api/v1/runs/{run['task_id']}")
        assert listed.status_code == 200, listed.text
        for (bucket, key), digest in self.snapshot().items():
            if bucket in TENANT_BUCKETS and key.startswith(f"{user}/"):
                self.held[user].add(digest)

    def wait_batches(self, ids: list[int], timeout: float = 120) -> None:
        """Until every batch is done or failed (asked with the service token)."""
        deadline = time.monotonic() + timeout
        wanted = ",".join(map(str, ids))
        while time.monotonic() < deadline:
            answer = self.as_service("GET", "/api/v1/parses", params={"ids": wanted})
            assert answer.status_code == 200, answer.text
            if all(p["status"] in ("done", "failed") for p in answer.json()["parses"]):
                return
            time.sleep(0.05)
        raise AssertionError(f"batches {ids} did not finish in {timeout} s")

    def publish(self, task: dict[str, Any]) -> None:
        """A task message on the broker, as the business back end publishes it."""

        async def send() -> None:
            bus = await obtain(self.container.bus)  # the topic itself, no use case before it
            await bus.task_publisher().publish(json.dumps(task).encode(), task["file_type"])

        self.call(send)

    # -- what the stores hold --------------------------------------------------------------

    def snapshot(self) -> dict[tuple[str, str], str]:
        """(bucket, key) -> sha256 of every object in the store (a file whose inode, size
        and mtime are unchanged since the last look is not read again)."""
        found: dict[tuple[str, str], str] = {}
        if not self.objects.exists():
            return found
        for bucket in sorted(os.scandir(self.objects), key=lambda e: e.name):
            if not bucket.name.startswith(".") and bucket.is_dir():
                self._look(bucket.name, bucket.path, "", found)
        return found

    def _look(
        self, bucket: str, folder: str, prefix: str, found: dict[tuple[str, str], str]
    ) -> None:
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                self._look(bucket, entry.path, f"{prefix}{entry.name}/", found)
                continue
            stat = entry.stat(follow_symlinks=False)
            seen = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            cached = self._hashes.get(entry.path)
            if cached is None or cached[0] != seen:
                data = Path(entry.path).read_bytes()
                owners = frozenset(FOREIGN_MARKER.findall(data.decode("latin-1")))
                cached = (seen, hashlib.sha256(data).hexdigest(), owners)
                self._hashes[entry.path] = cached
            key = (bucket, prefix + entry.name)
            found[key] = cached[1]
            self._markers[key] = cached[2]

    def owners_of(self, bucket: str, key: str) -> set[str]:
        """Whose an object is: the tenant of its prefix, or every holder of the bytes whose
        cache entry it is."""
        if bucket in TENANT_BUCKETS:
            return {key.split("/", 1)[0]}
        if bucket == CACHE:
            found = CACHE_SHA.search("/" + key)
            if found is None:
                return {SERVICE_AREA}
            return {u for u in USERS if found.group(1) in self.held[u]}
        return {SERVICE_AREA}

    def batches(self) -> dict[int, str]:
        """Parse batch id -> sha256, straight from SQLite."""
        with sqlite3.connect(self.data_dir / "ragline.db") as db:
            return dict(db.execute("SELECT id, sha256 FROM parse_batch"))

    def owners(self) -> dict[str, set[tuple[str, str, str]]]:
        """chunk_id -> every (user, dataset, doc) row holding it, straight from SQLite."""
        found: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
        with sqlite3.connect(self.data_dir / "ragline.db") as db:
            for chunk_id, user, dataset, doc in db.execute(
                "SELECT chunk_id, user_id, dataset_id, doc_id FROM chunk"
            ):
                found[chunk_id].add((user, dataset, doc))
        for chunk_id, held in found.items():
            self._owners[chunk_id] |= held
        return found

    def ever_owned(self) -> dict[str, set[tuple[str, str, str]]]:
        """`owners()` now, with the owners of chunks seen after earlier actions: a
        swapped-out lineage's keyword entries stay until the index's next commit
        (`retire_chunks`), and are still their owner's. Chunk ids are never reused (each
        names its run), so a remembered owner stays true."""
        self.owners()
        return {chunk_id: set(held) for chunk_id, held in self._owners.items()}

    def chunk_texts(self, user: str) -> list[tuple[str, str]]:
        with sqlite3.connect(self.data_dir / "ragline.db") as db:
            return list(db.execute("SELECT chunk_id, text FROM chunk WHERE user_id = ?", (user,)))

    def raw(
        self, user: str, dataset: str, query: str, where: MetadataFilter | None = None
    ) -> dict[str, list[str]]:
        """What each retriever returns for one tenant, before fusion (among the chunks
        `where` keeps)."""

        async def ask() -> dict[str, list[str]]:
            c = self.container
            vectors, keywords = await obtain(c.vectors), await obtain(c.keywords)
            tokenizer, sparse = c.tokenizer(), c.sparse()
            embedder = await c.embedders().resolve(await self._config(user))
            vector, sparse_query = embedder.embed_query(query), sparse.encode_query(query)
            dense = await vectors.query_dense(user, dataset, vector, 500, where)
            sparse_hits = await vectors.query_sparse(user, dataset, sparse_query, 500, where)
            bm25 = await keywords.search(user, dataset, tokenizer.tokenize(query), 500, where)
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

    # -- the properties ----------------------------------------------------------------------

    def check_answer(self, user: str, what: str, response: httpx.Response, named: set[str]) -> None:
        """Nothing of another tenant in an answer to `user`: no marker of its bytes, no
        sha256 it holds (but those `user` named in the request), no batch id of its bytes;
        and never a 5xx (bad input is a 4xx problem)."""
        self.checks += 1
        assert response.status_code < 500, f"{what}: {response.status_code} {response.text}"
        text = response.text
        foreign = {m for m in FOREIGN_MARKER.findall(text) if m != user}
        if foreign:
            raise Violation(f"read: {what} answered {user} with bytes of {sorted(foreign)}")
        others: set[str] = set().union(*(self.held[u] for u in USERS if u != user))
        learned = (set(SHA.findall(text)) & others) - self.held[user] - named
        if learned:
            raise Violation(f"learned: {what} told {user} the sha256s {sorted(learned)}")
        ids = batch_ids_in(response)
        if ids:
            batches = self.batches()
            unheld = sorted(i for i in ids if batches.get(i) not in self.held[user])
            if unheld:
                raise Violation(f"learned: {what} told {user} the batch ids {unheld}")

    def check_holdings(self, user: str, what: str, *, looked: bool = False) -> None:
        """No byte of another tenant read into `user`'s chunks or objects (`looked`: the
        store was just snapshotted, its objects' markers are current)."""
        self.checks += 1
        for chunk_id, text in self.chunk_texts(user):
            foreign = {m for m in FOREIGN_MARKER.findall(text) if m != user}
            if foreign:
                raise Violation(
                    f"read: after {what}, {user}'s chunk {chunk_id} holds bytes of "
                    f"{sorted(foreign)}"
                )
        objects = self.before if looked else self.snapshot()
        for bucket, key in sorted(objects):
            if bucket not in TENANT_BUCKETS or not key.startswith(f"{user}/"):
                continue
            foreign = set(self._markers[(bucket, key)]) - {user}
            if foreign:
                raise Violation(
                    f"read: after {what}, {user}'s object {bucket}/{key} holds bytes of "
                    f"{sorted(foreign)}"
                )

    def check_footprint(self, actor: str, what: str) -> None:
        """Every object the action wrote, added or deleted is `actor`'s own: no other
        tenant's source, Markdown, image or cache page changed, appeared or went."""
        self.checks += 1
        after = self.snapshot()
        for key in sorted(set(self.before) | set(after)):
            old, new = self.before.get(key), after.get(key)
            if old == new:
                continue
            owners = self.owners_of(*key)
            if actor in owners:
                continue
            verb = "deleted" if new is None else "wrote a new" if old is None else "overwrote"
            raise Violation(
                f"{'deleted' if new is None else 'written'}: {what} by {actor} {verb} "
                f"{key[0]}/{key[1]} of {sorted(owners) or 'nobody'}"
            )
        self.before = after

    def settle(self, actor: str, what: str) -> None:
        """After an action of (or for) `actor`: its footprint, then what it now holds (and
        the chunks' owners are read, so a lineage swapped out later is still known)."""
        self.owners()
        self.check_footprint(actor, what)
        self.check_holdings(actor, what, looked=True)

    def unknown_sha(self, seed: str) -> str:
        """A sha256 of bytes nobody has: what an unknown document's answer is compared with."""
        return hashlib.sha256(f"nobody has these bytes {seed}".encode()).hexdigest()


def batch_ids_in(response: httpx.Response) -> set[int]:
    """The parse batch ids an answer names (batch views, wait/created/reused/parse ids)."""
    if "json" not in response.headers.get("content-type", ""):
        return set()
    try:
        body = response.json()
    except ValueError:
        return set()
    found: set[int] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for name, inner in value.items():
                if name in ("wait_parse_ids", "created_parse_ids", "reused_parse_ids", "parse_ids"):
                    found.update(i for i in inner if isinstance(i, int))
                elif name == "parses" and isinstance(inner, list):
                    found.update(p["id"] for p in inner if isinstance(p, dict) and "id" in p)
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(body)
    return found
