"""The Parser port: the built-in sandboxed parsers and the MinerU client."""
