"""End-to-end tests: `ragline` driven as a subprocess, each run with its own data dir."""
