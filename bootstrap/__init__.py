"""ragline.bootstrap."""
