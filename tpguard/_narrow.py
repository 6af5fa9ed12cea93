"""Request narrowing: a scoped tool's request cut to the task's minimum scope *before* the call.

PrivacyPeek (seed ``001_*`` §3, §6): the same data-access tool takes a narrow or a broad request
(``fields="*"``, a whole file, every subject's records, an open date range); controls must act before
information enters the context. :func:`narrow` rewrites, by the tool's :class:`~tpguard.scope.ScopeBinding`:

* ``fields="*"`` (or fields beyond the purpose) → the scope's fields for the requested source;
* no part / ``"all"`` → the scope's part (sheet, section, page) when it names exactly one;
* no subject / ``"all"`` → the scope's subject when it names exactly one;
* an open or wider date range → clamped to the scope's window.

A request it cannot narrow — a source, subject or part outside the scope, a date range wholly outside
the window, or "all" where the scope names several — is refused with a value-free reason (subjects
are never named; sources, parts and fields are schema-level names the agent may use). A narrowed
value keeps the argument's shape: a list stays a list, a text becomes comma-separated text (or a list
when the tool's input schema says ``array``). Cost: O(number of arguments + allowed values).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .scope import AcquisitionScope, ScopeFinding, is_wildcard, parse_day

__all__ = ["Narrowing", "narrow"]


@dataclass(frozen=True, slots=True)
class Narrowing:
    """The narrowed arguments, what was over-broad, and why the request cannot run (or None)."""

    arguments: Any
    findings: tuple[ScopeFinding, ...] = ()
    refusal: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.findings) and self.refusal is None


def _items(value: Any) -> list[str]:
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value]
    return [str(value)]


def _shaped(original: Any, values: list[str], schema_type: str | None) -> Any:
    if schema_type == "array" or (schema_type is None and isinstance(original, list | tuple)):
        return list(values)
    return ", ".join(values)


def _schema_type(schema: Mapping[str, Any] | None, arg: str) -> str | None:
    props = (schema or {}).get("properties") or {}
    prop = props.get(arg) or {}
    t = prop.get("type")
    if t is None:  # Optional[...] is anyOf [{type}, {type: null}]
        for alt in prop.get("anyOf") or ():
            if alt.get("type") not in (None, "null"):
                return str(alt["type"])
    return str(t) if t is not None else None


def narrow(scope: AcquisitionScope, arguments: Any, schema: Mapping[str, Any] | None = None) -> Narrowing:
    """Narrow ``arguments`` (a mapping of argument names) to ``scope``; see the module docstring."""
    if not isinstance(arguments, Mapping):
        return Narrowing(arguments)
    b = scope.binding
    new = dict(arguments)
    found: list[ScopeFinding] = []

    def note(dim: Any, arg: str, text: str) -> None:
        found.append(ScopeFinding(dim, arg, text, "request"))

    def refuse(dim: Any, arg: str, text: str) -> Narrowing:
        note(dim, arg, text)
        return Narrowing(arguments, tuple(found), text)

    source = None
    # -- one-of dimensions: source, subject, part -------------------------------------------
    for dim, arg, allowed, what in (("source", b.source_arg, scope.sources, "source"),
                                    ("subject", b.subject_arg, scope.subjects, "subject"),
                                    ("part", b.part_arg, scope.parts, "part")):
        if not arg or allowed is None:
            continue
        value = arguments.get(arg)
        if is_wildcard(value):
            if len(allowed) != 1 and not isinstance(value, list | tuple):
                hint = "" if dim == "subject" else f" (one of: {', '.join(allowed)})"
                return refuse(dim, arg, f"it asks for every {what}; name the task's {what}{hint}")
            new[arg] = _shaped(value, list(allowed), _schema_type(schema, arg))
            note(dim, arg, f"{arg} limited to the task's {what}")
        else:
            asked = _items(value) if isinstance(value, list | tuple) else [str(value)]
            kept = [a for a in asked if scope.allows(dim, a)]
            if not kept:
                hint = "" if dim == "subject" else f" (allowed: {', '.join(allowed)})"
                return refuse(dim, arg, f"{arg} names a {what} outside this task's scope{hint}")
            if len(kept) < len(asked):
                new[arg] = _shaped(value, kept, _schema_type(schema, arg))
                note(dim, arg, f"{arg} limited to the task's {what}s")
        if dim == "source":
            src = new.get(arg)
            source = src if isinstance(src, str) else None
    # -- fields ------------------------------------------------------------------------------
    allowed_fields = scope.fields_for(source)
    if b.fields_arg and allowed_fields is not None:
        value = arguments.get(b.fields_arg)
        if is_wildcard(value):
            new[b.fields_arg] = _shaped(value, list(allowed_fields), _schema_type(schema, b.fields_arg))
            note("field", b.fields_arg, f"{b.fields_arg} limited to {', '.join(allowed_fields)}")
        else:
            asked = _items(value)
            ok = {f.casefold() for f in allowed_fields}
            kept = [f for f in asked if f.casefold() in ok]
            if len(kept) < len(asked):
                kept = kept or list(allowed_fields)
                new[b.fields_arg] = _shaped(value, kept, _schema_type(schema, b.fields_arg))
                note("field", b.fields_arg, f"{b.fields_arg} limited to {', '.join(kept)}")
    # -- time window -------------------------------------------------------------------------
    if scope.has_window and (b.since_arg or b.until_arg):
        lo = parse_day(arguments.get(b.since_arg)) if b.since_arg else None
        hi = parse_day(arguments.get(b.until_arg)) if b.until_arg else None
        new_lo = max(lo, scope.since) if lo and scope.since else (lo or scope.since)
        new_hi = min(hi, scope.until) if hi and scope.until else (hi or scope.until)
        if new_lo and new_hi and new_lo > new_hi:
            return refuse("window", b.since_arg or b.until_arg or "",
                          "the date range lies outside this task's time window")
        changed = []
        for arg, old, day in ((b.since_arg, lo, new_lo), (b.until_arg, hi, new_hi)):
            if arg and day is not None and old != day:
                prev = arguments.get(arg)
                new[arg] = day if isinstance(prev, _dt.date) else day.isoformat()
                changed.append(arg)
        if changed:
            window = f"{scope.since or '…'} to {scope.until or '…'}"
            note("window", ", ".join(changed), f"date range limited to {window}")
    return Narrowing(new if found else arguments, tuple(found))
