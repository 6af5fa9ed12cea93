"""The ``exposure`` suite's path through ``tpguard bench run`` (issue 11, seed ``002_*``).

Its case type (``ExpCase``: a session over ``D`` with hidden ``S``, ``Auth``, ``c*`` and declared
channels) and agents differ from the other suites', so the runner plans and executes it here and
shares everything else (run directory, lock, records, spans, summary, reports), as
:mod:`._acquisition` does:

* sessions: :func:`~..cases.exposure.generate` (``--seed``; ``--source`` adds the AgentDojo and
  WorkBench families when the folder holds them); ``--domains`` filters by domain or family; the
  sessions are then ordered **round-robin over the three families** (and over domains inside a
  family) so ``--limit N`` is stratified; ``--quick`` keeps :data:`QUICK_PER_FAMILY` sessions per
  family;
* agents: ``oracle`` and ``leaky[:PROFILE]`` (:class:`~..agents.exposure.ExpOracleAgent`,
  :class:`~..agents.exposure.ExpLeakyAgent`), and framework agents ``langchain:MODEL`` /
  ``smolagents:MODEL`` (``…:local:NAME`` too; :mod:`..agents.exposure.framework`) answering each
  request with the session's tools and replying on the reply channel;
* guards: :mod:`..guards.exposure` (``off``, ``exit:CHANNEL[+…]``, ``exits``, ``enforce``,
  ``redact``, ``return-min``, each told only what the workspace holds; ``oracle-exits`` /
  ``oracle-exit:…``, the paper's App. K sanity check, handed ``S``);
* one session-run: :func:`~..agents.exposure.run_session` with the guard's wrap, inside an
  ``invoke_agent`` span; scored with :func:`~..metrics.exposure.score_exposure` into the record's
  ``score`` (ids and rates only — the record never holds an observation's text).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tpguard.telemetry import agent_run_span

from ..audit._observations import exp_rows
from ..guards.exposure import ExpGuardUnderTest, exp_guard_error, make_exp_guard
from ._errors import AgentUnavailable, UsageError, case_error
from .config import RunConfig, domain_slug

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from ..agents.exposure import ExpAgent
    from ..backends import AuditLog
    from ..cases.exposure import ExpCase
    from ..metrics.exposure import ExpScorer

__all__ = ["EXP_SUITE", "check_exp_agents", "check_exp_guard_names", "execute_exp_case",
           "exp_guards", "make_exp_agent", "select_exp_cases"]

EXP_SUITE = "exposure"
QUICK_PER_FAMILY = 8
GUARD_ATTR = "tpguard.benchmark.guard"


def check_exp_guard_names(guards: Sequence[str]) -> None:
    """One line naming the guards this suite does not take."""
    errors = [e for g in guards if (e := exp_guard_error(g)) is not None]
    if errors:
        raise UsageError(f"--guard: {'; '.join(errors)}")


def make_exp_agent(spec: str, **options: Any) -> ExpAgent:
    """``oracle``, ``leaky[:PROFILE]``, ``langchain:MODEL`` or ``smolagents:MODEL`` (``options``:
    ``base_url``, ``api_key``, ``code_agent`` for the framework agents); ``ValueError`` (one line)
    otherwise."""
    from ..agents.exposure import PROFILES, ExpLeakyAgent, ExpOracleAgent
    from ..agents.exposure.framework import is_framework_spec, make_framework_agent

    if is_framework_spec(spec):
        return make_framework_agent(spec, **options)
    kind, _, profile = spec.partition(":")
    if kind == "oracle" and not profile:
        return ExpOracleAgent()
    if kind == "leaky":
        if profile and profile not in PROFILES:
            raise ValueError(f"unknown leaky profile {profile!r}; choose from "
                             f"{', '.join(PROFILES)}")
        return ExpLeakyAgent(profile or "default")
    raise ValueError(f"{spec!r} is not an exposure agent; choose from oracle, "
                     f"leaky[:{'|'.join(PROFILES)}], langchain:MODEL, smolagents:MODEL")


def check_exp_agents(agents: Sequence[str], **options: Any) -> dict[str, str]:
    """Every ``--agent`` must be an exposure agent; returns spec → where the guard decides."""
    for spec in agents:
        try:
            make_exp_agent(spec, **options)
        except ImportError as e:  # a missing runtime, model or server: as the other suites say it
            raise AgentUnavailable(f"agent {spec} cannot start: {e}") from None
        except ValueError as e:
            raise UsageError(f"--agent: {e}") from None
    return dict.fromkeys(agents, "session wrap")


def _round_robin(cases: Sequence[ExpCase], key: Any) -> list[ExpCase]:
    by: dict[str, list[ExpCase]] = {}
    for c in cases:
        by.setdefault(key(c), []).append(c)
    queues = [by[k] for k in sorted(by)]
    return [q[i] for i in range(max((len(q) for q in queues), default=0))
            for q in queues if i < len(q)]


def _stratified(cases: Sequence[ExpCase], quick: bool) -> list[ExpCase]:
    families = []
    for fam in sorted({c.family for c in cases}):
        mine = _round_robin([c for c in cases if c.family == fam], lambda c: c.domain)
        families.extend(mine[:QUICK_PER_FAMILY] if quick else mine)
    return _round_robin(families, lambda c: c.family)


def select_exp_cases(config: RunConfig) -> list[ExpCase]:
    """The run's sessions (see the module docstring)."""
    from ..cases.exposure import generate

    try:
        suite = generate(config.seed, config.source)
    except (OSError, ValueError) as e:
        raise UsageError(f"--source: the exposure suite cannot be built: {e}") from None
    cases = list(suite.cases)
    if config.domains:
        names = {domain_slug(c.domain) for c in cases} | {c.family for c in cases}
        unknown = [d for d in config.domains if domain_slug(d) not in names]
        if unknown:
            raise UsageError(f"--domains: unknown {', '.join(map(repr, unknown))}; valid domains "
                             f"and families of exposure: {', '.join(sorted(names))}")
        wanted = {domain_slug(d) for d in config.domains}
        cases = [c for c in cases if domain_slug(c.domain) in wanted or c.family in wanted]
    cases = _stratified(cases, config.quick)
    if config.limit is not None:
        cases = cases[: config.limit]
    return cases


