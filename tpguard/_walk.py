"""Walking and rebuilding nested tool arguments.

Arguments are dicts, lists, tuples, pydantic models, dataclasses, numbers, enums, dates and None.
Each text leaf is reported with its argument path (``items[2].comment``); rebuilding replaces leaves
at paths and leaves everything else — including the caller's objects — untouched.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import uuid
from collections.abc import Iterator, Mapping
from decimal import Decimal
from pathlib import PurePath
from typing import Any

__all__ = ["MAX_DEPTH", "iter_leaves", "replace_at", "to_jsonable"]

MAX_DEPTH = 32
_TEXTLIKE = (_dt.date, _dt.time, Decimal, uuid.UUID, PurePath)


def _leaf_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # Two decimals where the value has at most two (amounts): 1250.0 → "1250.00".
        return f"{value:.2f}" if round(value, 2) == value else repr(value)
    if isinstance(value, enum.Enum):
        return _leaf_text(value.value)
    if isinstance(value, _TEXTLIKE):
        return str(value)
    return None


def _children(value: Any) -> Iterator[tuple[str | int, Any]] | None:
    if isinstance(value, Mapping):
        return ((str(k), v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return enumerate(value)
    if isinstance(value, set | frozenset):
        return enumerate(sorted(value, key=repr))
    fields = getattr(type(value), "model_fields", None)  # pydantic v2 model
    if isinstance(fields, dict) and hasattr(value, "model_copy"):
        return ((name, getattr(value, name, None)) for name in fields)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
    return None


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def iter_leaves(value: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, str, str]]:
    """Yield ``(path, last_key, text)`` for every text-bearing leaf."""
    text = _leaf_text(value)
    if text is not None:
        if text:
            yield path, path.rsplit(".", 1)[-1].split("[", 1)[0], text
        return
    if depth >= MAX_DEPTH:
        return
    children = _children(value)
    if children is None:
        return
    for key, child in children:
        yield from iter_leaves(child, _join(path, key), depth + 1)


def replace_at(value: Any, replacements: Mapping[str, Any], path: str = "") -> Any:
    """A copy of ``value`` with the leaves at ``replacements``' paths replaced (others shared)."""
    if path in replacements:
        return replacements[path]
    if not any(p.startswith(path) for p in replacements):
        return value
    if isinstance(value, Mapping):
        return {k: replace_at(v, replacements, _join(path, str(k))) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [replace_at(v, replacements, _join(path, i)) for i, v in enumerate(value)]
        return items if isinstance(value, list) else type(value)(items)
    fields = getattr(type(value), "model_fields", None)
    if isinstance(fields, dict) and hasattr(value, "model_copy"):
        update = {n: replace_at(getattr(value, n), replacements, _join(path, n)) for n in fields}
        return value.model_copy(update=update)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        update = {
            f.name: replace_at(getattr(value, f.name), replacements, _join(path, f.name))
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **update)
    return value


def to_jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of ``value`` (models and dataclasses become dicts)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth >= MAX_DEPTH:
        return "…"
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, depth + 1)
    if isinstance(value, _TEXTLIKE):
        return str(value)
    children = _children(value)
    if children is None:
        return f"<{type(value).__name__}>"
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v, depth + 1) for _, v in children]
    return {str(k): to_jsonable(v, depth + 1) for k, v in children}
