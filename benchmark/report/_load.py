"""Reading a run directory: ``run.json``, ``records.jsonl`` and ``summary.json``.

``summary.json`` is the runner's ``summarize_records(records)`` plus ``{"run": run.json}``. When it
is missing or stale (older than ``records.jsonl``, or its rows do not count the records) it is
rebuilt here the same way (errored case-runs counted per row, never scored), so a report always
shows what the records say.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cases.schema import Case
from ..metrics import CaseScore
from ..metrics.acquisition import AcqScore
from ..metrics.exposure import ExpScore
from ..runner._errors import record_error
from ..runner._summary import summarize_records, summary_options

__all__ = ["RunData", "RunDirError", "load_cases", "load_run", "read_records", "record_key", "suite_names"]


class RunDirError(ValueError):
    """The directory is not a benchmark run (no records.jsonl) or a file in it cannot be read."""


def record_key(rec: dict[str, Any]) -> tuple[str, str, str, str]:
    """``(agent, guard, suite, case_id)`` — one record per key in a run."""
    return (str(rec.get("agent", "")), str(rec.get("guard", "")), str(rec.get("suite", "")),
            str(rec.get("case_id", "")))


@dataclass
class RunData:
    """Everything a report reads from one run directory. ``records`` are value-free: trajectory
    calls keep ``step``, ``tool`` and ``outcome`` only, ``result`` keeps ``error`` and
    ``model_calls``."""

    run_dir: Path
    run: dict[str, Any]
    records: list[dict[str, Any]]
    scores: list[CaseScore]
    summary: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what the loader had to do (rebuilt, skipped)
    errored: list[dict[str, Any]] = field(default_factory=list)  # failed case-runs, never scored
    summary_rebuilt: bool = False
    acq_records: list[dict[str, Any]] = field(default_factory=list)  # scored acquisition case-runs
    all_records: list[dict[str, Any]] = field(default_factory=list)  # every case-run, every suite
    full_summary: dict[str, Any] = field(default_factory=dict)  # summary.json, every family's rows

    @property
    def legacy(self) -> bool:
        """Whether the run has ToolPrivacyBench rows (an acquisition-only run has none)."""
        return bool(self.summary.get("rows"))

    @property
    def configs(self) -> list[tuple[str, str, str]]:
        """``(agent, guard, suite)`` of every summary row, in summary order."""
        return [(r["agent"], r["guard"], r["suite"]) for r in self.summary.get("rows", [])]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise RunDirError(f"{path}: cannot read JSON ({type(e).__name__})") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: expected a JSON object")
    return data


def _value_free(rec: dict[str, Any]) -> dict[str, Any]:
    """Drop what may hold private values (call arguments and results, the final answer) as soon
    as a record is read: no report needs them, and a report cannot print what it does not hold."""
    traj = rec.get("trajectory")
    if isinstance(traj, dict):
        traj.pop("final_answer", None)
        traj["calls"] = [{k: c.get(k) for k in ("step", "tool", "outcome")}
                         for c in traj.get("calls", ()) if isinstance(c, dict)]
    if isinstance(rec.get("result"), dict):
        rec["result"] = {k: rec["result"].get(k) for k in ("error", "model_calls")}
    return rec


def read_records(path: Path, notes: list[str]) -> list[dict[str, Any]]:
    """Records in file order; a later record for the same key replaces an earlier one (a resumed
    run), and a line that does not parse (an interrupted write) is skipped and noted."""
    by_key: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    bad = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(rec, dict) and rec.get("agent") is not None:
                by_key[record_key(rec)] = _value_free(rec)  # errored case-runs included
            else:
                bad += 1
    if bad:
        notes.append(f"{bad} line(s) of records.jsonl could not be read and were skipped.")
    return list(by_key.values())


def _stale(summary_path: Path, records_path: Path, summary: dict[str, Any], n_records: int) -> bool:
    if summary_path.stat().st_mtime < records_path.stat().st_mtime:
        return True
    rows = summary.get("rows")
    if not isinstance(rows, list):
        return True
    # n_total (runner with error accounting) counts errored case-runs too; n then excludes them
    return sum(int(r.get("n_total", r.get("n", 0))) for r in rows) != n_records


def load_run(run_dir: str | Path, *, write_summary: bool = True) -> RunData:
    """Load a run directory; rebuild ``summary.json`` when missing or stale (written back unless
    ``write_summary`` is false, e.g. for ``bench compare``, which only reads)."""
    run_dir = Path(run_dir)
    records_path = run_dir / "records.jsonl"
    if not records_path.is_file():
        raise RunDirError(f"{run_dir}: no records.jsonl — not a benchmark run directory")
    notes: list[str] = []
    run = _read_json(run_dir / "run.json") if (run_dir / "run.json").is_file() else {}
    if not run:
        notes.append("run.json is missing: run configuration and detector settings are unknown.")
    all_records = read_records(records_path, notes)
    # Errored case-runs are reported as errors (summary rows' ``errors``), never scored.
    records = [r for r in all_records if record_error(r) is None
               and isinstance(r.get("score"), dict) and not AcqScore.is_acquisition(r["score"])
               and not ExpScore.is_exposure(r["score"])]  # exposure (seed 002): its own section
    scores = [CaseScore.from_dict(r["score"]) for r in records]
    for s, r in zip(scores, records, strict=True):  # the record's identity is authoritative
        s.agent, s.guard = str(r.get("agent", s.agent)), str(r.get("guard", s.guard))
    summary_path = run_dir / "summary.json"
    summary: dict[str, Any] = {}
    if summary_path.is_file():
        try:
            summary = _read_json(summary_path)
        except RunDirError:
            summary = {}
    rebuilt = not summary or _stale(summary_path, records_path, summary, len(all_records))
    if rebuilt:
        # the run's own statistics settings (--bootstrap, --stats-seed, --task-reading)
        summary = summarize_records(all_records, **summary_options(run.get("config")))
        summary["run"] = run
        notes.append("summary.json was missing or older than records.jsonl and was rebuilt from "
                     "the records.")
        if write_summary:
            summary_path.write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")
    errored = [r for r in all_records if record_error(r) is not None or r.get("score") is None]
    # Acquisition rows (seed 001) have their own section (``summary["acquisition"]``); the
    # ToolPrivacyBench sections read the other rows only.
    acq = [r for r in all_records if AcqScore.is_acquisition(r.get("score")) and record_error(r) is None]
    view = {**summary, "rows": [r for r in summary.get("rows", [])
                                if r.get("family") not in ("acquisition", "exposure")]}
    return RunData(run_dir, run, records, scores, view, notes, errored, rebuilt, acq, all_records,
                   summary)


def suite_names(run: dict[str, Any], records: Iterable[dict[str, Any]]) -> list[str]:
    names = {str(r.get("suite", "")) for r in records}
    cfg = run.get("config", {}) if isinstance(run.get("config"), dict) else {}
    suite = cfg.get("suite")
    if isinstance(suite, str):
        names.add(suite)
    elif isinstance(suite, list):
        names.update(str(s) for s in suite)
    return sorted(n for n in names if n)


def load_cases(data: RunData) -> tuple[dict[tuple[str, str], Case], list[str]]:
    """The run's cases by ``(suite, case_id)``, regenerated from the registry with the run's seed
    (and ``source`` for public-derived). Returns what could be loaded and notes on what could not;
    only the atom-type × sink FOR needs them (its denominators are the forbidden cells)."""
    cfg = data.run.get("config", {}) if isinstance(data.run.get("config"), dict) else {}
    seed = int(cfg.get("seed", 0) or 0)
    source = cfg.get("source")
    out: dict[tuple[str, str], Case] = {}
    notes: list[str] = []
    wanted = {(str(r.get("suite", "")), str(r.get("case_id", ""))) for r in data.records}
    for name in suite_names(data.run, data.records):
        if name in ("acquisition", "exposure"):  # own case types; their sections need no cases
            continue
        try:
            suite = _suite_cases(name, source, seed, wanted)
        except Exception as e:  # the report must still build without the cases
            notes.append(f"suite {name!r} could not be regenerated ({type(e).__name__}); the "
                         "atom-type × sink view shows unauthorized disclosure counts instead of FOR.")
            continue
        for case in suite:
            if (case.suite, case.id) in wanted or (name, case.id) in wanted:
                out[(name, case.id)] = case
                out[(case.suite, case.id)] = case
    return out, notes


def _suite_cases(name: str, source: Any, seed: int, wanted: set[tuple[str, str]]) -> list[Case]:
    """The suite's cases the records name: need-to-know builds only those (each case is seeded on
    its own), other suites are loaded whole."""
    from ..cases.registry import load_suite

    if name == "need-to-know":
        from ..cases.need_to_know.generator import case_index, generate_cases

        found = {case_index(case_id) for suite, case_id in wanted if suite == name}
        return generate_cases(seed, sorted(i for i in found if i is not None))
    return list(load_suite(name, source=Path(source) if source else None, seed=seed))