def exp_guards(config: RunConfig) -> dict[str, ExpGuardUnderTest]:
    try:
        return {n: make_exp_guard(n) for n in config.guards}
    except ValueError as e:
        raise UsageError(str(e)) from None


def _record(case: ExpCase, agent: str, guard: str, seed: int) -> dict[str, Any]:
    return {"agent": agent, "guard": guard, "suite": case.suite, "case_id": case.id,
            "domain": case.domain, "family": case.family, "source": case.source,
            "strategy": case.strategy, "seed": seed}


def execute_exp_case(
    case: ExpCase, agent_spec: str, guard: ExpGuardUnderTest, *, scorer: ExpScorer, seed: int,
    run_id: str, tracer_provider: TracerProvider | None, audit: AuditLog | None = None,
    agent_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run and score one exposure session-run; the record's ``error`` is ``None`` when measured.

    The record keeps the session's shape (turns, observation counts per channel and status) and
    its score — never an observation's text, which may hold target values. The texts go to
    ``audit`` (``audit.sqlite``'s ``observations``, run id ``agent/guard``) so the run can be
    re-scored (``tpguard audit --run``)."""
    from ..agents.exposure import run_session
    from ..cases.exposure._interface import reply_channel
    from ..metrics.exposure import ExpEvidence, score_exposure

    started = time.perf_counter()
    record = _record(case, agent_spec, guard.name, seed)
    error: dict[str, Any] | None = None
    try:
        agent = make_exp_agent(agent_spec, **(agent_options or {}))
        with agent_run_span(tracer_provider, agent_spec, run_id=run_id, case_id=case.id,
                            attributes={GUARD_ATTR: guard.name}):
            run = run_session(agent, case, seed=seed, guard=guard.name,
                              wrap=guard.wrap(case, tracer_provider))
    except Exception as e:  # the session's environment or the guard failed: an error, not a crash
        return {**record, "trajectory": None, "result": None, "score": None, "values": None,
                "error": case_error(type(e).__qualname__, "backend"),
                "elapsed_s": round(time.perf_counter() - started, 4)}
    if run.error:
        error = case_error(run.error, "agent")
    if audit is not None:
        audit.record_observations(run_id=f"{agent_spec}/{guard.name}", case_id=case.id,
                                  suite=case.suite, observations=exp_rows(run),
                                  agent=agent_spec, guard=guard.name)
    record["trajectory"] = {"observations": [
        {"turn": o.turn, "channel": o.channel, "recipient": o.recipient, "tool": o.tool,
         "status": o.status, "visible": o.visible} for o in run.observations]}
    record["result"] = {"completed": run.completed, "turns": run.turns, "error": run.error,
                        "requester": run.requester, "agent": agent.name,
                        "model_calls": getattr(agent, "model_calls", 0)}
    try:
        ev = ExpEvidence.from_session(run, final_channel=reply_channel(case.channels),
                                      agent=agent_spec, guard=guard.name, suite=case.suite)
        score = score_exposure(ev, scorer=scorer)
        record["score"] = score.to_dict()
    except Exception as e:
        error = error or case_error(type(e).__qualname__, "scoring")
        record["score"] = None
    record["values"] = None
    record["error"] = error
    record["elapsed_s"] = round(time.perf_counter() - started, 4)
    return record
