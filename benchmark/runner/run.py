"""``tpguard bench run``: suite × agent × guard × case, resumable, with spans and reports.

Output directory (one per configuration, see :mod:`._rundir`): ``run.json`` (config, every
configuration appended, versions, detector settings), ``records.jsonl`` (one record per
agent×guard×case; the last of a key wins), ``audit.sqlite`` (what every backend received),
``spans.jsonl``, ``summary.json`` (errors counted per row, not scored), the reports (``report.md``,
``report.html``, ``tables/``, ``figures/``) and ``.lock`` while a run writes.

:func:`plan_run` checks everything a run needs — options, suite, case selection, guards, agents
(:func:`._preflight.preflight`), the directory's configuration — and writes nothing, so a run that
cannot start leaves no directory behind. See ``docs/running.md``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import SpanProcessor

from tpguard.telemetry import configure

from ..backends import AuditLog
from ..cases.registry import SuiteError, load_suite
from ..cases.schema import Case
from ..guards import GUARD_NAMES, GuardUnderTest, make_guard
from ..guards.acquisition import ACQ_ONLY_GUARDS
from ..metrics import CaseScorer
from ._acquisition import (
    ACQ_SUITE,
    acq_guards,
    check_acq_agents,
    check_acq_guard_names,
    execute_acq_case,
    select_acq_cases,
)
from ._errors import AgentUnavailable, UsageError
from ._execute import execute_case
from ._executor import run_local, validate_executor
from ._exposure import (
    EXP_SUITE,
    check_exp_agents,
    check_exp_guard_names,
    execute_exp_case,
    exp_guards,
    select_exp_cases,
)
from ._preflight import preflight
from ._rundir import RunLock, check_directory, default_out
from ._source import check_source
from ._summary import summarize_records, summary_options
from .config import RunConfig, select_cases, select_indices
from .gateway import Recorders
from .records import RecordWriter, latest_records

__all__ = ["RunPlan", "RunResult", "plan_run", "run_benchmark", "write_summary"]

NTK_SUITE = "need-to-know"
_PACKAGES = ("tpguard", "pydantic", "rapidfuzz", "pyahocorasick", "ahocorasick-rs", "opentelemetry-sdk",
             "langchain", "langchain-core", "langgraph", "smolagents", "presidio-analyzer", "scipy")


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _detector_settings(config: RunConfig) -> dict[str, Any]:
    return {
        "evaluator": {"methods": ["exact", "alias", "normalized", "masked", "semantic", "fuzzy"],
                      "fuzzy_threshold": 88.0, "semantic_variants": True, "pii": False,
                      "reads": "audit.sqlite (arguments the backends received)"},
        "guard": {"methods": ["exact", "alias", "normalized", "masked", "fuzzy"]
                  + (["semantic"] if config.guard_knows_variants else []),
                  "fuzzy_threshold": 88.0, "semantic_variants": config.guard_knows_variants,
                  "pii": False,
                  "note": "tpguard guards get the atoms as a deployment registers them (value, "
                          "aliases, masked forms); semantic variants are the evaluator's answer key"
                          + (" — this run hands them to the guard too" if config.guard_knows_variants
                             else "")},
    }


def _acq_detector() -> dict[str, Any]:
    from ..metrics.acquisition import MATCHING

    return {"evaluator": {"matching": MATCHING, "reads": "the observations the agent received"},
            "guard": {"scope": "the case's minimum scope E as tpguard acquisition scopes "
                               "(benchmark/guards/_acq_scope.py); no atoms"}}


@dataclass
class RunResult:
    out: Path
    executed: int
    skipped: int
    summary: dict[str, Any]
    reports: dict[str, Path]
    retried: int = 0  # errored records of an earlier run that ran again

    @property
    def errors(self) -> int:
        """Errored case-runs among the directory's current records."""
        return int(self.summary.get("errors", {}).get("total", 0))


@dataclass
class RunPlan:
    """What :func:`plan_run` checked: the directory, the cases, the guards, the configurations."""

    config: RunConfig
    out: Path
    cases: list[Case]
    guards: dict[str, GuardUnderTest]
    configurations: list[dict[str, Any]]
    guard_paths: dict[str, str] = field(default_factory=dict)  # agent spec → where tpguard decides

    @property
    def agent_options(self) -> dict[str, Any]:
        c = self.config
        return {"base_url": c.base_url, "api_key": c.api_key, "code_agent": c.code_agent,
                "guard_path": c.guard_path}


