"""The VectorIndex port: one package per vector store."""
