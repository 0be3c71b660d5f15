"""S3ObjectStorage (boto3) against a moto S3 server on loopback."""

from __future__ import annotations

import pytest

from ragline.adapters.object_storage.s3 import S3ObjectStorage
from ragline.application.ports.object_storage import ObjectStorage, StorageUnavailable
from ragline.testing.kits.object_storage import ObjectStorageContract, PresignedUrlContract
from ragline.testing.services.fixtures import free_port


@pytest.fixture(scope="module")
def s3_storage(s3_endpoint: str) -> S3ObjectStorage:
    """One adapter for the module: building a boto3 client takes about a second."""
    return S3ObjectStorage(s3_endpoint, access_key="test", secret_key="test")


class TestS3ObjectStorage(ObjectStorageContract, PresignedUrlContract):
    @pytest.fixture
    def storage(self, s3_storage: S3ObjectStorage) -> ObjectStorage:
        return s3_storage


async def test_unreachable_endpoint_is_unavailable() -> None:
    storage = S3ObjectStorage(
        f"http://127.0.0.1:{free_port()}", access_key="test", secret_key="test"
    )
    with pytest.raises(StorageUnavailable):
        await storage.put_bytes("bucket", "key", b"x")