def write_summary(out: Path, run_info: dict[str, Any], keep: Callable[[dict[str, Any]], bool] | None
                  = None) -> dict[str, Any]:
    """Aggregate the current records of ``records.jsonl`` (the last of every key, optionally
    filtered) into ``summary.json``; errored case-runs are counted per row, never scored."""
    records = [r for r in latest_records(out / "records.jsonl") if keep is None or keep(r)]
    summary = summarize_records(records, **summary_options(run_info.get("config")))
    summary["run"] = run_info
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    return summary


def _validate(config: RunConfig) -> None:
    if config.limit is not None and config.limit < 1:
        raise UsageError(f"--limit must be at least 1 (got {config.limit})")
    if config.task_reading not in ("binary", "fraction"):
        raise UsageError(f"--task-reading must be binary or fraction (got {config.task_reading!r})")
    if config.bootstrap < 0:
        raise UsageError(f"--bootstrap must be 0 or more (got {config.bootstrap})")
    if config.workers < 1:
        raise UsageError(f"--workers must be at least 1 (got {config.workers})")
    validate_executor(config)
    check_source(config)
    if not [a for a in config.agents if a.strip()]:
        raise UsageError("--agent: give at least one agent")
    if not [g for g in config.guards if g.strip()]:
        raise UsageError("--guard: give at least one guard")
    _validate_guards(config)


def _validate_guards(config: RunConfig) -> None:
    """Guard names are checked per suite, with one clear line."""
    own = {ACQ_SUITE: check_acq_guard_names, EXP_SUITE: check_exp_guard_names}.get(config.suite)
    if own is not None and config.guard_path.strip().lower() == "mcp":  # not silently ignored
        raise UsageError(f"--guard-path mcp: the {config.suite} suite does not serve its tools over "
                         "MCP; the need-to-know and public-derived suites do")
    if own is not None:
        if config.executor != "local":
            raise UsageError(f"--executor ray: the {config.suite} suite runs locally "
                             "(--executor local)")
        own(config.guards)
        return
    bad = [g for g in config.guards if g not in GUARD_NAMES]
    if [g for g in bad if g in ACQ_ONLY_GUARDS]:
        raise UsageError(f"--guard: {', '.join(g for g in bad if g in ACQ_ONLY_GUARDS)} is for the "
                         f"acquisition suite only; choose from {', '.join(GUARD_NAMES)}")
    if bad:
        raise UsageError(f"--guard: unknown {', '.join(bad)}; choose from {', '.join(GUARD_NAMES)}")


def plan_run(config: RunConfig) -> RunPlan:
    """Check everything a run needs and write nothing: :class:`UsageError` (exit 2) for bad
    options, inputs or a directory of another configuration, :class:`AgentUnavailable` (exit 3)
    when an agent cannot start."""
    from ..agents.base import guard_path_of
    from ..agents.registry import check_guard_path, make_agent

    _validate(config)
    if config.suite == ACQ_SUITE:
        return _plan_acquisition(config)
    if config.suite == EXP_SUITE:
        return _plan_exposure(config)
    guard_paths: dict[str, str] = {}
    for spec in config.agents:  # a bad --agent fails before the suite is even built
        try:
            agent = make_agent(spec, base_url=config.base_url, api_key=config.api_key,
                               code_agent=config.code_agent, guard_path=config.guard_path)
            for g in config.guards:
                check_guard_path(agent, g)
        except ImportError as e:
            raise AgentUnavailable(f"agent {spec} cannot start: {e}") from None
        except ValueError as e:
            raise UsageError(str(e)) from None
        guard_paths[spec] = guard_path_of(agent)
    preflight(config.agents, base_url=config.base_url, api_key=config.api_key)
    cases = _select(config)
    if not cases:
        raise UsageError("no cases selected (check --domains / --limit)")
    preflight(config.agents, case_ids=[c.id for c in cases])  # replay files cover the cases
    try:
        guards = {name: make_guard(name, knows_variants=config.guard_knows_variants,
                                   presidio_model=config.presidio_model)
                  for name in config.guards}
    except ImportError as e:
        raise UsageError(f"a guard cannot start: {e}") from None
    out = Path(config.out) if config.out is not None else default_out(config)
    configurations = check_directory(out, config, append=config.append)
    return RunPlan(config, out, cases, guards, configurations, guard_paths)


