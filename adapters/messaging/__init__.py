"""The messaging ports (MessageBus, publishers, consumers).

One package per broker, plus what the bus adapters share.
"""
