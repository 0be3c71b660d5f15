"""RabbitMQ (pika) adapters for the messaging ports; pika runs on dedicated threads."""

from ragline.adapters.messaging.rabbitmq.connection import RabbitConnection
from ragline.adapters.messaging.rabbitmq.publisher import RabbitPublisher
from ragline.adapters.messaging.rabbitmq.source import RabbitDelivery, RabbitTaskSource

__all__ = ["RabbitConnection", "RabbitDelivery", "RabbitPublisher", "RabbitTaskSource"]
