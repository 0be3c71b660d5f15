"""Real servers on loopback ports for the contract kits, the tests and the campaigns: start,
wait, stop (`fixtures`: tansu for Kafka, moto for S3, noida-db for the Elasticsearch API;
`servers`: a fresh PostgreSQL database, a constant embeddings endpoint), the echoing server
that proves secrets stay out of texts, and `ragline` as a child process. A platform team runs
the kits against its own servers with these; `pytest_plugins =
["ragline.testing.services.fixtures"]` gives the session fixtures."""
