"""The SparseEncoder port."""
