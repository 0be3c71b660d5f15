"""The Clock port."""
