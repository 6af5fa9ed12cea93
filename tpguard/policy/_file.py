"""Reading policy files, with errors a person can act on (file, path inside it, what was expected).

YAML is read by :mod:`tpguard.policy._yaml` (no anchors, aliases, duplicate or merge keys; bounded depth;
libyaml when present). On top of the canonical shape a file must also write every atom value,
alias, variant and masked form as a *string*: an unquoted ``0042`` is the number 34 to YAML, ``12:30``
is 750, ``yes`` is true, and none of them would ever be detected as the text the author meant.
Errors never echo a value from the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import yaml
from pydantic import BaseModel, ValidationError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import PolicyError
from . import _yaml

if TYPE_CHECKING:
    from .kb import PolicyKB

__all__ = ["depth_exceeds", "format_loc", "load_policy_file", "validate_policy_data"]

_EMPTY = "a policy, but the file is empty (write at least one of atoms, tools, authorizations, rules)"
_TEXT_FIELDS = ("value", "aliases", "variants", "semantic_variants", "masked")
_STR_TAG = "tag:yaml.org,2002:str"
_YAML_KIND = {"int": "a number", "float": "a number", "bool": "true/false", "null": "empty (null)",
              "timestamp": "a date or time"}
#: Pydantic's names for the members of a union, which are not places in the file.
_UNION_TAGS = frozenset({"bool", "str", "int", "float", "none", "list", "tuple", "dict"})


def format_loc(loc: tuple[Any, ...]) -> str:
    """``('tools', 2, 'sink')`` → ``tools[2].sink``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _UNION_TAGS or str(part).startswith("function-") or "[" in str(part):
            continue  # pydantic's validator frames and union members say nothing to a person
        else:
            out += f".{part}" if out else str(part)
    return out or "<top level>"


def load_policy_file(cls: type[PolicyKB], path: Path) -> PolicyKB:
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise PolicyError(source, "<file>", "an existing policy file (YAML or JSON)") from None
    except IsADirectoryError:
        raise PolicyError(source, "<file>", "a policy file, not a directory") from None
    except UnicodeDecodeError as e:
        raise PolicyError(source, "<file>", f"UTF-8 text (byte {e.start} is not UTF-8)") from None
    except OSError as e:
        raise PolicyError(source, "<file>", f"a readable file ({type(e).__name__})") from None
    if path.suffix.lower() == ".json":
        data = _load_json(text, source)
    else:
        data = _load_yaml(text, source)
    if data is None or (isinstance(data, Mapping) and not data):
        raise PolicyError(source, "<top level>", _EMPTY)
    return validate_policy_data(cls, data, source)


# -- JSON ---------------------------------------------------------------------------------------
class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _load_json(text: str, source: str) -> Any:
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise PolicyError(source, f"line {e.lineno}, column {e.colno}", f"valid JSON ({e.msg})") from None
    except _DuplicateKey as e:
        raise PolicyError(source, "<file>", f"each key once in an object (duplicate key "
                                            f"{_yaml.key_name(e.args[0])})") from None
    except RecursionError:
        raise PolicyError(source, "<file>", f"at most {_yaml.MAX_DEPTH} levels of nesting") from None
    except ValueError:  # Python's int-string conversion limit
        raise PolicyError(source, "<file>", "numbers of at most 4300 digits") from None
    if depth_exceeds(data, _yaml.MAX_DEPTH):
        raise PolicyError(source, "<file>", f"at most {_yaml.MAX_DEPTH} levels of nesting")
    problems = [(p, f"a JSON string (write it in quotes; this is {type(v).__name__})")
                for p, v in _text_fields(data) if not isinstance(v, str)]
    _raise_all(source, problems)
    return data


def depth_exceeds(data: Any, limit: int) -> bool:
    """Whether loaded JSON data nests lists and dicts deeper than ``limit`` (iterative, O(size))."""
    stack = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            stack.extend((x, depth + 1) for x in (item.values() if isinstance(item, dict) else item))
    return False


def _text_fields(data: Any) -> Iterator[tuple[str, Any]]:
    """``(path, value)`` of every atom value, alias, variant and masked form in loaded data."""
    atoms = data.get("atoms") if isinstance(data, dict) else None
    for i, atom in enumerate(atoms if isinstance(atoms, list) else ()):
        for field, value in atom.items() if isinstance(atom, dict) else ():
            if field == "value":
                yield f"atoms[{i}].value", value
            elif field in _TEXT_FIELDS and isinstance(value, list):
                yield from ((f"atoms[{i}].{field}[{k}]", v) for k, v in enumerate(value))


