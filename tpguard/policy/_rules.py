"""Consistency rules of a policy knowledge base beyond its shape (seed ``000_*`` §3.2–3.4).

A :class:`~tpguard.policy.PolicyKB` that passes its field types can still weaken itself silently;
these rules refuse it instead:

- ids of atoms and names of tools are unique, and authorizations name listed atoms and tools;
- one decision per cell: the same (atom, tool) pair listed twice with a different ``allow``,
  ``fields`` or ``forms`` is a contradiction, and so are two type-level rules at the same level
  with the same target. (Before, the first rule and the *last* pair won silently.) The same entry
  written twice, identically, is accepted: it decides nothing new;
- every value, alias, variant and masked form is long enough to be detected; an atom the detector
  cannot find is a policy that forbids nothing;
- the exposure stage's ``recipients`` and ``disclosures`` (issue 28, item 5): recipient ids are
  unique, an address (or id) stands for one recipient only, a disclosure names a listed atom (when
  the file lists atoms) and a declared recipient (when it declares any; ``requester`` is implicit
  while no recipient is of kind requester), and one (atom or type, recipient or kind) is decided
  once — before, a typo'd *deny* was ignored and a broader allow let the recipient receive the
  atom, and duplicates resolved "first wins".

Each problem is ``(loc, expectation)``; messages name ids, tools and types, never atom values.
Cost: linear in atoms, authorizations and rules.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

# a value the policy names must be one the detector can find: the detector's own rule, so the two
# cannot drift (detect sits below the policy and imports none of it)
from ..detect.detector import is_detectable

if TYPE_CHECKING:
    from .kb import Authorization, PolicyKB, Rule

__all__ = ["MAX_PROBLEMS", "policy_problems"]

#: At most this many problems are reported for one policy (the first ones, in file order).
MAX_PROBLEMS = 50

Loc = tuple[str | int, ...]
_NUMERIC = re.compile(r"[\d\s\-./:()+,$€£¥%*#]+")
_FORMS = (("aliases", "alias"), ("variants", "variant"), ("masked", "masked form"))


def policy_problems(kb: PolicyKB) -> list[tuple[Loc, str]]:
    """Every consistency problem of ``kb`` (at most :data:`MAX_PROBLEMS`), in file order."""
    problems: list[tuple[Loc, str]] = []
    problems += _unique_ids(kb)
    problems += _undetectable(kb)
    problems += _references(kb)
    problems += _contradictory_pairs(kb.authorizations)
    problems += _contradictory_rules(kb.rules)
    problems += _recipients(kb)
    problems += _disclosures(kb)
    return problems[:MAX_PROBLEMS]


def _unique_ids(kb: PolicyKB) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    for what, key, ids in (("atoms", "id", [a.id for a in kb.atoms]),
                           ("tools", "name", [t.name for t in kb.tools])):
        first: dict[str, int] = {}
        for i, x in enumerate(ids):
            if x in first:
                out.append(((what, i, key), f"{'an' if key == 'id' else 'a'} {key} used once ({what}[{first[x]}] already has "
                                             f"the {key} {x!r})"))
            else:
                first[x] = i
    return out


def _undetectable(kb: PolicyKB) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    for i, atom in enumerate(kb.atoms):
        if not is_detectable(atom.value):
            out.append((("atoms", i, "value"), _too_short(atom.id, "value")))
        for field, label in _FORMS:
            for k, text in enumerate(getattr(atom, field)):
                if not is_detectable(text):
                    out.append((("atoms", i, field, k), _too_short(atom.id, label)))
    return out


def _too_short(atom_id: str, what: str) -> str:
    article = "an" if what[0] in "aeiou" else "a"
    return (f"{article} {what} the detector can find: at least 3 characters after normalization "
            f"(the {what} of atom {atom_id!r} is too short to detect)")


def _references(kb: PolicyKB) -> list[tuple[Loc, str]]:
    # Atoms and tools may also be bound at run time; when the file lists them, references must
    # resolve, so a typo in an id fails here rather than silently forbidding.
    atom_ids = {a.id for a in kb.atoms}
    tool_names = {t.name for t in kb.tools}
    out: list[tuple[Loc, str]] = []
    for i, auth in enumerate(kb.authorizations):
        if atom_ids and auth.atom not in atom_ids:
            out.append((("authorizations", i, "atom"),
                        f"the id of an atom listed under atoms (no atom has the id {auth.atom!r})"))
        if tool_names and auth.tool not in tool_names:
            out.append((("authorizations", i, "tool"),
                        f"the name of a tool listed under tools (no tool is named {auth.tool!r})"))
    return out


def _decision(item: Authorization | Rule) -> tuple[Any, ...]:
    return (item.allow, frozenset(item.fields), frozenset(item.forms))


def _contradictory_pairs(auths: tuple[Authorization, ...]) -> list[tuple[Loc, str]]:
    first: dict[tuple[str, str], int] = {}
    out: list[tuple[Loc, str]] = []
    for i, auth in enumerate(auths):
        j = first.setdefault((auth.atom, auth.tool), i)
        if j != i and _decision(auths[j]) != _decision(auth):
            out.append((("authorizations", i),
                        f"one decision per atom and tool (authorizations[{j}] already decides "
                        f"atom {auth.atom!r} for tool {auth.tool!r}, differently)"))
    return out


def _rule_target(rule: Rule) -> tuple[str, str, str]:
    if rule.tool is not None:
        return (rule.atom_type, "tool", rule.tool)
    if rule.purpose is not None:
        return (rule.atom_type, "purpose", " ".join(rule.purpose.casefold().split()))
    return (rule.atom_type, "sink", str(rule.sink))


def _contradictory_rules(rules: tuple[Rule, ...]) -> list[tuple[Loc, str]]:
    first: dict[tuple[str, str, str], int] = {}
    out: list[tuple[Loc, str]] = []
    for i, rule in enumerate(rules):
        target = _rule_target(rule)
        j = first.setdefault(target, i)
        if j != i and _decision(rules[j]) != _decision(rule):
            out.append((("rules", i),
                        f"one decision per atom type and {target[1]} (rules[{j}] already decides "
                        f"type {rule.atom_type!r} for this {target[1]}, differently)"))
    return out


def _fold(text: str) -> str:
    return " ".join(str(text).casefold().split())


def _recipients(kb: PolicyKB) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    ids: dict[str, int] = {}
    owner: dict[str, int] = {}  # folded id or address → the recipient that declared it first
    for i, r in enumerate(kb.recipients):
        if r.id in ids:
            out.append((("recipients", i, "id"), f"an id used once (recipients[{ids[r.id]}] already has "
                                                 f"the id {r.id!r})"))
            continue
        ids[r.id] = i
        for k, address in enumerate((r.id, *r.addresses)):
            j = owner.setdefault(_fold(address), i)
            if j != i:
                loc: Loc = ("recipients", i, "id") if k == 0 else ("recipients", i, "addresses", k - 1)
                out.append((loc, f"an address that stands for one recipient (recipients[{j}] "
                                 f"({kb.recipients[j].id!r}) already has it)"))
    return out


def _disclosures(kb: PolicyKB) -> list[tuple[Loc, str]]:
    from .exposure import REQUESTER

    atom_ids = {a.id for a in kb.atoms}
    recipients = {r.id for r in kb.recipients}
    if not any(r.kind == "requester" for r in kb.recipients):
        recipients.add(REQUESTER)
    out: list[tuple[Loc, str]] = []
    first: dict[tuple[str, str], int] = {}
    for i, d in enumerate(kb.disclosures):
        if d.atom is not None and atom_ids and d.atom not in atom_ids:
            out.append((("disclosures", i, "atom"),
                        f"the id of an atom listed under atoms (no atom has the id {d.atom!r})"))
        if d.recipient is not None and kb.recipients and d.recipient not in recipients:
            out.append((("disclosures", i, "recipient"),
                        f"the id of a recipient listed under recipients (no recipient has the id "
                        f"{d.recipient!r})"))
        what = f"atom {d.atom!r}" if d.atom is not None else f"type {d.atom_type!r}"
        who = f"recipient {d.recipient!r}" if d.recipient is not None else f"kind {d.recipient_kind!r}"
        j = first.setdefault((what, who), i)
        if j != i and kb.disclosures[j].allow != d.allow:
            out.append((("disclosures", i), f"one decision per atom and recipient (disclosures[{j}] "
                                             f"already decides {what} for {who}, differently)"))
    return out
