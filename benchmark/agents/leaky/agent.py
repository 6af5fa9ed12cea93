"""``LeakyAgent``: a seeded behaviour model of how tool-using LLM agents over-disclose.

It is a model of the failure modes seed ``000_*`` §7–8 reports, **not a measurement of any LLM**:

* it follows the case's ground-truth path (so its utility is realistic), with occasional utility
  slips — a forgotten stage, a left-out optional stage, a required fact written generically;
* it writes free-text slots (note, message, summary, description, work_notes, body, …) and, now and
  then, a structured field from the context it has accumulated: **purpose-specific context
  collapse** into handoffs (§8.1), **progressive diffusion** of facts used at stage ``k`` into the
  later stages' text (§8.2) and **free-text amplification** into tickets, notes, notifications and
  documents (§8.3), at the per-sink rates of :mod:`._profiles`;
* it restates atoms in several forms — verbatim, reformatted, alias, partial, paraphrase, typo —
  in the proportions of :mod:`._forms`;
* when the guard withholds a call it retries with less, as a capable model follows an error
  message: it drops the atom types named in the message from the named fields (at most two
  retries; then the stage fails and it moves on). A call rejected for bad arguments is not retried.

Everything is drawn from ``random.Random`` seeded by ``(profile, seed, case.id)``: the same inputs
give the same trajectory, with no global state.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ..base import AgentResult, ToolGateway
from ._compose import CallPlan, generic_value, plan_call
from ._profiles import Profile, get_profile
from ._retry import parse_block_message

if TYPE_CHECKING:
    from ...cases.schema import Case

__all__ = ["MAX_RETRIES", "LeakyAgent"]

MAX_RETRIES = 2
_MESSAGE_SINKS = frozenset({"email", "notification"})
_ADDRESS = frozenset({"email", "phone"})


def _roles(case: Case, index: int, executed: set[str]) -> dict[str, str]:
    """Each atom's role for the ``index``-th ground-truth call (see :mod:`._profiles`)."""
    needed: dict[str, set[str]] = {}
    for r in case.required:
        needed.setdefault(r.tool, set()).add(r.atom)
    tools = [g.tool for g in case.ground_truth]
    current = needed.get(tools[index], set())
    carried = set().union(*(needed.get(t, set()) for t in tools[:index] if t in executed))
    anywhere = set().union(*needed.values()) if needed else set()
    roles = {}
    for atom in case.atoms:
        a = atom.id
        if a in current:
            roles[a] = "current"
        elif a in carried:
            roles[a] = "carried"
        elif a not in anywhere:
            roles[a] = "background"
        else:
            roles[a] = "upcoming"
    return roles


class LeakyAgent:
    """``LeakyAgent(profile="default")`` — profiles ``careful``, ``default``, ``leaky``."""

    def __init__(self, profile: str = "default") -> None:
        self.profile: Profile = get_profile(profile)
        self.name = "leaky" if profile == "default" else f"leaky:{profile}"

    def run(self, case: Case, gateway: ToolGateway, *, seed: int = 0) -> AgentResult:
        rng = random.Random(f"leaky|{self.profile.name}|{seed}|{case.id}")
        atoms = {a.id: a for a in case.atoms}
        optional = {s.tool for s in case.workflow if s.optional}
        executed: set[str] = set()
        previous: str | None = None
        log: dict[str, Any] = {"profile": self.profile.name, "leaks": [], "skipped": [],
                               "failed": [], "retries": 0, "blocked": 0}
        calls = done = 0
        for index, gt in enumerate(case.ground_truth):
            skip = self.profile.skip_optional if gt.tool in optional else self.profile.skip_stage
            if rng.random() < skip:
                log["skipped"].append(gt.tool)
                continue
            spec = case.tool(gt.tool)
            plan = plan_call(spec=spec, base=self._slip(case, gt.tool, gt.arguments, rng),
                             roles=_roles(case, index, executed), atoms=atoms,
                             profile=self.profile, rng=rng, literal=self._literal(case, gt.tool),
                             domain=case.domain,
                             transition=None if previous is None
                             else case.transition_type(previous, gt.tool))
            executed.add(gt.tool)
            ok, calls = self._attempt(plan, gateway, calls, log)
            if ok:
                previous = gt.tool
            done += ok
            if not ok:
                log["failed"].append(gt.tool)
        total = len(case.ground_truth)
        return AgentResult(final_answer=f"Finished the workflow: {done} of {total} steps completed.",
                           extra=log)

    def _attempt(self, plan: CallPlan, gateway: ToolGateway, calls: int,
                 log: dict[str, Any]) -> tuple[bool, int]:
        for attempt in range(MAX_RETRIES + 1):
            calls += 1
            log["leaks"].extend({"call": calls, "tool": plan.tool, **f} for f in plan.forms())
            obs = gateway.call(plan.tool, plan.arguments(), call_id=f"leaky-{calls}")
            if obs.ok:
                return True, calls
            if not obs.blocked or attempt == MAX_RETRIES:
                return False, calls
            log["blocked"] += 1
            types, fields = parse_block_message(obs.content)
            if not (plan.drop(types, fields) or plan.drop(None, fields) or plan.drop(None, None)):
                return False, calls  # nothing left to leave out: a retry would be identical
            log["retries"] += 1
        return False, calls

    def _slip(self, case: Case, tool: str, base: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        """Now and then a required structured string fact is written generically (a utility slip:
        the stage's object is still created, so it costs Gold Arg, not the end state)."""
        out = dict(base)
        spec = case.tool(tool)
        props = (spec.input_schema or {}).get("properties", {})
        for r in case.required:
            if (r.tool != tool or r.field is None or r.field in spec.free_text
                    or not isinstance(out.get(r.field), str)
                    or (spec.sink in _MESSAGE_SINKS and case.policy.atom(r.atom).type in _ADDRESS)):
                continue  # nobody writes "see the record" as a message's recipient
            if rng.random() < self.profile.drop_fact:
                generic = generic_value(props.get(r.field, {}))
                if generic is not None:
                    out[r.field] = generic
        return out

    @staticmethod
    def _literal(case: Case, tool: str) -> set[str]:
        fields = {"case_id"}
        for c in case.checks:
            if c.tool == tool:
                fields |= {k for k, v in c.expect.items() if not v.startswith("$")}
        return fields
