"""``summary.json`` from records: errored case-runs are counted, never scored.

``summarize_records(records)`` takes the current records (last of each key, see
:func:`.records.latest_records`), scores the measured ones with :func:`..metrics.summarize`, and
adds to every (agent, guard, suite) row ``n_total`` (case-runs recorded), ``errors`` (of them,
errored), ``error_rate`` (percent of ``n_total``) and ``error_types`` (``{"Type (stage)": count}``);
``n`` stays the number of scored case-runs, so every metric's denominator excludes errors. A
configuration whose every case-run errored gets a row with ``n = 0`` and no metric values.

Acquisition scores (``score["kind"] == "acquisition"``, seed ``001_*``) are summarized by
:func:`..metrics.acquisition.summarize_acquisition` into ``summary["acquisition"]``; its rows
(``family: "acquisition"``, keys TCR, CER, HCER, OLR, PLR, HPLR … with Wilson ``ci``) also join
``summary["rows"]`` with the same error accounting. Exposure scores (``score["kind"] ==
"exposure"``, seed ``002_*``) likewise go to :func:`..metrics.exposure.summarize_exposure` →
``summary["exposure"]``; its rows (``family: "exposure"``, keys TCR, ECR, OLF,
``coverage.<channel>`` with session-bootstrap ``ci``) join ``summary["rows"]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..metrics import KEYS, CaseScore, summarize
from ..metrics._audit_recall import audit_rows
from ..metrics.acquisition import ACQ_KEYS, ACQ_RATE_KEYS, AcqScore, summarize_acquisition
from ..metrics.exposure import EXP_KEYS, ExpScore, summarize_exposure
from ._errors import record_error

__all__ = ["error_label", "stats_options", "summarize_records", "summary_options"]

RowKey = tuple[str, str, str]


def error_label(err: dict[str, Any]) -> str:
    """``"OpenAIError (agent)"`` — how reports and the terminal name an error class."""
    return f"{err.get('type', 'Error')} ({err.get('stage', 'agent')})"


def _key(r: dict[str, Any]) -> RowKey:
    return (str(r["agent"]), str(r["guard"]), str(r["suite"]))


def stats_options(bootstrap: int | None, stats_seed: int | None) -> dict[str, Any]:
    """``--bootstrap`` / ``--stats-seed`` as every suite's summarizer takes them (``n_resamples``,
    ``seed``); an option left ``None`` keeps each summarizer's own default."""
    out: dict[str, Any] = {}  # keyword arguments of the summarizers
    if bootstrap is not None:
        out["n_resamples"] = int(bootstrap)
    if stats_seed is not None:
        out["seed"] = int(stats_seed)
    return out


def summary_options(config: dict[str, Any] | None) -> dict[str, Any]:
    """What :func:`summarize_records` takes from a run's ``run.json`` ``config``: the task
    reading, ``bootstrap`` and ``stats_seed`` (absent in older runs: each summarizer's default)."""
    config = config if isinstance(config, dict) else {}
    out: dict[str, Any] = {}
    if isinstance(config.get("task_reading"), str):
        out["task_reading"] = config["task_reading"]
    for key in ("bootstrap", "stats_seed"):
        if isinstance(config.get(key), int):
            out[key] = config[key]
    return out


def _parse(score: Any) -> CaseScore | AcqScore | ExpScore | None:
    if AcqScore.is_acquisition(score):
        return AcqScore.from_dict(score)
    if ExpScore.is_exposure(score):
        return ExpScore.from_dict(score)
    return CaseScore.from_dict(score) if isinstance(score, dict) else None


