"""The ``public-derived`` suite: ToolPrivacyBench-style cases adapted from public tool-use
benchmarks (seed ``000_*`` §6.1) — BFCL multi-turn (base and its three variants), τ²-bench
retail, airline, telecom and banking_knowledge, τ-bench retail and airline, WorkBench, API-Bank.

The data is read from a folder the user gives (``build_suite(Path("…/public"))``); it is never
copied into this repository. Each source task keeps its call structure, gains the look-up and
verification steps its policy implies (:mod:`._implied`), private atoms from the user record or
initial state, authorizations from the gold arguments, free-text coordination sinks, bindings to
the mock backends and end-state checks; repeated scenarios count once (:mod:`._dedupe`), then the
paper's retention filter applies. ``build_report`` says how many cases each source yields before
and after de-duplication and the filter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ..schema import Case, Suite
from ._apibank import APIBANK_FILES, apibank_drafts
from ._assemble import SUITE_NAME, assemble
from ._bfcl import BFCL_FILES, BFCL_VARIANTS, bfcl_drafts, bfcl_files
from ._common import Draft, PublicDataError
from ._dedupe import Deduper
from ._filter import RetentionFilter
from ._tau2 import AIRLINE_FILES, RETAIL_FILES, tau2_drafts
from ._tau2_banking import BANKING_FILES, banking_drafts
from ._tau2_telecom import TELECOM_FILES, telecom_drafts
from ._taubench import TAUBENCH_AIRLINE_FILES, TAUBENCH_RETAIL_FILES, taubench_drafts
from ._workbench import WORKBENCH_FILES, workbench_drafts

__all__ = ["PROVENANCE", "SOURCES", "SUITE_NAME", "PublicDataError", "RetentionFilter",
           "build_report", "build_suite"]

#: Sources in build order: the first source holding a scenario keeps it (:mod:`._dedupe`).
SOURCES: dict[str, tuple[str, ...]] = {
    "bfcl": BFCL_FILES, "tau2_retail": RETAIL_FILES, "tau2_airline": AIRLINE_FILES,
    "taubench_retail": TAUBENCH_RETAIL_FILES, "taubench_airline": TAUBENCH_AIRLINE_FILES,
    "tau2_telecom": TELECOM_FILES,
    "tau2_banking": BANKING_FILES,
    **{f"bfcl_{v}": bfcl_files(v) for v in BFCL_VARIANTS},
    "workbench": WORKBENCH_FILES, "apibank": APIBANK_FILES,
}
PROVENANCE: dict[str, dict[str, str]] = {
    "bfcl": {"repository": "ShishirPatil/gorilla", "commit": "6ea57973",
             "path": "berkeley-function-call-leaderboard/bfcl_eval/data", "license": "Apache-2.0"},
    "tau2_retail": {"repository": "sierra-research/tau2-bench", "commit": "a2c02472",
                    "path": "data/tau2/domains/retail", "license": "MIT"},
    "tau2_airline": {"repository": "sierra-research/tau2-bench @ a2c02472 (tasks) + "
                                   "sierra-research/tau-bench @ 59a200c6 (airline database)",
                     "commit": "a2c02472 / 59a200c6",
                     "path": "data/tau2/domains/airline + tau_bench/envs/airline/data",
                     "license": "MIT"},
    "taubench_retail": {"repository": "sierra-research/tau-bench", "commit": "59a200c6",
                        "path": "tau_bench/envs/retail (tasks_train, tasks_dev, tasks_test, "
                                "data/)", "license": "MIT"},
    "taubench_airline": {"repository": "sierra-research/tau-bench", "commit": "59a200c6",
                         "path": "tau_bench/envs/airline (tasks_test, data/)", "license": "MIT"},
    "tau2_telecom": {"repository": "sierra-research/tau2-bench", "commit": "37199f36 / a2c02472",
                     "path": "data/tau2/domains/telecom (tasks.json, db.toml)", "license": "MIT"},
    "tau2_banking": {"repository": "sierra-research/tau2-bench", "commit": "a2c02472",
                     "path": "data/tau2/domains/banking_knowledge (tasks/, db.json)",
                     "license": "MIT"},
}
PROVENANCE["workbench"] = {"repository": "olly-styles/WorkBench", "commit": "42f1b6dc",
                           "path": "data/processed", "license": "MIT"}
PROVENANCE["apibank"] = {"repository": "AlibabaResearch/DAMO-ConvAI", "commit": "483554ea / 1d769008",
                         "path": "api-bank (lv1-lv2-samples, level-3.json, init_database)",
                         "license": "Apache-2.0"}
for _v in BFCL_VARIANTS:
    PROVENANCE[f"bfcl_{_v}"] = {**PROVENANCE["bfcl"],
                                "path": f"{PROVENANCE['bfcl']['path']} (multi_turn_{_v})"}
_DRAFTS: dict[str, Callable[[Path], tuple[list[Draft], Counter[str]]]] = {
    "bfcl": bfcl_drafts,
    "tau2_retail": lambda p: tau2_drafts(p, "retail"),
    "tau2_airline": lambda p: tau2_drafts(p, "airline"),
    "taubench_retail": lambda p: taubench_drafts(p, "retail"),
    "taubench_airline": lambda p: taubench_drafts(p, "airline"),
    "tau2_telecom": telecom_drafts,
    "tau2_banking": banking_drafts,
    **{f"bfcl_{v}": partial(bfcl_drafts, variant=v) for v in BFCL_VARIANTS},
    "workbench": workbench_drafts,
    "apibank": apibank_drafts,
}
_HINT = ("expected the folder layout of ../shared/data/public (bfcl/, tau2/, tau-bench/, "
         "workbench/, api-bank/); "
         "docs/public-derived.md says where to get the files")


def _available(source: Path) -> list[str]:
    """The sources present under ``source``; a clear error when none is, or one is incomplete."""
    if not source.is_dir():
        raise PublicDataError(f"public data folder {str(source)!r} does not exist; {_HINT}")
    present = []
    for name, files in SOURCES.items():
        missing = [f for f in files if not (source / f).exists()]
        if len(missing) == len(files):
            continue
        if missing:
            raise PublicDataError(f"{source}: source {name!r} is incomplete, missing {missing}")
        present.append(name)
    if not present:
        expected = [f for files in SOURCES.values() for f in files]
        raise PublicDataError(f"{source}: no public source found (looked for {expected}); {_HINT}")
    return present


def _build(source: Path | str, retention: RetentionFilter
           ) -> tuple[list[Case], dict[str, dict[str, Any]]]:
    root = Path(source)
    kept: list[Case] = []
    per_source: dict[str, dict[str, Any]] = {}
    dedupe = Deduper()
    for name in _available(root):
        built, skipped = _DRAFTS[name](root)
        drafts, duplicates = dedupe.distinct(built)
        dropped: Counter[str] = Counter()
        retained: list[Case] = []
        for draft in drafts:
            case = assemble(draft)
            reasons = retention.reasons(case)
            dropped.update(reasons)
            if not reasons:
                retained.append(case)
        kept.extend(retained)
        per_source[name] = {
            "tasks": len(built) + sum(skipped.values()), "skipped": dict(sorted(skipped.items())),
            "built": len(built), "distinct": len(drafts),
            "duplicates_of": dict(sorted(duplicates.items())), "retained": len(retained),
            "dropped_by": dict(sorted(dropped.items())),
            "domains": dict(sorted(Counter(c.domain for c in retained).items())),
            "cases_by_steps": dict(sorted(Counter(len(c.ground_truth) for c in retained).items())),
            "implied_calls": sum(int(c.metadata.get("implied_calls", 0)) for c in retained),
            **PROVENANCE[name],
        }
    return kept, per_source


def build_suite(source: Path | str, *, retention: RetentionFilter | None = None) -> Suite:
    """Build the retained public-derived cases from the public data folder ``source``."""
    rf = retention or RetentionFilter()
    cases, per_source = _build(source, rf)
    meta = {"filter": rf.as_dict(),
            "sources": {k: {"tasks": v["tasks"], "built": v["built"],
                            "duplicates": v["built"] - v["distinct"], "distinct": v["distinct"],
                            "retained": v["retained"]} for k, v in per_source.items()}}
    return Suite(name=SUITE_NAME, cases=tuple(cases), metadata=meta)


def build_report(source: Path | str, *, retention: RetentionFilter | None = None) -> dict[str, Any]:
    """Counts per source before and after the retention filter, and the retained split's shape."""
    rf = retention or RetentionFilter()
    cases, per_source = _build(source, rf)
    n = max(1, len(cases))
    cells = [c.matrix().counts() for c in cases]
    return {
        "suite": SUITE_NAME,
        "filter": rf.as_dict(),
        "sources": per_source,
        "total": {
            "tasks": sum(s["tasks"] for s in per_source.values()),
            "built": sum(s["built"] for s in per_source.values()),
            "distinct": sum(s["distinct"] for s in per_source.values()),
            "retained": len(cases),
            "domains": len({c.domain for c in cases}),
            "avg_tools": round(sum(len(c.tools) for c in cases) / n, 2),
            "avg_atoms": round(sum(len(c.atoms) for c in cases) / n, 2),
            "atoms": sum(len(c.atoms) for c in cases),
            "field_tool_pairs": sum(sum(x.values()) for x in cells),
            "authorized_pairs": sum(x["authorized"] + x["conditional"] for x in cells),
            "forbidden_pairs": sum(x["forbidden"] for x in cells),
            "required_facts": sum(len(c.required) for c in cases),
        },
        "domains": dict(sorted(Counter(c.domain for c in cases).items())),
    }
