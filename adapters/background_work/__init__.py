"""BackgroundWork adapters: where blocking background work runs."""
