"""Forced re-ingest vs the first ingest (issue 24 item 2)."""
