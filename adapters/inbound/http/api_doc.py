"""Render docs/http-api.md from the app's OpenAPI document, with a curl example per
operation: `python -m ragline.adapters.inbound.http.api_doc > docs/http-api.md` (a test fails when
the page is stale)."""

from __future__ import annotations

import json
import shlex
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

from ragline.adapters.inbound.http.app import create_app
from ragline.adapters.inbound.http.auth import ApiTokens

HEADER = """# HTTP API (`ragline serve`)

Generated from the OpenAPI document by `python -m ragline.adapters.inbound.http.api_doc`; the live
document is `GET /openapi.json` and the Swagger UI `GET /docs` (its assets are served by the
process itself: no CDN, no internet). Deploying it: [operations.md](operations.md).

- **Auth**: `Authorization: Bearer <token>`, tokens from `RAGLINE_API_TOKENS` (a JSON object
  token → `user_id`, or `"*"` for a trusted service acting for the user a request names).
  No token or a wrong one: 401. Another tenant's run or document: 404. A user token acts
  for its own user whatever a body says; model-config writes and raw messages need `*`.
  With no tokens configured the server binds loopback only and acts as user `1`; it then
  answers only a loopback `Host` (421 otherwise) and refuses a cross-site request that
  changes state (an `Origin` that is not loopback, `Sec-Fetch-Site: cross-site`: 403).
- **Object references** (buckets, keys, prefixes in a body or query): a user token names only
  keys under its own `<user_id>/` prefix of `RAGLINE_TENANT_BUCKETS`; `*` names any object
  but the parse cache's area. Refused: 403 whose `detail` is `<field>: <reason>`, before
  anything is read or published ([security.md](security.md)).
- **Errors**: RFC 9457 problem details (`application/problem+json`):
  `{"type", "title", "status", "detail", "errors": [{"field", "message"}]}`; a 422 names
  every offending field, a 413 says the size limit (`RAGLINE_HTTP_MAX_BODY_MB`).
- **Bounds**: integers are range-checked (422), page ranges end at page 100,000 and at the
  document's last page (422); a request head or body that does not arrive in time is 408
  and the connection is closed; chunk previews and synchronous extracts beyond their
  slots and queue are 503 with `Retry-After` ([security.md](security.md#bounded-work)).
- **Examples** run as written (`tests/docs/test_curl_examples.py` runs every one against
  `ragline serve`) with `BASE=http://127.0.0.1:8000` and `TOKEN` a service token (`*`). They
  name the seed's objects: user 1001, dataset 2001, the task `task-20260516-001` of document
  12345 whose source is `tolink-rag-docs/raw/2026/05/16/doc-001.pdf`, a FAILED run
  `task-20260516-002` of document 12346, and `document.pdf` in the working directory.
"""


class MissingExample(ValueError):
    """An operation whose curl example would not run: a required parameter without one."""


