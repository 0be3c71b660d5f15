"""The temp workspace: one folder per process under a configured directory, one file per task
in it (docs/design/0001-pipeline-contract.md).

Processes may share the directory (two workers on one data dir, `ragline ingest` beside a
worker), so a start-up removes only the folders of processes that are gone: each folder holds
an `flock` for as long as its process lives, and the kernel drops it when the process dies,
however it dies. A roster lock makes claiming a folder and sweeping the others exclusive, so a
sweep never sees a folder between its creation and its lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROSTER = ".roster.lock"
OWNER = ".owner.lock"


class Workspace:
    """Owns `folder` under `root`; any other folder under `root` whose owner is gone may be
    deleted at any start-up."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folder: Path | None = None
        self._owner: int | None = None
        self._guard = threading.Lock()

    @property
    def folder(self) -> Path:
        """This process's folder, claimed on first use (and again if something removed it)."""
        with self._guard:
            if self._folder is not None and self._folder.is_dir():
                return self._folder
            return self._claim()

    def _claim(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        with _roster(self.root, fcntl.LOCK_SH):
            folder = self.root / f"p{os.getpid()}-{uuid.uuid4().hex[:12]}"
            folder.mkdir(mode=0o700)
            owner = os.open(folder / OWNER, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            fcntl.flock(owner, fcntl.LOCK_EX)
        if self._owner is not None:
            os.close(self._owner)
        self._folder, self._owner = folder, owner
        return folder

    def clean(self) -> int:
        """Remove what processes that are gone left behind (call once at start-up); returns
        how many entries went. Live processes' folders, this one's included, are kept."""
        mine = self.folder
        removed = 0
        with _roster(self.root, fcntl.LOCK_EX):
            for entry in self.root.iterdir():
                if entry == mine or entry.name == ROSTER:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    if _owner_alive(entry):
                        continue
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
                removed += 1
        return removed

    def release(self) -> None:
        """Remove this process's folder and drop its lock (at shutdown: an exiting process
        leaves nothing for the next start-up to sweep). Files still in it are in-flight work
        the process is abandoning anyway; a later use claims a fresh folder."""
        with self._guard:
            folder, owner = self._folder, self._owner
            self._folder = self._owner = None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)  # still locked: no sweep races it
        if owner is not None:
            os.close(owner)

    def path_for(self, task_id: str, suffix: str) -> Path:
        """The one temp file of a task (task ids are hashed: they are not safe file names)."""
        digest = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:32]
        clean_suffix = "".join(c for c in suffix.lower() if c.isalnum())[:16]
        return self.folder / f"{digest}.{clean_suffix or 'bin'}"

    @contextmanager
    def temp_file(self, task_id: str, suffix: str) -> Iterator[Path]:
        """A temp file path for the task, removed on exit whatever happened."""
        path = self.path_for(task_id, suffix)
        try:
            yield path
        finally:
            discard(path)

    def leftovers(self) -> list[Path]:
        """What is in the workspace now, the locks aside (tests check that nothing is left):
        this process's files, and any other entry under the root."""
        if not self.root.exists():
            return []
        found: list[Path] = []
        for entry in sorted(self.root.iterdir()):
            if entry.name == ROSTER:
                continue
            if entry == self._folder:
                found.extend(p for p in sorted(entry.iterdir()) if p.name != OWNER)
            else:
                found.append(entry)
        return found


def discard(path: Path) -> None:
    """Delete a temp file if it is there (early delete; idempotent)."""
    path.unlink(missing_ok=True)


@contextmanager
def _roster(root: Path, mode: int) -> Iterator[None]:
    """Held shared while a folder is claimed, exclusive while the others are swept."""
    fd = os.open(root / ROSTER, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)


def _owner_alive(folder: Path) -> bool:
    """Whether the process that claimed `folder` still holds its lock (a folder without one
    was never claimed through this class: nobody owns it)."""
    try:
        fd = os.open(folder / OWNER, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
