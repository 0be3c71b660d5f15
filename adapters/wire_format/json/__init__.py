"""The JSON wire format of `ragline.contracts.wire`, as the application's WireFormat port."""

from ragline.adapters.wire_format.json.format import (
    JsonWireFormat,
    command_of,
    decode_task,
    result_message,
)
from ragline.adapters.wire_format.json.publishers import JsonResultPublisher, JsonTaskPublisher

__all__ = [
    "JsonResultPublisher",
    "JsonTaskPublisher",
    "JsonWireFormat",
    "command_of",
    "decode_task",
    "result_message",
]
