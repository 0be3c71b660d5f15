"""CPU-heavy request work runs off the event loop, a bounded number at a time (issue 18: a
2 MB chunk preview was cut on the event loop, and /healthz waited 4.9 s for it)."""

from __future__ import annotations

import asyncio
import io
import threading
from typing import Any

import anyio
import pytest
from dependency_injector import providers
from fastapi import HTTPException
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http.work_gate import WorkGate
from ragline.application.chunking.preview import PreviewChunks
from ragline.domain.chunking import ChunkingResult
from tests.http.conftest import ALICE_TOKEN, bearer

HOLD_SECONDS = 30.0
"""Only so that a regression cannot hang the suite: nothing here waits for it to pass."""


def on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class HeldChunker:
    """The real ChunkDocument, but each cut waits until the test releases it, and records
    whether it ran on an event loop and whether it was released (not timed out)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.entered = threading.Event()
        self.release = threading.Event()
        self.seen: list[tuple[bool, bool]] = []

    def plan(self, name: str) -> Any:
        return self.real.plan(name)

    def __call__(self, markdown: str, plan: Any) -> ChunkingResult:
        self.entered.set()
        released = self.release.wait(HOLD_SECONDS)
        self.seen.append((on_event_loop(), released))
        result: ChunkingResult = self.real(markdown, plan)
        return result


def held_preview(client: TestClient) -> HeldChunker:
    container = client.app.state.container  # type: ignore[attr-defined]
    held = HeldChunker(container.chunk_document())
    preview = PreviewChunks(held, container.extract_markdown())  # type: ignore[arg-type]
    container.preview_chunks.override(providers.Object(preview))
    return held


@pytest.mark.parametrize("route", ["text", "file"])
def test_a_preview_is_cut_in_a_worker_thread_while_healthz_answers(
    client: TestClient, route: str
) -> None:
    held = held_preview(client)
    answers: list[Any] = []

    def ask() -> None:
        headers = bearer(ALICE_TOKEN)
        if route == "text":
            answers.append(
                client.post("/api/v1/chunks/preview", json={"text": "# T\n\nbody"}, headers=headers)
            )
        else:
            upload = {"file": ("a.md", io.BytesIO(b"# T\n\nbody"), "text/markdown")}
            answers.append(
                client.post("/api/v1/chunks/preview/file", files=upload, headers=headers)
            )

    asking = threading.Thread(target=ask)
    asking.start()
    assert held.entered.wait(HOLD_SECONDS)
    assert client.get("/healthz").status_code == 200  # while the cut is held
    held.release.set()
    asking.join()
    assert answers[0].status_code == 200, answers[0].text
    assert answers[0].json()["parents"][0]["section_path"] == ["T"]
    # not on the loop, and released by the test: healthz was answered during the cut
    assert held.seen == [(False, True)]


async def test_the_gate_runs_at_most_its_workers_and_refuses_past_its_queue() -> None:
    gate = WorkGate(workers=2, waiting=1)
    release = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def work() -> bool:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            return on_event_loop() or not release.wait(HOLD_SECONDS)
        finally:
            with lock:
                running -= 1

    results: list[bool] = []

    async def one() -> None:
        results.append(await gate.run(work))

    async with anyio.create_task_group() as group:
        for _ in range(3):  # two run, one waits
            group.start_soon(one)
        await anyio.wait_all_tasks_blocked()
        for _ in range(1000):
            if gate.limiter.statistics().tasks_waiting == 1:
                break
            await anyio.sleep(0.01)
        with pytest.raises(HTTPException) as busy:  # the queue is full: refused at once
            await gate.run(work)
        assert busy.value.status_code == 503 and busy.value.headers == {"Retry-After": "5"}
        release.set()
    assert results == [False, False, False]  # each ran off the loop and was released
    assert most == 2


def test_a_busy_gate_is_a_503_problem(client: TestClient) -> None:
    client.app.state.work_gate = WorkGate(workers=1, waiting=0)  # type: ignore[attr-defined]
    held = held_preview(client)
    answers: list[Any] = []
    asking = threading.Thread(
        target=lambda: answers.append(
            client.post("/api/v1/chunks/preview", json={"text": "x"}, headers=bearer(ALICE_TOKEN))
        )
    )
    asking.start()
    assert held.entered.wait(HOLD_SECONDS)
    refused = client.post("/api/v1/chunks/preview", json={"text": "y"}, headers=bearer(ALICE_TOKEN))
    upload = {"file": ("a.txt", io.BytesIO(b"words"), "text/plain")}
    extract = client.post("/api/v1/parser/extract_sync", files=upload, headers=bearer(ALICE_TOKEN))
    held.release.set()
    asking.join()
    assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
    assert refused.headers["content-type"] == "application/problem+json"
    assert extract.status_code == 503  # a synchronous extract takes a slot of the same gate
    assert answers[0].status_code == 200
