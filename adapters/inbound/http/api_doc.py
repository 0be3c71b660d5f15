"""Render docs/http-api.md from the app's OpenAPI document, with a curl example per
operation: `python -m ragline.adapters.inbound.http.api_doc > docs/http-api.md` (a test fails when
the page is stale)."""

from __future__ import annotations

import json
import shlex
from urllib.parse import quote

from ragline.adapters.inbound.entry import unwired
from ragline.adapters.inbound.http.app import create_app
from ragline.adapters.inbound.http.auth import ApiTokens

HEADER = """# HTTP API (`ragline serve`)

Generated from the OpenAPI document by `python -m ragline.adapters.inbound.http.api_doc`; the live
document is `GET /openapi.json` and the Swagger UI `GET /docs` (its assets are served by the
process itself: no CDN, no internet). Deploying it: [operations.md](operations.md).

- **Auth**: `Authorization: Bearer <token>`, tokens from `RAGLINE_API_TOKENS` (a JSON object
  token → `user_id`, or `"*"` for a trusted service acting for the user a request names).
  No token or a wrong one: 401. Another tenant's run, document or re-embedding: 404. A user
  token acts for its own user whatever a body says; model-config writes (and cancelling a
  re-embedding) and raw messages need `*`.
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
  `task-20260516-002` of document 12346, the PLANNED re-embedding `reembed-20260516-001` of
  user 1001, and `document.pdf` in the working directory.
"""


class MissingExample(ValueError):
    """An operation whose curl example would not run: a required parameter without one."""


class Node:
    """One value of the OpenAPI document, read without trusting its shape: a missing key or
    a value of another kind reads as empty."""

    def __init__(self, value: object = None) -> None:
        self.value = value

    def __getitem__(self, key: str) -> Node:
        return Node(self.value.get(key)) if isinstance(self.value, dict) else Node()

    def __contains__(self, key: str) -> bool:
        return isinstance(self.value, dict) and key in self.value

    def __bool__(self) -> bool:
        return bool(self.value)

    def items(self) -> list[tuple[str, Node]]:
        if not isinstance(self.value, dict):
            return []
        return [(str(key), Node(value)) for key, value in self.value.items()]

    def values(self) -> list[Node]:
        if isinstance(self.value, dict):
            return [Node(value) for value in self.value.values()]
        if isinstance(self.value, list):
            return [Node(value) for value in self.value]
        return []

    def first(self) -> Node:
        found = self.values()
        return found[0] if found else Node()

    def text(self, default: str = "") -> str:
        return default if self.value is None else str(self.value)

    def names(self) -> list[str]:
        return [str(item.value) for item in self.values()]


