"""Shared pieces of the public-derived builders: source records, atoms, schemas, errors.

A builder turns one public task into a :class:`Draft` — its tools (with the hand-written purpose,
sink and backend primitive), its gold calls and its private atoms — and
:mod:`._assemble` turns the draft into a :class:`~tpguard.benchmark.cases.schema.Case`
(ToolPrivacyBench, seed ``000_*`` §6.1: "candidate current-task private atoms are extracted from
task text and API arguments; allowed and forbidden relations are annotated from tool purpose, API
schema, and source gold arguments").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tpguard import Detector, PrivateAtom
from tpguard.detect.detector import is_detectable

__all__ = [
    "SEVERITY",
    "AtomBag",
    "Draft",
    "PublicDataError",
    "SourceCall",
    "SourceTool",
    "json_type_of",
]


class PublicDataError(FileNotFoundError):
    """The source folder is missing, empty or lacks a file a source needs."""


@dataclass(frozen=True)
class SourceTool:
    """One source tool with its hand-written mapping (purpose, sink, backend primitive)."""

    name: str
    purpose: str
    sink: str
    primitive: str
    operation: str  # "create" (state-changing) or "lookup" (read)
    schema: dict[str, Any]
    free_text: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class SourceCall:
    """One gold call of the source task, arguments by name."""

    tool: str
    arguments: dict[str, Any]


@dataclass
class Draft:
    """A public task before assembly: what the source gives plus the hand-written mapping."""

    case_id: str
    source: str  # a key of ``public_derived.SOURCES``
    source_id: str
    domain: str
    prompt: str
    tools: dict[str, SourceTool]
    calls: list[SourceCall]
    atoms: list[PrivateAtom]
    labels: dict[str, str] = field(default_factory=dict)  # atom id -> readable label
    metadata: dict[str, Any] = field(default_factory=dict)
    #: What makes two tasks the same scenario across sources (never shown; may hold values).
    scenario: str = ""


#: Severity weights ``w_j`` by atom type (seed ``000_*`` §5.3: secrets, payment credentials and
#: government identifiers weigh more than low-sensitivity operational values).
SEVERITY: dict[str, float] = {
    "password": 5.0, "client_secret": 5.0, "refresh_token": 5.0, "access_token": 5.0,
    "card_number": 5.0, "cvv": 5.0, "passport_number": 5.0,
    "date_of_birth": 4.0,
    "email": 3.0, "phone_number": 3.0, "street_address": 3.0, "account_balance": 3.0, "account_id": 3.0,
    "card_expiry": 3.0, "card_id": 3.0, "client_id": 3.0, "payment_method_id": 3.0,
    "budget": 2.0, "card_last4": 2.0, "zip_code": 2.0, "first_name": 2.0, "last_name": 2.0,
    "person_name": 2.0, "username": 2.0, "user_id": 2.0,
    "annual_income": 3.0, "customer_id": 2.0, "event_id": 1.0, "task_id": 1.0, "message_id": 1.0,
    "order_id": 1.0, "reservation_id": 1.0, "booking_id": 1.0, "insurance_id": 1.0,
    "line_id": 1.0, "bill_id": 1.0, "transaction_id": 1.0, "dispute_id": 1.0,
}

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_STREET_SUFFIX = {"Drive": "Dr", "Street": "St", "Avenue": "Ave", "Road": "Rd", "Lane": "Ln",
                  "Boulevard": "Blvd", "Court": "Ct", "Place": "Pl"}


def _number_text(value: Any) -> str:
    """``10000.0`` → ``"10000"``; ``2857.14`` stays; strings pass through stripped."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _money_forms(text: str) -> tuple[str, ...]:
    try:
        amount = float(text)
    except ValueError:
        return ()
    forms = {f"{amount:,.2f}", f"${amount:,.2f}"}
    if amount.is_integer():
        forms |= {f"{int(amount):,}", f"${int(amount):,}"}
    forms.discard(text)
    return tuple(sorted(forms))


