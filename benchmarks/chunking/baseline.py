"""ragline's chunker as of an older commit, measured beside the working tree in one run.

`git archive COMMIT` of the chunking engine and the line-scan structure adapter is unpacked
into a temporary package `ragline_at_<commit>` (its `ragline.` imports renamed), so both
engines run in one process on the same strings, interleaved with the peers.
"""

from __future__ import annotations

import importlib
import io
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

from benchmarks.chunking.peers import Chunker

ROOT = Path(__file__).resolve().parents[2]
_PATHS = ("domain/chunking", "adapters/structure/markdown", "adapters/markdown_structure")


def load_engine(commit: str) -> tuple[ModuleType, ModuleType]:
    """(chunking package, line-scan structure module) of ragline at `commit`, imported from
    a temporary copy so they run beside the working tree's."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", commit, *_PATHS],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    blob = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit, *listed],
        check=True,
        capture_output=True,
    ).stdout
    package = f"ragline_at_{commit[:7]}"
    home = Path(tempfile.mkdtemp(prefix="ragline-baseline-")) / package
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.endswith(".py"):
                continue
            source = tar.extractfile(member)
            assert source is not None
            text = re.sub(r"\bragline\.", f"{package}.", source.read().decode("utf-8"))
            out = home / member.name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
    for folder in [home, *(p for p in home.rglob("*") if p.is_dir())]:
        (folder / "__init__.py").touch(exist_ok=True)
    sys.path.insert(0, str(home.parent))
    chunking = importlib.import_module(f"{package}.domain.chunking")
    structure = (
        "adapters.structure.markdown"
        if (home / "adapters/structure").exists()
        else ("adapters.markdown_structure")
    )
    return chunking, importlib.import_module(f"{package}.{structure}")


def baseline_chunker(commit: str) -> tuple[str, Chunker]:
    """(tool name, chunker) for ragline's default plan at `commit`."""
    chunking, structure = load_engine(commit)
    builder = structure.LineScanStructureBuilder()

    def run(md: str) -> dict[str, list[int]]:
        result = chunking.chunk_document(
            md, chunking.DEFAULT_PLAN, tree=builder.build(md, blocks=False)
        )
        return {
            "parents": [p.end - p.start for p in result.parents],
            "children": [c.end - c.start for p in result.parents for c in p.children],
        }

    return f"ragline default @{commit[:7]}", run
