"""Reading policy files, with errors a person can act on (file, path inside it, what was expected)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from .errors import PolicyError

if TYPE_CHECKING:
    from .policy import PolicyKB

__all__ = ["format_loc", "load_policy_file", "validate_policy_data"]


def format_loc(loc: tuple[Any, ...]) -> str:
    """``('tools', 2, 'sink')`` → ``tools[2].sink``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before", "function-wrap") or "[" in str(part):
            continue  # pydantic's validator frames say nothing to a person
        else:
            out += f".{part}" if out else str(part)
    return out or "<top level>"


def load_policy_file(cls: type[PolicyKB], path: Path) -> PolicyKB:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(str(path), "<file>", "an existing policy file (YAML or JSON)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyError(str(path), "<file>", f"a readable UTF-8 file ({type(e).__name__})") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except json.JSONDecodeError as e:
        raise PolicyError(str(path), f"line {e.lineno}, column {e.colno}", f"valid JSON: {e.msg}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<file>"
        problem = getattr(e, "problem", None) or "a syntax error"
        raise PolicyError(str(path), where, f"valid YAML ({problem})") from None
    return validate_policy_data(cls, data, str(path))


def validate_policy_data(cls: type[PolicyKB], data: Any, source: str) -> PolicyKB:
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise PolicyError(source, "<top level>", "a mapping with keys atoms, tools, authorizations, rules")
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        problems = [_problem(err) for err in e.errors(include_url=False, include_input=False)]
        first_loc, first_msg = problems[0]
        err = PolicyError(source, first_loc, first_msg)
        err.problems = problems
        raise err from None


def _problem(err: Any) -> tuple[str, str]:
    loc = format_loc(tuple(err.get("loc", ())))
    msg = str(err.get("msg", "a valid value"))
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return loc, "no such key here (check the spelling against the canonical shape in DESIGN.md)"
    if kind == "missing":
        return loc, "this key (it is required)"
    if kind == "literal_error":
        return loc, msg.replace("Input should be", "one of")
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
        # model-level checks name their own path ("authorizations[3].atom: ...")
        if ": " in msg and ("[" in msg.split(": ", 1)[0] or loc == "<top level>"):
            inner, msg = msg.split(": ", 1)
            loc = inner if loc == "<top level>" else f"{loc}.{inner}"
    return loc, msg
