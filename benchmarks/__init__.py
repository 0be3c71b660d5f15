"""Benchmarks (not tests): speed and memory measured against peers, written as JSON."""
