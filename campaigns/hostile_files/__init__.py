"""Hostile files campaign: `.venv/bin/python -m campaigns.hostile_files`."""
