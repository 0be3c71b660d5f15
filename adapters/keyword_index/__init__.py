"""The KeywordIndex (BM25) port: one package per engine."""
