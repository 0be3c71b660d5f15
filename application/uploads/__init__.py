"""Uploads: a tenant's file bytes into object storage under its own prefix, and the ordinary
parse task for them."""

from ragline.application.uploads.sniff import UnsupportedUpload, sniff
from ragline.application.uploads.use_case import (
    BadUpload,
    IdempotencyConflict,
    Upload,
    UploadAccepted,
    UploadDocument,
    UploadTooLarge,
)

__all__ = [
    "BadUpload",
    "IdempotencyConflict",
    "UnsupportedUpload",
    "Upload",
    "UploadAccepted",
    "UploadDocument",
    "UploadTooLarge",
    "sniff",
]
