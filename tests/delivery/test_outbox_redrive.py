"""Hole 2 of issue 12: a DEAD result is not forever. An operator lists the outbox and
redrives DEAD results (CLI, HTTP, use case); the relay then publishes them; the
`ragline_outbox_rows` gauge says how many are DEAD or owed."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.adapters.inbound.http.dependencies import entry_of_app
from ragline.application.outbox import ManageOutbox
from ragline.bootstrap.cli import _entry
from tests.console.seed import seed_dead
from tests.fakes.harness import Harness
from tests.http.conftest import ALICE_TOKEN, SERVICE_TOKEN, bearer


async def _dead_result(h: Harness) -> str:
    task = h.task()
    await h.pipeline.handle(task)
    h.publisher.fail_next(h.relay.policy.max_attempts)
    for _ in range(h.relay.policy.max_attempts):
        await h.relay.relay_once()
        h.clock.advance(timedelta(minutes=10))
    assert h.db.outbox[task.task_id].status == "DEAD"
    return task.task_id


async def test_a_redriven_dead_result_is_published(h: Harness) -> None:
    dead = await _dead_result(h)
    manage = ManageOutbox(h.db, h.clock)
    assert [m.task_id for m in await manage.list("dead")] == [dead]
    assert (await manage.counts())["DEAD"] == 1
    assert (await h.relay.relay_once()).sent == 0  # DEAD: the relay leaves it alone
    report = await manage.redrive([dead, "never-seen"])
    assert report.redriven == [dead]
    assert report.refused == {"never-seen": "no result for this task_id"}
    again = await manage.redrive([dead])
    assert again.redriven == [] and again.refused == {dead: "not DEAD (PENDING)"}
    assert (await h.relay.relay_once()).sent == 1
    assert h.db.outbox[dead].status == "SENT"
    assert [key for key, _ in h.publisher.published] == [dead]
    assert (await manage.counts()) == {"PENDING": 0, "SENT": 1, "DEAD": 0}


async def test_redrive_all_dead_pages_through_every_dead_row(h: Harness) -> None:
    dead = [await _dead_result(h) for _ in range(3)]
    manage = ManageOutbox(h.db, h.clock)
    report = await manage.redrive_all_dead()
    assert sorted(report.redriven) == sorted(dead) and report.refused == {}
    assert all(h.db.outbox[t].status == "PENDING" and h.db.outbox[t].attempts == 0 for t in dead)


def _seed_dead(data_dir: Path, *task_ids: str) -> None:
    seed_dead(data_dir, *task_ids, error="RESULT_NOTIFY_FAILED:broker gone")


def _cli(data_dir: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_cli(_entry), [*args, "--data-dir", str(data_dir)])
    return result.exit_code, result.stdout


def test_the_cli_lists_and_redrives(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _seed_dead(data, "t-1", "t-2", "t-3")
    code, out = _cli(data, "outbox", "list", "--status", "dead", "--json")
    assert code == 0, out
    listed = json.loads(out)
    assert [r["task_id"] for r in listed["rows"]] == ["t-1", "t-2", "t-3"]
    assert listed["rows"][0]["last_error"] == "RESULT_NOTIFY_FAILED:broker gone"
    assert listed["counts"] == {"PENDING": 0, "SENT": 0, "DEAD": 3}
    code, out = _cli(data, "outbox", "redrive", "--task-id", "t-2", "--json")
    assert code == 0, out
    assert json.loads(out) == {"redriven": ["t-2"], "refused": {}}
    code, out = _cli(data, "outbox", "list", "--task-id", "t-2", "--json")
    (row,) = json.loads(out)["rows"]
    assert (row["status"], row["attempts"]) == ("PENDING", 0)
    code, out = _cli(data, "outbox", "redrive", "--task-id", "t-2", "--json")
    assert code == 1 and json.loads(out)["refused"] == {"t-2": "not DEAD (PENDING)"}
    code, out = _cli(data, "outbox", "redrive", "--all-dead", "--json")
    assert code == 0 and sorted(json.loads(out)["redriven"]) == ["t-1", "t-3"]
    code, _ = _cli(data, "outbox", "redrive")
    assert code == 2  # neither --task-id nor --all-dead
    code, _ = _cli(data, "outbox", "list", "--status", "lost")
    assert code == 2


def test_the_http_outbox_is_for_the_service_token_only(client: TestClient) -> None:
    data_dir = entry_of_app(client.app).settings().data_dir  # type: ignore[arg-type]
    # the app's container has opened the database; seed through a second container on it
    _seed_dead(data_dir, "h-1", "h-2")
    assert client.get("/api/v1/outbox").status_code == 401
    assert client.get("/api/v1/outbox", headers=bearer(ALICE_TOKEN)).status_code == 403
    denied = client.post(
        "/api/v1/outbox/redrive", json={"all_dead": True}, headers=bearer(ALICE_TOKEN)
    )
    assert denied.status_code == 403
    page = client.get("/api/v1/outbox?status=dead", headers=bearer(SERVICE_TOKEN))
    assert page.status_code == 200, page.text
    assert [r["task_id"] for r in page.json()["rows"]] == ["h-1", "h-2"]
    assert page.json()["counts"]["DEAD"] == 2
    metrics = client.get("/metrics").text
    assert 'ragline_outbox_rows{status="DEAD"} 2.0' in metrics
    bad = client.get("/api/v1/outbox?status=lost", headers=bearer(SERVICE_TOKEN))
    assert bad.status_code == 422
    done = client.post(
        "/api/v1/outbox/redrive", json={"task_ids": ["h-1", "nope"]}, headers=bearer(SERVICE_TOKEN)
    )
    assert done.status_code == 200
    assert done.json() == {"redriven": ["h-1"], "refused": {"nope": "no result for this task_id"}}
    rest = client.post(
        "/api/v1/outbox/redrive", json={"all_dead": True}, headers=bearer(SERVICE_TOKEN)
    )
    assert rest.json()["redriven"] == ["h-2"]
    assert 'ragline_outbox_rows{status="DEAD"} 0.0' in client.get("/metrics").text
    neither = client.post("/api/v1/outbox/redrive", json={}, headers=bearer(SERVICE_TOKEN))
    assert neither.status_code == 422
