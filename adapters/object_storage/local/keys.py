"""Bucket and key validation: a key names a file inside its bucket folder and nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

from ragline.application.ports.object_storage import InvalidObjectKey

_BUCKET = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
MAX_KEY_BYTES = 1024


def check_bucket(bucket: str) -> str:
    """A bucket is one plain folder name (S3-like characters, not hidden, not `..`)."""
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise InvalidObjectKey(f"invalid bucket name: {bucket!r}")
    return bucket


def check_key(key: str) -> tuple[str, ...]:
    """Split a key into safe path segments or raise InvalidObjectKey.

    Rejected: empty keys, absolute keys, backslashes, NUL, empty, `.` or `..` segments, and
    keys longer than 1024 UTF-8 bytes (the S3 limit).
    """
    if not key or len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise InvalidObjectKey(f"invalid object key length: {key!r}")
    if key.startswith("/") or "\\" in key or "\x00" in key:
        raise InvalidObjectKey(f"object key must be relative and use '/': {key!r}")
    segments = tuple(key.split("/"))
    if any(segment in ("", ".", "..") for segment in segments):
        raise InvalidObjectKey(f"object key has an empty, '.' or '..' segment: {key!r}")
    return segments


def resolve_inside(root: Path, folder: tuple[str, ...], segments: tuple[str, ...]) -> Path:
    """`root/folder…/segments…`, refused unless its real location (symlinks resolved) lies
    under the real `root/folder…`.

    Checking against the real root, not against `root/folder` resolved, is what stops a
    symlinked bucket folder (or a symlinked `.meta`): resolving both sides would follow the
    link on both and call everything under it "inside".
    """
    path = root.joinpath(*folder, *segments)
    inside = root.resolve().joinpath(*folder)
    if not path.resolve().is_relative_to(inside):
        raise InvalidObjectKey(f"object key escapes its bucket: {'/'.join(segments)!r}")
    return path


def real_folder(root: Path, name: str) -> Path:
    """`root/name`, refused when it is (or is under) a symlink: its real location must be
    exactly the real root's `name`."""
    path = root / name
    if path.resolve() != root.resolve() / name:
        raise InvalidObjectKey(f"store folder {name!r} is a link out of the store root")
    return path
