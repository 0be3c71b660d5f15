"""VectorIndex on PostgreSQL + pgvector: HNSW for dense vectors, a postings table for the
IDF-weighted sparse vectors."""

from ragline.adapters.vector_index.pgvector.index import PgvectorVectorIndex, open_pgvector_index

__all__ = ["PgvectorVectorIndex", "open_pgvector_index"]
