"""Find the files under the paths given to `ragline ingest`, with their content hashes."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from ragline.application.ingest.identity import SourceFile

_HASH_BLOCK = 1 << 20


def file_type_of(path: Path) -> str:
    """The extension, lower case, without the dot ("" when there is none)."""
    return path.suffix.lower().lstrip(".")


def sha256_of(path: Path) -> str:
    """Hash in 1 MiB blocks: a 100 MB file never sits in memory."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _walk(root: Path, skip: Path | None) -> Iterator[Path]:
    for directory, subdirs, names in os.walk(root):
        here = Path(directory)
        subdirs[:] = sorted(
            d for d in subdirs if not d.startswith(".") and (skip is None or here / d != skip)
        )
        for name in sorted(names):
            if not name.startswith("."):
                yield here / name


def find_sources(paths: Sequence[Path], data_dir: Path | None = None) -> list[SourceFile]:
    """Files under `paths` (hidden files and folders and the data dir skipped), each once.

    A file named directly is taken even if hidden. Names are relative to the folder given
    (or the file name itself), which is what the document id is derived from.
    """
    skip = data_dir.resolve() if data_dir is not None else None
    found: dict[Path, SourceFile] = {}
    for given in paths:
        if not given.exists():
            raise FileNotFoundError(f"no such file or folder: {given}")
        root = given.resolve()
        candidates = [root] if root.is_file() else list(_walk(root, skip))
        for path in candidates:
            if path in found or not path.is_file():
                continue
            relative = path.name if root.is_file() else path.relative_to(root).as_posix()
            found[path] = SourceFile(
                path=str(path),
                relative_name=relative,
                file_type=file_type_of(path),
                size=path.stat().st_size,
                sha256=sha256_of(path),
            )
    return list(found.values())
