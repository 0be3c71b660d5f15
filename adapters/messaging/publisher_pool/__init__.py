"""One publisher per role for a bus's lifetime, closed together (used by every bus adapter)."""

from ragline.adapters.messaging.publisher_pool.pool import ClosingPublisher, SharedPublishers

__all__ = ["ClosingPublisher", "SharedPublishers"]
