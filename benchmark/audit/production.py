"""Production audit (issue 34, item 2): what ``enforce`` and ``redact`` would have done to traced
calls, per session, tool, sink, purpose, atom type and field — the numbers a team reads before it
lets the guard block anything.

Every tool span's findings are decided again against the given policy (so a policy edited since
the traces were recorded is what is audited: findings it decides otherwise than the recording
guard did are counted as ``changed``); an atom the policy does not register (a session's own atom)
is decided by its type, as the guard decides it. Then, per call:

* request stage — ``enforce`` blocks a call with a forbidden finding; ``redact`` rewrites it when
  every forbidden finding sits in a free-text slot and blocks it otherwise;
* result stage — a result with out-of-scope items or forbidden atoms (``tpguard.result.*``) is
  withheld by ``enforce`` and filtered by ``redact``;
* exit stage — a visible exit carrying atoms its recipient may not receive (``tpguard.exit.*``,
  decided by recipient, so the recorded decision is kept) is withheld by ``enforce`` and redacted by
  ``redact``.

Calls are grouped by ``tpguard.session.id``, or by trace when a span has no session. Nothing here
reads or prints a value: atom ids, types, argument paths and counts only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from tpguard import PolicyKB, PrivateAtom, ToolSpec
from tpguard.policy import AccessResolver

from ..metrics._tables import field_of
from ._facts import CallFacts

__all__ = ["DIMENSIONS", "Intervention", "ProductionAudit", "audit_calls"]

#: the breakdowns, in report order
DIMENSIONS = ("tool", "sink", "purpose", "atom_type", "field")
_NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Intervention:
    """One call (or exit) a stricter mode would have changed: what, where, and why (no values)."""

    stage: str            # request | result | exit
    session: str
    trace_id: str
    span_id: str
    start_ns: int
    tool: str
    sink: str
    purpose: str
    enforce: str          # block | withhold
    redact: str           # block | redact | filter
    #: forbidden findings: (atom_id, atom_type, field path, method)
    atoms: tuple[tuple[str, str, str, str], ...] = ()

    @property
    def types(self) -> list[str]:
        return sorted({a[1] for a in self.atoms if a[1]})

    @property
    def fields(self) -> list[str]:
        return sorted({field_of(a[2]) for a in self.atoms if a[2]})

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "session": self.session, "trace_id": self.trace_id,
                "span_id": self.span_id, "time": _iso(self.start_ns), "tool": self.tool,
                "sink": self.sink, "purpose": self.purpose, "enforce": self.enforce,
                "redact": self.redact, "atom_ids": sorted({a[0] for a in self.atoms if a[0]}),
                "atom_types": self.types, "fields": self.fields,
                "methods": sorted({a[3] for a in self.atoms if a[3]})}


def _iso(ns: int) -> str | None:
    return datetime.fromtimestamp(ns / _NS, timezone.utc).isoformat() if ns else None


@dataclass
class ProductionAudit:
    """Every checked call of the sources, and the interventions a stricter mode would have made."""

    calls: int = 0
    exits: int = 0
    modes: Counter[str] = field(default_factory=Counter)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    interventions: list[Intervention] = field(default_factory=list)
    unknown_tools: Counter[str] = field(default_factory=Counter)
    #: findings the policy decides otherwise than the guard that recorded them
    changed: int = 0

    def stage(self, name: str) -> list[Intervention]:
        return [i for i in self.interventions if i.stage == name]

    def breakdown(self, stage: str = "request") -> dict[str, list[dict[str, Any]]]:
        """Per dimension, one row per value: calls enforce would block (withhold), calls redact
        would rewrite and block, forbidden findings, and the sessions they happened in."""
        rows: dict[str, dict[str, dict[str, Any]]] = {d: {} for d in DIMENSIONS}
        for it in self.stage(stage):
            keys = {"tool": {it.tool}, "sink": {it.sink}, "purpose": {it.purpose},
                    "atom_type": set(it.types), "field": set(it.fields)}
            for dim, values in keys.items():
                for v in values:
                    r = rows[dim].setdefault(v, {dim: v, "enforce": 0, "redact_rewrite": 0,
                                                 "redact_block": 0, "findings": 0, "sessions": set()})
                    r["enforce"] += 1
                    r["redact_rewrite"] += it.redact in ("redact", "filter")
                    r["redact_block"] += it.redact == "block"
                    r["findings"] += sum(1 for a in it.atoms if _on(dim, v, a))
                    r["sessions"].add(it.session)
        return {d: [{**r, "sessions": sorted(r["sessions"])}
                    for r in sorted(rows[d].values(), key=lambda r: (-r["enforce"], str(r[d])))]
                for d in DIMENSIONS}

    def to_dict(self) -> dict[str, Any]:
        stages = {}
        for s in ("request", "result", "exit"):
            its = self.stage(s)
            stages[s] = {"enforce": len(its), "redact_rewrite": sum(i.redact in ("redact", "filter") for i in its),
                         "redact_block": sum(i.redact == "block" for i in its),
                         "by": self.breakdown(s)}
        return {"calls": self.calls, "exits": self.exits, "recorded_modes": dict(self.modes),
                "session_count": len(self.sessions), "changed_by_policy": self.changed,
                "unknown_tools": dict(self.unknown_tools.most_common()), "stages": stages,
                "sessions": self._sessions()}

    def _sessions(self) -> list[dict[str, Any]]:
        by_session: dict[str, list[Intervention]] = {}
        for i in self.interventions:  # (one pass: a month of traces has many sessions)
            by_session.setdefault(i.session, []).append(i)
        return [self._session(k, v, by_session.get(k, [])) for k, v in self.sessions.items()]

    def _session(self, key: str, s: dict[str, Any], found: list[Intervention]) -> dict[str, Any]:
        its = [i.to_dict() for i in found]
        return {"session": key, "traces": sorted(s["traces"]), "calls": s["calls"],
                "start": _iso(s["start"]), "end": _iso(s["end"]),
                "would_block": sum(1 for i in its if i["stage"] == "request"),
                "would_withhold": sum(1 for i in its if i["stage"] != "request"),
                "interventions": its}


def _on(dim: str, value: str, atom: tuple[str, str, str, str]) -> bool:
    """Whether a forbidden finding counts in row ``value`` of ``dim`` (findings known by id)."""
    if dim == "atom_type":
        return atom[1] == value
    if dim == "field":
        return bool(atom[0]) and field_of(atom[2]) == value
    return bool(atom[0])


class _Decider:
    """Decides a span's findings against the policy (atom by id, else by type), once per key."""

    def __init__(self, policy: PolicyKB) -> None:
        self.policy = policy
        self.resolver = AccessResolver(policy)
        self.atoms = {a.id for a in policy.atoms}
        self.tools = {t.name: t for t in policy.tools}

    def spec(self, facts: CallFacts) -> ToolSpec:
        known = self.tools.get(facts.tool)
        if known is not None:
            return known
        sink: Any = facts.sink or "external"  # (as recorded: not re-validated)
        return ToolSpec.model_construct(name=facts.tool, purpose=facts.purpose, sink=sink)

    def forbidden(self, facts: CallFacts, spec: ToolSpec) -> tuple[list[tuple[str, str, str, str, bool]], int]:
        out: list[tuple[str, str, str, str, bool]] = []
        changed = 0
        for f in facts.findings:
            atom: str | PrivateAtom = (f.atom_id if f.atom_id in self.atoms
                                       else PrivateAtom.model_construct(id=f.atom_id, type=f.atom_type, value=""))
            allowed = self.resolver.access(atom, spec).permits(f.path, f.method)
            if f.authorized is not None and f.authorized != allowed:
                changed += 1
            if not allowed:
                out.append((f.atom_id, f.atom_type, f.path, f.method, f.free_text))
        return out, changed


