"""Local filesystem ObjectStorage: `<root>/<bucket>/<key>`, atomic writes, sha256 etags.

Layout under `root`:
- `<bucket>/<key>`: the object bytes (a bucket is a folder, key segments are sub-folders);
- `.meta/<bucket>/<key>.json`: size, mtime_ns, sha256 and content type of the object;
- `.tmp/`: writes land here first, then `os.replace` moves them in (same filesystem).

A reader never sees a half-written object. If the metadata is missing or stale (the file was
placed or changed by hand, or a crash fell between the two renames), `stat` recomputes it.
Every path is checked against the real (symlink-resolved) root: a bucket folder, key folder,
`.meta` or `.tmp` that is a symlink out of the store is refused (InvalidObjectKey) for reads,
writes and deletes alike.
A key cannot be both an object and a "folder" of other keys (`a` and `a/b`): the second
write fails with StorageUnavailable, unlike S3.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import mimetypes
import os
import shutil
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

from ragline.adapters.object_storage.local.keys import (
    check_bucket,
    check_key,
    real_folder,
    resolve_inside,
)
from ragline.application.ports.object_storage import (
    DEFAULT_CONTENT_TYPE,
    BucketNotFound,
    InvalidObjectKey,
    ObjectNotFound,
    ObjectStat,
    StorageError,
    StorageUnavailable,
)

CHUNK = 1024 * 1024
_META = ".meta"
_TMP = ".tmp"
T = TypeVar("T")


class LocalObjectStorage:
    """ObjectStorage over a directory; blocking file I/O runs in worker threads."""

    def __init__(self, root: Path | str) -> None:
        self._root = Path(root).absolute()

    @property
    def root(self) -> Path:
        return self._root

    async def ensure_bucket(self, bucket: str) -> None:
        await self._run(self._ensure_bucket, bucket)

    async def get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        return await self._run(self._get_to_file, bucket, key, Path(dest))

    async def put_file(
        self, bucket: str, key: str, src: Path, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        def write(out: IO[bytes], digest: Any) -> int:
            size = 0
            with Path(src).open("rb") as source:
                while block := source.read(CHUNK):
                    digest.update(block)
                    out.write(block)
                    size += len(block)
            return size

        return await self._run(self._put, bucket, key, write, content_type)

    async def put_bytes(
        self, bucket: str, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        def write(out: IO[bytes], digest: Any) -> int:
            digest.update(data)
            out.write(data)
            return len(data)

        return await self._run(self._put, bucket, key, write, content_type)

    async def stat(self, bucket: str, key: str) -> ObjectStat | None:
        return await self._run(self._stat, bucket, key)

    async def presigned_get_url(self, bucket: str, key: str, expires: timedelta) -> str:
        """A file:// URL (the local store has no signing; `expires` is ignored)."""
        path = self._object_path(bucket, key)
        if not path.is_file():
            raise ObjectNotFound(bucket, key)
        return path.as_uri()

    async def delete(self, bucket: str, key: str) -> None:
        await self._run(self._delete, bucket, key)

    # -- blocking implementation -------------------------------------------------------

    @staticmethod
    async def _run(func: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.to_thread(func, *args)
        except StorageError:
            raise
        except OSError as exc:
            # the OSError's text names the file under the store root: say what, not where
            raise StorageUnavailable(
                f"local storage: {exc.strerror or type(exc).__name__}"
            ) from exc

    def _bucket_dir(self, bucket: str) -> Path:
        return real_folder(self._root, check_bucket(bucket))

    def _tmp_dir(self) -> Path:
        tmp = real_folder(self._root, _TMP)
        tmp.mkdir(parents=True, exist_ok=True)
        return real_folder(self._root, _TMP)  # re-check: a link may have won the mkdir race

    def _object_path(self, bucket: str, key: str) -> Path:
        self._bucket_dir(bucket)
        return resolve_inside(self._root, (bucket,), check_key(key))

    def _meta_path(self, bucket: str, key: str) -> Path:
        segments = check_key(key)
        *parents, name = segments
        return resolve_inside(self._root, (_META, check_bucket(bucket)), (*parents, f"{name}.json"))

    def _ensure_bucket(self, bucket: str) -> None:
        self._bucket_dir(bucket).mkdir(parents=True, exist_ok=True)

    def _put(
        self,
        bucket: str,
        key: str,
        write: Callable[[IO[bytes], Any], int],
        content_type: str,
    ) -> ObjectStat:
        path = self._object_path(bucket, key)
        meta_path = self._meta_path(bucket, key)
        bucket_dir = self._bucket_dir(bucket)
        if not bucket_dir.is_dir():
            raise BucketNotFound(bucket, key)
        digest = hashlib.sha256()
        fd, tmp_name = tempfile.mkstemp(dir=self._tmp_dir(), prefix="put-")
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                size = write(out, digest)
                out.flush()
                os.fsync(out.fileno())
            mtime_ns = tmp.stat().st_mtime_ns
            path.parent.mkdir(parents=True, exist_ok=True)
            self._object_path(bucket, key)  # re-check after creating folders
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        stat = ObjectStat(bucket, key, size, digest.hexdigest(), content_type)
        self._write_meta(meta_path, stat, mtime_ns)
        return stat

    def _write_meta(self, meta_path: Path, stat: ObjectStat, mtime_ns: int) -> None:
        meta = {
            "size": stat.size,
            "mtime_ns": mtime_ns,
            "sha256": stat.etag,
            "content_type": stat.content_type,
        }
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=self._tmp_dir(), prefix="meta-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(meta, out)
            os.replace(tmp_name, meta_path)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise

    def _stat(self, bucket: str, key: str) -> ObjectStat | None:
        path = self._object_path(bucket, key)
        try:
            file_stat = path.stat()
        except FileNotFoundError:
            return None
        if not path.is_file():
            return None
        meta_path = self._meta_path(bucket, key)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta["size"] == file_stat.st_size and meta["mtime_ns"] == file_stat.st_mtime_ns:
                return ObjectStat(bucket, key, meta["size"], meta["sha256"], meta["content_type"])
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            pass
        # Placed or changed outside this store: recompute and remember.
        digest = hashlib.sha256()
        with path.open("rb") as source:
            while block := source.read(CHUNK):
                digest.update(block)
        guessed = mimetypes.guess_type(path.name)[0] or DEFAULT_CONTENT_TYPE
        stat = ObjectStat(bucket, key, file_stat.st_size, digest.hexdigest(), guessed)
        self._write_meta(meta_path, stat, file_stat.st_mtime_ns)
        return stat

    def _get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        stat = self._stat(bucket, key)
        if stat is None:
            raise ObjectNotFound(bucket, key)
        path = self._object_path(bucket, key)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out, path.open("rb") as source:
                shutil.copyfileobj(source, out, CHUNK)
            os.replace(tmp_name, dest)
        except FileNotFoundError as exc:
            Path(tmp_name).unlink(missing_ok=True)
            raise ObjectNotFound(bucket, key) from exc
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        return stat

    def _delete(self, bucket: str, key: str) -> None:
        path = self._object_path(bucket, key)
        meta_path = self._meta_path(bucket, key)
        if path.is_dir():
            raise InvalidObjectKey(f"not an object: {bucket}/{key}")
        path.unlink(missing_ok=True)
        meta_path.unlink(missing_ok=True)
        self._prune_empty(path.parent, self._bucket_dir(bucket))
        self._prune_empty(meta_path.parent, self._root / _META / bucket)

    @staticmethod
    def _prune_empty(folder: Path, stop: Path) -> None:
        """Remove now-empty key folders up to (not including) the bucket folder."""
        while folder != stop and folder.is_relative_to(stop):
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent
