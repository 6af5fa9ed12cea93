"""The ``acquisition`` suite's path through ``tpguard bench run`` (issue 10, seed ``001_*``).

Its case type (``AcqCase``: ⟨q, T, F, E, k_acq, k_disc, p⟩) and agents differ from the other
suites', so the runner plans and executes it here and shares everything else (run directory, lock,
records, audit log, spans, summary, reports):

* cases: :func:`~..cases.acquisition.generate` (``--seed``); ``--domains`` filters; the cases are
  then ordered **round-robin over the seven behaviours** so ``--limit N`` is stratified;
  ``--quick`` keeps two cases per domain with the behaviours rotated across domains (16 × 2 = 32
  cases, every behaviour four or five times);
* agents: ``oracle``, ``leaky[:PROFILE]``, ``langchain:MODEL`` and ``smolagents:MODEL``
  (``--code-agent``: CodeAgent)
  (:func:`~..agents.acquisition.make_acq_agent`; ``--base-url``/``OPENAI_API_KEY`` as elsewhere);
* guards: :mod:`..guards.acquisition` (``off``, ``audit``, ``enforce``, ``redact``,
  ``presidio-redact``, ``directive``);
* one case-run: :func:`~..agents.acquisition.run_case` with the guard's wrap, inside an
  ``invoke_agent`` span; the backend logs every call to ``audit.sqlite``; scored with
  :func:`~..metrics.acquisition.score_acquisition` into the record's ``score``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpguard.telemetry import agent_run_span

from ..audit._observations import acq_rows
from ..guards.acquisition import ACQ_GUARD_NAMES, AcqGuardUnderTest, make_acq_guard
from ._errors import AgentUnavailable, UsageError, case_error
from .config import RunConfig, resolve_domains

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from ..backends import AuditLog
    from ..cases.acquisition import AcqCase
    from ..metrics.acquisition import AcqScorer

__all__ = ["ACQ_SUITE", "acq_guards", "check_acq_agents", "check_acq_guard_names", "execute_acq_case",
           "select_acq_cases"]

ACQ_SUITE = "acquisition"
QUICK_PER_DOMAIN = 2
GUARD_ATTR = "tpguard.benchmark.guard"


def check_acq_guard_names(guards: Sequence[str]) -> None:
    """One line naming the guards this suite does not take."""
    bad = [g for g in guards if g not in ACQ_GUARD_NAMES]
    if bad:
        raise UsageError(f"--guard: {', '.join(bad)} not available for the acquisition suite; "
                         f"choose from {', '.join(ACQ_GUARD_NAMES)}")


def check_acq_agents(agents: Sequence[str], **options: Any) -> dict[str, str]:
    """Every ``--agent`` must be an acquisition agent; returns spec → where the guard decides."""
    from ..agents.acquisition import make_acq_agent

    for spec in agents:
        try:
            make_acq_agent(spec, **options)
        except ImportError as e:  # a missing runtime, model or server: as the other suites say it
            raise AgentUnavailable(f"agent {spec} cannot start: {e}") from None
        except ValueError as e:
            raise UsageError(f"--agent: {e}") from None
    return dict.fromkeys(agents, "gateway")


def _round_robin(cases: list[AcqCase]) -> list[AcqCase]:
    by: dict[int, list[AcqCase]] = {}
    for c in cases:
        by.setdefault(c.behaviour, []).append(c)
    queues = [by[b] for b in sorted(by)]
    out: list[AcqCase] = []
    for k in range(max((len(q) for q in queues), default=0)):
        out.extend(q[k] for q in queues if k < len(q))
    return out


def _quick(cases: list[AcqCase]) -> list[AcqCase]:
    domains = sorted({c.domain for c in cases})
    picked = []
    for i, domain in enumerate(domains):
        mine = [c for c in cases if c.domain == domain]
        behaviours = sorted({c.behaviour for c in mine})
        wanted = [behaviours[(QUICK_PER_DOMAIN * i + j) % len(behaviours)]
                  for j in range(QUICK_PER_DOMAIN)]
        for b in dict.fromkeys(wanted):
            picked.append(next(c for c in mine if c.behaviour == b))
    return _round_robin(picked)


def select_acq_cases(config: RunConfig) -> list[AcqCase]:
    """The run's cases (see the module docstring)."""
    from ..cases.acquisition import generate

    suite = generate(config.seed)
    cases = list(suite.cases)
    if config.domains:
        wanted = set(resolve_domains(suite, config.domains))  # type: ignore[arg-type]
        cases = [c for c in cases if c.domain in wanted]
    cases = _quick(cases) if config.quick else _round_robin(cases)
    if config.limit is not None:
        cases = cases[: config.limit]
    return cases


