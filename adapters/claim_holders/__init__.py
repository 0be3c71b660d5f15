"""The ClaimHolders port: which claim owners are still alive."""
