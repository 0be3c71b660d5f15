"""The MinerU client against a loopback server speaking the documented v4 protocol.

Sleeping is injected (a fake clock that advances when the client sleeps), so the polling and
backoff are asserted on the delays asked for, never on elapsed time; request timeouts are real.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.adapters.parser.mineru import MineruClient, MineruConfig
from ragline.application.ports.parser import (
    ParseEngineFailed,
    ParseOptions,
    PdfParserBackend,
    UnsupportedFileType,
)
from ragline.domain.parse_batch import PageRange
from tests.adapters.mineru.server import TOKEN, Canned, MineruState, mineru_server

SOURCE_URL = "http://storage.example/raw/doc.pdf?X-Amz-Signature=abc"
OPTIONS = ParseOptions(pdf_parser_backend=PdfParserBackend.MINERU, mineru_url=SOURCE_URL)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[MineruState]:
    with mineru_server() as state:
        yield state


def _client(server: MineruState, clock: FakeClock, **changes: object) -> MineruClient:
    fields: dict[str, object] = {
        "token": TOKEN, "base_url": server.base, "poll_interval": 2.0, "max_wait": 60.0,
        "request_timeout": 2.0, "max_retries": 3, "backoff": 0.5,
    }  # fmt: skip
    fields.update(changes)
    return MineruClient(MineruConfig(**fields), sleep=clock.sleep, clock=clock)  # type: ignore[arg-type]


def _zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(zipfile.ZipInfo(name), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def test_a_task_is_created_from_the_url_polled_and_its_markdown_read(
    server: MineruState, tmp_path: Path
) -> None:
    clock = FakeClock()
    options = ParseOptions(
        pdf_parser_backend=PdfParserBackend.MINERU,
        mineru_url=SOURCE_URL,
        page_range=PageRange(2, 5),
        docling_force_ocr=True,
    )
    parsed = _client(server, clock).parse(tmp_path / "not-downloaded.pdf", "pdf", options)
    assert parsed.backend == "mineru" and parsed.title == "Report"
    assert "Body text." in parsed.markdown and "![](images/fig1.jpg)" in parsed.markdown
    (request,) = server.created
    assert request["url"] == SOURCE_URL and request["page_ranges"] == "2-5"
    assert request["is_ocr"] is True and request["model_version"] == "pipeline"
    assert server.polls == 3 and clock.sleeps == [2.0, 2.0]
    assert server.zip_auth_headers == [None]  # the token never goes to the archive's host
    assert "mineru images kept as relative links: 1" in parsed.warnings


def test_429_and_5xx_are_retried_with_backoff_and_retry_after(
    server: MineruState, tmp_path: Path
) -> None:
    server.script["create"] = [
        Canned(429, b"slow down", {"Retry-After": "7"}),
        Canned(503, b"busy"),
    ]
    server.script["poll"] = [Canned(502, b"bad gateway")]
    server.script["zip"] = [Canned(500, b"oops")]
    clock = FakeClock()
    parsed = _client(server, clock).parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    assert parsed.backend == "mineru"
    assert clock.sleeps[:2] == [7.0, 1.0]  # Retry-After, then the doubled backoff
    assert 0.5 in clock.sleeps  # the poll's and the download's own first retries


def test_a_server_that_keeps_failing_fails_the_parse_clearly(
    server: MineruState, tmp_path: Path
) -> None:
    server.script["create"] = [Canned(500, b"down")] * 4
    clock = FakeClock()
    with pytest.raises(ParseEngineFailed, match=r"HTTP 500 \(4 attempts\)"):
        _client(server, clock).parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    assert clock.sleeps == [0.5, 1.0, 2.0]


def test_a_slow_server_times_out_each_request(server: MineruState, tmp_path: Path) -> None:
    server.script["create"] = [Canned(200, b"{}", delay=1.5)] * 2
    clock = FakeClock()
    client = _client(server, clock, request_timeout=0.3, max_retries=1)
    with pytest.raises(ParseEngineFailed, match=r"timed out after 0.3s \(2 attempts\)"):
        client.parse(tmp_path / "x.pdf", "pdf", OPTIONS)


@pytest.mark.parametrize(
    ("canned", "message"),
    [
        (Canned(200, b"<html>not json"), "malformed JSON"),
        (Canned(200, b"[1, 2]"), "unexpected answer shape"),
        (Canned(200, json.dumps({"code": -60003, "msg": "file read failed"}).encode()),
         "code -60003: file read failed"),
        (Canned(200, json.dumps({"code": 0, "data": {}}).encode()), "without a task_id"),
        (Canned(404, b""), "HTTP 404"),
    ],
)  # fmt: skip
def test_malformed_or_refused_answers_fail_clearly(
    server: MineruState, tmp_path: Path, canned: Canned, message: str
) -> None:
    server.script["create"] = [canned]
    with pytest.raises(ParseEngineFailed, match=message):
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)


def test_a_failed_task_says_why(server: MineruState, tmp_path: Path) -> None:
    server.final_state, server.err_msg = "failed", "file has more than 600 pages"
    with pytest.raises(ParseEngineFailed, match="task-1 failed: file has more than 600 pages"):
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)


def test_an_unknown_state_or_a_done_task_without_a_zip_fails(
    server: MineruState, tmp_path: Path
) -> None:
    server.final_state = "exploded"
    with pytest.raises(ParseEngineFailed, match="unknown state 'exploded'"):
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    done = {"code": 0, "data": {"task_id": "t", "state": "done"}}
    server.script["poll"] = [Canned(200, json.dumps(done).encode())]
    with pytest.raises(ParseEngineFailed, match="done without a zip URL"):
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)


def test_a_task_that_never_finishes_hits_the_deadline(server: MineruState, tmp_path: Path) -> None:
    server.polls_until_done = 10_000
    clock = FakeClock()
    with pytest.raises(ParseEngineFailed, match=r"not done after 60s \(state running\)"):
        _client(server, clock).parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    assert sum(clock.sleeps) <= 60.0


def test_a_wrong_token_is_not_retried(server: MineruState, tmp_path: Path) -> None:
    clock = FakeClock()
    with pytest.raises(ParseEngineFailed, match=r"rejected the token \(HTTP 401\)"):
        _client(server, clock, token="wrong").parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    assert clock.sleeps == [] and server.created == []


def test_a_zip_bomb_result_is_refused_before_inflating(server: MineruState, tmp_path: Path) -> None:
    server.archive = _zip({"full.md": b"# ok\n", "images/bomb.jpg": b"\0" * (20 * 1024**2)})
    assert len(server.archive) < 100_000
    with pytest.raises(ParseEngineFailed, match="zip bomb suspected"):
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)


@pytest.mark.parametrize("name", ["../evil.md", "/etc/passwd", "images/../../x.jpg", "a\\b.md"])
def test_a_path_traversal_entry_is_refused(server: MineruState, tmp_path: Path, name: str) -> None:
    server.archive = _zip({"full.md": b"# ok\n", name: b"x"})
    with pytest.raises(ParseEngineFailed, match="unsafe entry name"):
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    assert not (tmp_path.parent / "evil.md").exists()


@pytest.mark.parametrize(
    ("archive", "message"),
    [
        (b"this is not a zip", "corrupt zip container"),
        (_zip({"layout.json": b"{}"}), "no full.md"),
        (_zip({"full.md": b"\xff\xfe bad"}), "not UTF-8"),
        (_zip({"full.md": b"   \n"}), "empty Markdown"),
    ],
)
def test_a_malformed_archive_fails_clearly(
    server: MineruState, tmp_path: Path, archive: bytes, message: str
) -> None:
    server.archive = archive
    with pytest.raises(ParseEngineFailed, match=message):
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)


def test_an_archive_larger_than_the_limit_is_cut_off(server: MineruState, tmp_path: Path) -> None:
    with pytest.raises(ParseEngineFailed, match="exceeds 100 bytes"):
        _client(server, FakeClock(), max_archive_bytes=100).parse(
            tmp_path / "x.pdf", "pdf", OPTIONS
        )


def test_only_pdf_with_a_url_is_accepted(server: MineruState, tmp_path: Path) -> None:
    client = _client(server, FakeClock())
    with pytest.raises(UnsupportedFileType):
        client.parse(tmp_path / "x.docx", "docx", OPTIONS)
    with pytest.raises(ParseEngineFailed, match="needs the source URL"):
        client.parse(
            tmp_path / "x.pdf", "pdf", ParseOptions(pdf_parser_backend=PdfParserBackend.MINERU)
        )
    assert server.created == []


@pytest.mark.parametrize("token", ["", "令牌", "line\nbreak"])
def test_a_token_that_cannot_be_a_header_is_refused_at_configuration(token: str) -> None:
    with pytest.raises(ValueError, match="printable ASCII"):
        MineruConfig(token=token)


def test_archive_images_are_returned_when_asked(server: MineruState, tmp_path: Path) -> None:
    options = ParseOptions(
        pdf_parser_backend=PdfParserBackend.MINERU, mineru_url=SOURCE_URL, extract_images=True
    )
    parsed = _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", options)
    assert parsed.images == {"images/fig1.jpg": b"\xff\xd8\xff fake jpeg"}
    assert "![](images/fig1.jpg)" in parsed.markdown and "images: 1" in parsed.warnings


def test_a_message_quoting_the_token_has_it_masked(server: MineruState, tmp_path: Path) -> None:
    server.final_state, server.err_msg = "failed", f"bad request from token {TOKEN}"
    with pytest.raises(ParseEngineFailed) as caught:
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    assert "task-1 failed: bad request from token ***" in str(caught.value)
    refused = {"code": -60001, "msg": f"token {TOKEN} expired", "data": {}}
    server.script["create"] = [Canned(200, json.dumps(refused).encode())]
    with pytest.raises(ParseEngineFailed, match=r"code -60001: token \*\*\* expired") as caught:
        _client(server, FakeClock()).parse(tmp_path / "x.pdf", "pdf", OPTIONS)
    assert TOKEN not in str(caught.value)
