"""Session-scoped fixtures that start real servers on free loopback ports and stop them."""
