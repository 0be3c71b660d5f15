"""Retrieval-quality development sets (issue 13): corpora from Debian packages, gold files."""
