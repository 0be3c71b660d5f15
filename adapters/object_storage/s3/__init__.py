"""Object storage on Amazon S3 or any S3-compatible endpoint, through boto3."""

from ragline.adapters.object_storage.s3.storage import S3ObjectStorage

__all__ = ["S3ObjectStorage"]
