"""Main-job ingest benchmark (issue 5): ragline vs. its embedding floor and LlamaIndex."""
