"""Kafka (aiokafka) adapters for the messaging ports."""

from ragline.adapters.kafka.connection import KafkaConnection
from ragline.adapters.kafka.publisher import KafkaPublisher
from ragline.adapters.kafka.source import KafkaDelivery, KafkaTaskSource

__all__ = ["KafkaConnection", "KafkaDelivery", "KafkaPublisher", "KafkaTaskSource"]
