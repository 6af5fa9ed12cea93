"""What scoring reads: per executed call, the tool, the findings and the non-empty free-text slots.

Scoring reads the backends' audit log (a :class:`~tpguard.benchmark.trajectory.Trajectory`), never
the agent's own account (seed ``000_*`` §4.6). The same code scores exported spans, which carry
findings but no values: pass :class:`CallEvidence` (or plain ``(tool, findings)`` pairs) directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tpguard import Detector, Finding
from tpguard.detect._walk import iter_leaves

from ..trajectory import ToolCall, Trajectory
from ._tables import CaseTables

__all__ = ["CallEvidence", "CallInput", "as_evidence", "evidence_from_calls"]


@dataclass(frozen=True, slots=True)
class CallEvidence:
    """One executed call ``(t_k, a_k)`` as the evaluator sees it.

    ``free_text_slots`` are the argument paths of the call's non-empty free-text leaves (the slots
    ``s ∈ S_text`` of §5.6). ``None`` means unknown (spans without arguments): the slots are then
    taken from the free-text findings alone, which makes FTSlotRate an upper bound.
    ``ok`` is whether the backend executed the call successfully (utility counts only those, §5.1);
    privacy counts every call the backend received, failed or not.
    """

    tool: str
    findings: tuple[Finding, ...] = ()
    ok: bool = True
    free_text_slots: tuple[str, ...] | None = None

    def slots(self) -> tuple[str, ...]:
        if self.free_text_slots is not None:
            return self.free_text_slots
        return tuple(dict.fromkeys(f.path for f in self.findings if f.free_text))


CallInput = CallEvidence | tuple[str, Sequence[Finding]]


def as_evidence(calls: Iterable[CallInput]) -> list[CallEvidence]:
    """Accept :class:`CallEvidence` or ``(tool, findings)`` pairs (from exported spans)."""
    out: list[CallEvidence] = []
    for c in calls:
        if isinstance(c, CallEvidence):
            out.append(c)
        else:
            tool, findings = c
            out.append(CallEvidence(tool, tuple(findings)))
    return out


def evidence_from_calls(
    tables: CaseTables,
    calls: Trajectory | Iterable[ToolCall],
    detector: Detector | None = None,
) -> list[CallEvidence]:
    """Run the evaluator's detector over what each backend received, in step order."""
    det = detector if detector is not None else tables.detector
    seq = calls.calls if isinstance(calls, Trajectory) else list(calls)
    out = []
    for call in sorted(seq, key=lambda c: c.step):
        declared = tables.free_text.get(call.tool, ())
        findings = det.scan(call.arguments, free_text_slots=declared)
        slots = tuple(
            path for path, key, text in iter_leaves(call.arguments)
            if (key in declared or path in declared) and text.strip()
        )
        out.append(CallEvidence(call.tool, tuple(findings), call.outcome == "ok", slots))
    return out