def _in_range(facts: CallFacts, since: datetime | None, until: datetime | None) -> bool:
    t = facts.start_ns / _NS
    return not ((since is not None and t < since.timestamp())
                or (until is not None and t > until.timestamp()))


def audit_calls(policy: PolicyKB, calls: Iterable[CallFacts], *, since: datetime | None = None,
                until: datetime | None = None) -> ProductionAudit:
    """The production audit of ``calls`` (tool and exit spans' facts) under ``policy``, those
    started in ``[since, until]`` only. O(findings)."""
    decide = _Decider(policy)
    out = ProductionAudit()
    for c in sorted(calls, key=lambda c: c.start_ns):
        if not _in_range(c, since, until):
            continue
        key = c.session or f"trace {c.trace_id}"
        s = out.sessions.setdefault(key, {"traces": set(), "calls": 0, "start": c.start_ns,
                                          "end": c.start_ns})
        s["traces"].add(c.trace_id)
        s["end"] = max(s["end"], c.start_ns)
        where = dict(session=key, trace_id=c.trace_id, span_id=c.span_id, start_ns=c.start_ns,
                     tool=c.tool, sink=c.sink, purpose=c.purpose)
        if c.stage == "request":
            out.calls += 1
            s["calls"] += 1
            out.modes[c.mode or "unknown"] += 1
            _request(out, decide, c, where)
        else:
            out.exits += 1
        _exit(out, c, where)
    return out


def _request(out: ProductionAudit, decide: _Decider, c: CallFacts, where: dict[str, Any]) -> None:
    if c.tool not in decide.tools:
        out.unknown_tools[c.tool] += 1
    spec = decide.spec(c)
    forbidden, changed = decide.forbidden(c, spec)
    out.changed += changed
    if forbidden:
        structured = any(not ft for *_, ft in forbidden)
        out.interventions.append(Intervention(
            "request", **where, enforce="block", redact="block" if structured else "redact",
            atoms=tuple(dict.fromkeys(a[:4] for a in forbidden))))
    if c.result_scope_count or c.result_forbidden_types:
        out.interventions.append(Intervention(
            "result", **where, enforce="withhold", redact="filter",
            atoms=tuple(("", t, "", "") for t in c.result_forbidden_types)))


def _exit(out: ProductionAudit, c: CallFacts, where: dict[str, Any]) -> None:
    if c.exit_visible is False or not (c.exit_forbidden_ids or c.exit_forbidden_types):
        return
    fields = c.exit_fields if len(c.exit_fields) == 1 else ("",)  # (paths of all findings)
    atoms = (*((i, "", fields[0], "") for i in c.exit_forbidden_ids),
             *(("", t, fields[0], "") for t in c.exit_forbidden_types))
    out.interventions.append(Intervention(
        "exit", **where, enforce="withhold", redact="redact", atoms=atoms))
