"""Object storage port: where source files come from and where Markdown goes (CLEANING).

Objects are streamed to and from local files; no method holds a whole object in memory.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Protocol

import attrs


class StorageError(Exception):
    """Base class for object storage failures."""


class ObjectNotFound(StorageError):
    """The bucket or the key does not exist."""

    def __init__(self, bucket: str, key: str) -> None:
        super().__init__(f"object not found: {bucket}/{key}")
        self.bucket = bucket
        self.key = key


class BucketNotFound(ObjectNotFound):
    """The bucket does not exist (a write into it cannot succeed until `ensure_bucket`)."""

    def __init__(self, bucket: str, key: str = "") -> None:
        super().__init__(bucket, key)
        self.args = (f"bucket not found: {bucket}",)


class StorageUnavailable(StorageError):
    """The store cannot be reached or refused the operation (network, permissions, disk)."""


class InvalidObjectKey(StorageError, ValueError):
    """A bucket or key that is empty, absolute, contains `..` or would escape the store."""


@attrs.frozen
class ObjectStat:
    """What the store knows about one object.

    `etag` is the store's own version tag (S3 ETag without quotes, or a sha256 hex digest
    for the local store); compare it only with tags from the same store.
    """

    bucket: str
    key: str
    size: int
    etag: str
    content_type: str | None = None


DEFAULT_CONTENT_TYPE = "application/octet-stream"


class ObjectStorage(Protocol):
    async def ensure_bucket(self, bucket: str) -> None:
        """Create the bucket if missing; no error if it exists."""
        ...

    async def get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        """Stream the object into `dest` (parents created, file replaced atomically).

        Raises ObjectNotFound (also for a missing bucket); `dest` is untouched then.
        """
        ...

    async def put_file(
        self, bucket: str, key: str, src: Path, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        """Stream `src` into the object, replacing any previous version.

        Raises BucketNotFound when the bucket does not exist.
        """
        ...

    async def put_bytes(
        self, bucket: str, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        """Store a small in-memory payload (e.g. generated Markdown)."""
        ...

    async def stat(self, bucket: str, key: str) -> ObjectStat | None:
        """Metadata of the object, or None when it does not exist."""
        ...

    async def presigned_get_url(self, bucket: str, key: str, expires: timedelta) -> str:
        """A URL a remote reader can fetch the object from without credentials."""
        ...

    async def delete(self, bucket: str, key: str) -> None:
        """Remove the object; deleting a missing object is not an error."""
        ...