def _variants(atom_type: str, value: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """``(aliases, semantic variants, masked forms)`` of a value by its type."""
    if atom_type == "date_of_birth" and (m := _ISO_DATE.fullmatch(value)):
        y, mo, d = m.groups()
        return ((f"{mo}/{d}/{y}",), (f"{_MONTHS[int(mo) - 1]} {int(d)}, {y}",), ())
    if atom_type == "card_number":
        digits = re.sub(r"\D", "", value)
        spaced = " ".join(digits[i:i + 4] for i in range(0, len(digits), 4))
        aliases = (spaced,) if spaced != value else ()
        return (aliases, (), (f"**** {digits[-4:]}",) if len(digits) >= 12 else ())
    if atom_type in {"account_balance", "budget"}:
        return (_money_forms(value), (), ())
    if atom_type == "street_address":
        words = value.split()
        short = [_STREET_SUFFIX.get(w, w) for w in words]
        return ((" ".join(short),) if short != words else (), (), ())
    if atom_type == "person_name" and len(parts := value.split()) == 2:
        return ((f"{parts[1]}, {parts[0]}",), (), ())
    return ((), (), ())


@lru_cache(maxsize=65536)
def _detectable(atom: PrivateAtom) -> bool:
    """The atom's value is found by the detector in a synthetic argument (§6.2 quality check).
    Cached: the same customer record recurs across tasks and sources (atoms are frozen)."""
    det = Detector([atom], fuzzy=False)
    free = det.scan({"note": f"For the record: {atom.value} (as stated)."}, ("note",))
    field = det.scan({"value": atom.value})
    return not det.undetectable and any(f.atom_id == atom.id for f in free) and any(
        f.atom_id == atom.id for f in field)


_BAD_VALUES = {"none", "null", "true", "false", "n/a", "unknown", ""}


class AtomBag:
    """Collects a task's private atoms: one atom per distinct value, ids numbered by type.

    Ids never contain the value (ids travel into spans and logs; values must not). A value that
    the detector could not find again is dropped, so every atom of a case is auditable.
    """

    def __init__(self) -> None:
        self._by_value: dict[str, PrivateAtom] = {}
        self._counts: dict[str, int] = {}
        self.labels: dict[str, str] = {}

    def add(self, atom_type: str, value: Any, label: str | None = None) -> str | None:
        """Register ``value`` as an atom of ``atom_type``; returns its id (or ``None``)."""
        if value is None or isinstance(value, bool | dict | list):
            return None
        text = _number_text(value)
        key = " ".join(text.casefold().split())
        if key in _BAD_VALUES:
            return None
        if key in self._by_value:
            return self._by_value[key].id
        n = self._counts.get(atom_type, 0) + 1
        atom_id = atom_type if n == 1 else f"{atom_type}_{n}"
        if len(key) >= 4 and key in atom_id:  # API-Bank's password "password": ids hold no value
            atom_id = f"atom_{len(self._by_value) + 1}"
        # Forms too short to find (``$5`` for a balance of 5.0) are left out: the policy refuses
        # them, and a two-character key would match inside ordinary text.
        aliases, variants, masked = (tuple(f for f in forms if is_detectable(f))
                                     for forms in _variants(atom_type, text))
        atom = PrivateAtom(id=atom_id, type=atom_type, value=text, aliases=aliases,
                           variants=variants, masked=masked,
                           severity=SEVERITY.get(atom_type, 1.0))
        if not _detectable(atom):
            return None
        self._counts[atom_type] = n
        self._by_value[key] = atom
        self.labels[atom_id] = label or atom_type.replace("_", " ")
        return atom_id

    def add_many(self, items: Iterable[tuple[str, Any, str | None]]) -> None:
        for atom_type, value, label in items:
            self.add(atom_type, value, label)

    @property
    def atoms(self) -> list[PrivateAtom]:
        return list(self._by_value.values())


def json_type_of(values: Iterable[Any]) -> dict[str, Any]:
    """A JSON Schema for the values one argument took in the gold calls (τ² tool signatures)."""
    kinds: set[str] = set()
    items: list[Any] = []
    for v in values:
        kinds.add(_kind(v))
        if isinstance(v, list):
            items.extend(v)
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    if len(kinds) != 1:
        return {}
    kind = kinds.pop()
    schema: dict[str, Any] = {"type": kind}
    if kind == "array" and items:
        schema["items"] = json_type_of(items)
    return schema


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, list):
        return "array"
    if isinstance(v, Mapping):
        return "object"
    return "string" if isinstance(v, str) else "null"