# -- YAML ---------------------------------------------------------------------------------------
def _load_yaml(text: str, source: str) -> Any:
    try:
        loader, node = _yaml.compose(text)
        _raise_all(source, list(_unquoted(node)))
        return _yaml.construct(loader, node)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<file>"
        problem = getattr(e, "problem", None) or "a syntax error"
        expected = f"plain YAML: {problem}" if isinstance(e, _yaml.RefusedError) else f"valid YAML ({problem})"
        raise PolicyError(source, where, expected) from None


def _unquoted(root: Node | None) -> Iterator[tuple[str, str]]:
    """Atom text fields that YAML resolved to something other than a string."""
    atoms = _get(root, "atoms")
    for i, atom in enumerate(atoms.value if isinstance(atoms, SequenceNode) else ()):
        for key, value in atom.value if isinstance(atom, MappingNode) else ():
            field = key.value if isinstance(key, ScalarNode) else None
            if field == "value":
                yield from _not_text(value, f"atoms[{i}].value")
            elif field in _TEXT_FIELDS and isinstance(value, SequenceNode):
                for k, item in enumerate(value.value):
                    yield from _not_text(item, f"atoms[{i}].{field}[{k}]")


def _get(node: Node | None, key: str) -> Node | None:
    for k, v in node.value if isinstance(node, MappingNode) else ():
        if isinstance(k, ScalarNode) and k.value == key:
            return v
    return None


def _not_text(node: Node, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, ScalarNode) and node.tag != _STR_TAG:
        kind = _YAML_KIND.get(node.tag.rsplit(":", 1)[-1], "something other than text")
        yield path, (f"a quoted string at line {node.start_mark.line + 1}: YAML reads this "
                     f"unquoted value as {kind}, not as the text written; quote it")


# -- validation ---------------------------------------------------------------------------------
def _raise_all(source: str, problems: list[tuple[str, str]]) -> None:
    if problems:
        err = PolicyError(source, *problems[0])
        err.problems = problems
        raise err


def validate_policy_data(cls: type[PolicyKB], data: Any, source: str) -> PolicyKB:
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise PolicyError(source, "<top level>", "a mapping with keys atoms, tools, authorizations, rules")
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        problems: dict[str, str] = {}
        for item in e.errors(include_url=False, include_input=False):
            loc, msg = _problem(cls, item)
            problems.setdefault(loc, msg)  # a union reports once per member: keep the first
        err = PolicyError(source, *next(iter(problems.items())))
        err.problems = list(problems.items())
        raise err from None


_EXPECT = {
    "missing": "this key (it is required)",
    "string_type": "text (a string)",
    "string_too_short": "non-empty text",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "a number",
    "int_parsing": "a number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "tuple_type": "a list",
    "list_type": "a list",
    "dict_type": "a mapping (key: value lines)",
    "model_type": "a mapping (key: value lines)",
    "model_attributes_type": "a mapping (key: value lines)",
}
#: Fields whose union members would each report a message: one expectation for the field.
_FIELD_EXPECT = {"allow": "true, false or conditional"}


def _problem(cls: type[BaseModel], err: Any) -> tuple[str, str]:
    raw_loc = tuple(err.get("loc", ()))
    loc = format_loc(raw_loc)
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    names = [p for p in raw_loc if isinstance(p, str) and p in _FIELD_EXPECT]
    if kind == "extra_forbidden":
        return loc, f"one of the keys {', '.join(_keys_at(cls, raw_loc))} (this key is unknown here)"
    if names and kind not in ("missing", "policy"):
        return loc, _FIELD_EXPECT[names[-1]]
    if kind == "literal_error":
        return loc, f"one of {ctx.get('expected', '')}".rstrip()
    if kind in ("greater_than", "greater_than_equal"):
        bound = ctx.get("gt", ctx.get("ge"))
        shown = f"{bound:g}" if isinstance(bound, float) else str(bound)
        return loc, f"a number {'greater than' if 'gt' in ctx else 'at least'} {shown}"
    if kind in _EXPECT:
        return loc, _EXPECT[kind]
    msg = str(err.get("msg", "a valid value"))
    for prefix in ("Value error, ", "Assertion failed, ", "Input should be "):
        msg = msg.removeprefix(prefix)
    return loc, msg


def _keys_at(cls: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys a mapping at ``loc`` may have (the extra key itself is ``loc[-1]``)."""
    model: Any = cls
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            break
        inner = [a for a in get_args(field.annotation) if isinstance(a, type)]
        if not inner or not issubclass(inner[0], BaseModel):
            break
        model = inner[0]
    keys = list(model.model_fields)
    for f in model.model_fields.values():
        choices = getattr(f.validation_alias, "choices", ())
        keys += [c for c in choices if isinstance(c, str) and c not in keys]
    return keys
