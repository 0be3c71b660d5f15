"""Log line formatting (not a port: bootstrap installs it on the logging module)."""
