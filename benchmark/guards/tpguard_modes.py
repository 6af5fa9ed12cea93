"""``off``, ``audit``, ``enforce`` and ``redact``: tpguard itself, per case.

The guard is given the case's atoms as a deployment would register them — value, aliases and
masked forms — but *not* the semantic variants (lay paraphrases). Those are the evaluator's answer
key (seed ``000_*`` Appendix D.1): a deployment does not enumerate every paraphrase a model might
write, so leaks by paraphrase count against tpguard. ``knows_variants=True`` hands them over too.

Where tpguard decides: at the runner's gateway (``process``), or — for framework agents measured as
deployed — inside tpguard's own adapter, which gets an :class:`~._observed.ObservedGuard` from
:meth:`_TpguardCase.adapter_guard` (same policy, same mode) that reports each decision back to
the gateway.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tpguard import Decision, Guard, PolicyKB, ToolSpec

from ._observed import DecisionListener, ObservedGuard
from .base import GuardAction

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["Off", "TpguardMode", "action_of", "deployment_policy"]


def deployment_policy(case: Case, *, knows_variants: bool = False) -> PolicyKB:
    """The case's policy as the guard gets it (see the module docstring)."""
    if knows_variants:
        return case.policy
    atoms = tuple(a.model_copy(update={"variants": ()}) for a in case.atoms)
    return case.policy.model_copy(update={"atoms": atoms})


def action_of(d: Decision) -> GuardAction:
    """A tpguard :class:`Decision` as the gateway records it (types and fields, never values)."""
    types = tuple(sorted({f.atom_type for f in d.forbidden}))
    fields = tuple(sorted({f.path for f in d.forbidden}))
    atoms = tuple(dict.fromkeys((f.atom_id, f.atom_type, f.path, f.method) for f in d.forbidden))
    if d.blocked:
        return GuardAction("block", d.arguments, d.message, types, fields, atoms)
    if d.redacted:
        return GuardAction("redact", d.arguments, d.message, types, fields, atoms)
    return GuardAction("allow", d.arguments, None, types, fields, atoms)


class _Pass:
    def process(self, spec: ToolSpec, arguments: dict[str, Any]) -> GuardAction:
        return GuardAction("allow", arguments)


@dataclass(frozen=True)
class Off:
    name: str = "off"
    description: str = "no guard: arguments reach the backend as the agent wrote them"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description}

    def prepare(self, case: Case) -> _Pass:
        return _Pass()


class _TpguardCase:
    def __init__(self, guard: Guard) -> None:
        self.guard = guard

    def process(self, spec: ToolSpec, arguments: dict[str, Any]) -> GuardAction:
        act = action_of(self.guard.check(spec, arguments))
        return act if act.action == "redact" else replace(act, arguments=arguments)

    def adapter_guard(self, listener: DecisionListener) -> ObservedGuard:
        """A fresh guard for tpguard's adapters: this case's policy and mode; every decision it
        takes is passed to ``listener`` (the gateway records it as the attempt)."""
        return ObservedGuard(self.guard.policy, mode=self.guard.mode, listener=listener)


@dataclass(frozen=True)
class TpguardMode:
    mode: str
    knows_variants: bool = False

    @property
    def name(self) -> str:
        return self.mode

    @property
    def description(self) -> str:
        return {"audit": "tpguard, audit mode: records, changes nothing",
                "enforce": "tpguard, enforce mode: blocks calls carrying forbidden atoms",
                "redact": "tpguard, redact mode: placeholders in free text, blocks structured leaks",
                }[self.mode]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "knows_variants": self.knows_variants}

    def prepare(self, case: Case) -> _TpguardCase:
        policy = deployment_policy(case, knows_variants=self.knows_variants)
        return _TpguardCase(Guard(policy, mode=self.mode))  # type: ignore[arg-type]
