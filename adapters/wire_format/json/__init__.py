"""The JSON wire format of `ragline.contracts.wire`, as the application's WireFormat port."""

from ragline.adapters.wire_format.json.format import JsonWireFormat, command_of, result_message

__all__ = ["JsonWireFormat", "command_of", "result_message"]
