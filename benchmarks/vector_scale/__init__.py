"""Vector search at scale (issue 20 item 5): the VectorIndex adapters side by side."""
