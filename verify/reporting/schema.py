"""The JSON Schema of results.json, shipped with the package, and validation against it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("results.schema.json")


@cache
def schema() -> dict:
    """The results.json schema (JSON Schema draft 2020-12)."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def _inline(node, defs: dict):
    """`node` with every local `$ref` replaced by the definition (the schema has no recursive definitions)."""
    if isinstance(node, list):
        return [_inline(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _inline(v, defs) for k, v in node.items() if k not in ("$ref", "$defs")}
    ref = node.get("$ref")
    if ref is not None:
        out = {**_inline(defs[ref.removeprefix("#/$defs/")], defs), **out}
    return out


@cache
def _validator(definition: str | None):
    import jsonschema

    s = schema()
    jsonschema.Draft202012Validator.check_schema(s)
    root = s if definition is None else s["$defs"][definition]
    return jsonschema.Draft202012Validator(_inline(root, s["$defs"]))  # no $ref lookups: several times faster


def validate(data: dict | list, definition: str | None = None) -> None:
    """Raise `jsonschema.ValidationError` if `data` does not follow the schema, or its `$defs/<definition>`
    (e.g. "sweep", the items of a figure's data file). Needs the jsonschema package."""
    _validator(definition).validate(data)
