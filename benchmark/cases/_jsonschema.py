"""The JSON Schema of :class:`~.schema.Case`, committed as ``docs/case.schema.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .schema import Case

__all__ = ["case_json_schema", "case_json_schema_text", "write_case_schema"]


def case_json_schema() -> dict[str, Any]:
    schema = Case.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def case_json_schema_text() -> str:
    return json.dumps(case_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_case_schema(path: str | Path) -> Path:
    """Write the schema (``python -m tpguard.benchmark.cases._jsonschema docs/case.schema.json``)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(case_json_schema_text(), encoding="utf-8")
    return p


if __name__ == "__main__":  # pragma: no cover
    import sys

    print(write_case_schema(sys.argv[1] if len(sys.argv) > 1 else "docs/case.schema.json"))
