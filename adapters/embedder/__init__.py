"""The Embedder port: one package per model family, and the text rule they share."""