def _family_part(summary: dict[str, Any], rows: dict[RowKey, dict[str, Any]], name: str,
                 part: dict[str, Any], keys: set[RowKey], empty: dict[str, Any]) -> None:
    """Put a suite family's summary under ``summary[name]`` and its rows into ``rows``; a
    configuration whose every case-run errored gets an ``n = 0`` row of ``empty``'s keys."""
    summary[name] = part
    rows.update({_key(r): r for r in part["rows"]})
    for key in sorted(keys - rows.keys()):
        row = {"agent": key[0], "guard": key[1], "suite": key[2], "n": 0, "family": name, **empty}
        rows[key] = row
        part["rows"].append(row)


def summarize_records(records: Iterable[dict[str, Any]], *, bootstrap: int | None = None,
                      stats_seed: int | None = None, **options: Any) -> dict[str, Any]:
    """The summary of ``records`` (already deduplicated); ``options`` go to ``summarize``;
    ``bootstrap``/``stats_seed`` (``--bootstrap``, ``--stats-seed``) to every suite's
    summarizer as ``n_resamples``/``seed`` (``None``: its default)."""
    records = list(records)  # read twice (the rows, then the audit row): a generator would be spent
    totals: Counter[RowKey] = Counter()
    types: dict[RowKey, Counter[str]] = {}
    scores: list[CaseScore] = []
    acq: list[AcqScore] = []
    exp: list[ExpScore] = []
    acq_keys: set[RowKey] = set()
    exp_keys: set[RowKey] = set()
    for r in records:
        key = _key(r)
        totals[key] += 1
        err = record_error(r)
        score = r.get("score")
        if AcqScore.is_acquisition(score) or r.get("suite") == "acquisition":
            acq_keys.add(key)
        if ExpScore.is_exposure(score) or r.get("suite") == "exposure":
            exp_keys.add(key)
        parsed = _parse(score) if err is None else None
        if parsed is None:
            types.setdefault(key, Counter())[error_label(err or {"type": "MissingScore",
                                                                "stage": "scoring"})] += 1
            continue
        parsed.agent, parsed.guard = key[0], key[1]  # the record's identity is authoritative
        if isinstance(parsed, AcqScore):
            acq.append(parsed)
        elif isinstance(parsed, ExpScore):
            exp.append(parsed)
        else:
            scores.append(parsed)
    stats = stats_options(bootstrap, stats_seed)
    summary = summarize(scores, **{**options, **stats})
    rows = {_key(r): r for r in summary["rows"]}
    if acq_keys:
        _family_part(summary, rows, "acquisition", summarize_acquisition(acq, **stats), acq_keys,
                     {**dict.fromkeys(ACQ_KEYS), "ci": dict.fromkeys(ACQ_RATE_KEYS)})
    if exp_keys:
        _family_part(summary, rows, "exposure", summarize_exposure(exp, **stats), exp_keys,
                     {"channels": [], **dict.fromkeys(EXP_KEYS), "ci": dict.fromkeys(EXP_KEYS)})
    for key in totals.keys() - rows.keys():  # every case-run of this configuration errored
        rows[key] = {"agent": key[0], "guard": key[1], "suite": key[2], "n": 0,
                     **dict.fromkeys(KEYS), "ci": dict.fromkeys(KEYS)}
    for key, row in rows.items():
        errors = sum(types.get(key, Counter()).values())
        row["n_total"] = totals[key]
        row["errors"] = errors
        row["error_rate"] = 100.0 * errors / totals[key] if totals[key] else 0.0
        row["error_types"] = dict(types.get(key, Counter()).most_common())
    summary["rows"] = [rows[k] for k in sorted(rows)]
    by_type: Counter[str] = Counter()
    for c in types.values():
        by_type.update(c)
    summary["errors"] = {"total": sum(by_type.values()), "case_runs": sum(totals.values()),
                         "by_type": dict(by_type.most_common())}
    summary.update(_audit_part(records))
    return summary


def _audit_part(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``{"audit": rows}`` when a guard ran in audit mode: its flags against the evaluator's
    forbidden disclosures (issue 34); nothing otherwise."""
    rows = audit_rows(records)
    return {"audit": rows} if rows else {}
