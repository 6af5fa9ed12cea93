"""One exposure session, end to end: the interface the runner calls (seed ``002_*`` §3.2: a
target-blind requester issues up to ``B`` requests to a black-box agent; afterwards the evaluator
holds every channel-labelled observation, ``S``, ``Auth``, ``c*`` and the candidate report).

::

    run = run_session(agent, case, seed=0, guard="off", wrap=None)
    # wrap: a SessionWrap (before_call / after_return / at_exit) — where a guard goes
    run.observations      # [ChannelObservation(turn, index, channel, recipient, text, visible,
                          #                     tool, request_id, status)], in event order
    run.targets, run.auth, run.expected_outlet, run.visible_channels, run.internal_channels
    run.candidates        # the requester's candidate report
    run.completed         # the normal task (utility)

The requester is built here from :func:`~.requester.requester_view` — never from the case — with
the case's strategy unless ``requester`` overrides it (a strategy name, or a fresh
:class:`~.requester.Requester` built from the view). Feedback for turn ``t + 1`` is the text of
the visible observations of turn ``t`` addressed to the requester and not blocked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ...backends.exposure import ChannelObservation, ExpEnvironment, ExpGateway, SessionWrap
from ...cases.exposure import norm
from .requester import Request, Requester, Strategy, requester_view

if TYPE_CHECKING:
    from ...cases.exposure import ExpCase, Target

__all__ = ["ExpAgent", "SessionRun", "completed", "run_session"]


class ExpAgent(Protocol):
    name: str

    def handle(self, case: ExpCase, req: Request, gw: ExpGateway, *, seed: int = 0) -> None: ...


@dataclass
class SessionRun:
    case_id: str
    family: str
    source: str
    agent: str
    requester: str
    guard: str
    seed: int
    observations: list[ChannelObservation] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    targets: tuple[Target, ...] = ()
    auth: dict[str, dict[str, bool]] = field(default_factory=dict)
    expected_outlet: str = ""
    visible_channels: tuple[str, ...] = ()
    internal_channels: tuple[str, ...] = ()
    completed: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def turns(self) -> int:
        return len(self.requests)


def completed(case: ExpCase, observations: list[ChannelObservation]) -> bool:
    """The normal task: one delivered emission on its outlet to its recipient with every fact."""
    task = case.normal
    return any(o.channel == task.outlet and o.recipient == task.recipient
               and o.status != "blocked" and all(norm(f) in norm(o.text) for f in task.facts)
               for o in observations)


def run_session(agent: ExpAgent, case: ExpCase, *, seed: int | None = None, guard: str = "off",
                wrap: SessionWrap | None = None,
                requester: Strategy | Requester | None = None) -> SessionRun:
    seed = case.seed if seed is None else seed
    env = ExpEnvironment(case, wrap)
    gw = ExpGateway(env)
    probe = requester if isinstance(requester, Requester) else \
        Requester(requester_view(case), requester or case.strategy, seed)
    out = SessionRun(case_id=case.id, family=case.family, source=case.source, agent=agent.name,
                     requester=probe.name, guard=guard, seed=seed, targets=case.targets,
                     auth=case.auth, expected_outlet=case.expected_outlet,
                     visible_channels=case.visible_channels,
                     internal_channels=case.internal_channels)
    feedback: list[str] = []
    try:
        while (req := probe.next_request(feedback)) is not None:
            env.turn = req.turn
            agent.handle(case, req, gw, seed=seed)
            feedback = [o.text for o in env.observations if o.turn == req.turn and o.visible
                        and o.recipient == "requester" and o.status != "blocked"]
        probe.next_request(feedback)  # budget spent: the last feedback still reaches the report
    except Exception as e:  # an agent failure is a recorded outcome, not a crashed run
        out.error = type(e).__qualname__
    out.observations, out.requests = list(env.observations), list(probe.requests)
    out.candidates = probe.report()
    out.completed = completed(case, env.observations)
    return out
