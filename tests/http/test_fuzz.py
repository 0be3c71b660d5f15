"""`ragline serve` fuzzed from its own OpenAPI document (schemathesis, over HTTP against the
server process): no input gives a 5xx, and every response matches what its operation
documents."""

from __future__ import annotations

import json
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks

from tests.e2e.serve_process import ragline_server
from tests.http.conftest import SERVICE_TOKEN, TOKENS, bearer

EXAMPLES_PER_OPERATION = 15
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.negative_data_rejection,
]
"""Every check but positive_data_acceptance: some schema-valid requests are refused on
purpose, with a 4xx problem naming why (an unknown chunk plan, neither a file nor an object
key given, a retry of a run that cannot be retried)."""


def test_no_input_breaks_the_server(tmp_path: Path) -> None:
    env = {"RAGLINE_API_TOKENS": json.dumps(TOKENS), "RAGLINE_HTTP_MAX_BODY_MB": "2"}
    with ragline_server(tmp_path / "data", "serve", env=env) as (base, log):
        schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 10
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
            )
            def call(case: schemathesis.Case) -> None:
                case.call_and_validate(base_url=base, headers=bearer(SERVICE_TOKEN), checks=CHECKS)

            call()
        assert "Traceback" not in log.read_text(errors="replace")
