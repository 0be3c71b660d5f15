"""The PageCounter port."""
