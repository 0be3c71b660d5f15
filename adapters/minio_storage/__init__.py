"""Object storage on MinIO (or any S3-compatible endpoint), through the minio client."""

from ragline.adapters.minio_storage.storage import MinioObjectStorage

__all__ = ["MinioObjectStorage"]
