"""Claim owners named after this host's processes (the ClaimHolders port)."""

from ragline.adapters.claim_holders.local_processes.claim_holders import LocalProcessHolders

__all__ = ["LocalProcessHolders"]
