"""Every integer a route takes — in its path, its query or its JSON body — is range-checked
at the edge (issue 18: ids of 2^63 and more answered 500, an OverflowError in SQL).

The sweep reads the app's own OpenAPI document, builds a valid request for each operation,
and puts a value outside a signed 64-bit integer into each integer field in turn: every such
request is a 422 problem naming the field."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from fastapi.testclient import TestClient

from tests.http.conftest import SERVICE_TOKEN, bearer

OUTSIDE = (2**63, -(2**63) - 1, 10**30, -(10**30))
"""Past what a 64-bit column (or a Java long) holds, either way."""
Schema = dict[str, Any]
Path = tuple[str | int, ...]


def resolve(doc: Schema, schema: Schema) -> Schema:
    while "$ref" in schema:
        node: Any = doc
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def alternatives(doc: Schema, schema: Schema) -> list[Schema]:
    schema = resolve(doc, schema)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return [resolve(doc, s) for s in options if resolve(doc, s).get("type") != "null"]
    return [schema]


def instance(doc: Schema, schema: Schema) -> Any:
    """A valid value of `schema`: every property present (optional ones too, so that their
    integers are reached), examples and defaults where the document has them."""
    schema = alternatives(doc, schema)[0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {k: instance(doc, s) for k, s in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(doc, schema["items"])] * max(1, schema.get("minItems", 1))
    for key in ("examples", "enum"):
        if schema.get(key):
            return schema[key][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "number":
        return 1.0
    return "x" * max(1, schema.get("minLength", 1))


def integer_paths(doc: Schema, schema: Schema, at: Path = ()) -> Iterator[Path]:
    for option in alternatives(doc, schema):
        kind = option.get("type")
        if kind == "integer":
            yield at
        elif kind == "array":
            yield from integer_paths(doc, option["items"], (*at, 0))
        elif kind == "object" or "properties" in option:
            for name, child in option.get("properties", {}).items():
                yield from integer_paths(doc, child, (*at, name))


def with_value(body: Any, at: Path, value: int) -> Any:
    changed = copy.deepcopy(body)
    node = changed
    for part in at[:-1]:
        node = node[part]
    node[at[-1]] = value
    return changed


def operations(doc: Schema) -> Iterator[tuple[str, str, Schema]]:
    for path, methods in doc["paths"].items():
        for method, operation in methods.items():
            yield method, path, operation


def request_of(doc: Schema, path: str, operation: Schema) -> tuple[str, dict[str, Any], Any]:
    url, query = path, {}
    for parameter in operation.get("parameters", []):
        value = instance(doc, parameter["schema"])
        if parameter["in"] == "path":
            url = url.replace("{" + parameter["name"] + "}", str(value))
        elif parameter["in"] == "query":
            query[parameter["name"]] = value
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    return url, query, None if schema is None else instance(doc, schema)


def refused(response: Any, field: str) -> None:
    assert response.status_code == 422, (field, response.status_code, response.text[:300])
    assert response.headers["content-type"] == "application/problem+json"
    assert field in response.json()["detail"], (field, response.text[:300])


def test_every_integer_outside_64_bits_is_a_422_naming_its_field(client: TestClient) -> None:
    doc = client.app.openapi()  # type: ignore[attr-defined]
    swept = 0
    for method, path, operation in operations(doc):
        url, query, body = request_of(doc, path, operation)
        for parameter in operation.get("parameters", []):
            if not any(p == () for p in integer_paths(doc, parameter["schema"])):
                continue
            for value in OUTSIDE:
                name = parameter["name"]
                target = url
                if parameter["in"] == "path":  # the built URL holds the instance value
                    target = path.replace("{" + name + "}", str(value))
                asked = {**query, name: value} if parameter["in"] == "query" else query
                response = client.request(
                    method, target, params=asked, json=body, headers=bearer(SERVICE_TOKEN)
                )
                refused(response, name)
                swept += 1
        schema = operation.get("requestBody", {}).get("content", {})
        for media, described in schema.items():
            found = list(integer_paths(doc, described["schema"]))
            if media != "application/json":
                assert not found, f"{method} {path}: integers in a {media} body are not swept"
                continue
            for at in found:
                for value in OUTSIDE:
                    response = client.request(
                        method,
                        url,
                        params=query,
                        json=with_value(body, at, value),
                        headers=bearer(SERVICE_TOKEN),
                    )
                    refused(response, ".".join(map(str, at)))
                    swept += 1
    assert swept >= 40  # the ids of tasks, searches and the outbox, pages and sizes


def test_the_document_bounds_every_integer(client: TestClient) -> None:
    """What the sweep enforces is what the OpenAPI document tells a client."""
    doc = client.app.openapi()  # type: ignore[attr-defined]
    unbounded = []
    for method, path, operation in operations(doc):
        schemas = [p["schema"] for p in operation.get("parameters", [])]
        bodies = operation.get("requestBody", {}).get("content", {}).values()
        schemas += [c["schema"] for c in bodies]
        for schema in schemas:
            for at in integer_paths(doc, schema):
                node: Any = schema
                for part in at:
                    node = alternatives(doc, node)[0]
                    node = node["items"] if isinstance(part, int) else node["properties"][part]
                leaf = alternatives(doc, node)[0]
                if "maximum" not in leaf or "minimum" not in leaf:
                    unbounded.append(f"{method} {path} {'.'.join(map(str, at)) or '(param)'}")
    assert unbounded == []
