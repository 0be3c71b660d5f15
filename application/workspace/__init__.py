"""The temp workspace: one file per task under a configured directory
(docs/design/0001-pipeline-contract.md).

Cleaned at start-up (leftovers of a crashed process), one temp file per task, deleted as soon
as the Markdown exists and again in `finally`.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class Workspace:
    """Owns `root`: everything under it may be deleted at any start-up."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def clean(self) -> int:
        """Remove every leftover entry (call once at start-up); returns how many went."""
        self.root.mkdir(parents=True, exist_ok=True)
        removed = 0
        for entry in self.root.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed += 1
        return removed

    def path_for(self, task_id: str, suffix: str) -> Path:
        """The one temp file of a task (task ids are hashed: they are not safe file names)."""
        digest = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:32]
        clean_suffix = "".join(c for c in suffix.lower() if c.isalnum())[:16]
        return self.root / f"{digest}.{clean_suffix or 'bin'}"

    @contextmanager
    def temp_file(self, task_id: str, suffix: str) -> Iterator[Path]:
        """A temp file path for the task, removed on exit whatever happened."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.path_for(task_id, suffix)
        try:
            yield path
        finally:
            discard(path)

    def leftovers(self) -> list[Path]:
        """What is in the workspace now (tests check that nothing is left)."""
        if not self.root.exists():
            return []
        return sorted(self.root.iterdir())


def discard(path: Path) -> None:
    """Delete a temp file if it is there (early delete; idempotent)."""
    path.unlink(missing_ok=True)