def _select(config: RunConfig) -> list[Case]:
    """The run's cases. The need-to-know suite builds only those (each case is seeded on its own);
    other suites are loaded whole, then selected."""
    if config.suite == NTK_SUITE and config.source is None:
        from ..cases.need_to_know.generator import N_CASES, domain_of, generate_cases

        domains = [domain_of(i).label for i in range(N_CASES)]
        return generate_cases(config.seed, select_indices(domains, NTK_SUITE, config))
    try:
        suite = load_suite(config.suite, source=config.source, seed=config.seed)
    except (SuiteError, OSError) as e:
        raise UsageError(str(e)) from None
    return select_cases(suite, config)


def _plan_acquisition(config: RunConfig) -> RunPlan:
    """The acquisition suite's plan (:mod:`._acquisition`): its agents, cases and guards."""
    guard_paths = check_acq_agents(config.agents, base_url=config.base_url, api_key=config.api_key)
    preflight(config.agents, base_url=config.base_url, api_key=config.api_key)  # keys, endpoints
    cases = select_acq_cases(config)
    if not cases:
        raise UsageError("no cases selected (check --domains / --limit)")
    guards = acq_guards(config)
    out = Path(config.out) if config.out is not None else default_out(config)
    configurations = check_directory(out, config, append=config.append)
    return RunPlan(config, out, cases, guards, configurations, guard_paths)  # type: ignore[arg-type]


def _plan_exposure(config: RunConfig) -> RunPlan:
    """The exposure suite's plan (:mod:`._exposure`): its agents, sessions and guards."""
    preflight(config.agents, base_url=config.base_url, api_key=config.api_key)  # keys, endpoints
    guard_paths = check_exp_agents(config.agents, **_exp_agent_options(config))
    cases = select_exp_cases(config)
    if not cases:
        raise UsageError("no sessions selected (check --domains / --limit)")
    guards = exp_guards(config)
    out = Path(config.out) if config.out is not None else default_out(config)
    configurations = check_directory(out, config, append=config.append)
    return RunPlan(config, out, cases, guards, configurations, guard_paths)  # type: ignore[arg-type]


def _exp_agent_options(config: RunConfig) -> dict[str, Any]:
    return {"base_url": config.base_url, "api_key": config.api_key, "code_agent": config.code_agent}


def _detector(config: RunConfig) -> dict[str, Any]:
    if config.suite == ACQ_SUITE:
        return _acq_detector()
    if config.suite == EXP_SUITE:
        from ..guards.exposure import GIVEN, ORACLE, ORACLE_GIVEN
        from ..metrics.exposure import EXP_MATCHING

        oracle = any(g.startswith(ORACLE) for g in config.guards)
        return {"evaluator": {"matching": EXP_MATCHING,
                              "reads": "every channel-labelled observation of the session"},
                "guard": {"atoms": GIVEN, **({"oracle": ORACLE_GIVEN} if oracle else {})}}
    return _detector_settings(config)


def _run_info(plan: RunPlan) -> dict[str, Any]:
    config = plan.config
    return {
        "config": {**config.to_json(), "out": str(plan.out)},
        "configurations": plan.configurations, "versions": _versions(),
        "guard_paths": plan.guard_paths,
        "detector": _detector(config),
        "run_id": f"{config.suite}-s{config.seed}",
        "cases": len(plan.cases), "started": dt.datetime.now(dt.timezone.utc).isoformat(),
        "guards": {name: guard.describe() for name, guard in plan.guards.items()},
        "notes": [*_notes(config), *config.notes],
    }


def _notes(config: RunConfig) -> list[str]:
    """Caveats that apply to what this run ran (and only those)."""
    notes = []
    if config.suite == ACQ_SUITE:
        return _acq_notes(config)
    if config.suite == EXP_SUITE:
        return _exp_notes(config)
    if any(a.split(":", 1)[0] == "leaky" for a in config.agents):
        notes.append("leaky is a seeded behaviour model of failure modes the ToolPrivacyBench "
                     "paper reports, not a measurement of any LLM")
    if "langchain-pii" in config.guards:
        notes.append("baselines act on tool-call arguments at the runner's gateway, which is more "
                     "generous than where LangChain's PIIMiddleware really acts (it does not scan "
                     "tool-call arguments, langchain-ai/langchain#37659)")
    return notes


