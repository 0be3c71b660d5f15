"""The sandbox bounds time and memory, survives crashes, and returns what in-process returns."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import (
    ParsedDocument,
    ParseEngineFailed,
    ParseLimits,
    ParseOptions,
    PdfParserBackend,
    UnsupportedFileType,
)
from tests.adapters.parsers.conftest import NAIVE

SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "docs"


def _worker_pids(exclude: frozenset[int] = frozenset()) -> list[int]:
    """Sandbox workers: children of this process running the worker module."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"sandbox_worker" in cmdline and int(entry.name) not in exclude:
            pids.append(int(entry.name))
    return pids


def _small_md(tmp_path: Path) -> Path:
    source = tmp_path / "ok.md"
    source.write_text("# Fine\n\nStill working.\n")
    return source


def _limits(**changes: float) -> ParseOptions:
    return ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE, limits=ParseLimits(**changes))  # type: ignore[arg-type]


def test_results_equal_in_process(sandbox: SandboxedParser) -> None:
    registry = ParserRegistry()
    for source in sorted(SAMPLES.iterdir()):
        kind = source.suffix[1:]
        assert sandbox.parse(source, kind, NAIVE) == registry.parse(source, kind, NAIVE)


def test_a_relative_source_path_is_read_from_the_callers_folder(
    sandbox: SandboxedParser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker runs in `/`: a relative path (the default `.ragline/tmp` workspace) must
    reach it as the caller meant it."""
    _small_md(tmp_path)
    monkeypatch.chdir(tmp_path)
    parsed = sandbox.parse(Path("ok.md"), "md", NAIVE)
    assert "Still working." in parsed.markdown


def test_errors_keep_their_type_across_the_process_boundary(
    sandbox: SandboxedParser, tmp_path: Path
) -> None:
    source = tmp_path / "table.xyz"
    source.write_bytes(b"PK")
    with pytest.raises(UnsupportedFileType, match=r"no parser for file type \.xyz"):
        sandbox.parse(source, "xyz", NAIVE)
    with pytest.raises(ParseEngineFailed, match="cannot read source"):
        sandbox.parse(tmp_path / "missing.txt", "txt", NAIVE)


def test_wall_clock_limit_kills_a_stuck_parse(tmp_path: Path) -> None:
    fifo = tmp_path / "never-written.txt"
    os.mkfifo(fifo)  # opening it for reading blocks forever: a parse that never ends
    with SandboxedParser(grace_seconds=0.0) as sandbox:
        with pytest.raises(ParseEngineFailed, match=r"parse timed out after 0\.5s"):
            sandbox.parse(fifo, "txt", _limits(max_seconds=0.5))
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"


def test_a_worker_killed_mid_parse_becomes_a_parse_failure(tmp_path: Path) -> None:
    fifo = tmp_path / "blocked.txt"
    os.mkfifo(fifo)
    others = frozenset(_worker_pids())  # e.g. the session sandbox's workers
    with SandboxedParser(max_workers=1) as sandbox:
        sandbox.prestart(NAIVE)
        (pid,) = _worker_pids(others)
        outcome: list[BaseException | ParsedDocument] = []

        def run() -> None:
            try:
                outcome.append(sandbox.parse(fifo, "txt", NAIVE))
            except BaseException as exc:
                outcome.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(0.2)  # the worker is now blocked opening the FIFO (or about to be)
        os.kill(pid, signal.SIGKILL)
        thread.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], ParseEngineFailed)
        assert "parser process killed (SIGKILL" in outcome[0].reason
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"
        assert _worker_pids(others) != [pid]


def test_a_worker_that_died_idle_is_replaced_silently(tmp_path: Path) -> None:
    others = frozenset(_worker_pids())
    with SandboxedParser(max_workers=1) as sandbox:
        sandbox.prestart(NAIVE)
        (pid,) = _worker_pids(others)
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"


class CountingSandbox(SandboxedParser):
    """Records the memory limit of every worker it starts."""

    def __init__(self, **options: object) -> None:
        self.spawned: list[int] = []  # before the prestart thread can spawn
        super().__init__(**options)  # type: ignore[arg-type]

    def _spawn(self, memory_limit: int) -> object:  # type: ignore[override]
        self.spawned.append(memory_limit)
        return super()._spawn(memory_limit)


def _join_prestart() -> None:
    for thread in threading.enumerate():
        if thread.name == "parser-prestart":
            thread.join(60)


def test_a_worker_starts_in_the_background_and_serves_the_first_parse(tmp_path: Path) -> None:
    others = frozenset(_worker_pids())
    limit = NAIVE.limits.max_memory_bytes
    with CountingSandbox(max_workers=1, prestart_memory_bytes=limit) as sandbox:
        _join_prestart()
        assert sandbox.spawned == [limit]  # started with no parse asked for
        (pid,) = _worker_pids(others)
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"
        assert sandbox.spawned == [limit] and _worker_pids(others) == [pid]


def test_a_parse_asked_while_the_worker_starts_waits_for_it(tmp_path: Path) -> None:
    limit = NAIVE.limits.max_memory_bytes
    with CountingSandbox(max_workers=1, prestart_memory_bytes=limit) as sandbox:
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"
        _join_prestart()
        assert sandbox.spawned == [limit]  # one worker for both, whichever came first


def test_a_prestart_with_another_memory_limit_is_replaced(tmp_path: Path) -> None:
    other = NAIVE.limits.max_memory_bytes // 2
    with CountingSandbox(max_workers=1, prestart_memory_bytes=other) as sandbox:
        _join_prestart()
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"
        assert sandbox.spawned == [other, NAIVE.limits.max_memory_bytes]


def test_closing_while_the_prestart_runs_leaves_no_worker() -> None:
    others = frozenset(_worker_pids())
    sandbox = SandboxedParser(max_workers=1, prestart_memory_bytes=NAIVE.limits.max_memory_bytes)
    sandbox.close()
    _join_prestart()
    assert _worker_pids(others) == []


def test_memory_limit_turns_into_a_clean_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the worker imports the probe from tests/
    # a parser that asks for more than the limit (a 50 MB single-line .txt no longer does:
    # it is parsed in pieces, and fails on its line length)
    order = tmp_path / "hog.probe"
    order.write_text(json.dumps({"do": "allocate", "bytes": 256 * 1024**2}), encoding="utf-8")
    with SandboxedParser(max_workers=1, formats=PROBE) as sandbox:
        with pytest.raises(ParseEngineFailed, match="out of memory"):
            sandbox.parse(order, "probe", _limits(max_memory_bytes=128 * 1024**2))
        assert sandbox.parse(_small_md(tmp_path), "md", NAIVE).title == "Fine"


def test_a_single_line_text_fails_on_its_line_not_on_memory(
    hostile_files: dict[str, Path],
) -> None:
    """50 MB without a newline, in a worker limited to 128 MiB: parsed in pieces, the line
    rule answers (the whole-file parse held the bytes and the str, and ran out of memory)."""
    limits = _limits(max_memory_bytes=128 * 1024**2)
    with SandboxedParser(max_workers=1) as sandbox, pytest.raises(ParseEngineFailed, match="line"):
        sandbox.parse(hostile_files["single-line.txt"], "txt", limits)


def test_output_limit(sandbox: SandboxedParser, tmp_path: Path) -> None:
    source = tmp_path / "long.txt"
    source.write_text("word " * 1000)
    with pytest.raises(ParseEngineFailed, match="output of 5000 characters exceeds the limit"):
        sandbox.parse(source, "txt", _limits(max_output_chars=1500))
    with pytest.raises(ParseEngineFailed, match="exceeds the output limit"):
        sandbox.parse(source, "txt", _limits(max_output_chars=10))  # refused before reading


def test_concurrent_parses_share_the_pool(sandbox: SandboxedParser) -> None:
    sources = sorted(SAMPLES.iterdir()) * 3
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda s: sandbox.parse(s, s.suffix[1:], NAIVE), sources))
    assert [r.markdown for r in results[: len(sources) // 3]] * 3 == [r.markdown for r in results]


def test_workers_are_recycled(tmp_path: Path) -> None:
    others = frozenset(_worker_pids())
    with SandboxedParser(max_workers=1, max_parses_per_worker=2) as sandbox:
        source = _small_md(tmp_path)
        seen = set()
        for _ in range(5):
            sandbox.parse(source, "md", NAIVE)
            seen.update(_worker_pids(others))
        assert len(seen) >= 3


# -- containment (issue 12) -----------------------------------------------------------------
PROBE = "tests.adapters.parsers.probe_formats:FORMATS"
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def probing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A data dir with a secret key and secrets in the environment the parent runs with."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the worker imports the probe from tests/
    monkeypatch.setenv("RAGLINE_SECRET_KEY", "parent-only-key")
    monkeypatch.setenv("RAGLINE_DATABASE_URL", "postgresql://u:hunter2@db/x")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-only")
    monkeypatch.setenv("PGPASSWORD", "hunter2")
    monkeypatch.setenv("HF_TOKEN", "hf_parent-only")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "parent-only-aws")
    data_dir = tmp_path / "data"
    (data_dir / "tmp").mkdir(parents=True)
    (data_dir / "secret.key").write_text("the-fernet-key\n", encoding="utf-8")
    return data_dir


def _order(folder: Path, name: str, **order: str) -> Path:
    path = folder / f"{name}.probe"
    path.write_text(json.dumps(order), encoding="utf-8")
    return path


def test_a_parser_sees_no_secret_in_its_environment(probing: Path) -> None:
    with SandboxedParser(formats=PROBE) as parser:
        seen = json.loads(
            parser.parse(_order(probing, "env", do="environ"), "probe", NAIVE).markdown
        )
    assert not [name for name in seen if name.startswith("RAGLINE_")]
    assert "OPENAI_API_KEY" not in seen and "PGPASSWORD" not in seen
    assert "HF_TOKEN" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen
    assert "hunter2" not in json.dumps(seen) and "parent-only" not in json.dumps(seen)
    assert "PATH" in seen  # the allow-list keeps what a parser needs


def test_a_parser_cannot_read_the_secret_key(probing: Path) -> None:
    key = probing / "secret.key"
    tmp = probing / "tmp"
    with SandboxedParser(formats=PROBE, hidden=[key], readable=[tmp]) as parser:
        denied = parser.parse(_order(tmp, "key", do="read", path=str(key)), "probe", NAIVE)
        near = probing / "tmp" / "beside.txt"
        near.write_text("ordinary", encoding="utf-8")  # created after the worker started
        allowed = parser.parse(_order(tmp, "near", do="read", path=str(near)), "probe", NAIVE)
        assert parser.parse(
            SAMPLES / "tea-brewing-guide.md", "md", NAIVE
        ).title  # parsers still work
    assert denied.markdown == "refused:PermissionError"
    assert allowed.markdown == "read:ordinary"


def test_a_parser_reads_back_its_own_temp_files(probing: Path) -> None:
    """The key under /tmp makes /tmp an ancestor whose new entries are unreadable; the
    worker's TMPDIR is therefore the readable temp dir (opendataloader writes there)."""
    tmp = probing / "tmp"
    with SandboxedParser(formats=PROBE, hidden=[probing / "secret.key"], readable=[tmp]) as parser:
        scratch = parser.parse(_order(tmp, "scratch", do="tempfile"), "probe", NAIVE)
    assert scratch.markdown == "read:scratch"
    assert scratch.title and Path(scratch.title).is_relative_to(tmp), scratch.title


def test_a_parser_cannot_read_the_data_dir_but_its_temp_dir(probing: Path) -> None:
    """What bootstrap hides: the whole data dir (database, every tenant's objects)."""
    objects = probing / "objects" / "bucket"
    objects.mkdir(parents=True)
    (objects / "other-tenant.md").write_text("not yours", encoding="utf-8")
    (probing / "ragline.db").write_text("rows", encoding="utf-8")
    tmp = probing / "tmp"
    with SandboxedParser(formats=PROBE, hidden=[probing], readable=[tmp]) as parser:
        seen = {
            name: parser.parse(_order(tmp, name, do="read", path=str(path)), "probe", NAIVE)
            for name, path in [
                ("object", objects / "other-tenant.md"),
                ("db", probing / "ragline.db"),
                ("key", probing / "secret.key"),
                ("own", tmp / "own.probe"),
            ]
        }
    assert {n: d.markdown.split(":")[0] for n, d in seen.items()} == {
        "object": "refused",
        "db": "refused",
        "key": "refused",
        "own": "read",
    }


def test_the_key_path_is_never_sent_to_the_worker(probing: Path) -> None:
    from ragline.adapters.parser.builtin.landlock import readable_entries

    key = probing / "secret.key"
    (probing / "objects").mkdir()
    os.symlink(probing / "objects", probing.parent / "link-into-data")  # a side door
    entries = readable_entries([key], [probing / "tmp"])
    assert entries and str(key.resolve()) not in entries
    assert not any(key.resolve().is_relative_to(entry) for entry in entries)
    hiding_dir = readable_entries([probing], [probing / "tmp"])
    assert str(probing.resolve() / "tmp") in hiding_dir
    assert not any(
        Path(entry).is_relative_to(probing.resolve()) and entry != str(probing.resolve() / "tmp")
        for entry in hiding_dir
    )


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_grandchild_dies_with_a_killed_worker(probing: Path) -> None:
    pid_file = probing / "tmp" / "grandchild.pid"
    options = ParseOptions(limits=ParseLimits(max_seconds=2))
    with SandboxedParser(formats=PROBE, grace_seconds=0.5) as parser:
        order = _order(probing / "tmp", "spawn", do="grandchild", pid_file=str(pid_file))
        with pytest.raises(ParseEngineFailed, match="timed out"):
            parser.parse(order, "probe", options)
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 30  # reaping by init is asynchronous: wait for it, bounded
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the parser's grandchild outlived the killed worker"


def test_a_grandchild_left_behind_dies_when_the_worker_is_stopped(probing: Path) -> None:
    pid_file = probing / "tmp" / "orphan.pid"
    with SandboxedParser(formats=PROBE) as parser:
        order = _order(
            probing / "tmp", "orphan", do="grandchild", pid_file=str(pid_file), then="return"
        )
        assert parser.parse(order, "probe", NAIVE).markdown == "left a child behind"
        grandchild = int(pid_file.read_text())
        assert _alive(grandchild)
    deadline = time.monotonic() + 30  # reaping by init is asynchronous: wait for it, bounded
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "a grandchild outlived the stopped worker"


def test_ocr_still_reads_an_image_with_the_data_dir_hidden(tmp_path: Path) -> None:
    """Containment as bootstrap wires it (data dir hidden, temp dir readable and TMPDIR)
    leaves tesseract what it needs: its binary, its language data, its scratch files."""
    from ragline.domain.parse_batch import ParseTier
    from ragline.testing.files.scanned import make_scanned_image
    from tests.adapters.parsers.test_ocr import EN_WORDS

    data_dir = tmp_path / "data"
    (data_dir / "tmp").mkdir(parents=True)
    (data_dir / "secret.key").write_text("k\n", encoding="utf-8")
    source = make_scanned_image(data_dir / "tmp" / "notice.png")
    quality = ParseOptions(tier=ParseTier.QUALITY)
    with SandboxedParser(hidden=[data_dir], readable=[data_dir / "tmp"]) as parser:
        parsed = parser.parse(source, "png", quality)
        assert [w.unrestricted for w in parser._idle] == [None]  # Landlock was in force
    assert parsed.backend == "tesseract"
    assert all(word in parsed.markdown for word in EN_WORDS)


class _RecordingSandbox(SandboxedParser):
    """The real pool, with every reply the parent receives kept."""

    replies: list[bytes]

    def _exchange(self, worker: object, request: bytes, max_seconds: float) -> bytes:
        reply = super()._exchange(worker, request, max_seconds)  # type: ignore[arg-type]
        self.replies.append(reply)
        return reply


def test_the_worker_replies_with_where_the_text_is_not_the_text(tmp_path: Path) -> None:
    """Issue 24: the document's text comes back through a file in the pool's own folder,
    read once and deleted; the reply (JSON) carries its size, so it does not grow with the
    document (a 100 MB text as a JSON string was held four times over)."""
    line = "Steep green tea at eighty degrees for two minutes, 绿茶.\n"
    source = tmp_path / "tea.txt"
    text = "Tea notes\n\n" + line * 20_000  # ~1.2 MB; the title is the first line
    source.write_text(text, encoding="utf-8")
    text_dir = tmp_path / "workspace"
    with _RecordingSandbox(max_workers=1, text_dir=text_dir) as sandbox:
        sandbox.replies = []
        parsed = sandbox.parse(source, "txt", NAIVE)
        assert parsed.markdown == text
        [reply] = sandbox.replies
        assert b"Steep green tea" not in reply
        assert len(reply) < 1_000
        assert [list(folder.iterdir()) for folder in text_dir.iterdir()] == [[]]  # read, deleted
    assert list(text_dir.iterdir()) == []  # the pool's folder goes on close


def test_parse_to_file_leaves_the_text_in_the_file_and_out_of_the_reply(tmp_path: Path) -> None:
    """Issue 24, the streaming path: the worker parses the .txt in pieces into its text file,
    the parent moves that file to the target without reading it, and the reply carries only
    the byte count (it does not grow with the document)."""
    line = "Steep green tea at eighty degrees for two minutes, 绿茶.\n"
    source = tmp_path / "tea.txt"
    text = "Tea notes\n\n" + line * 40_000  # ~2.4 MB: more than one of the worker's blocks
    source.write_text(text, encoding="utf-8")
    target = tmp_path / "parsed.txt"
    with _RecordingSandbox(max_workers=1, text_dir=tmp_path / "workspace") as sandbox:
        sandbox.replies = []
        parsed = sandbox.parse_to_file(source, "txt", NAIVE, target)
        [reply] = sandbox.replies
    assert b"Steep green tea" not in reply
    assert len(reply) < 1_000
    assert parsed.document.markdown == ""
    assert parsed.document.title == "Tea notes"
    assert parsed.sizes == (len(text.encode("utf-8")),)
    assert target.read_text(encoding="utf-8") == text


def test_a_relative_text_folder_names_the_same_place_for_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default data dir is `./.ragline`: its temp folder is relative, and the worker runs
    in another working directory, so the pool must hand it an absolute path (a fresh clone's
    `ragline ingest examples/docs` failed every file with ENOENT before)."""
    source = tmp_path / "tea.txt"
    source.write_text("Tea notes\n\nSteep green tea at eighty degrees.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with SandboxedParser(max_workers=1, text_dir=Path(".ragline") / "tmp") as sandbox:
        parsed = sandbox.parse(source, "txt", NAIVE)
    assert "eighty degrees" in parsed.markdown
