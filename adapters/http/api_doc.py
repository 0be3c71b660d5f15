"""Render docs/http-api.md from the app's OpenAPI document, with a curl example per
operation: `python -m ragline.adapters.http.api_doc > docs/http-api.md` (a test fails when
the page is stale)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from ragline.adapters.http.app import create_app
from ragline.adapters.http.auth import ApiTokens

HEADER = """# HTTP API (`ragline serve`)

Generated from the OpenAPI document by `python -m ragline.adapters.http.api_doc`; the live
document is `GET /openapi.json` and the Swagger UI `GET /docs` (its assets are served by the
process itself: no CDN, no internet). Deploying it: [operations.md](operations.md).

- **Auth**: `Authorization: Bearer <token>`, tokens from `RAGLINE_API_TOKENS` (a JSON object
  token → `user_id`, or `"*"` for a trusted service acting for the user a request names).
  No token or a wrong one: 401. Another tenant's run or document: 404. A user token acts
  for its own user whatever a body says; model-config writes and raw messages need `*`.
  With no tokens configured the server binds loopback only and acts as user `1`.
- **Object references** (buckets, keys, prefixes in a body or query): a user token names only
  keys under its own `<user_id>/` prefix of `RAGLINE_TENANT_BUCKETS`; `*` names any object
  but the parse cache's area. Refused: 403 whose `detail` is `<field>: <reason>`, before
  anything is read or published ([security.md](security.md)).
- **Errors**: RFC 9457 problem details (`application/problem+json`):
  `{"type", "title", "status", "detail", "errors": [{"field", "message"}]}`; a 422 names
  every offending field, a 413 says the size limit (`RAGLINE_HTTP_MAX_BODY_MB`).
- `BASE=http://127.0.0.1:8000` and `TOKEN=...` in the examples.
"""


def _example(operation: dict[str, Any], spec: dict[str, Any]) -> str | None:
    body = operation.get("requestBody", {}).get("content", {})
    if "application/json" in body:
        content = body["application/json"]
        examples = content.get("examples") or {}
        if examples:
            return json.dumps(next(iter(examples.values()))["value"], ensure_ascii=False)
        schema = content.get("schema", {})
        ref = schema.get("$ref", "")
        model = spec["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
        sample = {
            name: field.get("examples", [field.get("default")])[0]
            for name, field in model.get("properties", {}).items()
            if name in model.get("required", []) or field.get("examples")
        }
        return json.dumps(sample, ensure_ascii=False)
    return None


def _curl(method: str, path: str, operation: dict[str, Any], spec: dict[str, Any]) -> str:
    parts = [f'curl -sS -X {method.upper()} "$BASE{path}"']
    if operation.get("security"):
        parts.append('-H "Authorization: Bearer $TOKEN"')
    body = operation.get("requestBody", {}).get("content", {})
    if "multipart/form-data" in body:
        fields = body["multipart/form-data"].get("schema", {})
        ref = fields.get("$ref", "").rsplit("/", 1)[-1]
        names = spec["components"]["schemas"].get(ref, {}).get("properties", {})
        if "file" in names:
            parts.append("-F file=@document.pdf")
    example = _example(operation, spec)
    if example is not None:
        parts.append("-H 'Content-Type: application/json'")
        parts.append(f"-d '{example}'")
    return " \\\n  ".join(parts)


def _parameters(operation: dict[str, Any]) -> list[str]:
    rows = []
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        kind = schema.get("type") or "/".join(s.get("type", "") for s in schema.get("anyOf", []))
        required = "required" if parameter.get("required") else "optional"
        rows.append(f"| `{parameter['name']}` | {parameter['in']} | {kind} | {required} |")
    if not rows:
        return []
    return ["| parameter | in | type | |", "|---|---|---|---|", *rows, ""]


def render() -> str:
    # the document needs the routes only: no container is asked for anything
    spec = create_app(SimpleNamespace(), ApiTokens({})).openapi()
    lines = [HEADER]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            tag = (operation.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((method, path, operation))
    for tag, operations in by_tag.items():
        lines.append(f"## {tag}\n")
        for method, path, operation in operations:
            lines.append(f"### `{method.upper()} {path}` — {operation.get('summary', '')}\n")
            description = (operation.get("description") or "").strip()
            if description:
                lines.append(" ".join(description.split()) + "\n")
            lines += _parameters(operation)
            codes = ", ".join(
                f"{code} {answer.get('description', '')}".strip()
                for code, answer in operation.get("responses", {}).items()
            )
            lines.append(f"Responses: {codes}.\n")
            lines.append(f"```bash\n{_curl(method, path, operation, spec)}\n```\n")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