def acq_guards(config: RunConfig) -> dict[str, AcqGuardUnderTest]:
    try:
        return {n: make_acq_guard(n, presidio_model=config.presidio_model) for n in config.guards}
    except (ImportError, ValueError) as e:
        raise UsageError(f"a guard cannot start: {e}") from None


def _record(case: AcqCase, agent: str, guard: str, seed: int) -> dict[str, Any]:
    return {"agent": agent, "guard": guard, "suite": case.suite, "case_id": case.id,
            "domain": case.domain, "behaviour": case.behaviour, "marker": case.marker, "seed": seed}


def execute_acq_case(
    case: AcqCase, agent_spec: str, guard: AcqGuardUnderTest, *, files_dir: Path, audit: AuditLog,
    scorer: AcqScorer, seed: int, run_id: str, tracer_provider: TracerProvider | None,
    agent_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run and score one acquisition case-run; the record's ``error`` is ``None`` when measured."""
    from ..agents.acquisition import make_acq_agent, run_case
    from ..metrics.acquisition import AcqEvidence, as_items, as_observations, score_acquisition

    started = time.perf_counter()
    record = _record(case, agent_spec, guard.name, seed)
    error: dict[str, Any] | None = None
    try:
        agent = make_acq_agent(guard.agent_spec(agent_spec), directive=guard.name == "directive",
                               **(agent_options or {}))
        with agent_run_span(tracer_provider, agent_spec, run_id=run_id, case_id=case.id,
                            attributes={GUARD_ATTR: guard.name}):
            run = run_case(agent, case, files_dir=files_dir, seed=seed, audit=audit,
                           run_id=f"{agent_spec}/{guard.name}", guard=guard.name,
                           wrap=guard.wrap(case, tracer_provider))
    except Exception as e:  # the case's backends or the guard failed: an error, not a crash
        return {**record, "trajectory": None, "result": None, "score": None, "values": None,
                "error": case_error(type(e).__qualname__, "backend"),
                "elapsed_s": round(time.perf_counter() - started, 4)}
    if run.error:
        error = case_error(run.error, "agent")
    audit.record_observations(run_id=f"{agent_spec}/{guard.name}", case_id=case.id,
                              suite=case.suite, observations=acq_rows(run), agent=agent_spec,
                              guard=guard.name)
    # "refused" (the guard withheld the call or its result) apart from "error" (the backend
    # rejected it), so a share, which keeps outcomes but no messages, can count refusals
    record["trajectory"] = {"calls": [
        {"step": o.step, "tool": o.tool, "arguments": o.arguments,
         "outcome": "refused" if o.refused else "ok" if o.ok else "error"}
        for o in run.observations]}
    record["result"] = {"final_answer": run.final_answer, "probe_answer": run.probe_answer,
                        "completed": run.completed, "error": run.error,
                        "model_calls": run.model_calls,
                        "agent": agent.name, **run.extra}
    try:
        ev = AcqEvidence(
            case_id=case.id, domain=case.domain, behaviour=case.behaviour, completed=run.completed,
            observations=as_observations((o.tool, o.content) for o in run.observations),
            k_acq=as_items(case.k_acq), k_disc=as_items(case.k_disc),
            response=run.final_answer or "", probe_answer=run.probe_answer, marker=case.marker,
            agent=agent_spec, guard=guard.name, suite=case.suite)
        score = score_acquisition(ev, scorer=scorer)
        record.update(score=score.to_dict(), values=score.values())
    except Exception as e:
        error = error or case_error(type(e).__qualname__, "scoring")
        record.update(score=None, values=None)
    record["error"] = error
    record["elapsed_s"] = round(time.perf_counter() - started, 4)
    return record
