"""The WireFormat port: the wire contracts' encoding."""
