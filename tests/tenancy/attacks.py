"""The campaign's actions against another tenant: every object-reference field of every entry
point pointed into a victim's prefix or the parse cache, enumeration of batch ids, cache
reads by a victim's sha256, retries, re-indexes and deletes.

Each action is done, anything it started is waited for, and only then is its outcome compared
with the agreed answer: first the properties (`World.settle`: no other tenant's object
written or deleted, no byte of another tenant read into the attacker's chunks or objects;
every answer to a tenant is checked as it arrives), then the answer itself (a 403 problem
naming the field, a 404 exactly like an unknown one, FAILED INVALID_TASK_CONTEXT on the
broker). So a leaky check shows as the byte it leaked, not only as a wrong status.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
from hypothesis import strategies as st

from ragline.application.health import obtain
from ragline.domain.metadata import Eq
from ragline.domain.reembedding import EmbeddingSpec
from tests.tenancy.world import (
    CACHE,
    CACHE_PREFIX,
    MARKDOWN,
    SHA,
    SHARED,
    SOURCES,
    Doc,
    World,
    marker,
)

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[Any]], Any]
Attack = Callable[[World, Draw, str, Doc], None]
PARSES = ("/api/v1/parses", "/parses")  # the API's path and the design record's own


# -- the agreed answers ---------------------------------------------------------------------


def refused(response: httpx.Response, field: str, what: str) -> None:
    """A 403 problem whose detail is `<field>: <reason>` (the ReferenceRefused message)."""
    assert response.status_code == 403, f"{what}: {response.status_code} {response.text}"
    assert response.headers["content-type"].startswith("application/problem+json"), what
    detail = response.json()["detail"]
    assert detail.startswith(f"{field}: "), f"{what}: detail {detail!r} names no {field!r}"


def normalised(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, SHA.sub("<sha256>", response.text)


def like_unknown(world: World, user: str, victim_sha: str, ask: Callable[[str], Any]) -> None:
    """The answer about a sha256 `user` does not hold is exactly the answer about bytes
    nobody has (status and body, the sha256 itself aside)."""
    theirs = ask(victim_sha)
    nobodys = ask(world.unknown_sha(victim_sha))
    assert normalised(theirs) == normalised(nobodys), (
        f"{user} can tell a held sha256 from an unknown one: {theirs.text} vs {nobodys.text}"
    )
    assert theirs.status_code == 404, theirs.text


def broker_refused(run: dict[str, Any] | None, field: str, what: str) -> None:
    assert run is not None, f"{what}: no run"
    assert run["pipeline_status"] == "FAILED", f"{what}: {run}"
    assert run["failure_code"] == "INVALID_TASK_CONTEXT", f"{what}: {run}"
    assert f"{field}: " in (run["failure_reason"] or ""), f"{what}: {run['failure_reason']}"


# -- helpers --------------------------------------------------------------------------------


def pick(draw: Draw, items: Sequence[T]) -> T | None:
    """One of `items` (None if empty), drawn with the same constraints whatever their
    number: the world grows, and Hypothesis requires a draw to look the same every time."""
    index = draw(st.integers(0, 2**16))
    return items[index % len(items)] if items else None


def own_doc(world: World, draw: Draw, user: str, kind: str = "txt") -> Doc:
    """A fresh document of `user` with its bytes uploaded in its own prefix (not ingested)."""
    words = draw(st.lists(st.sampled_from(SHARED), min_size=2, max_size=5))
    return world.new_doc(
        user, draw(st.sampled_from(["1", "2"])), draw(st.sampled_from([1, 2, 3])), words, True, kind
    )


def submit(world: World, user: str, task: dict[str, Any], what: str) -> httpx.Response:
    """POST the task with `user`'s token; if it was accepted, wait for its run and keep it
    (so a later delete or re-index of the attacker's document sees it), then the properties."""
    answer = world.as_tenant(user, "POST", "/api/v1/parser/task/submit", json=task)
    if answer.status_code == 202:
        run = world.finished(task["task_id"])
        world.docs[task["task_id"]] = Doc(
            task["task_id"],
            str(task["user_id"]),
            str(task["dataset_id"]),
            int(task["original_file_id"]),
            task["file_type"],
            task["source_object_key"],
            task.get("md_object_key", ""),
            None,
            run["pipeline_status"],
        )
    world.settle(user, what)
    return answer


def cache_keys(world: World, sha256: str) -> list[str]:
    """The parse cache's objects of these bytes (pages, and a content-addressed source)."""
    return sorted(k for (b, k) in world.before if b == CACHE and sha256 in k)


def victim_cache_key(world: World, victim: Doc, attacker: str) -> str:
    """A cache object of the victim's bytes (else of other bytes the attacker does not hold:
    a task that stores its images is parsed outside the cache)."""
    found = cache_keys(world, victim.sha256 or "") or sorted(
        k for (b, k) in world.before if b == CACHE and attacker not in world.owners_of(b, k)
    )
    sha256 = victim.sha256 or "0" * 64
    return found[0] if found else f"{CACHE_PREFIX}/pages/{sha256[:2]}/{sha256}/quality/1.json"


# -- HTTP submit: every reference field of a tenant's task ------------------------------------


def submit_source_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """source_bucket/source_object_key: the victim's source file."""
    mine = own_doc(world, draw, user)
    task = world.task(
        mine,
        file_type=victim.file_type,
        source_object_key=victim.source_key,
        source_filename=f"x.{victim.file_type}",
    )
    task.pop("image_bucket", None), task.pop("image_prefix", None)
    what = f"submit source={SOURCES}/{victim.source_key}"
    refused(submit(world, user, task, what), "source", what)


def submit_source_markdown_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """source_bucket/source_object_key: the Markdown ragline wrote for the victim (md)."""
    mine = own_doc(world, draw, user)
    task = world.task(
        mine,
        file_type="md",
        source_bucket=MARKDOWN,
        source_object_key=victim.md_key,
        source_filename="x.md",
    )
    what = f"submit source={MARKDOWN}/{victim.md_key}"
    refused(submit(world, user, task, what), "source", what)


def submit_source_in_cache(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """source: a page object of the victim's bytes in the parse cache."""
    mine = own_doc(world, draw, user)
    key = victim_cache_key(world, victim, user)
    task = world.task(
        mine, file_type="md", source_bucket=CACHE, source_object_key=key, source_filename="x.md"
    )
    what = f"submit source={CACHE}/{key}"
    refused(submit(world, user, task, what), "source", what)


def submit_md_over_victims_markdown(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """md_bucket/md_object_key: overwrite the victim's Markdown."""
    task = world.task(own_doc(world, draw, user), md_object_key=victim.md_key)
    what = f"submit md={MARKDOWN}/{victim.md_key}"
    refused(submit(world, user, task, what), "md", what)


def submit_md_over_victims_source(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """md_bucket/md_object_key: overwrite the victim's source file."""
    task = world.task(
        own_doc(world, draw, user), md_bucket=SOURCES, md_object_key=victim.source_key
    )
    what = f"submit md={SOURCES}/{victim.source_key}"
    refused(submit(world, user, task, what), "md", what)


def submit_md_into_victims_prefix(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """md_bucket/md_object_key: a new object under the victim's prefix."""
    key = f"{victim.user}/md/planted-{world.tasks}.md"
    task = world.task(own_doc(world, draw, user), md_object_key=key)
    what = f"submit md={MARKDOWN}/{key}"
    refused(submit(world, user, task, what), "md", what)


def submit_md_over_cache_page(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """md_bucket/md_object_key: a parse-cache page of the victim's bytes."""
    key = victim_cache_key(world, victim, user)
    task = world.task(own_doc(world, draw, user), md_bucket=CACHE, md_object_key=key)
    what = f"submit md={CACHE}/{key}"
    refused(submit(world, user, task, what), "md", what)


def submit_md_over_own_source(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """md_bucket/md_object_key: the task's own source (a delete would then remove it)."""
    mine = own_doc(world, draw, user)
    task = world.task(mine, md_bucket=SOURCES, md_object_key=mine.source_key)
    what = f"submit md=own source {mine.source_key}"
    refused(submit(world, user, task, what), "md", what)


def submit_images_into_victims_prefix(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """image_bucket/image_prefix: the attacker's pictures under the victim's prefix."""
    bucket = draw(st.sampled_from([SOURCES, MARKDOWN]))
    prefix = draw(st.sampled_from([f"{victim.user}/images/", f"{victim.user}/"]))
    task = world.task(own_doc(world, draw, user, "docx"), image_bucket=bucket, image_prefix=prefix)
    what = f"submit image={bucket}/{prefix}"
    refused(submit(world, user, task, what), "image", what)


def submit_images_into_cache(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """image_bucket/image_prefix: the parse cache's pages of the victim's bytes."""
    prefix = draw(
        st.sampled_from(
            [f"{CACHE_PREFIX}/pages/{(victim.sha256 or '00')[:2]}/", f"{CACHE_PREFIX}/", "/"]
        )
    )
    task = world.task(own_doc(world, draw, user, "docx"), image_bucket=CACHE, image_prefix=prefix)
    what = f"submit image={CACHE}/{prefix}"
    refused(submit(world, user, task, what), "image", what)


def submit_for_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """user_id: the victim's, with the victim's own keys (a token acts for itself only)."""
    task = world.task(victim, task_id=world.next_task_id())
    what = f"submit user_id={victim.user}"
    refused(submit(world, user, task, what), "user_id", what)


def resubmit_victims_task_id(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """task_id: the victim's (the attacker's own references): the victim's run is untouched
    and nothing of it comes back."""
    before = world.run_of(victim.task_id)
    task = world.task(own_doc(world, draw, user), task_id=victim.task_id)
    answer = world.as_tenant(user, "POST", "/api/v1/parser/task/submit", json=task)
    if answer.status_code == 202:
        world.finished(victim.task_id)
    world.settle(user, f"resubmit task_id {victim.task_id}")
    assert world.run_of(victim.task_id) == before, "a resubmitted task_id changed the victim's run"
    assert answer.status_code in (202, 403, 404, 409), answer.text


# -- the broker: a message the business back end publishes --------------------------------------


def broker(world: World, task: dict[str, Any], actor: str, what: str) -> dict[str, Any] | None:
    world.publish(task)
    run = world.finished(task["task_id"])
    world.settle(actor, what)
    return run


def broker_md_over_cache_page(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """A broker task whose Markdown target is a cache page: nobody writes the cache."""
    key = victim_cache_key(world, victim, user)
    task = world.task(own_doc(world, draw, user), md_bucket=CACHE, md_object_key=key)
    what = f"broker md={CACHE}/{key}"
    broker_refused(broker(world, task, user, what), "md", what)


def broker_images_into_cache(world: World, draw: Draw, user: str, victim: Doc) -> None:
    prefix = draw(st.sampled_from([f"{CACHE_PREFIX}/pages/", f"{CACHE_PREFIX}/", "/"]))
    task = world.task(own_doc(world, draw, user, "docx"), image_bucket=CACHE, image_prefix=prefix)
    what = f"broker image={CACHE}/{prefix}"
    broker_refused(broker(world, task, user, what), "image", what)


def broker_md_over_own_source(world: World, draw: Draw, user: str, victim: Doc) -> None:
    mine = own_doc(world, draw, user)
    task = world.task(mine, md_bucket=SOURCES, md_object_key=mine.source_key)
    what = f"broker md=own source {mine.source_key}"
    broker_refused(broker(world, task, user, what), "md", what)


# -- parse requests and cache reads -------------------------------------------------------------


def parse_ref_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """POST /parses doc_ref=bucket/key: the victim's source, its Markdown or a cache page."""
    ref = draw(
        st.sampled_from(
            [
                f"{SOURCES}/{victim.source_key}",
                f"{MARKDOWN}/{victim.md_key}",
                f"{CACHE}/{victim_cache_key(world, victim, user)}",
            ]
        )
    )
    path = draw(st.sampled_from(PARSES))
    tier = draw(st.sampled_from(["basic", "quality"]))
    body = {"doc_ref": ref, "tier": tier, "file_type": victim.file_type}
    if ref.startswith(MARKDOWN) or ref.startswith(CACHE):
        body["file_type"] = "md"
    answer = world.as_tenant(user, "POST", path, json=body)
    wait_for_batches(world, answer)
    world.settle(user, f"POST {path} doc_ref={ref}")
    refused(answer, "doc_ref", f"POST {path} doc_ref={ref}")


def parse_sha_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """POST /parses doc_ref=<the victim's sha256>: as unknown as bytes nobody has."""
    path = draw(st.sampled_from(PARSES))
    tier = draw(st.sampled_from(["basic", "quality"]))
    force = draw(st.booleans())

    def ask(sha256: str) -> httpx.Response:
        body = {"doc_ref": sha256, "tier": tier, "force": force}
        answer = world.as_tenant(user, "POST", path, json=body)
        wait_for_batches(world, answer)
        return answer

    like_unknown(world, user, victim.sha256 or "", ask)
    world.settle(user, f"POST {path} doc_ref=<sha of {victim.task_id}>")


def coverage_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """GET /parses?doc_ref=<the victim's sha256>&tier=…: as unknown as bytes nobody has."""
    path = draw(st.sampled_from(PARSES))
    params: dict[str, str] = {"tier": draw(st.sampled_from(["basic", "quality"]))}
    if draw(st.booleans()):
        params["page_range"] = "1"
    like_unknown(
        world, user, victim.sha256 or "",
        lambda sha: world.as_tenant(user, "GET", path, params={**params, "doc_ref": sha}),
    )  # fmt: skip
    world.settle(user, f"GET {path}?doc_ref=<sha of {victim.task_id}>")


def markdown_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """GET /parses/markdown?doc_ref=<the victim's sha256>: as unknown as bytes nobody has."""
    path = draw(st.sampled_from(PARSES)) + "/markdown"
    params: dict[str, str] = {"tier": draw(st.sampled_from(["basic", "quality"]))}
    if draw(st.booleans()):
        params["page_range"] = "1"
    like_unknown(
        world, user, victim.sha256 or "",
        lambda sha: world.as_tenant(user, "GET", path, params={**params, "doc_ref": sha}),
    )  # fmt: skip
    world.settle(user, f"GET {path}?doc_ref=<sha of {victim.task_id}>")


def cache_read_by_ref_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """GET /parses and /parses/markdown with doc_ref=bucket/key of the victim's source."""
    path = draw(st.sampled_from(PARSES)) + draw(st.sampled_from(["", "/markdown"]))
    ref = f"{SOURCES}/{victim.source_key}"
    tier = draw(st.sampled_from(["quality", "basic"]))  # CLEANING parses at quality
    answer = world.as_tenant(user, "GET", path, params={"doc_ref": ref, "tier": tier})
    world.settle(user, f"GET {path}?doc_ref={ref}")
    refused(answer, "doc_ref", f"GET {path}?doc_ref={ref}")


def enumerate_batch_ids(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """GET /parses?ids=1..N: only the batches of bytes the tenant holds (each answer is also
    checked for foreign batch ids and sha256s as it arrives); its own are all there."""
    batches = world.batches()
    top = max(batches, default=0) + 3
    path = draw(st.sampled_from(PARSES))
    ids = list(range(1, top + 1))
    listed: set[int] = set()
    for start in range(0, len(ids), 500):  # the API's limit per request
        part = ",".join(map(str, ids[start : start + 500]))
        answer = world.as_tenant(user, "GET", path, params={"ids": part})
        assert answer.status_code == 200, answer.text
        listed.update(p["id"] for p in answer.json()["parses"])
    world.settle(user, f"GET {path}?ids=1..{top}")
    mine = {i for i, sha in batches.items() if sha in world.must_see[user]}
    assert mine <= listed, f"{user} does not see its own batches {sorted(mine - listed)}"


def extract_object_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """POST /parser/extract_sync with source = the victim's object, in either form."""
    bucket, key, kind = draw(
        st.sampled_from(
            [(SOURCES, victim.source_key, victim.file_type), (MARKDOWN, victim.md_key, "md")]
        )
    )
    # both forms `source` takes: a JSON ExtractFromObject, or `bucket/key`
    as_json = json.dumps({"bucket": bucket, "object_key": key, "file_type": kind})
    source = draw(st.sampled_from([as_json, f"{bucket}/{key}"]))
    answer = world.as_tenant(user, "POST", "/api/v1/parser/extract_sync", data={"source": source})
    world.settle(user, f"extract_sync source={bucket}/{key}")
    assert answer.status_code == 403, answer.text


# -- runs and documents -------------------------------------------------------------------------


def retry_victims_run(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """POST /runs/{victim's task}/retry: exactly like a run that does not exist."""
    before = world.run_of(victim.task_id)
    theirs = world.as_tenant(user, "POST", f"/api/v1/runs/{victim.task_id}/retry")
    nobodys = world.as_tenant(user, "POST", f"/api/v1/runs/no-such-{victim.task_id}/retry")
    world.settle(user, f"retry {victim.task_id}")
    assert world.run_of(victim.task_id) == before, "another tenant's retry touched the run"
    assert normalised(theirs) == normalised(nobodys), f"{theirs.text} vs {nobodys.text}"
    assert theirs.status_code == 404, theirs.text
    read = world.as_tenant(user, "GET", f"/api/v1/runs/{victim.task_id}")
    assert read.status_code == 404, read.text


def retry_message_for_victims_run(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """A retry task (own references) naming the victim's run as the one it retries."""
    before = world.run_of(victim.task_id)
    mine = own_doc(world, draw, user)
    mine.dataset, mine.doc = victim.dataset, victim.doc
    task = world.task(
        mine, is_retry=True, previous_task_id=victim.task_id, trigger_mode="manual_retry"
    )
    answer = submit(world, user, task, f"retry message naming {victim.task_id}")
    assert world.run_of(victim.task_id) == before, "another tenant's retry touched the run"
    if answer.status_code == 202:
        run = world.run_of(task["task_id"])
        assert run is not None and run["pipeline_status"] == "FAILED", run
    else:
        assert answer.status_code in (403, 404, 409), answer.text


def console_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """The console in the attacker's logged-in browser: the victim's run page answers as a
    run that does not exist, a retry button aimed at it (with the attacker's own valid CSRF
    token) changes nothing, and the run list, chunk tree and search playground (words every tenant's
    documents share), asked with the victim's user and ids, show nothing of the victim's
    (every answer is checked for its bytes' markers)."""
    before = world.run_of(victim.task_id)
    theirs = world.in_console(user, "GET", f"/console/runs/{victim.task_id}")
    nobodys = world.in_console(user, "GET", f"/console/runs/no-such-{victim.task_id}")
    assert theirs.status_code == nobodys.status_code == 404, theirs.text
    runs = world.in_console(user, "GET", "/console/runs", params={"user_id": victim.user})
    listed = set(RUN_LINK.findall(runs.text))
    assert runs.status_code == 200 and victim.task_id not in listed, sorted(listed)
    # the attacker's own FAILED run (its source is missing) gives its page's retry form,
    # so the POST below carries a CSRF token this session really holds
    mine = own_doc(world, draw, user)
    failing = world.task(mine, source_object_key=f"{mine.source_key}.missing")
    assert submit(world, user, failing, "own failing task").status_code == 202
    page = world.in_console(user, "GET", f"/console/runs/{failing['task_id']}")
    token = CSRF_FIELD.search(page.text)
    assert token is not None, f"no retry form on {user}'s own failed run: {page.text[:300]}"
    retry = world.in_console(
        user, "POST", f"/console/runs/{victim.task_id}/retry", data={"csrf": token.group(1)}
    )
    world.settle(user, f"console retry {victim.task_id}")
    assert retry.status_code == 404, retry.text
    assert world.run_of(victim.task_id) == before, "a console retry touched another's run"
    ids = {"dataset_id": victim.dataset, "user_id": victim.user}
    tree = world.in_console(
        user, "GET", f"/console/documents/{victim.dataset}/{victim.doc}/chunks", params=ids
    )
    assert tree.status_code in (200, 404), tree.text  # 200: the attacker's own same-id doc
    query = " ".join(draw(st.lists(st.sampled_from(SHARED), min_size=2, max_size=4)))
    found = world.in_console(user, "GET", "/console/search", params={"q": query, **ids})
    assert found.status_code == 200, found.text


def reindex_own(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """Re-index one of the attacker's documents (the id of the victim's: ids overlap)."""
    url = f"/api/v1/documents/{victim.doc}/reindex"
    answer = world.as_tenant(user, "POST", url, params={"dataset_id": victim.dataset})
    if answer.status_code == 202:
        run = world.finished(answer.json()["task_id"])
        world.hold_markdown_of(user, run)
    world.settle(user, f"reindex {user}/{victim.dataset}/{victim.doc}")
    assert answer.status_code in (202, 404, 409), answer.text


def delete_own(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """Delete one of the attacker's documents (the id of the victim's: ids overlap): others'
    objects stay, and its own sources too (a delete never touches sources)."""
    sources = {k: v for k, v in world.before.items() if k[0] == SOURCES}
    url = f"/api/v1/documents/{victim.doc}"
    answer = world.as_tenant(user, "DELETE", url, params={"dataset_id": victim.dataset})
    world.settle(user, f"delete {user}/{victim.dataset}/{victim.doc}")
    after = world.before
    gone = sorted(k[1] for k in sources if k not in after)
    assert not gone, f"{user}'s delete removed the sources {gone}"
    assert answer.status_code in (200, 404, 409), answer.text


def relabel_victims_document(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """PUT metadata on the victim's document id (ids overlap: the attacker may have one of
    its own, which alone is relabelled), then filter on the label it set: the victim's
    chunks keep theirs, and whatever the attacker finds with it is its own."""
    url = f"/api/v1/documents/{victim.doc}/metadata"
    label = f"set-by-{user}"
    body = {"metadata": {"owner": user, "shared": label, "doc": victim.doc}}
    theirs = marker(victim.user, victim.dataset, victim.doc)
    labelled_before = world.raw(victim.user, victim.dataset, theirs, Eq("owner", victim.user))
    answer = world.as_tenant(
        user, "PUT", url, params={"dataset_id": victim.dataset, "user_id": victim.user}, json=body
    )
    world.settle(user, f"PUT metadata {user} -> {victim.user}/{victim.dataset}/{victim.doc}")
    assert answer.status_code in (200, 404), answer.text
    moved = world.raw(victim.user, victim.dataset, theirs, Eq("shared", label))
    assert not any(moved.values()), f"{user}'s PUT relabelled {victim.user}'s chunks: {moved}"
    labelled_after = world.raw(victim.user, victim.dataset, theirs, Eq("owner", victim.user))
    for retriever, ids in labelled_before.items():
        assert set(labelled_after[retriever]) == set(ids), (
            f"{user}'s PUT changed {victim.user}'s labels ({retriever})"
        )
    owners = world.owners()
    for ids in world.raw(user, victim.dataset, theirs, Eq("shared", label)).values():
        for chunk_id in ids:
            held = {(u, d) for (u, d, _) in owners.get(chunk_id, set())}
            assert (user, victim.dataset) in held, f"{user} found {chunk_id} of {held}"
    world.checks += 1


def list_own(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """The attacker's runs and documents (answers checked for foreign bytes)."""
    runs = world.as_tenant(user, "GET", "/api/v1/runs", params={"page_size": 200})
    assert {r["user_id"] for r in runs.json()["runs"]} <= {user}, runs.text
    docs = world.as_tenant(
        user, "GET", f"/api/v1/datasets/{victim.dataset}/documents", params={"page_size": 200}
    )
    assert docs.status_code == 200, docs.text
    world.settle(user, "listing")


def wait_for_batches(world: World, answer: httpx.Response) -> None:
    """A parse request that was planned: wait (service token) for the batches it waits on,
    so their pages are written before the next action is looked at."""
    if answer.status_code != 200:
        return
    ids = answer.json().get("wait_parse_ids") or []
    if ids:
        world.wait_batches(ids)


# -- legitimate parse requests (so a tenant's own cache reads are exercised too) --------------


def parse_own(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """POST /parses doc_ref=bucket/key of the tenant's own source; then its coverage and
    Markdown by sha256: the tenant's own bytes come back."""
    mine = [d for d in world.docs.values() if d.user == user and d.sha256 and d.file_type == "txt"]
    doc = pick(draw, sorted(mine, key=lambda d: d.task_id))
    path = draw(st.sampled_from(PARSES))
    tier = draw(st.sampled_from(["quality", "basic"]))  # done by CLEANING, or a new batch
    if doc is None:
        return
    answer = world.as_tenant(
        user, "POST", path, json={"doc_ref": f"{SOURCES}/{doc.source_key}", "tier": tier}
    )
    wait_for_batches(world, answer)
    assert doc.sha256 is not None
    world.must_see[user].add(doc.sha256)
    world.settle(user, f"POST {path} own {doc.source_key}")
    assert answer.status_code == 200, answer.text
    assert answer.json()["sha256"] == doc.sha256
    read = world.as_tenant(
        user, "GET", f"{path}/markdown", params={"doc_ref": doc.sha256, "tier": tier}
    )
    assert read.status_code == 200, read.text
    assert marker(doc.user, doc.dataset, doc.doc) in read.json()["markdown"]


def redrive_every_tenants_tasks(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """POST /tasks/redrive: the task dead letters hold every tenant's tasks, so a tenant
    token is refused before the dead-letter topic is read."""
    answer = world.as_tenant(user, "POST", "/api/v1/tasks/redrive", json={"limit": 10})
    world.settle(user, "tasks redrive")
    assert answer.status_code == 403, answer.text


def chunks_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """GET the chunks of the victim's document id (ids overlap): the attacker's own
    document of that id, or 404; never a row of the victim's (the answer is checked for
    its bytes)."""
    url = f"/api/v1/documents/{victim.doc}/chunks"
    params = {"dataset_id": victim.dataset, "user_id": victim.user, "limit": 100}
    answer = world.as_tenant(user, "GET", url, params=params)
    assert answer.status_code in (200, 404), answer.text
    if answer.status_code == 200:
        owners = world.owners()
        mine = (user, victim.dataset, str(victim.doc))
        for family in answer.json()["parents"]:
            for chunk in (family["parent"], *family["children"]):
                assert mine in owners[chunk["chunk_id"]], f"{chunk['chunk_id']} is not {user}'s"
    world.settle(user, f"chunks of {victim.dataset}/{victim.doc}")


def patch_victims_chunk(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """Switch off or re-word a chunk of the victim's document: 404, and the victim's rows
    and what each retriever returns it are as they were."""
    scope = (victim.user, victim.dataset, str(victim.doc))
    chunk_id = pick(draw, sorted(c for c, held in world.owners().items() if scope in held))
    chunk_id = chunk_id or f"gone-{victim.task_id}"  # its owner deleted it meanwhile
    body = draw(st.sampled_from([{"enabled": False}, {"text": f"{marker(user, '0', 0)} mine"}]))
    query = marker(victim.user, victim.dataset, victim.doc)
    rows, found = world.chunk_texts(victim.user), world.raw(victim.user, victim.dataset, query)
    url = f"/api/v1/documents/{victim.doc}/chunks/{chunk_id}"
    params = {"dataset_id": victim.dataset, "user_id": victim.user}
    answer = world.as_tenant(user, "PATCH", url, params=params, json=body)
    assert answer.status_code == 404, answer.text
    assert world.chunk_texts(victim.user) == rows, "another tenant's PATCH changed the rows"
    assert world.raw(victim.user, victim.dataset, query) == found, "the retrievers changed"
    world.settle(user, f"patch {chunk_id}")


def upload_own(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """Upload bytes naming the victim's user, dataset and document id: stored under the
    attacker's own prefix as the attacker's document; the victim's rows unchanged."""
    words = draw(st.lists(st.sampled_from(SHARED), min_size=2, max_size=5))
    data = " ".join([marker(user, victim.dataset, victim.doc), *words]).encode()
    world.held[user].add(hashlib.sha256(data).hexdigest())
    rows = world.chunk_texts(victim.user)
    answer = world.as_tenant(
        user,
        "POST",
        f"/api/v1/datasets/{victim.dataset}/documents",
        params={"user_id": victim.user},
        files={"file": ("notes.txt", data)},
        data={"doc_id": str(victim.doc)},
    )
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert body["source_object_key"].startswith(f"{user}/uploads/"), body
    run = world.finished(body["task_id"])
    world.docs[body["task_id"]] = Doc(
        body["task_id"],
        user,
        victim.dataset,
        victim.doc,
        body["file_type"],
        body["source_object_key"],
        "",
        None,
        run["pipeline_status"],
    )
    world.settle(user, f"upload as {victim.dataset}/{victim.doc}")
    assert world.chunk_texts(victim.user) == rows, "an upload changed another tenant's rows"


def reembedding_of_victim(world: World, draw: Draw, user: str, victim: Doc) -> None:
    """GET /reembeddings/{the victim's} and its cancel: exactly like an id nobody has (a
    404; the cancel a 403 before any lookup), and the victim's re-embedding untouched."""
    world.reembeddings += 1
    theirs_id = f"tenancy-re-{world.reembeddings}"

    async def plan() -> None:
        reembeddings = await obtain(world.container.reembeddings)
        target = EmbeddingSpec("fake", "fake-9", 9)
        await reembeddings.plan(theirs_id, victim.user, target, datetime.now(UTC), 8)

    world.call(plan)
    read = world.as_tenant(user, "GET", f"/api/v1/reembeddings/{theirs_id}")
    unknown = world.as_tenant(user, "GET", f"/api/v1/reembeddings/no-such-{theirs_id}")
    cancel = world.as_tenant(user, "POST", f"/api/v1/reembeddings/{theirs_id}/cancel")
    nothing = world.as_tenant(user, "POST", f"/api/v1/reembeddings/no-such-{theirs_id}/cancel")
    world.settle(user, f"re-embedding {theirs_id}")
    assert normalised(read) == normalised(unknown), f"{read.text} vs {unknown.text}"
    assert read.status_code == 404, read.text
    assert normalised(cancel) == normalised(nothing), f"{cancel.text} vs {nothing.text}"
    assert cancel.status_code in (403, 404), cancel.text
    kept = world.as_service("GET", f"/api/v1/reembeddings/{theirs_id}")
    assert kept.json()["status"] == "PLANNED", f"another tenant's cancel ended it: {kept.text}"
    ended = world.as_service("POST", f"/api/v1/reembeddings/{theirs_id}/cancel")
    assert ended.status_code == 200, ended.text  # the victim may be re-embedded again


CSRF_FIELD = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
RUN_LINK = re.compile(r'<a href="/console/runs/[^"]+">([^<]+)</a>')

ATTACKS: tuple[Attack, ...] = (
    submit_source_of_victim,
    submit_source_markdown_of_victim,
    submit_source_in_cache,
    submit_md_over_victims_markdown,
    submit_md_over_victims_source,
    submit_md_into_victims_prefix,
    submit_md_over_cache_page,
    submit_md_over_own_source,
    submit_images_into_victims_prefix,
    submit_images_into_cache,
    submit_for_victim,
    resubmit_victims_task_id,
    broker_md_over_cache_page,
    broker_images_into_cache,
    broker_md_over_own_source,
    parse_ref_of_victim,
    parse_sha_of_victim,
    coverage_of_victim,
    markdown_of_victim,
    cache_read_by_ref_of_victim,
    enumerate_batch_ids,
    extract_object_of_victim,
    retry_victims_run,
    retry_message_for_victims_run,
    console_of_victim,
    reindex_own,
    relabel_victims_document,
    delete_own,
    list_own,
    parse_own,
    redrive_every_tenants_tasks,
    chunks_of_victim,
    patch_victims_chunk,
    upload_own,
    reembedding_of_victim,
)

NEEDS_A_FAILED_RUN = frozenset(
    {retry_victims_run, retry_message_for_victims_run, console_of_victim}
)
"""Aimed at a FAILED run of the victim when there is one."""
NEEDS_CACHED_BYTES = frozenset(
    {parse_sha_of_victim, coverage_of_victim, markdown_of_victim, cache_read_by_ref_of_victim}
)
"""Aimed at bytes the parse cache holds when there are some."""


def victims_for(world: World, attack: Attack, attacker: str) -> list[Doc]:
    """The documents of other tenants `attack` is aimed at, in a stable order."""
    docs = sorted(world.docs.values(), key=lambda d: d.task_id)
    pool = [d for d in docs if d.user != attacker and d.sha256 and d.status == "SUCCESS"]
    if attack in NEEDS_A_FAILED_RUN:
        pool = [d for d in docs if d.user != attacker and d.status == "FAILED"] or pool
    if attack in NEEDS_CACHED_BYTES:
        cached = set(world.batches().values())
        pool = [d for d in pool if d.sha256 in cached] or pool
    return pool
