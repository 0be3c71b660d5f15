"""RabbitMQ (pika) adapters for the messaging ports; pika runs on dedicated threads."""

from ragline.adapters.rabbitmq.connection import RabbitConnection
from ragline.adapters.rabbitmq.publisher import RabbitPublisher
from ragline.adapters.rabbitmq.source import RabbitDelivery, RabbitTaskSource

__all__ = ["RabbitConnection", "RabbitDelivery", "RabbitPublisher", "RabbitTaskSource"]
