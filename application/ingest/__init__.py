"""Ingest local files through the parse-task pipeline."""
