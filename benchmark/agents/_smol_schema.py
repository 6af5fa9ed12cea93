"""JSON schema → smolagents ``Tool.inputs`` (types, descriptions, nullable optional inputs)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["smol_inputs"]

_TYPES = {"string", "boolean", "integer", "number", "array", "object", "null"}


def _type(schema: dict[str, Any]) -> tuple[str, bool]:
    t = schema.get("type")
    if isinstance(t, list):
        kinds = [k for k in t if k != "null"]
        return (kinds[0] if len(kinds) == 1 and kinds[0] in _TYPES else "any"), "null" in t
    if isinstance(t, str) and t in _TYPES:
        return t, False
    return "any", False


def smol_inputs(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    props: dict[str, Any] = schema.get("properties", {}) or {}
    required = set(schema.get("required", ()) or ())
    out: dict[str, dict[str, Any]] = {}
    for name, prop in props.items():
        kind, nullable = _type(prop if isinstance(prop, dict) else {})
        desc = str(prop.get("description") or name)
        if prop.get("enum"):
            desc += f" (one of: {', '.join(map(str, prop['enum']))})"
        elif kind == "any" and isinstance(prop, dict) and prop.get("anyOf"):
            # smolagents offers an "any" input to the model as a string: say what it may hold
            desc += f" ({_alternatives(prop['anyOf'])}; as text, a list is comma-separated)"
        entry: dict[str, Any] = {"type": kind, "description": desc}
        if nullable or name not in required:
            entry["nullable"] = True
        out[name] = entry
    return out


def _alternatives(options: list[Any]) -> str:
    """``anyOf`` alternatives in words: ``a list of strings, or "*"``."""
    words = []
    for o in options if isinstance(options, list) else ():
        if not isinstance(o, dict):
            continue
        if "const" in o:
            words.append(json.dumps(o["const"]))
        elif o.get("type") == "array":
            item = (o.get("items") or {}).get("type", "value")
            words.append(f"a list of {item}s")
        elif isinstance(o.get("type"), str):
            words.append(f"a {o['type']}")
    return ", or ".join(words) or "any value"
