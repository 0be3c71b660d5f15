"""Object storage on the local filesystem: the embedded default."""

from ragline.adapters.object_storage.local.storage import LocalObjectStorage

__all__ = ["LocalObjectStorage"]
