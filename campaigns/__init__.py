"""Reliability campaigns: long-running proofs with one documented command each."""
