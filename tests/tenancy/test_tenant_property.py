"""No tenant sees or touches another's data: a Hypothesis property over random users,
datasets and documents, and every way one tenant can name another's bytes.

The stack is the real one on embedded defaults (the container of `ragline serve`: SQLite,
local objects, in-process bus with the app's worker, the embedded vector index, Tantivy, the
HTTP app with tenant tokens); only the dense model is a deterministic fake (tenancy does not
depend on it, and the bundled model would make each example slow). Documents (txt, and docx
with a picture stored under the tenant's image prefix) are ingested with the tenant's token,
the service token or as a message on the broker, sources under `<user_id>/` of the default
tenant buckets; the world grows from example to example, so every check runs against many
other tenants' data; doc ids overlap across tenants on purpose. Each document's bytes carry a
marker of its owner (so chunk ids differ between tenants) and words every tenant shares (so
a leaky filter would show).

Each example then runs every action of `attacks.ATTACKS` once, in a drawn order, each by a
drawn attacker against a drawn victim's document: every object-reference field of a task
(HTTP submit and broker), parse requests by bucket/key and by the victim's sha256, batch-id
enumeration, coverage and Markdown reads, extract, retries, re-indexes and deletes. After
every action (`World.settle`) and on every answer to a tenant (`World.check_answer`):
- read: no marker of another tenant in the attacker's chunks, in its objects, or in any
  answer it got; no sha256 or batch id of another tenant's bytes in any answer;
- written / deleted: every object in the store (sha256 per object, by owner prefix; the
  parse cache's pages and sources by the tenants holding their bytes) that changed, appeared
  or went belongs to the actor;
then the answer agreed for it (a 403 problem naming the field; a 404 exactly like an
unknown sha256 or run; FAILED INVALID_TASK_CONTEXT on the broker).

After the ingests, for every (user, dataset), as before: the three retrievers' raw results
hold only the tenant's chunks, also under metadata filters every tenant's documents match
(every task carries the label shared=tea and its owner's id; an upload carries none), and a
filter naming another tenant's label finds nothing; search over HTTP (also with a filter)
returns only its documents, whatever user_id the body names; the runs listing has only its
runs; another tenant's run and its retry are 404; a delete by one tenant leaves every other
tenant's chunks, points and keyword docs.

CI size: 12 examples; `RAGLINE_CAMPAIGN=full` runs 100. The figures (examples, actions,
checks, time) go to the JSON file named by `RAGLINE_CAMPAIGN_JSON`, if set.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ragline.application.health import obtain
from ragline.domain.metadata import AllOf, Eq, Exists, MetadataFilter, Range
from tests.tenancy.attacks import ATTACKS, pick, victims_for
from tests.tenancy.world import (
    DATASETS,
    DOC_IDS,
    SHARED,
    USERS,
    Violation,
    World,
    marker,
)

FULL = os.environ.get("RAGLINE_CAMPAIGN") == "full"
EXAMPLES = 100 if FULL else 12
RECENT_RUNS = 40


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    made = World(tmp_path_factory.mktemp("tenancy"))
    made.start()
    try:
        # every entry point with every kind once, by different tenants, whatever is drawn
        for i, (via, kind) in enumerate(
            (via, kind) for via in ("tenant", "service", "broker") for kind in ("txt", "docx")
        ):
            user = USERS[i % len(USERS)]
            made.ingest(made.new_doc(user, "1", 1 + i % 3, ["tea", SHARED[i]], True, kind), via)
        yield made
    finally:
        made.stop()


tenants = st.tuples(st.sampled_from(USERS), st.sampled_from(DATASETS), st.sampled_from(DOC_IDS))
documents = st.lists(
    st.tuples(
        tenants,
        st.lists(st.sampled_from(SHARED), min_size=2, max_size=8),
        st.integers(0, 5).map(bool),  # False: no source uploaded -> a FAILED run to retry
        st.sampled_from(["txt", "txt", "txt", "txt", "docx"]),
        st.sampled_from(["tenant", "service", "broker"]),
    ),
    min_size=1,
    max_size=4,
)


FILTERS_EVERYONE_MATCHES: tuple[MetadataFilter, ...] = (
    Eq("shared", "tea"),
    AllOf((Exists("owner"), Range("doc", gte=0))),
)


def check_isolation(world: World, query: str) -> None:
    owners = world.ever_owned()
    runs = [(d.user, d.dataset, d.doc) for d in world.docs.values()]
    everyone = {(u, d) for (u, d, _) in runs}
    for user, dataset in sorted(everyone):
        others = [(u, d, doc) for (u, d, doc) in runs if (u, d) != (user, dataset)]
        for text in [query, *(marker(*o) for o in others[:3])]:
            for where in (None, *FILTERS_EVERYONE_MATCHES):
                for retriever, ids in world.raw(user, dataset, text, where).items():
                    for chunk_id in ids:
                        held = {(u, d) for (u, d, _) in owners.get(chunk_id, set())}
                        assert (user, dataset) in held, (
                            f"{retriever} for {user}/{dataset} returned {chunk_id} of {held}"
                            f" (filter {where})"
                        )
        for other_owner in {u for (u, _, _) in others if u != user}:
            found = world.raw(user, dataset, query, Eq("owner", other_owner))
            assert not any(found.values()), f"{user}/{dataset} found {other_owner}'s label"
        # a filtered search over HTTP, the body naming another user
        labelled = {
            "query": query,
            "dataset_ids": [int(dataset)],
            "top_k": 50,
            "user_id": next(u for u in USERS if u != user),
            "filter": {"eq": {"shared": "tea"}},
        }
        response = world.as_tenant(user, "POST", "/api/v1/search", json=labelled)
        assert response.status_code == 200, response.text
        for hit in response.json()["hits"]:
            assert marker(user, dataset, int(hit["doc_id"])) in hit["text"], hit
        # over HTTP, with the user's token (the body names another user on purpose)
        other_user = next(u for u in USERS if u != user)
        body = {"query": query, "dataset_ids": [int(dataset)], "top_k": 50, "user_id": other_user}
        response = world.as_tenant(user, "POST", "/api/v1/search", json=body)
        assert response.status_code == 200, response.text
        for hit in response.json()["hits"]:
            held = {(u, d) for (u, d, _) in owners.get(hit["chunk_id"], set())}
            assert (user, dataset) in held, f"search for {user}/{dataset} returned {hit}"
            assert marker(user, dataset, int(hit["doc_id"])) in hit["text"]
    recent = list(world.docs.values())[-RECENT_RUNS:]  # older ones were checked before
    for user in USERS:
        listing = world.as_tenant(user, "GET", "/api/v1/runs", params={"page_size": 200}).json()
        assert {r["user_id"] for r in listing["runs"]} <= {user}, listing
        for doc in recent:
            if doc.user != user:
                answer = world.as_tenant(user, "GET", f"/api/v1/runs/{doc.task_id}")
                assert answer.status_code == 404, answer.text


def delete_leaves_others(world: World, user: str, dataset: str, doc: int) -> None:
    owners_before = world.owners()
    others_before = {
        c: {o for o in held if (o[0], o[1]) != (user, dataset)} for c, held in owners_before.items()
    }
    response = world.as_tenant(
        user, "DELETE", f"/api/v1/documents/{doc}", params={"dataset_id": dataset}
    )
    world.settle(user, f"delete {user}/{dataset}/{doc}")
    assert response.status_code in (200, 404), response.text
    owners_after = world.owners()
    for chunk_id, held in others_before.items():
        assert held <= owners_after.get(chunk_id, set()), f"{user}'s delete removed {held}"
    for u, d, o in {o for held in others_before.values() for o in held}:
        words = world.raw(u, d, marker(u, d, int(o)))
        assert words["bm25"], f"{user}'s delete emptied {u}/{d}/{o} in BM25"
        assert words["sparse"], f"{user}'s delete emptied {u}/{d}/{o} in the sparse index"


def attack_everything(world: World, data: st.DataObject) -> None:
    """Every action of ATTACKS once, in a drawn order, each by a drawn attacker against a
    drawn document of another tenant."""
    for attack in data.draw(st.permutations(ATTACKS), label="order"):
        attacker = data.draw(st.sampled_from(USERS), label="attacker")
        pool = victims_for(world, attack, attacker)
        victim = pick(data.draw, pool)
        if victim is None:
            continue
        world.actions[attack.__name__] += 1
        attack(world, data.draw, attacker, victim)


def test_no_tenant_sees_or_touches_another(world: World) -> None:
    started = time.perf_counter()
    examples = 0
    first: list[AssertionError] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate),  # the world grows: a replay is another world
    )
    @given(
        docs=documents,
        query=st.lists(st.sampled_from(SHARED), min_size=1, max_size=3).map(" ".join),
        deleter=tenants,
        data=st.data(),
    )
    def example(
        docs: list[tuple[tuple[str, str, int], list[str], bool, str, str]],
        query: str,
        deleter: tuple[str, str, int],
        data: st.DataObject,
    ) -> None:
        nonlocal examples
        examples += 1
        try:
            for (user, dataset, doc), words, upload, kind, via in docs:
                world.ingest(world.new_doc(user, dataset, doc, words, upload, kind), via)
            check_isolation(world, query)
            attack_everything(world, data)
            delete_leaves_others(world, *deleter)
        except AssertionError as failure:
            first.append(failure)
            raise

    try:
        example()
    except Exception:
        if first:  # Hypothesis replays the failing example on a world it already changed
            raise first[0] from None
        raise
    figures = report(world, examples, time.perf_counter() - started)
    print(f"tenancy: {json.dumps(figures)}")


def report(world: World, examples: int, seconds: float) -> dict[str, Any]:
    attacks = {a.__name__: world.actions.get(a.__name__, 0) for a in ATTACKS}
    figures: dict[str, Any] = {
        "size": "full" if FULL else "ci",
        "examples": examples,
        "tasks": world.tasks,
        "ingests": dict(sorted(world.ingests.items())),
        "attack_actions": sum(attacks.values()),
        "attacks": attacks,
        "attack_kinds": len(ATTACKS),
        "attacks_never_run": sorted(n for n, c in attacks.items() if not c),
        "tenant_requests": sum(c for k, c in world.actions.items() if " " in k),
        "checks": world.checks,
        "objects_in_store": len(world.before),
        "parse_batches": len(world.batches()),
        "violations": 0,
        "seconds": round(seconds, 1),
    }
    target = os.environ.get("RAGLINE_CAMPAIGN_JSON")
    if target:
        Path(target).write_text(json.dumps(figures, indent=2) + "\n")
    return figures


def test_the_property_finds_a_leaky_retriever(tmp_path: Path) -> None:
    """Mutant: the dense index answers a tenant from every tenant's points. The property
    must fail on it (so it is not satisfied by an empty or unchecked answer)."""
    leaky = World(tmp_path)
    leaky.start()
    try:

        async def break_dense() -> None:
            vectors = await obtain(leaky.container.vectors)
            honest = vectors.query_dense

            async def everyone(
                user: str, dataset: str, vector: Any, limit: int, where: Any = None
            ) -> Any:
                hits = []
                for u in USERS:
                    for d in DATASETS:
                        hits += await honest(u, d, vector, limit, where)
                return sorted(hits, key=lambda h: -h.score)[:limit]

            vectors.query_dense = everyone

        leaky.call(break_dense)
        leaky.ingest(leaky.new_doc("1001", "1", 1, ["tea", "water"], True, "txt"), "service")
        leaky.ingest(leaky.new_doc("2002", "1", 1, ["tea", "leaf"], True, "txt"), "service")
        with pytest.raises(AssertionError, match="dense for 1001/1 returned"):
            check_isolation(leaky, "tea")
    finally:
        leaky.stop()


def test_the_properties_report_a_tampered_store(tmp_path: Path) -> None:
    """The properties themselves can fail: another tenant's object overwritten or deleted,
    another tenant's bytes in a tenant's object or answer, and an answer naming another
    tenant's sha256 or batch ids are each reported (on a world whose store is tampered with
    by hand, since the shipped code does none of it)."""
    world = World(tmp_path)
    world.start()
    try:
        theirs = world.new_doc("2002", "1", 1, ["tea"], True, "txt")
        world.ingest(theirs, "service")
        mine = world.new_doc("1001", "1", 1, ["tea"], True, "txt")
        world.ingest(mine, "tenant")
        world.put("markdown", theirs.md_key, b"overwritten by 1001")
        with pytest.raises(Violation, match=r"written: .* overwrote markdown/2002/"):
            world.check_footprint("1001", "tampering")
        world.before = world.snapshot()  # the tampering seen, look on from here
        (world.objects / "sources" / theirs.source_key).unlink()
        with pytest.raises(Violation, match=r"deleted: .* deleted sources/2002/"):
            world.check_footprint("1001", "tampering")
        world.put("markdown", mine.md_key, marker("2002", "1", 1).encode())
        with pytest.raises(Violation, match=r"read: .* 1001's object markdown/1001/"):
            world.check_holdings("1001", "tampering")
        body = {"query": "tea", "dataset_ids": [1], "top_k": 5, "user_id": "2002"}
        answer = world.as_service("POST", "/api/v1/search", json=body)
        assert answer.status_code == 200 and answer.json()["hits"], answer.text
        with pytest.raises(Violation, match=r"read: .* bytes of \['2002'\]"):
            world.check_answer("1001", "a search of 2002", answer, set())
        assert theirs.sha256 is not None
        leak = world.as_service(
            "GET", "/api/v1/parses", params={"doc_ref": theirs.sha256, "tier": "quality"}
        )
        with pytest.raises(Violation, match=r"learned: .* sha256s|learned: .* batch ids"):
            world.check_answer("1001", "coverage of 2002's bytes", leak, set())
    finally:
        world.stop()