def _schema(schema: Node, spec: Node) -> Node:
    ref = schema["$ref"].text()
    if ref:
        return spec["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    return schema


def _type(schema: Node, spec: Node) -> str:
    """`string`, `integer/null`, `basic/quality` (an enum's values), `array of integer`."""
    schema = _schema(schema, spec)
    if "anyOf" in schema:
        return "/".join(_type(option, spec) for option in schema["anyOf"].values())
    if "enum" in schema:
        return "/".join(schema["enum"].names())
    if schema["type"].value == "array":
        return f"array of {_type(schema['items'], spec)}"
    if schema["contentMediaType"].value == "application/octet-stream":
        return "file"
    return schema["type"].text("any")


def _example_of(parameter: Node) -> object:
    examples = parameter["examples"]
    if isinstance(examples.value, dict) and examples:
        return examples.first()["value"].value
    return parameter["schema"]["examples"].first().value


def _url(path: str, operation: Node) -> str:
    """The path with each path parameter's example, and every query parameter that has one."""
    query = []
    for parameter in operation["parameters"].values():
        example = _example_of(parameter)
        name = parameter["name"].text()
        if example is None:
            if parameter["required"]:
                raise MissingExample(f"{path}: parameter {name} has no example")
            continue
        if parameter["in"].value == "path":
            path = path.replace("{" + name + "}", quote(str(example), safe=""))
        elif parameter["in"].value == "query":
            query.append(f"{name}={quote(str(example), safe='/,:')}")
    return path + ("?" + "&".join(query) if query else "")


def _body_model(operation: Node, spec: Node, kind: str) -> Node:
    content = operation["requestBody"]["content"]
    return _schema(content[kind]["schema"], spec) if kind in content else Node()


def _example(operation: Node, spec: Node) -> str | None:
    """The JSON body: the operation's first example, else the model's, else its fields'."""
    body = operation["requestBody"]["content"]
    if "application/json" not in body:
        return None
    examples = body["application/json"]["examples"]
    if examples:
        return json.dumps(examples.first()["value"].value, ensure_ascii=False)
    model = _body_model(operation, spec, "application/json")
    if model["examples"]:
        return json.dumps(model["examples"].first().value, ensure_ascii=False)
    sample: dict[str, object] = {}
    for name, field in model["properties"].items():
        if field["examples"]:
            sample[name] = field["examples"].first().value
        elif name in model["required"].names():
            raise MissingExample(f"body field {name} has no example")
    return json.dumps(sample, ensure_ascii=False)


def _curls(method: str, path: str, operation: Node, spec: Node) -> list[str]:
    """One curl per way of calling: a multipart upload whose file is optional gets a second
    one with the other fields' examples instead of the file."""
    head = [f'curl -sS -X {method.upper()} "$BASE{_url(path, operation)}"']
    if operation["security"]:
        head.append('-H "Authorization: Bearer $TOKEN"')
    form = _body_model(operation, spec, "multipart/form-data")
    if form:
        fields = form["properties"]
        ways = [[*head, "-F file=@document.pdf"]] if "file" in fields else [head]
        instead = [
            "-F " + shlex.quote(f"{name}={field['examples'].first().text()}")
            for name, field in fields.items()
            if name != "file" and field["examples"]
        ]
        if instead and "file" not in form["required"].names():
            ways.append([*head, *instead])
        return [" \\\n  ".join(parts) for parts in ways]
    example = _example(operation, spec)
    if example is not None:
        head.append("-H 'Content-Type: application/json'")
        head.append(f"-d {shlex.quote(example)}")
    return [" \\\n  ".join(head)]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _parameters(operation: Node, spec: Node) -> list[str]:
    rows = []
    for parameter in operation["parameters"].values():
        schema = parameter["schema"]
        required = "required" if parameter["required"] else "optional"
        description = parameter["description"].text() or schema["description"].text()
        rows.append(
            f"| `{parameter['name'].text()}` | {parameter['in'].text()} | {_type(schema, spec)} "
            f"| {required} | {_cell(description)} |"
        )
    for kind, where in (("application/json", "body"), ("multipart/form-data", "form")):
        model = _body_model(operation, spec, kind)
        for name, field in model["properties"].items():
            required = "required" if name in model["required"].names() else "optional"
            rows.append(
                f"| `{name}` | {where} | {_type(field, spec)} | {required} "
                f"| {_cell(field['description'].text())} |"
            )
    if not rows:
        return []
    return ["| parameter | in | type | | description |", "|---|---|---|---|---|", *rows, ""]


def render(spec: dict[str, object] | None = None) -> str:
    """The page for `spec` (default: the app's; the document needs the routes only, nothing
    is wired). MissingExample when an example could not run."""
    document = Node(create_app(unwired(), ApiTokens({})).openapi() if spec is None else spec)
    lines = [HEADER]
    by_tag: dict[str, list[tuple[str, str, Node]]] = {}
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            tag = operation["tags"].first().text("other") if operation["tags"] else "other"
            by_tag.setdefault(tag, []).append((method, path, operation))
    for tag, operations in by_tag.items():
        lines.append(f"## {tag}\n")
        for method, path, operation in operations:
            lines.append(f"### `{method.upper()} {path}` — {operation['summary'].text()}\n")
            description = operation["description"].text().strip()
            if description:
                lines.append(" ".join(description.split()) + "\n")
            lines += _parameters(operation, document)
            codes = ", ".join(
                f"{code} {answer['description'].text()}".strip()
                for code, answer in operation["responses"].items()
            )
            lines.append(f"Responses: {codes}.\n")
            for curl in _curls(method, path, operation, document):
                lines.append(f"```bash\n{curl}\n```\n")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
