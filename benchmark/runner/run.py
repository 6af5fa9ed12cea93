"""``tpguard bench run``: suite × agent × guard × case, resumable, with spans and reports.

Output directory: ``run.json`` (config, versions, detector settings), ``records.jsonl`` (one
record per agent×guard×case), ``audit.sqlite`` (what every backend received), ``spans.jsonl``,
``summary.json``, and the reports (``report.md``, ``report.html``, ``tables/``, ``figures/``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import SpanProcessor

from tpguard.telemetry import configure

from ..backends import AuditLog
from ..cases.registry import load_suite
from ..cases.schema import Case
from ..guards import make_guard
from ..metrics import CaseScorer, summarize
from ._execute import execute_case
from .config import RunConfig, select_cases
from .records import RecordWriter, iter_records

__all__ = ["RunResult", "run_benchmark", "write_summary"]

_PACKAGES = ("tpguard", "pydantic", "rapidfuzz", "pyahocorasick", "opentelemetry-sdk", "langchain",
             "langchain-core", "langgraph", "smolagents", "presidio-analyzer", "scipy")


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


@dataclass
class RunResult:
    out: Path
    executed: int
    skipped: int
    summary: dict[str, Any]
    reports: dict[str, Path]


def write_summary(out: Path, run_info: dict[str, Any], keep: Callable[[dict[str, Any]], bool] | None
                  = None) -> dict[str, Any]:
    """Aggregate ``records.jsonl`` (optionally filtered) into ``summary.json``."""
    from ..metrics import CaseScore

    scores = [CaseScore.from_dict(r["score"]) for r in iter_records(out / "records.jsonl")
              if r.get("score") and (keep is None or keep(r))]
    summary = summarize(scores)
    summary["run"] = run_info
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    return summary


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
) -> RunResult:
    from ..agents.registry import make_agent

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    suite = load_suite(config.suite, source=config.source, seed=config.seed)
    cases = select_cases(suite, config)
    if not cases:
        raise ValueError("no cases selected (check --domains / --limit)")
    guards = {name: make_guard(name, knows_variants=config.guard_knows_variants)
              for name in config.guards}
    agent_opts: dict[str, Any] = {"base_url": config.base_url, "api_key": config.api_key,
                                  "code_agent": config.code_agent}
    for spec in config.agents:  # fail fast on a bad --agent before any case runs
        make_agent(spec, **agent_opts)
    run_id = f"{config.suite}-s{config.seed}"
    run_info: dict[str, Any] = {
        "config": config.to_json(), "versions": _versions(),
        "detector": _detector_settings(config), "run_id": run_id,
        "cases": len(cases), "started": dt.datetime.now(dt.timezone.utc).isoformat(),
        "notes": [
            "leaky is a seeded behaviour model of failure modes the ToolPrivacyBench paper reports, "
            "not a measurement of any LLM",
            "baselines act on tool-call arguments at the runner's gateway, which is more generous "
            "than where LangChain's PIIMiddleware really acts (it does not scan tool-call "
            "arguments, langchain-ai/langchain#37659)",
            *config.notes,
        ],
    }
    (out / "run.json").write_text(json.dumps(run_info, indent=2), encoding="utf-8")
    writer = RecordWriter(out / "records.jsonl")
    tasks = _tasks(cases, config, writer.done)
    skipped = len(cases) * len(config.agents) * len(config.guards) - len(tasks)
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

    audit = AuditLog(out / "audit.sqlite")

    def one(task: tuple[Case, str, str]) -> dict[str, Any]:
        case, agent_spec, guard_name = task
        record = execute_case(
            case, make_agent(agent_spec, **agent_opts), agent_spec, guards[guard_name],
            audit=audit, scorer=scorer(case), seed=config.seed, run_id=run_id,
            tracer_provider=provider)
        writer.write(record)
        if on_record is not None:
            on_record(record)
        return record

    try:
        _run_all(tasks, one, config.workers, progress)
    finally:
        provider.shutdown()
        audit.close()
    run_info["finished"] = dt.datetime.now(dt.timezone.utc).isoformat()
    (out / "run.json").write_text(json.dumps(run_info, indent=2), encoding="utf-8")
    wanted_cases = {c.id for c in cases}

    def keep(r: dict[str, Any]) -> bool:
        return (r["agent"] in config.agents and r["guard"] in config.guards
                and r["case_id"] in wanted_cases and int(r.get("seed", 0)) == config.seed)

    summary = write_summary(out, run_info, keep)
    reports: dict[str, Path] = {}
    if config.reports:
        from ..report import build_reports

        reports = build_reports(out)
    return RunResult(out, len(tasks), skipped, summary, reports)


def _run_all(tasks: list[Any], one: Callable[[Any], Any], workers: int, progress: bool) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("[bold]bench run"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, disable=not progress, transient=False) as bar:
        job = bar.add_task("cases", total=len(tasks))
        if workers <= 1:
            for t in tasks:
                one(t)
                bar.advance(job)
            return
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for fut in as_completed([pool.submit(one, t) for t in tasks]):
                fut.result()
                bar.advance(job)







