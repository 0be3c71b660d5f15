"""Shared test configuration; the server fixtures (brokers, S3, Elasticsearch) come from
ragline.testing.services."""

import os

from hypothesis import HealthCheck, settings

# "ci": fixed seed, a few hundred examples for the state machines; "long": the soak profile
# (HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest tests/domain).
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

pytest_plugins = ["ragline.testing.services.fixtures", "ragline.testing.services.echo_server"]
