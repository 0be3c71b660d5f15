"""Shared test configuration. Service fixtures (brokers, S3, Elasticsearch) live in tests/services/."""

pytest_plugins = ["tests.services.fixtures"]
