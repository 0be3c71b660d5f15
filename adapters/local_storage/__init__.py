"""Object storage on the local filesystem: the embedded default."""

from ragline.adapters.local_storage.storage import LocalObjectStorage

__all__ = ["LocalObjectStorage"]
