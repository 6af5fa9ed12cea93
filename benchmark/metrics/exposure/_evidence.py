"""What exposure scoring reads for one session (seed ``002_*`` §3.1–3.2).

An ASLEval session is fixed by its evaluation contract — a hidden target set ``S ⊂ D``, the
authorization relation ``Auth(r, e)``, an expected outlet ``c*`` and the declared visible channels
``C_vis`` — and produces channel-labelled observations ``O = {(t, c, o_{t,c}, ν_c)}`` (eq. 2).
Scoring one session needs exactly that, plus the requester's candidate report (C2) and whether the
session's normal task completed (utility). That is :class:`ExpEvidence`; the runner builds one per
(agent, guard, session) and hands it to :func:`~._score.score_exposure`.

Evidence holds private values (observation texts, target strings, candidates); the score made
from it holds target ids and channel names only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..acquisition import MatchItem, as_items

__all__ = ["DELIVERED", "AuthInput", "ExpEvidence", "ExpObservation", "ObservationInput", "as_auth",
           "as_exp_observations", "as_targets"]


@dataclass(frozen=True, slots=True)
class ExpObservation:
    """One channel-labelled observation ``(t, c, o_{t,c}, ν_c)`` of eq. 2.

    * ``turn`` — the request index ``t`` (1 … B) it belongs to; list order is the event index
      that breaks ties between observations of one turn (§3.2, C3 ordering).
    * ``channel`` — ``c``: ``"response"``, ``"console"``, ``"email"``, ``"tool_args"`` …
    * ``recipient`` — ``r_c``, who receives a visible exit (``"requester"``, an external address
      label); ignored for internal observations.
    * ``text`` — what crossed the channel **after any guard** (text, or JSON-like data: every
      leaf is read).
    * ``visible`` — ``ν_c``: a declared requester-visible or external exit (``C_vis``) rather
      than evaluator-only instrumentation (tool arguments, raw returns: ``C_int``).
    * ``successful`` — the action-delivery status of an action exit (``True``/``False``);
      ``None`` when the observation is not an action or its status was not recorded.
    """

    turn: int
    channel: str
    recipient: str
    text: Any
    visible: bool
    successful: bool | None = None

    def __repr__(self) -> str:  # never print the text
        return (f"ExpObservation(turn={self.turn}, channel={self.channel!r}, "
                f"recipient={self.recipient!r}, visible={self.visible}, "
                f"successful={self.successful})")


ObservationInput = ExpObservation | Sequence[Any]


#: Statuses of a visible emission that reached its recipient (the suite's ``ChannelObservation``).
DELIVERED: frozenset[str] = frozenset({"delivered", "redacted"})


def _from_logged(o: Any, final_channel: str) -> ExpObservation:
    """The suite's ``ChannelObservation`` (``turn, channel, recipient, text, visible, status``):
    an action's success is its delivery status; the reply channel is no action (``None``)."""
    action = bool(o.visible) and o.channel != final_channel
    data = getattr(o, "data", None)  # the structured leaves the backend had, when it had them
    return ExpObservation(int(o.turn), str(o.channel), str(o.recipient or ""),
                          o.text if data is None else data,
                          bool(o.visible), (o.status in DELIVERED) if action else None)


def as_exp_observations(items: Iterable[ObservationInput], *, final_channel: str = "response"
                        ) -> tuple[ExpObservation, ...]:
    """Accept :class:`ExpObservation`, ``(turn, channel, recipient, text, visible[,
    successful])`` tuples, or logged observations with ``turn, channel, recipient, text,
    visible, status`` (the suite's ``ChannelObservation``), in event order."""
    out = []
    for o in items:
        if isinstance(o, ExpObservation):
            out.append(o)
            continue
        if hasattr(o, "status") and hasattr(o, "channel"):
            out.append(_from_logged(o, final_channel))
            continue
        if len(o) not in (5, 6):
            raise ValueError("an exposure observation is (turn, channel, recipient, text, "
                             f"visible[, successful]); got {len(o)} fields")
        ok = o[5] if len(o) == 6 else None
        out.append(ExpObservation(int(o[0]), str(o[1]), str(o[2]), o[3], bool(o[4]),
                                  None if ok is None else bool(ok)))
    return tuple(out)


def as_targets(targets: Mapping[str, Iterable[str]] | Iterable[Any]) -> tuple[MatchItem, ...]:
    """The target set ``S`` as :class:`~..acquisition.MatchItem` s, from ``{target id: [canonical
    value, alias, …]}``, from targets ``e = (v, A, τ, σ)`` with ``id``, ``value``, ``aliases``
    and ``type`` (the suite's ``Target``), or from objects with ``id`` and ``strings``."""
    if isinstance(targets, Mapping):
        return tuple(MatchItem(str(k), tuple(v) if not isinstance(v, str) else (v,))
                     for k, v in targets.items())
    out: list[MatchItem] = []
    t: Any
    for t in targets:
        if isinstance(t, MatchItem) or not hasattr(t, "value"):
            out.extend(as_items([t]))
        else:
            out.append(MatchItem(str(t.id), (str(t.value), *map(str, t.aliases or ())),
                                 str(getattr(t, "type", None) or "item")))
    return tuple(out)


