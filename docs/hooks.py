"""MkDocs hooks: the HTTP API reference generated from the service's own OpenAPI document."""

from __future__ import annotations

from typing import Any

MARK = "<!-- openapi -->"


def _openapi() -> dict[str, Any]:
    from neardup.service.http_api import ServiceSettings, create_app

    settings = ServiceSettings(db="unused.db", token="shown-as-secured")
    return create_app(settings, open_collection=lambda: None).openapi()  # type: ignore[arg-type,return-value]


def _schema_name(schema: dict[str, Any]) -> str:
    """A schema in a few words: a model's name, ``array of X``, ``a or b``, an enum's values."""
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[-1]}`"
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(f"`{v}`" for v in schema["enum"])
    if schema.get("type") == "array":
        return "array of " + _schema_name(schema.get("items", {}))
    return str(schema.get("type", "any"))


def _markdown(spec: dict[str, Any]) -> str:
    out = [f"Generated from the OpenAPI document of neardup {spec['info']['version']}."]
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            out.append(f"\n### `{method.upper()} {path}`\n")
            out.append((op.get("description") or op.get("summary") or "").strip() + "\n")
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                out.append(f"Body: {_schema_name(body['schema'])}, sent as `application/json`.\n")
            out.append("| status | meaning |\n|---|---|")
            for status, answer in op.get("responses", {}).items():
                out.append(f"| {status} | {answer.get('description', '')} |")
    out.append("\n### Schemas\n")
    for name, schema in spec.get("components", {}).get("schemas", {}).items():
        fields = schema.get("properties", {})
        if not fields:
            continue
        out.append(f"\n#### `{name}`\n")
        if schema.get("description"):
            out.append(schema["description"].strip() + "\n")
        out.append("| field | type | required |\n|---|---|---|")
        required = set(schema.get("required", []))
        for field, info in fields.items():
            kind = _schema_name(info)
            out.append(f"| `{field}` | {kind} | {'yes' if field in required else ''} |")
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, **_: Any) -> str:
    if MARK in markdown:
        return markdown.replace(MARK, _markdown(_openapi()))
    return markdown