def _schema(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref", "")
    if ref:
        named: dict[str, Any] = spec["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
        return named
    return schema


def _type(schema: dict[str, Any], spec: dict[str, Any]) -> str:
    """`string`, `integer/null`, `basic/quality` (an enum's values), `array of integer`."""
    schema = _schema(schema, spec)
    if "anyOf" in schema:
        return "/".join(_type(option, spec) for option in schema["anyOf"])
    if "enum" in schema:
        return "/".join(str(value) for value in schema["enum"])
    if schema.get("type") == "array":
        return f"array of {_type(schema.get('items', {}), spec)}"
    if schema.get("contentMediaType") == "application/octet-stream":
        return "file"
    return str(schema.get("type", "any"))


def _example_of(parameter: dict[str, Any]) -> Any:
    examples = parameter.get("examples")
    if isinstance(examples, dict) and examples:
        return next(iter(examples.values()))["value"]
    listed = parameter.get("schema", {}).get("examples")
    return listed[0] if listed else None


def _url(path: str, operation: dict[str, Any]) -> str:
    """The path with each path parameter's example, and every query parameter that has one."""
    query = []
    for parameter in operation.get("parameters", []):
        example = _example_of(parameter)
        if example is None:
            if parameter.get("required"):
                raise MissingExample(f"{path}: parameter {parameter['name']} has no example")
            continue
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", quote(str(example), safe=""))
        elif parameter["in"] == "query":
            query.append(f"{parameter['name']}={quote(str(example), safe='/,:')}")
    return path + ("?" + "&".join(query) if query else "")


def _body_model(operation: dict[str, Any], spec: dict[str, Any], kind: str) -> dict[str, Any]:
    content = operation.get("requestBody", {}).get("content", {}).get(kind)
    return {} if content is None else _schema(content.get("schema", {}), spec)


def _example(operation: dict[str, Any], spec: dict[str, Any]) -> str | None:
    """The JSON body: the operation's first example, else the model's, else its fields'."""
    body = operation.get("requestBody", {}).get("content", {})
    if "application/json" not in body:
        return None
    examples = body["application/json"].get("examples") or {}
    if examples:
        return json.dumps(next(iter(examples.values()))["value"], ensure_ascii=False)
    model = _body_model(operation, spec, "application/json")
    if model.get("examples"):
        return json.dumps(model["examples"][0], ensure_ascii=False)
    sample = {}
    for name, field in model.get("properties", {}).items():
        if field.get("examples"):
            sample[name] = field["examples"][0]
        elif name in model.get("required", []):
            raise MissingExample(f"body field {name} has no example")
    return json.dumps(sample, ensure_ascii=False)


def _curls(method: str, path: str, operation: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    """One curl per way of calling: a multipart upload whose file is optional gets a second
    one with the other fields' examples instead of the file."""
    head = [f'curl -sS -X {method.upper()} "$BASE{_url(path, operation)}"']
    if operation.get("security"):
        head.append('-H "Authorization: Bearer $TOKEN"')
    form = _body_model(operation, spec, "multipart/form-data")
    if form:
        fields = form.get("properties", {})
        ways = [[*head, "-F file=@document.pdf"]] if "file" in fields else [head]
        instead = [
            "-F " + shlex.quote(f"{name}={field['examples'][0]}")
            for name, field in fields.items()
            if name != "file" and field.get("examples")
        ]
        if instead and "file" not in form.get("required", []):
            ways.append([*head, *instead])
        return [" \\\n  ".join(parts) for parts in ways]
    example = _example(operation, spec)
    if example is not None:
        head.append("-H 'Content-Type: application/json'")
        head.append(f"-d {shlex.quote(example)}")
    return [" \\\n  ".join(head)]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _parameters(operation: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    rows = []
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        required = "required" if parameter.get("required") else "optional"
        description = parameter.get("description") or schema.get("description") or ""
        rows.append(
            f"| `{parameter['name']}` | {parameter['in']} | {_type(schema, spec)} | {required} "
            f"| {_cell(description)} |"
        )
    for kind, where in (("application/json", "body"), ("multipart/form-data", "form")):
        model = _body_model(operation, spec, kind)
        for name, field in model.get("properties", {}).items():
            required = "required" if name in model.get("required", []) else "optional"
            rows.append(
                f"| `{name}` | {where} | {_type(field, spec)} | {required} "
                f"| {_cell(field.get('description', ''))} |"
            )
    if not rows:
        return []
    return ["| parameter | in | type | | description |", "|---|---|---|---|---|", *rows, ""]


def render(spec: dict[str, Any] | None = None) -> str:
    """The page for `spec` (default: the app's; the document needs the routes only, no
    container is asked for anything). MissingExample when an example could not run."""
    if spec is None:
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
            lines += _parameters(operation, spec)
            codes = ", ".join(
                f"{code} {answer.get('description', '')}".strip()
                for code, answer in operation.get("responses", {}).items()
            )
            lines.append(f"Responses: {codes}.\n")
            for curl in _curls(method, path, operation, spec):
                lines.append(f"```bash\n{curl}\n```\n")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
