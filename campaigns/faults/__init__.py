"""The fault campaign: each dependency made unavailable at each stage (docs/reliability.md)."""
