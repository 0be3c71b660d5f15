"""Object storage vendors (RAGLINE_OBJECT_STORE); s3 and minio share `s3` settings."""

from __future__ import annotations

from collections.abc import Callable

from ragline.application.ports.misconfiguration import Misconfiguration
from ragline.application.ports.object_storage import ObjectStorage
from ragline.bootstrap.registry.vendor import Port, Vendor
from ragline.bootstrap.settings import ObjectStoreVendor, Settings

Build = Callable[[Settings], ObjectStorage]


def local(settings: Settings) -> ObjectStorage:
    from ragline.adapters.object_storage.local import LocalObjectStorage

    return LocalObjectStorage(settings.data_dir / "objects")


def _secret(settings: Settings) -> str | None:
    key = settings.s3.secret_key
    return key.get_secret_value() if key else None


def s3(settings: Settings) -> ObjectStorage:
    from ragline.adapters.object_storage.s3 import S3ObjectStorage

    chosen = settings.s3
    return S3ObjectStorage(
        endpoint_url=chosen.endpoint_url,
        access_key=chosen.access_key,
        secret_key=_secret(settings),
        region=chosen.region,
    )


def minio(settings: Settings) -> ObjectStorage:
    from urllib.parse import urlsplit

    from ragline.adapters.object_storage.minio import MinioObjectStorage

    chosen = settings.s3
    if not chosen.endpoint_url:
        raise Misconfiguration("RAGLINE_S3_ENDPOINT_URL is required for the minio object store")
    endpoint = urlsplit(chosen.endpoint_url)
    return MinioObjectStorage(
        endpoint=endpoint.netloc or endpoint.path,
        access_key=chosen.access_key,
        secret_key=_secret(settings),
        secure=endpoint.scheme == "https",
        region=chosen.region,
    )


OBJECT_STORAGE: Port[ObjectStoreVendor, Build] = Port(
    part="object_storage",
    setting="object_store",
    names=ObjectStoreVendor,
    vendors={
        ObjectStoreVendor.LOCAL: Vendor(local, "local"),
        ObjectStoreVendor.S3: Vendor(s3, "s3"),
        ObjectStoreVendor.MINIO: Vendor(minio, "minio"),
    },
    chosen=lambda settings: settings.object_store,
)
