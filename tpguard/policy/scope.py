"""Acquisition scopes: what a tool may *return* for a purpose (PrivacyPeek, seed ``001_*`` §3, §6).

Seed ``001_*`` defines acquisition-stage leakage as a tool call that acquires personal data outside
the task's minimum scope ``E_c`` — the sources, fields, time window, file parts and confidentiality
boundary an approved path needs — and concludes (§6) that controls must act *before* information
enters the context: field-restricted APIs, scoped views, pre-tool policies. An
:class:`AcquisitionScope` is that ``E_c`` for one tool, and a :class:`ScopeBinding` says how the
tool's arguments and results express it.

A benchmark case's minimum scope maps onto it directly::

    E_c.sources            → AcquisitionScope.sources          (source names / file paths)
    E_c.fields per source  → AcquisitionScope.fields_by_source (``fields`` when one list fits all)
    E_c.subjects           → AcquisitionScope.subjects         (record subjects: ids or names)
    E_c.time window        → AcquisitionScope.since / until    (inclusive ISO dates)
    E_c.file format/parts  → AcquisitionScope.parts            (sheet, section or page names)
    E_c.confidentiality    → AcquisitionScope.confidential     (False: marked items are out)
                             + AcquisitionScope.markers        ("CONFIDENTIAL", …)

Any dimension left ``None`` is unconstrained. Scopes are declared per tool in the policy
(``ToolSpec.scope``) and bound per request, because the minimum scope is task-specific::

    with guard.session(atoms, scopes={"query_records": AcquisitionScope(...)}):
        agent.invoke(...)

Where the scope applies — the request (``Guard.check``) and the result (``Guard.check_result``) —
is described in :mod:`tpguard.stages._narrow` and :mod:`tpguard.stages.results`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
import unicodedata
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["DIMENSIONS", "AcquisitionScope", "Dimension", "ScopeBinding", "ScopeFinding", "fold_key", "key_tiers"]

Dimension = Literal["source", "field", "subject", "window", "part", "confidential", "atom"]
DIMENSIONS: tuple[str, ...] = Dimension.__args__  # type: ignore[attr-defined]

#: Texts a request uses to mean "everything" (compared case-insensitively after stripping).
WILDCARDS = frozenset({"*", "all", "any", ""})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ScopeBinding(_Model):
    """How one tool's arguments and results carry the scope's dimensions.

    Argument names (``*_arg``) are the tool's parameters that the guard narrows before the call;
    result keys (``*_key``) are the keys of each returned record that the guard reads after it,
    matched like fields (:func:`fold_key`, :func:`key_tiers`: ``Patient``, ``patientId`` and
    ``patient_id`` stand for ``patient``). ``None`` means the tool does not express that dimension
    there.
    """

    # -- arguments (request side) --
    fields_arg: str | None = "fields"
    subject_arg: str | None = None
    source_arg: str | None = None
    part_arg: str | None = None
    since_arg: str | None = None
    until_arg: str | None = None
    # -- results --
    #: key of the object that holds the record list — kept for existing policies: records are
    #: found at any depth whatever it says (:mod:`tpguard.stages._records`)
    records_key: str | None = None
    record_id_key: str | None = "id"
    subject_key: str | None = None
    date_key: str | None = None
    source_key: str | None = None
    part_key: str | None = None
    #: result keys whose values are private facts, with their atom type: a value that arrives
    #: under such a key is registered in the session as an atom (taint), e.g. ``{"phone": "phone"}``
    atom_keys: dict[str, str] = Field(default_factory=dict)
    #: a regular expression (multi-line) whose match starts a part of a text result — a sheet,
    #: section or page header; its group ``part`` (else group 1) names the part
    part_pattern: str | None = None
    #: a text result that holds records — JSON (fenced, after a BOM or a prefix line, NDJSON, as
    #: bytes), a CSV export or a markdown table — is read as records (:mod:`tpguard.stages._structured`)
    parse_json: bool = True
    #: ``"records"``: the tool returns records, so a result without any (free text, an image)
    #: cannot be held to the scope's subjects, window or fields — it is withheld in enforce/redact
    #: and recorded in audit (``Decision.error`` ``scope:unapplied``); ``"text"``: the tool returns
    #: free text by design — a result without records is not an error (parts, markers and atoms
    #: apply to it; records it does hold are still held to the whole scope)
    results: Literal["records", "text"] = "records"

    @field_validator("part_pattern")
    @classmethod
    def _valid_pattern(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v, re.MULTILINE)
            except re.error as e:
                raise ValueError(f"a valid regular expression ({e.msg} at position {e.pos})") from None
        return v

    def structural_keys(self) -> frozenset[str]:
        """Record keys that are kept whatever ``fields`` says (they identify the record)."""
        keys = (self.record_id_key, self.subject_key, self.date_key, self.source_key, self.part_key)
        return frozenset(k for k in keys if k)


class AcquisitionScope(_Model):
    """The minimum scope ``E`` of one tool for one purpose (see the module docstring).

    ``fields`` apply to every source unless ``fields_by_source`` names the source; ``atoms`` lists
    atom ids or types that may arrive in this tool's results (``None``: any registered atom — only
    the structural dimensions apply). Subjects, sources and parts compare case-insensitively.
    """

    sources: tuple[str, ...] | None = None
    fields: tuple[str, ...] | None = None
    fields_by_source: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    subjects: tuple[str, ...] | None = None
    since: _dt.date | None = None
    until: _dt.date | None = None
    parts: tuple[str, ...] | None = None
    confidential: bool = False
    markers: tuple[str, ...] = ("CONFIDENTIAL", "STRICTLY CONFIDENTIAL", "PRIVILEGED",
                                "DO NOT SHARE", "INTERNAL ONLY")
    atoms: tuple[str, ...] | None = None
    binding: ScopeBinding = Field(default_factory=ScopeBinding)

    @field_validator("sources", "fields", "subjects", "parts", "atoms", "markers", mode="before")
    @classmethod
    def _texts(cls, v: Any) -> Any:
        if isinstance(v, str):
            return (v,)
        if isinstance(v, list | tuple | set | frozenset):
            return tuple(str(x) for x in v)
        return v

    @model_validator(mode="after")
    def _window(self) -> AcquisitionScope:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since must not be after until")
        return self

    # -- lookups (O(1) after the first call: the sets are cached on the frozen model) --
    def fields_for(self, source: str | None) -> tuple[str, ...] | None:
        """The allowed fields of ``source`` (its own list, else ``fields``)."""
        if source is not None and self.fields_by_source:
            key = _fold(source)
            for name, fs in self.fields_by_source.items():
                if _fold(name) == key:
                    return fs
        return self.fields

    def allows(self, dimension: Literal["source", "subject", "part"], value: Any) -> bool:
        allowed = {"source": self.sources, "subject": self.subjects, "part": self.parts}[dimension]
        return allowed is None or _fold(value) in _folded(allowed)

    def in_window(self, day: _dt.date) -> bool:
        return (self.since is None or day >= self.since) and (self.until is None or day <= self.until)

    @property
    def has_window(self) -> bool:
        return self.since is not None or self.until is not None


class ScopeFinding(NamedTuple):
    """One item outside the scope: a dimension, where it was (a request argument or a result path)
    and a value-free description (field names and counts, never a value)."""

    dimension: Dimension
    path: str
    description: str
    stage: Literal["request", "result"] = "result"

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


#: suffixes under which a record writes a bound key (``patient`` → ``patientId``, ``patient_id``);
#: a key spelled exactly like the bound one (case, ``_``, ``-``, spaces aside) is preferred
_SUFFIXES: dict[str, tuple[tuple[str, ...], ...]] = {
    "subject": (("id", "ids", "no", "number", "ref", "key", "code"), ("name",)),
    "date": (("date", "at", "on", "time", "day", "ts", "timestamp"),),
    "source": (("name", "id"),),
    "part": (("name", "id"),),
}


@functools.lru_cache(maxsize=4096)
def fold_key(key: Any) -> str:
    """A key as fields are compared: Unicode-compatible, case-folded, without spaces, ``_``, ``-``
    or other punctuation — ``Patient``, ``patient_id``, ``patientId`` and ``Patient ID`` fold to
    ``patient`` / ``patientid``."""
    text = unicodedata.normalize("NFKC", str(key)).casefold()
    return "".join(ch for ch in text if ch.isalnum())


@functools.lru_cache(maxsize=1024)
def key_tiers(bound: str, dimension: str) -> tuple[frozenset[str], ...]:
    """Folded record keys that stand for the bound ``*_key`` of ``dimension``, most exact first:
    the key itself, then the key with an identifying suffix (``id``, ``date`` …), then weaker ones.
    A record is read by the first tier it has a key of (every key of that tier must be in scope)."""
    base = fold_key(bound)
    tiers: list[frozenset[str]] = [frozenset({base})]
    for group in _SUFFIXES.get(dimension, ()):
        names = {base + s for s in group}
        names |= {base[:-len(s)] for s in group if base.endswith(s) and len(base) > len(s)}
        tiers.append(frozenset(names - {base}))
    return tuple(tiers)


@functools.lru_cache(maxsize=256)
def _folded(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_fold(v) for v in values)


def _fold(value: Any) -> str:
    return " ".join(str(value).casefold().split())


def parse_day(value: Any) -> _dt.date | None:
    """A date from a date, datetime or ISO text (``2024-03-05``, ``2024-03-05T10:00``); else None."""
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str) and len(value) >= 10:
        try:
            return _dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def is_wildcard(value: Any) -> bool:
    """``None``, ``"*"``, ``"all"``, ``["*"]`` … — a request for everything."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().casefold() in WILDCARDS
    if isinstance(value, list | tuple):
        return not value or any(is_wildcard(v) for v in value if isinstance(v, str))
    return False
