"""The PageOcr port."""
