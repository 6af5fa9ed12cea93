"""Writing one call's arguments: the ground-truth call plus restated context (seed ``000_*`` §8).

A :class:`CallPlan` keeps the pieces it added apart from the ground-truth arguments, so a blocked
call can be rewritten "with less" (drop the named types from the named fields) exactly as a model
would after reading the guard's message.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tpguard import PrivateAtom, ToolSpec

from ._forms import choose_form, render
from ._profiles import (
    DOMAIN_RATE,
    FIELD_SHARE,
    NOTE_RATE,
    P_MAX,
    SALIENCE,
    SINK_RATE,
    TRANSITION_RATE,
    Profile,
)

__all__ = ["CallPlan", "Piece", "plan_call", "structured_slots"]

_OPENERS = ("Context: {items}.", "Details so far: {items}.", "For reference: {items}.",
            "Background for the next team: {items}.", "Noted during the workflow: {items}.")
_COORDINATION = frozenset({"ticket", "handoff", "comment", "notification", "email", "document"})
_GENERIC = "See the case record."
_NEUTRAL_NOTE = "Updated as requested."


@dataclass(frozen=True, slots=True)
class Piece:
    """One restated atom: where it went and in which form (never logged with its text)."""

    atom_id: str
    atom_type: str
    field: str
    form: str
    text: str
    structured: bool = False


@dataclass(slots=True)
class CallPlan:
    tool: str
    base: dict[str, Any]
    pieces: list[Piece] = field(default_factory=list)
    opener: str = _OPENERS[0]

    def arguments(self) -> dict[str, Any]:
        args = dict(self.base)
        by_field: dict[str, list[Piece]] = {}
        for p in self.pieces:
            by_field.setdefault(p.field, []).append(p)
        for name, pieces in by_field.items():
            if pieces[0].structured:
                args[name] = f"{args.get(name, '')} ({'; '.join(p.text for p in pieces)})".strip()
                continue
            items = "; ".join(p.text for p in pieces)
            sentence = self.opener.format(items=items)
            prior = str(args.get(name) or "").strip()
            args[name] = f"{prior} {sentence}".strip()
        return args

    def drop(self, types: set[str] | None, fields: set[str] | None) -> bool:
        """Remove pieces of ``types`` (all when ``None``) from ``fields`` (all when ``None``);
        True when something was removed."""
        keep = [p for p in self.pieces
                if not ((types is None or p.atom_type in types)
                        and (fields is None or p.field in fields))]
        changed = len(keep) != len(self.pieces)
        self.pieces = keep
        return changed

    def forms(self) -> list[dict[str, str]]:
        return [{"atom": p.atom_id, "field": p.field, "form": p.form,
                 "slot": "structured" if p.structured else "free_text"} for p in self.pieces]


def structured_slots(spec: ToolSpec, base: dict[str, Any], literal: set[str]) -> list[str]:
    """String fields a model might pad with context: not free text, no enum, not checked literally."""
    props = (spec.input_schema or {}).get("properties", {})
    return [name for name, schema in props.items()
            if name not in spec.free_text and name not in literal and isinstance(base.get(name), str)
            and schema.get("type") == "string" and "enum" not in schema]


def _phrase(atom: PrivateAtom, text: str, rng: random.Random) -> str:
    label = atom.type.replace("_", " ")
    return rng.choice((f"{label} {text}", f"{label}: {text}", f"{text} ({label})"))


def _slot_weights(slots: list[str]) -> list[float]:
    """:data:`FIELD_SHARE` for listed slots, the rest shared equally by the others."""
    listed = sum(FIELD_SHARE.get(s, 0.0) for s in slots)
    others = [s for s in slots if s not in FIELD_SHARE]
    rest = max(0.0, 1.0 - listed) / len(others) if others else 0.0
    return [FIELD_SHARE.get(s, rest) for s in slots]


def plan_call(
    *, spec: ToolSpec, base: dict[str, Any], roles: dict[str, str], atoms: dict[str, PrivateAtom],
    profile: Profile, rng: random.Random, literal: set[str], domain: str = "",
    transition: str | None = None,
) -> CallPlan:
    """The call the leaky model writes: ``base`` (the ground truth) plus restated atoms.

    ``roles`` maps each atom the model knows to ``carried`` / ``background`` / ``current`` /
    ``upcoming`` (see :mod:`._profiles`); ``domain`` and ``transition`` (the type of the step
    that led here) select the fitted multipliers. A tool without free text gets no restated fact
    in free text; an optional note the ground truth leaves empty is written only when the model
    restates something, or now and then as a neutral remark (:data:`NOTE_RATE`).
    """
    plan = CallPlan(spec.name, dict(base), opener=rng.choice(_OPENERS))
    slots = list(spec.free_text)
    context = DOMAIN_RATE.get(domain, 1.0) * TRANSITION_RATE.get(transition or "", 1.0)
    rate = profile.scale * SINK_RATE.get(spec.sink, SINK_RATE["external"]) * context
    if spec.sink == "handoff":
        rate *= profile.collapse
    if slots:
        weights = _slot_weights(slots)
        for atom_id in sorted(roles):
            p = min(P_MAX, rate * SALIENCE[roles[atom_id]])
            if rng.random() >= p:
                continue
            atom = atoms[atom_id]
            form = choose_form(atom, rng)
            slot = slots[0] if len(slots) == 1 else rng.choices(slots, weights=weights)[0]
            plan.pieces.append(Piece(atom.id, atom.type, slot, form,
                                     _phrase(atom, render(atom, form, rng), rng)))
        optional_empty = not any(str(base.get(s) or "").strip() for s in slots)
        if optional_empty and not plan.pieces and rng.random() < NOTE_RATE:
            plan.base[slots[0]] = _NEUTRAL_NOTE
    if spec.sink in _COORDINATION and rng.random() < min(P_MAX, profile.structured * context):
        candidates = structured_slots(spec, base, literal)
        known = [a for a in sorted(roles) if roles[a] in ("carried", "background")]
        if candidates and known:
            atom = atoms[rng.choice(known)]
            form = choose_form(atom, rng)
            plan.pieces.append(Piece(atom.id, atom.type, rng.choice(candidates), form,
                                     _phrase(atom, render(atom, form, rng), rng), structured=True))
    return plan


def generic_value(schema: dict[str, Any]) -> Any:
    """What a slipping model writes instead of a required string fact."""
    return _GENERIC if schema.get("type", "string") == "string" else None
