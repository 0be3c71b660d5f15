"""Temp workspace rules (docs/design/0001-pipeline-contract.md) and task-context validation."""

from __future__ import annotations

import errno
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ragline.adapters.wire_format.json import command_of
from ragline.application.pipeline.validation import invalid_context
from ragline.application.workspace import Workspace
from ragline.contracts.wire import ParseTask
from ragline.domain.parse_run import FailureCode
from ragline.testing.services.ragline_cli import child_env, command
from tests.fakes.harness import MD_BUCKET, Harness


def test_clean_removes_every_leftover(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "w")
    workspace.root.mkdir()
    (workspace.root / "a.pdf").write_bytes(b"x")
    (workspace.root / "dir").mkdir()
    (workspace.root / "dir" / "b").write_bytes(b"y")
    assert workspace.clean() == 2
    assert workspace.leftovers() == []


CLAIMS_A_FOLDER = """
import sys
from pathlib import Path
from ragline.application.workspace import Workspace
workspace = Workspace(Path(sys.argv[1]))
workspace.path_for("task", "xlsx").write_bytes(b"in flight")
print(workspace.folder, flush=True)
sys.stdin.readline()
"""


def test_a_start_up_keeps_a_live_process_folder_and_sweeps_a_dead_one(tmp_path: Path) -> None:
    """Two workers on one data dir: a restarted one must not delete the other's files (the
    crash campaign saw a good xlsx fail as "No such file" when it did)."""
    other = subprocess.Popen(
        [sys.executable, "-c", CLAIMS_A_FOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None
        theirs = Path(other.stdout.readline().strip())
        workspace = Workspace(tmp_path)
        assert workspace.clean() == 0
        assert [p.name for p in theirs.iterdir() if p.suffix == ".xlsx"] != []
        assert workspace.leftovers() == [theirs]
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    assert workspace.clean() == 1
    assert workspace.leftovers() == []
    assert not theirs.exists()


def test_a_second_claim_in_one_process_is_kept_too(tmp_path: Path) -> None:
    """Two workspaces of one process on one root hold separate locks: neither sweeps the other."""
    first, second = Workspace(tmp_path), Workspace(tmp_path)
    first.path_for("t", "pdf").write_bytes(b"x")
    assert second.clean() == 0
    assert first.folder != second.folder and first.path_for("t", "pdf").exists()


def test_release_removes_the_folder_and_a_later_use_claims_another(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    first = workspace.folder
    workspace.path_for("t", "pdf").write_bytes(b"x")
    workspace.release()
    assert not first.exists() and workspace.leftovers() == []
    workspace.release()  # idempotent
    second = workspace.folder
    assert second != first and second.is_dir()
    assert Workspace(tmp_path).clean() == 0  # still held: a start-up keeps it


def test_an_ingest_process_leaves_no_folder_in_the_temp_dir(tmp_path: Path) -> None:
    """The container releases the workspace at shutdown: a `ragline ingest` that ends
    leaves its temp dir as it found it (the roster lock aside)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tea.md").write_text("# Tea\n\nGreen tea wants water at eighty degrees.\n", "utf-8")
    data = tmp_path / "data"
    done = subprocess.run(
        command(data, "ingest", str(docs)), env=child_env(), capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode()
    assert [p.name for p in (data / "tmp").iterdir()] == [".roster.lock"]


def test_one_temp_file_per_task_with_a_safe_name(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    path = workspace.path_for("../../etc/passwd", "p/d.f")
    assert path.parent == workspace.folder and path.parent.parent == tmp_path
    assert path.suffix == ".pdf"
    assert workspace.path_for("t1", "pdf") == workspace.path_for("t1", "pdf")
    assert workspace.path_for("t1", "pdf") != workspace.path_for("t2", "pdf")


async def test_temp_file_is_gone_before_the_markdown_upload(h: Harness) -> None:
    """The source copy goes as soon as the Markdown exists; what is left at the upload is
    the Markdown file being uploaded (written through the workspace, issue 24), nothing else."""
    seen: list[list[Path]] = []
    original = h.storage.put_file

    async def spying_put(bucket, key, src, *args, **kwargs):  # type: ignore[no-untyped-def]
        if bucket == MD_BUCKET:  # the Markdown upload (not the parse cache's page writes)
            seen.append([p for p in h.workspace.leftovers() if p != Path(src)])
        return await original(bucket, key, src, *args, **kwargs)

    h.storage.put_file = spying_put  # type: ignore[method-assign]
    await h.pipeline.handle(h.task("docx"))
    assert seen == [[]]


@pytest.mark.parametrize("point", ["parser.parse", "storage.put"])
async def test_temp_file_is_deleted_when_cleaning_fails(h: Harness, point: str) -> None:
    h.faults.arm(point, OSError(errno.ENOSPC, "No space left on device"))
    task = h.task("docx")
    await h.pipeline.handle(task)
    assert h.workspace.leftovers() == []
    reason = h.run(task.task_id).failure_reason
    assert reason is not None and reason.code is FailureCode.TEMP_DISK_FULL


BASE = {
    "task_id": "t",
    "original_file_id": 1,
    "document_parse_task_id": 2,
    "user_id": 3,
    "dataset_id": 4,
    "file_type": "pdf",
    "source_bucket": "b",
    "source_object_key": "k/file.pdf",
    "source_filename": "Report.PDF",
    "md_bucket": "m",
    "md_object_key": "k/file.md",
}


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({}, True),
        ({"source_object_key": "k/no-extension"}, True),
        ({"file_type": "markdown", "source_filename": "a.md", "source_object_key": "x.md"}, True),
        (
            {
                "file_type": "md",
                "source_filename": "a.md",
                "source_object_key": "a.md",
                "md_bucket": "",
                "md_object_key": "",
            },
            True,
        ),
        ({"file_type": "htm", "source_filename": "a.html", "source_object_key": "a.htm"}, True),
        ({"source_filename": "a.docx"}, False),
        ({"source_object_key": "k/file.docx"}, False),
        ({"file_type": ".pdf"}, False),
        ({"file_type": " pdf"}, False),
        ({"md_object_key": ""}, False),
        ({"md_bucket": "  "}, False),
        ({"source_bucket": " "}, False),
        ({"dataset_id": 0}, False),
        ({"original_file_id": -1}, False),
    ],
)
def test_invalid_context(changes: dict[str, object], valid: bool) -> None:
    task = command_of(ParseTask.model_validate(BASE | changes))
    assert (invalid_context(task) is None) is valid


async def test_only_the_first_start_up_cleans(h: Harness) -> None:
    h.workspace.root.mkdir(parents=True)
    (h.workspace.root / "old").write_bytes(b"x")
    assert h.pipeline.start_up() == 1
    (h.workspace.root / "in-flight").write_bytes(b"y")  # another consumer's temp file
    assert h.pipeline.start_up() == 0
    assert [p.name for p in h.workspace.leftovers()] == ["in-flight"]
