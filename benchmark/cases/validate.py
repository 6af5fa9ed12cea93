"""Deterministic per-case validation (seed ``000_*`` §6.2 "rule-based checks … executable tool
chain, current-task private atoms, allowed and forbidden labels, and values detectable in backend
logs"; AgentDojo: replay every ground truth before any agent is scored).

Checks, each reported as a :class:`Problem` with its reason:

``schema``       task text, ≥ 2 tools, a workflow, a binding for every tool, a ground truth;
``disjoint``     no atom–tool pair both authorized and forbidden (explicit pairs vs rules, or two
                 explicit pairs that disagree);
``required``     every required fact is authorized for its tool (and field);
``detectable``   every atom is found by :class:`tpguard.Detector` in free text and in a field;
``safe_path``    replaying the ground truth through a fresh :class:`Environment` passes every
                 end-state check, delivers every required fact, and over-discloses nothing;
``opportunities`` at least ``min_forbidden`` forbidden atom–tool pairs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from tpguard import Detector
from tpguard.policy import PolicyKB, Rule

from ..backends import AuditLog, Environment, ToolError
from .schema import Case, Suite

__all__ = ["CHECKS", "Problem", "check_case", "check_suite"]

CHECKS = ("schema", "disjoint", "required", "detectable", "safe_path", "opportunities")


@dataclass(frozen=True)
class Problem:
    case_id: str
    check: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _schema(case: Case) -> list[str]:
    out = []
    if not case.task.strip():
        out.append("the task text is empty")
    if len(case.tools) < 2:
        out.append(f"a case needs at least 2 tools (has {len(case.tools)})")
    if not case.workflow:
        out.append("the expected workflow G is empty")
    tools = {t.name: t for t in case.tools}
    for name in tools:
        if name not in case.bindings:
            out.append(f"tool {name!r} has no backend binding")
    for name, b in case.bindings.items():
        props = (tools[name].input_schema or {}).get("properties", {}) if name in tools else {}
        missing = [r for r in b.required if props and r not in props]
        if missing:
            out.append(f"binding of {name!r} requires arguments missing from its schema: {missing}")
    if not case.ground_truth:
        out.append("no ground-truth calls")
    for i, call in enumerate(case.ground_truth):
        if call.tool not in tools:
            out.append(f"ground_truth[{i}] calls unknown tool {call.tool!r}")
    return out


def _state(allow: object) -> str:
    return "conditional" if allow == "conditional" else "authorized" if allow else "forbidden"


def _applicable(policy: PolicyKB, atom_id: str, tool: str) -> list[Rule]:
    """Every type-level rule that speaks about (atom, tool) — shadowed ones included."""
    try:
        atype, spec = policy.atom(atom_id).type, policy.tool(tool)
    except KeyError:
        return []
    purpose = " ".join(spec.purpose.casefold().split())
    return [r for r in policy.rules if r.atom_type == atype and (
        r.tool == tool or (r.purpose is not None and " ".join(r.purpose.casefold().split()) == purpose)
        or r.sink == spec.sink)]


def _disjoint(case: Case) -> list[str]:
    out: list[str] = []
    seen: dict[tuple[str, str], str] = {}
    for a in case.policy.authorizations:
        key, explicit = (a.atom, a.tool), _state(a.allow)
        if key in seen and (seen[key] == "forbidden") != (explicit == "forbidden"):
            out.append(f"atom {a.atom!r} is both allowed and forbidden for tool {a.tool!r} "
                       "by two explicit authorizations")
        seen[key] = explicit
        for rule in _applicable(case.policy, a.atom, a.tool):
            if (_state(rule.allow) == "forbidden") != (explicit == "forbidden"):
                out.append(f"atom {a.atom!r} for tool {a.tool!r}: the explicit pair says {explicit} "
                           f"but a {rule.level} rule says {_state(rule.allow)}")
    return out


def _required(case: Case) -> list[str]:
    res = case.policy.resolver()
    return [f"required fact ({r.atom!r} → {r.tool!r}{f', field {r.field!r}' if r.field else ''}) "
            "is not authorized"
            for r in case.required if not res.access(r.atom, r.tool).permits(r.field)]


def _detectable(case: Case) -> list[str]:
    det, out = Detector(case.atoms), []
    for atom in case.atoms:
        free = {a.atom_id for a in det.scan({"note": f"For the record: {atom.value} (as stated)."},
                                            free_text_slots=("note",))}
        field = {a.atom_id for a in det.scan({"value": atom.value})}
        if atom.id not in free or atom.id not in field:
            where = "free text" if atom.id not in free else "a structured field"
            out.append(f"atom {atom.id!r} ({atom.type}) is not detectable in {where}")
    return out


def _safe_path(case: Case) -> list[str]:
    out: list[str] = []
    with AuditLog(":memory:") as audit:
        env = Environment(case, audit, run_id="validate", agent="oracle", guard="off")
        for i, call in enumerate(case.ground_truth):
            try:
                env.call(call.tool, call.arguments)
            except ToolError as e:
                out.append(f"ground_truth[{i}] ({call.tool}) was rejected: {e}")
        failed = [cid for cid, ok in env.end_state() if not ok]
        if failed:
            out.append(f"end-state checks fail after the oracle path: {', '.join(failed)}")
        trajectory = audit.trajectory("validate", case.id)
    det, res = Detector(case.atoms), case.policy.resolver()
    delivered: set[tuple[str, str, str]] = set()
    leaks: set[str] = set()
    for received in trajectory.calls:
        slots = case.tool(received.tool).free_text
        for f in det.scan(received.arguments, free_text_slots=slots):
            if res.access(f.atom_id, received.tool).permits(f.path, f.method):
                delivered.add((f.atom_id, received.tool, f.path))
            else:
                leaks.add(f"{f.atom_id} → {received.tool}.{f.path}")
    if leaks:
        out.append(f"the oracle path over-discloses: {', '.join(sorted(leaks))}")
    for r in case.required:
        if not any(a == r.atom and t == r.tool and (r.field is None or p == r.field)
                   for a, t, p in delivered):
            out.append(f"the oracle path does not deliver required fact ({r.atom!r} → {r.tool!r})")
    return out


def _opportunities(case: Case, min_forbidden: int) -> list[str]:
    forbidden = case.matrix().counts()["forbidden"]
    if forbidden < min_forbidden:
        return [f"only {forbidden} forbidden atom–tool opportunities (need ≥ {min_forbidden})"]
    return []


def check_case(case: Case, *, min_forbidden: int = 1) -> list[Problem]:
    """Every problem of one case (empty when the case is valid)."""
    problems = [Problem(case.id, "schema", m) for m in _schema(case)]
    found: Iterable[tuple[str, list[str]]] = (
        ("disjoint", _disjoint(case)),
        ("required", _required(case)),
        ("detectable", _detectable(case)),
        ("opportunities", _opportunities(case, min_forbidden)),
    )
    for check, messages in found:
        problems.extend(Problem(case.id, check, m) for m in messages)
    if not any(p.check == "schema" for p in problems):  # replay needs a complete case
        problems.extend(Problem(case.id, "safe_path", m) for m in _safe_path(case))
    return problems


def check_suite(suite: Suite, *, min_forbidden: int = 1) -> list[Problem]:
    """Problems of every case of ``suite`` (plus duplicate case ids)."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for case in suite:
        if case.id in seen:
            problems.append(Problem(case.id, "schema", "duplicate case id in the suite"))
        seen.add(case.id)
        problems.extend(check_case(case, min_forbidden=min_forbidden))
    return problems
