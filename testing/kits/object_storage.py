"""Contract kit for the ObjectStorage port.

One class per capability (as Haystack's `haystack/testing/document_store.py` does):
- `ObjectStorageContract`: buckets, streamed round trips, stat, delete, overwrite, keys.
  Every ObjectStorage passes it.
- `PresignedUrlContract`: `presigned_get_url` gives a URL that downloads the bytes with a
  plain GET (http(s):// for S3 and MinIO, file:// for the local store).
- `FilesystemConfinementContract`: for a store kept in a local folder: a symlinked bucket
  folder, metadata folder or staging folder never lets a read, write or delete leave the
  store root (needs a `store_root` fixture: the folder the adapter was opened on).
A real adapter combines them all; a test double leaves out a mixin it honestly lacks.

Subclass once per adapter, in a module pytest collects, and provide the `storage` fixture
(a ready adapter against a real store):

    class TestMyStorage(ObjectStorageContract, PresignedUrlContract):
        @pytest.fixture
        def storage(self) -> ObjectStorage:
            return MyStorage(...)

Every test works in its own fresh bucket, so a shared server is fine.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from ragline.application.ports.object_storage import (
    InvalidObjectKey,
    ObjectNotFound,
    ObjectStorage,
)

MULTI_MB = 9 * 1024 * 1024 + 123  # above the usual multipart thresholds (5-8 MiB)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(1024 * 1024):
            digest.update(block)
    return digest.hexdigest()


def fetch(url: str) -> bytes:
    # file:// is what the local store presigns (http(s) for S3/MinIO): any scheme is wanted
    with urllib.request.urlopen(url, timeout=30) as response:  # nosec B310
        data: bytes = response.read()
        return data


class ObjectStorageContract:
    """The behaviour every ObjectStorage must show (real adapters and test doubles alike)."""

    @pytest.fixture
    def storage(self) -> ObjectStorage:
        raise NotImplementedError("subclass and return the adapter under test")

    @pytest.fixture
    async def bucket(self, storage: ObjectStorage) -> str:
        name = f"kit-{uuid.uuid4().hex[:16]}"
        await storage.ensure_bucket(name)
        return name

    async def test_ensure_bucket_is_idempotent(self, storage: ObjectStorage, bucket: str) -> None:
        await storage.ensure_bucket(bucket)
        await storage.put_bytes(bucket, "still-there.txt", b"x")
        await storage.ensure_bucket(bucket)
        assert await storage.stat(bucket, "still-there.txt") is not None

    async def test_large_file_roundtrip_is_streamed_and_identical(
        self, storage: ObjectStorage, bucket: str, tmp_path: Path
    ) -> None:
        src = tmp_path / "big.bin"
        src.write_bytes(os.urandom(MULTI_MB))
        put = await storage.put_file(bucket, "docs/big.bin", src, "application/pdf")
        assert put.size == MULTI_MB
        dest = tmp_path / "out" / "copy.bin"
        got = await storage.get_to_file(bucket, "docs/big.bin", dest)
        assert sha256_of(dest) == sha256_of(src)
        assert got.size == MULTI_MB
        assert got.etag == put.etag
        stat = await storage.stat(bucket, "docs/big.bin")
        assert stat is not None
        assert (stat.size, stat.etag, stat.content_type) == (MULTI_MB, put.etag, "application/pdf")
        assert [p.name for p in dest.parent.iterdir()] == ["copy.bin"]  # no partial files left

    async def test_put_bytes_keeps_content_type(
        self, storage: ObjectStorage, bucket: str, tmp_path: Path
    ) -> None:
        data = "# 标题\n\nbody\n".encode()
        put = await storage.put_bytes(bucket, "md/a.md", data, "text/markdown; charset=utf-8")
        stat = await storage.stat(bucket, "md/a.md")
        assert stat is not None
        assert stat.size == len(data)
        assert stat.etag == put.etag
        assert stat.content_type == "text/markdown; charset=utf-8"
        dest = tmp_path / "a.md"
        await storage.get_to_file(bucket, "md/a.md", dest)
        assert dest.read_bytes() == data

    async def test_empty_object(self, storage: ObjectStorage, bucket: str, tmp_path: Path) -> None:
        await storage.put_bytes(bucket, "empty", b"")
        dest = tmp_path / "empty"
        stat = await storage.get_to_file(bucket, "empty", dest)
        assert stat.size == 0
        assert dest.read_bytes() == b""

    async def test_stat_of_missing_is_none(self, storage: ObjectStorage, bucket: str) -> None:
        assert await storage.stat(bucket, "no/such/key") is None
        assert await storage.stat(f"missing-{uuid.uuid4().hex[:12]}", "key") is None

    async def test_get_of_missing_raises_and_leaves_dest_alone(
        self, storage: ObjectStorage, bucket: str, tmp_path: Path
    ) -> None:
        work = tmp_path / "work"
        work.mkdir()
        dest = work / "dest.bin"
        dest.write_bytes(b"previous")
        with pytest.raises(ObjectNotFound):
            await storage.get_to_file(bucket, "no/such/key", dest)
        with pytest.raises(ObjectNotFound):
            await storage.get_to_file(f"missing-{uuid.uuid4().hex[:12]}", "key", dest)
        assert dest.read_bytes() == b"previous"
        assert sorted(p.name for p in work.iterdir()) == ["dest.bin"]

    async def test_put_into_missing_bucket_raises_not_found(
        self, storage: ObjectStorage, tmp_path: Path
    ) -> None:
        with pytest.raises(ObjectNotFound):
            await storage.put_bytes(f"missing-{uuid.uuid4().hex[:12]}", "key", b"x")

    async def test_delete_is_idempotent(self, storage: ObjectStorage, bucket: str) -> None:
        await storage.put_bytes(bucket, "a/b/c.txt", b"abc")
        await storage.put_bytes(bucket, "a/b/d.txt", b"abd")
        await storage.delete(bucket, "a/b/c.txt")
        assert await storage.stat(bucket, "a/b/c.txt") is None
        await storage.delete(bucket, "a/b/c.txt")
        await storage.delete(bucket, "never/existed")
        assert await storage.stat(bucket, "a/b/d.txt") is not None

    async def test_overwrite_replaces_content(
        self, storage: ObjectStorage, bucket: str, tmp_path: Path
    ) -> None:
        first = await storage.put_bytes(bucket, "same.txt", b"first version", "text/plain")
        second = await storage.put_bytes(bucket, "same.txt", b"second", "text/markdown")
        assert first.etag != second.etag
        dest = tmp_path / "same.txt"
        await storage.get_to_file(bucket, "same.txt", dest)
        assert dest.read_bytes() == b"second"
        stat = await storage.stat(bucket, "same.txt")
        assert stat is not None
        assert (stat.size, stat.etag, stat.content_type) == (6, second.etag, "text/markdown")

    async def test_get_replaces_an_existing_destination(
        self, storage: ObjectStorage, bucket: str, tmp_path: Path
    ) -> None:
        await storage.put_bytes(bucket, "k", b"short")
        dest = tmp_path / "dest"
        dest.write_bytes(b"a much longer previous content")
        await storage.get_to_file(bucket, "k", dest)
        assert dest.read_bytes() == b"short"

    async def test_unicode_keys_roundtrip(
        self, storage: ObjectStorage, bucket: str, tmp_path: Path
    ) -> None:
        key = "报告/2024 年度 summary (v1)+ä.md"
        data = "内容 content".encode()
        await storage.put_bytes(bucket, key, data, "text/markdown")
        dest = tmp_path / "u.md"
        await storage.get_to_file(bucket, key, dest)
        assert dest.read_bytes() == data

    async def test_empty_key_is_rejected(self, storage: ObjectStorage, bucket: str) -> None:
        with pytest.raises(InvalidObjectKey):
            await storage.put_bytes(bucket, "", b"x")


class PresignedUrlContract:
    """Capability: a presigned URL downloads the object's bytes with a plain GET, from
    outside the adapter (an HTTP server for S3/MinIO, the file itself for the local store).
    Needs the `storage` and `bucket` fixtures of `ObjectStorageContract`."""

    async def test_unicode_keys_presigned_url(self, storage: ObjectStorage, bucket: str) -> None:
        key = "报告/2024 年度 summary (v1)+ä.md"
        data = "内容 content".encode()
        await storage.put_bytes(bucket, key, data, "text/markdown")
        url = await storage.presigned_get_url(bucket, key, timedelta(minutes=5))
        assert fetch(url) == data

    async def test_presigned_url_downloads_the_bytes(
        self, storage: ObjectStorage, bucket: str, tmp_path: Path
    ) -> None:
        src = tmp_path / "doc.pdf"
        src.write_bytes(os.urandom(300_000))
        await storage.put_file(bucket, "src/doc.pdf", src, "application/pdf")
        url = await storage.presigned_get_url(bucket, "src/doc.pdf", timedelta(minutes=10))
        assert fetch(url) == src.read_bytes()


class FilesystemConfinementContract:
    """Capability (stores kept in a local folder): symlinks never carry an operation outside
    the store root. Needs `storage`, `bucket` and a `store_root` fixture (the adapter's root).

    A bucket folder replaced by a symlink to a folder outside the root is the case that
    escaped before issue 12: the key check resolved against the (symlinked) bucket folder
    itself, so everything under it looked "inside"."""

    @pytest.fixture
    def store_root(self) -> Path:
        raise NotImplementedError("subclass and return the adapter's root folder")

    @staticmethod
    def _outside(store_root: Path) -> Path:
        outside = store_root.parent / f"outside-{uuid.uuid4().hex[:8]}"
        outside.mkdir()
        (outside / "secret.txt").write_bytes(b"secret")
        return outside

    async def test_symlinked_bucket_folder_is_refused_everywhere(
        self, storage: ObjectStorage, store_root: Path, tmp_path: Path
    ) -> None:
        outside = self._outside(store_root)
        store_root.mkdir(parents=True, exist_ok=True)
        os.symlink(outside, store_root / "linked")
        with pytest.raises(InvalidObjectKey):
            await storage.put_bytes("linked", "new.txt", b"x")
        src = tmp_path / "src.bin"
        src.write_bytes(b"y")
        with pytest.raises(InvalidObjectKey):
            await storage.put_file("linked", "new2.txt", src)
        with pytest.raises(InvalidObjectKey):
            await storage.stat("linked", "secret.txt")
        with pytest.raises(InvalidObjectKey):
            await storage.get_to_file("linked", "secret.txt", tmp_path / "got")
        with pytest.raises(InvalidObjectKey):
            await storage.presigned_get_url("linked", "secret.txt", timedelta(minutes=1))
        with pytest.raises(InvalidObjectKey):
            await storage.delete("linked", "secret.txt")
        with pytest.raises(InvalidObjectKey):
            await storage.ensure_bucket("linked")
        assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
        assert not (tmp_path / "got").exists()

    async def test_symlinked_key_folder_is_refused(
        self, storage: ObjectStorage, bucket: str, store_root: Path
    ) -> None:
        outside = self._outside(store_root)
        os.symlink(outside, store_root / bucket / "sub")
        with pytest.raises(InvalidObjectKey):
            await storage.put_bytes(bucket, "sub/new.txt", b"x")
        with pytest.raises(InvalidObjectKey):
            await storage.delete(bucket, "sub/secret.txt")
        assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]

    async def test_symlinked_metadata_and_staging_folders_are_refused(
        self, storage: ObjectStorage, bucket: str, store_root: Path
    ) -> None:
        await storage.put_bytes(bucket, "first.txt", b"1")
        outside = self._outside(store_root)
        for inner in [p for p in store_root.iterdir() if p.name.startswith(".")]:
            moved = outside / inner.name
            inner.rename(moved)
            os.symlink(moved, inner)
        with pytest.raises(InvalidObjectKey):
            await storage.put_bytes(bucket, "second.txt", b"2")
        with pytest.raises(InvalidObjectKey):
            await storage.delete(bucket, "first.txt")
        assert (store_root / bucket / "first.txt").read_bytes() == b"1"
        assert not (store_root / bucket / "second.txt").exists()
