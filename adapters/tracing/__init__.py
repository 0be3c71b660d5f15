"""The Tracing port, and the crash-campaign hook that decorates it."""
