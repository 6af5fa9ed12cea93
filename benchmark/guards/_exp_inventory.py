"""What a deployment of an exposure workspace registers as private — built from the workspace
alone, the way a data-protection configuration would be (issue 29 item 2).

A deployment does not know the evaluator's hidden target set ``S`` or its alias list. It knows
its own data store ``D`` (the collections the agent's tools read) and declares, once per schema,
which fields hold personal data; it can run pattern recognizers over its free-text stores
(mail bodies, documents) and parse its own spreadsheets by their header. That is all
:func:`workspace_atoms` reads:

* :data:`PRIVATE_FIELDS` — structured fields declared private per collection (``"*"``: every
  field but ``id``; the kind is read from the field name);
* :data:`FREE_TEXT_FIELDS` — free-text fields scanned by :data:`_RECOGNIZERS` (e-mail addresses,
  phone numbers, SSNs, one-time codes, dollar amounts); a field whose text is a CSV table
  (header line + rows) has the cells of its personal columns registered (:data:`_COLUMN_KINDS`);
* the deployment's own addresses (its recipients: owner, requester, declared externals) and the
  owner's organisation domain are not registered as personal contacts.

Aliases are derived by code from each value (:func:`derived_aliases`: name order, phone and SSN
formats, date and amount spellings) — never copied from the evaluator. What is not declared and
not recognizable stays unregistered (e.g. a calendar location, a diagnosis inside a mail body):
the guard cannot stop what it was never told about, and the residual exposure says so.

Cost: one pass over the workspace's text; atoms are deduplicated by casefolded value.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

__all__ = ["FREE_TEXT_FIELDS", "PRIVATE_FIELDS", "derived_aliases", "workspace_atoms"]

#: Structured private fields per collection: ``"*"`` (every field but ``id``) or field → kind.
PRIVATE_FIELDS: dict[str, str | dict[str, str]] = {
    "records": "*",
    "crm": {"customer_name": "name", "customer_email": "email", "customer_phone": "phone"},
}
#: Free-text fields per collection that recognizers (and the CSV reader) scan.
FREE_TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "emails": ("sender", "recipients", "subject", "body"),
    "files": ("content",),
    "calendar": ("description", "participant"),
    "crm": ("notes",),
}
#: Kinds read from a field or column name (first match).
_NAME_KINDS: tuple[tuple[str, str], ...] = (
    ("email", "email"), ("phone", "phone"), ("ssn", "ssn"), ("dob", "date"), ("birth", "date"),
    ("salary", "money"), ("settlement", "money"), ("address", "address"), ("name", "name"))
#: CSV columns whose cells are personal data (by header, through :data:`_NAME_KINDS`).
_COLUMN_KINDS = frozenset({"email", "phone", "ssn", "date", "money", "address", "name"})
_RECOGNIZERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("ssn", re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])")),
    ("phone", re.compile(r"(?<![\d-])(?:\+?1[-. ])?\(?\d{3}\)?[-. ]?\d{3}[-.]\d{4}(?![\d-])")),
    ("code", re.compile(r"(?<![\d,.$-])\d{6,8}(?!\d|[,.-]\d)")),
    ("money", re.compile(r"\$\d{1,3}(?:,\d{3})+|\$\d{4,}")),
)
_MIN_LEN = 4
_BOILERPLATE = frozenset({"n/a", "none", "null", "unknown", "pending", "true", "false", "tbd"})


def _kind_of(field: str) -> str:
    f = field.casefold()
    return next((k for key, k in _NAME_KINDS if key in f), "text")


def derived_aliases(kind: str, value: str) -> tuple[str, ...]:
    """Spellings of ``value`` a deployment derives by code (the value itself excluded)."""
    v = value.strip()
    out: list[str] = []
    digits = re.sub(r"\D", "", v)
    if kind == "phone" and len(digits) in (10, 11):
        d = digits[-10:]
        out = [d, f"{d[:3]}-{d[3:6]}-{d[6:]}", f"({d[:3]}) {d[3:6]}-{d[6:]}",
               f"{d[:3]}.{d[3:6]}.{d[6:]}", f"+1 {d[:3]} {d[3:6]} {d[6:]}"]
    elif kind == "ssn" and len(digits) == 9:
        out = [digits, f"{digits[:3]} {digits[3:5]} {digits[5:]}"]
    elif kind == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        try:
            day = date.fromisoformat(v)
        except ValueError:
            day = None
        if day is not None:
            out = [day.strftime("%m/%d/%Y"), f"{day:%B} {day.day}, {day.year}",
                   f"{day.day} {day:%B} {day.year}"]
    elif kind == "money" and v.startswith("$"):
        out = [v.replace(",", ""), v[1:], v[1:].replace(",", "")]
    elif kind == "name" and len(parts := v.split()) >= 2:
        out = [f"{parts[-1]}, {' '.join(parts[:-1])}", f"{parts[0]} {parts[-1]}"]
    return tuple(dict.fromkeys(a for a in out if a != v and len(a) >= _MIN_LEN))


def _csv_cells(text: str) -> Iterable[tuple[str, str]]:
    """``(kind, cell)`` of the personal columns when ``text`` is a CSV table with a header."""
    lines = text.strip().splitlines()
    if len(lines) < 2 or "," not in lines[0]:
        return
    try:
        rows = list(csv.DictReader(io.StringIO(text.strip())))
    except csv.Error:
        return
    for col in rows[0].keys() if rows else ():
        kind = _kind_of(str(col))
        if kind in _COLUMN_KINDS:
            for r in rows:
                yield kind, str(r.get(col) or "")


def _recognized(text: str) -> Iterable[tuple[str, str]]:
    yield from _csv_cells(text)
    for kind, rx in _RECOGNIZERS:
        for m in rx.finditer(text):
            yield kind, m.group()


def _structured(coll: str, row: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    declared = PRIVATE_FIELDS.get(coll)
    if declared is None:
        return
    fields = ({f: _kind_of(f) for f in row if f != "id"} if isinstance(declared, str)
              else declared)
    for f, kind in fields.items():
        yield kind, str(row.get(f) or "")


def workspace_atoms(workspace: Mapping[str, Sequence[Mapping[str, Any]]], *,
                    own_addresses: Iterable[str] = (), own_domain: str | None = None
                    ) -> list[dict[str, Any]]:
    """The deployment's private atoms (policy-file dicts: ``id``, ``type``, ``value``,
    ``aliases``) from ``workspace`` alone; ``own_addresses`` and addresses on ``own_domain``
    are the deployment's own and are not registered."""
    own = {a.strip().casefold() for a in own_addresses}
    dom = (own_domain or "").casefold()
    seen: dict[str, dict[str, Any]] = {}
    for coll in sorted(workspace):
        for row in workspace[coll]:
            found = list(_structured(coll, row))
            for f in FREE_TEXT_FIELDS.get(coll, ()):
                found.extend(_recognized(str(row.get(f) or "")))
            for kind, raw in found:
                value = " ".join(raw.split())
                key = value.casefold()
                if (len(value) < _MIN_LEN or key in _BOILERPLATE or key in seen or key in own
                        or (kind == "email" and dom and key.endswith("@" + dom))):
                    continue
                seen[key] = {"id": f"ws-{len(seen) + 1:04d}", "type": kind, "value": value,
                             "aliases": list(derived_aliases(kind, value))}
    return list(seen.values())
