"""Reusable port contract test kits: subclass one per adapter and provide its fixture."""
