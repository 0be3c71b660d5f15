"""Message bus vendors (MQ_VENDOR)."""

from __future__ import annotations

from collections.abc import Callable

from ragline.application.ports.messaging import MessageBus
from ragline.bootstrap.registry.vendor import Port, Vendor
from ragline.bootstrap.settings import MqVendor, Settings

Build = Callable[[Settings], MessageBus]


def inprocess(settings: Settings) -> MessageBus:
    from ragline.adapters.messaging.inprocess.endpoints import InProcessEndpoints

    return InProcessEndpoints(settings.parse_task_topic, settings.parse_result_topic)


def kafka(settings: Settings) -> MessageBus:
    from ragline.adapters.messaging.kafka import KafkaConnection
    from ragline.adapters.messaging.kafka.endpoints import KafkaEndpoints

    chosen = settings.kafka
    password = chosen.sasl_password
    connection = KafkaConnection(
        chosen.bootstrap_servers,
        security_protocol=chosen.security_protocol,
        sasl_mechanism=chosen.sasl_mechanism,
        sasl_plain_username=chosen.sasl_username,
        sasl_plain_password=password.get_secret_value() if password else None,
    )
    return KafkaEndpoints(
        connection,
        bootstrap_servers=chosen.bootstrap_servers,
        task_topic=settings.parse_task_topic,
        result_topic=settings.parse_result_topic,
        group_id=chosen.group_id,
        max_poll_interval_ms=chosen.max_poll_interval_ms,
    )


def rabbitmq(settings: Settings) -> MessageBus:
    from ragline.adapters.messaging.rabbitmq.endpoints import RabbitEndpoints

    return RabbitEndpoints(
        settings.rabbitmq.url,
        task_topic=settings.parse_task_topic,
        result_topic=settings.parse_result_topic,
    )


MESSAGE_BUS: Port[MqVendor, Build] = Port(
    part="message_bus",
    setting="mq_vendor",
    names=MqVendor,
    vendors={
        MqVendor.INPROCESS: Vendor(inprocess, "inprocess"),
        MqVendor.KAFKA: Vendor(kafka, "kafka"),
        MqVendor.RABBITMQ: Vendor(rabbitmq, "rabbitmq"),
    },
    chosen=lambda settings: settings.mq_vendor,
)
