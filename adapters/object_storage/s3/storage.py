"""S3 ObjectStorage over boto3. boto3 blocks, so every call runs in a worker thread.

Uploads go through boto3's transfer manager (multipart above 8 MiB, streamed from the file);
downloads stream the response body in 1 MiB blocks to a temp file next to `dest`, renamed into
place only when complete. ETags are returned without quotes; multipart ETags are not MD5s.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

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
_MISSING_KEY = {"NoSuchKey", "404", "NotFound"}
_MISSING_BUCKET = {"NoSuchBucket"}


class S3ObjectStorage:
    """ObjectStorage over S3 (AWS, MinIO, moto, Ceph…) with path-style addressing by default."""

    def __init__(
        self,
        endpoint_url: str | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        region: str = "us-east-1",
        session_token: str | None = None,
        addressing_style: str = "path",
        max_pool_connections: int = 16,
        client: BaseClient | None = None,
    ) -> None:
        self._region = region
        self._client: Any = client or boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint_url,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            aws_session_token=session_token,
            region_name=region,
            config=Config(
                s3={"addressing_style": addressing_style},
                signature_version="s3v4",
                max_pool_connections=max_pool_connections,
                retries={"max_attempts": 3, "mode": "standard"},
            ),
        )
        self._transfer = TransferConfig(multipart_threshold=8 * CHUNK, io_chunksize=CHUNK)

    async def ensure_bucket(self, bucket: str) -> None:
        await self._run(self._ensure_bucket, bucket)

    async def get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        return await self._run(self._get_to_file, bucket, _checked(key), Path(dest))

    async def put_file(
        self, bucket: str, key: str, src: Path, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        def upload() -> ObjectStat:
            with Path(src).open("rb") as source:
                self._client.upload_fileobj(
                    source,
                    bucket,
                    key,
                    ExtraArgs={"ContentType": content_type},
                    Config=self._transfer,
                )
            return self._head(bucket, key)

        _checked(key)
        return await self._run(upload, bucket=bucket, key=key, writing=True)

    async def put_bytes(
        self, bucket: str, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE
    ) -> ObjectStat:
        def put() -> ObjectStat:
            response = self._client.put_object(
                Bucket=bucket, Key=key, Body=io.BytesIO(data), ContentType=content_type
            )
            return ObjectStat(bucket, key, len(data), _etag(response), content_type)

        _checked(key)
        return await self._run(put, bucket=bucket, key=key, writing=True)

    async def stat(self, bucket: str, key: str) -> ObjectStat | None:
        _checked(key)
        try:
            return await self._run(self._head, bucket, key)
        except ObjectNotFound:
            return None

    async def presigned_get_url(self, bucket: str, key: str, expires: timedelta) -> str:
        def sign() -> str:
            url: str = self._client.generate_presigned_url(
                "get_object",
                Params={"Bucket": bucket, "Key": key},
                ExpiresIn=int(expires.total_seconds()),
            )
            return url

        return await self._run(sign, bucket=bucket, key=_checked(key))

    async def delete(self, bucket: str, key: str) -> None:
        def remove() -> None:
            self._client.delete_object(Bucket=bucket, Key=key)

        try:
            await self._run(remove, bucket=bucket, key=_checked(key))
        except ObjectNotFound:
            return

    # -- blocking implementation -------------------------------------------------------

    async def _run(
        self,
        func: Callable[..., T],
        *args: Any,
        bucket: str | None = None,
        key: str | None = None,
        writing: bool = False,
    ) -> T:
        bucket = bucket if bucket is not None else (args[0] if args else "")
        key = key if key is not None else (args[1] if len(args) > 1 else "")
        try:
            return await asyncio.to_thread(func, *args)
        except StorageError:
            raise
        except ClientError as exc:
            raise _translate(exc, str(bucket), str(key), writing) from exc
        except (BotoCoreError, OSError) as exc:
            raise StorageUnavailable(f"s3: {exc}") from exc

    def _ensure_bucket(self, bucket: str) -> None:
        try:
            self._client.head_bucket(Bucket=bucket)
            return
        except ClientError as exc:
            if _code(exc) not in _MISSING_KEY | _MISSING_BUCKET:
                raise
        kwargs: dict[str, Any] = {"Bucket": bucket}
        if self._region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": self._region}
        try:
            self._client.create_bucket(**kwargs)
        except ClientError as exc:
            if _code(exc) not in {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}:
                raise

    def _head(self, bucket: str, key: str) -> ObjectStat:
        response = self._client.head_object(Bucket=bucket, Key=key)
        return _stat_of(bucket, key, response)

    def _get_to_file(self, bucket: str, key: str, dest: Path) -> ObjectStat:
        response = self._client.get_object(Bucket=bucket, Key=key)
        body = response["Body"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out, contextlib.closing(body):
                for block in body.iter_chunks(CHUNK):
                    out.write(block)
            os.replace(tmp_name, dest)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        return _stat_of(bucket, key, response)


def _checked(key: str) -> str:
    if not key:
        raise InvalidObjectKey("object key must not be empty")
    return key


def _etag(response: dict[str, Any]) -> str:
    return str(response.get("ETag", "")).strip('"')


def _stat_of(bucket: str, key: str, response: dict[str, Any]) -> ObjectStat:
    size = int(response["ContentLength"])
    return ObjectStat(bucket, key, size, _etag(response), response.get("ContentType"))


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _translate(exc: ClientError, bucket: str, key: str, writing: bool) -> StorageError:
    code = _code(exc)
    if code in _MISSING_BUCKET:
        return BucketNotFound(bucket, key)
    if code in _MISSING_KEY and not writing:
        return ObjectNotFound(bucket, key)
    return StorageUnavailable(f"s3 {code or 'error'} on {bucket}/{key}: {exc}")
