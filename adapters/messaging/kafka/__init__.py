"""Kafka (aiokafka) adapters for the messaging ports."""

from ragline.adapters.messaging.kafka.connection import KafkaConnection
from ragline.adapters.messaging.kafka.publisher import KafkaPublisher
from ragline.adapters.messaging.kafka.source import KafkaDelivery, KafkaTaskSource

__all__ = ["KafkaConnection", "KafkaDelivery", "KafkaPublisher", "KafkaTaskSource"]
