"""MinerU precision extract API v4, the documented protocol (https://mineru.net/doc/docs/):

1. ``POST {base}/api/v4/extract/task`` with ``Authorization: Bearer <token>`` and JSON
   ``{url, model_version, is_ocr, enable_formula, enable_table, language, page_ranges}``
   -> ``{code: 0, msg, trace_id, data: {task_id}}`` (``code != 0`` is a refusal);
2. ``GET {base}/api/v4/extract/task/{task_id}`` until ``data.state`` is ``done`` (then
   ``data.full_zip_url``) or ``failed`` (``data.err_msg``); ``pending``, ``running`` and
   ``converting`` mean wait;
3. download ``full_zip_url`` (no token: it is another host) and read ``full.md`` + images.

The source is never uploaded: ``url`` is the presigned URL of the task's source object
(docs/design/0001-pipeline-contract.md, direct pull). Every request has a timeout; 429, 5xx and
connection errors are retried with exponential backoff (``Retry-After`` honoured); the whole task
has a deadline.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ragline.adapters.parser.mineru.archive import MineruResult, read_result
from ragline.application.ports.parser import (
    ParsedDocument,
    ParseEngineFailed,
    ParseOptions,
    UnsupportedFileType,
)
from ragline.application.secrets import SecretMask

_WAITING = frozenset({"pending", "running", "converting", "waiting-file"})


@dataclass(frozen=True, slots=True)
class MineruConfig:
    token: str
    base_url: str = "https://mineru.net"
    model_version: str = "pipeline"  # pipeline | vlm
    language: str = "ch"
    request_timeout: float = 30.0
    poll_interval: float = 3.0
    max_wait: float = 900.0  # one task, create to result
    max_retries: int = 5  # per request, for 429 / 5xx / connection errors
    backoff: float = 1.0  # first retry delay; doubles, capped at 30 s
    max_archive_bytes: int = 512 * 1024**2

    def __post_init__(self) -> None:
        if not self.token or not self.token.isascii() or not self.token.isprintable():
            raise ValueError("the MinerU token must be non-empty printable ASCII")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"MinerU base URL {self.base_url!r} is not http(s)")


class MineruClient:
    """The Parser port for ``pdf`` with a ``mineru_url``; anything else is refused."""

    def __init__(
        self,
        config: MineruConfig,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._mask = SecretMask.of(config.token)  # what MinerU says back may quote the token
        self._sleep = sleep
        self._clock = clock
        self._http = httpx.Client(timeout=config.request_timeout, follow_redirects=True)

    def close(self) -> None:
        self._http.close()

    # -- the port ------------------------------------------------------------------------

    def parse(self, source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
        if file_type.lower().lstrip(".") != "pdf":
            raise UnsupportedFileType(f"mineru parses pdf only, not .{file_type}")
        if not options.mineru_url:
            raise ParseEngineFailed("mineru backend needs the source URL (direct pull)")
        deadline = self._clock() + self._config.max_wait
        task_id = self._create(options)
        zip_url = self._wait(task_id, deadline)
        with tempfile.TemporaryDirectory(prefix="ragline-mineru-") as work_dir:
            archive = self._download(zip_url, Path(work_dir) / "result.zip")
            result = read_result(archive)
        return self._document(result, options, task_id)

    # -- protocol steps ------------------------------------------------------------------

    def _create(self, options: ParseOptions) -> str:
        body: dict[str, Any] = {
            "url": options.mineru_url,
            "model_version": self._config.model_version,
            "is_ocr": options.docling_force_ocr,
            "enable_formula": True,
            "enable_table": True,
            "language": self._config.language,
        }
        if options.page_range is not None:
            body["page_ranges"] = str(options.page_range)
        data = self._api("POST", "/api/v4/extract/task", body)
        task_id = data.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise ParseEngineFailed("mineru answered without a task_id")
        return task_id

    def _wait(self, task_id: str, deadline: float) -> str:
        while True:
            data = self._api("GET", f"/api/v4/extract/task/{task_id}", None)
            state = data.get("state")
            if state == "done":
                url = data.get("full_zip_url")
                if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                    raise ParseEngineFailed(f"mineru task {task_id} is done without a zip URL")
                return url
            if state == "failed":
                reason = str(data.get("err_msg") or "no message")
                failed = f"mineru task {task_id} failed: {reason}"
                raise ParseEngineFailed(self._mask.prefix(failed, 300))
            if state not in _WAITING:
                raise ParseEngineFailed(
                    self._mask.prefix(f"mineru task {task_id}: unknown state {state!r}", 300)
                )
            if self._clock() + self._config.poll_interval > deadline:
                raise ParseEngineFailed(
                    f"mineru task {task_id} not done after {self._config.max_wait:g}s "
                    f"(state {state})"
                )
            self._sleep(self._config.poll_interval)

    def _download(self, url: str, target: Path) -> Path:
        limit = self._config.max_archive_bytes

        def fetch() -> httpx.Response:
            written = 0
            with self._http.stream("GET", url) as response, target.open("wb") as out:
                if response.status_code != 200:
                    return response
                for chunk in response.iter_bytes(1024 * 1024):
                    written += len(chunk)
                    if written > limit:
                        raise ParseEngineFailed(f"mineru result archive exceeds {limit} bytes")
                    out.write(chunk)
            return response

        response = self._with_retries("download the result archive", fetch)
        if response.status_code != 200:
            raise ParseEngineFailed(
                f"mineru result archive download failed (HTTP {response.status_code})"
            )
        return target

    # -- transport -------------------------------------------------------------------------

    def _api(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        url = self._config.base_url.rstrip("/") + path
        headers = {"Authorization": f"Bearer {self._config.token}", "Accept": "application/json"}

        def call() -> httpx.Response:
            return self._http.request(method, url, json=body, headers=headers)

        response = self._with_retries(f"{method} {path}", call)
        if response.status_code in (401, 403):
            raise ParseEngineFailed(f"mineru rejected the token (HTTP {response.status_code})")
        if response.status_code != 200:
            raise ParseEngineFailed(f"mineru {method} {path}: HTTP {response.status_code}"[:300])
        try:
            payload = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ParseEngineFailed(f"mineru {method} {path}: malformed JSON answer") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("data", {}), dict):
            raise ParseEngineFailed(f"mineru {method} {path}: unexpected answer shape")
        code = payload.get("code")
        if code != 0:
            message = str(payload.get("msg") or "no message")
            raise ParseEngineFailed(
                self._mask.prefix(f"mineru refused ({method} {path}): code {code}: {message}", 300)
            )
        data = payload.get("data")
        return data if isinstance(data, dict) else {}

    def _with_retries(self, what: str, call: Callable[[], httpx.Response]) -> httpx.Response:
        """429 / 5xx / timeouts / connection errors: retry with backoff, then fail clearly."""
        delay = self._config.backoff
        attempt = 0
        while True:
            attempt += 1
            try:
                response = call()
            except httpx.TimeoutException:
                problem = f"timed out after {self._config.request_timeout:g}s"
                wait = delay
            except httpx.TransportError as exc:
                problem = f"connection failed ({type(exc).__name__})"
                wait = delay
            else:
                if response.status_code != 429 and response.status_code < 500:
                    return response
                problem = f"HTTP {response.status_code}"
                wait = max(delay, _retry_after(response))
            if attempt > self._config.max_retries:
                raise ParseEngineFailed(f"mineru {what}: {problem} ({attempt} attempts)"[:300])
            self._sleep(min(wait, 30.0))
            delay = min(delay * 2, 30.0)

    # -- result ----------------------------------------------------------------------------

    @staticmethod
    def _document(result: MineruResult, options: ParseOptions, task_id: str) -> ParsedDocument:
        markdown = result.markdown
        if not markdown.strip():
            raise ParseEngineFailed(f"mineru task {task_id} returned empty Markdown")
        first = next((ln for ln in markdown.split("\n") if ln.startswith("#")), "")
        warnings = [f"mineru task {task_id}"]
        images = result.images if options.extract_images else {}
        if result.images and not images:
            warnings.append(f"mineru images kept as relative links: {len(result.images)}")
        elif images:
            warnings.append(f"images: {len(images)}")
        if options.page_range is not None:
            warnings.append(f"mineru pages {options.page_range}")
        return ParsedDocument(
            markdown=markdown,
            title=first.lstrip("#").strip() or None,
            warnings=warnings,
            backend="mineru",
            images=images,
        )


def _retry_after(response: httpx.Response) -> float:
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return 0.0
