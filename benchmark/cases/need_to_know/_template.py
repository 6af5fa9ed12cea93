"""The shape of a domain workflow template (seed ``000_*`` §4.3, Table 2, Appendix A).

A stage's ``fields`` is a compact spec, one token per structured argument:

* ``field=role``  — carries the atom bound to ``role``; authorized for this tool (tool-purpose-first)
  and a required fact;
* ``field=role~`` — the same, but authorized only in this field (a conditional authorization);
* ``field:value`` — a non-private literal (``channel:sms``, ``team:pharmacy``);
* ``case_id``     — the case reference; every stage carries it (added when the spec omits it),
  so ``update`` stages find the record registration opened.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DomainT", "FieldT", "StageT", "parse_fields"]


@dataclass(frozen=True)
class FieldT:
    name: str
    role: str | None = None
    literal: str | None = None
    conditional: bool = False


@dataclass(frozen=True)
class StageT:
    suffix: str
    stage: str  # registration, processing, payment, decision, document, notification, handoff, ...
    sink: str
    purpose: str
    fields: str
    free: tuple[str, ...]
    op: str | None = None


@dataclass(frozen=True)
class DomainT:
    key: str
    label: str
    prefix: str
    subject: str
    ref: str
    roles: dict[str, str]
    stages: tuple[StageT, ...]
    extra: StageT
    context: tuple[str, ...]
    phrasings: tuple[str, ...]
    statuses: tuple[str, ...]
    next_steps: tuple[str, ...]
    swap: tuple[int, int] | None = (3, 4)  # adjacent stages whose order is not causally fixed


def parse_fields(spec: str) -> tuple[FieldT, ...]:
    out = [] if "case_id" in spec.split() else [FieldT("case_id")]
    for tok in spec.split():
        if "=" in tok:
            name, role = tok.split("=", 1)
            out.append(FieldT(name, role.rstrip("~"), conditional=role.endswith("~")))
        elif ":" in tok:
            name, value = tok.split(":", 1)
            out.append(FieldT(name, literal=value))
        else:
            out.append(FieldT(tok))
    return tuple(out)
