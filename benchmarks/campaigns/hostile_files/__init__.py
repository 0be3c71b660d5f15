"""Hostile files campaign: `.venv/bin/python -m benchmarks.campaigns.hostile_files`."""
