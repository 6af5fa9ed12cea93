"""Run configuration and case selection for ``tpguard bench run``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..cases.schema import Case, Suite
from ._errors import UsageError

#: What the terminal and every report say of a run with ``--oracle-variants`` (``guard_knows_variants``).
ORACLE_VARIANTS = ("ORACLE CONDITION: tpguard's guards were handed the evaluator's semantic variants "
                   "(part of the answer key, --oracle-variants); their FOR is a sanity check, not what a "
                   "deployment would see.")

__all__ = ["ORACLE_VARIANTS", "QUICK_AGENTS", "QUICK_GUARDS", "RunConfig", "domain_slug", "resolve_domains",
           "select_cases"]

QUICK_AGENTS = ("oracle", "leaky")
QUICK_GUARDS = ("off", "enforce", "redact", "langchain-pii", "presidio-redact", "drop-free-text")
QUICK_PER_DOMAIN = 2


@dataclass
class RunConfig:
    """Everything that determines a run; written to ``run.json``."""

    suite: str = "need-to-know"
    agents: Sequence[str] = QUICK_AGENTS
    guards: Sequence[str] = QUICK_GUARDS
    out: Path | None = None  # None: derived from the configuration (see ._rundir.default_out)
    source: Path | None = None
    seed: int = 0
    quick: bool = False
    limit: int | None = None
    domains: Sequence[str] = ()
    workers: int = 1
    executor: str = "local"  # "local" (threads, --workers) or "ray" (see ._ray, docs/distributed.md)
    ray_address: str | None = None  # None: RAY_ADDRESS, else a local instance the driver starts
    ray_num_cpus: int | None = None  # the local instance's CPUs (None: the machine's)
    max_concurrency: int | None = None  # ray: case-runs in flight per agent (None: cluster CPUs)
    base_url: str | None = None
    api_key: str | None = None
    code_agent: bool = False
    llama_server: str | None = None  # local: models from this llama-server (TPGUARD_LLAMA_SERVER)
    guard_path: str = "adapter"  # framework agents: where tpguard's modes decide
    otlp_endpoint: str | None = None
    record_arguments: str = "redacted"
    guard_knows_variants: bool = False  # --oracle-variants: ORACLE_VARIANTS
    presidio_model: str | None = None  # spaCy pipeline for presidio-redact (installed only)
    task_reading: str = "binary"  # S_task: pass/fail (§5.1) or the fraction of end-state checks
    bootstrap: int = 10_000  # --bootstrap: bootstrap resamples of every summary (seed 002 §3.4)
    stats_seed: int = 2027  # --stats-seed: the bootstrap's and sign-flip tests' seed
    reports: bool = True
    retry_errors: bool = True
    force: bool = False
    append: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["out"] = str(self.out) if self.out is not None else None
        d["source"] = str(self.source) if self.source else None
        d["agents"], d["guards"], d["domains"] = list(self.agents), list(self.guards), list(self.domains)
        d.pop("api_key", None)  # never written to disk
        return d


def domain_slug(name: str) -> str:
    """``"Credit-card risk"`` → ``"credit-card-risk"``."""
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


def resolve_domains(suite: Suite, given: Sequence[str]) -> list[str]:
    """The suite's display names of ``given`` domains (slug or display name, any case);
    :class:`UsageError` listing the valid slugs when one is unknown."""
    return _resolve([c.domain for c in suite.cases], suite.name, given)


def _resolve(domains: Sequence[str], suite_name: str, given: Sequence[str]) -> list[str]:
    by_slug = {domain_slug(d): d for d in domains}
    unknown = [d for d in given if domain_slug(d) not in by_slug]
    if unknown:
        raise UsageError(f"--domains: unknown {', '.join(map(repr, unknown))}; valid domains of "
                         f"{suite_name}: {', '.join(sorted(by_slug))}")
    return list(dict.fromkeys(by_slug[domain_slug(d)] for d in given))


def select_cases(suite: Suite, config: RunConfig) -> list[Case]:
    """Domain filter (slugs or names), then ``--quick`` (the first cases of every domain), then
    ``--limit``."""
    return [suite.cases[i] for i in
            select_indices([c.domain for c in suite.cases], suite.name, config)]


def select_indices(domains: Sequence[str], suite_name: str, config: RunConfig) -> list[int]:
    """:func:`select_cases` on the suite's case domains alone: the indices of the cases it
    selects, so a generator can build only those."""
    indices = list(range(len(domains)))
    if config.domains:
        wanted = set(_resolve(domains, suite_name, config.domains))
        indices = [i for i in indices if domains[i] in wanted]
    if config.quick:
        per: dict[str, int] = {}
        picked = []
        for i in indices:
            if per.get(domains[i], 0) < QUICK_PER_DOMAIN:
                per[domains[i]] = per.get(domains[i], 0) + 1
                picked.append(i)
        indices = picked
    if config.limit is not None:
        indices = indices[: config.limit]
    return indices
