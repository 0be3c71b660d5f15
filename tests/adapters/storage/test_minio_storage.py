"""MinioObjectStorage (minio client) against a moto S3 server on loopback."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ragline.adapters.object_storage.minio import MinioObjectStorage
from ragline.application.ports.object_storage import ObjectStorage, StorageUnavailable
from ragline.testing.kits.object_storage import ObjectStorageContract, PresignedUrlContract
from ragline.testing.services.fixtures import free_port


@pytest.fixture(scope="module")
def minio_storage(s3_endpoint: str) -> MinioObjectStorage:
    return MinioObjectStorage(s3_endpoint, access_key="test", secret_key="test")


class TestMinioObjectStorage(ObjectStorageContract, PresignedUrlContract):
    @pytest.fixture
    def storage(self, minio_storage: MinioObjectStorage) -> ObjectStorage:
        return minio_storage


async def test_endpoint_url_or_host_port_are_both_accepted() -> None:
    week = timedelta(days=7)
    secure = MinioObjectStorage("https://s3.example.com:9000", access_key="a", secret_key="s")
    url = await secure.presigned_get_url("bkt", "k", week)
    assert url.startswith("https://s3.example.com:9000/bkt/k?")
    plain = MinioObjectStorage("127.0.0.1:9000", access_key="a", secret_key="s")
    assert (await plain.presigned_get_url("bkt", "k", week)).startswith(
        "http://127.0.0.1:9000/bkt/k?"
    )


async def test_unreachable_endpoint_is_unavailable() -> None:
    storage = MinioObjectStorage(f"127.0.0.1:{free_port()}", access_key="t", secret_key="t")
    with pytest.raises(StorageUnavailable):
        await storage.put_bytes("bucket", "key", b"x")
