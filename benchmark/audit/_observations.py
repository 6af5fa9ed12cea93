"""The rows the acquisition and exposure suites keep in ``audit.sqlite``'s ``observations`` table,
and the scoring evidence rebuilt from them (issue 29 item 4).

* exposure — one ``observation`` row per channel-labelled observation ``(t, c, o_{t,c}, ν_c)``
  (turn, channel, recipient, visibility, delivery status, tool, the text after any guard), then one
  ``candidate`` row per string of the requester's report;
* acquisition — one ``observation`` row per tool result as the agent saw it (after any guard),
  then the ``response`` and the ``probe`` answer.

The rows hold raw text by design: ``audit.sqlite`` is the run's sandboxed evidence, like the
``calls`` table beside it; records and reports never do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

__all__ = ["CANDIDATE", "OBSERVATION", "PROBE", "RESPONSE", "acq_evidence", "acq_rows",
           "exp_evidence", "exp_rows"]

OBSERVATION, CANDIDATE, RESPONSE, PROBE = "observation", "candidate", "response", "probe"


def exp_rows(run: Any) -> list[dict[str, Any]]:
    """The rows of an exposure ``SessionRun``."""
    rows: list[dict[str, Any]] = [
        {"kind": OBSERVATION, "turn": o.turn, "channel": o.channel, "recipient": o.recipient,
         "visible": o.visible, "status": o.status, "tool": o.tool, "text": o.text}
        for o in run.observations]
    rows += [{"kind": CANDIDATE, "text": c} for c in (run.candidates or ())]
    return rows


def acq_rows(run: Any) -> list[dict[str, Any]]:
    """The rows of an acquisition ``CaseRun``."""
    rows: list[dict[str, Any]] = [
        {"kind": OBSERVATION, "turn": o.step, "tool": o.tool, "status": "ok" if o.ok else "error",
         "text": o.content} for o in run.observations]
    rows.append({"kind": RESPONSE, "text": run.final_answer or ""})
    if run.probe_answer is not None:
        rows.append({"kind": PROBE, "text": run.probe_answer})
    return rows


def exp_evidence(case: Any, rows: Sequence[Mapping[str, Any]], *, completed: bool, agent: str,
                 guard: str) -> Any:
    """:class:`~..metrics.exposure.ExpEvidence` of one stored session (``case``: its
    ``ExpCase``, which holds ``S``, ``Auth``, ``c*`` and the channels)."""
    from ..backends.exposure import ChannelObservation
    from ..cases.exposure._interface import reply_channel
    from ..metrics.exposure import ExpEvidence

    obs = [ChannelObservation(turn=int(r["turn"]), index=i, channel=str(r["channel"]),
                              recipient=r["recipient"], text=str(r["text"]),
                              visible=bool(r["visible"]), tool=r["tool"], request_id="",
                              status=str(r["status"]))
           for i, r in enumerate(_kind(rows, OBSERVATION))]
    candidates = [str(r["text"]) for r in _kind(rows, CANDIDATE)]
    run = SimpleNamespace(case_id=case.id, family=case.family, targets=case.targets,
                          observations=obs, visible_channels=case.visible_channels,
                          expected_outlet=case.expected_outlet, auth=case.auth,
                          candidates=candidates, completed=completed)
    return ExpEvidence.from_session(run, final_channel=reply_channel(case.channels), agent=agent,
                                    guard=guard, suite=case.suite)


def acq_evidence(case: Any, rows: Sequence[Mapping[str, Any]], *, completed: bool, agent: str,
                 guard: str) -> Any:
    """:class:`~..metrics.acquisition.AcqEvidence` of one stored case-run (``case``: its
    ``AcqCase``, which holds ``k_acq`` and ``k_disc``)."""
    from ..metrics.acquisition import AcqEvidence, as_items, as_observations

    probe = [str(r["text"]) for r in _kind(rows, PROBE)]
    response = [str(r["text"]) for r in _kind(rows, RESPONSE)]
    return AcqEvidence(
        case_id=case.id, domain=case.domain, behaviour=case.behaviour, completed=completed,
        observations=as_observations((str(r["tool"]), str(r["text"]))
                                     for r in _kind(rows, OBSERVATION)),
        k_acq=as_items(case.k_acq), k_disc=as_items(case.k_disc),
        response=response[0] if response else "", probe_answer=probe[0] if probe else None,
        marker=case.marker, agent=agent, guard=guard, suite=case.suite)


def _kind(rows: Iterable[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [r for r in rows if r["kind"] == kind]
