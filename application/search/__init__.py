"""Hybrid retrieval: dense + sparse + BM25, fused by reciprocal rank."""
