"""Checking received arguments against a tool's JSON Schema (the subset tool schemas use).

Errors name the argument and what was expected, never the value received.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ToolError

__all__ = ["check_schema", "email_like", "positive_amount", "require", "require_any", "text_of"]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "array": (list, tuple), "object": (Mapping,), "null": (type(None),),
}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")


def _is_type(value: Any, expected: str) -> bool:
    kinds = _JSON_TYPES.get(expected)
    if kinds is None:
        return True
    if expected in ("number", "integer") and isinstance(value, bool):
        return False
    return isinstance(value, kinds)


def _describe(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    t = schema.get("type", "a value")
    return " or ".join(t) if isinstance(t, list) else f"a {t}" if t != "array" else "a list"


def _check_value(name: str, value: Any, schema: Mapping[str, Any]) -> None:
    expected = schema.get("type")
    types = expected if isinstance(expected, list) else [expected] if expected else []
    if types and not any(_is_type(value, t) for t in types):
        raise ToolError(f"argument {name!r}: expected {_describe(schema)}, got {type(value).__name__}",
                        argument=name)
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"argument {name!r}: expected {_describe(schema)}", argument=name)
    if isinstance(value, str) and schema.get("minLength") and len(value) < schema["minLength"]:
        raise ToolError(f"argument {name!r}: expected at least {schema['minLength']} characters",
                        argument=name)
    if isinstance(value, int | float) and "minimum" in schema and value < schema["minimum"]:
        raise ToolError(f"argument {name!r}: expected a number ≥ {schema['minimum']}", argument=name)
    if isinstance(value, list | tuple) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _check_value(f"{name}[{i}]", item, schema["items"])


def check_schema(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None) -> None:
    """Reject missing required arguments, unknown ones (when ``additionalProperties`` is false),
    wrong types and values outside an ``enum``."""
    if not schema:
        return
    props: Mapping[str, Any] = schema.get("properties") or {}
    for name in schema.get("required", ()):
        if name not in arguments or arguments[name] is None or arguments[name] == "":
            raise ToolError(f"missing required argument {name!r}", argument=name)
    if schema.get("additionalProperties") is False:
        for name in arguments:
            if name not in props:
                known = ", ".join(sorted(props)) or "none"
                raise ToolError(f"unknown argument {name!r} (accepted: {known})", argument=name)
    for name, value in arguments.items():
        if name in props and value is not None:
            _check_value(name, value, props[name])


def require(arguments: Mapping[str, Any], names: Iterable[str]) -> None:
    for name in names:
        value = arguments.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ToolError(f"missing required argument {name!r}", argument=name)


def require_any(arguments: Mapping[str, Any], names: tuple[str, ...], what: str) -> str:
    """The first of ``names`` present with a non-empty value, else a ToolError naming them."""
    for name in names:
        value = arguments.get(name)
        if value not in (None, "", [], {}):
            return name
    raise ToolError(f"missing {what}: provide one of {', '.join(repr(n) for n in names)}")


def positive_amount(arguments: Mapping[str, Any], name: str = "amount") -> float:
    value = arguments.get(name)
    if isinstance(value, str):
        try:
            value = float(value.replace(",", "").replace("$", "").strip())
        except ValueError:
            raise ToolError(f"argument {name!r}: expected a positive number", argument=name) from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ToolError(f"argument {name!r}: expected a positive number", argument=name)
    return float(value)


def email_like(arguments: Mapping[str, Any], name: str) -> None:
    value = arguments.get(name)
    if not isinstance(value, str) or not _EMAIL.match(value.strip()):
        raise ToolError(f"argument {name!r}: expected an email address like name@example.com",
                        argument=name)


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)
