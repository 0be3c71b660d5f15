"""Shared test configuration; server fixtures (brokers, S3, Elasticsearch) are in tests/services."""

pytest_plugins = ["tests.services.fixtures"]
