"""ragline.domain."""
