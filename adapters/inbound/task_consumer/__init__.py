"""The driving adapter of the task topic: deliveries in, decoded once, the pipeline called."""

from ragline.adapters.inbound.task_consumer.consumer import (
    SupervisedConsumer,
    TaskConsumer,
    TaskDecoder,
)
from ragline.adapters.inbound.task_consumer.worker import Worker

__all__ = ["SupervisedConsumer", "TaskConsumer", "TaskDecoder", "Worker"]
