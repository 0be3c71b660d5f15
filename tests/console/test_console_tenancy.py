"""The console over plain HTTP: the API's tokens as a session cookie, a tenant sees only its
own runs, failures, documents and search, a tenant token cannot redrive or see the outbox,
and every button wants this session's CSRF token from this server's own pages."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.adapters.inbound.http.console.session import COOKIE, cookie_value
from ragline.adapters.inbound.http.dependencies import entry_of_app
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from tests.console.conftest import (
    ALICE_RUN,
    ALICE_TOKEN,
    BOB_RUN,
    BOB_TOKEN,
    SEED_TASK,
    SERVICE_TOKEN,
    session,
)
from tests.console.seed import csrf_of, seed_dead
from tests.http.conftest import bearer, finished_run

PAGES = ("/console/runs", "/console/failures", "/console/documents", "/console/search")


def test_without_a_session_every_page_sends_the_browser_to_log_in(console: TestClient) -> None:
    for url in (*PAGES, "/console/outbox", f"/console/runs/{ALICE_RUN}"):
        response = console.get(url, follow_redirects=False)
        assert response.status_code == 303, url
        assert response.headers["location"] == "/console/login"
    wrong = console.get("/console/runs", headers=session("not-a-token-0123456789"))
    assert wrong.history and wrong.url.path == "/console/login"
    garbage = console.get("/console/runs", headers={"Cookie": f"{COOKIE}=%%%not-base64"})
    assert garbage.url.path == "/console/login"
    # a bearer header is not a console session (a page never reads Authorization)
    assert console.get("/console/runs", headers=bearer(ALICE_TOKEN)).url.path == "/console/login"


def test_logging_in_sets_an_http_only_strict_cookie_holding_the_token(
    console: TestClient,
) -> None:
    refused = console.post("/console/login", data={"token": "wrong-token-0123456789"})
    assert refused.status_code == 401 and 'id="login-failed"' in refused.text
    assert COOKIE not in refused.headers.get("set-cookie", "")
    done = console.post("/console/login", data={"token": ALICE_TOKEN}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/console/runs"
    cookie = done.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}={cookie_value(ALICE_TOKEN)};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/console" in cookie
    page = console.get("/console/runs", headers=session(ALICE_TOKEN))
    assert page.status_code == 200
    assert "default-src 'none'" in page.headers["content-security-policy"]
    out = console.post("/console/logout", follow_redirects=False)
    assert out.headers["location"] == "/console/login"
    assert f'{COOKIE}=""' in out.headers["set-cookie"]


def test_a_tenant_sees_its_own_runs_and_failures_only(console: TestClient) -> None:
    alice = session(ALICE_TOKEN)
    runs = console.get("/console/runs?user_id=2002", headers=alice).text  # asks for Bob's
    assert ALICE_RUN in runs and BOB_RUN not in runs
    failures = console.get("/console/failures?user_id=2002", headers=alice).text
    assert ALICE_RUN in failures and BOB_RUN not in failures
    assert 'id="code-SOURCE_FILE_NOT_FOUND"' in failures
    assert "The source file was not found" in failures
    own = console.get(f"/console/runs/{ALICE_RUN}", headers=alice)
    assert own.status_code == 200 and 'id="timeline"' in own.text and 'id="retry"' in own.text
    other = console.get(f"/console/runs/{BOB_RUN}", headers=alice)
    missing = console.get("/console/runs/never-was", headers=alice)
    assert other.status_code == missing.status_code == 404
    assert BOB_RUN not in other.text
    service = session(SERVICE_TOKEN)
    everyone = console.get("/console/runs", headers=service).text
    assert ALICE_RUN in everyone and BOB_RUN in everyone
    only_bob = console.get("/console/runs?user_id=2002&status=failed", headers=service).text
    assert BOB_RUN in only_bob and ALICE_RUN not in only_bob
    none_success = console.get("/console/runs?status=SUCCESS", headers=service).text
    assert ALICE_RUN not in none_success and "no runs" in none_success


def test_a_tenant_cannot_retry_another_tenants_run(console: TestClient) -> None:
    bob = session(BOB_TOKEN)
    csrf = csrf_of(console.get(f"/console/runs/{BOB_RUN}", headers=bob).text)
    refused = console.post(f"/console/runs/{ALICE_RUN}/retry", data={"csrf": csrf}, headers=bob)
    assert refused.status_code == 404
    run = console.get(f"/api/v1/runs/{ALICE_RUN}", headers=bearer(ALICE_TOKEN)).json()
    assert run["superseded_by_task_id"] is None  # nothing was retried


def test_a_tenant_token_neither_sees_nor_redrives_the_outbox(console: TestClient) -> None:
    data_dir = entry_of_app(console.app).settings().data_dir  # type: ignore[arg-type]
    seed_dead(data_dir, "dead-1", "dead-2")
    alice = session(ALICE_TOKEN)
    page = console.get("/console/outbox", headers=alice)
    assert page.status_code == 403 and "dead-1" not in page.text
    csrf = csrf_of(console.get(f"/console/runs/{ALICE_RUN}", headers=alice).text)
    for form in ({"csrf": csrf, "task_id": "dead-1"}, {"csrf": csrf, "all_dead": "true"}):
        refused = console.post("/console/outbox/redrive", data=form, headers=alice)
        assert refused.status_code == 403 and "service token" in refused.text
    rows = console.get("/api/v1/outbox?status=dead", headers=bearer(SERVICE_TOKEN)).json()
    assert [r["task_id"] for r in rows["rows"]] == ["dead-1", "dead-2"]


def test_the_service_token_redrives_one_dead_row(console: TestClient) -> None:
    data_dir = entry_of_app(console.app).settings().data_dir  # type: ignore[arg-type]
    seed_dead(data_dir, "dead-3", "dead-4")
    service = session(SERVICE_TOKEN)
    page = console.get("/console/outbox", headers=service)
    assert page.status_code == 200 and "dead-3" in page.text and "RESULT_NOTIFY_FAILED" in page.text
    done = console.post(
        "/console/outbox/redrive",
        data={"csrf": csrf_of(page.text), "task_id": "dead-3"},
        headers=service,
        follow_redirects=False,
    )
    assert done.status_code == 303
    report = console.get(done.headers["location"], headers=service).text
    assert 'id="redrive-report"' in report and "1 redriven" in report
    rows = console.get("/api/v1/outbox?task_id=dead-3", headers=bearer(SERVICE_TOKEN)).json()
    assert rows["rows"][0]["status"] in ("PENDING", "SENT")  # the relay may have sent it


def test_a_button_needs_this_sessions_csrf_token_and_this_servers_origin(
    console: TestClient,
) -> None:
    alice, bob = session(ALICE_TOKEN), session(BOB_TOKEN)
    url = f"/console/runs/{ALICE_RUN}/retry"
    assert console.post(url, headers=alice).status_code == 403  # no token
    bobs = csrf_of(console.get(f"/console/runs/{BOB_RUN}", headers=bob).text)
    assert console.post(url, data={"csrf": bobs}, headers=alice).status_code == 403
    alices = csrf_of(console.get(f"/console/runs/{ALICE_RUN}", headers=alice).text)
    foreign = {**alice, "Origin": "https://evil.example"}
    refused = console.post(url, data={"csrf": alices}, headers=foreign)
    assert refused.status_code == 403 and "own pages" in refused.text
    run = console.get(f"/api/v1/runs/{ALICE_RUN}", headers=bearer(ALICE_TOKEN)).json()
    assert run["superseded_by_task_id"] is None


def test_a_tenant_lists_and_searches_its_own_user_only(console: TestClient) -> None:
    alice = session(ALICE_TOKEN)
    docs = console.get("/console/documents?dataset_id=3003&user_id=2002", headers=alice)
    assert docs.status_code == 200 and "777" not in docs.text  # Bob's document, not Alice's
    bobs = console.get("/console/documents?dataset_id=3003", headers=session(BOB_TOKEN)).text
    assert "777" in bobs
    found = console.get("/console/search?q=tea&dataset_id=3003&user_id=2002", headers=alice)
    assert found.status_code == 200 and "nothing of this user was ever indexed" in found.text
    service = console.get("/console/search?q=tea&dataset_id=3003", headers=session(SERVICE_TOKEN))
    assert service.status_code == 422  # a service token names the user


def test_a_tenant_sees_the_chunk_tree_of_its_own_documents_only(console: TestClient) -> None:
    url = "/console/documents/2001/12345/chunks"  # Alice's document (its run failed)
    own = console.get(url, headers=session(ALICE_TOKEN))
    assert own.status_code == 200 and 'id="chunk-tree"' in own.text
    for intruder in (f"{url}?user_id=1001", url):  # Bob, naming Alice or not
        other = console.get(intruder, headers=session(BOB_TOKEN))
        missing = console.get("/console/documents/2001/999/chunks", headers=session(BOB_TOKEN))
        assert other.status_code == missing.status_code == 404
        assert "no such document" in other.text
    service = console.get(f"{url}?user_id=1001", headers=session(SERVICE_TOKEN))
    assert service.status_code == 200
    assert console.get(url, headers=session(SERVICE_TOKEN)).status_code == 422
    bad = console.get(f"{url}?cursor=not-a-cursor", headers=session(ALICE_TOKEN))
    assert bad.status_code == 422


def test_without_tokens_the_console_is_the_default_users_and_refuses_cross_site_buttons(
    tmp_path: Path,
) -> None:
    container = container_for(tmp_path / "open")
    app = create_app(entry_for(container), ApiTokens.parse(None))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        submit_open = {  # the default user is a tenant: its objects under its own prefix
            **SEED_TASK,
            "task_id": "open-1",
            "user_id": 1,
            "source_bucket": "sources",
            "source_object_key": "1/open/doc.pdf",
            "md_bucket": "markdown",
            "md_object_key": "1/open/doc.md",
            "image_bucket": "markdown",
            "image_prefix": "1/open/images/",
        }
        assert client.post("/api/v1/parser/task/submit", json=submit_open).status_code == 202
        finished_run(client, "open-1", "")
        page = client.get("/console/runs/open-1")  # no login: the loopback mode's user
        assert page.status_code == 200 and "user 1" in page.text and "Log out" not in page.text
        assert client.get("/console/login", follow_redirects=False).status_code == 303
        csrf = csrf_of(page.text)
        cross = client.post(
            "/console/runs/open-1/retry",
            data={"csrf": csrf},
            headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        )
        assert cross.status_code == 403
        assert client.get("/console/outbox").status_code == 403  # not the service
        elsewhere = client.get("/console/runs", headers={"Host": "evil.example"})
        assert elsewhere.status_code == 421  # DNS rebinding: LoopbackGuard answers first
