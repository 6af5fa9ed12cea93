"""Request narrowing: a scoped tool's request cut to the task's minimum scope *before* the call.

PrivacyPeek (seed ``001_*`` §3, §6): the same data-access tool takes a narrow or a broad request
(``fields="*"``, a whole file, every subject's records, an open date range); controls must act before
information enters the context. :func:`narrow` rewrites, by the tool's :class:`~tpguard.policy.scope.ScopeBinding`:

* ``fields="*"`` (or fields beyond the purpose) → the scope's fields for the requested source;
* no part / ``"all"`` → the scope's part (sheet, section, page) when it names exactly one;
* no subject / ``"all"`` → the scope's subject when it names exactly one;
* an open or wider date range → clamped to the scope's window.

A request it cannot narrow — a source, subject or part outside the scope, a date range wholly outside
the window, or "all" where the scope names several — is refused with a value-free reason (subjects
are never named; sources, parts and fields are schema-level names the agent may use). Two refusals
say more, because a 1.5B model resent the bare one unchanged (docs/real-models.md): a tool whose
scope allows no source, subject or part at all is refused as ``unreachable`` (no call to it can be
in scope, so the message must not invite another), and a subject that holds an in-scope subject
with other text around it (``"Name (ID)"`` where the scope has the id) is told to give the subject
alone — the agent typed that text itself, so saying so discloses nothing. A narrowed
value keeps the argument's shape: a list stays a list, a text becomes comma-separated text (or a list
when the tool's input schema says ``array``). Cost: O(number of arguments + allowed values).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..policy.scope import AcquisitionScope, ScopeFinding, is_wildcard, parse_day

__all__ = ["Narrowing", "narrow"]


@dataclass(frozen=True, slots=True)
class Narrowing:
    """The narrowed arguments, what was over-broad, and why the request cannot run (or None)."""

    arguments: Any
    findings: tuple[ScopeFinding, ...] = ()
    refusal: str | None = None
    unreachable: bool = False  # the scope allows nothing from this tool: no call can be in scope

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


class _Refused(Exception):
    pass


def _holds(text: str, allowed: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``allowed`` as a whole token (case-insensitive), with other
    text around it. O(len(text) · len(allowed)); no pattern is compiled."""
    t = text.casefold()
    for a in allowed:
        a = a.casefold()
        if not a or a == t:
            continue
        i = t.find(a)
        while i >= 0:
            j = i + len(a)
            if (i == 0 or not t[i - 1].isalnum()) and (j == len(t) or not t[j].isalnum()):
                return True
            i = t.find(a, i + 1)
    return False


class _Narrower:
    """One request being narrowed: the new arguments and the findings so far."""

    def __init__(self, scope: AcquisitionScope, arguments: Mapping[str, Any],
                 schema: Mapping[str, Any] | None) -> None:
        self.scope, self.arguments, self.schema = scope, arguments, schema
        self.new = dict(arguments)
        self.found: list[ScopeFinding] = []

    def note(self, dim: Any, arg: str, text: str) -> None:
        self.found.append(ScopeFinding(dim, arg, text, "request"))

    def refuse(self, dim: Any, arg: str, text: str) -> None:
        self.note(dim, arg, text)
        raise _Refused(text)

    def one_of(self, dim: Literal["source", "subject", "part"], arg: str | None,
               allowed: tuple[str, ...] | None) -> None:
        if not arg or allowed is None:
            return
        value = self.arguments.get(arg)
        hint = "" if dim == "subject" else f" ({'one of' if is_wildcard(value) else 'allowed'}: {', '.join(allowed)})"
        if is_wildcard(value):
            if len(allowed) != 1 and not isinstance(value, list | tuple):
                self.refuse(dim, arg, f"it asks for every {dim}; name the task's {dim}{hint}")
            self.new[arg] = _shaped(value, list(allowed), _schema_type(self.schema, arg))
            self.note(dim, arg, f"{arg} limited to the task's {dim}")
            return
        asked = _items(value) if isinstance(value, list | tuple) else [str(value)]
        kept = [a for a in asked if self.scope.allows(dim, a)]
        if not kept:
            if dim == "subject" and any(_holds(a, allowed) for a in asked):
                self.refuse(dim, arg, f"{arg} must be the {dim} alone (its id or its name), "
                                      "without other text around it")
            self.refuse(dim, arg, f"{arg} names a {dim} outside this task's scope{hint}")
        if len(kept) < len(asked):
            self.new[arg] = _shaped(value, kept, _schema_type(self.schema, arg))
            self.note(dim, arg, f"{arg} limited to the task's {dim}s")

    def fields(self, arg: str | None, allowed: tuple[str, ...] | None) -> None:
        if not arg or allowed is None:
            return
        value = self.arguments.get(arg)
        if is_wildcard(value):
            kept = list(allowed)
        else:
            asked = _items(value)
            ok = {f.casefold() for f in allowed}
            kept = [f for f in asked if f.casefold() in ok]
            if len(kept) == len(asked):
                return
            kept = kept or list(allowed)
        self.new[arg] = _shaped(value, kept, _schema_type(self.schema, arg))
        self.note("field", arg, f"{arg} limited to {', '.join(kept)}")

    def window(self, since_arg: str | None, until_arg: str | None) -> None:
        scope = self.scope
        if not scope.has_window or not (since_arg or until_arg):
            return
        lo = parse_day(self.arguments.get(since_arg)) if since_arg else None
        hi = parse_day(self.arguments.get(until_arg)) if until_arg else None
        new_lo = max(lo, scope.since) if lo and scope.since else (lo or scope.since)
        new_hi = min(hi, scope.until) if hi and scope.until else (hi or scope.until)
        if new_lo and new_hi and new_lo > new_hi:
            self.refuse("window", since_arg or until_arg or "",
                        "the date range lies outside this task's time window")
        changed = []
        for arg, old, day in ((since_arg, lo, new_lo), (until_arg, hi, new_hi)):
            if arg and day is not None and old != day:
                prev = self.arguments.get(arg)
                self.new[arg] = day if isinstance(prev, _dt.date) else day.isoformat()
                changed.append(arg)
        if changed:
            self.note("window", ", ".join(changed),
                      f"date range limited to {scope.since or '…'} to {scope.until or '…'}")


def narrow(scope: AcquisitionScope, arguments: Any, schema: Mapping[str, Any] | None = None) -> Narrowing:
    """Narrow ``arguments`` (a mapping of argument names) to ``scope``; see the module docstring."""
    if not isinstance(arguments, Mapping):
        return Narrowing(arguments)
    b = scope.binding
    n = _Narrower(scope, arguments, schema)
    for dim, arg, allowed in (("source", b.source_arg, scope.sources),
                              ("subject", b.subject_arg, scope.subjects),
                              ("part", b.part_arg, scope.parts)):
        if arg and allowed is not None and not allowed:  # no value of this argument is in scope
            n.note(dim, arg, f"this task's scope has no {dim} for this tool")
            return Narrowing(arguments, tuple(n.found), "this task needs nothing from this tool",
                             unreachable=True)
    try:
        n.one_of("source", b.source_arg, scope.sources)
        n.one_of("subject", b.subject_arg, scope.subjects)
        n.one_of("part", b.part_arg, scope.parts)
        src = n.new.get(b.source_arg) if b.source_arg else None
        n.fields(b.fields_arg, scope.fields_for(src if isinstance(src, str) else None))
        n.window(b.since_arg, b.until_arg)
    except _Refused as e:
        return Narrowing(arguments, tuple(n.found), str(e))
    return Narrowing(n.new if n.found else arguments, tuple(n.found))
