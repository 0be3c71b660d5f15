"""Hostile requests against `ragline serve` (issue 18): see __main__."""