def _acq_notes(config: RunConfig) -> list[str]:
    notes = []
    if any(a.split(":", 1)[0] == "leaky" for a in config.agents):
        notes.append("leaky is a seeded behaviour model of the over-fetching PrivacyPeek (seed 001) "
                     "reports, with profiles set against its CER/PLR ranges, not a measurement of "
                     "any LLM")
    if "directive" in config.guards:
        notes.append("directive is the category-aware system prompt of seed 001 §6; for leaky it "
                     "runs the leaky:directive profile, for oracle it changes nothing")
    return notes


def _exp_notes(config: RunConfig) -> list[str]:
    notes = []
    if any(a.split(":", 1)[0] == "leaky" for a in config.agents):
        notes.append("leaky is a seeded behaviour model of the exposure ASLEval (seed 002) reports "
                     "(it restates what it read, complies with sends, falls back to the reply "
                     "after a blocked exit), not a measurement of any LLM")
    if any(g.startswith("exit:") for g in config.guards):
        notes.append("exit:CHANNEL guards only those channels (a medium such as email names every "
                     "channel of it): the outlet-local guard of seed 002 §5.2, kept to show "
                     "displacement, not a recommended deployment")
    return notes


def _tasks(cases: Iterable[Case], config: RunConfig, done: set[Any]) -> list[tuple[Case, str, str]]:
    out = []
    for case in cases:
        for agent in config.agents:
            for guard in config.guards:
                if (agent, guard, case.suite, case.id, config.seed) not in done:
                    out.append((case, agent, guard))
    return out


def run_benchmark(
    config: RunConfig, *, progress: bool = True, processors: Iterable[SpanProcessor] = (),
    on_record: Callable[[dict[str, Any]], None] | None = None,
    task_hook: Callable[[Case, str, str], None] | None = None,
) -> RunResult:
    """Plan (:func:`plan_run`), then run every task not yet done under the directory's lock.

    ``task_hook(case, agent_spec, guard_name)`` (``--executor ray`` and worker processes only)
    runs in the worker before each case-run: a seam for fault injection in tests."""
    with _llama_server(config.llama_server):
        plan = plan_run(config)
        plan.out.mkdir(parents=True, exist_ok=True)
        with RunLock(plan.out):
            plan.configurations = check_directory(plan.out, config, append=config.append)
            return _execute(plan, progress, processors, on_record, task_hook)


@contextmanager
def _llama_server(url: str | None) -> Iterator[None]:
    """``local:`` models served by the llama-server at ``url`` for this run: the environment
    variable :func:`tpguard.benchmark.local.shared_endpoint` reads, so worker processes follow."""
    if not url:
        yield
        return
    from tpguard.benchmark.local import LLAMA_SERVER_ENV

    before = os.environ.get(LLAMA_SERVER_ENV)
    os.environ[LLAMA_SERVER_ENV] = url
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(LLAMA_SERVER_ENV, None)
        else:
            os.environ[LLAMA_SERVER_ENV] = before


