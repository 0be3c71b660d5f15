"""MinIO ObjectStorage over the `minio` client. The client blocks, so calls run in threads.

Uploads stream from the file (multipart for large files, done by the client); downloads
stream the response in 1 MiB blocks to a temp file next to `dest`, renamed into place when
complete. ETags are returned without quotes.
"""

from __future__ import annotations

import asyncio
import io
import os
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import urllib3
from minio import Minio
from minio.error import MinioException, S3Error

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
T = TypeVar("T")
_MISSING_KEY = {"NoSuchKey", "NoSuchObject", "ResourceNotFound"}
_MISSING_BUCKET = {"NoSuchBucket"}


class MinioObjectStorage:
    """ObjectStorage over MinIO. `endpoint` is `host:port` or an `http(s)://host:port` URL."""

    def __init__(
        self,
        endpoint: str,
        access_key: str | None = None,
        secret_key: str | None = None,
        secure: bool = False,
        region: str = "us-east-1",
        session_token: str | None = None,
        timeout_seconds: float = 60.0,
        client: Minio | None = None,
    ) -> None:
        if "://" in endpoint:
            parts = urlsplit(endpoint)
            endpoint, secure = parts.netloc, parts.scheme == "https"
        http = urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=10.0, read=timeout_seconds),
            maxsize=16,
            retries=urllib3.Retry(
                total=3, backoff_factor=0.2, status_forcelist=[500, 502, 503, 504]
            ),
        )
        self._client = client or Minio(
            endpoint,
            access_key=access_key,
            secret_key=secret_key,
            session_token=session_token,
            secure=secure,
            region=region,  # known region: no bucket-location round trip before each call
            http_client=http,
        )
        self._region = region

    async def ensure_bucket(self, bucket: str) -> None:
        def create() -> None:
            if self._client.bucket_exists(bucket):
                return
            try:
                self._client.make_bucket(bucket, self._region)
            except S3Error as exc:
                if exc.code not in {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}:
                    raise

        await self._run(create, bucket, "")

    async def get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        _checked(key)
        return await self._run(lambda: self._get_to_file(bucket, key, Path(dest)), bucket, key)

    async def put_file(
        self, bucket: str, key: str, src: Path, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        _checked(key)

        def upload() -> ObjectStat:
            size = os.path.getsize(src)
            result = self._client.fput_object(bucket, key, str(src), content_type=content_type)
            return ObjectStat(bucket, key, size, _unquote(result.etag), content_type)

        return await self._run(upload, bucket, key, writing=True)

    async def put_bytes(
        self, bucket: str, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        _checked(key)

        def put() -> ObjectStat:
            result = self._client.put_object(
                bucket, key, io.BytesIO(data), len(data), content_type=content_type
            )
            return ObjectStat(bucket, key, len(data), _unquote(result.etag), content_type)

        return await self._run(put, bucket, key, writing=True)

    async def stat(self, bucket: str, key: str) -> ObjectStat | None:
        _checked(key)

        def head() -> ObjectStat:
            obj = self._client.stat_object(bucket, key)
            return ObjectStat(bucket, key, int(obj.size or 0), _unquote(obj.etag), obj.content_type)

        try:
            return await self._run(head, bucket, key)
        except ObjectNotFound:
            return None

    async def presigned_get_url(self, bucket: str, key: str, expires: timedelta) -> str:
        _checked(key)
        return await self._run(
            lambda: self._client.presigned_get_object(bucket, key, expires=expires), bucket, key
        )

    async def delete(self, bucket: str, key: str) -> None:
        _checked(key)
        try:
            await self._run(lambda: self._client.remove_object(bucket, key), bucket, key)
        except ObjectNotFound:
            return

    # -- blocking implementation -------------------------------------------------------

    @staticmethod
    async def _run(func: Callable[[], T], bucket: str, key: str, writing: bool = False) -> T:
        try:
            return await asyncio.to_thread(func)
        except StorageError:
            raise
        except S3Error as exc:
            if exc.code in _MISSING_BUCKET:
                raise BucketNotFound(bucket, key) from exc
            if exc.code in _MISSING_KEY and not writing:
                raise ObjectNotFound(bucket, key) from exc
            raise StorageUnavailable(f"minio {exc.code} on {bucket}/{key}: {exc}") from exc
        except ValueError as exc:  # the client's own bucket/key name checks
            raise InvalidObjectKey(str(exc)) from exc
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageUnavailable(f"minio: {exc}") from exc

    def _get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        response = self._client.get_object(bucket, key)
        try:
            headers: Any = response.headers
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(
                dir=dest.parent, prefix=f".{dest.name}.", suffix=".part"
            )
            try:
                with os.fdopen(fd, "wb") as out:
                    for block in response.stream(CHUNK):
                        out.write(block)
                os.replace(tmp_name, dest)
            except BaseException:
                Path(tmp_name).unlink(missing_ok=True)
                raise
        finally:
            response.close()
            response.release_conn()
        return ObjectStat(
            bucket,
            key,
            int(headers.get("Content-Length", 0)),
            _unquote(headers.get("ETag")),
            headers.get("Content-Type"),
        )


def _checked(key: str) -> None:
    if not key:
        raise InvalidObjectKey("object key must not be empty")


def _unquote(etag: str | None) -> str:
    return (etag or "").strip('"')
