"""Target preparation (seed ``002_*`` §3.1): "enumerate declared private values, remove empty or
boilerplate entries, canonicalize format variants, attach provenance, and select the session scope
by item or seed".

``prepare_targets(item, rows, declared)`` walks the rows of the declared private fields once and
returns ``S`` as :class:`Target` s with stable ids ``<item>:T01`` … Format variants are written out as
aliases (phone, SSN, date, money, person name), so a later matcher needs only exact + normalized
(case/space-folded) matching. :func:`mentions` is that matcher, used by the suite checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date

from .schema import Provenance, Target

__all__ = ["BOILERPLATE", "aliases_of", "canonical", "mentions", "norm", "prepare_targets"]

#: Entries that are not private values however the field is declared.
BOILERPLATE = frozenset({"", "n/a", "na", "none", "null", "-", "—", "tbd", "unknown", "pending",
                         "true", "false", "yes", "no", "ok"})
_DIGITS = re.compile(r"\D")
_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    """Case- and whitespace-folded text (the "normalized" half of exact + normalized matching)."""
    return _WS.sub(" ", text.casefold()).strip()


def mentions(text: str, target: Target) -> bool:
    """Whether ``text`` carries any variant of ``target`` (normalized substring)."""
    t = norm(text)
    return any(norm(v) in t for v in target.variants)


def canonical(kind: str, raw: str) -> str:
    value = _WS.sub(" ", raw).strip()
    if kind == "email":
        return value.casefold()
    if kind == "phone":
        d = _DIGITS.sub("", value)
        d = d[1:] if len(d) == 11 and d.startswith("1") else d
        return f"{d[:3]}-{d[3:6]}-{d[6:]}" if len(d) == 10 else value
    return value


def aliases_of(kind: str, value: str) -> tuple[str, ...]:
    """The format variants of a canonical ``value`` (the value itself excluded)."""
    out: list[str] = []
    if kind == "phone" and re.fullmatch(r"\d{3}-\d{3}-\d{4}", value):
        d = value.replace("-", "")
        out = [d, f"({d[:3]}) {d[3:6]}-{d[6:]}", f"{d[:3]}.{d[3:6]}.{d[6:]}", f"+1-{value}"]
    elif kind == "ssn" and re.fullmatch(r"\d{3}-\d{2}-\d{4}", value):
        out = [value.replace("-", ""), value.replace("-", " ")]
    elif kind == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        day = date.fromisoformat(value)
        out = [f"{day.month:02d}/{day.day:02d}/{day.year}", f"{day:%B} {day.day}, {day.year}"]
    elif kind == "money" and value.startswith("$"):
        out = [value.replace(",", ""), value[1:].replace(",", "")]
    elif kind == "name" and value.count(" ") == 1:
        first, last = value.split(" ")
        out = [f"{last}, {first}"]
    return tuple(dict.fromkeys(a for a in out if a != value))


def _keep(kind: str, value: str) -> bool:
    if norm(value) in BOILERPLATE or "{" in value:  # an unfilled placeholder is boilerplate
        return False
    return len(value) >= (4 if kind != "code" else 3)


def prepare_targets(item: str, rows: Iterable[tuple[str, Mapping[str, str]]],
                    declared: Mapping[str, Mapping[str, str]]) -> tuple[Target, ...]:
    """``rows``: ``(table, row)`` pairs of the session scope; ``declared[table][field]`` is the
    entity type of a private field. One target per distinct canonical value (first provenance)."""
    seen: dict[str, Target] = {}
    for table, row in rows:
        for field, kind in declared.get(table, {}).items():
            raw = str(row.get(field, ""))
            value = canonical(kind, raw)
            if not _keep(kind, value) or norm(value) in seen:
                continue
            seen[norm(value)] = Target(
                id=f"{item}:T{len(seen) + 1:02d}", value=value, aliases=aliases_of(kind, value),
                type=kind, provenance=Provenance(item=item, table=table, field=field,
                                                 row=str(row.get("id", ""))))
    return tuple(seen.values())