AuthInput = Mapping[str, Mapping[str, bool] | Iterable[str]]


def as_auth(auth: AuthInput | None) -> dict[str, frozenset[str]]:
    """``Auth`` as ``{recipient: authorized target ids}``, from that form or from the suite's
    explicit ``{recipient: {target id: bool}}``."""
    out = {}
    for r, es in (auth or {}).items():
        ids = ([e for e, ok in es.items() if ok] if isinstance(es, Mapping) else es)
        out[str(r)] = frozenset(str(e) for e in ids)
    return out


@dataclass(frozen=True)
class ExpEvidence:
    """One session as the ASLEval adjudicator sees it (seed ``002_*`` §3.1–3.3).

    * ``targets`` — ``S``: each target's id and match strings (canonical value first, then its
      alias set ``A``); a mapping ``{id: strings}`` is accepted.
    * ``auth`` — ``Auth(r, e) = 1`` as ``{recipient: target ids it may receive}`` or as
      ``{recipient: {target id: bool}}``; a recipient not in the mapping may receive none (the
      paper's primary runs: nobody is authorized).
    * ``expected_outlet`` — ``c*``; ``None`` when the session declares no goal channel (then OLF
      is undefined, as for the paper's expanded PIA logs, §5.2).
    * ``visible_channels`` — the declared ``C_vis``; every visible observation's channel must be
      one of them (a channel with no observation still has coverage 0).
    * ``final_channel`` — which visible channel is the final answer (the final-answer view).
    * ``candidates`` — the requester's candidate report (C2); ``None`` when none was submitted.
    * ``completed`` — the session's normal task passed its check (TCR).
    """

    session_id: str
    family: str
    targets: tuple[MatchItem, ...]
    observations: tuple[ExpObservation, ...]
    visible_channels: tuple[str, ...]
    expected_outlet: str | None = None
    auth: AuthInput | None = None
    candidates: tuple[str, ...] | None = None
    completed: bool = False
    final_channel: str = "response"
    agent: str = ""
    guard: str = ""
    suite: str = "exposure"

    def __post_init__(self) -> None:
        targets = as_targets(self.targets)
        ids = [t.id for t in targets]
        if not ids:
            raise ValueError(f"session {self.session_id!r}: the target set S is empty")
        if len(set(ids)) != len(ids):
            raise ValueError(f"session {self.session_id!r}: the target set has repeated ids")
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "observations",
                           as_exp_observations(self.observations, final_channel=self.final_channel))
        object.__setattr__(self, "visible_channels", tuple(dict.fromkeys(self.visible_channels)))
        object.__setattr__(self, "auth", as_auth(self.auth))
        if self.candidates is not None:
            object.__setattr__(self, "candidates", tuple(str(c) for c in self.candidates))
        declared = set(self.visible_channels)
        stray = sorted({o.channel for o in self.observations if o.visible} - declared)
        if stray:
            raise ValueError(f"session {self.session_id!r}: visible observations on undeclared "
                             f"channel(s) {stray}; declare them in visible_channels "
                             f"{sorted(declared)}")
        if self.expected_outlet is not None and self.expected_outlet not in declared:
            raise ValueError(f"session {self.session_id!r}: expected outlet "
                             f"{self.expected_outlet!r} is not a declared visible channel")

    @classmethod
    def from_session(cls, run: Any, *, final_channel: str, agent: str | None = None,
                     guard: str | None = None, suite: str = "exposure") -> ExpEvidence:
        """From the suite's ``SessionRun`` (``case_id, family, targets, observations, auth,
        expected_outlet, visible_channels, candidates, completed, agent, guard``);
        ``final_channel`` is the case's reply channel."""
        return cls(session_id=str(run.case_id), family=str(run.family), targets=run.targets,
                   observations=run.observations, visible_channels=tuple(run.visible_channels),
                   expected_outlet=run.expected_outlet or None, auth=run.auth,
                   candidates=None if run.candidates is None else tuple(run.candidates),
                   completed=bool(run.completed), final_channel=final_channel,
                   agent=str(run.agent if agent is None else agent),
                   guard=str(run.guard if guard is None else guard), suite=suite)

    def authorized(self, recipient: str, target_id: str) -> bool:
        """``Auth(r_c, e)``."""
        auth: dict[str, frozenset[str]] = self.auth  # type: ignore[assignment]  # as_auth's
        return target_id in auth.get(recipient, frozenset())

    def __repr__(self) -> str:  # observations and candidates may hold private values
        n_cand = "none" if self.candidates is None else len(self.candidates)
        return (f"ExpEvidence(session_id={self.session_id!r}, family={self.family!r}, "
                f"agent={self.agent!r}, guard={self.guard!r}, targets={len(self.targets)}, "
                f"observations={len(self.observations)}, candidates={n_cand})")
