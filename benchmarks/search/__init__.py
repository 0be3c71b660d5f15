"""Main-job search benchmark (issue 5): HybridSearch latency over a large tenant index."""
