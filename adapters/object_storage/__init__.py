"""The ObjectStorage port: one package per store."""
