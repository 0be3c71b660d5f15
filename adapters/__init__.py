"""ragline.adapters."""
