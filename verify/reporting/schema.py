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


def validate(data: dict) -> None:
    """Raise `jsonschema.ValidationError` if `data` does not follow the schema (needs the jsonschema package)."""
    import jsonschema

    jsonschema.Draft202012Validator(schema()).validate(data)


def can_validate() -> bool:
    """Whether the optional jsonschema package is installed."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return False
    return True
