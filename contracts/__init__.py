"""ragline.contracts."""
