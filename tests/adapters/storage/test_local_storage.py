"""LocalObjectStorage: the ObjectStorage kit plus key confinement specific to a filesystem."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ragline.adapters.object_storage.local import LocalObjectStorage
from ragline.application.ports.object_storage import InvalidObjectKey, ObjectStorage
from ragline.testing.kits.object_storage import (
    FilesystemConfinementContract,
    ObjectStorageContract,
    PresignedUrlContract,
)


class TestLocalObjectStorage(
    ObjectStorageContract, PresignedUrlContract, FilesystemConfinementContract
):
    @pytest.fixture
    def store_root(self, tmp_path: Path) -> Path:
        return tmp_path / "store"

    @pytest.fixture
    def storage(self, store_root: Path) -> ObjectStorage:
        return LocalObjectStorage(store_root)


@pytest.fixture
async def local(tmp_path: Path) -> LocalObjectStorage:
    store = LocalObjectStorage(tmp_path / "store")
    await store.ensure_bucket("docs")
    return store


@pytest.mark.parametrize(
    "key",
    ["../escape", "a/../../escape", "/etc/passwd", "a//b", "./a", "a/.", "a\\b", "nul\x00", ""],
)
async def test_unsafe_keys_are_rejected_everywhere(local: LocalObjectStorage, key: str) -> None:
    with pytest.raises(InvalidObjectKey):
        await local.put_bytes("docs", key, b"x")
    with pytest.raises(InvalidObjectKey):
        await local.stat("docs", key)
    with pytest.raises(InvalidObjectKey):
        await local.delete("docs", key)
    with pytest.raises(InvalidObjectKey):
        await local.get_to_file("docs", key, local.root.parent / "out")


@pytest.mark.parametrize("bucket", ["..", ".meta", ".tmp", "a/b", "", "-x", "a..b"])
async def test_unsafe_buckets_are_rejected(local: LocalObjectStorage, bucket: str) -> None:
    with pytest.raises(InvalidObjectKey):
        await local.ensure_bucket(bucket)


async def test_symlink_out_of_the_root_is_refused(
    local: LocalObjectStorage, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret")
    os.symlink(outside, local.root / "docs" / "link")
    with pytest.raises(InvalidObjectKey):
        await local.stat("docs", "link/secret")
    with pytest.raises(InvalidObjectKey):
        await local.put_bytes("docs", "link/new", b"x")
    assert not (outside / "new").exists()


async def test_objects_are_files_under_bucket_folders(local: LocalObjectStorage) -> None:
    await local.put_bytes("docs", "a/b.txt", b"hello")
    assert (local.root / "docs" / "a" / "b.txt").read_bytes() == b"hello"
    assert list((local.root / ".tmp").iterdir()) == []


async def test_a_file_placed_by_hand_gets_a_computed_stat(local: LocalObjectStorage) -> None:
    (local.root / "docs" / "hand.md").write_bytes(b"# hi")
    stat = await local.stat("docs", "hand.md")
    assert stat is not None
    assert stat.size == 4
    assert stat.etag == hashlib.sha256(b"# hi").hexdigest()
    assert stat.content_type == "text/markdown"


async def test_metadata_follows_a_file_changed_by_hand(local: LocalObjectStorage) -> None:
    first = await local.put_bytes("docs", "x.txt", b"one", "text/plain")
    (local.root / "docs" / "x.txt").write_bytes(b"three")
    stat = await local.stat("docs", "x.txt")
    assert stat is not None
    assert stat.size == 5
    assert stat.etag != first.etag


async def test_delete_prunes_empty_key_folders(local: LocalObjectStorage) -> None:
    await local.put_bytes("docs", "deep/er/x", b"1")
    await local.delete("docs", "deep/er/x")
    assert list((local.root / "docs").iterdir()) == []
    assert (local.root / "docs").is_dir()
