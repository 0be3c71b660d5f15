"""In-process message bus for embedded mode: the Kafka-like semantics without a broker."""

from ragline.adapters.messaging.inprocess.bus import (
    InProcessBus,
    InProcessDelivery,
    InProcessPublisher,
    InProcessTaskSource,
)

__all__ = ["InProcessBus", "InProcessDelivery", "InProcessPublisher", "InProcessTaskSource"]
