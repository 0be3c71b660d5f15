"""In-memory ObjectStorage (objects are bytes; files are written and read like the real ones).

Holds `ObjectStorageContract` (tests/fakes/test_fakes_hold_the_kits.py); not
`PresignedUrlContract`: its presigned URLs point at `fake-storage.invalid`, which nothing
serves (the pipeline only passes them on).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

from ragline.application.ports.object_storage import (
    DEFAULT_CONTENT_TYPE,
    BucketNotFound,
    InvalidObjectKey,
    ObjectNotFound,
    ObjectStat,
)
from tests.fakes.faults import Faults

MAX_KEY_BYTES = 1024  # S3's limit


def _check_key(bucket: str, key: str) -> None:
    """What S3 refuses: an empty bucket name, an empty key or one over 1024 UTF-8 bytes."""
    if not bucket or not key or len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise InvalidObjectKey(f"invalid object key: {bucket!r}/{key!r}")


class FakeObjectStorage:
    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.objects: dict[tuple[str, str], tuple[bytes, str]] = {}
        self.buckets: set[str] = set()
        self.downloads: list[tuple[str, str, Path]] = []
        self.presigned: list[tuple[str, str]] = []

    def add(self, bucket: str, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE):
        self.buckets.add(bucket)
        self.objects[(bucket, key)] = (data, content_type)

    def data(self, bucket: str, key: str) -> bytes | None:
        found = self.objects.get((bucket, key))
        return found[0] if found else None

    def _stat(self, bucket: str, key: str) -> ObjectStat:
        data, content_type = self.objects[(bucket, key)]
        return ObjectStat(bucket, key, len(data), hashlib.sha256(data).hexdigest(), content_type)

    async def ensure_bucket(self, bucket: str) -> None:
        self.faults.check("storage.ensure_bucket")
        self.buckets.add(bucket)

    async def get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        self.faults.check("storage.get")
        if (bucket, key) not in self.objects:
            raise ObjectNotFound(bucket, key)
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.faults.check("storage.get.write")  # e.g. OSError(ENOSPC) while writing dest
        dest.write_bytes(self.objects[(bucket, key)][0])
        self.downloads.append((bucket, key, dest))
        return self._stat(bucket, key)

    async def put_file(
        self, bucket: str, key: str, src: Path, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        return await self.put_bytes(bucket, key, src.read_bytes(), content_type)

    async def put_bytes(
        self, bucket: str, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        self.faults.check("storage.put")
        _check_key(bucket, key)
        if bucket not in self.buckets:
            raise BucketNotFound(bucket, key)
        self.objects[(bucket, key)] = (data, content_type)
        return self._stat(bucket, key)

    async def stat(self, bucket: str, key: str) -> ObjectStat | None:
        self.faults.check("storage.stat")
        return self._stat(bucket, key) if (bucket, key) in self.objects else None

    async def presigned_get_url(self, bucket: str, key: str, expires: timedelta) -> str:
        self.faults.check("storage.presign")
        self.presigned.append((bucket, key))
        return f"https://fake-storage.invalid/{bucket}/{key}?expires={int(expires.total_seconds())}"

    async def delete(self, bucket: str, key: str) -> None:
        self.faults.check("storage.delete")
        self.objects.pop((bucket, key), None)
