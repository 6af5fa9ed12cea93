"""``off``, ``audit``, ``enforce`` and ``redact``: tpguard itself, per case.

The guard is given the case's atoms as a deployment would register them — value, aliases and
masked forms — but *not* the semantic variants (lay paraphrases). Those are the evaluator's answer
key (seed ``000_*`` Appendix D.1): a deployment does not enumerate every paraphrase a model might
write, so leaks by paraphrase count against tpguard. ``knows_variants=True`` hands them over too.

Where tpguard decides: at the runner's gateway (``process``), or — for framework agents measured as
deployed — inside tpguard's own adapter, which gets an :class:`~._observed.ObservedGuard` from
:meth:`_TpguardCase.adapter_guard` (same policy, same mode) that reports each decision back to
the gateway.

Feedback after a block (issue 31): ``enforce`` is measured with the product's default feedback —
on an adapter path that can rewrite the agent's memory (LangChain's middleware, smolagents'
``rewrite_blocked_calls`` on a ``ToolCallingAgent``) the blocked call is rewritten to its
placeholder form, and once the resent placeholder call went through the blocked turn leaves the
agent's memory (the adapters' compaction, the default since the six-case real-model run:
docs/real-models.md). ``enforce:no-compact`` keeps the blocked turn (the default before);
``enforce:message`` is the earliest feedback (the refusal message alone); ``enforce:then-redact``
adds ``Guard(escalate="redact")``: block first, rewrite a call that repeats a refused one
(``enforce:no-compact:then-redact`` without compaction). ``enforce:compact`` and
``enforce:compact:then-redact`` are the names the published runs used for what ``enforce`` and
``enforce:then-redact`` now are; they stay valid, so those runs re-run as they were.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tpguard import Decision, Guard, PolicyKB, ToolSpec

from ._observed import DecisionListener, ObservedGuard
from .base import GuardAction

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["ENFORCE_VARIANTS", "Off", "TpguardMode", "action_of", "deployment_policy"]

#: ``enforce`` variants by guard name: (escalate, rewrite blocked calls in the agent's memory,
#: drop the blocked turn once its resend went through)
ENFORCE_VARIANTS: dict[str, tuple[str | None, bool, bool]] = {
    "enforce": (None, True, True), "enforce:message": (None, False, False),
    "enforce:no-compact": (None, True, False), "enforce:then-redact": ("redact", True, True),
    "enforce:no-compact:then-redact": ("redact", True, False),
    "enforce:compact": (None, True, True), "enforce:compact:then-redact": ("redact", True, True)}
_NO_FEEDBACK: tuple[str | None, bool, bool] = (None, False, False)


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
    def __init__(self, guard: Guard, rewrite_blocked: bool = True, compact: bool = False) -> None:
        self.guard = guard
        self.rewrite_blocked = rewrite_blocked
        self.compact = compact

    def process(self, spec: ToolSpec, arguments: dict[str, Any]) -> GuardAction:
        act = action_of(self.guard.check(spec, arguments))
        return act if act.action == "redact" else replace(act, arguments=arguments)

    def adapter_guard(self, listener: DecisionListener) -> ObservedGuard:
        """A fresh guard for tpguard's adapters: this case's policy and mode; every decision it
        takes is passed to ``listener`` (the gateway records it as the attempt)."""
        observed = ObservedGuard(self.guard.policy, mode=self.guard.mode, listener=listener,
                                 escalate=self.guard.escalate)
        observed.rewrite_blocked = self.rewrite_blocked
        observed.compact_after_resend = self.compact
        return observed


_DESCRIPTIONS = {
    "audit": "tpguard, audit mode: records, changes nothing",
    "enforce": "tpguard, enforce mode: blocks calls carrying forbidden atoms; where the adapter "
               "can, rewrites the blocked call in the agent's memory to its placeholder form and "
               "drops the blocked turn once its resend went through",
    "enforce:message": "tpguard, enforce mode with the refusal message alone (no memory rewrite)",
    "enforce:no-compact": "tpguard, enforce mode with the memory rewrite; the blocked turn stays in "
                          "the agent's memory after its resend (the default before compaction)",
    "enforce:then-redact": "tpguard, enforce mode that rewrites (as redact) a call repeating a "
                           "refused one; memory rewrite and compaction as enforce",
    "enforce:no-compact:then-redact": "tpguard, enforce mode that rewrites (as redact) a call "
                                      "repeating a refused one; memory rewrite without compaction",
    "enforce:compact": "the same as enforce (the name published runs used for it)",
    "enforce:compact:then-redact": "the same as enforce:then-redact (the name published runs used "
                                   "for it)",
    "redact": "tpguard, redact mode: placeholders in free text, blocks structured leaks",
}


@dataclass(frozen=True)
class TpguardMode:
    """tpguard in ``mode``; ``variant`` names an ``enforce`` variant (:data:`ENFORCE_VARIANTS`)."""

    mode: str
    knows_variants: bool = False
    variant: str | None = None

    @property
    def name(self) -> str:
        return self.variant or self.mode

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self.name]

    def describe(self) -> dict[str, Any]:
        escalate, rewrite, compact = ENFORCE_VARIANTS.get(self.name, _NO_FEEDBACK)
        out = {"name": self.name, "description": self.description,
               "knows_variants": self.knows_variants}
        if self.mode == "enforce":
            out.update(escalate=escalate, rewrite_blocked=rewrite)
            if compact:
                out.update(compact_after_resend=True)
        return out

    def prepare(self, case: Case) -> _TpguardCase:
        policy = deployment_policy(case, knows_variants=self.knows_variants)
        escalate, rewrite, compact = ENFORCE_VARIANTS.get(self.name, _NO_FEEDBACK)
        guard = Guard(policy, mode=self.mode, escalate=escalate)  # type: ignore[arg-type]
        return _TpguardCase(guard, rewrite_blocked=rewrite, compact=compact)
