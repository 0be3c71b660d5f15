"""Object storage on MinIO (or any S3-compatible endpoint), through the minio client."""

from ragline.adapters.object_storage.minio.storage import MinioObjectStorage

__all__ = ["MinioObjectStorage"]
