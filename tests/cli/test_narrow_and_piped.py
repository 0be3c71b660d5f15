"""The CLI at 80 columns and in pipes: `status` never cuts a task id (a pipe gets plain
tab-separated rows, a narrow terminal records that fold), `parse --wait --json` writes one
JSON document, and `search` renders each hit's Markdown (paragraphs reflow, tables align)."""

from __future__ import annotations

import json
import os
import pty
import re
import struct
import subprocess
from dataclasses import dataclass
from fcntl import ioctl
from pathlib import Path
from termios import TIOCSWINSZ

import pytest
from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry
from ragline.testing.services.ragline_cli import command

WIDTH = 80
PARAGRAPH = (
    "Descaling a kettle every month keeps the water tasting clean and the element working well,\n"
    "so fill it halfway with a mix of white vinegar and water, bring it to the boil, and leave\n"
    "it to soak for an hour before you pour the mixture away and rinse the kettle out with fresh\n"
    "water twice, then boil one more kettle of clean water and throw that away as well.\n"
)
TABLE = (
    "| step | vinegar | water |\n|---|---|---|\n| soak | 1 cup | 2 cups |\n"
    "| rinse | none | 3 cups |\n"
)
KETTLE = f"# Kettle care\n\n{PARAGRAPH}\n{TABLE}"
TEA = "# Green tea\n\nGreen tea wants water at about eighty degrees, never boiling.\n"


@dataclass(frozen=True)
class Cli:
    data_dir: Path

    def __call__(self, *args: str, **env: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(
            build_cli(_entry),
            [*args, "--data-dir", str(self.data_dir)],
            env={"COLUMNS": str(WIDTH), "NO_COLOR": "1", **env},
        )
        return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    root = tmp_path_factory.mktemp("narrow")
    docs = root / "docs"
    docs.mkdir()
    (docs / "kettle-care.md").write_text(KETTLE, encoding="utf-8")
    (docs / "green-tea.md").write_text(TEA, encoding="utf-8")
    run = Cli(root / "data")
    code, out, err = run("ingest", str(docs))
    assert code == 0, out + err
    return run


def _task_ids(cli: Cli) -> list[str]:
    code, out, err = cli("status", "--json")
    assert code == 0, out + err
    ids = [row["task_id"] for row in json.loads(out)]
    assert len(ids) == 2 and all(len(i) > 30 for i in ids)
    return ids


def test_status_in_a_pipe_prints_plain_rows_with_whole_task_ids(cli: Cli) -> None:
    ids = _task_ids(cli)
    code, out, err = cli("status")
    assert code == 0, out + err
    header, *rows = out.splitlines()
    assert header.split("\t") == ["task_id", "status", "stages", "parsed by", "failure", "retry of"]
    assert sorted(row.split("\t")[0] for row in rows) == sorted(ids)
    assert all(row.split("\t")[1] == "SUCCESS" for row in rows)


def _in_a_terminal(data_dir: Path, *args: str, columns: int) -> str:
    """Run the real entry point on a pseudo-terminal `columns` wide (no COLUMNS variable)."""
    leader, follower = pty.openpty()
    ioctl(follower, TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLINE_")}
    env.pop("COLUMNS", None)
    env.update({"NO_COLOR": "1", "TERM": "xterm"})
    process = subprocess.Popen(
        command(data_dir, *args),
        cwd=data_dir.parent,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_status_in_an_80_column_terminal_never_cuts_a_task_id(cli: Cli) -> None:
    ids = _task_ids(cli)
    shown = _in_a_terminal(cli.data_dir, "status", columns=WIDTH)
    assert all(len(line) <= WIDTH for line in shown.splitlines()), shown
    for task_id in ids:
        assert task_id in shown, shown
    assert "…" not in shown, shown


def test_parse_wait_json_is_one_json_document(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "kettle.md"
    source.write_text(KETTLE, encoding="utf-8")
    code, out, err = cli("parse", str(source), "--wait", "--json")
    assert code == 0, out + err
    answer = json.loads(out)  # the whole of stdout: `| jq` works
    assert answer["status"] == "done" and "vinegar" in answer["markdown"]
    assert answer["wait_parse_ids"] == answer["reused_parse_ids"] + answer["created_parse_ids"]
    target = tmp_path / "kettle-out.md"
    code, out, err = cli("parse", str(source), "--wait", "--json", "--output", str(target))
    assert code == 0, out + err
    answer = json.loads(out)
    assert answer["status"] == "done" and answer["output"] == str(target)
    assert "markdown" not in answer and "vinegar" in target.read_text(encoding="utf-8")


def _panel_lines(out: str) -> list[str]:
    """The text inside the first panel's borders."""
    return [line[2:-2].rstrip() for line in out.splitlines() if line.startswith("│ ")]


def test_search_reflows_hard_wrapped_paragraphs_at_80_columns(cli: Cli) -> None:
    code, out, err = cli("search", "how do I descale a kettle with vinegar?", "--top-k", "1")
    assert code == 0, out + err
    inner = _panel_lines(out)
    start = next(i for i, line in enumerate(inner) if line.startswith("Descaling"))
    end = next(i for i, line in enumerate(inner) if i >= start and line.endswith("as well."))
    paragraph = inner[start : end + 1]
    room = WIDTH - 4
    longest_word = max(len(word) for word in PARAGRAPH.split())
    assert all(len(line) > room - longest_word - 1 for line in paragraph[:-1]), "\n".join(inner)
    assert " ".join(" ".join(paragraph).split()) == " ".join(PARAGRAPH.split())


def test_search_aligns_markdown_tables(cli: Cli) -> None:
    code, out, err = cli("search", "vinegar and water for soaking the kettle", "--top-k", "1")
    assert code == 0, out + err
    inner = _panel_lines(out)
    assert not any("|---" in line or line.lstrip().startswith("| ") for line in inner), out
    header = next(line for line in inner if "vinegar" in line and "step" in line)
    soak = next(line for line in inner if "soak" in line and "1 cup" in line)
    rinse = next(line for line in inner if "rinse" in line and "3 cups" in line)
    assert header.index("vinegar") == soak.index("1 cup") == rinse.index("none"), out
    assert header.index("water") == soak.index("2 cups") == rinse.index("3 cups"), out