def _execute(plan: RunPlan, progress: bool, processors: Iterable[SpanProcessor],
             on_record: Callable[[dict[str, Any]], None] | None,
             task_hook: Callable[[Case, str, str], None] | None = None) -> RunResult:
    from ..agents.registry import make_agent

    config, out = plan.config, plan.out
    run_info = _run_info(plan)
    run_id = run_info["run_id"]
    (out / "run.json").write_text(json.dumps(run_info, indent=2), encoding="utf-8")
    writer = RecordWriter(out / "records.jsonl", retry_errors=config.retry_errors,
                          force=config.force)
    tasks = _tasks(plan.cases, config, writer.done)
    retried = sum((a, g, c.suite, c.id, config.seed) in writer.retried for c, a, g in tasks)
    skipped = len(plan.cases) * len(config.agents) * len(config.guards) - len(tasks)
    os.environ.setdefault("OTEL_SERVICE_NAME", "tpguard-bench")
    provider = configure(run_id=run_id, endpoint=config.otlp_endpoint, jsonl=out / "spans.jsonl",
                         processors=processors)
    scorers: dict[str, CaseScorer] = {}
    lock = threading.Lock()

    def scorer(case: Case) -> CaseScorer:
        with lock:
            if case.id not in scorers:
                scorers[case.id] = CaseScorer(case)
            return scorers[case.id]

    recorders = Recorders()
    audit = AuditLog(out / "audit.sqlite")
    acq_scorer, files_dir = _acq_resources(config)
    exp_scorer = _exp_scorer(config)

    def one(task: tuple[Case, str, str]) -> dict[str, Any]:
        case, agent_spec, guard_name = task
        if config.suite == EXP_SUITE:
            record = execute_exp_case(
                case, agent_spec, plan.guards[guard_name], scorer=exp_scorer,  # type: ignore[arg-type]
                seed=config.seed, run_id=run_id, tracer_provider=provider, audit=audit,
                agent_options=_exp_agent_options(config))
        elif config.suite == ACQ_SUITE:
            record = execute_acq_case(
                case, agent_spec, plan.guards[guard_name], files_dir=files_dir,  # type: ignore[arg-type]
                audit=audit, scorer=acq_scorer, seed=config.seed, run_id=run_id,
                tracer_provider=provider,
                agent_options={"base_url": config.base_url, "api_key": config.api_key,
                               "code_agent": config.code_agent})
        else:
            record = execute_case(
                case, make_agent(agent_spec, **plan.agent_options), agent_spec,
                plan.guards[guard_name], audit=audit, scorer=scorer(case), seed=config.seed,
                run_id=run_id, tracer_provider=provider, recorders=recorders)
        writer.write(record)
        if on_record is not None:
            on_record(record)
        return record

    def store(run: Any) -> None:  # a Ray task's CaseRun, written here as `one` writes
        from ._ray import store_case_run

        store_case_run(run, audit, provider)
        writer.write(run.record)
        if on_record is not None:
            on_record(run.record)

    try:
        if config.executor == "ray":
            _run_on_ray(plan, tasks, run_id, store, progress, task_hook)
        elif config.workers > 1 and config.suite not in (ACQ_SUITE, EXP_SUITE):
            from ._pool import run_in_processes

            # no transient-error retries in a worker: the one-worker path makes one attempt too
            run_in_processes(tasks, replace(_worker_spec(plan, run_id, task_hook), retries=0), store,
                             workers=config.workers, progress=progress)
        else:
            run_local(tasks, one, config.workers, progress)
    finally:
        provider.shutdown()
        audit.close()
    run_info["finished"] = dt.datetime.now(dt.timezone.utc).isoformat()
    (out / "run.json").write_text(json.dumps(run_info, indent=2), encoding="utf-8")
    summary = write_summary(out, run_info)
    reports: dict[str, Path] = {}
    if config.reports:
        from ..report import build_reports

        reports = build_reports(out)
    return RunResult(out, len(tasks), skipped, summary, reports, retried)


def _acq_resources(config: RunConfig) -> tuple[Any, Path]:
    """The acquisition scorer (one per run: its detectors are reused across configurations) and
    where the case files (DOCX/XLSX/PDF) are laid out — the per-seed cache, never the run
    directory (the files hold the substrate's values)."""
    if config.suite != ACQ_SUITE:
        return None, Path()
    from ..cases.acquisition.files import default_files_dir
    from ..metrics.acquisition import AcqScorer

    return AcqScorer(), default_files_dir(config.seed)


def _exp_scorer(config: RunConfig) -> Any:
    """The exposure scorer (one per run, shared by every session-run)."""
    if config.suite != EXP_SUITE:
        return None
    from ..metrics.exposure import ExpScorer

    return ExpScorer()


def _worker_spec(plan: RunPlan, run_id: str,
                 hook: Callable[[Case, str, str], None] | None) -> Any:
    """What a case-run away from the driver needs besides its case (:mod:`._remote`)."""
    from tpguard import __version__

    from ._remote import WorkerSpec

    c = plan.config
    return WorkerSpec(plan.agent_options, c.guard_knows_variants, c.presidio_model, c.seed, run_id,
                      __version__, hook=hook)


def _run_on_ray(plan: RunPlan, tasks: list[tuple[Case, str, str]], run_id: str,
                store: Callable[[Any], None], progress: bool,
                hook: Callable[[Case, str, str], None] | None) -> None:
    from ._ray import run_on_ray

    c = plan.config
    run_on_ray(tasks, _worker_spec(plan, run_id, hook), store, progress=progress,
               address=c.ray_address, num_cpus=c.ray_num_cpus, max_concurrency=c.max_concurrency)
