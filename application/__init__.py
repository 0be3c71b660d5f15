"""ragline.application."""
